"""Finding the log files named on the command line: files, folders and globs."""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from . import storage

# Extension (without .gz) -> encoding name.
ENCODINGS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}


class SourceError(Exception):
    """A LOG argument names nothing that can be read."""


@dataclass(frozen=True)
class Source:
    path: Path
    encoding: str  # jsonl, csv or parquet
    gzip: bool


def encoding_of(path: Path) -> tuple[str, bool] | None:
    """The encoding a file name announces, and whether it is gzip-compressed."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    for ext, enc in ENCODINGS.items():
        if name.endswith(ext):
            if enc == "parquet" and gz:
                return None  # Parquet compresses internally; the spec has no .parquet.gz
            return enc, gz
    return None


def _files_in(folder: Path) -> list[Path]:
    """The log files below a folder, by extension: regular files, and symbolic links
    that lead nowhere (each is then an input finding: a log the folder names and that
    cannot be read is reported, never dropped). A folder below it that cannot be
    listed is a SourceError: its logs would be lost without a word."""
    if storage.is_remote(folder):
        return sorted((p for p in folder.rglob("*") if encoding_of(p) and p.is_file()),
                      key=lambda p: p.parts)
    found: list[Path] = []
    _walk(folder, found, set())
    return sorted(found, key=lambda p: p.parts)


def _walk(folder: Path, found: list[Path], seen: set[str]) -> None:
    """Every log file below `folder` into `found`, following links to folders (each
    folder once: a link back up is no loop)."""
    real = os.path.realpath(folder)
    if real in seen:
        return
    seen.add(real)
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
    except OSError as exc:
        raise SourceError(f"{folder}: the folder cannot be read ({exc.strerror or exc})"
                          ) from None
    for entry in entries:
        path = Path(entry.path)
        try:
            if entry.is_dir():
                _walk(path, found, seen)
            elif encoding_of(path) and (entry.is_file() or _dangling(path)):
                found.append(path)
        except OSError as exc:
            raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _dangling(path: Path) -> bool:
    """A symbolic link whose target does not exist."""
    return path.is_symlink() and not path.exists()


def _readable(path: Path) -> Path:
    """The file, where it can be opened for reading (a link leading nowhere is left to
    the reader, which reports it); else a SourceError naming it."""
    if storage.is_remote(path) or _dangling(path):
        return path
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise SourceError(f"{path}: the file cannot be read ({exc.strerror or exc})") from None
    return path


def expand(arguments: list[str]) -> list[Source]:
    """Every log file the arguments name, each once, in a stable order.

    A folder contributes the log files below it (by extension); a glob its
    matches; a file is taken as it is, and must have a known extension. Any of them
    may be an fsspec URL (s3://bucket/logs/, gs://.../*.jsonl.gz: see storage).
    """
    paths: list[Path] = []
    for arg in arguments:
        try:
            paths.extend(_named_by(arg))
        except storage.StorageError as exc:
            raise SourceError(str(exc)) from exc
        except OSError as exc:  # a URL's store refused or could not be reached
            raise SourceError(f"{arg}: cannot be read ({exc})") from exc
    unique = list(dict.fromkeys(p if storage.is_remote(p) or _dangling(p) else p.resolve()
                                for p in paths))
    return [Source(_readable(p), *encoding_of(p)) for p in unique]


def _named_by(arg: str) -> list[Path]:
    """The log files one argument names."""
    if glob.has_magic(arg):
        matches = glob_matches(arg)
        found = [m for m in matches if (m.is_file() or _dangling(m)) and encoding_of(m)]
        found += [f for m in matches if m.is_dir() for f in _files_in(m)]
        if not found:
            raise SourceError(f"{arg}: the pattern matches no log file")
        return found
    path = storage.location(arg)
    if path.is_dir():
        found = _files_in(path)
        if not found:
            raise SourceError(
                f"{arg}: the folder holds no .jsonl, .ndjson, .csv or .parquet log"
            )
        return found
    if path.is_file():
        if not encoding_of(path):
            raise SourceError(
                f"{arg}: not a log file (expected .jsonl, .ndjson, .csv or .parquet;"
                " the first three may be gzipped, .gz)"
            )
        return [path]
    raise SourceError(f"{arg}: no such file or folder")


def glob_matches(pattern: str) -> list[Path]:
    """A pattern's matches, sorted: by the local glob, or for a URL by its filesystem's
    glob from the folder before the first wildcard."""
    if not storage.is_url(pattern):
        return [Path(m) for m in sorted(glob.glob(pattern, recursive=True))]
    scheme, rest = pattern.split("://", 1)
    parts = rest.split("/")
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    root = storage.location(f"{scheme}://{'/'.join(parts[:fixed])}")
    return sorted(root.glob("/".join(parts[fixed:])), key=lambda p: p.parts)


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
