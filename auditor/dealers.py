"""The dealer of each round and shoe, where the log names one (hand-history-v1 1.1).

`dealer_id` on a round_start row names the round's dealer, on a shuffle row who
shuffled; other rows may repeat it or leave it out, and are not read for it. A finding
on a round carries its round's dealer; a finding on a shoe (no round, or the rows
before round 1) the dealer named on its shoe's shuffle. A finding about a pit, a table
or a file carries none, and so does every finding of a log that names no dealer.

Each part of the log names its own rounds' dealers (a table is never split over
parts); what the summary keeps of them is the rounds each dealer dealt, per table.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .scope import ROUND_IN_SCOPE

DEALER = "dealer_id"
ROUND_KEY = ["table_id", "shoe_id", "round"]
SHOE_KEY = ["table_id", "shoe_id"]
# what the summary keeps of a part: the rounds (in the audit's scope) each dealer dealt
DEALT = {DEALER: pl.String, "table_id": pl.String, "rounds": pl.Int64}


def _named() -> pl.Expr:
    """The dealer as the log names it; blank text names no one."""
    text = pl.col(DEALER).cast(pl.String)
    return pl.when(text.str.strip_chars() != "").then(text)


@dataclass
class Dealers:
    """The dealers a part's rows name."""

    rounds: pl.DataFrame  # (table_id, shoe_id, round, dealer_id, counted): the round_start's
    shoes: pl.DataFrame  # (table_id, shoe_id, dealer_id): the shuffle's

    def dealt(self) -> pl.DataFrame:
        """Rounds dealt per dealer and table: the rounds from 1 on that the audit counts
        (its own, not context), by the dealer their round_start names."""
        return (
            self.rounds.filter("counted")
            .group_by(DEALER, "table_id")
            .agg(pl.len().alias("rounds"))
            .sort(DEALER, "table_id")
            .cast(DEALT)
        )


def named(events: pl.DataFrame) -> Dealers | None:
    """The dealers `events` (sorted by table and seq) name; None where no row names one.
    Of two round_start (or shuffle) rows of a round (shoe) that name a dealer, the first
    in seq order counts."""
    if DEALER not in events.columns or events.get_column(DEALER).null_count() == events.height:
        return None
    rows = (
        events.filter(pl.col("event").is_in(["round_start", "shuffle"]))
        .select(
            *ROUND_KEY,
            pl.col("event").cast(pl.String),
            _named().alias(DEALER),
            (pl.col(ROUND_IN_SCOPE) if ROUND_IN_SCOPE in events.columns else pl.lit(True)).alias(
                "counted"
            ),
        )
        .filter(pl.col(DEALER).is_not_null())
    )
    starts = rows.filter(pl.col("event") == "round_start").unique(
        ROUND_KEY, keep="first", maintain_order=True
    )
    shuffles = rows.filter(pl.col("event") == "shuffle").unique(
        SHOE_KEY, keep="first", maintain_order=True
    )
    return Dealers(
        starts.select(
            *ROUND_KEY, DEALER, (pl.col("counted") & (pl.col("round") > 0)).alias("counted")
        ),
        shuffles.select(*SHOE_KEY, DEALER),
    )


def on_findings(found: pl.DataFrame, dealers: Dealers | None) -> pl.DataFrame:
    """`found` (findings, or located problems: table_id, shoe_id and round) with each
    one's dealer in `dealer_id`: its round's, or for a finding on a shoe (round empty or
    0) its shuffle's; null where the log names none."""
    if dealers is None or found.is_empty():
        return (
            found
            if DEALER in found.columns
            else found.with_columns(pl.lit(None, pl.String).alias(DEALER))
        )
    columns = [*found.columns, *([] if DEALER in found.columns else [DEALER])]
    shoe_level = pl.col("round").is_null() | (pl.col("round") == 0)
    return (
        found.drop(DEALER, strict=False)
        .join(dealers.rounds.drop("counted"), on=ROUND_KEY, how="left", maintain_order="left")
        .join(
            dealers.shoes.rename({DEALER: "_shoe_dealer"}),
            on=SHOE_KEY,
            how="left",
            maintain_order="left",
        )
        .with_columns(
            pl.when(shoe_level).then(pl.col("_shoe_dealer")).otherwise(pl.col(DEALER)).alias(DEALER)
        )
        .select(columns)
    )
