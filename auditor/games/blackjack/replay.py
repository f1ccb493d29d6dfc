"""Every recorded blackjack round, replayed into frames the rules share.

Built once per audit (through `ctx.derived`), over all rounds of all tables
at once. Keys: `rid` is the integer round id from ingest (one per table_id,
shoe_id, round); group and join on it rather than on the string columns.

cards(ctx)   one row per card dealt in a round (round >= 1), in dealing order:
             rid, table_id, shoe_id, round, seq, target, seat, hand, card, value
             (1-10, ace 1 (b)(2)), k (0-based position of the card in its round)
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
dealer(ctx)  one row per round with dealer cards: rid, dealer_values, dealer_seqs,
             up (the first card's value), hole (the second's), dealer_total,
             dealer_soft, dealer_blackjack, dealer_busted, dealer_n_cards
rounds(ctx)  one row per round: rid, table_id, shoe_id, round, start_seq,
             no_more_bets_seq, end_seq, void, cover_card, time, plus the dealer
             columns and the table's house settings (dealer_hits_soft_17,
             blackjack_pays, insurance_pays, surrender, payout_limit, decks, ...)
wagers(ctx)  the wager rows of rounds (rid, seat, hand, bet, player_id, amount_cents, seq)
settlements(ctx) the collect / pay / push rows, same columns plus `event`
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from . import engine

ROUND_COLUMNS = ["rid", "table_id", "shoe_id", "round"]
HAND = ["rid", "seat", "hand"]
MONEY_COLUMNS = ["rid", "table_id", "shoe_id", "round", "seq", "seat", "hand", "bet",
                 "player_id", "amount_cents"]


def in_rounds(ctx: GameContext, where: pl.Expr, *columns: str | pl.Expr) -> pl.DataFrame:
    """`columns` of the rows of rounds (round >= 1) that match `where`. Lazy, so that the
    event frame is filtered first and only the rows kept are gathered, column by column."""
    kept = ctx.events.lazy().filter((pl.col("round") > 0) & where)
    return kept.select(*columns).collect()


def build_cards(ctx: GameContext) -> pl.DataFrame:
    cards = in_rounds(
        ctx, pl.col("event") == "card", *ROUND_COLUMNS, "seq", "target", "seat", "hand", "card"
    )
    return cards.with_columns(
        engine.card_value(pl.col("card"), ctx.params).alias("value"),
        pl.int_range(pl.len()).over("rid").alias("k"),
    )


def cards(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.cards", build_cards)


def build_hands(ctx: GameContext) -> pl.DataFrame:
    # A pair's second card is recorded on the hand it was dealt to; a split makes it
    # the first card of the new hand. The hands hold what `decisions.holdings` says
    # each held at the end of the round (imported here: decisions builds on cards).
    from .decisions import holdings

    kept = holdings(ctx).filter(pl.col("until").is_null()).sort("rid", "seat", "hand", "since")
    acts = (
        in_rounds(ctx, pl.col("event") == "action", "rid", "seat", "hand", "seq", "action")
        .group_by("rid", "seat", "hand", maintain_order=True)
        .agg(pl.col("action").alias("actions"), pl.col("seq").alias("action_seqs"))
    )
    hands = (
        kept.group_by("rid", "seat", "hand", maintain_order=True)
        .agg(
            pl.col("table_id", "shoe_id", "round").first(),
            pl.col("value").alias("values"),
            pl.col("seq").alias("seqs"),
            pl.col("seq").min().alias("first_seq"),
            pl.col("seq").max().alias("last_seq"),
        )
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


def build_hand_facts(ctx: GameContext) -> pl.DataFrame:
    from .decisions import holdings  # see build_hands

    value, action = pl.col("value"), pl.col("action")
    dealt = (
        holdings(ctx)
        .filter(pl.col("until").is_null())
        .group_by(HAND)
        .agg(
            pl.len().alias("n_cards"),
            value.cast(pl.Int32).sum().alias("hard"),
            (value == engine.ACE).any().alias("has_ace"),
        )
    )
    acts = (
        in_rounds(ctx, pl.col("event") == "action", *HAND, "seq", "action")
        .group_by(HAND)
        .agg(
            pl.col("seq").filter(action == "surrender").min().alias("surrender_seq"),
            (action == "double").any().alias("doubled"),
        )
    )
    hands = dealt.join(acts, on=HAND, how="full", coalesce=True)
    hard, has_ace = pl.col("hard").fill_null(0), pl.col("has_ace").fill_null(False)
    return hands.select(
        *HAND,
        pl.col("n_cards").fill_null(0),
        engine.total_from(hard, has_ace).alias("total"),
        engine.soft_from(hard, has_ace).alias("soft"),
        pl.col("hand").max().over("rid", "seat").alias("box_hands"),
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


def build_dealer(ctx: GameContext) -> pl.DataFrame:
    dealt = cards(ctx).filter(pl.col("target") == "dealer")
    dealer = dealt.group_by("rid", maintain_order=True).agg(
        pl.col("value").alias("dealer_values"),
        pl.col("seq").alias("dealer_seqs"),
    )
    values = pl.col("dealer_values")
    return dealer.with_columns(
        values.list.get(0, null_on_oob=True).alias("up"),
        values.list.get(1, null_on_oob=True).alias("hole"),
        values.list.len().alias("dealer_n_cards"),
        engine.total(values).alias("dealer_total"),
        engine.is_soft(values).alias("dealer_soft"),
        engine.is_blackjack(values).alias("dealer_blackjack"),
    ).with_columns((pl.col("dealer_total") > engine.TWENTY_ONE).alias("dealer_busted"))


def dealer(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.dealer", build_dealer)


def _first_seq(event: str) -> pl.Expr:
    return pl.col("seq").filter(pl.col("event") == event).min()


def build_rounds(ctx: GameContext) -> pl.DataFrame:
    rows = in_rounds(ctx, pl.lit(True), *ROUND_COLUMNS, "seq", "event", "time")
    rounds = rows.group_by("rid", maintain_order=True).agg(
        pl.col("table_id", "shoe_id", "round").first(),
        _first_seq("round_start").alias("start_seq"),
        _first_seq("no_more_bets").alias("no_more_bets_seq"),
        _first_seq("round_end").alias("end_seq"),
        (pl.col("event") == "void").any().alias("void"),
        (pl.col("event") == "cover_card").any().alias("cover_card"),
        pl.col("time").min(),
    )
    return (
        rounds.join(dealer(ctx), on="rid", how="left")
        .join(ctx.tables, on="table_id", how="left")
    )


def rounds(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.rounds", build_rounds)


def build_wagers(ctx: GameContext) -> pl.DataFrame:
    return in_rounds(ctx, pl.col("event") == "wager", *MONEY_COLUMNS)


def wagers(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.wagers", build_wagers)


def build_settlements(ctx: GameContext) -> pl.DataFrame:
    settled = pl.col("event").is_in(["collect", "pay", "push"])
    return in_rounds(ctx, settled, *MONEY_COLUMNS, "event")


def settlements(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.settlements", build_settlements)
