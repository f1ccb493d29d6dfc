"""Player hands as they stood at each decision: splits replayed, cards held at each action.

A pair's second card is recorded (`card` row) with the hand it was dealt to, before
any split; the split makes it the first card of the new hand. So the cards of a hand
are not simply its `card` rows: these frames move each split card to the hand the
split made, from the split on (replay.hands does not; it counts the card on the hand
it was dealt to). Built once per audit through `ctx.derived`; void rounds are left out
(they are not judged on their play).

splits(ctx)     one row per split action: rid, table_id, shoe_id, round, seq, seat, hand
                (the hand split), split_no (1, 2, ... on the box), new_hand (split_no + 1:
                the conventions number a new hand one above the hands on the box so
                far), moved_seq (the card that went to the new hand: the latest card
                recorded to the split hand before the split; null when none is left)
holdings(ctx)   one row per card and hand that held it: rid, table_id, shoe_id, round,
                seat, hand, seq (the card row), card, value (ace 1), since (from when the
                hand held it: the card's seq, or the split's for a moved card), until (the
                split that took it away; null if kept), moved_in (the new hand's first card)
decisions(ctx)  one row per action row, with the hand as it stood just before it:
                rid, table_id, shoe_id, round, seq, seat, hand, action, cards, values,
                n_cards, total, soft (engine.running_totals over the cards then held),
                natural (a two-card 21 on hand 1 of a box not split so far),
                splits_before (splits on the box before it), doubled_before (doubles
                on this hand before it), aces_pair (two aces held), aces_splits_before
                (splits of two aces on the box before it), split_ace (the hand was made
                by splitting aces, before this action)
ace_hands(ctx)  one row per hand made by splitting aces: rid, seat, hand, aces_seq (the
                first aces split that made it)
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from . import engine, replay

HAND = ["rid", "seat", "hand"]
PLACE = ["rid", "table_id", "shoe_id", "round"]


def _live(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """Rows of rounds that are not void."""
    void = replay.rounds(ctx).filter(pl.col("void")).select("rid")
    return frame.join(void, on="rid", how="anti")


def _actions(ctx: GameContext) -> pl.DataFrame:
    acts = ctx.events.filter(
        (pl.col("round") > 0)
        & (pl.col("event") == "action")
        & pl.col("seat").is_not_null()
        & pl.col("hand").is_not_null()
    )
    return _live(ctx, acts.select(*PLACE, "seq", "seat", "hand", "action"))


def _seat_cards(ctx: GameContext) -> pl.DataFrame:
    dealt = replay.cards(ctx).filter(
        (pl.col("target") == "seat") & pl.col("seat").is_not_null() & pl.col("hand").is_not_null()
    )
    return _live(ctx, dealt.select(*PLACE, "seq", "seat", "hand", "card", "value"))


# --- splits -----------------------------------------------------------------------


def build_splits(ctx: GameContext) -> pl.DataFrame:
    splits = (
        _actions(ctx)
        .filter(pl.col("action") == "split")
        .sort("seq")
        .with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("rid", "seat").alias("split_no")
        )
        .with_columns((pl.col("split_no") + 1).alias("new_hand"))
    )
    recorded = _seat_cards(ctx).select(*HAND, pl.col("seq").alias("moved_seq")).sort("moved_seq")
    moved = splits.join_asof(
        recorded,
        left_on="seq",
        right_on="moved_seq",
        by=HAND,
        strategy="backward",
        check_sortedness=False,  # both sorted by seq above; by-groups cannot be checked
    )
    # a card moves once: a second split with no card dealt in between moves nothing
    first_claim = pl.col("seq") == pl.col("seq").min().over("rid", "moved_seq")
    return moved.with_columns(
        pl.when(first_claim).then(pl.col("moved_seq")).alias("moved_seq")
    ).drop("action")


def splits(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.splits", build_splits)


# --- which hand holds which card, and when -----------------------------------------


def build_holdings(ctx: GameContext) -> pl.DataFrame:
    moves = (
        splits(ctx)
        .filter(pl.col("moved_seq").is_not_null())
        .select(
            "rid", pl.col("moved_seq").alias("seq"), pl.col("seq").alias("split_seq"), "new_hand"
        )
    )
    dealt = _seat_cards(ctx).join(moves, on=["rid", "seq"], how="left")
    kept = dealt.select(
        *PLACE,
        "seat",
        "hand",
        "seq",
        "card",
        "value",
        pl.col("seq").alias("since"),
        pl.col("split_seq").alias("until"),
        pl.lit(False).alias("moved_in"),
    )
    moved_in = dealt.filter(pl.col("split_seq").is_not_null()).select(
        *PLACE,
        "seat",
        pl.col("new_hand").alias("hand"),
        "seq",
        "card",
        "value",
        pl.col("split_seq").alias("since"),
        pl.lit(None, pl.Int64).alias("until"),
        pl.lit(True).alias("moved_in"),
    )
    return pl.concat([kept, moved_in]).sort("rid", "seat", "hand", "seq")


def holdings(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.holdings", build_holdings)


# --- the hand at each decision -------------------------------------------------------


def _held_at_actions(ctx: GameContext) -> pl.DataFrame:
    """Per action (rid, seq): the cards its hand held just before it, and their total."""
    acts = _actions(ctx).select(*HAND, pl.col("seq").alias("at"))
    held = (
        acts.join(holdings(ctx).select(*HAND, "seq", "card", "value", "since", "until"), on=HAND)
        .filter(
            (pl.col("since") < pl.col("at"))
            & (pl.col("until").is_null() | (pl.col("until") >= pl.col("at")))
        )
        .sort("at", "seq")
    )
    # (g)(1) judges the total as it stood when the player decided: the total of the
    # cards the hand held just before the action
    return (
        held.group_by("rid", "at", maintain_order=True)
        .agg(pl.col("card").alias("cards"), pl.col("value").alias("values"))
        .with_columns(
            pl.col("values").list.len().alias("n_cards"),
            engine.total(pl.col("values")).alias("total"),
            engine.is_soft(pl.col("values")).alias("soft"),
        )
        .rename({"at": "seq"})
    )


def _box_count(flag: pl.Expr, over: list[str]) -> pl.Expr:
    """How many earlier rows of the group (in seq order) have `flag`."""
    flag = flag.cast(pl.Int64)
    return (flag.cum_sum() - flag).over(over, order_by="seq")


def build_decisions(ctx: GameContext) -> pl.DataFrame:
    acts = _actions(ctx).join(_held_at_actions(ctx), on=["rid", "seq"], how="left")
    action = pl.col("action")
    values = pl.col("values")
    acts = acts.with_columns(
        values.fill_null(pl.lit([], pl.List(pl.Int8))),
        pl.col("cards").fill_null(pl.lit([], pl.List(pl.String))),
        pl.col("n_cards").fill_null(0),
        pl.col("total").fill_null(0),
        pl.col("soft").fill_null(False),
    ).with_columns(
        (
            (pl.col("n_cards") == 2) & (values.list.eval(pl.element() == engine.ACE).list.all())
        ).alias("aces_pair"),
    )
    split = action == "split"
    acts = acts.with_columns(
        _box_count(split, ["rid", "seat"]).alias("splits_before"),
        _box_count(split & pl.col("aces_pair"), ["rid", "seat"]).alias("aces_splits_before"),
        _box_count(action == "double", HAND).alias("doubled_before"),
    )
    aces = _ace_hands_from(acts, splits(ctx))
    natural = (
        (pl.col("hand") == 1)
        & (pl.col("n_cards") == 2)
        & (pl.col("total") == engine.TWENTY_ONE)
        & (pl.col("splits_before") == 0)
    )
    return (
        acts.join(aces, on=HAND, how="left")
        .with_columns(
            natural.alias("natural"),
            (pl.col("seq") > pl.col("aces_seq")).fill_null(False).alias("split_ace"),
        )
        .drop("aces_seq")
        .sort("rid", "seq")
    )


def decisions(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.decisions", build_decisions)


def _ace_hands_from(acts: pl.DataFrame, split_rows: pl.DataFrame) -> pl.DataFrame:
    """Both hands of every split of two aces ((c)(3)(ii)), from the first such split."""
    aces = acts.filter((pl.col("action") == "split") & pl.col("aces_pair")).select(*HAND, "seq")
    new = aces.join(split_rows.select("rid", "seq", "new_hand"), on=["rid", "seq"]).select(
        "rid", "seat", pl.col("new_hand").alias("hand"), "seq"
    )
    return pl.concat([aces, new]).group_by(HAND).agg(pl.col("seq").min().alias("aces_seq"))


def ace_hands(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.ace_hands", lambda c: _ace_hands_from(decisions(c), splits(c)))
