"""The files `profile draft` checks its profile on, bounded: a file larger than LIMIT is
checked on a copy of its first LIMIT bytes (whole lines; a gzip file's first LIMIT bytes
of text, compressed again; a Parquet file's first rows), under its own name, so that the
profile's `files` match it and a 1 GB export is checked in seconds."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl

from ..model import format_named

LIMIT = 16 << 20
PARQUET_ROWS = 200_000


def bounded(paths: list[Path], folder: Path) -> tuple[list[Path], list[str]]:
    """The paths to check (a copy in `folder` for a file too large) and what was cut."""
    found, said = [], []
    for n, path in enumerate(paths):
        size = path.stat().st_size
        gzipped = path.name.lower().endswith(".gz")
        parquet = format_named(path.name) == "parquet"
        if size <= LIMIT and not (gzipped and size > LIMIT // 8):
            found.append(path)
            continue
        copy = folder / str(n) / path.name
        copy.parent.mkdir(parents=True)
        if parquet:
            pl.scan_parquet(path).head(PARQUET_ROWS).collect().write_parquet(copy)
            said.append(f"{path}: checked on its first {PARQUET_ROWS:,} rows")
        else:
            opener = gzip.open if gzipped else open
            with opener(path, "rb") as handle:
                data = handle.read(LIMIT)
                rest = bool(handle.read(1))
            if not rest:
                found.append(path)
                continue
            data = data[:data.rfind(b"\n") + 1]
            copy.write_bytes(gzip.compress(data, compresslevel=1) if gzipped else data)
            said.append(f"{path}: checked on its first {len(data):,} bytes of text "
                        f"(as {copy})")
        found.append(copy)
    return found, said
