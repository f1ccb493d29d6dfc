"""Dealer play (g)(2)-(3).

Every dealer card after the second is judged against the dealer's hand just before it,
and the dealer's last card against the hand it left. (g)(2) is subject to (g)(3), so
a round is first sorted by whether any outcome could still change:

* open: the dealer has no blackjack and some player hand is still live (not busted,
  not surrendered, not a natural, not declared dead: (i)(3), (i)(4)(ii)). The dealer
  must follow (g)(2): BJ501 reports each card drawn where (g)(2) says stand, and a
  stand where (g)(2) says draw.
* settled: every player hand is busted, surrendered, a natural or dead, or the dealer
  has blackjack. (g)(3) allows no draw at all: BJ502 reports the first card drawn, once a
  round, whatever the dealer's total (BJ501 does not judge these rounds).

Void rounds and rounds where the dealer has fewer than two cards are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import runs
from ...games.blackjack import engine, final_hands, missed_cards, replay
from ...ingest import cards as card_codes
from ..registry import Rule, register

GAME = "blackjack"
KEY = ["table_id", "shoe_id", "round"]


def _hand(total: pl.Expr, soft: pl.Expr) -> pl.Expr:
    """'soft 17', 'hard 16'."""
    return pl.format("{} {}", pl.when(soft).then(pl.lit("soft")).otherwise(pl.lit("hard")), total)


def _round_state(ctx: GameContext) -> pl.DataFrame:
    """Per round: whether an outcome can still change when the dealer plays (g)(3).

    The players' hands are as they ended (`final_hands.hand_facts`: a split pair's second card
    on the hand the split made). The dealer's blackjack is read from the first two cards
    only, so that a card drawn after it does not hide it."""
    # a round with a live hand: the rounds of the live hands, not a group-by of every hand
    live = missed_cards.live_hands(ctx)["rid"].unique()
    up, hole = pl.col("up"), pl.col("hole")
    ace, ten = engine.ACE, 10
    dealer_bj = ((up == ace) & (hole == ten)) | ((up == ten) & (hole == ace))
    return (
        replay.rounds(ctx)
        .filter(~pl.col("void") & (pl.col("dealer_n_cards") >= 2))
        .select(
            "rid",
            "dealer_hits_soft_17",
            "dealer_n_cards",
            dealer_bj.fill_null(False).alias("dealer_bj"),
            (pl.col("rid").is_in(live.implode()) & ~dealer_bj.fill_null(False)).alias("open"),
        )
    )


def _settled_hands(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """Per round of `rids`: how many of its player hands busted, surrendered, were a
    natural or were declared dead (the few rounds a message names)."""
    hands = final_hands.hand_facts(ctx).filter(pl.col("rid").is_in(rids.implode()))
    return hands.with_columns(missed_cards.is_dead(ctx).alias("dead")).group_by("rid").agg(
        pl.col("busted").sum().alias("n_busted"),
        pl.col("surrendered").sum().alias("n_surrendered"),
        pl.col("natural").sum().alias("n_natural"),
        pl.col("dead").sum().alias("n_dead"),
    )


def _hand_counts(dealt: pl.DataFrame) -> pl.DataFrame:
    """Per row of `dealt` (dealer cards sorted by rid, seq): n, and the dealer's hand
    after the card and before it (null for the first). Worked out on a narrow frame, one
    step at a time, so that each running sum is taken once and not per column using it."""
    value = pl.col("value").cast(pl.Int32).fill_null(0)
    narrow = dealt.select(
        "rid",
        runs.starts(["rid"]).alias("first"),
        runs.position(["rid"]).cast(pl.Int32).alias("n"),
        value.alias("v"),
        (value == engine.ACE).cast(pl.Int32).alias("a"),
    )
    first = pl.col("first")
    narrow = narrow.with_columns(
        runs.sum_before(pl.col("v"), ["rid"], first).alias("hard_before"),
        runs.sum_before(pl.col("a"), ["rid"], first).alias("aces_before"),
    )
    hard_before, before_has_ace = pl.col("hard_before"), pl.col("aces_before") > 0
    hard, has_ace = hard_before + pl.col("v"), (pl.col("aces_before") + pl.col("a")) > 0
    return narrow.select(
        "n",
        engine.total_from(hard, has_ace).alias("total"),
        engine.soft_from(hard, has_ace).alias("soft"),
        pl.when(~first).then(engine.total_from(hard_before, before_has_ace)).alias("before_total"),
        pl.when(~first).then(engine.soft_from(hard_before, before_has_ace)).alias("before_soft"),
    )


def build_dealer_cards(ctx: GameContext) -> pl.DataFrame:
    dealt = replay.dealer_rows(ctx)
    dealt = replay.in_order(ctx, dealt, "rid", "seq")
    return dealt.hstack(_hand_counts(dealt)).join(_round_state(ctx), on="rid", how="inner")


def dealer_cards(ctx: GameContext) -> pl.DataFrame:
    """One row per dealer card of a judged round, with the hand before and after it:
    n (1-based position), total/soft (after the card), before_total/before_soft."""
    return ctx.derived("blackjack.dealer_cards", build_dealer_cards)


def _select(frame: pl.DataFrame, message: pl.Expr, expected: pl.Expr, observed: pl.Expr):
    return frame.select(
        *KEY,
        "seq",
        message.alias("message"),
        expected.alias("expected"),
        observed.alias("observed"),
    )


# --- BJ501 (g)(2): draw to 17, hitting soft 17 only where the house says so


def _soft17_rule(h17: pl.Expr) -> pl.Expr:
    return pl.when(h17).then(pl.lit("hits soft 17")).otherwise(pl.lit("stands on soft 17"))


def dealer_draw_wrong(ctx: GameContext) -> pl.DataFrame:
    cards = dealer_cards(ctx).filter(pl.col("open"))
    h17 = pl.col("dealer_hits_soft_17")
    must_before = engine.dealer_must_draw(
        pl.col("before_total"), pl.col("before_soft"), ctx.params, h17
    )
    must_after = engine.dealer_must_draw(pl.col("total"), pl.col("soft"), ctx.params, h17)
    before, after = (
        _hand(pl.col("before_total"), pl.col("before_soft")),
        _hand(pl.col("total"), pl.col("soft")),
    )
    drew = _select(
        cards.filter((pl.col("n") >= 3) & ~must_before),
        pl.format(
            "In round {} the dealer drew {} (card {}) on {}; (g)(2) stands on 17 to 21 and this "
            "table {}.",
            "round",
            card_codes.shown(pl.col("card")),
            "n",
            before,
            _soft17_rule(h17),
        ),
        pl.format("stand on {}", before),
        pl.format("drew {} on {}", card_codes.shown(pl.col("card")), before),
    )
    stood = _select(
        cards.filter((pl.col("n") == pl.col("dealer_n_cards")) & must_after),
        pl.format(
            "In round {} the dealer stood on {} after {} cards; (g)(2) draws until 17 to 21 and "
            "this table {}.",
            "round",
            after,
            "n",
            _soft17_rule(h17),
        ),
        pl.format("draw on {}", after),
        pl.format("stood on {}", after),
    )
    return pl.concat([drew, stood])


DEALER_DRAW_WRONG = register(
    Rule(
        "BJ501",
        "dealer-draw-wrong",
        "Dealer drew or stood contrary to draw-to-17 and the house soft-17 rule",
        "9 NYCRR 5324.10(g)(2)",
        "error",
        GAME,
        "In a round where some player hand is still live (not busted, surrendered, a "
        "natural or declared dead) and the dealer has no blackjack, each dealer card after "
        "the second is judged against the dealer's total before it: drawing on 17 to 21 (a "
        "soft 17 only where the table's `dealer_hits_soft_17` is true) is reported at that "
        "card; standing below 17 (or on soft 17 where the house hits it) at the dealer's last "
        "card. Rounds where no "
        "outcome could change are BJ502's.",
        "dealer 10 6 stands with a player on 18; or dealer 10 7 draws; or dealer A 6 stands at "
        "a table that hits soft 17",
        "dealer 10 6 draws a 5 and stands on 21; dealer A 6 stands at a table that stands on "
        "soft 17",
        check=dealer_draw_wrong,
        needs=("cards", "decisions"),
        also=(
            "9 NYCRR 5324.10(a)(2)(iii)(b)", "9 NYCRR 5324.10(b)(2)(i)",
            "9 NYCRR 5324.10(b)(2)(ii)", "9 NYCRR 5324.10(b)(2)(iii)",
        ),
    )
)


# --- BJ502 (g)(3): no card that cannot change an outcome


def dealer_drew_needlessly(ctx: GameContext) -> pl.DataFrame:
    drawn = dealer_cards(ctx).filter(~pl.col("open") & (pl.col("n") == 3))
    drawn = drawn.join(_settled_hands(ctx, drawn["rid"]), on="rid", how="left")
    why = (
        pl.when(pl.col("dealer_bj"))
        .then(pl.lit("the dealer had blackjack"))
        .otherwise(
            pl.format(
                "every player hand was settled ({} busted, {} surrendered, {} natural{})",
                pl.col("n_busted").fill_null(0),
                pl.col("n_surrendered").fill_null(0),
                pl.col("n_natural").fill_null(0),
                pl.when(pl.col("n_dead") > 0)
                .then(pl.format(", {} dead", "n_dead"))
                .otherwise(pl.lit("")),
            )
        )
    )
    extra = pl.col("dealer_n_cards") - 2
    return _select(
        drawn,
        pl.format(
            "In round {} {}, yet the dealer drew {} card(s), the first {} on {}; under (g)(3) "
            "the dealer draws nothing when no outcome can change.",
            "round",
            why,
            extra,
            card_codes.shown(pl.col("card")),
            _hand(pl.col("before_total"), pl.col("before_soft")),
        ),
        pl.lit("no dealer card after the second"),
        pl.format("{} dealer card(s) drawn", extra),
    )


DEALER_DREW_NEEDLESSLY = register(
    Rule(
        "BJ502",
        "dealer-drew-needlessly",
        "Dealer drew when no outcome could change",
        "9 NYCRR 5324.10(g)(3)",
        "error",
        GAME,
        "In a round where every player hand is busted, surrendered, a natural (settled at "
        "the posted odds once the dealer has no blackjack) or declared dead, or the dealer "
        "has blackjack, no dealer card may follow the second: the first one is reported, "
        "once a round, whatever the dealer's total. (g)(2) is not judged in these rounds (BJ501).",
        "the only box holds a natural, the dealer shows 10 6 and draws a 5",
        "the only box holds a natural, the dealer shows 10 6 and stands",
        check=dealer_drew_needlessly,
        needs=("cards", "decisions"),
    )
)
