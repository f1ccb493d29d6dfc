"""A Parquet file read once for all the parts of a log, held typed in a few bytes a row.

A log audited in parts reads each part's tables out of every file. A Parquet file's
tables interleave in every row group, so scanning it for each part decodes the whole
file each time (for a million blackjack rounds in 14 parts, about a quarter of the
audit's work). Instead the file is read once, slice by slice, typed as a part would be, and
each column is kept in as few bytes as its values allow: text as codes of its
distinct values (one byte while there are at most 256 of them), integers in the
narrowest width that holds them, times in seconds where they are whole seconds. A part
then gathers its rows out of these columns, already in table order (the order every
check reads), and widens them back to the canonical types: the frame it gets is the
one it would have read, typed and sorted.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl
import pyarrow.compute as pc

from . import vocabulary as v
from .parse import CANONICAL_SCHEMA, STRING_COLUMNS, typed
from .problems import PROBLEM_SCHEMA
from .readers import parquet_rows

TABLE = "table_id"
RANK = "_rank"  # a row's place among the part's rows of its file, in file order
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

    def categories(self) -> pl.Categories:
        width = _CODE_WIDTHS[self.width]
        return pl.Categories(f"{self.name}-{width}", self.namespace, physical=width)

    def coded(self) -> pl.Expr:
        return pl.col(self.name).cast(pl.Categorical(self.categories()))

    def add(self, frame: pl.DataFrame) -> None:
        """Code the column of `frame`, with wider codes (and its chunks so far) as long
        as its distinct values outgrow them."""
        while True:
            try:
                self.chunks.append(frame.select(self.coded()).to_series())
                return
            except pl.exceptions.ComputeError:
                if self.width + 1 == len(_CODE_WIDTHS):
                    raise
                self.width += 1
                self.chunks = [c.cast(pl.String).cast(pl.Categorical(self.categories()))
                               for c in self.chunks]


def _coded(texts: dict[str, _Text], frame: pl.DataFrame) -> None:
    """Every text column of `frame` coded, at once (in parallel) where none outgrows its
    codes, else one by one."""
    try:
        coded = frame.select(text.coded() for text in texts.values())
    except pl.exceptions.ComputeError:
        for text in texts.values():
            text.add(frame)
        return
    for text, column in zip(texts.values(), coded.get_columns(), strict=True):
        text.chunks.append(column)


@dataclass
class _Times:
    """Timestamps as seconds from a base where every one is a whole second (parsed
    text always is), else as microseconds from it."""

    base: int | None = None
    chunks: list[tuple[bool, pl.Series]] = field(default_factory=list)  # (in seconds, offsets)

    def add(self, time: pl.Series) -> None:
        micros = time.to_physical()
        if self.base is None:
            self.base = micros.min() or 0
        offsets = micros - self.base
        whole = (offsets % _MICROSECONDS == 0).all()  # nulls ignored
        if whole:
            offsets = offsets // _MICROSECONDS
        self.chunks.append((whole, _narrowed(offsets)))

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
    texts: dict[str, pl.Series]  # a String column's distinct values, by code
    palette: pl.Series  # the canonical Categorical of each code held (its physical value)
    time_base: int
    time_in_seconds: bool
    problems: pl.DataFrame  # values that did not parse, with their row's table code

    def part(self, tables: list[str] | None, first: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The rows of `tables` (None: all) and, when `first`, the rows without a table:
        typed, in table order (each table's rows in file order), with their line and
        their place in file order (RANK); and the problems of typing them."""
        code = self.frame.get_column(TABLE)
        in_file_order = self.frame.select(
            self._wanted(pl.col(TABLE), tables, first).arg_true()).to_series()
        # a stable counting sort by table code (rows without a table last): each
        # table's rows stay in file order
        by_table = pl.Series(pc.array_sort_indices(code.gather(in_file_order).to_arrow()))
        rows = in_file_order.gather(by_table)
        frame = self.frame[rows].select(self._widened(name) for name in CANONICAL_SCHEMA
                                        if name != v.LINE)
        frame = frame.with_columns(
            (rows.cast(pl.Int64) + 1).alias(v.LINE),
            by_table.cast(pl.Int64).alias(RANK),
        )
        return frame, self._problems(tables, first)

    def _wanted(self, code: pl.Expr, tables: list[str] | None, first: bool) -> pl.Expr:
        """Whether a row's table `code` is of the part (the first has the rows without)."""
        if tables is None:
            wanted = code.is_not_null()
        else:
            codes = pl.Series(tables, dtype=pl.String).cast(pl.Enum(self.tables)).to_physical()
            wanted = code.is_in(codes.implode())
        return (wanted | code.is_null()) if first else wanted

    def _widened(self, name: str) -> pl.Expr:
        dtype, held = CANONICAL_SCHEMA[name], pl.col(name)
        if name not in self.frame.columns:  # a column with no value in the file
            return pl.lit(None, dtype).alias(name)
        if name == TABLE:
            return pl.lit(pl.Series(self.tables, dtype=pl.String)).gather(held).alias(name)
        if name in self.texts:
            return pl.lit(self.texts[name]).gather(held.to_physical()).alias(name)
        if name in v.CATEGORICAL_COLUMNS:
            return pl.lit(self.palette).gather(held).alias(name)
        if name == "time":
            scale = _MICROSECONDS if self.time_in_seconds else 1
            return (held.cast(pl.Int64) * scale + self.time_base).cast(dtype).alias(name)
        return held.cast(dtype)

    def _problems(self, tables: list[str] | None, first: bool) -> pl.DataFrame:
        return self.problems.filter(self._wanted(pl.col(_CODE), tables, first)).drop(_CODE)


_TEXTS = tuple(c for c in STRING_COLUMNS if c != TABLE and c not in v.CATEGORICAL_COLUMNS)
_NARROWED = (*v.CATEGORICAL_COLUMNS, *v.INTEGER_COLUMNS, "amount_cents")


# Rows read and typed at a time: the slices in flight are the memory the reading takes
# beyond what it holds (a million blackjack rounds: 3.4 GB at the worst moment of the
# audit in slices of half a million rows, 4.0 GB in slices of a million)
SLICE_ROWS = 500_000


def read(scan: pl.LazyFrame, columns: list[str], tables: list[str], total: int,
         file_id: int) -> Held:
    """Read a Parquet file once, SLICE_ROWS rows at a time, typed and compacted.
    Raises what the reader raises (a damaged file is then read part by part)."""
    namespace = f"auditor-held-{next(_namespaces)}"
    texts = {name: _Text(namespace, name) for name in _TEXTS}
    held: dict[str, list[pl.Series]] = {}
    times, problems = _Times(), []
    enum = pl.Enum(tables)
    for offset, (frame, unparsed) in _typed_slices(scan, columns, total, SLICE_ROWS, file_id):
        codes = frame.get_column(TABLE).cast(enum).to_physical()
        held.setdefault(TABLE, []).append(codes)
        problems.append(unparsed.with_columns(
            codes.gather(unparsed.get_column(v.LINE) - offset - 1).alias(_CODE)))
        _coded(texts, frame)
        for name in _NARROWED:  # a Categorical by its canonical code
            held.setdefault(name, []).append(_narrowed(frame.get_column(name).to_physical()))
        held.setdefault("accepted", []).append(frame.get_column("accepted"))
        times.add(frame.get_column("time"))
    compact = {name: _joined(chunks) for name, chunks in held.items()}
    compact |= {name: _joined(text.chunks) for name, text in texts.items()}
    compact["time"], in_seconds = times.column()
    largest = max((compact[c].max() or 0) for c in v.CATEGORICAL_COLUMNS)
    # a column with no value at all (another game's, or one the file lacks) is not held
    compact = {name: column for name, column in compact.items()
               if name == TABLE or column.null_count() < len(column)}
    # the canonical (global) categories only grow, so the codes held keep their values
    palette = pl.Categories().to_series().head(largest + 1).cast(pl.Categorical)
    return Held(
        tables, pl.DataFrame(compact),
        {name: text.categories().to_series() for name, text in texts.items()},
        palette, times.base or 0, in_seconds,
        pl.concat([pl.DataFrame(schema={**PROBLEM_SCHEMA, _CODE: compact[TABLE].dtype}),
                   *problems], how="vertical_relaxed"),
    )


# Slices read and typed at once: a slice's typing leaves a core idle at times (one
# column's parse is long), the next slice's reading and typing fill it
_SLICES_AT_ONCE = 2


def _typed_slices(scan: pl.LazyFrame, columns: list[str], total: int, rows: int,
                  file_id: int) -> Iterator[tuple[int, tuple[pl.DataFrame, pl.DataFrame]]]:
    """Each slice of the file typed (see parse.typed), in file order."""
    def slice_typed(offset: int) -> tuple[pl.DataFrame, pl.DataFrame]:
        raw = parquet_rows(scan.slice(offset, rows), columns, pl.lit(True), offset)
        return typed(raw, file_id)

    offsets = iter(range(0, total, rows))
    with ThreadPoolExecutor(_SLICES_AT_ONCE) as pool:
        pending = deque((o, pool.submit(slice_typed, o))
                        for o in itertools.islice(offsets, _SLICES_AT_ONCE))
        while pending:
            offset, done = pending.popleft()
            pending.extend((o, pool.submit(slice_typed, o)) for o in itertools.islice(offsets, 1))
            yield offset, done.result()


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
