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

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from . import chunks, readers, storage, untabled
from . import vocabulary as v
from .parse import CANONICAL_SCHEMA, STRING_COLUMNS, typed
from .problems import PROBLEM_SCHEMA, Problem
from .readers import RawFile
from .sources import Source
from .threads import in_order

TABLE = "table_id"
# The log's text files are spilled where they hold more than this in all (a gzip file
# counting chunks.GZIP_RATIO times its size)
SPILL_BYTES = 256 << 20
_NO_TABLE = "none"


def text_bytes(sources: list[Source]) -> int:
    """The text the log's JSON Lines and CSV files hold, about (a gzip file: GZIP_RATIO
    times its size on disk)."""
    size = 0
    for source in sources:
        if source.encoding != "parquet" and source.path.is_file():
            size += source.path.stat().st_size * (chunks.GZIP_RATIO if source.gzip else 1)
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
    file_id: int  # the file's place in the log, that its problems name
    tables: dict[str, str] = field(default_factory=dict)  # table_id -> its folder's name
    problems: list[Problem] = field(default_factory=list)
    rows_lost: int = 0
    missing: list[str] = field(default_factory=list)
    header_line: int | None = None
    rows: int = 0  # rows read (written, or past the allowance of rows without a table)
    sourced: bool = False  # (1.2) its rows may name the export file and line they came from
    cut: untabled.Cut | None = None  # rows without a table past the allowance, counted

    def part(self, tables: list[str] | None, first: bool) -> RawFile:
        """The rows of `tables` (None: all), typed, with the rows without a table, the
        file's problems and its lost records when `first`. Each piece is typed as it is
        read: the part holds its rows typed, and one piece's as read."""
        names = list(self.tables.values()) if tables is None else [
            self.tables[t] for t in tables if t in self.tables]
        if first:
            names.append(_NO_TABLE)
        files = [f for name in names for f in sorted((self.folder / name).glob("*.parquet"))]
        pieces = (pl.read_parquet(storage.polars_source(f)) for f in files)
        return RawFile(readers.empty(), list(self.problems) if first else [],
                       self.rows_lost if first else 0, self.missing, self.header_line,
                       typed=typed_pieces(pieces, self.file_id))


def typed_pieces(frames: Iterable[pl.DataFrame],
                 file_id: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Frames as read (chunks, spilled pieces) typed one at a time, so that no more than
    one is held untyped: the canonical frame, and the problems of typing them."""
    typed_frames, problems = [], [pl.DataFrame(schema=PROBLEM_SCHEMA)]
    for raw in frames:
        frame, unparsed = typed(raw, file_id, text=pl.String)
        typed_frames.append(frame)
        problems.append(unparsed)
    if not typed_frames:
        typed_frames = [typed(readers.empty(), file_id, text=pl.String)[0]]
    canonical = {c: CANONICAL_SCHEMA[c] for c in STRING_COLUMNS}
    return pl.concat(typed_frames).cast(canonical), pl.concat(problems)


@dataclass
class _Piece:
    """A chunk parsed and written: what the file's spill keeps of it."""

    parsed: chunks.Parsed
    number: int
    counts: pl.DataFrame | None = None  # rows per table
    day: date | None = None
    # the lines of its rows without a table, not written: the log's allowance of them
    # was spent before it (untabled)
    unwritten: pl.Series | None = None


def spill(source: Source, folder: Path, file_id: int, counts: list[pl.DataFrame],
          days: list[date | None], first_day, chunk_bytes: int | None = None,
          max_line: int | None = None,
          allowance: untabled.Allowance | None = None) -> Spilled:
    """Read `source` (file `file_id` of the log) into `folder` a chunk (of `chunk_bytes`)
    at a time, two chunks at once (threads.in_order); each chunk's rows per table are
    appended to `counts` and its first day to `days` (`first_day`: that of a frame);
    lines longer than `max_line` are cut out and reported (text.pieces); rows without a
    table past `allowance` are counted (Spilled.cut), their chunk's piece rewritten."""
    allowance = allowance or untabled.Allowance()
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder, file_id)
    found = chunks.Joined()
    naming = threading.Lock()

    def work(chunk: chunks.Chunk) -> _Piece:
        """A chunk parsed and written by table as read: it is typed by the part that
        reads it, in the worker, while the part before it is checked."""
        piece = _Piece(chunks.parse(chunk, source.encoding), chunk.number)
        frame = piece.parsed.frame
        if frame is not None and frame.height:
            if allowance.left == 0:  # it only goes down: these rows will not be held
                without = untabled.untabled(frame)
                piece.unwritten = frame.filter(without).get_column(v.LINE)
                frame = frame.filter(~without)
            piece.day = first_day(frame.lazy()) if "ts" in frame.columns else None
            piece.counts = _write(frame, out, chunk.number, naming)
        return piece

    for piece in in_order(work, chunks.numbered(source, chunk_bytes, max_line)):
        found.add(piece.parsed)
        if piece.unwritten is not None and piece.unwritten.len():
            out.cut = out.cut or untabled.Cut()
            out.cut.add(piece.unwritten)
            out.rows += piece.unwritten.len()
        if piece.counts is not None:
            counts.append(_allowed(out, piece, allowance))
            days.append(piece.day)
    out.problems, out.rows_lost = found.problems, found.rows_lost
    out.missing, out.header_line = found.missing, found.header_line
    out.sourced = found.sourced
    return out


def _allowed(out: Spilled, piece: _Piece, allowance: untabled.Allowance) -> pl.DataFrame:
    """The piece's rows per table, its rows without a table past the allowance counted
    (out.cut) and taken out of its written rows: the pieces come here in file order."""
    without = piece.counts.filter(pl.col(TABLE).is_null())["rows"].sum()
    kept = allowance.take(int(without))
    if kept == without:
        return piece.counts
    path = out.folder / _NO_TABLE / f"{piece.number:06d}.parquet"
    out.cut = out.cut or untabled.Cut()
    out.cut.add(pl.read_parquet(path, columns=[v.LINE]).get_column(v.LINE).slice(kept))
    if kept:
        rows = pl.read_parquet(path).head(kept)
        storage.write_parquet(rows, path, compression="lz4", statistics=False)
    else:
        path.unlink()
    return piece.counts.with_columns(
        pl.when(pl.col(TABLE).is_null()).then(kept).otherwise("rows").cast(pl.UInt32)
        .alias("rows"))


def spill_parquet(scan: pl.LazyFrame, columns: list[str], total: int, folder: Path,
                  file_id: int, missing: list[str], untabled_until: int | None = None
                  ) -> Spilled:
    """A Parquet file too large to hold, or audited side by side, spilled by table the
    same way, a slice of SLICE_ROWS rows at a time: each part then reads its tables
    only, not the whole file again. `untabled_until`: the last line of the rows without
    a table that are held (those after it are counted elsewhere: untabled)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = Spilled(folder, file_id, missing=missing)
    naming = threading.Lock()
    keep = pl.lit(True) if untabled_until is None else ~(
        untabled.untabled(scan) & (pl.col(v.LINE) > untabled_until))
    for number, offset in enumerate(range(0, total, SLICE_ROWS)):
        rows = readers.parquet_rows(scan.slice(offset, SLICE_ROWS), columns, keep, offset)
        _write(rows, out, number, naming)
    return out


SLICE_ROWS = 2_000_000  # rows of a Parquet file spilled at once


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


