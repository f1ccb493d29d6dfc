"""Running numbers within groups, for frames sorted by their group keys (both games).

A window that is not an aggregation (`cum_sum().over(...)`, `int_range(...).over(...)`,
`shift().over(...)`) costs about a microsecond per group, and hands, wagers and
boxes come in hundreds of thousands of groups of one to three rows. Sorted by the
keys, each group is a run of adjacent rows, and these expressions read the runs in
one linear pass instead. Every function here expects the frame sorted by `keys`
(and within them in the order the running numbers follow).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl


def starts(keys: Sequence[str]) -> pl.Expr:
    """Whether the row is the first of its run of equal `keys` (nulls equal)."""
    changed = pl.lit(False)
    for key in keys:
        changed = changed | pl.col(key).ne_missing(pl.col(key).shift(1))
    return changed | (pl.int_range(pl.len()) == 0)


def ends(keys: Sequence[str]) -> pl.Expr:
    """Whether the row is the last of its run of equal `keys` (nulls equal)."""
    return starts(keys).shift(-1, fill_value=True)


def _at_start(value: pl.Expr, keys: Sequence[str], first: pl.Expr | None = None) -> pl.Expr:
    """`value` as it was on the first row of the row's run (`first`, where given, marks
    the runs' first rows: `starts(keys)`)."""
    return pl.when(starts(keys) if first is None else first).then(value).forward_fill()


def position(keys: Sequence[str]) -> pl.Expr:
    """1, 2, ... within each run (as `int_range(1, len + 1).over(keys)` on sorted rows)."""
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    return row - _at_start(row, keys) + 1


def sum_before(value: pl.Expr, keys: Sequence[str], first: pl.Expr | None = None) -> pl.Expr:
    """The sum of `value` over the earlier rows of the run (0 on its first row); `first`,
    where given, marks the runs' first rows (`starts(keys)`)."""
    value = value.fill_null(0)
    before = value.cum_sum() - value
    return before - _at_start(before, keys, first)


def rising_within(frame: pl.DataFrame, key: str, column: str,
                  where: pl.Expr | None = None) -> bool:
    """Whether each value of `key` is one run of rows of `frame` (the key sorted, never
    null) with `column` present and never falling within the run (on the rows `where`,
    every row by default): as frames cut from the events come, where a run's first
    and last rows then stand for the whole of it."""
    keys = frame.get_column(key)
    if keys.null_count() or not keys.is_sorted():
        return False
    value = pl.col(column)
    rising = value.is_not_null() & (starts([key]) | (value >= value.shift(1)))
    return frame.select((rising if where is None else ~where | rising).all()).item()


def previous(value: pl.Expr, keys: Sequence[str]) -> pl.Expr:
    """`value` of the row before in the same run; null on the run's first row."""
    return pl.when(~starts(keys)).then(value.shift(1))


def totals(frame: pl.DataFrame, keys: Sequence[str], sums: dict[str, pl.Expr],
           kept: Sequence[str] = ()) -> pl.DataFrame:
    """One row per run of equal `keys` of `frame`: the keys, the `kept` columns of the
    run's first row, `rows` (how many, UInt32) and per name in `sums` the sum of that
    expression over the run (nulls counted 0), read off running sums at the run's ends.
    As `group_by(keys).agg(...)` in run order, without the group-by's cost per group,
    where most runs are one to three rows."""
    first, last = starts(keys), ends(keys)
    values = {name: value.fill_null(0) for name, value in sums.items()}
    running = frame.select(
        first.alias("_first"),
        last.alias("_last"),
        pl.int_range(pl.len(), dtype=pl.Int64).alias("rows"),
        *(value.cum_sum().alias(name) for name, value in values.items()),
        *(value.alias(f"_{name}") for name, value in values.items()),
    )
    at_first = running.filter("_first")
    at_last = running.filter("_last")
    return frame.filter(first).select(*keys, *kept).with_columns(
        (at_last["rows"] - at_first["rows"] + 1).cast(pl.UInt32).alias("rows"),
        *(
            (at_last[name] - at_first[name] + at_first[f"_{name}"]).alias(name)
            for name in values
        ),
    )
