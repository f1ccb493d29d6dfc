"""Every baccarat wager and every settlement row, matched: what each wager was owed and got.

Built once per audit from the replayed rounds (`replay.rounds`) and the house
settings, so that the wager, payout, commission and collection rules all judge
the same numbers. Money is integer cents throughout.

`judged_rounds(ctx)`: `replay.rounds` with `judged` and `deal_only` (below).

`money_rows(ctx)`: every wager, collect, pay, push, vig and vig_settle row of a round, in
log order: rid, table_id, shoe_id, round, seq, event, seat, bet, amount_cents, mode.

`wagers(ctx)`: one row per table_id, shoe_id, round, seat, bet with a wager row (in no
particular order), with `wid` (`wager_id`):
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
  net_sid        the `nets.scopes` row of the settle_net (format 1.3) that settles the
                 wager, null where none does: the single-settlement rules leave such a
                 wager to BA509
  plus rid, winner, p_points, b_points, dragon7, panda8, void, end_seq and the table settings

`settlements(ctx)`: one row per collect/pay/push/vig/vig_settle row, in log order:
table_id, shoe_id, round, seq, event, seat, bet, amount_cents, mode; `wagered` says
whether the seat has a wager on that bet in the round (for vig: a banker wager; false
for vig_settle); `nth` numbers the settlements of one seat and bet in the round (1, 2,
...; null for vig rows).

`seat_commission(ctx)`: one row per table_id, shoe_id, round, seat of a judged,
non-void round with banker winnings (on a wager no net settles) or a vig row, by round
and seat: won_cents (the
winnings its banker wagers were owed), vig_cents (its vig rows, summed), vig_seq (the
first), banker_settled_seq (its banker wager's first settlement row), expected_vig_cents
at the table's rate rounded down to the rate's step ((d)(2)(ii)), and
`vig_at_<percent>` for each allowed rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ...audit_context import GameContext
from ...ingest import vocabulary
from ...series import placed
from .. import nets
from ..sorted_keys import marked_sorted, sorted_by
from . import replay, tableau

KEY = ["table_id", "shoe_id", "round"]
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


def outcome_text() -> pl.Expr:
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


# The kinds as small integer codes while they are decided and priced: when/then chains
# and comparisons of integers cost a fraction of those of strings or enums. The words
# are looked up from the codes once, at the end (`kind_words`).
KIND_CODES = {kind: code for code, kind in enumerate(SETTLE_EVENTS)}


def _kind(name: str) -> pl.Expr:
    return pl.lit(KIND_CODES[name], pl.Int8)


def _win_or_lose(won: pl.Expr) -> pl.Expr:
    return pl.when(won).then(_kind("pay")).otherwise(_kind("collect"))


def _bet_is(*names: str) -> pl.Expr:
    """Whether the wager's bet (its `bet_code`, see `bet_code`) is one of `names`."""
    codes = [BET_CODES[name] for name in names]
    code = pl.col("bet_code")
    return code == codes[0] if len(codes) == 1 else code.is_in(codes)


def _expected(params: Mapping[str, Any]) -> list[pl.Expr]:
    """Expected kind (its code, `kind_code`) and odds per (b)(1), (d), given the round's
    dragon bonus odds.

    Bets are compared by their codes (`bet_code`, and the round's `winner_code`): the
    bet column is categorical, and comparing it with a string converts every row.
    """
    winner = pl.col("winner_code")
    tie, ez = winner == BET_CODES["tie"], pl.col("ez")
    dragon = (
        pl.when(_bet_is("dragon_player"))
        .then(pl.col("dragon_player_odds"))
        .otherwise(pl.col("dragon_banker_odds"))
    )
    pushed = tie | (_bet_is("banker") & ez & pl.col("dragon7"))
    kind = (
        pl.when(~pl.col("judged"))
        .then(pl.lit(None, pl.Int8))
        # (b)(1)(i)(c), (ii)(c): banker and player wagers are returned on a tie, and
        # (b)(1)(i)(a), (c): at EZ baccarat a banker wager is returned on a dragon 7
        .when(_bet_is("banker", "player") & pushed)
        .then(_kind("push"))
        .when(_bet_is("banker", "player"))
        .then(_win_or_lose(winner == pl.col("bet_code")))
        .when(_bet_is("tie"))  # (b)(1)(iii)
        .then(_win_or_lose(tie))
        .when(_bet_is(*DRAGON_BETS))  # (b)(1)(iv)
        .then(
            pl.when(dragon > 0)
            .then(_kind("pay"))
            .when(dragon == tableau.DRAGON_PUSH)
            .then(_kind("push"))
            .when(dragon == tableau.DRAGON_LOSS)
            .then(_kind("collect"))
        )
        .when(_bet_is("dragon7") & ez)  # (b)(1)(v)
        .then(_win_or_lose(pl.col("dragon7")))
        .when(_bet_is("panda8") & ez)  # (b)(1)(vi)
        .then(_win_or_lose(pl.col("panda8")))
    )
    odds = (
        pl.when(_bet_is("player"))
        .then(pl.lit(int(params["player_pays"])))
        .when(_bet_is("banker"))
        .then(pl.lit(int(params["banker_pays"])))
        .when(_bet_is("tie"))
        .then(pl.col("tie_pays").cast(pl.Int64))
        .when(_bet_is(*DRAGON_BETS))
        .then(dragon.cast(pl.Int64))
        .when(_bet_is("dragon7"))
        .then(pl.col("dragon7_pays").cast(pl.Int64))
        .when(_bet_is("panda8"))
        .then(pl.lit(int(params["panda8_pays"])))
    )
    return [kind.alias("kind_code"), odds.alias("odds")]


def kind_words(code: pl.Expr) -> pl.Expr:
    """The kinds (strings) of kind codes (`KIND_CODES`); null for a null code."""
    return pl.lit(pl.Series(SETTLE_EVENTS, dtype=pl.String)).gather(code)


def _net(kind: pl.Expr, cents: str, pay: Any, push: Any, collect: Any) -> pl.Expr:
    """The patron's result of a settlement of `kind` for `cents`, given the stake; `pay`,
    `push` and `collect` are how the kinds read in `kind` (words or codes)."""
    amount = pl.col(cents)
    return (
        pl.when(kind == pay)
        .then(amount)
        .when(kind == push)
        .then(amount - pl.col("staked_cents"))
        .when(kind == collect)
        .then(-amount)
    )


def _expected_net() -> pl.Expr:
    code = KIND_CODES
    return _net(pl.col("kind_code"), "expected_cents", code["pay"], code["push"], code["collect"])


def _settled_net() -> pl.Expr:
    return _net(pl.col("settled_kind"), "settled_cents", "pay", "push", "collect")


# A round's seat and bet as one integer: the money frames group and join on it several
# times faster than on rid, seat and bet. Seats are below 2**16 (a seat of the layout);
# bets are the vocabulary's (another bet makes its round unauditable).
SEAT_SPAN = 2**16
BET_CODES = {bet: code for code, bet in enumerate(vocabulary.BETS)}


def bet_code(dtype: pl.DataType) -> pl.Expr:
    """The code (`BET_CODES`) of the row's `bet`, a column of `dtype`.

    A categorical bet is looked up by its category's id in a table of the bets' ids:
    matching the strings of every row costs several times more. Ingest admits only
    the vocabulary's bets.
    """
    bet = pl.col("bet")
    if not isinstance(dtype, pl.Categorical):
        return bet.replace_strict(BET_CODES, return_dtype=pl.Int64)
    ids = pl.Series(list(BET_CODES), dtype=pl.String).cast(dtype).to_physical()
    table = placed(pl.Series(list(BET_CODES.values()), dtype=pl.Int64), ids, ids.max() + 1)
    return pl.lit(table).gather(bet.to_physical())


def wager_id(code: pl.Expr) -> pl.Expr:
    """`wid`: the rid, seat and bet (its `code`, see `bet_code`) of a row as one integer."""
    return ((pl.col("rid") * SEAT_SPAN + pl.col("seat")) * len(BET_CODES) + code).alias("wid")


MONEY_EVENTS = ("wager", *SETTLE_EVENTS, *COMMISSION_EVENTS)


def money_rows(ctx: GameContext) -> pl.DataFrame:
    """Every wager, settlement and commission row of a round, in log order."""
    return ctx.derived(
        "baccarat.money_rows",
        lambda ctx: replay.rows_of(
            ctx, MONEY_EVENTS, *KEY, "seq", "event", "seat", "bet", "amount_cents", "mode"
        ),
    )


def wager_rows(ctx: GameContext) -> pl.DataFrame:
    """Every wager row of a round, in log order: rid, seq, seat, bet, amount_cents."""
    return ctx.derived(
        "baccarat.wager_rows",
        lambda ctx: money_rows(ctx)
        .filter(pl.col("event") == "wager")
        .select("rid", "seq", "seat", "bet", "amount_cents"),
    )


# A row's place among the rows of its wager: the wager rows, then the settlements,
# then the vigs charged on it; a vig_settle pays off commission, not a wager.
WAGER, SETTLED, VIG, VIG_SETTLE = range(4)


def _class() -> pl.Expr:
    event = pl.col("event")
    return (
        pl.when(event == "wager").then(WAGER)
        .when(event.is_in(SETTLE_EVENTS)).then(SETTLED)
        .when(event == "vig").then(VIG)
        .otherwise(VIG_SETTLE)
    )


def _same(column: str, by: int = 1) -> pl.Expr:
    """Whether the row `by` rows before (negative: after) has the same non-null `column`."""
    return (pl.col(column) == pl.col(column).shift(by)).fill_null(False)


def _wager_order(rows: pl.DataFrame) -> pl.Expr:
    """The sort key of the money rows: by wager (`wid`), then class. Rows without a wager
    id (a vig_settle) sort first and match nothing.

    Where the rounds, seats and bets of the part number few enough, the key is the
    same order in 32 bits, which sorts about a third faster than 64: a wid orders rows
    by rid, seat and bet code (the seats are below `SEAT_SPAN`), and so does a wager's
    place among the part's rounds, seats and bets.
    """
    wide = pl.col("wid").fill_null(-1) * 4 + pl.col("class")
    rid, seat = rows.get_column("rid"), rows.get_column("seat")
    lowest, first_seat, last_seat = rid.min(), seat.min(), seat.max()
    if lowest is None or first_seat is None or last_seat is None:
        return wide
    seats = last_seat - first_seat + 1  # type: ignore[operator]
    rounds = rid.max() - lowest + 1  # type: ignore[operator]
    if first_seat < 0 or last_seat >= SEAT_SPAN:  # type: ignore[operator]
        return wide
    if 4 + rounds * seats * len(BET_CODES) * 4 >= 2**32:
        return wide
    # ((rid - lowest) * seats + seat - first_seat) * bets + code, from the wid
    bets = len(BET_CODES)
    wager = (
        pl.col("wid")
        + pl.col("rid") * ((seats - SEAT_SPAN) * bets)
        - (lowest * seats + first_seat) * bets
    )
    return (wager.fill_null(-1) * 4 + pl.col("class") + 4).cast(pl.UInt32)


def _build_by_wager(ctx: GameContext) -> pl.DataFrame:
    """The money rows sorted by wager (`wid`) and class, stably: the rows of one class of
    one wager form a run in log order. Each row keeps `_i`, its place in log order.

    Nearly every wager has one wager row and one settlement, so grouping or joining by
    wager builds about one group per row; on this order a wager's totals and its
    settlements are read off the run boundaries in a few passes instead. A vig is matched
    to the seat's banker wager.
    """
    money = money_rows(ctx)
    code = (
        pl.when(pl.col("event") == "vig")
        .then(pl.lit(BET_CODES["banker"], pl.Int64))
        .otherwise(bet_code(money.schema["bet"]))
    )
    rows = money.select(
        pl.int_range(pl.len()).alias("_i"), "rid", "seq", "event", "seat", "bet",
        "amount_cents", wager_id(code), _class().alias("class"),
    )
    rows = rows.sort(_wager_order(rows), maintain_order=True)
    position = pl.int_range(pl.len())
    run_start = ~(_same("wid") & _same("class"))
    amount = pl.col("amount_cents").fill_null(0)
    first_of_wager = ~_same("wid")
    return rows.with_columns(
        position.alias("_p"),
        run_start.alias("run_start"),
        (position - pl.when(run_start).then(position).forward_fill()).alias("in_run"),
        (amount.cum_sum() - amount).alias("sum_before"),
        # the first class of a wager's rows is WAGER when the seat wagered on the bet
        (pl.when(first_of_wager).then(pl.col("class") == WAGER).forward_fill()
         & pl.col("wid").is_not_null()).alias("wagered"),
    )


def _by_wager(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("baccarat.money_by_wager", _build_by_wager)


def _wager_runs(ctx: GameContext) -> pl.DataFrame:
    """One row per wager (rid, seat, bet with wager rows): its stake, first row and count,
    and its settlement rows' count and first one (the run right after its wager rows)."""
    by_wager = _by_wager(ctx)
    total = by_wager.get_column("amount_cents").fill_null(0).sum()
    length = pl.col("_p").shift(-1, fill_value=by_wager.height) - pl.col("_p")
    settled = _same("wid", -1) & (pl.col("class").shift(-1) == SETTLED).fill_null(False)

    def of_settlements(value: pl.Expr) -> pl.Expr:
        return pl.when(settled).then(value.shift(-1))

    return (
        by_wager.lazy()
        .filter("run_start")
        .select(
            "wid", "rid", "seat", "bet", "class",
            (pl.col("sum_before").shift(-1, fill_value=total) - pl.col("sum_before"))
            .alias("staked_cents"),
            pl.col("seq").alias("wager_seq"),
            length.alias("wager_rows"),
            of_settlements(length).fill_null(0).alias("n_settled"),
            of_settlements(pl.col("event")).alias("settled_kind"),
            of_settlements(pl.col("amount_cents")).alias("settled_cents"),
            of_settlements(pl.col("seq")).alias("settled_seq"),
        )
        .filter(pl.col("class") == WAGER)
        .drop("class")
        .collect(engine=replay.ENGINE)
    )


def build_wagers(ctx: GameContext) -> pl.DataFrame:
    wagered = _wager_runs(ctx)
    settings = [c for c in ctx.tables.columns if c != "table_id"]
    # the dragon bonus odds of each side depend on the round only: decided once a round
    dragon = [
        _dragon_odds(side, ctx.params).alias(f"dragon_{side}_odds") for side in ("player", "banker")
    ]
    winner_code = pl.col("winner").replace_strict(BET_CODES, default=None, return_dtype=pl.Int64)
    rounds = judged_rounds(ctx).select(
        "rid", *KEY, *ROUND_COLUMNS, "judged", "deal_only", *settings, *dragon,
        winner_code.alias("winner_code"),
    )
    # a wager row carries its seat and bet (ingest), so its wid, and the code in it, is known
    wagered = marked_sorted(wagered, "rid").with_columns(
        (pl.col("wid") % len(BET_CODES)).alias("bet_code")
    )
    frame = (
        replay.with_columns_of(wagered, rounds, "rid")
        .lazy()
        .with_columns(_expected(ctx.params))
        .with_columns(
            kind_words(pl.col("kind_code")).alias("expected_kind"),
            pl.when(pl.col("kind_code") == KIND_CODES["pay"])
            .then(pl.col("staked_cents") * pl.col("odds"))
            .when(pl.col("kind_code").is_not_null())
            .then(pl.col("staked_cents"))
            .alias("expected_cents"),
        )
        .with_columns(
            _expected_net().alias("expected_net"),
            _settled_net().alias("settled_net"),
        )
    )
    dropped = ["dragon_player_odds", "dragon_banker_odds", "winner_code", "bet_code", "kind_code"]
    priced = ["expected_kind", "odds", "expected_cents", "expected_net", "settled_net"]
    frame = frame.select(*KEY, pl.exclude(*KEY, *dropped, *priced), *priced).collect(
        engine=replay.ENGINE
    )
    # (1.3) the net that settles the wager, where one does: BA509's
    return frame.with_columns(nets.scope_ids(ctx, frame))


def wagers(ctx: GameContext) -> pl.DataFrame:
    """Every wager with what it was owed and how it was settled (module docstring)."""
    return ctx.derived("baccarat.wagers", build_wagers)


def build_settlements(ctx: GameContext) -> pl.DataFrame:
    by_wager = _by_wager(ctx)
    # each row's `wagered` and, for a settlement, its place among its wager's
    # settlements, put back at the row's place in log order
    n = by_wager.height
    places = by_wager.get_column("_i")
    wagered = pl.Series("wagered", [], pl.Boolean).extend_constant(False, n)
    settled = by_wager.get_column("class") == SETTLED
    wagered = wagered.scatter(places, by_wager.get_column("wagered"))
    in_run = by_wager.get_column("in_run").filter(settled).cast(pl.Int64)
    nth = placed((in_run + 1).alias("nth"), places.filter(settled), n)
    return (
        money_rows(ctx)
        .with_columns(wagered, nth)
        .filter(pl.col("event") != "wager")
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


def _seats_in_span(frame: pl.DataFrame) -> bool:
    """Whether every seat of `frame` is known and below `SEAT_SPAN`: then a round and
    seat are one integer (`_seat_key`)."""
    seat = frame.get_column("seat")
    if seat.null_count() or seat.is_empty():
        return seat.is_empty()
    return seat.min() >= 0 and seat.max() < SEAT_SPAN  # type: ignore[operator]


def _seat_key() -> pl.Expr:
    return (pl.col("rid") * SEAT_SPAN + pl.col("seat")).alias("seat_key")


def _with_vigs(won: pl.DataFrame, vigs: pl.DataFrame) -> pl.DataFrame:
    """The seats of `won` and of `vigs` (rid, seat: the vig rows' totals and first seq put
    alongside), in order of round and seat, without those that neither won nor paid."""
    per_seat = [
        pl.col("amount_cents").sum().alias("vig_cents"), pl.col("seq").min().alias("vig_seq")
    ]
    some = (pl.col("won_cents") > 0) | (pl.col("vig_cents") > 0)
    zeros = [pl.col("won_cents").fill_null(0), pl.col("vig_cents").fill_null(0)]
    if not (_seats_in_span(won) and _seats_in_span(vigs)):
        return (
            won.join(
                vigs.group_by("rid", "seat").agg(per_seat),
                on=["rid", "seat"], how="full", coalesce=True,
            )
            .with_columns(zeros)
            .filter(some)
            .sort("rid", "seat")
        )
    # On one integer key the sort takes a fraction of the time it takes on two; and the
    # seats that won, with their vigs, and the seats with vigs alone (a left join and an
    # anti join on a sorted key) take about half the time of one full join.
    key = pl.col("seat_key")
    won = marked_sorted(won.select(_seat_key(), "won_cents", "banker_settled_seq"), "seat_key")
    # the vig rows are few: sorted by round and seat, they are grouped by runs of the key
    vigs = (
        sorted_by(vigs.select(_seat_key(), "amount_cents", "seq"), "seat_key")
        .group_by("seat_key", maintain_order=True)
        .agg(per_seat)
    )
    return (
        pl.concat(
            [
                won.join(vigs, on="seat_key", how="left", maintain_order="left"),
                vigs.join(won, on="seat_key", how="anti"),
            ],
            how="diagonal",
        )
        .with_columns(zeros)
        .filter(some)
        .sort("seat_key")
        .select(
            (key // SEAT_SPAN).alias("rid"), (key % SEAT_SPAN).alias("seat"),
            "won_cents", "banker_settled_seq", "vig_cents", "vig_seq",
        )
    )


def build_seat_commission(ctx: GameContext) -> pl.DataFrame:
    paid = pl.col("expected_kind") == "pay"
    # a seat has one banker wager per round (a wager is its rid, seat and bet), so its
    # winnings are that wager's: there is nothing to add up
    # a banker wager settled by a net had its commission deducted in the net: BA509's
    won = (
        wagers(ctx)
        .lazy()
        .filter(pl.col("judged") & (pl.col("bet") == "banker") & pl.col("net_sid").is_null())
        .select(
            "rid",
            "seat",
            pl.when(paid).then(pl.col("expected_cents")).otherwise(0).fill_null(0)
            .alias("won_cents"),
            pl.col("settled_seq").alias("banker_settled_seq"),
        )
        .collect(engine=replay.ENGINE)
    )
    vigs = (
        settlements(ctx)
        .lazy()
        .filter(pl.col("event") == "vig")
        .select("rid", "seat", "amount_cents", "seq")
        .collect(engine=replay.ENGINE)
    )
    settings = [c for c in ctx.tables.columns if c != "table_id"]
    rounds = judged_rounds(ctx).lazy().filter(pl.col("judged")).select(
        "rid", *KEY, "end_seq", *settings
    ).collect(engine=replay.ENGINE)
    # the seats are kept and put in order before the rounds' columns are copied to them
    frame = replay.with_columns_of(_with_vigs(won, vigs), rounds, "rid", how="inner")
    rates = [int(p) for p in ctx.params["commission_percents"]]
    return frame.with_columns(
        expected_vig(pl.col("won_cents"), pl.col("commission_percent"), ctx.params).alias(
            "expected_vig_cents"
        ),
        *[expected_vig(pl.col("won_cents"), r, ctx.params).alias(f"vig_at_{r}") for r in rates],
    )


def seat_commission(ctx: GameContext) -> pl.DataFrame:
    """Commission owed and recorded per seat and round (module docstring)."""
    return ctx.derived("baccarat.seat_commission", build_seat_commission)
