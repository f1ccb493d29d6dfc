"""Every recorded blackjack shoe: one row per (table_id, shoe_id), built once per audit.

A shoe runs from its `shuffle` to the next `shuffle` of the table (hand-history-v1).
The shoe-level rules of 9 NYCRR 5324.10 compare these columns with the deck
minimum and card counts of (b)(1) and the cover-card procedure of (j).

Columns of `shoes(ctx)` (sorted by table_id, shoe_no):
  shoe_no          1, 2, ... per table, by the shoe's first row
  first_seq last_seq  the shoe's first and last rows in ctx.events (for a shoe that
                   began before the log, its first row here is not its shuffle)
  auditable        its shuffle (a round-0 row) is in ctx.events: without it (the row
                   lost, or the shoe began before the log, hand-history-v1 1.1) the
                   decks are unknown, and the shoe is not judged on them
  shuffle_seq decks  the shuffle and the decks it declares
  cover_seq        the shoe's first cover_card row in ctx.events: in a shoe that began
                   before the log the cover card may have come out before it, unseen
  cover_round      the round in which that cover card came out: the row's `round`,
                   and round 1 for a cover card recorded before the first round
                   (round 0: it was reached before any card of round 1 was dealt)
  last_round       the highest round number of the shoe in ctx.events (0 with no round)
  next_shoe_seq    the first row of the table's next shoe, also where that shoe's opening
                   rows are set aside; null when the log ends first, so the shoe's end
                   is not recorded and it is not judged as ended

`round_shoes(ctx)`: one row per round id (`rid`, round 0 included) of ctx.events,
with `shoe`, the row number of its shoe in `shoes(ctx)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ...audit_context import GameContext
from .. import gaps, runs

# (b)(1)(ii): the optional wagers that need two decks; any other needs six, (b)(1)(iii)
TWO_DECK_WAGERS = frozenset({"twenty_point_bonus", "in_between"})


def deck_minimum(settings: Mapping[str, Any], params: Mapping[str, Any]) -> tuple[int, str]:
    """The fewest decks (b)(1) allows a table with these house settings, by how the
    game is dealt and the optional wagers offered, and the paragraph that sets it."""
    offered = set(settings.get("optional_wagers") or [])
    if settings.get("dealt_from", "shoe") == "hand":
        least, why = int(params["min_decks_hand_dealt"]), "(b)(1)(i) dealt from the hand"
    else:
        least, why = int(params["min_decks"]), "(b)(1) at least one standard deck"
    two = int(params["min_decks_twenty_point_or_in_between"])
    if offered & TWO_DECK_WAGERS and two > least:
        least, why = two, "(b)(1)(ii) the 20-point bonus or in-between wager is offered"
    six = int(params["min_decks_other_optional"])
    if offered - TWO_DECK_WAGERS and six > least:
        names = ", ".join(sorted(offered - TWO_DECK_WAGERS))
        least, why = six, f"(b)(1)(iii) an optional wager is offered ({names})"
    return least, why

SHOE_KEY = ["table_id", "shoe_id"]


def _round_ends(ctx: GameContext) -> pl.DataFrame | None:
    """Per round id: its shoe, round, first and last seq, read off the first and last row
    of its run of rows. That holds where each round is one run in seq order, as the
    events come (sorted by table and seq, rounds contiguous); None where they are not."""
    if not runs.rising_within(ctx.events, "rid", "seq"):
        return None
    rows = ctx.events.select("rid", *SHOE_KEY, "round", "seq")
    firsts = rows.filter(runs.starts(["rid"])).rename({"round": "last_round", "seq": "first_seq"})
    return firsts.with_columns(rows.filter(runs.ends(["rid"]))["seq"].alias("last_seq"))


def _per_round(ctx: GameContext) -> pl.LazyFrame:
    """Per round id (and shoe): its first and last seq and its round, in the order of the
    rounds' first rows. Grouping two strings over every event would hash them: the
    shoes are made from these few rows instead."""
    ends = _round_ends(ctx)
    if ends is not None:
        return ends.lazy()
    rows = ctx.events.lazy().select("rid", *SHOE_KEY, "round", "seq")
    return rows.group_by("rid", *SHOE_KEY, maintain_order=True).agg(
        pl.col("round").max().alias("last_round"),
        pl.col("seq").min().alias("first_seq"),
        pl.col("seq").max().alias("last_seq"),
    )


def _marks(ctx: GameContext) -> pl.LazyFrame:
    """Per shoe with a shuffle or cover-card row: the columns read from those rows (a
    group's rows stay in the events' order: "first" is first in it)."""
    event = pl.col("event")
    shuffle = (pl.col("round") == 0) & (event == "shuffle")
    cover = event == "cover_card"
    rows = (
        ctx.events.lazy()
        .filter(event.is_in(["shuffle", "cover_card"]))
        .select(*SHOE_KEY, "seq", "round", "event", "decks")
    )
    return rows.group_by(SHOE_KEY).agg(
        shuffle.any().alias("auditable"),
        pl.col("seq").filter(shuffle).min().alias("shuffle_seq"),
        pl.col("decks").filter(shuffle).first().alias("decks"),
        pl.col("seq").filter(cover).min().alias("cover_seq"),
        pl.col("round").filter(cover).first().alias("cover_round"),
    )


def _per_shoe(ctx: GameContext) -> pl.DataFrame:
    """One row per shoe in the order of its first row, with `rids`, its rounds."""
    spans = _per_round(ctx).group_by(SHOE_KEY, maintain_order=True).agg(
        pl.col("first_seq").min(),
        pl.col("last_seq").max(),
        pl.col("rid").alias("rids"),
        pl.col("last_round").max(),
    )
    shoes = spans.join(_marks(ctx), on=SHOE_KEY, how="left", nulls_equal=True,
                       maintain_order="left")
    return shoes.select(
        *SHOE_KEY, "first_seq", "last_seq", pl.col("auditable").fill_null(False),
        "shuffle_seq", "decks", "cover_seq", "cover_round", "last_round", "rids",
    ).collect(engine="in-memory")


def build_shoes_with_rounds(ctx: GameContext) -> pl.DataFrame:
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
        .lazy().pipe(lambda shoes: gaps.with_later_shuffle(ctx, shoes)).collect()
    )


def _shoes_with_rounds(ctx: GameContext) -> pl.DataFrame:
    """`shoes` with `rids`, each shoe's round ids: both frames are read from it."""
    return ctx.derived("blackjack.shoes_with_rounds", build_shoes_with_rounds)


def shoes(ctx: GameContext) -> pl.DataFrame:
    """The shoes (see the module docstring), shared by the shoe-level rules."""
    return ctx.derived("blackjack.shoes", lambda c: _shoes_with_rounds(c).drop("rids"))


def build_round_shoes(ctx: GameContext) -> pl.DataFrame:
    numbered = _shoes_with_rounds(ctx).select(pl.col("rids").alias("rid")).with_row_index("shoe")
    return numbered.explode("rid").select("rid", "shoe")


def round_shoes(ctx: GameContext) -> pl.DataFrame:
    """Each round id with the row number of its shoe in `shoes` (module docstring)."""
    return ctx.derived("blackjack.round_shoes", build_round_shoes)
