"""A large text log read in chunks, typed, and spilled to Parquet, a folder per table.

A JSON Lines or CSV file is text: to pick a part's tables out of it, it must be
read whole, and holding it untyped costs several times its size. A file larger
than SPILL_BYTES is instead read a chunk at a time (gzip decompressed as it
streams), each chunk parsed and typed as the whole file would be (same line numbers,
same problems), and its rows written to the work folder, one folder per table
(`t00000/`, ...; rows without a table in `none/`). A part then reads only its own
tables' folders, already typed: the memory of the reading follows the chunk, and that
of a part the part, whatever the file's size.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from . import readers, storage
from . import vocabulary as v
from .parse import CANONICAL_SCHEMA, STRING_COLUMNS, typed
from .problems import PROBLEM_SCHEMA, Problem
from .readers import RawFile
from .sources import Source

TABLE = "table_id"
# A text file beyond this many bytes on disk (a gzip file: a sixth of it) is spilled
SPILL_BYTES = 256 << 20
GZIP_RATIO = 6
# Bytes of text parsed at once: the reading's memory follows this, not the file
CHUNK_BYTES = 64 << 20
_NO_TABLE = "none"


def should_spill(source: Source) -> bool:
    """Whether the text file is large enough to be read in chunks and spilled."""
    size = source.path.stat().st_size if source.path.is_file() else 0
    return size * (GZIP_RATIO if source.gzip else 1) > SPILL_BYTES


@dataclass
class Spilled:
    """A text file spilled to Parquet: where its tables' rows are, and what was found
    reading it."""

    folder: Path
    tables: dict[str, str] = field(default_factory=dict)  # table_id -> its folder's name
    problems: list[Problem] = field(default_factory=list)
    rows_lost: int = 0
    missing: list[str] = field(default_factory=list)
    header_line: int | None = None
    rows: int = 0  # rows written
    # values that did not parse (parse.typed's problems, by line), with their row's table
    unparsed: list[pl.DataFrame] = field(default_factory=list)

    def part(self, tables: list[str] | None, first: bool) -> RawFile:
        """The rows of `tables` (None: all), typed, with the rows without a table, the
        file's problems and its lost records when `first`."""
        names = list(self.tables.values()) if tables is None else [
            self.tables[t] for t in tables if t in self.tables]
        if first:
            names.append(_NO_TABLE)
        files = [f for name in names for f in sorted((self.folder / name).glob("*.parquet"))]
        frame = (pl.scan_parquet([storage.polars_source(f) for f in files]).collect()
                 if files else self._empty())
        canonical = {c: CANONICAL_SCHEMA[c] for c in STRING_COLUMNS}
        unparsed = pl.concat([self._empty_unparsed(), *self.unparsed])
        if tables is not None:
            wanted = pl.col(TABLE).is_in(tables)
            unparsed = unparsed.filter(wanted | pl.col(TABLE).is_null() if first else wanted)
        return RawFile(readers.empty(), list(self.problems) if first else [],
                       self.rows_lost if first else 0, self.missing, self.header_line,
                       typed=(frame.cast(canonical), unparsed.drop(TABLE)))

    def _empty(self) -> pl.DataFrame:
        return typed(readers.empty(), 0, text=pl.String)[0]

    @staticmethod
    def _empty_unparsed() -> pl.DataFrame:
        return pl.DataFrame(schema={**PROBLEM_SCHEMA, TABLE: pl.String})


def spill(source: Source, folder: Path, file_id: int, counts: list[pl.DataFrame],
          days: list[date | None], first_day) -> Spilled:
    """Read `source` (file `file_id` of the log) chunk by chunk into `folder`; each
    chunk's rows per table are appended to `counts` and its first day to `days`
    (`first_day`: that of a frame)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder)
    header: bytes | None = None
    before = 0  # lines of the file before the chunk
    for number, (chunk, problems) in enumerate(_chunks(source)):
        out.problems += [_at(p, before) for p in problems]
        if source.encoding == "csv":
            if header is None and not chunk:
                continue  # nothing read (the file's damage is reported): no header to judge
            if header is None:
                end = chunk.find(b"\n")
                header = chunk if end < 0 else chunk[:end]
                raw, offset = readers._read_csv(chunk), 0
                out.missing, out.header_line = raw.missing, raw.header_line
            else:
                raw, offset = readers._read_csv(header + b"\n" + chunk), before - 1
        else:
            raw, offset = readers._read_jsonl(chunk), before
        before += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") or not chunk else 1)
        out.problems += [_at(p, offset) for p in raw.problems]
        out.rows_lost += raw.rows_lost
        text = raw.frame.with_columns(pl.col(v.LINE) + offset)
        if text.height:
            days.append(first_day(text.lazy()) if "ts" in text.columns else None)
            frame = _typed_to(out, text, file_id, number)
            counts.append(frame.group_by(TABLE).agg(pl.len().alias("rows"))
                          .cast({TABLE: pl.String, "rows": pl.UInt32}))
    return out


def _typed_to(out: Spilled, rows: pl.DataFrame, file_id: int, number: int) -> pl.DataFrame:
    """`rows` typed and written by table as piece `number`, the values that did not parse
    kept with their table; the typed frame."""
    frame, unparsed = typed(rows, file_id, text=pl.String)
    if unparsed.height:
        out.unparsed.append(unparsed.join(
            frame.select(v.LINE, TABLE), on=v.LINE, how="left", maintain_order="left"))
    _write(frame, out, number)
    return frame


def spill_parquet(scan: pl.LazyFrame, columns: list[str], total: int, folder: Path,
                  file_id: int, missing: list[str]) -> Spilled:
    """A Parquet file too large to hold, or audited side by side, spilled by table the
    same way, a slice of SLICE_ROWS rows at a time: each part then reads its tables
    only, not the whole file again."""
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder, missing=missing)
    for number, offset in enumerate(range(0, total, SLICE_ROWS)):
        rows = readers.parquet_rows(scan.slice(offset, SLICE_ROWS), columns, pl.lit(True),
                                    offset)
        _typed_to(out, rows, file_id, number)
    return out


SLICE_ROWS = 2_000_000  # rows of a Parquet file spilled at once


def _at(problem: Problem, offset: int) -> Problem:
    """A chunk's problem at its line in the file."""
    line = None if problem.line is None else problem.line + offset
    message = problem.message
    if problem.line is not None and problem.rule_id == readers.IN_RECORD_MALFORMED:
        message = message.replace(f"Line {problem.line} ", f"Line {line} ", 1)
    return dataclasses.replace(problem, line=line, message=message)


def _write(frame: pl.DataFrame, out: Spilled, number: int) -> None:
    """The chunk's typed rows, each table's to its folder."""
    for (table,), rows in frame.partition_by(TABLE, as_dict=True, maintain_order=True).items():
        if table is None:
            name = _NO_TABLE
        else:
            name = out.tables.setdefault(table, f"t{len(out.tables):05d}")
        target = out.folder / name
        target.mkdir(exist_ok=True)
        storage.write_parquet(rows, target / f"{number:06d}.parquet", compression="lz4",
                              statistics=False)
        out.rows += rows.height


def _chunks(source: Source) -> Iterator[tuple[bytes, list[Problem]]]:
    """The file's text in chunks of whole lines (about CHUNK_BYTES each), with the
    problems of reading it (a gzip stream cut or corrupt: reported where it stops)."""
    tail = b""
    lines = 0
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if source.gzip else None
    try:
        handle = source.path.open("rb")
    except OSError as exc:
        yield b"", [readers.unreadable(f"the file cannot be read: {exc.strerror or exc}")]
        return
    with handle:
        while True:
            # a gzip file is read a sixth of a chunk at a time: the text is what is held
            block = handle.read(CHUNK_BYTES // GZIP_RATIO if source.gzip else CHUNK_BYTES)
            problems: list[Problem] = []
            ended = not block
            if inflater is not None and block:
                try:
                    block = inflater.decompress(block)
                except zlib.error as exc:
                    # what was read before the damage is still audited
                    problems.append(readers.unreadable(f"the gzip data is corrupt: {exc}"))
                    yield tail, problems
                    return
            data = tail + block
            if ended:
                if inflater is not None and not inflater.eof:
                    cut = lines + data.count(b"\n") + 1
                    # at its line within this last chunk (spill adds the lines before it)
                    problems.append(readers.unreadable(
                        f"the gzip stream ends early after line {cut}; what followed is lost",
                        line=cut - lines))
                yield data, problems
                return
            end = data.rfind(b"\n")
            if end < 0:
                tail = data
                continue
            chunk, tail = data[: end + 1], data[end + 1:]
            lines += chunk.count(b"\n")
            yield chunk, problems
