"""Rows without a table, past the first AT_MOST of the log, counted and not held.

A row without a table cannot join a part of tables: the log's are all read with its
first part, beside that part's tables. A file of nothing but such rows (a file of `{}`
lines, an export whose table column is misnamed) would then put the whole file into
one part, whatever the memory budget. So the log holds its first AT_MOST such rows (in
file order) as rows, reported one by one as before; the rest of each file's are
counted where they are read, with their lines, and never held: one finding reports
them (IN004, `table_id`), and their lines withhold the rounds around them as any lost
row's do. A run of consecutive such lines withholds what its first and last line
would each withhold (no row of a table lies between them), so the lines are kept as
runs: as few as the file's other rows allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from . import vocabulary as v

AT_MOST = 200_000
TABLE = "table_id"
RUNS = {v.LINE: pl.Int64, "last": pl.Int64}  # a run's first and last line


def untabled(frame: pl.DataFrame | pl.LazyFrame) -> pl.Expr:
    """Whether a row of a file's frame (as read, text or typed) has no table: none in its
    cell, an empty one, or no such column."""
    names = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) \
        else frame.columns
    if TABLE not in names:
        return pl.lit(True)
    table = pl.col(TABLE).cast(pl.String)
    return table.is_null() | (table == "")


@dataclass
class Cut:
    """A file's rows without a table that are counted, not held: their count, and
    their lines as runs (RUNS)."""

    rows: int = 0
    runs: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=RUNS))

    def add(self, lines: pl.Series) -> None:
        """More such rows, at `lines` (ascending, after every line added before)."""
        if lines.is_empty():
            return
        self.rows += lines.len()
        self.runs = _joined(self.runs, runs_of(lines))

    @property
    def first_line(self) -> int:
        return int(self.runs[v.LINE].min())

    @property
    def last_line(self) -> int:
        return int(self.runs["last"].max())


def runs_of(lines: pl.Series) -> pl.DataFrame:
    """Ascending line numbers as runs of consecutive lines."""
    frame = lines.cast(pl.Int64).alias(v.LINE).to_frame()
    starts = (pl.col(v.LINE).diff() != 1).fill_null(True).cum_sum().alias("_run")
    return (frame.with_columns(starts).group_by("_run", maintain_order=True)
            .agg(pl.col(v.LINE).first(), pl.col(v.LINE).last().alias("last"))
            .select(list(RUNS)))


def _joined(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Two files' worth of runs in order, a run that goes on across them made one."""
    if before.is_empty() or after.is_empty() or before["last"][-1] + 1 != after[v.LINE][0]:
        return pl.concat([before, after])
    merged = pl.DataFrame({v.LINE: [before[v.LINE][-1]], "last": [after["last"][0]]},
                          schema=RUNS)
    return pl.concat([before.head(-1), merged, after.slice(1)])


@dataclass
class Allowance:
    """The rows without a table the log may still hold, taken in file order."""

    left: int = AT_MOST

    def take(self, rows: int) -> int:
        """Of `rows` more such rows (in file order), how many may be held."""
        taken = min(rows, self.left)
        self.left -= taken
        return taken


def held_part(frame: pl.DataFrame, allowance: Allowance) -> tuple[pl.DataFrame, Cut | None]:
    """A frame of a file's rows (in file order, with `line`) less its rows without a table
    past the allowance, and those counted (None: none)."""
    without = frame.select(untabled(frame).alias("_u"))["_u"]
    count = int(without.sum())
    kept = allowance.take(count)
    if kept == count:
        return frame, None
    rank = without.cast(pl.Int64).cum_sum()
    drop = without & (rank > kept)
    cut = Cut()
    cut.add(frame.get_column(v.LINE).filter(drop))
    return frame.filter(~drop), cut
