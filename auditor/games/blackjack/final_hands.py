"""Every blackjack hand as it ended, built on the replay's frames (.replay) and on the
holdings the decisions follow (.decisions): a split pair's second card counted on the
hand the split made.

Built once per audit (through `ctx.derived`), over all rounds of all tables at once.

hands(ctx)   one row per player hand (rid, seat, hand) of a round that is not void,
             as it stood at the end (a split pair's second card on the hand the
             split made): values, seqs (the hand's cards in order), n_cards, total (best,
             (b)(2)), soft, busted, natural (a two-card 21 on hand 1 of a box
             that never split), box_hands (hands on the box), first_seq, last_seq,
             actions, action_seqs (the hand's action rows in order)
hand_facts(ctx) the numbers of `hands` without its lists, for the rules: one row per
             player hand with cards (until the end) or actions: rid, seat, hand, n_cards,
             total, soft, busted, natural, box_hands, surrendered, surrender_seq (its
             first surrender action), doubled (it took a double action). A hand with
             actions only (or of a void round) has no cards: n_cards 0, total 0.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from .. import runs
from ..sorted_keys import marked_sorted, sorted_by
from . import engine
from .decisions import holdings
from .replay import (
    HAND,
    ROUND_COLUMNS,
    actions,
    by_rid,
    dealer,
    group_by_hand,
    hand_id,
    in_rounds,
    per_box,
    rounds,
    settlements,
    wagers,
)


def _place(ctx: GameContext) -> list[pl.Expr]:
    """table_id, shoe_id and round of each row's round, looked up by its rid."""
    return [by_rid(ctx, rounds(ctx), column).alias(column) for column in ROUND_COLUMNS[1:]]


def build_hands(ctx: GameContext) -> pl.DataFrame:
    # A pair's second card is recorded on the hand it was dealt to; a split makes it
    # the first card of the new hand. The hands hold what `decisions.holdings` says
    # each held at the end of the round.
    kept = holdings(ctx).filter(pl.col("until").is_null()).sort("rid", "seat", "hand", "since")
    acts = (
        in_rounds(ctx, pl.col("event") == "action", "rid", "seat", "hand", "seq", "action")
        .group_by("rid", "seat", "hand", maintain_order=True)
        .agg(pl.col("action").alias("actions"), pl.col("seq").alias("action_seqs"))
    )
    hands = (
        kept.group_by("rid", "seat", "hand", maintain_order=True)
        .agg(
            pl.col("value").alias("values"),
            pl.col("seq").alias("seqs"),
            pl.col("seq").min().alias("first_seq"),
            pl.col("seq").max().alias("last_seq"),
        )
        .select(*HAND, *_place(ctx), pl.exclude(HAND))
        .join(acts, on=["rid", "seat", "hand"], how="full", coalesce=True)
    )
    values = pl.col("values").fill_null(pl.lit([], pl.List(pl.Int8)))
    box_hands = pl.col("hand").max().over("rid", "seat")
    return hands.with_columns(
        values.alias("values"),
        values.list.len().alias("n_cards"),
        engine.total(values).alias("total"),
        engine.is_soft(values).alias("soft"),
        box_hands.alias("box_hands"),
        pl.col("actions").fill_null(pl.lit([], pl.List(pl.String))),
        pl.col("action_seqs").fill_null(pl.lit([], pl.List(pl.Int64))),
    ).with_columns(
        (pl.col("total") > engine.TWENTY_ONE).alias("busted"),
        engine.is_blackjack(pl.col("values"), from_split=pl.col("box_hands") > 1)
        .alias("natural"),
    )


def hands(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.hands", build_hands)


def _dealt_totals(ctx: GameContext) -> pl.DataFrame:
    """Per hand holding cards at the end (HAND, in hand order): n_cards, hard, has_ace."""
    value = pl.col("value")
    # lazy, so that only the columns kept are filtered
    kept = (
        holdings(ctx)
        .lazy()
        .filter(pl.col("until").is_null())
        .select(*HAND, "value")
        .collect(engine="in-memory")
    )
    if kept["rid"].null_count():  # rows without a round id come last, as group_by_hand has it
        return group_by_hand(
            ctx,
            kept,
            [],
            pl.len().alias("n_cards"),
            value.cast(pl.Int32).sum().alias("hard"),
            (value == engine.ACE).any().alias("has_ace"),
        )
    # holdings are sorted by hand: each hand's cards are one run of rows
    sums = {"hard": value.cast(pl.Int32), "aces": (value == engine.ACE).cast(pl.Int32)}
    return runs.totals(kept, HAND, sums).select(
        *HAND, pl.col("rows").alias("n_cards"), "hard", (pl.col("aces") > 0).alias("has_ace")
    )


def _acted(ctx: GameContext) -> pl.DataFrame:
    """Per hand with actions (HAND, in hand order): surrender_seq (its first surrender),
    doubled (it took a double). Where every action has a hand id, the hands are the runs
    of the actions sorted by it, and only the few surrender and double rows are looked
    at; else a group-by of every action."""
    action = pl.col("action")
    rows = actions(ctx).select(*HAND, "seq", "action").with_columns(hand_id(ctx))
    if rows.schema["hid"] != pl.Int64 or rows["hid"].null_count():
        return group_by_hand(
            ctx,
            rows.drop("hid"),
            [],
            pl.col("seq").filter(action == "surrender").min().alias("surrender_seq"),
            (action == "double").any().alias("doubled"),
        )
    rows = sorted_by(rows, "hid")
    surrenders = rows.filter(action == "surrender").group_by("hid").agg(
        pl.col("seq").min().alias("surrender_seq")
    )
    doubled = rows.filter(action == "double")["hid"].implode()
    hands = rows.filter(runs.starts(["hid"])).select("hid", *HAND)
    return (
        hands.join(surrenders, on="hid", how="left", maintain_order="left")
        .with_columns(pl.col("hid").is_in(doubled).alias("doubled"))
        .drop("hid")
    )


def _every_hand(ctx: GameContext, dealt: pl.DataFrame, acts: pl.DataFrame) -> pl.DataFrame:
    """Every hand with cards (`dealt`) or actions (`acts`), joined by the hand id `hid`
    (null ids match nothing): the rows of `dealt` in order, then the hands only acted on.
    Nearly every hand acted on holds cards: a left join on the sorted ids and the few
    others appended cost less than a full join."""
    hid = hand_id(ctx)
    dealt, acts = dealt.with_columns(hid), acts.with_columns(hid)
    if dealt.schema["hid"] != pl.Int64:
        hands = dealt.join(acts, on="hid", how="full", suffix="_acted")
        return hands.with_columns(pl.coalesce(c, f"{c}_acted") for c in HAND)
    dealt, acts = marked_sorted(dealt, "hid"), marked_sorted(acts, "hid")
    marked = acts.drop(HAND).with_columns(pl.lit(True).alias("_acted"))
    joined = dealt.join(marked, on="hid", how="left", maintain_order="left")
    if joined["_acted"].sum() == acts.height:  # every hand acted on holds cards
        return joined.drop("_acted")
    known = dealt["hid"].drop_nulls().implode()
    only_acted = acts.filter(pl.col("hid").is_null() | ~pl.col("hid").is_in(known))
    return pl.concat([joined.drop("_acted"), only_acted], how="diagonal")


def build_hand_facts(ctx: GameContext) -> pl.DataFrame:
    hands = _every_hand(ctx, _dealt_totals(ctx), _acted(ctx))
    hard, has_ace = pl.col("hard").fill_null(0), pl.col("has_ace").fill_null(False)
    return hands.select(
        *HAND,
        pl.col("n_cards").fill_null(0),
        engine.total_from(hard, has_ace).alias("total"),
        engine.soft_from(hard, has_ace).alias("soft"),
        per_box(ctx, hands, pl.col("hand").max()).alias("box_hands"),
        pl.col("surrender_seq").is_not_null().alias("surrendered"),
        "surrender_seq",
        pl.col("doubled").fill_null(False),
    ).with_columns(
        (pl.col("total") > engine.TWENTY_ONE).alias("busted"),
        # as `hands`: a two-card 21 on hand 1 of a box that never split
        (
            (pl.col("n_cards") == 2)
            & (pl.col("total") == engine.TWENTY_ONE)
            & (pl.col("box_hands") <= 1)
        ).alias("natural"),
    )


def hand_facts(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.hand_facts", build_hand_facts)


def build_ahead(ctx: GameContext) -> None:
    """Build the replay's frames that most rules read (actions, wagers, settlements, the
    dealer's play with the cards, rounds, the hands with their holdings) ahead of the
    rules: the audit builds them while the rules of the part before are checked
    (audit_part.BUILT_AHEAD), so that the two take about as long (docs/guides/large-logs.md)."""
    for frame in (actions, wagers, settlements, dealer, rounds, hand_facts):
        frame(ctx)
