"""Insurance (e).

BJ301 and BJ302 judge the insurance wager as placed, BJ303 and BJ304 how it was
settled (from `money.owed`). The split, so that no wager is reported twice:
an insurance wager against a non-ace (BJ301) or above the limit (BJ302) is still
settled by the hole card, and its settlement is judged like any other; an
insurance wager not settled exactly once is BJ706's; insurance netted against or
merged with the patron's surrender is BJ405's ((f)(2)). Rounds that are void or
without the dealer's two cards are not judged.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import money, replay
from ...ingest import cards as card_codes
from ..registry import Part, Rule, register

INSURANCE = pl.col("bet") == "insurance"


def _up_cards(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """The dealer's first card (code) of each round of `rids`: only the rounds a message
    names are looked at."""
    dealt = replay.dealer_rows(ctx).filter(pl.col("rid").is_in(rids.unique().implode()))
    return dealt.group_by("rid").agg(pl.col("card").sort_by("seq").first().alias("up_card"))


def _insurance(ctx: GameContext) -> pl.DataFrame:
    return money.owed(ctx).filter(INSURANCE & pl.col("judged"))


# --- BJ301 (e)(1): only against an ace -----------------------------------------------


def insurance_without_ace(ctx: GameContext) -> pl.DataFrame:
    wrong = _insurance(ctx).filter(pl.col("up") != 1)
    wrong = wrong.join(_up_cards(ctx, wrong["rid"]), on="rid", how="left")
    return money.with_words(ctx, wrong).select(
        *money.ROUND,
        pl.col("wager_seq").alias("seq"),
        pl.format(
            "{} was accepted though the dealer's first card was {} ({}); insurance is offered "
            "only against an ace.",
            "who", money.card_name(pl.col("up")),
            card_codes.shown(pl.col("up_card"), explain=False),
        ).alias("message"),
        pl.lit("insurance only when the dealer's first card is an ace").alias("expected"),
        pl.format("insurance against {}", card_codes.shown(pl.col("up_card")))
        .alias("observed"),
    )


# --- BJ302 (e)(2): at most half the initial wager ------------------------------------


def insurance_over_half(ctx: GameContext) -> pl.DataFrame:
    insured = _insurance(ctx)
    # the main wagers of the insured rounds only, and only the columns read
    main_wager = (
        (pl.col("bet") == "main")
        & (pl.col("hand") == 1)
        & pl.col("rid").is_in(insured["rid"].unique().implode())
    )
    mains = (
        money.owed(ctx)
        .lazy()
        .filter(main_wager)
        .select("rid", "seat", "player_id", pl.col("staked_cents").alias("main_cents"))
        .collect(engine="in-memory")
    )
    placed = insured.join(
        mains, on=["rid", "seat", "player_id"], how="left", nulls_equal=True
    )
    main = pl.col("main_cents").fill_null(0)
    allowed = money.insurance_limit(main)
    over = placed.filter(pl.col("staked_cents") > allowed)
    return money.with_words(ctx, over).select(
        *money.ROUND,
        pl.col("wager_seq").alias("seq"),
        pl.format(
            "{} is more than half the initial wager of {} (at most {}).",
            "who", money.dollars(main), money.dollars(allowed),
        ).alias("message"),
        pl.format("insurance of at most {}", money.dollars(allowed)).alias("expected"),
        pl.format("insurance of {}", money.dollars(pl.col("staked_cents"))).alias("observed"),
    )


# --- BJ303 (e)(3), BJ304 (e)(4): the settlement --------------------------------------


def _settled_once(ctx: GameContext, outcome: str) -> pl.DataFrame:
    once = _insurance(ctx).filter(pl.col("settled_once") & (pl.col("outcome") == outcome))
    return money.apart(ctx, once)  # settled with a surrender: BJ405's, (f)(2)


def insurance_underpaid(ctx: GameContext) -> pl.DataFrame:
    # (e)(3): winning insurance pays at no less than 2:1; the house posts its odds
    # (insurance_pays, validated at 2:1 or more), and is held to them
    wrong = _settled_once(ctx, "win").filter(~pl.col("settled_right"))
    return money.findings(ctx, wrong)


# When the losing insurance was collected is a check of its own: a wagers export records
# the amount, and its timing is presumed (export-profiles-v1 1.1, Coverage)
COLLECTED_AT_ONCE = Part(
    "timing", "collected immediately after the check, before play went on", ("wager_timing",)
)


def insurance_not_collected(ctx: GameContext) -> pl.DataFrame:
    # (e)(4): collected, and "immediately" after the check: before play goes on
    lost = _settled_once(ctx, "lose")
    wanted, message = money.late_or_misjudged(
        "settled_seq", "play_seq",
        "it was collected only at seq {}, after play had gone on at seq {}, "
        "where it should have been collected at the check",
    )
    late = COLLECTED_AT_ONCE.where(pl.col("settled_right"))  # collected as owed, but late
    return money.findings(ctx, lost.filter(wanted), message=message, part=late)


WORDING = (
    " One finding per wager; a wager not settled exactly once is BJ706's. Void rounds and "
    "rounds without the dealer's two cards are not judged."
)

WITHOUT_ACE = register(
    Rule(
        "BJ301",
        "insurance-without-ace",
        "Insurance when the dealer's first card is not an ace",
        "9 NYCRR 5324.10(e)(1)",
        "error",
        "blackjack",
        "An insurance wager in a round whose dealer's first (up) card is not an ace (e)(1). "
        "Reported at the wager row; its settlement is judged by BJ303/BJ304 as any other "
        "insurance (it wins when the dealer has blackjack)." + WORDING,
        "The dealer's up card is KD; box 2 places insurance of $12.",
        "The dealer's up card is AD; box 2 places insurance of $12.",
        check=insurance_without_ace,
        needs=("cards", "wagers"),
    )
)
OVER_HALF = register(
    Rule(
        "BJ302",
        "insurance-over-half",
        "Insurance above half the initial wager",
        "9 NYCRR 5324.10(e)(2)",
        "error",
        "blackjack",
        "An insurance wager above half the patron's own initial (main, hand 1) wager on the "
        "box, allowing the next $1 chip unit where half is not a whole number of dollars "
        "($25 -> $13). A co-patron's insurance is measured against the co-patron's wager "
        "((h)(6)); insurance with no initial wager is over any limit. Reported at the wager "
        "row." + WORDING,
        "Box 1 wagers $25; insurance of $25.",
        "Box 1 wagers $25; insurance of $13 (half, to the next $1 chip).",
        check=insurance_over_half,
        needs=("wagers", "stakes"),
    )
)
UNDERPAID = register(
    Rule(
        "BJ303",
        "insurance-underpaid",
        "Winning insurance not paid at the posted insurance odds",
        "9 NYCRR 5324.10(e)(3)",
        "error",
        "blackjack",
        "An insurance wager that won (the dealer had blackjack) paid less than the table's "
        "insurance_pays odds (never below 2:1), or collected or pushed. A pay above the "
        "posted odds is reported too (negative amount): the posted odds are the ones the "
        "house keeps to." + WORDING,
        "2:1 insurance; box 3's $10 insurance wins; the dealer pays $10.",
        "2:1 insurance; box 3's $10 insurance wins; the dealer pays $20.",
        check=insurance_underpaid,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.10(a)(2)(iii)(c)", "9 NYCRR 5324.10(e)(1)"),
    )
)
NOT_COLLECTED = register(
    Rule(
        "BJ304",
        "insurance-not-collected",
        "Losing insurance not collected",
        "9 NYCRR 5324.10(e)(4)",
        "error",
        "blackjack",
        "An insurance wager that lost (the dealer had no blackjack) not collected in full: "
        "pushed back, paid, or collected for a different amount; or collected only after "
        "play went on (after the round's first action, or a card after the hole card), where "
        "(e)(4) collects it immediately after the check (no amount at stake then)." + WORDING,
        "The dealer's ace has a 7 under it; box 5's $25 insurance is pushed back.",
        "The dealer's ace has a 7 under it; box 5's $25 insurance is collected before box 1 acts.",
        check=insurance_not_collected,
        needs=("cards", "wagers", "single_settlements"),
        parts=(COLLECTED_AT_ONCE,),
        also=("9 NYCRR 5324.10(e)(1)",),
    )
)
