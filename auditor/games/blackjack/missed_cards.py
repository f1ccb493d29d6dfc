"""Cards the dealer failed to deal: hands declared dead and requested cards dealt late,
5324.10(i)(3) and (i)(4) (hand-history-v1, "Irregularities (1.2)").

Built once per audit (through `ctx.derived`). Both frames are small: a dead hand is a
`dead_hand` row, and a late card is found among the few requests whose next box row is
not their card, so an ordinary log costs one pass over its cards and actions. Void
rounds are left out (they are not judged on their play).

dead_hands(ctx)  one row per hand declared dead (rid, seat, hand; the first `dead_hand`
                 row of it): table_id, shoe_id, round, seq, held (cards the hand held
                 then, a split pair's moved card included), paragraph: "(i)(3)" where
                 it held fewer than two (no card was dealt to it, or the deal of its
                 first two missed one), else "(i)(4)(ii)" (after its first two cards the
                 player chose a dead hand when a requested card was not dealt).
live_hands(ctx)  the hands of `final_hands.hand_facts` still live when the dealer plays
                 (not busted, surrendered, a natural or dead): (g)(3)'s test, shared.
late_cards(ctx)  one row per card requested by a `hit` or `double` and dealt to the
                 hand only after a card or action of a later box (a higher seat): rid,
                 table_id, shoe_id, round, seat, hand, request_seq, request (the
                 action), seq (the card row), card, later_seq, later_seat, later_kind
                 ("card" or "action": the first row of a later box in between),
                 dealer_third_seq (the dealer's third card), settled_seq (the round's
                 first pay, collect or push of a main, double or split wager, but of a
                 surrendered or dead hand: those are settled during play and do not show
                 the hole card revealed), error (the card came after either of them:
                 (i)(4)(i) deals it before the dealer reveals the hole card). A box's
                 second card is no request, so a second card dealt after every other
                 box's ((i)(3)) is not here.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from . import decisions, final_hands, replay

HAND = ["rid", "seat", "hand"]
PLACE = ["table_id", "shoe_id", "round"]
REQUESTS = ("hit", "double")  # the actions that ask for a card
HAND_BETS = ("main", "double", "split")


# --- dead hands -------------------------------------------------------------------


def build_dead_hands(ctx: GameContext) -> pl.DataFrame:
    rows = replay.in_rounds(
        ctx, pl.col("event") == "dead_hand", *HAND, *PLACE, "seq"
    ).filter(pl.col("seat").is_not_null() & pl.col("hand").is_not_null())
    rows = replay.live(ctx, rows)
    if rows.is_empty():
        return rows.with_columns(
            pl.lit(None, pl.UInt32).alias("held"), pl.lit(None, pl.String).alias("paragraph")
        )
    # a hand declared dead twice is one dead hand, from its first row
    dead = rows.sort("seq").group_by(HAND, maintain_order=True).agg(pl.all().first())
    held = (
        decisions.holdings(ctx)
        .filter(pl.col("rid").is_in(dead["rid"].unique().implode()))
        .select(*HAND, "since", "until")
        .join(dead.select(*HAND, pl.col("seq").alias("at")), on=HAND)
        .filter(
            (pl.col("since") < pl.col("at"))
            & (pl.col("until").is_null() | (pl.col("until") >= pl.col("at")))
        )
        .group_by(HAND)
        .agg(pl.len().alias("held"))
    )
    dead = dead.join(held, on=HAND, how="left", maintain_order="left")
    held_n = pl.col("held").fill_null(0).cast(pl.UInt32)
    return dead.select(
        *HAND, *PLACE, "seq",
        held_n.alias("held"),
        # (i)(4) begins "after receiving the first two cards"
        pl.when(held_n < 2).then(pl.lit("(i)(3)")).otherwise(pl.lit("(i)(4)(ii)"))
        .alias("paragraph"),
    )


def dead_hands(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.dead_hands", build_dead_hands)


def dead_hand_ids(ctx: GameContext) -> pl.Series:
    """The hand ids (`replay.hand_id`) of the dead hands, for lookups with `is_in`."""
    return dead_hands(ctx).select(replay.hand_id(ctx))["hid"]


def is_dead(ctx: GameContext) -> pl.Expr:
    """Whether a hand (rid, seat, hand) was declared dead (a `dead_hand` row of its own):
    it plays no more. Most logs have none, and no lookup is made."""
    return replay.hand_in(ctx, dead_hands(ctx))


def live_hands(ctx: GameContext) -> pl.DataFrame:
    """The rows of `final_hands.hand_facts` of the player hands still live when the dealer
    plays: not busted, surrendered or a natural, nor declared dead ((i)(3), (i)(4)(ii)).
    The one test of (g)(3)'s "some outcome can still change" for every rule that asks it
    (BJ501, BJ502, BJ801), so that they cannot disagree on a round."""
    live = ~pl.col("busted") & ~pl.col("natural") & ~pl.col("surrendered")
    return final_hands.hand_facts(ctx).filter(live & ~is_dead(ctx))


# --- late cards -------------------------------------------------------------------


def _box_rows(ctx: GameContext) -> pl.DataFrame:
    """The cards to boxes and the actions of rounds, in the events' order (by table and
    seq: each round's rows in seq order): what a box does."""
    event = pl.col("event")
    to_box = ((event == "card") & (pl.col("target") == "seat")) | (event == "action")
    return replay.in_rounds(
        ctx, to_box, "rid", "seq", "seat", "hand", (event == "card").alias("is_card"), "action"
    )


def _unanswered_at_once(rows: pl.DataFrame) -> pl.DataFrame:
    """The requests (hit, double) whose next box row is not a card to the same hand:
    only these can have been answered late. An ordinary log answers every request with
    the next card it deals, so this is one pass over the rows and leaves next to none."""
    same_round = pl.col("rid").shift(-1) == pl.col("rid")
    answered = (
        same_round
        & pl.col("is_card").shift(-1)
        & (pl.col("seat").shift(-1) == pl.col("seat"))
        & (pl.col("hand").shift(-1) == pl.col("hand"))
    ).fill_null(False)
    request = pl.col("action").is_in(REQUESTS) & pl.col("seat").is_not_null()
    return rows.filter(request & pl.col("hand").is_not_null() & ~answered).select(
        *HAND, pl.col("seq").alias("request_seq"), pl.col("action").cast(pl.String).alias("request")
    )


def _answers(rows: pl.DataFrame, asked: pl.DataFrame) -> pl.DataFrame:
    """Per request of `asked`: the first card to its hand after it (`seq`), and the first
    row of a later box between the two (later_seq, later_seat, later_kind)."""
    rounds = rows.filter(pl.col("rid").is_in(asked["rid"].unique().implode()))
    cards = rounds.filter("is_card").select(*HAND, "seq")
    answered = (
        asked.join(cards, on=HAND)
        .filter(pl.col("seq") > pl.col("request_seq"))
        .group_by(*HAND, "request_seq", "request")
        .agg(pl.col("seq").min())
    )
    later = (
        answered.join(
            rounds.select(
                "rid", pl.col("seq").alias("later_seq"), pl.col("seat").alias("later_seat"),
                pl.when("is_card").then(pl.lit("card")).otherwise(pl.lit("action"))
                .alias("later_kind"),
            ),
            on="rid",
        )
        .filter(
            (pl.col("later_seq") > pl.col("request_seq"))
            & (pl.col("later_seq") < pl.col("seq"))
            & (pl.col("later_seat") > pl.col("seat"))
        )
        .sort("later_seq")
        .group_by(*HAND, "request_seq", maintain_order=True)
        .agg(pl.col("seq").first(), pl.col("later_seq", "later_seat", "later_kind").first())
    )
    return answered.join(later, on=[*HAND, "request_seq", "seq"], how="inner")


def _settled_seq(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """Per round of `rids`: the first pay, collect or push of a main, double or split
    wager of a hand neither surrendered nor dead (the settlement after the dealer's
    play)."""
    rows = replay.settlements(ctx).filter(
        pl.col("rid").is_in(rids.implode()) & pl.col("bet").cast(pl.String).is_in(HAND_BETS)
    )
    facts = final_hands.hand_facts(ctx).filter(pl.col("rid").is_in(rids.implode()))
    during_play = pl.concat([
        facts.filter("surrendered").select(HAND),
        dead_hands(ctx).select(HAND),
    ])
    rows = rows.join(during_play, on=HAND, how="anti")
    return rows.group_by("rid").agg(pl.col("seq").min().alias("settled_seq"))


def build_late_cards(ctx: GameContext) -> pl.DataFrame:
    rows = _box_rows(ctx)
    asked = replay.live(ctx, _unanswered_at_once(rows))
    late = _answers(rows, asked) if asked.height else asked.clear().with_columns(
        pl.lit(None, pl.Int64).alias("seq"), pl.lit(None, pl.Int64).alias("later_seq"),
        pl.lit(None, pl.Int64).alias("later_seat"), pl.lit(None, pl.String).alias("later_kind"),
    )
    rids = late["rid"].unique()
    third = replay.dealer(ctx).filter(pl.col("rid").is_in(rids.implode())).select(
        "rid", pl.col("dealer_seqs").list.get(2, null_on_oob=True).alias("dealer_third_seq")
    )
    places = replay.rounds(ctx).filter(pl.col("rid").is_in(rids.implode())).select("rid", *PLACE)
    cards = replay.cards(ctx).filter(pl.col("rid").is_in(rids.implode())).select(
        "rid", "seq", "card"
    )
    late = (
        late.join(third, on="rid", how="left")
        .join(_settled_seq(ctx, rids), on="rid", how="left")
        .join(places, on="rid", how="left")
        .join(cards, on=["rid", "seq"], how="left")
    )
    after = (pl.col("seq") > pl.col("dealer_third_seq")).fill_null(False) | (
        pl.col("seq") > pl.col("settled_seq")
    ).fill_null(False)
    return late.select(
        *HAND, *PLACE, "request_seq", "request", "seq", "card", "later_seq", "later_seat",
        "later_kind", "dealer_third_seq", "settled_seq", after.alias("error"),
    ).sort("rid", "seq")


def late_cards(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.late_cards", build_late_cards)
