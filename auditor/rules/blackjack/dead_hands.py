"""Dead hands and late cards (i)(3), (i)(4) (hand-history-v1, "Irregularities (1.2)").

A hand the dealer dealt no card to is declared dead and the player is included in the
next deal (i)(3); a player whose requested card was not dealt may have it dealt later
(i)(4)(i) or have the hand called dead and the original wager returned (i)(4)(ii). The
facts are `games/blackjack/missed_cards`: which paragraph a dead hand is under is read
from what it held when declared dead (fewer than its first two cards: (i)(3)).

BJ804 and BJ805 judge the money of a dead hand: each of its main, double and split
wagers (each patron's) is owed a push of its full amount, or under (i)(3) no settlement
at all (the wager placed again in the seat's next round); every collect and pay of one
is the breach, reported at that row. The settlement rules do not judge a dead hand on
its cards (BJ701-BJ705 leave it; BJ706 judges it settled once, by a push; a dead
hand's pushes beyond one are BJ706's), and it is no live hand for the dealer's play
(BJ501, BJ502). BJ808 judges the order alone: a requested card dealt after a card or
action of a later box, once the dealer drew a third card or the settlement began. Void
rounds are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import missed_cards, money, replay
from ...ingest import cards as card_codes
from ..registry import Rule, register

HAND = ["rid", "seat", "hand"]
KEY = ["rid", "seat", "hand", "bet", "player_id"]


# --- BJ804 (i)(3), BJ805 (i)(4)(ii): a dead hand's wagers are returned ------------------


def _dead_hand_taken(ctx: GameContext, paragraph: str) -> pl.DataFrame:
    dead = missed_cards.dead_hands(ctx).filter(pl.col("paragraph") == paragraph)
    rows = replay.settlements(ctx).filter(
        pl.col("rid").is_in(dead["rid"].unique().implode())
        & pl.col("event").cast(pl.String).is_in(["collect", "pay"])
        & pl.col("bet").cast(pl.String).is_in(money.HAND_BETS)
    )
    rows = rows.join(
        dead.select(*HAND, pl.col("seq").alias("dead_seq")), on=HAND, how="inner"
    ).with_columns(pl.col("bet").cast(pl.String))
    stakes = (
        money.owed(ctx)
        .filter(pl.col("rid").is_in(rows["rid"].unique().implode()))
        .select(*KEY, "staked_cents")
        .with_columns(pl.col("bet").cast(pl.String))
    )
    rows = rows.join(stakes, on=KEY, how="left", nulls_equal=True, maintain_order="left")
    collected = pl.col("event").cast(pl.String) == "collect"
    amount = pl.col("amount_cents")
    patron = (
        pl.when(pl.col("player_id").is_not_null())
        .then(pl.format(" of patron {}", "player_id"))
        .otherwise(pl.lit(""))
    )
    verb = pl.when(collected).then(pl.lit("collected")).otherwise(pl.lit("paid"))
    why = (
        "it was not dealt its first two cards; (i)(3) includes the player in the next "
        "deal, so the wager is returned in full (a push) or left to play in the seat's next "
        "round"
        if paragraph == "(i)(3)"
        else "the player chose a dead hand when a requested card was not dealt; "
        "(i)(4)(ii) returns the player's wager in full (a push)"
    )
    stake = pl.when(pl.col("staked_cents").is_not_null()).then(
        pl.format(" of {}", money.dollars(pl.col("staked_cents")))
    ).otherwise(pl.lit(""))
    return rows.select(
        *money.ROUND,
        "seq",
        pl.format(
            "Box {} hand {} was declared dead at seq {}, yet its {} wager{}{} was {} {} at "
            "seq {}; " + why + ".",
            "seat", "hand", "dead_seq", "bet", patron, stake, verb, money.dollars(amount),
            "seq",
        ).alias("message"),
        pl.when(pl.col("staked_cents").is_not_null())
        .then(pl.format("pushed {}", money.dollars(pl.col("staked_cents"))))
        .otherwise(pl.lit("the wager pushed in full"))
        .alias("expected"),
        pl.format("{} {}", verb, money.dollars(amount)).alias("observed"),
        # owed a push (nothing won or lost): a collect overcharged, a pay overpaid
        pl.when(collected).then(amount).otherwise(-amount).alias("amount_cents"),
    )


def dead_hand_settled_i3(ctx: GameContext) -> pl.DataFrame:
    return _dead_hand_taken(ctx, "(i)(3)")


def dead_hand_settled_i4(ctx: GameContext) -> pl.DataFrame:
    return _dead_hand_taken(ctx, "(i)(4)(ii)")


# --- BJ808 (i)(4)(i): a requested card dealt after the hole card is revealed -------------


def late_card_too_late(ctx: GameContext) -> pl.DataFrame:
    late = missed_cards.late_cards(ctx).filter("error")
    third_first = (pl.col("dealer_third_seq") < pl.col("seq")) & (
        pl.col("settled_seq").is_null() | (pl.col("dealer_third_seq") <= pl.col("settled_seq"))
    )
    when = (
        pl.when(third_first.fill_null(False))
        .then(pl.format("the dealer's third card at seq {}", "dealer_third_seq"))
        .otherwise(pl.format("the settlement began at seq {}", "settled_seq"))
    )
    return late.select(
        *money.ROUND,
        "seq",
        pl.format(
            "Box {} hand {} asked for a card ({} at seq {}), but it was dealt ({}) only at seq "
            "{}, after box {}'s {} at seq {} and after {}; (i)(4)(i) deals a card the dealer "
            "failed to deal after the other players' additional cards but before the dealer "
            "reveals the hole card.",
            "seat", "hand", "request", "request_seq", card_codes.shown(pl.col("card")), "seq",
            "later_seat",
            "later_kind", "later_seq", when,
        ).alias("message"),
        pl.lit("the requested card dealt before the dealer's hole card is revealed")
        .alias("expected"),
        pl.format("dealt after {}", when).alias("observed"),
    )


WHAT_DEAD = (
    " Each of the dead hand's main, double and split wagers (each patron's) is owed a push "
    "of its full amount; every collect or pay of one is reported at that row (amount: what "
    "the row moved, positive for a collect). Which paragraph a dead hand is under is read "
    "from what it held at its `dead_hand` row: fewer than two cards, (i)(3) (BJ804); two or "
    "more ((i)(4) begins after the first two cards), (i)(4)(ii) (BJ805). Insurance is "
    "settled by the dealer's hand as any other (BJ303, BJ304). A dead hand is not judged on "
    "its cards by BJ701-BJ705 nor is it a live hand for BJ501/BJ502, and a doubled hand "
    "called dead without its card is no finding of BJ203; a dead hand's wager never "
    "settled, or pushed twice, is BJ706's, but under (i)(3) (its first two cards not dealt, "
    "so the wager may stay for the next round) no settlement passes. Void rounds are not "
    "judged."
)

DEAD_NO_CARD = register(
    Rule(
        "BJ804",
        "dead-hand-no-card-wager-taken",
        "Wager of a hand dealt no card (dead) collected or paid",
        "9 NYCRR 5324.10(i)(3)",
        "error",
        "blackjack",
        "A hand the dealer dealt no card to is declared dead and the player is included in "
        "the next deal (i)(3): its wagers are returned (a push), or left unsettled and "
        "placed again as wagers in the seat's next round." + WHAT_DEAD,
        "Box 4 is passed over in the deal and declared dead; its $25 wager is collected.",
        "Box 4 is passed over in the deal and declared dead; its $25 wager is pushed (or "
        "not settled and wagered again in the next round).",
        check=dead_hand_settled_i3,
        # each collect or pay is read off its own amount: one row per wager shows it too
        needs=("irregularities", "wagers", "single_settlements"),
    )
)
DEAD_BY_CHOICE = register(
    Rule(
        "BJ805",
        "dead-hand-by-choice-wager-taken",
        "Wager of a hand called dead for a missed card collected or paid",
        "9 NYCRR 5324.10(i)(4)(ii)",
        "error",
        "blackjack",
        "Where the dealer failed to deal a card the player asked for and the player chose "
        "to have the hand called dead, the player's wager is returned and the cards "
        "discarded (i)(4)(ii): a push of each wager on the hand, whatever its cards." + WHAT_DEAD,
        "Box 2 holds 10-3 and hits; the card is not dealt and the hand is declared dead; "
        "its $25 wager is collected.",
        "Box 2 holds 10-3 and hits; the card is not dealt and the hand is declared dead; "
        "its $25 wager is pushed.",
        check=dead_hand_settled_i4,
        needs=("irregularities", "wagers", "single_settlements"),
    )
)
LATE_CARD = register(
    Rule(
        "BJ808",
        "requested-card-dealt-too-late",
        "Requested card dealt after the dealer's hole card was revealed",
        "9 NYCRR 5324.10(i)(4)(i)",
        "error",
        "blackjack",
        "A card a hand asked for (a `hit` or `double`) is late when it is dealt to the hand "
        "only after a card or action of a later box (a higher seat; the dealer is not a "
        "box). (i)(4)(i) lets the dealer deal it after the other players' additional cards "
        "but before revealing the hole card: a late card dealt after the dealer's third card "
        "or after the round's first pay, collect or push of a main, double or split wager "
        "(the settlement after the dealer's play: a surrendered or dead hand's, settled "
        "during play, does not count) is reported at the card; before that, no finding. A "
        "box's second card dealt after every other box's second card ((i)(3)) is no request "
        "and no finding. A late card to a split box is no finding of BJ205. Judged by the "
        "order of the rows alone. Void rounds are not judged.",
        "Box 1 doubles; its card is missed; box 2 stands; the dealer draws a third card, then "
        "box 1's card is dealt.",
        "Box 1 doubles; its card is missed; box 2 stands; box 1's card is dealt; then the "
        "dealer draws.",
        check=late_card_too_late,
        needs=("cards", "deal_order", "decisions"),
    )
)
