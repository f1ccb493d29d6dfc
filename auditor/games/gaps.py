"""Gaps in a shoe: what the log does not hold of it.

A shoe's state carries from round to round: who holds the shoe and whose turn is
next, the commission marked and not yet settled, the cards dealt. Where a round of the
shoe was set aside (it lost a row, or the log was cut in it: GameContext.gaps), or
the shoe began before the log, that state is not known after the gap: it resumes from
the next fact the log records (the next accepted offer names the holder; the next
shuffle starts a whole shoe). A judgment that depends on what the gap held is not
made: the gap itself is already reported, once.

`segments(ctx)`: one row per round id of ctx.events, with
  table_id shoe_id round rid
  segment     the rounds of a shoe between two gaps share one: 0 up to the shoe's first
              gap, then 1, 2, ...
  after_gap   the segment follows a gap: a round of the shoe before it was set aside
"""

from __future__ import annotations

import polars as pl

from ..audit_context import GameContext

SHOE_KEY = ["table_id", "shoe_id"]


def has_gaps(ctx: GameContext) -> bool:
    """Whether any round of the context's shoes was set aside (most logs: none)."""
    return ctx.gaps.select((pl.col("round") > 0).any()).item() or False


def segment_of(ctx: GameContext, rows: pl.DataFrame) -> pl.Series:
    """The segment of each row of `rows` (which have `rid`): 0 throughout where no round
    was set aside, without a pass over the log."""
    if not has_gaps(ctx):
        return pl.zeros(rows.height, pl.Int64, eager=True).alias("segment")
    return (
        rows.select("rid")
        .join(segments(ctx).select("rid", "segment"), on="rid", how="left",
              maintain_order="left")
        .get_column("segment").fill_null(0)
    )


def build_segments(ctx: GameContext) -> pl.DataFrame:
    # a round's rows are one run of its id (the events are sorted by table and seq)
    rounds = (
        ctx.events.lazy()
        .filter(pl.col("rid") != pl.col("rid").shift(1).fill_null(-1))
        .select("rid", pl.col("table_id", "shoe_id").cast(pl.String), "round")
        .collect()
    )
    gaps = ctx.gaps.filter(pl.col("round") > 0)
    if gaps.is_empty():
        return rounds.with_columns(pl.lit(0, pl.Int64).alias("segment"),
                                   pl.lit(False).alias("after_gap")).sort("rid")
    # the number of gaps of the shoe before each round (both sorted, per shoe)
    before = (
        rounds.select("rid", *SHOE_KEY, "round").sort(*SHOE_KEY, "round")
        .join_asof(
            gaps.sort(*SHOE_KEY, "round").with_columns(
                pl.int_range(1, pl.len() + 1).over(SHOE_KEY).alias("segment"),
            ).select(*SHOE_KEY, "round", "segment"),
            on="round", by=SHOE_KEY, strategy="backward", check_sortedness=False,
        )
        .select("rid", pl.col("segment").fill_null(0).cast(pl.Int64))
    )
    return (
        rounds.join(before, on="rid", how="left")
        .with_columns((pl.col("segment") > 0).alias("after_gap"))
        .sort("rid")
    )


def segments(ctx: GameContext) -> pl.DataFrame:
    """Each round's segment of its shoe (see the module docstring), built once."""
    return ctx.derived("gaps.segments", build_segments)
