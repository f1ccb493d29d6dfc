"""Wagers: timing, increments, EZ-only wagers, settled exactly once.

Rounds of fewer than four cards that are not void are judged by the deal
order only, so these rules skip them; void rounds are judged on their wagers
(BA401-BA403) but their settlement is BA106's, not BA404's.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import replay, settlement
from ..registry import Part, Rule, register

KEY = settlement.KEY


def _judged_on_wagers(ctx: GameContext) -> pl.DataFrame:
    """The rounds whose wagers are judged, with their key."""
    rounds = settlement.judged_rounds(ctx).lazy().filter(~pl.col("deal_only"))
    return rounds.select("rid", *KEY).collect(engine=replay.ENGINE)


def late_wagers(ctx: GameContext) -> pl.DataFrame:
    # (b)(3): no wager made or increased once "no more bets" is called. A round
    # without a no_more_bets row has no moment to judge against.
    after = pl.col("no_more_bets_seq")
    # only a wager placed after it, or raised, can have a row after it: few to look at
    suspects = settlement.wagers(ctx).filter(
        ~pl.col("deal_only") & ((pl.col("wager_seq") > after) | (pl.col("wager_rows") > 1))
    )
    late = (
        settlement.wager_rows(ctx)
        .join(
            suspects.select("rid", "seat", "bet", *KEY, after, "wager_seq"),
            on=["rid", "seat", "bet"], how="inner", maintain_order="left",
        )
        .filter(pl.col("seq") > after)
        # a row after the wager's first one raises it
        .with_columns((pl.col("seq") > pl.col("wager_seq")).alias("raise"))
    )
    what = pl.when(pl.col("raise")).then(pl.lit("raised by")).otherwise(pl.lit("placed for"))
    return late.select(
        *KEY,
        "seq",
        pl.format(
            'Seat {}\'s {} wager was {} {} at seq {}, after "no more bets" at seq {}.',
            "seat",
            "bet",
            what,
            settlement.dollars(pl.col("amount_cents")),
            "seq",
            "no_more_bets_seq",
        ).alias("message"),
        pl.format("no wager after no_more_bets (seq {})", "no_more_bets_seq").alias("expected"),
        pl.format(
            "{} wager {} at seq {}", "bet", settlement.dollars(pl.col("amount_cents")), "seq"
        ).alias("observed"),
    )


def off_step_wagers(ctx: GameContext) -> pl.DataFrame:
    # (d)(2): "Wagers shall be accepted in $5 increments only"; each wager row
    # (a first stake or a raise) is a placement of chips and must be on the grid.
    step = int(ctx.params["wager_step_cents"])
    rows = (
        settlement.wager_rows(ctx)
        .filter(pl.col("amount_cents") % step != 0)
        .join(_judged_on_wagers(ctx), on="rid", how="inner", maintain_order="left")
    )
    return rows.select(
        *KEY,
        "seq",
        pl.format(
            "Seat {}'s {} wager of {} is not a multiple of {}.",
            "seat",
            "bet",
            settlement.dollars(pl.col("amount_cents")),
            settlement.dollars(pl.lit(step)),
        ).alias("message"),
        pl.format("a multiple of {}", settlement.dollars(pl.lit(step))).alias("expected"),
        settlement.dollars(pl.col("amount_cents")).alias("observed"),
    )


def ez_wagers_off_ez(ctx: GameContext) -> pl.DataFrame:
    # (b)(1)(v), (vi): dragon 7 and panda 8 insurance exist only "if the table is
    # designated for play as an EZ baccarat table".
    wagers = settlement.wagers(ctx).filter(
        ~pl.col("deal_only") & ~pl.col("ez") & pl.col("bet").is_in(settlement.EZ_ONLY_BETS)
    )
    return wagers.select(
        *KEY,
        pl.col("wager_seq").alias("seq"),
        pl.format(
            "Seat {} wagered {} on {} at {}, which is not an EZ baccarat table.",
            "seat",
            settlement.dollars(pl.col("staked_cents")),
            "bet",
            "table_id",
        ).alias("message"),
        pl.lit("dragon 7 and panda 8 insurance only on an EZ table").alias("expected"),
        pl.format("{} wager on a non-EZ table", "bet").alias("observed"),
    )


def _extra_net(kind: pl.Expr, cents: pl.Expr) -> pl.Expr:
    """What a settlement row beyond the one owed hands the patron: a pay or a push gives, a
    collect takes."""
    return pl.when(kind == "collect").then(-cents).otherwise(cents)


def _unsettled(ctx: GameContext) -> pl.DataFrame:
    # a wager settled by a net (format 1.3) has no settlement of its own: BA509's
    wagers = settlement.wagers(ctx).filter(
        ~pl.col("void") & ~pl.col("deal_only") & (pl.col("n_settled") == 0)
        & pl.col("net_sid").is_null()
    )
    owed = pl.col("expected_net")
    return wagers.select(
        *KEY,
        pl.col("wager_seq").alias("seq"),
        pl.format(
            "Seat {}'s {} wager of {} was never settled (no collect, pay or push) by round_end.",
            "seat",
            "bet",
            settlement.dollars(pl.col("staked_cents")),
        ).alias("message"),
        pl.lit("one collect, pay or push").alias("expected"),
        pl.lit("none").alias("observed"),
        # money at stake: what the missing settlement owed (+winnings, or -stake not taken)
        pl.when(owed != 0).then(owed).alias("amount_cents"),
    )


# A wager settled a second time is a check of its own: it needs each settlement recorded
# as a row of its own. One row per wager (a wagers export) records a second collect as one
# collect of twice the amount (a payout rule's), but a wager with no settlement, or a
# settlement with no wager, as plainly as any (export-profiles-v1 1.1, Coverage)
SETTLED_AGAIN = Part("again", "a wager settled a second time", ("settlements",))


def _extra_settlements(ctx: GameContext) -> pl.DataFrame:
    rows = settlement.settlements(ctx)
    rounds = (
        settlement.judged_rounds(ctx)
        .lazy()
        .filter(~pl.col("void") & ~pl.col("deal_only"))
        .select(KEY)
        .collect(engine=replay.ENGINE)
    )
    extra = rows.filter(
        pl.col("event").is_in(settlement.SETTLE_EVENTS) & (~pl.col("wagered") | (pl.col("nth") > 1))
    ).join(rounds, on=KEY, how="semi")
    verb = (
        pl.col("event")
        .cast(pl.String)
        .replace({"pay": "paid", "push": "pushed", "collect": "collected"})
    )
    message = (
        pl.when(pl.col("wagered"))
        .then(
            pl.format(
                "Seat {}'s {} wager was settled again: {} {} at seq {} (settlement {}).",
                "seat",
                "bet",
                verb,
                settlement.dollars(pl.col("amount_cents")),
                "seq",
                "nth",
            )
        )
        .otherwise(
            pl.format(
                "Seat {} was {} {} on {} at seq {} without a {} wager in the round.",
                "seat",
                verb,
                settlement.dollars(pl.col("amount_cents")),
                "bet",
                "seq",
                "bet",
            )
        )
    )
    return extra.select(
        *KEY,
        "seq",
        message.alias("message"),
        pl.when(pl.col("wagered"))
        .then(pl.lit("one settlement per wager"))
        .otherwise(pl.lit("no settlement without a wager"))
        .alias("expected"),
        pl.format("{} {}", "event", settlement.dollars(pl.col("amount_cents"))).alias("observed"),
        (-_extra_net(pl.col("event"), pl.col("amount_cents"))).alias("amount_cents"),
        SETTLED_AGAIN.where(pl.col("wagered")),
    )


def not_settled_once(ctx: GameContext) -> pl.DataFrame:
    return pl.concat([_unsettled(ctx), _extra_settlements(ctx)], how="diagonal_relaxed")


LATE = register(
    Rule(
        "BA401",
        "wager-after-no-more-bets",
        "Wager made or raised after no more bets",
        "9 NYCRR 5324.20(b)(3)",
        "error",
        "baccarat",
        "A wager row recorded after the round's no_more_bets: a new wager, or a raise of a "
        "seat's wager on the same bet. One finding per late row. (A withdrawal leaves no row in "
        "the log and cannot be seen.)",
        "round 4: no_more_bets (seq 30), then wager seat 2 player $25 (seq 31).",
        "round 4: wager seat 2 player $25 (seq 29), then no_more_bets (seq 30).",
        check=late_wagers,
        needs=("wagers", "wager_timing"),
    )
)
STEP = register(
    Rule(
        "BA402",
        "wager-not-in-5-dollar-steps",
        "Wager not in $5 increments",
        "9 NYCRR 5324.20(d)(2)",
        "error",
        "baccarat",
        "A wager row (a stake or a raise) whose amount is not a multiple of $5 (d)(2), on any bet.",
        "wager seat 1 banker $27.",
        "wager seat 1 banker $25.",
        check=off_step_wagers,
        needs=("wagers",),
    )
)
EZ_ONLY = register(
    Rule(
        "BA403",
        "ez-wager-on-non-ez-table",
        "Dragon 7 or panda 8 wager on a non-EZ table",
        "9 NYCRR 5324.20(b)(1)(v)",
        "error",
        "baccarat",
        "A dragon7 or panda8 insurance wager accepted at a table the house rules do not "
        "designate EZ (b)(1)(v), (vi). One finding per seat and bet in a round; how it was "
        "settled is not judged by the payout rules.",
        "BAC-01 (ez = false): wager seat 3 dragon7 $5.",
        "BAC-02 (ez = true): wager seat 3 dragon7 $5.",
        check=ez_wagers_off_ez,
        needs=("wagers",),
        also=("9 NYCRR 5324.20(b)(1)(vi)",),
    )
)
ONCE = register(
    Rule(
        "BA404",
        "wager-not-settled-once",
        "Wager not settled exactly once",
        "9 NYCRR 5324.20(g)(2)",
        "error",
        "baccarat",
        "Each wager (a seat's wager rows on one bet in a round) must get exactly one collect, "
        "pay or push: a wager with none is reported at its wager row, each further settlement "
        "and each settlement of a seat and bet without a wager at the settlement row. Void "
        "rounds are BA106's. The payout rules judge only wagers settled exactly once.",
        "seat 2 wagers $25 on player; the player wins; pay seat 2 player $25 is recorded twice.",
        "seat 2 wagers $25 on player; the player wins; one pay seat 2 player $25.",
        check=not_settled_once,
        needs=("wagers", "single_settlements"),
        parts=(SETTLED_AGAIN,),
    )
)
