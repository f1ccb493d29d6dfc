"""Blackjack boxes settled by their net result (format 1.3 `settle_net`): each wager of a
net's scope with what the rules owe it, for BJ707 (`games.nets` judges them).

What a wager is owed is `money.owed`'s, the frame every settlement rule reads: a win at
1:1 ((a)(2)(v)), a natural at the table's blackjack odds ((a)(2)(iii)) within the payout
limit ((a)(2)(vi)), a push, the stake collected, a surrender's half ((f)(1)(i), (ii)),
insurance at the table's insurance odds or collected ((e)(3), (e)(4)), a dead hand's
wagers returned ((i)(3), (i)(4)(ii)) whatever cards it holds. Any other wager whose
outcome is not known (a void round, the dealer or the hand without two cards) leaves its
scope unjudged, as the single-settlement rules leave it.

Presumed amounts (a `wager` row whose `reason` is `vocabulary.PRESUMED`): a double may be
any amount up to the wager of the hand it doubles (the main wager on hand 1, the split
wager on a hand a split made: a double for less is the patron's choice; (d) sets no
amount), a split is the main wager ((c)(1)), insurance any amount up to half the main
wager, to the next chip unit ((e)(2)); the main wager is the holder's hand 1 main wager.

The other outcomes a wager may be given, to find the one wager that explains a difference:
any wager lost; a main, double or split wager pushed or won at 1:1; a main wager won at the
table's blackjack odds, and surrendered where the table allows surrender; insurance won at
its odds.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...ingest import vocabulary as v
from .. import nets
from . import money

SECTION = "9 NYCRR 5324.10"
BOX_PARAGRAPH = f"{SECTION}(a)(2)(v)"
# the paragraph of each owed outcome a wager's settlement follows
PARAGRAPHS = {
    "even money": BOX_PARAGRAPH,
    "natural": f"{SECTION}(a)(2)(iii)",
    "limit": f"{SECTION}(a)(2)(vi)",
    "insurance won": f"{SECTION}(e)(3)",
    "insurance lost": f"{SECTION}(e)(4)",
    "surrender 2-9": f"{SECTION}(f)(1)(i)",
    "surrender ace or ten": f"{SECTION}(f)(1)(ii)",
    "dead": f"{SECTION}(i)(4)(ii)",
    "dead without two cards": f"{SECTION}(i)(3)",
}
ACE, TEN = 1, 10
HOLDER = ["rid", "seat", "player_id"]


def _paragraph() -> pl.Expr:
    outcome, kind = pl.col("outcome"), pl.col("expected_kind")
    capped = (kind == "pay") & pl.col("room_cents").is_not_null() & (
        pl.col("room_cents") < pl.col("due_cents"))
    p = PARAGRAPHS
    return (
        pl.when(pl.col("bet") == "insurance")
        .then(pl.when(outcome == "win").then(pl.lit(p["insurance won"]))
              .otherwise(pl.lit(p["insurance lost"])))
        .when(pl.col("dead") & (pl.col("n_cards").fill_null(0) < 2))
        .then(pl.lit(p["dead without two cards"]))
        .when(pl.col("dead")).then(pl.lit(p["dead"]))
        .when(outcome == "surrendered")
        .then(pl.when(pl.col("up").is_in([ACE, TEN])).then(pl.lit(p["surrender ace or ten"]))
              .otherwise(pl.lit(p["surrender 2-9"])))
        .when(capped).then(pl.lit(p["limit"]))
        .when(outcome == "natural").then(pl.lit(p["natural"]))
        .otherwise(pl.lit(p["even money"]))
    )


def _presumed(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """(rid, seat, hand, bet, player_id) of the wagers of `rids` whose amount was presumed."""
    return (
        ctx.events.lazy()
        .filter((pl.col("event") == "wager") & (pl.col("reason") == v.PRESUMED)
                & pl.col("rid").is_in(rids.implode()))
        .select("rid", "seat", "hand", pl.col("bet").cast(pl.String), "player_id")
        .unique()
        .with_columns(pl.lit(True).alias("presumed"))
        .collect()
    )


def _amounts(ctx: GameContext, owed: pl.DataFrame) -> pl.DataFrame:
    """`owed`'s wagers in scopes with `presumed` and the least and most amount the rules
    allow (`least`, `most`): the stake itself, but for a presumed double, split or
    insurance."""
    owed = owed.with_columns(pl.col("bet").cast(pl.String))
    presumed = _presumed(ctx, owed.get_column("rid").unique())
    mains = owed.filter((pl.col("bet") == "main") & (pl.col("hand") == 1)).select(
        *HOLDER, pl.col("staked_cents").alias("main_cents"))
    # a double is up to the wager of the hand it doubles: the main wager on hand 1, the
    # split wager on a hand a split made (recorded, or itself presumed)
    hands = owed.filter(pl.col("bet").is_in(["main", "split"])).group_by(
        money.HOLDER).agg(pl.col("staked_cents").sum().alias("hand_cents"))
    stake, main, bet = pl.col("staked_cents"), pl.col("main_cents"), pl.col("bet")
    free = pl.col("presumed") & main.is_not_null()
    return (
        owed.join(presumed, on=money.KEY, how="left", nulls_equal=True)
        .join(mains.unique(HOLDER), on=HOLDER, how="left", nulls_equal=True)
        .join(hands, on=money.HOLDER, how="left", nulls_equal=True)
        .with_columns(pl.col("presumed").fill_null(False))
        .with_columns(
            pl.when(free & bet.is_in(["double", "insurance"])).then(pl.lit(1, pl.Int64))
            .when(free & (bet == "split")).then(main).otherwise(stake).alias("least"),
            pl.when(free & (bet == "double")).then(pl.coalesce("hand_cents", main))
            .when(free & (bet == "insurance")).then(money.insurance_limit(main))
            .when(free & (bet == "split")).then(main).otherwise(stake).alias("most"),
        )
        .drop("hand_cents")
    )


def _at_odds(amount: pl.Expr, num: pl.Expr, den: pl.Expr, up: bool) -> pl.Expr:
    """Winnings on `amount` cents at num:den, a part cent down (or `up`)."""
    return (amount * num + (den - 1 if up else 0)) // den


def _owed_range(frame: pl.DataFrame) -> pl.DataFrame:
    """`low`, `high` and `step` of each wager's net over the amounts it may have."""
    # a dead hand's wagers are returned, whatever cards it holds ((i)(3), (i)(4)(ii))
    kind = pl.when(pl.col("dead")).then(pl.lit("push")).otherwise(pl.col("expected_kind"))
    least, most = pl.col("least"), pl.col("most")
    num, den, room = pl.col("odds_num"), pl.col("odds_den"), pl.col("room_cents")
    ranged = pl.col("presumed") & (least < most)

    def capped(cents: pl.Expr) -> pl.Expr:
        return pl.when(room.is_not_null()).then(pl.min_horizontal(cents, room)).otherwise(cents)

    pay_low = pl.when(ranged).then(capped(_at_odds(least, num, den, False))).otherwise(
        pl.col("expected_cents"))
    pay_high = pl.when(ranged).then(capped(_at_odds(most, num, den, True))).otherwise(
        pl.col("expected_max_cents"))
    low = (
        pl.when(kind == "pay").then(pay_low)
        .when(kind == "push").then(pl.lit(0, pl.Int64))
        .when(kind == "collect").then(-most)
        .when(kind == "surrender").then(-pl.col("expected_max_cents"))
    )
    high = (
        pl.when(kind == "pay").then(pay_high)
        .when(kind == "push").then(pl.lit(0, pl.Int64))
        .when(kind == "collect").then(-least)
        .when(kind == "surrender").then(-pl.col("expected_cents"))
    )
    whole_odds = (den == 1) & (room.is_null() | (room >= most * num))
    step = (
        pl.when(~ranged | (kind == "push")).then(pl.lit(0, pl.Int64))
        .when((kind == "pay") & whole_odds).then(num)
        .otherwise(pl.lit(1, pl.Int64))
    )
    return frame.with_columns(low.alias("low"), high.alias("high"), step.alias("step"))


def _name() -> pl.Expr:
    patron = pl.when(pl.col("player_id").is_not_null()).then(
        pl.format(" of patron {}", "player_id")).otherwise(pl.lit(""))
    stake = pl.when(pl.col("presumed")).then(
        pl.format("presumed at {}", money.dollars(pl.col("staked_cents")))).otherwise(
        pl.format("of {}", money.dollars(pl.col("staked_cents"))))
    return pl.format("hand {} {} wager{} {}", "hand", "bet", patron, stake)


def _owed_text() -> pl.Expr:
    low, high = pl.col("low"), pl.col("high")
    owed = pl.when(low == high).then(nets.signed(low)).otherwise(
        pl.format("{} to {}", nets.signed(low), nets.signed(high)))
    outcome = pl.when(pl.col("dead")).then(pl.lit("the hand was declared dead")).otherwise(
        pl.col("outcome_text"))
    return pl.format("{}: {}, {}", "name", outcome, owed)


def _alternatives(frame: pl.DataFrame) -> pl.DataFrame:
    """The other outcomes each wager may be given (module docstring), over its amounts."""
    least, most, bet = pl.col("least"), pl.col("most"), pl.col("bet")
    hand_bet = bet.is_in(money.HAND_BETS)

    def outcome(label: pl.Expr | str, low: pl.Expr, high: pl.Expr,
                where: pl.Expr) -> pl.DataFrame:
        text = pl.lit(label) if isinstance(label, str) else label
        return frame.filter(where).select("w", low.alias("low"), high.alias("high"),
                                          text.alias("label"))

    bj, ins = ("bj_num", "bj_den"), ("ins_num", "ins_den")
    return pl.concat([
        outcome("lost", -most, -least, pl.lit(True)),
        outcome("pushed", pl.lit(0, pl.Int64), pl.lit(0, pl.Int64), hand_bet),
        outcome("won at 1:1", least, most, hand_bet),
        outcome(pl.format("won at {}:{}", *bj),
                _at_odds(least, pl.col(bj[0]), pl.col(bj[1]), False),
                _at_odds(most, pl.col(bj[0]), pl.col(bj[1]), True), bet == "main"),
        outcome("been surrendered", -((most + 1) // 2), -(least // 2),
                (bet == "main") & pl.col("surrender").fill_null(False)),
        outcome(pl.format("won at {}:{}", *ins),
                _at_odds(least, pl.col(ins[0]), pl.col(ins[1]), False),
                _at_odds(most, pl.col(ins[0]), pl.col(ins[1]), True), bet == "insurance"),
    ]).drop_nulls(["low", "high"])


def build_judged(ctx: GameContext) -> pl.DataFrame:
    found = nets.scopes(ctx)
    owed = money.owed(ctx).filter(pl.col("net_sid").is_not_null())
    owed = owed.join(ctx.tables.select("table_id", "surrender"), on="table_id", how="left")
    frame = _owed_range(_amounts(ctx, owed))
    known = pl.col("judged") & pl.col("expected_kind").is_not_null()
    dead = pl.col("dead") & ~pl.col("void").fill_null(False)
    frame = frame.with_columns(pl.col("wid").cast(pl.Int64).alias("w"),
                               (known | dead).alias("judged"), _paragraph().alias("paragraph"))
    wagers = frame.select(pl.col("net_sid").alias("sid"), "w", "judged", "low", "high", "step",
                          "paragraph")

    def words(w: pl.Series) -> pl.DataFrame:
        named = money.with_words(ctx, frame.filter(pl.col("w").is_in(w.implode())))
        return named.with_columns(_name().alias("name")).select(
            "w", "name", _owed_text().alias("text"))

    return nets.judge(found, wagers, _alternatives(frame), words)


def judged(ctx: GameContext) -> pl.DataFrame:
    """The blackjack scopes judged, each with what it was owed and its difference
    (`nets.judge`)."""
    return ctx.derived("blackjack.nets", build_judged)
