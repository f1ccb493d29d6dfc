"""A simulated day settled by net results (format 1.3 `settle_net`): what a table system
writes where it records each box's net and no single settlement.

`as_nets(events)` takes a simulator's events and settles each box (a round's seat) by one
`settle_net` in place of its collect, pay, push and vig rows: the net the patrons of the
box took home over its wagers, as the single settlements recorded it (a planted
settlement fault stays in the net), commission deducted, marked or not (so no vig_settle
is left to take a marked one later). A box whose wagers had
no settlement gets no net (their faults stay the single rules'). The nets stand just
before the round's round_end, in seat order, timed as it is; a round keeps the seqs it
had, in order, from its first row on (the rows it lost leave a gap after its round_end),
so rows before a round's first settlement keep their seqs.
"""

from __future__ import annotations

import polars as pl

SETTLED = ("collect", "pay", "push", "vig", "vig_settle")
ROUND = ["table_id", "shoe_id", "round"]
WAGER = [*ROUND, "seat", "hand", "bet", "player_id"]


def _cents(frame: pl.DataFrame) -> pl.Expr:
    return (pl.col("amount").cast(pl.Float64) * 100).round().cast(pl.Int64)


def _nets(events: pl.DataFrame) -> pl.DataFrame:
    """(table_id, shoe_id, round, seat, net_cents) of every box with a settlement row: per
    wager, pay less collect where there is either, else push less the stake; its vig
    taken off, marked or collected (the net deducts it: the vig_settle that would take a
    marked one later is dropped)."""
    money = events.filter(pl.col("round") > 0).select(
        *WAGER, pl.col("event").cast(pl.String), _cents(events).alias("cents"))
    event, cents = pl.col("event"), pl.col("cents")
    settled = money.filter(event.is_in(["collect", "pay", "push"]))
    staked = money.filter(event == "wager").group_by(WAGER).agg(cents.sum().alias("stake"))
    per_wager = settled.group_by(WAGER).agg(
        cents.filter(event == "pay").sum().alias("pay"),
        cents.filter(event == "collect").sum().alias("collect"),
        cents.filter(event == "push").sum().alias("push"),
        event.is_in(["pay", "collect"]).any().alias("moved"),
    ).join(staked, on=WAGER, how="left", nulls_equal=True).with_columns(
        pl.when("moved").then(pl.col("pay") - pl.col("collect"))
        .otherwise(pl.col("push") - pl.col("stake").fill_null(0)).alias("net"))
    commission = money.filter(event == "vig").group_by(
        *ROUND, "seat").agg((-cents.sum()).alias("net"))
    return pl.concat([per_wager.select(*ROUND, "seat", "net"), commission]).group_by(
        *ROUND, "seat").agg(pl.col("net").sum().alias("net_cents"))


def as_nets(events: pl.DataFrame) -> pl.DataFrame:
    """`events` (a simulator's, sorted by table and seq) with each box settled by its net
    (module docstring)."""
    nets = _nets(events)
    ends = events.filter(pl.col("event") == "round_end").select(
        *ROUND, "game", pl.col("seq").alias("_at"), "ts")
    net_rows = nets.join(ends, on=ROUND, how="inner").select(
        *ROUND, "game", "ts", "seat",
        (pl.col("net_cents").cast(pl.Decimal(12, 2)) / 100).cast(events.schema["amount"])
        .alias("amount"),
        pl.lit("settle_net").cast(events.schema["event"]).alias("event"),
        "_at", pl.lit(-1).alias("_before"),
    )
    kept = events.filter(~pl.col("event").cast(pl.String).is_in(SETTLED)).with_columns(
        pl.col("seq").alias("_at"), pl.lit(0).alias("_before"))
    merged = pl.concat([kept, net_rows], how="diagonal_relaxed").sort(
        "table_id", "_at", "_before", "seat", nulls_last=True, maintain_order=True)
    # each round's rows take its own seqs in order, from its first
    place = pl.int_range(pl.len()).over(ROUND)
    seqs = events.select(*ROUND, "seq").sort("table_id", "seq").with_columns(
        place.alias("_k"))
    merged = merged.with_columns(place.alias("_k")).drop("seq").join(
        seqs, on=[*ROUND, "_k"], how="left", maintain_order="left")
    return merged.select(events.columns)
