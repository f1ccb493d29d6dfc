"""Settlement: even money, blackjack, pushes, busts, payout limit, once per wager (a)(2).

Every rule here reads `money.owed`: what each main, double and split wager was
owed by its hand's outcome against the dealer, and how it was recorded. The split
between the rules, so that no wager is reported twice:
  - a wager never settled, settled more than once, and a settlement row with no
    wager (but a co-patron's on a split hand not covered, BJ602's) is BJ706's;
    the others judge only wagers settled exactly once;
  - insurance wagers are BJ303's and BJ304's, surrendered hands BJ403's and BJ404's;
    a patron's insurance and surrender settled together (netted) are BJ405's, BJ706
    leaves those two wagers;
  - a pay above what the table's payout limit allows the hand (and wager-holder)
    is BJ705's whatever the outcome was owed;
  - every other wager is its outcome's: a win or a loss BJ701's, a natural BJ702's,
    a push (a natural against the dealer's blackjack included) BJ703's, a bust BJ704's.
Rounds that are void, hands with fewer than two cards and rounds without the
dealer's two cards are not judged. A hand declared dead ((i)(3), (i)(4)(ii)) is not
judged on its cards: each of its wagers is owed a push (`money.owed` outcome "dead"),
its collect or pay is BJ804's or BJ805's, and BJ706 judges it settled once by a push.

`amount_cents` is the patron's expected result minus the recorded one (a pay
counts +winnings, a push 0, a collect -stake): positive when underpaid.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.blackjack import money
from ..registry import Part, Rule, register

OVER_LIMIT = (
    (pl.col("expected_kind") == "pay")
    & (pl.col("settled_kind") == "pay")
    & (pl.col("settled_cents") > pl.col("room_cents"))
)


def _missettled(ctx: GameContext) -> pl.DataFrame:
    """Hand wagers (not surrendered) settled once, but not as owed."""
    return money.owed(ctx).filter(
        pl.col("judged")
        & pl.col("bet").is_in(money.HAND_BETS)
        & (pl.col("outcome") != "surrendered")
        & pl.col("settled_once")
        & ~pl.col("settled_right")
    )


def _of_outcome(ctx: GameContext, *outcomes: str) -> pl.DataFrame:
    wrong = _missettled(ctx).filter(pl.col("outcome").is_in(outcomes) & ~OVER_LIMIT)
    return money.findings(ctx, wrong)


def even_money_wrong(ctx: GameContext) -> pl.DataFrame:
    return _of_outcome(ctx, "win", "lose")


def natural_odds_wrong(ctx: GameContext) -> pl.DataFrame:
    return _of_outcome(ctx, "natural")


def push_not_returned(ctx: GameContext) -> pl.DataFrame:
    return _of_outcome(ctx, "push")


def bust_not_collected(ctx: GameContext) -> pl.DataFrame:
    return _of_outcome(ctx, "bust")


def payout_over_limit(ctx: GameContext) -> pl.DataFrame:
    # (a)(2)(vi): the posted limit per hand caps what a hand's wagers win
    over = _missettled(ctx).filter(OVER_LIMIT)
    message = pl.format(
        "{}: {}; it was {}, above the {} left to it under the table's {} payout limit per "
        "hand, where it should have been {}.",
        "who",
        "outcome_text",
        "observed_text",
        money.dollars(pl.col("room_cents")),
        money.dollars(pl.col("limit_cents")),
        "expected_text",
    )
    return money.findings(ctx, over, message=message)


# --- BJ706: exactly once ---------------------------------------------------------------


def _unsettled(ctx: GameContext) -> pl.DataFrame:
    # a wager settled by a net (format 1.3) has no settlement of its own: BJ707's
    never = money.owed(ctx).filter(
        pl.col("judged") & (pl.col("n_settled") == 0) & pl.col("net_sid").is_null())
    never = money.apart(ctx, never)  # insurance settled with a surrender: BJ405's
    owed = pl.col("expected_net")
    return money.with_words(ctx, never).select(
        *money.ROUND,
        pl.col("wager_seq").alias("seq"),
        pl.format(
            "{} was never settled (no collect, pay or push); {}, so it should have been {}.",
            "who",
            "outcome_text",
            "expected_text",
        ).alias("message"),
        pl.col("expected_text").alias("expected"),
        pl.lit("never settled").alias("observed"),
        # what the missing settlement owed: +winnings, or -stake left with the patron
        pl.when(owed != 0).then(owed).alias("amount_cents"),
    )


# A wager settled a second time is a check of its own: it needs each settlement recorded
# as a row of its own. One row per wager (a wagers export) records a second collect as one
# collect of twice the amount (BJ701's), but a wager with no settlement, or a settlement
# with no wager, as plainly as any (export-profiles-v1 1.1, Coverage)
SETTLED_AGAIN = Part("again", "a wager settled a second time", ("settlements",))


def _extra_rows(ctx: GameContext) -> pl.DataFrame:
    rows = money.settlements(ctx)
    extra = pl.col("judged") & pl.col("extra")
    orphan = ~pl.col("matched") & ~pl.col("void") & ~patron_split_phantom()
    live = money.apart(ctx, rows.filter(extra | orphan))
    verb = (
        pl.col("event")
        .cast(pl.String)
        .replace_strict(money.VERB, default=pl.col("event").cast(pl.String))
    )
    row = pl.format("{} {}", verb, money.dollars(pl.col("amount_cents")))
    patron = (
        pl.when(pl.col("player_id").is_not_null())
        .then(pl.format(" of patron {}", "player_id"))
        .otherwise(pl.lit(""))
    )
    where = pl.format("box {} hand {} {} wager{}", "seat", "hand", "bet", patron)
    message = (
        pl.when(pl.col("matched"))
        .then(
            pl.format(
                "The {} was settled again at seq {}: {} (settlement {}).", where, "seq", row, "nth"
            )
        )
        .otherwise(
            pl.format("The {} was {} at seq {}, but no such wager was placed.", where, row, "seq")
        )
    )
    return live.select(
        *money.ROUND,
        "seq",
        message.alias("message"),
        pl.when(pl.col("matched"))
        .then(pl.lit("one settlement per wager"))
        .otherwise(pl.lit("no settlement without a wager"))
        .alias("expected"),
        row.alias("observed"),
        (-pl.col("row_net")).alias("amount_cents"),
        SETTLED_AGAIN.where(pl.col("matched")),
    )


def patron_split_phantom() -> pl.Expr:
    """A co-patron's settlement on a hand after the first that the co-patron placed no
    wager on: BJ602's (h)(5), not BJ706's."""
    return pl.col("player_id").is_not_null() & (pl.col("hand") > 1) & ~pl.col("hand_wagered")


def not_settled_once(ctx: GameContext) -> pl.DataFrame:
    return pl.concat([_unsettled(ctx), _extra_rows(ctx)], how="diagonal_relaxed")


SPLIT = (
    " Insurance is BJ303/BJ304's, surrendered hands BJ403/BJ404's, a pay above the payout "
    "limit BJ705's, a wager not settled exactly once BJ706's."
)

EVEN_MONEY = register(
    Rule(
        "BJ701",
        "even-money-settled-wrong",
        "Winning hand not paid 1:1, or losing hand not collected",
        "9 NYCRR 5324.10(a)(2)(v)",
        "error",
        "blackjack",
        "A main, double or split wager whose hand beat the dealer (or the dealer busted) and "
        "was not paid even money (1:1), or whose hand lost to the dealer (a dealer blackjack "
        "included) and was not collected in full: underpaid, overpaid, collected, pushed or "
        "paid. Overpaying is reported too (negative amount)." + SPLIT,
        "Box 3 wagers $25; the hand stands on 20, the dealer stands on 18; the dealer pays $20.",
        "Box 3 wagers $25; the hand stands on 20, the dealer stands on 18; the dealer pays $25.",
        check=even_money_wrong,
        needs=("cards", "decisions", "wagers", "single_settlements"),
        also=(
            "9 NYCRR 5324.10(b)(2)(i)", "9 NYCRR 5324.10(b)(2)(ii)", "9 NYCRR 5324.10(b)(2)(iii)",
        ),
    )
)
NATURAL = register(
    Rule(
        "BJ702",
        "natural-odds-wrong",
        "Natural not paid at the posted blackjack odds",
        "9 NYCRR 5324.10(a)(2)(iii)",
        "error",
        "blackjack",
        "A natural (a two-card 21 on hand 1 of a box that never split) against a dealer "
        "without blackjack must be paid at the table's blackjack_pays odds (3:2: $25 pays "
        "$37.50; 6:5: $25 pays $30), within the payout limit; paid at other odds, pushed or "
        "collected is reported. A natural against the dealer's blackjack is a push (BJ703)."
        + SPLIT,
        "3:2 table; box 1 wagers $25 and is dealt A-K; the dealer has 19; the dealer pays $25.",
        "3:2 table; box 1 wagers $25 and is dealt A-K; the dealer has 19; the dealer pays $37.50.",
        check=natural_odds_wrong,
        needs=("cards", "decisions", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.10(a)(2)(iii)(a)",),
    )
)
PUSH = register(
    Rule(
        "BJ703",
        "push-not-returned",
        "Push not returned",
        "9 NYCRR 5324.10(a)(2)(v)",
        "error",
        "blackjack",
        "A hand that ties the dealer (a natural against the dealer's blackjack included) must "
        "have its wagers returned in full (push); collected, paid or returned short is "
        "reported." + SPLIT,
        "Box 2's $50 hand stands on 19, the dealer stands on 19; the $50 is collected.",
        "Box 2's $50 hand stands on 19, the dealer stands on 19; the $50 is pushed.",
        check=push_not_returned,
        needs=("cards", "decisions", "wagers", "single_settlements"),
    )
)
BUST = register(
    Rule(
        "BJ704",
        "bust-not-collected",
        "Busted hand not collected",
        "9 NYCRR 5324.10(a)(2)(v)",
        "error",
        "blackjack",
        "A hand over 21 loses its wagers, even when the dealer busts afterwards; a busted "
        "hand's wager returned, paid or collected for a different amount is reported." + SPLIT,
        "Box 4 hits 16 to 26; the dealer busts with 23; box 4's $25 is paid $25.",
        "Box 4 hits 16 to 26; the dealer busts with 23; box 4's $25 is collected.",
        check=bust_not_collected,
        needs=("cards", "decisions", "wagers", "single_settlements"),
    )
)
LIMIT = register(
    Rule(
        "BJ705",
        "payout-over-limit",
        "Payout above the posted limit per hand",
        "9 NYCRR 5324.10(a)(2)(vi)",
        "error",
        "blackjack",
        "A pay on a winning hand above what the table's payout_limit allows: the limit is "
        "per hand and wager-holder, the main wager drawing on it first, then the double (a "
        "$1,000 natural at 3:2 under a $500 limit is owed $500, not $1,500). Only pays above "
        "the limit are this rule's; a pay short of it is the outcome's rule (BJ701, BJ702). "
        "Overpayment gives a negative amount.",
        "$500 limit; box 2's $1,000 wager is a natural at 3:2; the dealer pays $1,500.",
        "$500 limit; box 2's $1,000 wager is a natural at 3:2; the dealer pays $500.",
        check=payout_over_limit,
        needs=("cards", "decisions", "wagers", "single_settlements"),
    )
)
ONCE = register(
    Rule(
        "BJ706",
        "wager-settled-twice-or-never",
        "Wager not settled exactly once",
        "9 NYCRR 5324.10(a)(2)(v)",
        "error",
        "blackjack",
        "Each wager (a patron's main, double, split or insurance wager on a box and hand) gets "
        "exactly one collect, pay or push (a surrender: one collect and one push). A wager "
        "with none is reported at its wager row (amount: what it was owed); each further "
        "settlement row, and each settlement row matching no wager, at that row (amount: what "
        "the row moved). A co-patron's settlement on a split hand the co-patron did not "
        "cover is BJ602's. A hand declared dead ((i)(3), (i)(4)(ii)) is owed a push of each "
        "wager: its collect or pay is BJ804's or BJ805's, a second push this rule's. Void "
        "rounds and hands not dealt two cards are not judged.",
        "Box 1's losing $100 wager is collected at seq 40 and again at seq 41.",
        "Box 1's losing $100 wager is collected once.",
        check=not_settled_once,
        needs=("wagers", "single_settlements"),
        parts=(SETTLED_AGAIN,),
    )
)
