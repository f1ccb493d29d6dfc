"""Payouts per wager type (d), (b)(1).

Every rule here reads `settlement.wagers`: what (b)(1) and (d) owed each wager
(pay at the odds, push, collect) against its one recorded settlement. The
split between the rules, so that no wager is reported twice:
  - a wager with no settlement, or more than one, is BA404's alone;
  - a banker or player wager that had to be pushed (a tie; a dragon 7 on an EZ
    table) is BA504's or BA505's, whatever was recorded;
  - every other wager is its bet type's: a winner underpaid, overpaid, pushed
    or collected, a loser paid or pushed, a collect or push of the wrong amount.
Rounds that are void (BA106) or whose outcome cannot be replayed (fewer than
four cards, a hand without two cards) are not judged.

`amount_cents` is the patron's expected result minus the recorded one (a pay
counts +winnings, a push 0, a collect -stake): positive when underpaid.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import settlement
from ..registry import Rule, register

PUSH_ON_TIE = pl.col("bet").is_in(["banker", "player"]) & (pl.col("winner") == "tie")
PUSH_ON_DRAGON7 = (
    (pl.col("bet") == "banker") & pl.col("ez") & pl.col("dragon7") & (pl.col("winner") != "tie")
)
OWN_PUSH = PUSH_ON_TIE | PUSH_ON_DRAGON7


def _settlement_text(kind: pl.Expr, cents: pl.Expr, odds: pl.Expr | None = None) -> pl.Expr:
    verb = kind.replace({"pay": "paid", "push": "pushed", "collect": "collected"})
    text = pl.format("{} {}", verb, settlement.dollars(cents))
    if odds is None:
        return text
    return pl.when(kind == "pay").then(pl.format("{} ({}:1)", text, odds)).otherwise(text)


def _settled_wrong(ctx: GameContext) -> pl.DataFrame:
    """The judged wagers whose one settlement differs from what they were owed."""
    wrong = (pl.col("settled_kind") != pl.col("expected_kind")) | (
        pl.col("settled_cents") != pl.col("expected_cents")
    )
    return settlement.wagers(ctx).filter(
        pl.col("judged")
        & pl.col("expected_kind").is_not_null()
        & (pl.col("n_settled") == 1)
        & wrong
    )


def missettled(ctx: GameContext, which: pl.Expr) -> pl.DataFrame:
    """Wagers selected by `which` whose one settlement differs from what they were owed."""
    # found once for every bet type's rule
    wagers = ctx.derived("baccarat.settled_wrong", _settled_wrong)
    expected = _settlement_text(pl.col("expected_kind"), pl.col("expected_cents"), pl.col("odds"))
    observed = _settlement_text(pl.col("settled_kind"), pl.col("settled_cents"))
    return wagers.filter(which).select(
        "table_id",
        "shoe_id",
        "round",
        pl.col("settled_seq").alias("seq"),
        pl.format(
            "Seat {}'s {} wager of {} was {}; {}, so it should have been {}.",
            "seat", "bet", settlement.dollars(pl.col("staked_cents")), observed,
            settlement.outcome_text(), expected,
        ).alias("message"),
        expected.alias("expected"),
        observed.alias("observed"),
        (pl.col("expected_net") - pl.col("settled_net")).alias("amount_cents"),
    )


def _of_bet(*bets: str) -> pl.Expr:
    return pl.col("bet").is_in(list(bets)) & ~OWN_PUSH


def player_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet("player"))


def banker_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet("banker"))


def tie_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet("tie"))


def not_pushed_on_tie(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, PUSH_ON_TIE)


def not_pushed_on_dragon7(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, PUSH_ON_DRAGON7)


def dragon7_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet("dragon7"))


def panda8_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet("panda8"))


def dragon_bonus_paid_wrong(ctx: GameContext) -> pl.DataFrame:
    return missettled(ctx, _of_bet(*settlement.DRAGON_BETS))


SPLIT = (
    " A wager never settled or settled twice is BA404's; a banker or player wager owed a push "
    "(tie, EZ dragon 7) is BA504's or BA505's."
)

PLAYER = register(
    Rule(
        "BA501",
        "player-wager-paid-wrong",
        "Player wager settled wrong",
        "9 NYCRR 5324.20(d)(1)",
        "error",
        "baccarat",
        "A player wager settled otherwise than (b)(1)(ii) and (d)(1) require: a winner (a panda 8 "
        "included) not paid 1:1, or collected; a loser (a dragon 7 included) paid or pushed, or "
        "collected for a different amount. Paying more than 1:1 is reported too (negative "
        "amount): the odds are the game's, not a floor to judge against." + SPLIT,
        "Seat 3 wagers $25 on player; player wins 7 to 5; the dealer pays $20.",
        "Seat 3 wagers $25 on player; player wins 7 to 5; the dealer pays $25.",
        check=player_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.20(b)(1)(ii)(a)", "9 NYCRR 5324.20(b)(1)(ii)(b)"),
    )
)
BANKER = register(
    Rule(
        "BA502",
        "banker-wager-paid-wrong",
        "Banker wager settled wrong",
        "9 NYCRR 5324.20(d)(2)",
        "error",
        "baccarat",
        "A banker wager settled otherwise than (b)(1)(i) and (d)(2) require: a winner not paid "
        "1:1 (commission is separate: BA601) or collected; a loser paid or pushed, or collected "
        "for a different amount; a dragon 7 on a non-EZ table is an ordinary banker win." + SPLIT,
        "Seat 1 wagers $25 on banker; banker wins 6 to 2; the dealer pays $20 and takes a "
        "$1.25 commission.",
        "Seat 1 wagers $25 on banker; banker wins 6 to 2; the dealer pays $25 and takes a "
        "$1.25 commission.",
        check=banker_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.20(b)(1)(i)(a)", "9 NYCRR 5324.20(b)(1)(i)(b)"),
    )
)
TIE = register(
    Rule(
        "BA503",
        "tie-wager-paid-wrong",
        "Tie wager settled wrong",
        "9 NYCRR 5324.20(b)(1)(iii)",
        "error",
        "baccarat",
        "A tie wager not paid at the house's tie_pays odds when the hands tie, or not collected "
        "in full when they do not (b)(1)(iii)." + SPLIT,
        "tie_pays = 8; seat 2 wagers $5 on tie; the hands tie 6-6; the dealer pays $25.",
        "tie_pays = 8; seat 2 wagers $5 on tie; the hands tie 6-6; the dealer pays $40.",
        check=tie_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.20(a)(2)(iii)", "9 NYCRR 5324.20(a)(2)(iv)"),
    )
)
TIE_PUSH = register(
    Rule(
        "BA504",
        "wager-not-pushed-on-tie",
        "Banker or player wager not returned on a tie",
        "9 NYCRR 5324.20(b)(1)(i)(c)",
        "error",
        "baccarat",
        "On a tie, every banker and player wager must be returned in full (pushed), "
        "(b)(1)(i)(c) and (ii)(c); this rule owns those wagers: paid, collected or pushed short. "
        "Unsettled or twice-settled wagers are BA404's.",
        "The hands tie 7-7; seat 4's $50 banker wager is collected.",
        "The hands tie 7-7; seat 4's $50 banker wager is pushed ($50 returned).",
        check=not_pushed_on_tie,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.20(b)(1)(ii)(c)",),
    )
)
DRAGON7_PUSH = register(
    Rule(
        "BA505",
        "ez-banker-not-pushed-on-dragon7",
        "EZ banker wager not returned on a dragon 7",
        "9 NYCRR 5324.20(b)(1)(i)(a)",
        "error",
        "baccarat",
        "At an EZ baccarat table a banker win with a three-card 7 (dragon 7) returns banker "
        "wagers (b)(1)(i)(a), (c); this rule owns those wagers: paid, collected or pushed "
        "short. Player wagers lose on a dragon 7 (BA501). Unsettled or twice-settled wagers are "
        "BA404's.",
        "EZ table; banker wins with 7 on three cards; seat 2's $25 banker wager is paid $25.",
        "EZ table; banker wins with 7 on three cards; seat 2's $25 banker wager is pushed.",
        check=not_pushed_on_dragon7,
        needs=("cards", "wagers", "single_settlements"),
        also=("9 NYCRR 5324.20(b)(1)(i)(c)", "9 NYCRR 5324.20(a)(2)(vii)(b)"),
    )
)
DRAGON7 = register(
    Rule(
        "BA506",
        "dragon7-insurance-paid-wrong",
        "Dragon 7 insurance settled wrong",
        "9 NYCRR 5324.20(b)(1)(v)",
        "error",
        "baccarat",
        "On an EZ table, a dragon 7 insurance wager not paid at the house's dragon7_pays odds on "
        "a dragon 7, or not collected in full otherwise. On a non-EZ table the wager itself is "
        "BA403's and its settlement is not judged here." + SPLIT,
        "dragon7_pays = 40; a dragon 7; seat 5's $5 dragon 7 wager is paid $25.",
        "dragon7_pays = 40; a dragon 7; seat 5's $5 dragon 7 wager is paid $200.",
        check=dragon7_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=(
            "9 NYCRR 5324.20(b)(1)(v)(a)", "9 NYCRR 5324.20(b)(1)(v)(b)",
            "9 NYCRR 5324.20(a)(2)(iv)",
        ),
    )
)
PANDA8 = register(
    Rule(
        "BA507",
        "panda8-insurance-paid-wrong",
        "Panda 8 insurance settled wrong",
        "9 NYCRR 5324.20(d)(4)",
        "error",
        "baccarat",
        "On an EZ table, a panda 8 insurance wager not paid 25 to 1 (d)(4) on a panda 8 (a "
        "player win with a three-card 8), or not collected in full otherwise. On a non-EZ table "
        "the wager itself is BA403's." + SPLIT,
        "A panda 8; seat 6's $5 panda 8 wager is paid $40.",
        "A panda 8; seat 6's $5 panda 8 wager is paid $125.",
        check=panda8_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=(
            "9 NYCRR 5324.20(b)(1)(vi)", "9 NYCRR 5324.20(b)(1)(vi)(a)",
            "9 NYCRR 5324.20(b)(1)(vi)(b)",
        ),
    )
)
DRAGON_BONUS = register(
    Rule(
        "BA508",
        "dragon-bonus-paid-wrong",
        "Dragon bonus settled wrong",
        "9 NYCRR 5324.20(d)(5)",
        "error",
        "baccarat",
        "A dragon bonus wager (on player or banker) not settled by (b)(1)(iv) and the house's "
        "pay table (d)(5): a natural win 1:1, a win by 4-9 points at the table's odds, a natural "
        "tie pushed, anything else collected." + SPLIT,
        "Pay table A; player wins 9 to 2 without naturals (by 7); seat 1's $10 dragon_player "
        "wager is paid $40.",
        "Pay table A; player wins 9 to 2 without naturals (by 7); seat 1's $10 dragon_player "
        "wager is paid $60 (6:1).",
        check=dragon_bonus_paid_wrong,
        needs=("cards", "wagers", "single_settlements"),
        also=(
            "9 NYCRR 5324.20(b)(1)(iv)", "9 NYCRR 5324.20(b)(1)(iv)(a)(1)",
            "9 NYCRR 5324.20(b)(1)(iv)(a)(2)", "9 NYCRR 5324.20(b)(1)(iv)(a)(3)",
            "9 NYCRR 5324.20(b)(1)(iv)(b)(1)", "9 NYCRR 5324.20(b)(1)(iv)(b)(2)",
            "9 NYCRR 5324.20(b)(1)(iv)(b)(3)", "9 NYCRR 5324.20(b)(1)(iv)(c)",
        ),
    )
)
