"""A log's text files read in chunks and spilled to Parquet, a folder per table.

A JSON Lines or CSV file is text: to pick a part's tables out of it, it must be
read whole, and holding it untyped costs several times its size. So the text files
of a log with more than SPILL_BYTES of text (in all: judged for the log as a whole)
are instead read a chunk at a time (gzip decompressed as it streams), two chunks at
once, each parsed as the whole file would be (same line numbers, same problems), and
its rows written to the work folder, one folder per table (`t00000/`, ...; rows
without a table in `none/`). A part then reads only its own tables' folders and types
them as a file read whole is typed: the memory of the reading follows the chunks, and
that of a part the part, whatever the files' sizes and number.
"""

from __future__ import annotations

import dataclasses
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from . import readers, storage
from . import vocabulary as v
from .problems import Problem
from .readers import RawFile
from .sources import Source
from .threads import in_order

TABLE = "table_id"
# The log's text files are spilled where they hold more than this in all (a gzip file
# counting GZIP_RATIO times its size)
SPILL_BYTES = 256 << 20
GZIP_RATIO = 6
# Bytes of text parsed at once: the reading's memory follows this, not the file
CHUNK_BYTES = 64 << 20
_NO_TABLE = "none"


def text_bytes(sources: list[Source]) -> int:
    """The text the log's JSON Lines and CSV files hold, about (a gzip file: GZIP_RATIO
    times its size on disk)."""
    size = 0
    for source in sources:
        if source.encoding != "parquet" and source.path.is_file():
            size += source.path.stat().st_size * (GZIP_RATIO if source.gzip else 1)
    return size


def should_spill(sources: list[Source]) -> bool:
    """Whether the log's text files are read in chunks and spilled, judged for the log
    as a whole: every one is where their text is more than SPILL_BYTES in all (each
    held whole, they would all be held at once)."""
    return text_bytes(sources) > SPILL_BYTES


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

    def part(self, tables: list[str] | None, first: bool) -> RawFile:
        """The rows of `tables` (None: all) as read (typed by the part, as a file read
        whole is), with the rows without a table, the file's problems and its lost
        records when `first`."""
        names = list(self.tables.values()) if tables is None else [
            self.tables[t] for t in tables if t in self.tables]
        if first:
            names.append(_NO_TABLE)
        files = [f for name in names for f in sorted((self.folder / name).glob("*.parquet"))]
        # chunks read alike share their columns' types (one scan); a chunk whose integers
        # were read as text (readers.TYPED_SCHEMA) is joined to the others as text
        pieces = [pl.read_parquet(storage.polars_source(f)) for f in files]
        frame = pl.concat(pieces, how="diagonal_relaxed") if pieces else readers.empty()
        return RawFile(frame, list(self.problems) if first else [],
                       self.rows_lost if first else 0, self.missing, self.header_line)


@dataclass
class _Chunk:
    """A chunk of the file's text, where it starts, and the problems of reading it."""

    number: int
    text: bytes
    before: int  # lines of the file before it
    problems: list[Problem]
    header: bytes | None  # a CSV file's header, for every chunk after the first


@dataclass
class _Piece:
    """A chunk parsed, typed and written: what the file's spill keeps of it."""

    problems: list[Problem]
    rows_lost: int = 0
    counts: pl.DataFrame | None = None  # rows per table
    day: date | None = None
    missing: list[str] | None = None  # the first CSV chunk's: the header's columns
    header_line: int | None = None


def spill(source: Source, folder: Path, counts: list[pl.DataFrame],
          days: list[date | None], first_day, chunk_bytes: int | None = None) -> Spilled:
    """Read `source` chunk by chunk (of `chunk_bytes`: CHUNK_BYTES where not said) into
    `folder`, two
    chunks at a time (threads.in_order); each chunk's rows per table are appended to
    `counts` and its first day to `days` (`first_day`: that of a frame)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder)
    naming = threading.Lock()

    def work(chunk: _Chunk) -> _Piece:
        return _spill_chunk(chunk, source.encoding, out, naming, first_day)

    for piece in in_order(work, _numbered_chunks(source, chunk_bytes or CHUNK_BYTES)):
        out.problems += piece.problems
        out.rows_lost += piece.rows_lost
        if piece.missing is not None:
            out.missing, out.header_line = piece.missing, piece.header_line
        if piece.counts is not None:
            counts.append(piece.counts)
            days.append(piece.day)
    return out


def _numbered_chunks(source: Source, chunk_bytes: int) -> Iterator[_Chunk]:
    """The file's chunks with their place, a CSV file's header with each chunk after
    the one it heads."""
    header: bytes | None = None
    before = 0
    for number, (text, problems) in enumerate(_chunks(source, chunk_bytes)):
        yield _Chunk(number, text, before, problems, header)
        if source.encoding == "csv" and header is None and text:
            end = text.find(b"\n")
            header = text if end < 0 else text[:end]
        before += text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)


def _spill_chunk(chunk: _Chunk, encoding: str, out: Spilled, naming: threading.Lock,
                 first_day) -> _Piece:
    """One chunk parsed as the whole file would be (its lines numbered in the file) and
    written by table as read: it is typed by the part that reads it, in the worker,
    while the part before it is checked."""
    piece = _Piece([_at(p, chunk.before) for p in chunk.problems])
    if encoding != "csv":
        raw, offset = readers._read_jsonl(chunk.text), chunk.before
    elif chunk.header is not None:
        raw, offset = readers._read_csv(chunk.header + b"\n" + chunk.text), chunk.before - 1
    elif chunk.text:  # the first chunk read: the header is its first line
        raw, offset = readers._read_csv(chunk.text), 0
        piece.missing, piece.header_line = raw.missing, raw.header_line
    else:
        return piece  # nothing read (the file's damage is reported): no header to judge
    piece.problems += [_at(p, offset) for p in raw.problems]
    piece.rows_lost = raw.rows_lost
    frame = raw.frame.with_columns(pl.col(v.LINE) + offset)
    del raw
    if frame.height:
        piece.day = first_day(frame.lazy()) if "ts" in frame.columns else None
        piece.counts = _write(frame, out, chunk.number, naming)
    return piece


def spill_parquet(scan: pl.LazyFrame, columns: list[str], total: int, folder: Path,
                  missing: list[str]) -> Spilled:
    """A Parquet file too large to hold, or audited side by side, spilled by table the
    same way, a slice of SLICE_ROWS rows at a time: each part then reads its tables
    only, not the whole file again."""
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder, missing=missing)
    naming = threading.Lock()
    for number, offset in enumerate(range(0, total, SLICE_ROWS)):
        rows = readers.parquet_rows(scan.slice(offset, SLICE_ROWS), columns, pl.lit(True),
                                    offset)
        _write(rows, out, number, naming)
    return out


SLICE_ROWS = 2_000_000  # rows of a Parquet file spilled at once


def _at(problem: Problem, offset: int) -> Problem:
    """A chunk's problem at its line in the file."""
    line = None if problem.line is None else problem.line + offset
    message = problem.message
    if problem.line is not None and problem.rule_id == readers.IN_RECORD_MALFORMED:
        message = message.replace(f"Line {problem.line} ", f"Line {line} ", 1)
    return dataclasses.replace(problem, line=line, message=message)


def _write(frame: pl.DataFrame, out: Spilled, number: int,
           naming: threading.Lock) -> pl.DataFrame:
    """The chunk's rows, each table's to its folder; its rows per table."""
    tables = frame.get_column(TABLE) if TABLE in frame.columns else None
    if tables is not None and tables.n_unique() == 1 and tables[0] not in ("", None):
        by_table = {(str(tables[0]),): frame}  # a file of one table (the usual export)
    else:
        frame = _with_table(frame)
        by_table = frame.partition_by(TABLE, as_dict=True, maintain_order=True)
    for (table,), rows in by_table.items():
        with naming:
            name = _NO_TABLE if table is None else out.tables.setdefault(
                table, f"t{len(out.tables):05d}")
            out.rows += rows.height
        target = out.folder / name
        target.mkdir(exist_ok=True)
        storage.write_parquet(rows, target / f"{number:06d}.parquet", compression="lz4",
                              statistics=False)
    return pl.DataFrame({TABLE: [t for (t,) in by_table],
                         "rows": [rows.height for rows in by_table.values()]},
                        schema={TABLE: pl.String, "rows": pl.UInt32})


def _with_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows' tables as text, as parse.typed reads them: an empty id is none (a row
    without a table), and a file without the column has none at all."""
    if TABLE not in frame.columns:
        return frame.with_columns(pl.lit(None, pl.String).alias(TABLE))
    table = pl.col(TABLE).cast(pl.String)
    return frame.with_columns(pl.when(table != "").then(table).alias(TABLE))


def _chunks(source: Source, chunk_bytes: int) -> Iterator[tuple[bytes, list[Problem]]]:
    """The file's text in chunks of whole lines (about `chunk_bytes` each), with the
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
            block = handle.read(chunk_bytes // GZIP_RATIO if source.gzip else chunk_bytes)
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
