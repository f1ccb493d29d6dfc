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


def with_later_shuffle(ctx: GameContext, shoes: pl.LazyFrame) -> pl.LazyFrame:
    """`shoes` (table_id, shoe_id, last_seq, next_shoe_seq from the judged rows) with
    `next_shoe_seq` brought forward to a later shoe's shuffle among rows set aside: the
    log shows the shoe ended there even though that shoe's opening rows are not judged
    (a bad burn card sets them aside). Without it, a shoe followed only by set-aside
    rows would read as the table's last, its end not recorded."""
    if ctx.gaps.select(pl.col("shuffle_seq").is_null().all()).item():
        return shoes
    later = ctx.gaps.lazy().filter(pl.col("shuffle_seq").is_not_null()).select(
        "table_id", pl.col("shoe_id").alias("later_shoe"), "shuffle_seq")
    after = (
        shoes.select("table_id", "shoe_id", "last_seq")
        .with_columns(pl.col("table_id", "shoe_id").cast(pl.String),
                      pl.col("last_seq").cast(pl.Int64))
        .sort("last_seq")
        .join_asof(later.sort("shuffle_seq"), left_on="last_seq", right_on="shuffle_seq",
                   by="table_id", strategy="forward", allow_exact_matches=False,
                   check_sortedness=False)  # both sorted by their key above
        # a shuffle of the shoe itself (set aside with its opening rows) is not a later shoe
        .filter(pl.col("later_shoe") != pl.col("shoe_id"))
        .select("table_id", "shoe_id", pl.col("shuffle_seq").alias("later_shuffle_seq"))
    )
    schema = shoes.collect_schema()
    return (
        shoes.join(after.cast({"table_id": schema["table_id"], "shoe_id": schema["shoe_id"]}),
                   on=["table_id", "shoe_id"], how="left", maintain_order="left")
        .with_columns(pl.min_horizontal("next_shoe_seq", "later_shuffle_seq")
                      .cast(schema["next_shoe_seq"]).alias("next_shoe_seq"))
        .drop("later_shuffle_seq")
    )
