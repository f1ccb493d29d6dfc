"""The irregularities of 9 NYCRR 5324.10(i) as hand-history-v1 1.2 records them: the facts
the (i) rules (rules/blackjack/irregularities.py) and the effects on the other rules read.

The 1.2 rows are rare (a `card_exposed` row of exposure "exposed", a `refuse` action, a
`hole_card_check`): each frame filters them first and looks only at the rounds they
touch. The one fact read on every round is the dealer's missed first card ((i)(2)),
shown by the order of the cards alone: it is found from each box's second card and the
dealer's first, one comparison per box, and only the few rounds where the dealer's
first card comes after some box's second card are looked at further. Void rounds are
left out of every frame (they are not judged on their play).

dealt_two(ctx, rids)  per round of `rids`: `dealt_seq`, the card by which every box
                 and the dealer held two cards (the latest second card of the dealer and
                 of the boxes that were dealt two); null where the dealer was dealt fewer
                 than two. Before it a card exposed is not judged ((i)(1): "after the
                 initial two cards have been dealt to each player and the dealer").
refusals(ctx)    one row per `refuse` action of a round not void (sorted by rid, seq):
                 rid, table_id, shoe_id, round, seq, seat, hand, dealt_seq
exposures(ctx)   one row per `card_exposed` row of exposure "exposed" in a round not void
                 (sorted by rid, seq): rid, table_id, shoe_id, round, seq, card, dealt_seq,
                 judged (after dealt_seq), next_seq, next_card, next_target, next_seat,
                 next_hand (the first `card` row after it in the round, the later rows of
                 cards exposed before it set aside), burn_seq (the first `burn` of the same
                 card after it in the round)
box_second_cards(ctx)  rid, seat and seq of each box's second card (its hand 1's second)
missed_dealer(ctx)  one row per round whose dealer's first card comes after some box's
                 second card ((i)(2)): rid, table_id, shoe_id, round, up_seq, hole_seq (the
                 dealer's first two cards), early_seat, early_seq (the first box's second
                 card dealt after the dealer's first: null where none), play_seq (the first
                 action or further card of a box: a box's third card or later)
hole_checks(ctx) one row per round not void with a `hole_card_check`: rid, table_id,
                 shoe_id, round, seq (the first check), up (the dealer's first card's
                 value, ace 1), up_card
takes_a_card(ctx)  whether an event row takes a card out of the shoe (hand-history-v1 1.2,
                 Recording), for the card counts: a `card` or `burn` row, or a
                 `card_exposed` row with no later row (the first `card` or `burn` row of
                 the same card on the table after it, in its round or the next, in its
                 shoe): one with a later row is counted there
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from .. import runs
from . import decisions, replay

PLACE = ["rid", "table_id", "shoe_id", "round"]
REFUSE = "refuse"
EXPOSED = "exposed"


def _of_rounds(frame: pl.DataFrame, rids: pl.Series) -> pl.DataFrame:
    return frame.filter(pl.col("rid").is_in(rids.unique().implode()))


# --- when every box and the dealer held two cards -----------------------------------


def dealt_two(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """rid and `dealt_seq` of each round of `rids` (a few: those with 1.2 rows)."""
    cards = _of_rounds(replay.cards(ctx), rids).sort("rid", "seq")
    # the dealer counted as box 0: each holder's second card
    holder = pl.when(pl.col("target") == "dealer").then(0).otherwise(pl.col("seat"))
    seconds = cards.with_columns(holder.alias("holder")).filter(
        pl.int_range(1, pl.len() + 1).over("rid", "holder") == 2
    )
    return seconds.group_by("rid").agg(
        pl.when((pl.col("holder") == 0).any()).then(pl.col("seq").max()).alias("dealt_seq")
    )


def _with_dealt(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    return frame.join(dealt_two(ctx, frame["rid"]), on="rid", how="left")


# --- refusals --------------------------------------------------------------------------


def build_refusals(ctx: GameContext) -> pl.DataFrame:
    refused = replay.actions(ctx).filter(
        (pl.col("action") == REFUSE) & pl.col("seat").is_not_null() & pl.col("hand").is_not_null()
    )
    refused = replay.live(ctx, refused.select(*PLACE, "seq", "seat", "hand"))
    return _with_dealt(ctx, refused).sort("rid", "seq")


def refusals(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.refusals", build_refusals)


def box_refusals(ctx: GameContext) -> pl.DataFrame:
    """The first refuse of each box (rid, seat, refuse_seq), on any of its hands."""
    return refusals(ctx).group_by("rid", "seat").agg(pl.col("seq").min().alias("refuse_seq"))


# --- cards exposed ---------------------------------------------------------------------


def _next_cards(ctx: GameContext, exposed: pl.DataFrame) -> pl.DataFrame:
    """Per exposed row (rid, seq): the first card row after it in its round, the card rows
    that are the later rows of cards exposed before it set aside (each is dealt in its
    turn, as the next card drawn)."""
    cards = _of_rounds(replay.cards(ctx), exposed["rid"]).select(
        "rid", pl.col("seq").alias("card_seq"), "card", "target", "seat", "hand"
    )
    after = exposed.select("rid", "seq", pl.col("card").alias("exposed_card")).join(
        cards, on="rid"
    ).filter(pl.col("card_seq") > pl.col("seq"))
    # the later row of each exposed card: its first card row after it
    later = (
        after.filter(pl.col("card") == pl.col("exposed_card"))
        .group_by("rid", "seq")
        .agg(pl.col("card_seq").min().alias("later_seq"))
    )
    taken = after.join(later.rename({"seq": "earlier"}), on="rid").filter(
        (pl.col("earlier") < pl.col("seq")) & (pl.col("later_seq") == pl.col("card_seq"))
    )
    free = after.join(taken.select("rid", "seq", "card_seq"), on=["rid", "seq", "card_seq"],
                      how="anti")
    return (
        free.sort("card_seq")
        .group_by("rid", "seq")
        .agg(
            pl.col("card_seq").first().alias("next_seq"),
            pl.col("card").first().alias("next_card"),
            pl.col("target").first().cast(pl.String).alias("next_target"),
            pl.col("seat").first().alias("next_seat"),
            pl.col("hand").first().alias("next_hand"),
        )
    )


def _burns(ctx: GameContext, exposed: pl.DataFrame) -> pl.DataFrame:
    """Per exposed row (rid, seq): `burn_seq`, the first burn of its card after it in its
    round."""
    burned = replay.in_rounds(
        ctx,
        (pl.col("event") == "burn") & pl.col("rid").is_in(exposed["rid"].unique().implode()),
        "rid",
        pl.col("seq").alias("burn_seq"),
        "card",
    )
    return (
        exposed.select("rid", "seq", "card")
        .join(burned, on=["rid", "card"])
        .filter(pl.col("burn_seq") > pl.col("seq"))
        .group_by("rid", "seq")
        .agg(pl.col("burn_seq").min())
    )


def build_exposures(ctx: GameContext) -> pl.DataFrame:
    where = (pl.col("event") == "card_exposed") & (pl.col("exposure") == EXPOSED)
    exposed = replay.in_rounds(ctx, where, *PLACE, "seq", pl.col("card").cast(pl.String))
    exposed = _with_dealt(ctx, replay.live(ctx, exposed))
    keys = ["rid", "seq"]
    return (
        exposed.join(_next_cards(ctx, exposed), on=keys, how="left")
        .join(_burns(ctx, exposed), on=keys, how="left")
        .with_columns((pl.col("seq") > pl.col("dealt_seq")).fill_null(False).alias("judged"))
        .sort(keys)
    )


def exposures(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.exposures", build_exposures)


# --- the dealer's missed first card ---------------------------------------------------


def build_box_second_cards(ctx: GameContext) -> pl.DataFrame:
    # holdings come sorted by rid, seat, hand, seq: each box's hand 1 is a run of rows
    hand_one = (
        decisions.holdings(ctx)
        .lazy()
        .filter((pl.col("hand") == 1) & ~pl.col("moved_in"))
        .select("rid", "seat", "seq")
        .collect(engine="in-memory")
    )
    return hand_one.filter(runs.position(["rid", "seat"]) == 2)


def box_second_cards(ctx: GameContext) -> pl.DataFrame:
    """rid, seat and seq of each box's second card (rounds not void): the second card
    recorded to hand 1 of the box (before any split every card of a box is hand 1's)."""
    return ctx.derived("blackjack.box_second_cards", build_box_second_cards)


def _missed_rounds(ctx: GameContext) -> pl.Series:
    """The rounds whose dealer's first card comes after some box's second card: one
    comparison per box, with the dealer's first card looked up by round id."""
    seconds = box_second_cards(ctx)
    firsts = replay.dealer(ctx).select(
        "rid", pl.col("dealer_seqs").list.get(0, null_on_oob=True).alias("up_seq")
    )
    early = seconds.filter(pl.col("seq") < replay.by_rid(ctx, firsts, "up_seq"))
    return early["rid"].unique()


def build_missed_dealer(ctx: GameContext) -> pl.DataFrame:
    rids = _missed_rounds(ctx)
    dealer = _of_rounds(replay.dealer(ctx), rids).select(
        "rid",
        pl.col("dealer_seqs").list.get(0, null_on_oob=True).alias("up_seq"),
        pl.col("dealer_seqs").list.get(1, null_on_oob=True).alias("hole_seq"),
    )
    seconds = _of_rounds(box_second_cards(ctx), rids)
    early = (
        seconds.join(dealer, on="rid")
        .filter(pl.col("seq") > pl.col("up_seq"))
        .sort("seq")
        .group_by("rid")
        .agg(pl.col("seat").first().alias("early_seat"), pl.col("seq").first().alias("early_seq"))
    )
    # a box's third card or later (its first two are the initial deal), or any action
    box_cards = (
        _of_rounds(replay.cards(ctx), rids)
        .filter(pl.col("target") == "seat")
        .sort("rid", "seq")
        .filter(pl.int_range(1, pl.len() + 1).over("rid", "seat") > 2)
        .select("rid", "seq")
    )
    acts = _of_rounds(replay.actions(ctx), rids).select("rid", "seq")
    play = pl.concat([box_cards, acts]).group_by("rid").agg(pl.col("seq").min().alias("play_seq"))
    places = _of_rounds(replay.rounds(ctx), rids).select(*PLACE)
    return (
        places.join(dealer, on="rid", how="left")
        .join(early, on="rid", how="left")
        .join(play, on="rid", how="left")
        .sort("rid")
    )


def missed_dealer(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.missed_dealer", build_missed_dealer)


# --- the hole card checked -------------------------------------------------------------


def build_hole_checks(ctx: GameContext) -> pl.DataFrame:
    checks = replay.in_rounds(ctx, pl.col("event") == "hole_card_check", *PLACE, "seq")
    checks = replay.live(ctx, checks).group_by(PLACE).agg(pl.col("seq").min())
    up_cards = (
        _of_rounds(replay.dealer_rows(ctx), checks["rid"])
        .sort("seq")
        .group_by("rid")
        .agg(pl.col("value").first().alias("up"), pl.col("card").first().alias("up_card"))
    )
    return checks.join(up_cards, on="rid", how="left").sort("rid")


def hole_checks(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.hole_checks", build_hole_checks)


# --- the cards out of the shoe -----------------------------------------------------------


def build_exposed_alone(ctx: GameContext) -> pl.DataFrame:
    """table_id and seq of each `card_exposed` row with no later row (`takes_a_card`)."""
    exposed = (
        ctx.events.lazy()
        .filter((pl.col("event") == "card_exposed") & pl.col("card").is_not_null())
        .select(pl.col("table_id").cast(pl.String), pl.col("shoe_id").cast(pl.String), "round",
                "seq", pl.col("card").cast(pl.String))
        .collect(engine="in-memory")
    )
    if exposed.is_empty():
        return exposed.select("table_id", "seq")
    later = (
        ctx.events.lazy()
        .filter(
            pl.col("event").is_in(["card", "burn"])
            & pl.col("table_id").is_in(exposed["table_id"].unique().implode())
            & pl.col("card").is_in(exposed["card"].unique().implode())
        )
        .select(pl.col("table_id").cast(pl.String), pl.col("card").cast(pl.String),
                pl.col("shoe_id").cast(pl.String).alias("later_shoe"),
                pl.col("round").alias("later_round"), pl.col("seq").alias("later_seq"))
        .collect(engine="in-memory")
        .sort("later_seq")
    )
    found = exposed.sort("seq").join_asof(
        later, left_on="seq", right_on="later_seq", by=["table_id", "card"],
        strategy="forward", allow_exact_matches=False, check_sortedness=False,
    )
    used = (
        pl.col("later_seq").is_not_null()
        & (pl.col("later_shoe") == pl.col("shoe_id"))
        & (pl.col("later_round") <= pl.col("round") + 1)
    )
    return found.filter(~used.fill_null(False)).select("table_id", "seq")


def takes_a_card(ctx: GameContext) -> pl.Expr:
    """Whether an event row takes a card out of the shoe (module docstring)."""
    event = pl.col("event")
    counted = event.is_in(["card", "burn"])
    alone = ctx.derived("blackjack.exposed_alone", build_exposed_alone)
    if alone.is_empty():
        return counted
    keys = alone.select(pl.struct("table_id", "seq")).to_series().implode()
    table = pl.col("table_id").cast(pl.String)
    return counted | ((event == "card_exposed") & pl.struct(table, "seq").is_in(keys))
