"""A Parquet file read once for all the parts of a log, held typed in a few bytes a row.

A log audited in parts reads each part's tables out of every file. A Parquet file's
tables interleave in every row group, so scanning it for each part decodes the whole
file each time (for a million blackjack rounds in 14 parts, about a quarter of the
audit's work). Instead the file is read once, two slices at a time, typed as a part
would be, and each column is kept in as few bytes as its values allow: text as codes
in a code book of its own (one byte while there are at most 256 values; the canonical
Categoricals too, their few values made canonical as they are widened), integers in
the narrowest width that holds them, times in seconds where they are whole seconds. A part
then gathers its rows out of these columns, already in table order (the order every
check reads), and widens them back to the canonical types: the frame it gets is the
one it would have read, typed and sorted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import polars as pl

from ..series import stable_order_by_code
from . import vocabulary as v
from .parse import CANONICAL_SCHEMA, STRING_COLUMNS, typed
from .problems import PROBLEM_SCHEMA
from .readers import parquet_rows
from .threads import in_order

TABLE = "table_id"
RANK = "_rank"  # a row's place among the part's rows of its file, in file order
TABLE_CODE = "_table"  # a row's table as a code in the tables' text order
_CODE = "_table_code"  # a problem's row's table, as a code of Held.tables

# Code widths tried in turn for a text column: a column whose distinct values outgrow
# one is coded again in the next
_CODE_WIDTHS = (pl.UInt8, pl.UInt16, pl.UInt32)
_MICROSECONDS = 1_000_000
_namespaces = itertools.count()


@dataclass
class _Text:
    """A text column as codes of its distinct values (a Categorical of its own)."""

    namespace: str
    name: str
    width: int = 0  # index into _CODE_WIDTHS
    chunks: list[pl.Series] = field(default_factory=list)

    def categories(self, width: int | None = None) -> pl.Categories:
        physical = _CODE_WIDTHS[self.width if width is None else width]
        return pl.Categories(f"{self.name}-{physical}", self.namespace, physical=physical)

    def try_coded(self, frame: pl.DataFrame) -> tuple[int, pl.Series | None]:
        """The column of `frame` in the codes of the moment (their width with them), or
        None where its values outgrow them (a slice read while another is added). One
        column at a time: a coding that fails may leave codes without a value in its
        code book (then dropped for a wider one); coded together with other columns,
        it would stop their coding halfway and leave such codes in their books too."""
        width = self.width
        try:
            return width, frame.select(
                pl.col(self.name).cast(pl.Categorical(self.categories(width)))).to_series()
        except pl.exceptions.ComputeError:
            return width, None

    def take_chunks(self) -> list[pl.Series]:
        chunks, self.chunks = self.chunks, []
        return chunks

    def add(self, width: int, coded: pl.Series | None, text: pl.Series | None) -> None:
        """Add a slice's column, `coded` in codes of `width` (None: not coded; `text` is
        it as text), with wider codes (and its chunks so far) as long as its distinct
        values outgrow them."""
        while True:
            if coded is not None and width == self.width:
                self.chunks.append(coded)
                return
            try:
                source = text if coded is None else coded.cast(pl.String)
                coded, width = source.cast(pl.Categorical(self.categories())), self.width
            except pl.exceptions.ComputeError:
                if self.width + 1 == len(_CODE_WIDTHS):
                    raise
                self.width += 1
                self.chunks = [c.cast(pl.String).cast(pl.Categorical(self.categories()))
                               for c in self.chunks]


@dataclass
class _Times:
    """Timestamps as seconds from a base where every one is a whole second (parsed
    text always is), else as microseconds from it."""

    base: int  # microseconds
    chunks: list[tuple[bool, pl.Series]] = field(default_factory=list)  # (in seconds, offsets)

    def offsets(self, time: pl.Series) -> tuple[bool, pl.Series]:
        offsets = time.to_physical() - self.base
        whole = (offsets % _MICROSECONDS == 0).all()  # nulls ignored
        if whole:
            offsets = offsets // _MICROSECONDS
        return whole, _narrowed(offsets)

    def column(self) -> tuple[pl.Series, bool]:
        """The offsets of every chunk in one unit, and whether it is seconds."""
        if all(whole for whole, _ in self.chunks):
            return _joined([offsets for _, offsets in self.chunks]), True
        return _joined([offsets.cast(pl.Int64) * (_MICROSECONDS if whole else 1)
                        for whole, offsets in self.chunks]), False


@dataclass
class Held:
    """One Parquet file's rows, typed and compact, and what typing them found."""

    tables: list[str]  # the log's tables in text order: a table's code is its place here
    frame: pl.DataFrame  # compact columns, one chunk each, in file order
    texts: dict[str, pl.Series]  # a text column's values by code, in its canonical type
    time_base: int
    time_in_seconds: bool
    problems: pl.DataFrame  # values that did not parse, with their row's table code

    def part(self, tables: list[str] | None, first: bool,
             untabled_until: int | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The rows of `tables` (None: all) and, when `first`, the rows without a table
        (up to the line `untabled_until`, where later ones are counted apart): typed, in
        table order (each table's rows in file order), with their line, their place in
        file order (RANK) and their table's code (TABLE_CODE); and the problems of
        typing them."""
        # the part's row numbers and table codes in file order, in one pass (a range
        # filtered: a third of the time of arg_true over the file)
        line = pl.int_range(pl.len(), dtype=pl.Int64) + 1
        wanted = self._wanted(pl.col(TABLE), tables, first, line, untabled_until)
        picked = self.frame.select(
            pl.int_range(pl.len(), dtype=pl.get_index_type()).filter(wanted).alias("row"),
            pl.col(TABLE).filter(wanted),
        )
        # a stable counting sort by table code (rows without a table last): each
        # table's rows stay in file order
        by_table = stable_order_by_code(picked.get_column(TABLE))
        rows = picked.get_column("row").gather(by_table)
        held = self.frame[rows]
        frame = held.select(self._widened(name) for name in CANONICAL_SCHEMA if name != v.LINE)
        frame = frame.with_columns(
            (rows.cast(pl.Int64) + 1).alias(v.LINE),
            by_table.cast(pl.Int64).alias(RANK),
            held.get_column(TABLE).alias(TABLE_CODE),
        )
        return frame, self._problems(tables, first, untabled_until)

    def _wanted(self, code: pl.Expr, tables: list[str] | None, first: bool,
                line: pl.Expr, untabled_until: int | None) -> pl.Expr:
        """Whether a row's table `code` is of the part (the first has the rows without,
        those on a line up to `untabled_until`)."""
        if tables is None:
            wanted = code.is_not_null()
        else:
            codes = pl.Series(tables, dtype=pl.String).cast(pl.Enum(self.tables)).to_physical()
            wanted = code.is_in(codes.implode())
        without = code.is_null() if untabled_until is None else (
            code.is_null() & (line <= untabled_until))
        return (wanted | without) if first else wanted

    def _widened(self, name: str) -> pl.Expr:
        dtype, held = CANONICAL_SCHEMA[name], pl.col(name)
        if name not in self.frame.columns:  # a column with no value in the file
            return pl.lit(None, dtype).alias(name)
        if name == TABLE:
            return pl.lit(pl.Series(self.tables, dtype=pl.String)).gather(held).alias(name)
        if name in self.texts:  # (a canonical Categorical too: its few values spread)
            return pl.lit(self.texts[name]).gather(held.to_physical()).alias(name)
        if name == "time":
            scale = _MICROSECONDS if self.time_in_seconds else 1
            return (held.cast(pl.Int64) * scale + self.time_base).cast(dtype).alias(name)
        return held.cast(dtype)

    def _problems(self, tables: list[str] | None, first: bool,
                  untabled_until: int | None = None) -> pl.DataFrame:
        wanted = self._wanted(pl.col(_CODE), tables, first, pl.col(v.LINE), untabled_until)
        return self.problems.filter(wanted).drop(_CODE)


_TEXTS = tuple(c for c in STRING_COLUMNS if c != TABLE)
_NARROWED = (*v.INTEGER_COLUMNS, "amount_cents")


# Rows held at most, over a log's files (about 30 bytes a row: some 1.2 GB): beside the
# two parts in flight, a million blackjack rounds (35 million rows) took the worker to
# 3.4 GB. A larger log is scanned for each part, so that memory follows the part again.
ROWS_AT_MOST = 40_000_000

# Rows read and typed at a time: the slices in flight are the memory the reading takes
# beyond what it holds (a million blackjack rounds: 3.4 GB at the worst moment of the
# audit in slices of half a million rows, 4.0 GB in slices of a million)
SLICE_ROWS = 500_000


def read(scan: pl.LazyFrame, columns: list[str], tables: list[str], total: int,
         file_id: int, time_base: int = 0) -> Held:
    """Read a Parquet file once, SLICE_ROWS rows at a time, typed and compacted; times
    are held from `time_base` (microseconds: the log's first day, so that they are
    small). Raises what the reader raises (a damaged file is then read part by part)."""
    namespace = f"auditor-held-{next(_namespaces)}"
    texts = {name: _Text(namespace, name) for name in _TEXTS}
    times, enum = _Times(time_base), pl.Enum(tables)
    held: dict[str, list[pl.Series]] = {}
    problems = []

    def compacted(offset: int) -> _Slice:
        frame, unparsed = typed(
            parquet_rows(scan.slice(offset, SLICE_ROWS), columns, pl.lit(True), offset),
            file_id, text=pl.String)
        return _compacted(frame, unparsed, offset, enum, texts, times)

    for piece in in_order(compacted, range(0, total, SLICE_ROWS)):
        for name, column in piece.columns.items():
            held.setdefault(name, []).append(column)
        problems.append(piece.problems)
        for name, (width, coded) in piece.coded.items():
            texts[name].add(width, coded, piece.texts.get(name))
        times.chunks.append(piece.times)
    # each column's chunks are let go as it is joined: the file is held once, not twice
    compact = {name: _joined(held.pop(name)) for name in list(held)}
    compact |= {name: _joined(text.take_chunks()) for name, text in texts.items()}
    compact["time"], in_seconds = times.column()
    # a column with no value at all (another game's, or one the file lacks) is not held
    compact = {name: column for name, column in compact.items()
               if name == TABLE or column.null_count() < len(column)}
    # every code of a code book in use has its value: a coding that failed (its values
    # outgrowing the codes) left its code book, and its column's own coding only
    values = {name: text.categories().to_series().cast(CANONICAL_SCHEMA[name])
              for name, text in texts.items()}
    return Held(
        tables, pl.DataFrame(compact), values, time_base, in_seconds,
        pl.concat([pl.DataFrame(schema={**PROBLEM_SCHEMA, _CODE: compact[TABLE].dtype}),
                   *problems], how="vertical_relaxed"),
    )


@dataclass
class _Slice:
    """One slice of the file, compacted (the text columns in the codes of the moment)."""

    columns: dict[str, pl.Series]
    problems: pl.DataFrame
    coded: dict[str, tuple[int, pl.Series | None]]  # per text column: its codes' width, codes
    texts: dict[str, pl.Series]  # the text of a column its codes could not hold
    times: tuple[bool, pl.Series]


def _compacted(frame: pl.DataFrame, unparsed: pl.DataFrame, offset: int, enum: pl.Enum,
               texts: dict[str, _Text], times: _Times) -> _Slice:
    codes = frame.get_column(TABLE).cast(enum).to_physical()
    columns = {TABLE: codes, **{c: frame.get_column(c) for c in v.BOOLEAN_COLUMNS}}
    for name in _NARROWED:
        columns[name] = _narrowed(frame.get_column(name))
    coded = {name: text.try_coded(frame) for name, text in texts.items()}
    return _Slice(
        columns,
        unparsed.with_columns(codes.gather(unparsed.get_column(v.LINE) - offset - 1).alias(_CODE)),
        coded,
        {name: frame.get_column(name) for name, (_, c) in coded.items() if c is None},
        times.offsets(frame.get_column("time")),
    )


_WIDTHS = {
    True: [(pl.Int8, 1 << 7), (pl.Int16, 1 << 15), (pl.Int32, 1 << 31)],
    False: [(pl.UInt8, 1 << 8), (pl.UInt16, 1 << 16), (pl.UInt32, 1 << 32)],
}


def _narrowed(column: pl.Series) -> pl.Series:
    """An integer column in the narrowest type of its signedness that holds its values
    (the bounds checked once, so the cast itself need not check every value)."""
    low, high = column.min(), column.max()
    if low is None:
        return column.cast(pl.Int8 if column.dtype.is_signed_integer() else pl.UInt8)
    for dtype, bound in _WIDTHS[column.dtype.is_signed_integer()]:
        if -bound <= low and high < bound:
            return column.cast(dtype, wrap_numerical=True)
    return column


def _joined(chunks: list[pl.Series]) -> pl.Series:
    """One column of one chunk, in the widest type of its chunks."""
    return pl.concat([c.to_frame() for c in chunks], how="vertical_relaxed").to_series().rechunk()
