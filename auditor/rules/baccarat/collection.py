"""Collection order (g)(2)-(3).

(g)(2): collect every losing wager first; then pay the winners and mark or
collect commission in one of four orders, always from the highest numbered
winning seat down:
  (i)   pay every seat, then commission every seat;
  (ii)  commission every seat, then pay every seat;
  (iii) seat by seat: pay, then its commission;
  (iv)  seat by seat: commission, then pay.
Each order is a sort key over a round's pay and vig rows; a round follows a
procedure when its rows, in seq order, never go back on that key. Several
procedures can fit one round (one winner without commission fits all four),
and a round is consistent with its pit's procedure when that one fits.
Pushes have no place in the order. At EZ tables there is no commission
((g)(2) "with the exception of an EZ baccarat table"): only the pays count,
from the highest seat down, which every procedure allows; a vig row there is
BA602's.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import runs
from ...games.baccarat import replay, settlement
from ...games.sorted_keys import sorted_by
from ...house import HouseRules
from ..registry import Rule, register

KEY = settlement.KEY
PROCEDURES = ("i", "ii", "iii", "iv")


def _keys() -> dict[str, pl.Expr]:
    """Each procedure's sort key over pay/vig rows (seats are below 1000: keys below 2000)."""
    pay_first = pl.when(pl.col("event") == "pay").then(0).otherwise(1)
    vig_first = 1 - pay_first
    down = 999 - pl.col("seat")
    return {
        "i": pay_first * 1000 + down,
        "ii": vig_first * 1000 + down,
        "iii": down * 2 + pay_first,
        "iv": down * 2 + vig_first,
    }


# room for every key value under one round id, so that (rid, key) is one number
ROUND_SPAN = 2000


def _out_of_place(key: pl.Expr) -> pl.Expr:
    """Whether a later row of the row's round has a lower key, over rows sorted by round
    and seq. Such a row is not where the procedure puts it: the first of them is where
    the round departs from the procedure, and a round without any fits it.

    With the round id above the key, one running minimum from the end serves every round
    at once: the rows of later rounds rank above all of this round's.
    """
    ranked = pl.col("rid") * ROUND_SPAN + key
    lowest_after = ranked.cum_min(reverse=True).shift(-1)
    return (ranked > lowest_after).fill_null(False)


def _first_out(procedure: str) -> pl.Expr:
    """`bad_<procedure>`, read on the first row of each round: the seq of the round's
    first row out of place, over rows sorted by round and seq.

    Each row takes the seq of the first out-of-place row from it on, filled back from
    that row; a value filled from a later round's row is dropped.
    """
    out = pl.col(f"out_{procedure}")
    later_seq = pl.when(out).then(pl.col("seq")).backward_fill()
    same_round = pl.when(out).then(pl.col("rid")).backward_fill() == pl.col("rid")
    return pl.when(same_round).then(later_seq).alias(f"bad_{procedure}")


def build_order(ctx: GameContext) -> pl.DataFrame:
    """One row per judged round with pay/vig rows: for each procedure p, `fits_<p>` and
    `bad_<p>` (the first row not where p puts it), and the pit's configured `procedure`."""
    rounds = (
        settlement.judged_rounds(ctx).lazy().filter(pl.col("judged"))
        .select("rid", *KEY, "ez", "pit")
        .collect(engine=replay.ENGINE)
    )
    # the pay and vig rows from the money rows, a small part of the event frame; a
    # round's rows in log order are in seq order, so sorting by round alone suffices
    pays = (
        settlement.money_rows(ctx)
        .lazy()
        .filter(pl.col("event").is_in(["pay", "vig"]))
        .select("rid", "seq", "event", "seat")
        .collect(engine=replay.ENGINE)
    )
    rows = sorted_by(
        replay.with_columns_of(pays, rounds.select("rid", "ez"), "rid", how="inner")
        .filter((pl.col("event") == "pay") | ~pl.col("ez")),
        "rid",
    ).with_columns(_out_of_place(key).alias(f"out_{p}") for p, key in _keys().items())
    per_round = (
        rows.select("rid", runs.starts(["rid"]).alias("first"), *map(_first_out, PROCEDURES))
        .filter("first")
        .select(
            "rid",
            *[pl.col(f"bad_{p}").is_null().alias(f"fits_{p}") for p in PROCEDURES],
            *[f"bad_{p}" for p in PROCEDURES],
        )
    )
    configured = ctx.house.collection_procedure
    return replay.with_columns_of(rounds, per_round, "rid", how="inner").with_columns(
        pl.col("pit")
        .cast(pl.String)
        .replace_strict(configured, default=None, return_dtype=pl.String)
        .alias("procedure")
    )


def order(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("baccarat.collection_order", build_order)


def _pick(by: pl.Expr, prefix: str) -> pl.Expr:
    chain = pl.when(by == PROCEDURES[0]).then(pl.col(f"{prefix}{PROCEDURES[0]}"))
    for p in PROCEDURES[1:]:
        chain = chain.when(by == p).then(pl.col(f"{prefix}{p}"))
    return chain


def _fitting() -> pl.Expr:
    """The procedures a round fits: "procedure (ii), (iv)", or "no (g)(2) procedure"."""
    names = [pl.when(pl.col(f"fits_{p}")).then(pl.lit(f"({p})")) for p in PROCEDURES]
    listed = pl.concat_str(names, separator=", ", ignore_nulls=True)
    return pl.when(listed == "").then(pl.lit("no (g)(2) procedure")).otherwise(
        pl.format("procedure {}", listed)
    )


def paid_before_collecting(ctx: GameContext) -> pl.DataFrame:
    # (g)(2): "the dealer first shall collect each losing wager"
    rounds = settlement.judged_rounds(ctx).lazy().filter(pl.col("judged")).select("rid")
    rows = settlement.settlements(ctx)
    # the rows are in log order, so a round's last collect is its highest seq; only the
    # round and seq of the rows are read, and the whole rows of the few early ones copied
    per_round = (
        rows.lazy()
        .filter(pl.col("event") == "collect")
        .select("rid", "seq")
        .join(rounds, on="rid", how="semi")
        .group_by("rid")
        .agg(pl.col("seq").last().alias("last_collect"))
    )
    early_at = (
        rows.lazy()
        .with_row_index("at")
        .filter(pl.col("event").is_in(["pay", "vig"]))
        .select("at", "rid", "seq")
        .join(per_round, on="rid")
        .filter(pl.col("seq") < pl.col("last_collect"))
        .select("at", "last_collect")
        .collect(engine=replay.ENGINE)
    )
    early = (
        rows[early_at.get_column("at")]
        .with_columns(early_at.get_column("last_collect"))
        .sort("table_id", "seq")
        .group_by("rid", maintain_order=True)
        .agg(pl.all().first(), pl.len().alias("n_early"))
    )
    what = pl.when(pl.col("event") == "pay").then(
        pl.format("seat {}'s {} wager was paid", "seat", "bet")
    ).otherwise(pl.format("seat {}'s commission was taken", "seat"))
    return early.select(
        *KEY,
        "seq",
        pl.format(
            "In round {}, {} at seq {} before the last losing wager was collected at seq {} "
            "({} pay/commission row(s) before it).",
            "round", what, "seq", "last_collect", "n_early",
        ).alias("message"),
        pl.lit("every losing wager collected before any pay or commission").alias("expected"),
        pl.format("{} at seq {}, last collect at seq {}", "event", "seq", "last_collect")
        .alias("observed"),
    )


def wrong_procedure(ctx: GameContext) -> pl.DataFrame:
    # (g)(2), (g)(3): the pit's configured procedure; a pit without one must at
    # least follow one of the four. At EZ tables only the pays are ordered, and
    # every procedure reduces to "from the highest seat down".
    rounds = order(ctx)
    fits_any = pl.any_horizontal(*[pl.col(f"fits_{p}") for p in PROCEDURES])
    known = pl.col("procedure").is_not_null() & ~pl.col("ez")
    fits = pl.when(known).then(_pick(pl.col("procedure"), "fits_")).otherwise(fits_any)
    # a round fitting no procedure departs at the latest from the one it follows longest
    first_bad = pl.max_horizontal(*[pl.col(f"bad_{p}") for p in PROCEDURES])
    wanted = (
        pl.when(pl.col("ez"))
        .then(pl.lit("pays from the highest numbered winning seat down"))
        .when(known)
        .then(pl.format("procedure ({}) of {}", "procedure", "pit"))
        .otherwise(pl.lit("one of the procedures (i)-(iv)"))
    )
    observed = pl.when(pl.col("ez")).then(pl.lit("a lower seat paid first")).otherwise(_fitting())
    message = (
        pl.when(pl.col("ez"))
        .then(
            pl.format(
                "Round {} paid a lower numbered seat before a higher one (seq {}); winners are "
                "paid from the highest numbered seat down.",
                "round", first_bad,
            )
        )
        .otherwise(
            pl.format(
                "Round {} paid winners and took commission in an order that fits {}, not {}.",
                "round", _fitting(), wanted,
            )
        )
    )
    return rounds.filter(~fits).select(
        *KEY,
        pl.when(known).then(_pick(pl.col("procedure"), "bad_")).otherwise(first_bad).alias("seq"),
        message.alias("message"),
        wanted.alias("expected"),
        observed.alias("observed"),
    )


def _table_procedures(ctx: GameContext) -> pl.DataFrame:
    """Per table: the procedures fitting the most of its rounds (`in_<p>`)."""
    counts = order(ctx).group_by("table_id").agg(
        pl.col("pit").first(),
        *[pl.col(f"fits_{p}").sum().alias(f"n_{p}") for p in PROCEDURES],
    )
    most = pl.max_horizontal(*[pl.col(f"n_{p}") for p in PROCEDURES])
    return counts.with_columns(
        *[((pl.col(f"n_{p}") == most) & (most > 0)).alias(f"in_{p}") for p in PROCEDURES]
    ).filter(pl.col("pit").is_not_null() & (most > 0))


def _pit_reference(tables: pl.DataFrame, configured: dict[str, str]) -> pl.DataFrame:
    """Per pit: whether its tables share no procedure, and the one to judge them by (the
    configured one, else the one most tables follow)."""
    pits = tables.group_by("pit").agg(
        *[pl.col(f"in_{p}").all().alias(f"all_{p}") for p in PROCEDURES],
        *[pl.col(f"in_{p}").sum().alias(f"tables_{p}") for p in PROCEDURES],
    )
    most = pl.max_horizontal(*[pl.col(f"tables_{p}") for p in PROCEDURES])
    common = pl.lit(None, pl.String)
    for p in reversed(PROCEDURES):
        common = pl.when(pl.col(f"tables_{p}") == most).then(pl.lit(p)).otherwise(common)
    conf = pl.col("pit").cast(pl.String).replace_strict(
        configured, default=None, return_dtype=pl.String
    )
    return pits.select(
        "pit",
        (~pl.any_horizontal(*[pl.col(f"all_{p}") for p in PROCEDURES])).alias("diverge"),
        pl.coalesce(conf, common).alias("reference"),
        conf.is_not_null().alias("configured"),
    )


def _described(prefix: str) -> pl.Expr:
    names = [pl.when(pl.col(f"{prefix}{p}")).then(pl.lit(f"({p})")) for p in PROCEDURES]
    return pl.concat_str(names, separator=" or ", ignore_nulls=True)


IN_COLUMNS = [f"in_{p}" for p in PROCEDURES]


def pit_evidence(ctx: GameContext) -> pl.DataFrame:
    """Per table of a pit and per procedure p: the procedures its rounds fit most
    (`in_<p>`), and the first row that fits the table's own procedure but not p
    (`seq`, `shoe_id`): where a finding that the table is off p points. The pit is
    judged by `pit_procedures_differ` over every part of the log at once."""
    tables = _table_procedures(ctx)
    rounds = order(ctx).join(tables.select("table_id", *IN_COLUMNS), on="table_id")
    own = pl.any_horizontal(*[pl.col(f"in_{p}") & pl.col(f"fits_{p}") for p in PROCEDURES])
    rounds = rounds.filter(own)
    showing = pl.concat(
        [
            rounds.filter(~pl.col(f"fits_{p}"))
            .sort(f"bad_{p}")
            .group_by("table_id")
            .agg(pl.col(f"bad_{p}").first().alias("seq"), pl.col("shoe_id").first())
            .with_columns(pl.lit(p).alias("reference"))
            for p in PROCEDURES
        ]
    )
    return tables.select("table_id", pl.col("pit").cast(pl.String), *IN_COLUMNS).join(
        showing, on="table_id", how="left"
    )


def pit_procedures_differ(evidence: pl.DataFrame, house: HouseRules) -> pl.DataFrame:
    # (g)(3): "the same procedure shall be used for all baccarat tables located
    # within the same gaming pit". Tables whose rounds fit no common procedure
    # diverge; the tables off the pit's procedure are reported once each.
    tables = evidence.select("table_id", "pit", *IN_COLUMNS).unique("table_id", keep="first")
    pits = _pit_reference(tables, house.collection_procedure)
    off = (
        tables.join(pits.filter("diverge"), on="pit")
        .with_columns(_pick(pl.col("reference"), "in_").alias("follows_reference"))
        .filter(~pl.col("follows_reference"))
    )
    # the first row showing it: the first round that fits the table's own
    # procedure but not the pit's
    showing = evidence.select("table_id", "reference", "seq", "shoe_id").drop_nulls("reference")
    source = pl.when(pl.col("configured")).then(pl.lit("configured")).otherwise(
        pl.lit("followed by most of its tables")
    )
    return off.join(pits.select("pit", "configured"), on="pit").join(
        showing, on=["table_id", "reference"], how="left"
    ).select(
        "table_id",
        "shoe_id",
        pl.lit(None, pl.Int64).alias("round"),
        "seq",
        pl.format(
            "Table {} settles in the order of procedure {}, while {} uses procedure ({}) ({}); "
            "one pit must use one procedure.",
            "table_id", _described("in_"), "pit", "reference", source,
        ).alias("message"),
        pl.format("procedure ({}) on every table of {}", "reference", "pit").alias("expected"),
        _described("in_").alias("observed"),
    )


COLLECT_FIRST = register(
    Rule(
        "BA701",
        "paid-before-losers-collected",
        "Pay or commission before the losing wagers were collected",
        "9 NYCRR 5324.20(g)(2)",
        "error",
        "baccarat",
        "In a round, a pay or vig row recorded before the round's last collect: (g)(2) has the "
        "dealer collect every losing wager first. Pushes are not part of the order. One finding "
        "per round, at its first early pay or vig.",
        "collect seat 2 player $25 (seq 20), pay seat 1 banker $25 (seq 21), collect seat 3 "
        "tie $5 (seq 22).",
        "collect seat 2 player (seq 20), collect seat 3 tie (seq 21), pay seat 1 banker (seq 22).",
        check=paid_before_collecting,
        needs=("wagers", "settle_order", "single_settlements"),
    )
)
PROCEDURE = register(
    Rule(
        "BA702",
        "settlement-order-not-pit-procedure",
        "Winners paid and commission taken out of the pit's procedure",
        "9 NYCRR 5324.20(g)(2)",
        "error",
        "baccarat",
        "The order of a round's pay and vig rows (winning seats from the highest number down) "
        "is matched against the four procedures of (g)(2); the round is reported when it does "
        "not fit the procedure the house rules set for the table's pit "
        "(collection_procedure), or, for a pit without one, any procedure. A round that fits "
        "several (e.g. one winner and no commission) is consistent when one of them is the "
        "pit's. At EZ tables only the pays count, from the highest seat down. Reported at the "
        "first row not in the place the procedure gives it.",
        "PIT-1 uses (ii); seats 5 and 2 win on banker: pay 5, vig 5, pay 2, vig 2 (procedure "
        "(iii)).",
        "PIT-1 uses (ii); seats 5 and 2 win on banker: vig 5, vig 2, pay 5, pay 2.",
        check=wrong_procedure,
        needs=("wagers", "settle_order", "single_settlements"),
        also=(
            "9 NYCRR 5324.20(g)(2)(i)", "9 NYCRR 5324.20(g)(2)(ii)", "9 NYCRR 5324.20(g)(2)(iii)",
            "9 NYCRR 5324.20(g)(2)(iv)",
        ),
    )
)
PIT_UNIFORM = register(
    Rule(
        "BA703",
        "pit-tables-procedures-differ",
        "Tables of one pit following different collection procedures",
        "9 NYCRR 5324.20(g)(3)",
        "error",
        "baccarat",
        "Each table's procedure is inferred from its rounds: the (g)(2) procedures that fit the "
        "most of them. When the tables of a pit share no procedure, each table that does not "
        "follow the pit's procedure (the configured one, else the one most of its tables "
        "follow) is reported once (round empty), at the first row that shows its own order. "
        "Rounds off the configured procedure are BA702's; a pit whose tables all follow one "
        "wrong procedure is BA702's only.",
        "PIT-1: BAC-01 settles by procedure (ii), BAC-03 by procedure (iii).",
        "PIT-1: BAC-01 and BAC-03 both settle by procedure (ii).",
        check=pit_evidence,
        across=pit_procedures_differ,
        needs=("wagers", "settle_order", "single_settlements"),
    )
)
