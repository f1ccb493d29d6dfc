"""Baccarat seats settled by their net result (format 1.3 `settle_net`): each wager of a
net's scope with what the rules owe it, for BA509 (`games.nets` judges them).

What a wager is owed is `settlement.wagers`'s, the frame every payout rule reads: a
player wager at 1:1 ((d)(1)), a banker wager at 1:1 less the commission at the table's
rate rounded down to the rate's step ((d)(2); none at EZ baccarat, (d)(3)), both
returned on a tie ((b)(1)(i)(c), (ii)(c)) and an EZ banker wager on a dragon 7
((b)(1)(i)(a)); a tie wager at the house's tie odds ((b)(1)(iii)); a dragon bonus by the
table's pay table ((d)(5)); dragon 7 and panda 8 insurance at their odds ((b)(1)(v),
(d)(4)); a losing wager collected; every wager of a void round returned ((i)(4)). A wager
whose outcome is not known (fewer than four cards, a hand without two, an EZ-only wager
on another table: BA403's) leaves its scope unjudged. Nothing is presumed in baccarat.

The other outcomes a wager may be given, to find the one wager that explains a
difference: any wager lost; a banker, player or dragon bonus wager pushed; a player wager
won at 1:1, a banker wager at 1:1 less its commission (EZ: without), a tie, dragon 7 or
panda 8 wager at its odds, a dragon bonus wager at any odds of the table's pay table.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from .. import nets
from . import settlement

SECTION = "9 NYCRR 5324.20"
BOX_PARAGRAPH = f"{SECTION}(d)"
PARAGRAPHS = {
    "player": f"{SECTION}(d)(1)",
    "banker": f"{SECTION}(d)(2)",
    "player on a tie": f"{SECTION}(b)(1)(ii)(c)",
    "banker on a tie": f"{SECTION}(b)(1)(i)(c)",
    "banker on a dragon 7": f"{SECTION}(b)(1)(i)(a)",
    "tie": f"{SECTION}(b)(1)(iii)",
    "dragon bonus": f"{SECTION}(d)(5)",
    "dragon 7": f"{SECTION}(b)(1)(v)",
    "panda 8": f"{SECTION}(d)(4)",
    "void": f"{SECTION}(i)(4)",
}


def _commission(ctx: GameContext, won: pl.Expr) -> pl.Expr:
    """The commission on `won` cents of a banker wager at the table's rate, none at EZ."""
    charged = (pl.col("bet") == "banker") & ~pl.col("ez")
    vig = settlement.expected_vig(won, pl.col("commission_percent"), ctx.params)
    return pl.when(charged).then(vig).otherwise(pl.lit(0, pl.Int64))


def _owed(ctx: GameContext) -> pl.Expr:
    kind, stake, cents = pl.col("expected_kind"), pl.col("staked_cents"), pl.col("expected_cents")
    return (
        pl.when(pl.col("void")).then(pl.lit(0, pl.Int64))
        .when(kind == "pay").then(cents - _commission(ctx, cents))
        .when(kind == "push").then(pl.lit(0, pl.Int64))
        .when(kind == "collect").then(-stake)
    )


def _paragraph() -> pl.Expr:
    p, bet, tie = PARAGRAPHS, pl.col("bet"), pl.col("winner") == "tie"
    return (
        pl.when(pl.col("void")).then(pl.lit(p["void"]))
        .when((bet == "player") & tie).then(pl.lit(p["player on a tie"]))
        .when(bet == "player").then(pl.lit(p["player"]))
        .when((bet == "banker") & tie).then(pl.lit(p["banker on a tie"]))
        .when((bet == "banker") & pl.col("ez") & pl.col("dragon7"))
        .then(pl.lit(p["banker on a dragon 7"]))
        .when(bet == "banker").then(pl.lit(p["banker"]))
        .when(bet == "tie").then(pl.lit(p["tie"]))
        .when(bet.is_in(settlement.DRAGON_BETS)).then(pl.lit(p["dragon bonus"]))
        .when(bet == "dragon7").then(pl.lit(p["dragon 7"]))
        .otherwise(pl.lit(p["panda 8"]))
    )


def _alternatives(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """The other outcomes each wager may be given (module docstring)."""
    stake, bet = pl.col("staked_cents"), pl.col("bet")

    def outcome(label: pl.Expr | str, net: pl.Expr, where: pl.Expr) -> pl.DataFrame:
        text = pl.lit(label) if isinstance(label, str) else label
        return frame.filter(where).select("w", net.alias("low"), net.alias("high"),
                                          text.alias("label"))

    banker_won = pl.when(pl.col("ez")).then(pl.lit("won at 1:1")).otherwise(
        pl.lit("won at 1:1 less its commission"))
    side = [("tie", pl.col("tie_pays")), ("dragon7", pl.col("dragon7_pays")),
            ("panda8", pl.lit(int(ctx.params["panda8_pays"])))]
    tables = ctx.params["dragon_bonus_pay_tables"]
    odds = pl.DataFrame(
        [(letter, int(k)) for letter, table in tables.items()
         for k in sorted(set(table.values()))],
        schema={"dragon_bonus_pay_table": pl.String, "k": pl.Int64}, orient="row")
    dragons = frame.filter(bet.is_in(settlement.DRAGON_BETS)).with_columns(
        pl.col("dragon_bonus_pay_table").cast(pl.String)).join(
        odds, on="dragon_bonus_pay_table")
    return pl.concat([
        outcome("lost", -stake, pl.lit(True)),
        outcome("pushed", pl.lit(0, pl.Int64),
                bet.is_in(["banker", "player", *settlement.DRAGON_BETS])),
        outcome("won at 1:1", stake, bet == "player"),
        outcome(banker_won, stake - _commission(ctx, stake), bet == "banker"),
        *(outcome(pl.format("won at {}:1", odds_), stake * odds_.cast(pl.Int64), bet == name)
          for name, odds_ in side),
        dragons.select("w", (stake * pl.col("k")).alias("low"),
                       (stake * pl.col("k")).alias("high"),
                       pl.format("won at {}:1", "k").alias("label")),
    ]).drop_nulls(["low", "high"])


def build_judged(ctx: GameContext) -> pl.DataFrame:
    found = nets.scopes(ctx)
    frame = settlement.wagers(ctx).filter(pl.col("net_sid").is_not_null()).with_columns(
        pl.col("bet").cast(pl.String))
    owed = _owed(ctx)
    outcome = pl.when(pl.col("void")).then(pl.lit("the round was void")).otherwise(
        settlement.outcome_text())
    frame = frame.with_columns(
        pl.col("wid").cast(pl.Int64).alias("w"),
        (pl.col("void") | (pl.col("judged") & pl.col("expected_kind").is_not_null()))
        .alias("judged"),
        owed.alias("low"), owed.alias("high"), pl.lit(0, pl.Int64).alias("step"),
        _paragraph().alias("paragraph"),
    )
    wagers = frame.select(pl.col("net_sid").alias("sid"), "w", "judged", "low", "high", "step",
                          "paragraph")

    def words(w: pl.Series) -> pl.DataFrame:
        name = pl.format("{} wager of {}", "bet", settlement.dollars(pl.col("staked_cents")))
        return frame.filter(pl.col("w").is_in(w.implode())).select(
            "w", name.alias("name"),
            pl.format("{}: {}, {}", name, outcome, nets.signed(pl.col("low"))).alias("text"))

    return nets.judge(found, wagers, _alternatives(ctx, frame), words)


def judged(ctx: GameContext) -> pl.DataFrame:
    """The baccarat scopes judged, each with what it was owed and its difference
    (`nets.judge`)."""
    return ctx.derived("baccarat.nets", build_judged)
