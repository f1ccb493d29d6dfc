"""An audit's output folder (`--out`), written whole or not at all.

A nightly job reads `--out` the moment the audit exits, and a later audit into the same
folder must not leave the earlier run's report beside its own findings. So an audit
writes every file (findings, summary, report, its store's comparison) into a folder of
its own beside `--out`, and puts that folder in place with one rename at the end: a
reader sees the previous run or the new one, never a mix, and a kill at any moment
leaves one of them. Where the system can swap two folders in one step (Linux's
renameat2 with RENAME_EXCHANGE), it does; elsewhere the previous run is moved aside
first, and a run killed between the two renames is put back by the next one.

The folder of a run killed before its end is removed by the next run into the same
`--out` (each is named for its machine and process, so a live run's is never touched).
`--out` is only ever replaced where it is empty or holds an earlier run's files: a
folder holding anything else is refused, never deleted.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import uuid
from pathlib import Path

from .ingest.storage import alive, host

# Every file an audit may write into its folder; an existing `--out` holding any other
# is not an earlier run's, and is refused rather than replaced
RUN_FILES = frozenset({
    "findings.csv", "findings.jsonl", "findings.parquet", "summary.json",
    "round_details.parquet", "report.pdf", "report.html", "house.toml", "profile.toml",
    "comparison.json", "dispositions.json",
})


class RunFolderError(Exception):
    """`--out` cannot take a run: the message says why."""


class RunFolder:
    """The folder a run is written into, beside `out`, and its putting in place."""

    def __init__(self, out: Path) -> None:
        self.out = Path(os.path.abspath(out))
        self.prefix = f".{self.out.name}.auditor-"
        self.path = self.out.parent / (
            f"{self.prefix}{host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self.committed = False  # the run is in place of `out`

    def open(self) -> Path:
        """Check `out`, clear what killed runs left beside it, and make the run's own
        folder (where it cannot be made, `out` could not take the run either)."""
        if self.out.exists() and not self.out.is_dir():
            raise RunFolderError(f"--out {self.out}: not a folder")
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self._reclaim()
            self._check_earlier()
            self.path.mkdir()
        except OSError as exc:
            raise RunFolderError(
                f"--out {self.out}: cannot be written ({exc.strerror or exc})") from None
        return self.path

    def _check_earlier(self) -> None:
        if not self.out.is_dir():
            return
        others = sorted(p.name for p in self.out.iterdir() if p.name not in RUN_FILES)
        if others:
            raise RunFolderError(
                f"--out {self.out} holds files an audit does not write ({others[0]}"
                + (f" and {len(others) - 1} more" if len(others) > 1 else "")
                + "): give an empty folder, or one an earlier audit wrote; nothing was "
                "replaced")

    def _reclaim(self) -> None:
        """The folders of runs into `out` that were killed: removed; a previous run moved
        aside by a run killed before it put its own in place: put back."""
        pattern = re.compile(re.escape(self.prefix) + r"(\w+)-(\d+)-[0-9a-f]+(\.old)?$")
        for entry in sorted(self.out.parent.iterdir()):
            found = pattern.match(entry.name)
            if not found or found.group(1) != host() or alive(int(found.group(2))):
                continue
            if found.group(3) and not self.out.exists():
                entry.rename(self.out)
            else:
                shutil.rmtree(entry, ignore_errors=True)

    def commit(self) -> None:
        """The run put in place of `out`, its files on disk first."""
        _synced(self.path)
        if not self.out.exists():
            os.rename(self.path, self.out)
        elif _exchange(self.path, self.out):
            shutil.rmtree(self.path, ignore_errors=True)  # now the previous run
        else:
            aside = self.path.with_name(self.path.name + ".old")
            os.rename(self.out, aside)
            os.rename(self.path, self.out)
            shutil.rmtree(aside, ignore_errors=True)
        self.committed = True
        _sync_folder(self.out.parent)

    def abandon(self) -> None:
        """The unfinished run removed; `out` is as it was (where the run was put in
        place already, it stays)."""
        if not self.committed:
            shutil.rmtree(self.path, ignore_errors=True)


def _synced(folder: Path) -> None:
    """Every file of the folder, and the folder, on disk: a run put in place is whole
    even where the machine stops right after."""
    for path in folder.iterdir():
        with path.open("rb") as handle:
            os.fsync(handle.fileno())
    _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass  # a file system that cannot sync a folder: the rename is still atomic
    finally:
        os.close(handle)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux renameat2); False where the system or the
    file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))
