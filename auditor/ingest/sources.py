"""Finding the log files named on the command line: files, folders and globs."""

from __future__ import annotations

import glob
import hashlib
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
    return sorted((p for p in folder.rglob("*") if encoding_of(p) and p.is_file()),
                  key=lambda p: p.parts)


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
    unique = list(dict.fromkeys(p if storage.is_remote(p) else p.resolve() for p in paths))
    return [Source(p, *encoding_of(p)) for p in unique]


def _named_by(arg: str) -> list[Path]:
    """The log files one argument names."""
    if glob.has_magic(arg):
        matches = glob_matches(arg)
        found = [m for m in matches if m.is_file() and encoding_of(m)]
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
