"""Surrender (f).

BJ401 and BJ402 judge the surrender decision (an `action` row `surrender`),
BJ403 and BJ404 how the surrendered hand's wagers were settled (from
`money.owed`: every wager on the hand, a co-patron's included). The split, so
that nothing is reported twice: a surrender where the house allows none is
BJ401's whatever its timing (BJ402 judges only tables that allow it); its
settlement is still judged by BJ403/BJ404, since the half and half was owed
once the dealer accepted it; a surrendered wager not settled exactly once
(no row, a second collect or push, a third row) is BJ706's; the hand's wagers
are no settlement rule's (BJ701-BJ705). BJ405 judges (f)(2) on a patron's
insurance and surrender together: where the two were not each settled as owed, but
their rows taken together move what the two were owed together, the insurance was
netted against or merged with the surrender, and that is BJ405's alone (BJ303,
BJ304, BJ403, BJ404 and BJ706 leave those two wagers). Void rounds are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import decisions, money, replay
from ..registry import Part, Rule, register

HAND = ["rid", "seat", "hand"]
TEN = 10  # (f)(1)(ii): an ace, king, queen or jack up; ten-value cards are valued 10
ACE = 1


def _surrenders(ctx: GameContext) -> pl.DataFrame:
    """Each surrender action with the hand as it stood, and the table's surrender rule."""
    acts = decisions.decisions(ctx).filter(pl.col("action") == "surrender")
    allowed = replay.rounds(ctx).select("rid", pl.col("surrender").fill_null(False))
    return acts.rename({"decision_no": "nth_decision"}).join(allowed, on="rid", how="left")


def _decision_rows(frame: pl.DataFrame, message: pl.Expr, expected: str,
                   observed: pl.Expr) -> pl.DataFrame:
    return frame.select(
        *money.ROUND,
        "seq",
        message.alias("message"),
        pl.lit(expected).alias("expected"),
        observed.alias("observed"),
    )


# --- BJ401, BJ402 (f)(1): the decision ----------------------------------------------


def surrender_not_allowed(ctx: GameContext) -> pl.DataFrame:
    wrong = _surrenders(ctx).filter(~pl.col("surrender"))
    return _decision_rows(
        wrong,
        pl.format(
            "Box {} hand {} surrendered at seq {} at a table whose house rules allow no "
            "surrender.", "seat", "hand", "seq",
        ),
        "no surrender (house rules: surrender = false)",
        pl.lit("surrender"),
    )


def surrender_late(ctx: GameContext) -> pl.DataFrame:
    # (f)(1): on the first two cards, before any other decision; a hand made by a
    # split was preceded by the split decision
    first = (
        (pl.col("hand") == 1)
        & (pl.col("splits_before") == 0)
        & (pl.col("n_cards") == 2)
        & (pl.col("nth_decision") == 1)
    )
    wrong = _surrenders(ctx).filter(pl.col("surrender") & ~first)
    why = (
        pl.when((pl.col("hand") != 1) | (pl.col("splits_before") > 0))
        .then(pl.lit("after a split"))
        .when(pl.col("nth_decision") > 1)
        .then(pl.format("after {} earlier decision(s) on the hand", pl.col("nth_decision") - 1))
        .otherwise(pl.format("on {} cards", "n_cards"))
    )
    return _decision_rows(
        wrong,
        pl.format(
            "Box {} hand {} surrendered at seq {} {}, holding {} cards; surrender is allowed "
            "only as the first decision on the first two cards.",
            "seat", "hand", "seq", why, "n_cards",
        ),
        "surrender only as the first decision, on the first two cards",
        pl.format("surrender {}", why),
    )


# --- BJ403, BJ404 (f)(1)(i), (ii): the settlement -----------------------------------------


def _surrendered(ctx: GameContext) -> pl.DataFrame:
    surrendered = money.owed(ctx).filter(
        pl.col("judged") & (pl.col("outcome") == "surrendered") & pl.col("settled_once")
    )
    return money.apart(ctx, surrendered)  # settled with the insurance: BJ405's


# When the half and half was settled is a check of its own: a wagers export records the
# amounts, and its timing is presumed (export-profiles-v1 1.1, Coverage)
SETTLED_AT_ONCE = Part(
    "timing", "half collected and half returned immediately, before play went on",
    ("wager_timing",),
)


def surrender_2_9_settled_wrong(ctx: GameContext) -> pl.DataFrame:
    # (f)(1)(i): "collect immediately one-half ... and return one-half": before the
    # next card or decision of the round
    frame = _surrendered(ctx).filter(pl.col("up").is_between(2, 9))
    wanted, message = money.late_or_misjudged(
        "last_settled_seq", "next_seq",
        "it was settled only at seq {}, after play went on at seq {}, where half is "
        "collected and half returned immediately",
    )
    late = pl.col("settled_right")  # settled as owed, so reported for its timing
    seq = pl.when(late).then("last_settled_seq").otherwise("settled_seq")
    return money.findings(ctx, frame.filter(wanted), message, seq, SETTLED_AT_ONCE.where(late))


def surrender_ten_settled_wrong(ctx: GameContext) -> pl.DataFrame:
    # (f)(1)(ii): the whole wager if the dealer has blackjack, else half and half
    frame = _surrendered(ctx).filter(pl.col("up").is_in([ACE, TEN]) & ~pl.col("settled_right"))
    return money.findings(ctx, frame)


# --- BJ405 (f)(2): insurance and surrender each settled on its own ------------------------


def _pair_text(value: str) -> pl.Expr:
    """The pair's wagers in words, insurance first: "insurance: never settled; main: ..."."""
    return pl.format("{}: {}", "bet", value).sort_by(pl.col("bet") != "insurance").str.join("; ")


def insurance_netted_with_surrender(ctx: GameContext) -> pl.DataFrame:
    together = money.netted(ctx)
    pair = money.owed(ctx).filter(
        pl.col("judged") & ((pl.col("bet") == "insurance") | (pl.col("outcome") == "surrendered"))
    )
    pair = pair.join(together.select(money.HOLDER), on=money.HOLDER, how="semi",
                     nulls_equal=True)
    words = money.with_words(ctx, pair).with_columns(
        pl.format("{} {} wager", money.dollars(pl.col("staked_cents")), "bet").alias("stake_text"),
    )
    per_holder = words.group_by(money.HOLDER).agg(
        _pair_text("observed_text").alias("observed"),
        _pair_text("expected_text").alias("expected"),
        pl.col("stake_text").sort_by(pl.col("bet") != "insurance").str.join(" and the surrendered ")
        .alias("stakes"),
        pl.col("outcome_text").filter(pl.col("bet") == "insurance").first().alias("insured"),
    )
    found = together.join(per_holder, on=money.HOLDER, how="left", nulls_equal=True)
    patron = (
        pl.when(pl.col("player_id").is_not_null())
        .then(pl.format(" (patron {})", "player_id"))
        .otherwise(pl.lit(""))
    )
    return found.select(
        *money.ROUND,
        "seq",
        pl.format(
            "Box {} hand {}{}: the {} were settled together ({}), where each is settled "
            "separately, one having no bearing on the other: {}, so {}.",
            "seat", "hand", patron, "stakes", "observed", "insured", "expected",
        ).alias("message"),
        "expected",
        "observed",
    )


SETTLED = (
    " Every wager on the hand is judged (a co-patron's too); one finding per wager; a "
    "wager not settled exactly once is BJ706's. Void rounds are not judged."
)

NOT_ALLOWED = register(
    Rule(
        "BJ401",
        "surrender-not-allowed",
        "Surrender where the house does not allow it",
        "9 NYCRR 5324.10(f)(1)",
        "error",
        "blackjack",
        "A surrender action at a table whose house rules say surrender = false ((f)(1): the "
        "facility may allow it). Reported at the action row; the settlement is BJ403/BJ404's.",
        "surrender = false; box 1 holds 16 against a ten and surrenders.",
        "surrender = false; box 1 holds 16 against a ten and hits.",
        check=surrender_not_allowed,
        needs=("decisions",),
    )
)
LATE = register(
    Rule(
        "BJ402",
        "surrender-not-first-decision",
        "Surrender not as the first decision on the first two cards",
        "9 NYCRR 5324.10(f)(1)",
        "error",
        "blackjack",
        "At a table that allows surrender, a surrender that is not the hand's first decision "
        "on its first two cards: after a hit or another decision, with more than two cards, "
        "or on a hand made by a split (the split was the decision). Split cards are counted "
        "on the hand the split made. Reported at the action row; surrenders where the house "
        "allows none are BJ401's.",
        "Box 1 holds 10-2, hits a 4, then surrenders 16.",
        "Box 1 holds 10-6 and surrenders as its first decision.",
        check=surrender_late,
        needs=("decisions",),
    )
)
LOW_UP = register(
    Rule(
        "BJ403",
        "surrender-2-9-settled-wrong",
        "Surrender against a 2-9 not settled half and half",
        "9 NYCRR 5324.10(f)(1)(i)",
        "error",
        "blackjack",
        "A hand surrendered against a dealer's 2-9 up card must have half of each wager "
        "collected and half returned (a collect and a push row), immediately: before the next "
        "card or decision of the round. The whole wager collected or returned, other amounts, "
        "a pay, or a settlement after play went on (no amount at stake then) is reported."
        + SETTLED,
        "The dealer shows a 9; box 2 surrenders 16 on a $50 wager; $50 is collected.",
        "The dealer shows a 9; box 2 surrenders 16 on a $50 wager; $25 collected, $25 pushed.",
        check=surrender_2_9_settled_wrong,
        needs=("cards", "decisions", "wagers", "single_settlements"),
        parts=(SETTLED_AT_ONCE,),
    )
)
APART = register(
    Rule(
        "BJ405",
        "insurance-netted-with-surrender",
        "Insurance and surrender not settled separately",
        "9 NYCRR 5324.10(f)(2)",
        "error",
        "blackjack",
        "A patron who made an insurance wager and then surrendered the hand has each wager "
        "settled separately, by its own rule: the insurance by the dealer's hole card (e), "
        "the surrender by (f)(1). The reading applied: where the two are not each settled "
        "as owed (a wrong amount, a missing or extra row), but their rows taken as one pot "
        "(the pays and pushes of both, less both stakes; no row at all counts nothing moved) "
        "come to what the two were owed together, one was netted against or merged with "
        "the other (one settled by the other's outcome): reported once per patron and hand, "
        "at the pair's first settlement row, with no amount (the patron's total is right); "
        "BJ303, BJ304, BJ403, BJ404 and BJ706 leave those two wagers. A pair settled wrong "
        "in total is those rules', each wager on its own.",
        "Dealer's ace, no blackjack; box 1 wagers $20, insures $10 and surrenders; the dealer "
        "collects $20 from the main wager and returns $10, and settles no insurance.",
        "Dealer's ace, no blackjack; box 1 wagers $20, insures $10 and surrenders; the "
        "insurance is collected ($10), the main wager half collected and half returned.",
        check=insurance_netted_with_surrender,
        # the pair's pot is read off the amounts its rows record: one row per wager
        # (a wagers export) shows it as well as a row per settlement
        needs=("cards", "decisions", "wagers", "single_settlements"),
    )
)
HIGH_UP = register(
    Rule(
        "BJ404",
        "surrender-ace-ten-settled-wrong",
        "Surrender against an ace or ten settled wrong",
        "9 NYCRR 5324.10(f)(1)(ii)",
        "error",
        "blackjack",
        "A hand surrendered against a dealer's ace or ten-value up card: the whole wager "
        "collected when the dealer has blackjack, otherwise half collected and half returned "
        "(a collect and a push row). Any other settlement is reported." + SETTLED,
        "The dealer shows a king (no blackjack); box 1 surrenders 16 on $30; $30 is collected.",
        "The dealer shows a king (no blackjack); box 1 surrenders 16 on $30; $15 collected, "
        "$15 pushed.",
        check=surrender_ten_settled_wrong,
        # the settlement's kind and amount only: (f)(1)(ii) says nothing of when
        needs=("cards", "decisions", "wagers", "single_settlements"),
    )
)
