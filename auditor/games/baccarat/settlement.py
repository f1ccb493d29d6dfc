"""Every baccarat wager and every settlement row, matched: what each wager was owed and got.

Built once per audit from the replayed rounds (`replay.rounds`) and the house
settings, so that the wager, payout, commission and collection rules all judge
the same numbers. Money is integer cents throughout.

`judged_rounds(ctx)`: `replay.rounds` with `judged` and `deal_only` (below).

`wagers(ctx)`: one row per table_id, shoe_id, round, seat, bet with a wager row:
  staked_cents   the seat's wager rows on that bet in the round, summed (a raise adds)
  wager_seq      the first of those rows; wager_rows how many there are
  judged         the outcome is known: not void, four or more cards, both hands dealt
  deal_only      a round of fewer than four cards that is not void: judged by deal order only
  expected_kind  "pay", "push" or "collect" as (b)(1) settles the wager; null where the
                 outcome is not judged, and for dragon7/panda8 on a non-EZ table (BA403)
  odds           the to-1 odds of a pay ((d), house tie_pays / dragon7_pays / pay table)
  expected_cents pay: the winnings at the odds; push and collect: the stake
  expected_net   the patron's result: +winnings, 0, -stake
  n_settled      collect/pay/push rows of the seat and bet in the round
  settled_kind settled_cents settled_seq  the first of them; settled_net its result
                 (pay +amount, push amount - stake, collect -amount)
  outcome        the replayed outcome in words, for messages
  plus winner, p_points, b_points, dragon7, panda8, void, end_seq and the table settings

`settlements(ctx)`: one row per collect/pay/push/vig/vig_settle row: table_id,
shoe_id, round, seq, event, seat, bet, amount_cents, mode; `wagered` says
whether the seat has a wager on that bet in the round (for vig: a banker
wager; false for vig_settle); `nth` numbers the settlements of one seat and bet in the round (1, 2,
...; null for vig rows).

`seat_commission(ctx)`: one row per table_id, shoe_id, round, seat of a judged,
non-void round with banker winnings or a vig row: won_cents (the winnings its
banker wagers were owed), vig_cents (its vig rows, summed), vig_seq (the first),
banker_settled_seq (its banker wager's first settlement row), expected_vig_cents
at the table's rate rounded down to the rate's step ((d)(2)(ii)), and
`vig_at_<percent>` for each allowed rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ...audit_context import GameContext
from . import replay, tableau

KEY = ["table_id", "shoe_id", "round"]
WAGER_KEY = [*KEY, "seat", "bet"]
SETTLE_EVENTS = ("collect", "pay", "push")
COMMISSION_EVENTS = ("vig", "vig_settle")
EZ_ONLY_BETS = ("dragon7", "panda8")
DRAGON_BETS = ("dragon_banker", "dragon_player")

ROUND_COLUMNS = [
    "winner", "p_points", "b_points", "p_natural", "b_natural", "dragon7", "panda8",
    "void", "n_cards", "dealt", "start_seq", "no_more_bets_seq", "result_seq", "end_seq",
]


def dollars(cents: pl.Expr) -> pl.Expr:
    """"$25.00" from integer cents (the absolute value: signs are said in words)."""
    cents = cents.abs()
    return pl.format("${}.{}", cents // 100, (cents % 100).cast(pl.String).str.zfill(2))


def judged_rounds(ctx: GameContext) -> pl.DataFrame:
    """The replayed rounds with `judged` and `deal_only` (see the module docstring)."""
    return ctx.derived("baccarat.judged_rounds", _build_judged_rounds)


def _build_judged_rounds(ctx: GameContext) -> pl.DataFrame:
    rounds = replay.rounds(ctx)
    known = ~pl.col("void") & (pl.col("n_cards") >= 4) & pl.col("dealt")
    return rounds.with_columns(
        (known & pl.col("winner").is_not_null()).alias("judged"),
        # "a round with fewer than 4 cards and not void is judged only by the deal-order rule"
        (~pl.col("void") & (pl.col("n_cards") < 4)).alias("deal_only"),
    )


def _outcome_text() -> pl.Expr:
    """"the banker won 7-2 (a dragon 7)", "the hands tied 6-6": the replayed outcome."""
    p, b = pl.col("p_points"), pl.col("b_points")
    special = (
        pl.when(pl.col("ez") & pl.col("dragon7"))
        .then(pl.lit(" (a dragon 7)"))
        .when(pl.col("ez") & pl.col("panda8"))
        .then(pl.lit(" (a panda 8)"))
        .otherwise(pl.lit(""))
    )
    return (
        pl.when(pl.col("winner") == "tie")
        .then(pl.format("the hands tied {}-{}", p, b))
        .when(pl.col("winner") == "player")
        .then(pl.format("the player won {}-{}{}", p, b, special))
        .otherwise(pl.format("the banker won {}-{}{}", b, p, special))
    )


def _dragon_odds(side: str, params: Mapping[str, Any]) -> pl.Expr:
    """Dragon bonus result as odds (k to 1, 0 push, -1 loss) under the table's pay table (d)(5)."""
    tables = params["dragon_bonus_pay_tables"]
    hands = [pl.col(c) for c in ("p_points", "b_points", "p_natural", "b_natural")]
    chain = None
    for letter, pay_table in tables.items():
        odds = tableau.dragon_bonus_odds(side, *hands, pay_table)  # type: ignore[arg-type]
        test = pl.col("dragon_bonus_pay_table") == letter
        chain = pl.when(test).then(odds) if chain is None else chain.when(test).then(odds)
    assert chain is not None
    return chain.otherwise(pl.lit(None, pl.Int32))


def _win_or_lose(won: pl.Expr) -> pl.Expr:
    return pl.when(won).then(pl.lit("pay")).otherwise(pl.lit("collect"))


def _expected(params: Mapping[str, Any]) -> list[pl.Expr]:
    """Expected kind and odds per (b)(1), (d)."""
    bet, winner = pl.col("bet"), pl.col("winner")
    tie, ez = winner == "tie", pl.col("ez")
    dragon = (
        pl.when(bet == "dragon_player")
        .then(_dragon_odds("player", params))
        .otherwise(_dragon_odds("banker", params))
    )
    pushed = tie | ((bet == "banker") & ez & pl.col("dragon7"))
    kind = (
        pl.when(~pl.col("judged"))
        .then(pl.lit(None, pl.String))
        # (b)(1)(i)(c), (ii)(c): banker and player wagers are returned on a tie, and
        # (b)(1)(i)(a), (c): at EZ baccarat a banker wager is returned on a dragon 7
        .when(bet.is_in(["banker", "player"]) & pushed)
        .then(pl.lit("push"))
        .when(bet.is_in(["banker", "player"]))
        .then(_win_or_lose(winner == bet))
        .when(bet == "tie")  # (b)(1)(iii)
        .then(_win_or_lose(tie))
        .when(bet.is_in(DRAGON_BETS))  # (b)(1)(iv)
        .then(
            pl.when(dragon > 0)
            .then(pl.lit("pay"))
            .when(dragon == tableau.DRAGON_PUSH)
            .then(pl.lit("push"))
            .when(dragon == tableau.DRAGON_LOSS)
            .then(pl.lit("collect"))
        )
        .when((bet == "dragon7") & ez)  # (b)(1)(v)
        .then(_win_or_lose(pl.col("dragon7")))
        .when((bet == "panda8") & ez)  # (b)(1)(vi)
        .then(_win_or_lose(pl.col("panda8")))
    )
    odds = (
        pl.when(bet == "player")
        .then(pl.lit(int(params["player_pays"])))
        .when(bet == "banker")
        .then(pl.lit(int(params["banker_pays"])))
        .when(bet == "tie")
        .then(pl.col("tie_pays").cast(pl.Int64))
        .when(bet.is_in(DRAGON_BETS))
        .then(dragon.cast(pl.Int64))
        .when(bet == "dragon7")
        .then(pl.col("dragon7_pays").cast(pl.Int64))
        .when(bet == "panda8")
        .then(pl.lit(int(params["panda8_pays"])))
    )
    return [kind.alias("expected_kind"), odds.alias("odds")]


def _net(kind: str, cents: str) -> pl.Expr:
    """The patron's result of a settlement of `kind` for `cents`, given the stake."""
    k, amount = pl.col(kind), pl.col(cents)
    return (
        pl.when(k == "pay")
        .then(amount)
        .when(k == "push")
        .then(amount - pl.col("staked_cents"))
        .when(k == "collect")
        .then(-amount)
    )


def _settled_summary(ctx: GameContext) -> pl.DataFrame:
    rows = ctx.events.filter(pl.col("event").is_in(SETTLE_EVENTS))
    return rows.group_by(WAGER_KEY).agg(
        pl.len().cast(pl.Int64).alias("n_settled"),
        pl.col("event").sort_by("seq").first().alias("settled_kind"),
        pl.col("amount_cents").sort_by("seq").first().alias("settled_cents"),
        pl.col("seq").min().alias("settled_seq"),
    )


def build_wagers(ctx: GameContext) -> pl.DataFrame:
    placed = (
        ctx.events.filter((pl.col("event") == "wager") & (pl.col("round") > 0))
        .group_by(WAGER_KEY)
        .agg(
            pl.col("amount_cents").sum().alias("staked_cents"),
            pl.col("seq").min().alias("wager_seq"),
            pl.len().cast(pl.Int64).alias("wager_rows"),
        )
    )
    rounds = judged_rounds(ctx)
    settings = [c for c in ctx.tables.columns if c != "table_id"]
    frame = placed.join(
        rounds.select(*KEY, *ROUND_COLUMNS, "judged", "deal_only", *settings), on=KEY, how="left"
    ).with_columns(
        pl.col("judged").fill_null(False),
        pl.col("void").fill_null(False),
        pl.col("deal_only").fill_null(False),
    )
    frame = frame.with_columns(_expected(ctx.params)).with_columns(
        pl.when(pl.col("expected_kind") == "pay")
        .then(pl.col("staked_cents") * pl.col("odds"))
        .when(pl.col("expected_kind").is_not_null())
        .then(pl.col("staked_cents"))
        .alias("expected_cents"),
    )
    frame = frame.join(_settled_summary(ctx), on=WAGER_KEY, how="left").with_columns(
        pl.col("n_settled").fill_null(0),
        _net("expected_kind", "expected_cents").alias("expected_net"),
        _net("settled_kind", "settled_cents").alias("settled_net"),
        _outcome_text().alias("outcome"),
    )
    return frame.sort("table_id", "wager_seq")


def wagers(ctx: GameContext) -> pl.DataFrame:
    """Every wager with what it was owed and how it was settled (module docstring)."""
    return ctx.derived("baccarat.wagers", build_wagers)


def build_settlements(ctx: GameContext) -> pl.DataFrame:
    rows = ctx.events.filter(
        pl.col("event").is_in((*SETTLE_EVENTS, *COMMISSION_EVENTS)) & (pl.col("round") > 0)
    ).select(*KEY, "seq", "event", "seat", "bet", "amount_cents", "mode")
    placed = wagers(ctx).select(*WAGER_KEY).with_columns(pl.lit(True).alias("wagered"))
    # a vig is owed on a banker wager of the seat (a vig_settle pays off an earlier round's)
    match_bet = pl.when(pl.col("event") == "vig").then(pl.lit("banker")).otherwise(pl.col("bet"))
    settle = pl.col("event").is_in(SETTLE_EVENTS)
    return (
        rows.with_columns(match_bet.alias("_bet"))
        .join(placed.rename({"bet": "_bet"}), on=[*KEY, "seat", "_bet"], how="left")
        .drop("_bet")
        .sort("table_id", "seq")
        .with_columns(
            pl.col("wagered").fill_null(False),
            pl.when(settle)
            .then(pl.col("seq").rank("ordinal").over(*WAGER_KEY, settle))
            .cast(pl.Int64)
            .alias("nth"),
        )
    )


def settlements(ctx: GameContext) -> pl.DataFrame:
    """Every recorded settlement row, matched to the wagers (module docstring)."""
    return ctx.derived("baccarat.settlements", build_settlements)


def expected_vig(won: pl.Expr, percent: pl.Expr | int, params: Mapping[str, Any]) -> pl.Expr:
    """Commission on `won` cents at `percent`, rounded down to the rate's step (d)(2)(ii).

    The commission rises by one step per $5 won ((d)(2): "wagers ... in $5
    increments only, and therefore the vigorish shall increase in 20-cent
    increments ... or 25 cent increments"), so an amount won between steps
    (a wager off the $5 grid, BA402) owes the lower step: never more than the
    posted rate of the amount won.
    """
    steps = {int(p): int(c) for p, c in params["commission_step_cents"].items()}
    rate = percent if isinstance(percent, pl.Expr) else pl.lit(percent)
    step = rate.cast(pl.Int64).replace_strict(steps, default=None, return_dtype=pl.Int64)
    return (won * rate) // (100 * step) * step


def build_seat_commission(ctx: GameContext) -> pl.DataFrame:
    banker = pl.col("bet") == "banker"
    won = (
        wagers(ctx)
        .filter(pl.col("judged"))
        .group_by(*KEY, "seat")
        .agg(
            pl.col("expected_cents")
            .filter(banker & (pl.col("expected_kind") == "pay"))
            .sum()
            .alias("won_cents"),
            pl.col("settled_seq").filter(banker).min().alias("banker_settled_seq"),
        )
    )
    vigs = (
        settlements(ctx)
        .filter(pl.col("event") == "vig")
        .group_by(*KEY, "seat")
        .agg(pl.col("amount_cents").sum().alias("vig_cents"), pl.col("seq").min().alias("vig_seq"))
    )
    rounds = judged_rounds(ctx).filter(pl.col("judged"))
    settings = [c for c in ctx.tables.columns if c != "table_id"]
    frame = (
        won.join(vigs, on=[*KEY, "seat"], how="full", coalesce=True)
        .join(rounds.select(*KEY, "end_seq", *settings), on=KEY, how="inner")
        .with_columns(pl.col("won_cents").fill_null(0), pl.col("vig_cents").fill_null(0))
        .filter((pl.col("won_cents") > 0) | (pl.col("vig_cents") > 0))
    )
    rates = [int(p) for p in ctx.params["commission_percents"]]
    return frame.with_columns(
        expected_vig(pl.col("won_cents"), pl.col("commission_percent"), ctx.params).alias(
            "expected_vig_cents"
        ),
        *[expected_vig(pl.col("won_cents"), r, ctx.params).alias(f"vig_at_{r}") for r in rates],
    ).sort("table_id", "shoe_id", "round", "seat")


def seat_commission(ctx: GameContext) -> pl.DataFrame:
    """Commission owed and recorded per seat and round (module docstring)."""
    return ctx.derived("baccarat.seat_commission", build_seat_commission)
