"""Every recorded blackjack shoe: one row per (table_id, shoe_id), built once per audit.

A shoe runs from its `shuffle` to the next `shuffle` of the table (hand-history-v1).
The shoe-level rules of 9 NYCRR 5324.10 compare these columns with the deck
minimum and card counts of (b)(1) and the cover-card procedure of (j).

Columns of `shoes(ctx)` (sorted by table_id, shoe_no):
  shoe_no          1, 2, ... per table, by the shoe's first row
  first_seq last_seq  the shoe's first and last rows in ctx.events
  auditable        its shuffle (a round-0 row) is in ctx.events: without it the
                   decks are unknown, and the shoe is not judged on them
  shuffle_seq decks  the shuffle and the decks it declares
  cover_seq        the shoe's first cover_card row
  cover_round      the round in which that cover card came out: the row's `round`,
                   and round 1 for a cover card recorded before the first round
                   (round 0: it was reached before any card of round 1 was dealt)
  last_round       the highest round number of the shoe (0 with no round)
  next_shoe_seq    the first row of the table's next shoe; null when the log ends first
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext

SHOE_KEY = ["table_id", "shoe_id"]


def _per_shoe(ctx: GameContext) -> pl.DataFrame:
    event = pl.col("event")
    shuffle = (pl.col("round") == 0) & (event == "shuffle")
    cover = event == "cover_card"
    # only the columns read, so that the group-by gathers no others
    rows = ctx.events.lazy().select(*SHOE_KEY, "seq", "round", "event", "decks")
    return rows.group_by(SHOE_KEY, maintain_order=True).agg(
        pl.col("seq").min().alias("first_seq"),
        pl.col("seq").max().alias("last_seq"),
        shuffle.any().alias("auditable"),
        pl.col("seq").filter(shuffle).min().alias("shuffle_seq"),
        pl.col("decks").filter(shuffle).first().alias("decks"),
        pl.col("seq").filter(cover).min().alias("cover_seq"),
        pl.col("round").filter(cover).first().alias("cover_round"),  # rows are in seq order
        pl.col("round").max().alias("last_round"),
    ).collect()


def build_shoes(ctx: GameContext) -> pl.DataFrame:
    return (
        _per_shoe(ctx)
        .sort("table_id", "first_seq")
        .with_columns(
            pl.int_range(1, pl.len() + 1).over("table_id").alias("shoe_no"),
            pl.col("first_seq").shift(-1).over("table_id").alias("next_shoe_seq"),
            # a cover card before round 1 came out "before the round in `round`" = 1
            pl.when(pl.col("cover_round") < 1)
            .then(1)
            .otherwise(pl.col("cover_round"))
            .alias("cover_round"),
        )
    )


def shoes(ctx: GameContext) -> pl.DataFrame:
    """The shoes (see the module docstring), shared by the shoe-level rules."""
    return ctx.derived("blackjack.shoes", build_shoes)
