"""Irregularities (i)(1), (i)(2), (i)(5), and insurance after the hole card check (e)(2).

Read from the rows of hand-history-v1 1.2 ("Irregularities"): a card exposed in error
is a `card_exposed` row of exposure "exposed", then its later row (the `card` row where
it was dealt, or the `burn` of it); a patron refusing it is an `action` `refuse`; a
`hole_card_check` records the hole card inserted into a card reader or otherwise
checked. The facts are games/blackjack/irregularities.py's. Only what the log proves is
reported, and nothing else is judged from these rows:

* BJ801 (i)(1): the first card after an exposed card is another card, unless the
  exposed card's burn comes first; or its burn while a hand still taking cards (a card
  dealt to it later) had not refused it (a refuse on any hand of the box counts: the
  patron refused), or while (g)(2) and (g)(3) had the dealer draw (a live hand as
  BJ501 and BJ502 count it: `missed_cards.live_hands`). An exposed card
  before every box and the dealer held two cards is not judged. One finding per card.
* BJ802 (i)(1): a card dealt to a seat and hand after its `refuse` (the box's other
  split hands may receive cards). Once a hand, at the first such card.
* BJ803 (i)(2): in a round whose dealer's first card comes after some box's second card
  (the dealer missed a card), the dealer's two cards dealt before another box's second
  card, or the second one after an action or a box's further card. The missed deal
  itself is no finding: the dealer's first card recorded is the up card for the other
  rules.
* BJ806 (i)(5): a hole card check with the dealer's first card not an ace or a
  ten-value card: a warning (play may go on only where the reader hides the value,
  which the log cannot show).
* BJ807 (e)(2): an insurance wager placed after a hole card check. A surrender before
  the check is no finding.

Void rounds are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import engine, missed_cards, money, replay
from ...games.blackjack import irregularities as irr
from ...ingest import cards as card_codes
from ..registry import Rule, register

GAME = "blackjack"
WHERE = ["table_id", "shoe_id", "round"]
ACE, TEN = engine.ACE, 10


def _findings(frame: pl.DataFrame, seq: str | pl.Expr, message: pl.Expr, expected: pl.Expr,
              observed: pl.Expr) -> pl.DataFrame:
    seq = pl.col(seq) if isinstance(seq, str) else seq
    return frame.select(
        *WHERE,
        seq.alias("seq"),
        message.alias("message"),
        expected.alias("expected"),
        observed.alias("observed"),
    )


def _receiver(target: str, seat: str, hand: str) -> pl.Expr:
    """"the dealer", "box 2 hand 1"."""
    return (
        pl.when(pl.col(target) == "dealer")
        .then(pl.lit("the dealer"))
        .otherwise(pl.format("box {} hand {}", seat, hand))
    )


# --- BJ801 (i)(1): an exposed card dealt as the next card, or burned only when no one
# can use it


def _not_next(exposed: pl.DataFrame) -> pl.DataFrame:
    """Exposed cards followed by another card before the exposed card's burn."""
    burned_first = pl.col("burn_seq").is_not_null() & (pl.col("burn_seq") < pl.col("next_seq"))
    wrong = exposed.filter(
        pl.col("next_seq").is_not_null() & (pl.col("next_card") != pl.col("card")) & ~burned_first
    )
    return _findings(
        wrong,
        "next_seq",
        pl.format(
            "Card {} was drawn and exposed in error at seq {}, but the next card dealt was {} "
            "to {} at seq {}; (i)(1) deals an exposed card to the players or the dealer as "
            "though it were the next card drawn from the shoe.",
            card_codes.shown(pl.col("card")), "seq", card_codes.shown(pl.col("next_card")),
            _receiver("next_target", "next_seat", "next_hand"), "next_seq",
        ),
        pl.format("{} dealt as the next card", card_codes.shown(pl.col("card"))),
        pl.format("{} dealt first", card_codes.shown(pl.col("next_card"))),
    )


def _burned(exposed: pl.DataFrame) -> pl.DataFrame:
    """Exposed cards burned before any other card was dealt."""
    first = pl.col("next_seq").is_null() | (pl.col("burn_seq") < pl.col("next_seq"))
    return exposed.filter(pl.col("burn_seq").is_not_null() & first)


def _takers(ctx: GameContext, burned: pl.DataFrame) -> pl.DataFrame:
    """Per burned exposed card (rid, seq): the first card dealt after the burn to a box
    that had not refused before it (`taker_seat`, `taker_hand`, `taker_seq`)."""
    cards = replay.cards(ctx).filter(
        (pl.col("target") == "seat") & pl.col("rid").is_in(burned["rid"].implode())
    ).select("rid", "seat", "hand", pl.col("seq").alias("taker_seq"))
    refused = irr.box_refusals(ctx)
    after = (
        burned.select("rid", "seq", "burn_seq")
        .join(cards, on="rid")
        .filter(pl.col("taker_seq") > pl.col("burn_seq"))
        .join(refused, on=["rid", "seat"], how="left")
        .filter(pl.col("refuse_seq").is_null() | (pl.col("refuse_seq") > pl.col("burn_seq")))
    )
    return (
        after.sort("taker_seq")
        .group_by("rid", "seq")
        .agg(
            pl.col("seat").first().alias("taker_seat"),
            pl.col("hand").first().alias("taker_hand"),
            pl.col("taker_seq").first(),
        )
    )


def _dealer_needs(ctx: GameContext, burned: pl.DataFrame) -> pl.DataFrame:
    """Per burned exposed card (rid, seq): the dealer's hand at the burn (`total`, `soft`)
    where (g)(2) had the dealer draw on it and (g)(3) did not forbid it (some player hand
    live, as `missed_cards.live_hands` has it, and no dealer blackjack)."""
    rids = burned["rid"].implode()
    held = (
        replay.dealer_rows(ctx)
        .filter(pl.col("rid").is_in(rids))
        .select("rid", pl.col("seq").alias("dealt_at"), "value")
        .join(burned.select("rid", "seq", "burn_seq"), on="rid")
        .filter(pl.col("dealt_at") < pl.col("burn_seq"))
    )
    value = pl.col("value").cast(pl.Int32)
    hands = held.group_by("rid", "seq").agg(
        pl.len().alias("n"), value.sum().alias("hard"), (value == ACE).any().alias("ace")
    )
    # (g)(3): the live hands as BJ501 and BJ502 count them, dead hands left out
    open_rounds = missed_cards.live_hands(ctx).filter(pl.col("rid").is_in(rids))["rid"]
    up, hole = pl.col("up"), pl.col("hole")
    dealer_bj = ((up == ACE) & (hole == TEN)) | ((up == TEN) & (hole == ACE))
    rounds = replay.rounds(ctx).filter(pl.col("rid").is_in(rids)).select(
        "rid", "dealer_hits_soft_17", dealer_bj.fill_null(False).alias("dealer_bj")
    )
    total = engine.total_from(pl.col("hard"), pl.col("ace"))
    soft = engine.soft_from(pl.col("hard"), pl.col("ace"))
    must = engine.dealer_must_draw(total, soft, ctx.params, pl.col("dealer_hits_soft_17"))
    return (
        hands.join(rounds, on="rid", how="left")
        .filter(
            (pl.col("n") >= 2)
            & must
            & ~pl.col("dealer_bj")
            & pl.col("rid").is_in(open_rounds.implode())
        )
        .select("rid", "seq", total.alias("total"), soft.alias("soft"))
    )


def _burned_wrongly(ctx: GameContext, exposed: pl.DataFrame) -> pl.DataFrame:
    burned = _burned(exposed)
    if burned.is_empty():
        return _findings(burned, "burn_seq", pl.lit(""), pl.lit(""), pl.lit(""))
    keys = ["rid", "seq"]
    judged = (
        burned.join(_takers(ctx, burned), on=keys, how="left")
        .join(_dealer_needs(ctx, burned), on=keys, how="left")
        .filter(pl.col("taker_seq").is_not_null() | pl.col("total").is_not_null())
    )
    hand = pl.format("{} {}", pl.when("soft").then(pl.lit("soft")).otherwise(pl.lit("hard")),
                     "total")
    player = pl.col("taker_seq").is_not_null()
    why = (
        pl.when(player)
        .then(
            pl.format(
                "box {} hand {}, which had not refused it, still took cards (a card at seq {})",
                "taker_seat", "taker_hand", "taker_seq",
            )
        )
        .otherwise(pl.format("the dealer, on {}, had to draw ((g)(2), (g)(3))", hand))
    )
    return _findings(
        judged,
        "burn_seq",
        pl.format(
            "Card {} was drawn and exposed in error at seq {} and burned at seq {} while {}; "
            "(i)(1) burns an exposed card only when every player refuses it and the dealer "
            "cannot use it.",
            card_codes.shown(pl.col("card")), "seq", "burn_seq", why,
        ),
        pl.lit("the exposed card dealt as the next card, or burned when no one can use it"),
        pl.when(player)
        .then(pl.format("burned while box {} took cards", "taker_seat"))
        .otherwise(pl.format("burned while the dealer had to draw on {}", hand)),
    )


def exposed_card_misused(ctx: GameContext) -> pl.DataFrame:
    exposed = irr.exposures(ctx).filter(pl.col("judged"))
    return pl.concat([_not_next(exposed), _burned_wrongly(ctx, exposed)])


EXPOSED_CARD = register(
    Rule(
        "BJ801",
        "exposed-card-not-dealt-next",
        "Exposed card not dealt as the next card, or burned while it could be used",
        "9 NYCRR 5324.10(i)(1)",
        "error",
        GAME,
        "A card drawn and exposed in error (`card_exposed`, exposure \"exposed\") after every "
        "box and the dealer held two cards is dealt as the next card: the first `card` row "
        "after it must be that card, unless its `burn` comes first. The burn is reported where "
        "a hand still taking cards (dealt a card after the burn) had not refused it (a "
        "`refuse` on any hand of the box counts), or where the dealer's hand at the burn "
        "had to draw under (g)(2) and (g)(3) (some player hand still live, as BJ501 has it: "
        "not busted, surrendered, a natural or declared dead). One finding per exposed card, "
        "at the other card "
        "or at the burn. An exposed card before the initial two cards is not judged.",
        "box 2 hits, KH is exposed in error, burned, and box 2 is dealt 5C",
        "box 2 hits, KH is exposed in error and dealt to box 2 as its card",
        check=exposed_card_misused,
        # which row is the exposed card's (the next card, its burn) needs its rank and
        # suit: an `8*` may be another eight (format 1.3)
        needs=("irregularities", "cards", "deal_order", "decisions", "suits", "ranks"),
    )
)


# --- BJ802 (i)(1): no card after a refuse


def card_after_refuse(ctx: GameContext) -> pl.DataFrame:
    refused = irr.refusals(ctx)
    refused = refused.filter((pl.col("seq") > pl.col("dealt_seq")).fill_null(False))
    hand = ["rid", "seat", "hand"]
    refused = refused.group_by(*hand, *WHERE).agg(pl.col("seq").min().alias("refuse_seq"))
    cards = replay.cards(ctx).filter(
        (pl.col("target") == "seat") & pl.col("rid").is_in(refused["rid"].implode())
    ).select(*hand, "seq", "card")
    dealt = (
        refused.join(cards, on=hand)
        .filter(pl.col("seq") > pl.col("refuse_seq"))
        .sort("seq")
        .group_by(hand)
        .agg(pl.all().first())
    )
    return _findings(
        dealt,
        "seq",
        pl.format(
            "Box {} hand {} refused the exposed card at seq {}, yet was dealt {} at seq {}; "
            "(i)(1) deals a player who refuses an exposed card no additional card in the round.",
            "seat", "hand", "refuse_seq", card_codes.shown(pl.col("card")), "seq",
        ),
        pl.lit("no card after the refuse"),
        pl.format("{} dealt after the refuse", card_codes.shown(pl.col("card"))),
    )


CARD_AFTER_REFUSE = register(
    Rule(
        "BJ802",
        "card-after-refusing-exposed-card",
        "Card dealt to a hand that refused an exposed card",
        "9 NYCRR 5324.10(i)(1)",
        "error",
        GAME,
        "A `card` row for a seat and hand after that hand's `refuse` action in the round "
        "(once a hand, at the first such card). The refused hand keeps what it holds; the "
        "box's other split hands may or may not receive cards. A refuse before every box "
        "and the dealer held two cards is not judged.",
        "box 3 refuses the exposed 9D, then hits and is dealt 4S",
        "box 3 refuses the exposed 9D and is dealt nothing more; box 4 takes the 9D",
        check=card_after_refuse,
        needs=("irregularities", "cards", "deal_order", "decisions"),
    )
)


# --- BJ803 (i)(2): a missed dealer card dealt after the players' two cards


def dealer_card_dealt_wrong(ctx: GameContext) -> pl.DataFrame:
    missed = irr.missed_dealer(ctx).filter(pl.col("hole_seq").is_not_null())
    early = pl.col("early_seq").is_not_null()
    late = (pl.col("hole_seq") > pl.col("play_seq")).fill_null(False)
    wrong = missed.filter(early | late)
    why = (
        pl.when(early)
        .then(
            pl.format(
                "the dealer's first card came at seq {}, before box {}'s second card at seq {}",
                "up_seq", "early_seat", "early_seq",
            )
        )
        .otherwise(
            pl.format(
                "the dealer's second card came at seq {}, after play had begun at seq {}",
                "hole_seq", "play_seq",
            )
        )
    )
    return _findings(
        wrong,
        pl.when(early).then(pl.col("up_seq")).otherwise(pl.col("hole_seq")),
        pl.format(
            "In round {} the dealer missed a card (a box's second card came before the "
            "dealer's first), and {}; (i)(2) continues dealing the first two cards to each "
            "player and then deals the dealer's cards.",
            "round", why,
        ),
        pl.lit("the dealer's two cards after every box's second card, before any play"),
        pl.when(early)
        .then(pl.format("dealer's card before box {}'s second card", "early_seat"))
        .otherwise(pl.lit("dealer's second card after play began")),
    )


MISSED_DEALER_CARD = register(
    Rule(
        "BJ803",
        "missed-dealer-card-dealt-wrong",
        "Dealer's missed card not dealt after every player's two cards",
        "9 NYCRR 5324.10(i)(2)",
        "error",
        GAME,
        "Where the dealer missed a first card (the dealer's first `card` comes after some "
        "box's second card), the dealer's two cards must come after every box's second card "
        "and before any `action` or further card (the third or later) of a box: a dealer's "
        "card before another box's second card is reported at the dealer's first card, a "
        "second card after play began at that card. The late card itself is no finding, and "
        "the dealer's first card recorded is the up card for the other rules.",
        "box 1 is dealt 9S, 7D; the dealer 5C; box 2 then its second card, the dealer KH",
        "boxes 1 and 2 are dealt two cards each, then the dealer 5C and KH, then box 1 acts",
        check=dealer_card_dealt_wrong,
        needs=("cards", "deal_order"),
    )
)


# --- BJ806 (i)(5): the hole card checked against a card other than an ace or ten


def hole_card_checked_needlessly(ctx: GameContext) -> pl.DataFrame:
    checked = irr.hole_checks(ctx).filter(~pl.col("up").is_in([ACE, TEN]))
    return _findings(
        checked,
        "seq",
        pl.format(
            "The hole card was checked at seq {} with the dealer's first card {}, not an ace, "
            "king, queen, jack or 10; under (i)(5) play continues, after notice to a "
            "supervisor, only if the card reader lets neither the dealer nor any player learn "
            "the hole card's value.",
            "seq", card_codes.shown(pl.col("up_card")),
        ),
        pl.lit("a hole card check only with an ace or a ten-value card up"),
        pl.format("hole card checked with {} up", card_codes.shown(pl.col("up_card"))),
    )


HOLE_CARD_CHECKED = register(
    Rule(
        "BJ806",
        "hole-card-checked-without-ace-or-ten",
        "Hole card checked with the dealer's first card not an ace or a ten",
        "9 NYCRR 5324.10(i)(5)",
        "warning",
        GAME,
        "A `hole_card_check` in a round whose dealer's first card is a 2 to 9: a warning, "
        "once a round at the first check, since play may go on only where the card reader "
        "device hides the hole card's value, which the log does not show. The absence of a "
        "check proves nothing.",
        "the dealer shows 9D and the hole card is inserted into the reader",
        "the dealer shows AD and the hole card is inserted into the reader",
        check=hole_card_checked_needlessly,
        needs=("irregularities", "cards"),
    )
)


# --- BJ807 (e)(2): insurance placed before the hole card is checked


def insurance_after_check(ctx: GameContext) -> pl.DataFrame:
    checks = irr.hole_checks(ctx).select("rid", pl.col("seq").alias("check_seq"))
    insured = replay.wagers(ctx).filter(
        (pl.col("bet") == "insurance") & pl.col("rid").is_in(checks["rid"].implode())
    )
    late = insured.join(checks, on="rid").filter(pl.col("seq") > pl.col("check_seq"))
    who = (
        pl.when(pl.col("player_id").is_null())
        .then(pl.lit("the seated player"))
        .otherwise(pl.format("patron {}", "player_id"))
    )
    return _findings(
        late,
        "seq",
        pl.format(
            "Box {} took an insurance wager of {} from {} at seq {}, after the hole card was "
            "checked at seq {}; (e)(2) places all insurance wagers before the dealer inserts "
            "the hole card into the card reader or otherwise determines whether it is a "
            "ten-value card.",
            "seat", money.dollars(pl.col("amount_cents")), who, "seq", "check_seq",
        ),
        pl.lit("insurance placed before the hole card check"),
        pl.lit("insurance placed after the hole card check"),
    )


INSURANCE_AFTER_CHECK = register(
    Rule(
        "BJ807",
        "insurance-after-hole-card-check",
        "Insurance wager placed after the hole card was checked",
        "9 NYCRR 5324.10(e)(2)",
        "error",
        GAME,
        "An insurance `wager` row after the round's first `hole_card_check`: (e)(2) has every "
        "insurance wager placed before the dealer inserts the hole card into the card reader "
        "or otherwise checks it. Reported at each such wager; a surrender before the check "
        "is no finding.",
        "the dealer shows AS, the hole card is checked, then box 2 takes insurance",
        "the dealer shows AS, box 2 takes insurance, then the hole card is checked",
        check=insurance_after_check,
        needs=("irregularities", "wagers", "wager_timing"),
    )
)
