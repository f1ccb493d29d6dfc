"""Where logs and the work folder live: a local path, or an fsspec URL (`s3://`,
`gs://`, `abfs://`, ...) that every worker of a cluster can read.

A URL is read through fsspec by way of universal_pathlib's `UPath`, which speaks
pathlib's language (open, stat, glob), so the readers take either. The filesystem
package of a scheme is the user's to install (`pip install 'auditor[s3]'`: s3fs;
`[gcs]`: gcsfs; `[azure]`: adlfs); credentials come from the environment, as those
packages and polars read them (AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_*)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import polars as pl

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
# the package each common scheme needs, for the message when it is missing
PACKAGES = {"s3": "s3fs (auditor[s3])", "s3a": "s3fs (auditor[s3])", "gs": "gcsfs (auditor[gcs])",
            "gcs": "gcsfs (auditor[gcs])", "abfs": "adlfs (auditor[azure])",
            "az": "adlfs (auditor[azure])", "abfss": "adlfs (auditor[azure])"}


class StorageError(Exception):
    """A URL that names no filesystem this installation can reach."""


def is_url(text: str) -> bool:
    """Whether `text` is a URL other than a local file:// one."""
    found = _URL.match(str(text))
    return bool(found) and found.group(1).lower() != "file"


def location(text: str | Path) -> Path:
    """A local Path, or a UPath for a URL (a pathlib.Path look-alike over fsspec)."""
    text = str(text)
    if text.lower().startswith("file://"):
        return Path(text[len("file://"):])
    if not is_url(text):
        return Path(text)
    from upath import UPath  # imported here: only URLs need fsspec

    scheme = _URL.match(text).group(1).lower()
    try:
        path = UPath(text)
        path.fs  # noqa: B018 - loads the scheme's filesystem now, to say what is missing
    except (ImportError, ValueError) as exc:
        needed = PACKAGES.get(scheme)
        hint = f": install {needed}" if needed else ""
        raise StorageError(f"{text}: no filesystem for {scheme}://{hint} ({exc})") from exc
    return path


def is_remote(path: Path) -> bool:
    return is_url(str(path))


def polars_source(path: Path) -> str:
    """What polars' readers take for `path`: its text (polars reads cloud URLs itself)."""
    return str(path)


def write_parquet(frame: pl.DataFrame, path: Path, **options) -> None:
    """`frame` to `path` as Parquet, through fsspec where the path is a URL."""
    if not is_remote(path):
        frame.write_parquet(path, **options)
        return
    with path.open("wb") as handle:
        frame.write_parquet(handle, **options)


# A work folder is named for its machine and process (auditor-HOST-PID-...), so that
# one left by a run that was killed can be told from a live run's and removed
_WORK_FOLDER = re.compile(r"auditor-(\w+)-(\d+)-")


def host() -> str:
    """This machine's name, as a folder name may hold it."""
    return re.sub(r"[^A-Za-z0-9]+", "_", socket.gethostname()) or "host"


@contextmanager
def work_folder(workdir: Path | None) -> Iterator[Path | None]:
    """A fresh folder inside `workdir` for one audit's spilled parts, removed at the
    end however the audit ends; None without a workdir (a temporary local one is made)."""
    if workdir is None or not is_remote(workdir):
        prefix = f"auditor-{host()}-{os.getpid()}-"
        with tempfile.TemporaryDirectory(prefix=prefix, dir=workdir) as folder:
            yield Path(folder)
        return
    folder = workdir / f"auditor-{uuid.uuid4().hex}"
    try:
        yield folder
    finally:
        remove(folder)


def reclaim(workdir: Path | None) -> None:
    """Remove the work folders that audits on this machine left in `workdir` (None: the
    system's temporary folder) when they were killed: their process is gone. A remote
    workdir is shared by a cluster's machines and is left alone."""
    if workdir is not None and is_remote(workdir):
        return
    root = Path(workdir or tempfile.gettempdir())
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        found = _WORK_FOLDER.match(entry.name)
        if found and found.group(1) == host() and not alive(int(found.group(2))):
            shutil.rmtree(entry, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether a process of this machine is running (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove(folder: Path) -> None:
    """Remove a folder and what it holds; nothing where it is already gone."""
    if not is_remote(folder):
        shutil.rmtree(folder, ignore_errors=True)
        return
    with suppress(FileNotFoundError):
        folder.fs.rm(folder.path, recursive=True)
