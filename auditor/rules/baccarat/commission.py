"""Commission: amount, EZ, lammers settled before the shuffle, one rate for big tables (d)(2)-(3).

Amounts here are overcharges: `amount_cents` is recorded minus owed, positive
when the patron paid more commission than the rate allows.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import gaps as shoe_gaps
from ...games.baccarat import replay, settlement
from ...games.baccarat.shoes import shoes
from ..registry import Rule, register

KEY = settlement.KEY
money = settlement.dollars
# BA604 infers a table's rate from at least this many commissions at it, so that one
# wrong amount (BA601's) that happens to equal the other rate is not a table's rate.
MIN_RATE_EVIDENCE = 2


def commission_wrong(ctx: GameContext) -> pl.DataFrame:
    # (d)(2): the commission is the table's rate of the amount won on the seat's
    # banker wagers, in the rate's step; EZ tables are BA602's. A big table's shoe
    # charged at the other allowed rate is BA604's: there each amount is judged
    # at the rate the shoe was charged.
    rates = [int(r) for r in ctx.params["commission_percents"]]
    divergent = shoe_rates(ctx).filter("divergent").select("table_id", "shoe_id", "rate")
    seats = (
        settlement.seat_commission(ctx)
        .filter(~pl.col("ez"))
        .join(divergent, on=["table_id", "shoe_id"], how="left")
        .with_columns(
            pl.coalesce("rate", "commission_percent").alias("percent"),
            pl.coalesce(_pick(rates, pl.col("rate"), "vig_at_"), "expected_vig_cents")
            .alias("owed"),
        )
        .filter(pl.col("vig_cents") != pl.col("owed"))
    )
    owed = pl.col("owed")
    message = (
        pl.when(pl.col("won_cents") == 0)
        .then(
            pl.format(
                "Seat {} was charged {} commission without a winning banker wager.",
                "seat", money(pl.col("vig_cents")),
            )
        )
        .when(pl.col("vig_cents") == 0)
        .then(
            pl.format(
                "Seat {} won {} on banker and no commission was taken or marked; {}% is {}.",
                "seat", money(pl.col("won_cents")), "percent", money(owed),
            )
        )
        .otherwise(
            pl.format(
                "Seat {} won {} on banker and was charged {} commission; {}% is {}.",
                "seat", money(pl.col("won_cents")), money(pl.col("vig_cents")), "percent",
                money(owed),
            )
        )
    )
    return seats.select(
        *KEY,
        pl.coalesce("vig_seq", "banker_settled_seq", "end_seq").alias("seq"),
        message.alias("message"),
        pl.format("{} ({}% of {})", money(owed), "percent", money(pl.col("won_cents")))
        .alias("expected"),
        money(pl.col("vig_cents")).alias("observed"),
        (pl.col("vig_cents") - owed).alias("amount_cents"),
    )


def commission_on_ez(ctx: GameContext) -> pl.DataFrame:
    # (d)(3): "no vigorish shall be collected" at EZ baccarat.
    ez_rounds = (
        settlement.judged_rounds(ctx)
        .lazy()
        .filter(~pl.col("void") & ~pl.col("deal_only") & pl.col("ez"))
        .select(KEY)
        .collect(engine=replay.ENGINE)
    )
    vigs = settlement.settlements(ctx).filter(pl.col("event") == "vig")
    on_ez = vigs.join(ez_rounds, on=KEY, how="semi")
    return on_ez.select(
        *KEY,
        "seq",
        pl.format(
            "Seat {} was charged {} commission ({}) at {}, an EZ baccarat table.",
            "seat", money(pl.col("amount_cents")), "mode", "table_id",
        ).alias("message"),
        pl.lit("no commission at EZ baccarat").alias("expected"),
        pl.format("vig {} ({})", money(pl.col("amount_cents")), "mode").alias("observed"),
        pl.col("amount_cents"),
    )


def _lammers_per_shoe(ctx: GameContext) -> pl.DataFrame:
    """Per table, shoe, seat and segment of the shoe (its rounds between two gaps,
    games.gaps): commission marked and settled, the lammer left open (of those marked
    since the seat's balance last stood at zero, the first of exactly the amount
    outstanding, else the first) and the first settlement that took more than was
    marked, each with its round.

    What a seat owed is known from the start of a shoe that began in the log. A shoe
    that began before the log (`began_in_log` false) may have had commission marked
    before its first row, and a round set aside (a gap) may have held marks and
    settlements of any seat: after either, what the seat owed is unknown, but at least
    what its later settlements in the log took beyond the marks in the log. Such a
    segment's seats are counted from the last row at which the log shows them owing the
    least (`since_seq` on): what was marked from there on and not settled was outstanding
    whatever came before, and no settlement is ever more than was marked. Only the
    shoe's last segment (`final`) is judged on commission left open at the shuffle: a
    later gap may have settled what an earlier one shows open."""
    shoe_key = ["table_id", "shoe_id"]
    group = [*shoe_key, "seat"]
    span = [*group, "segment"]
    marked = (pl.col("event") == "vig") & (pl.col("mode") == "marked")
    settle = pl.col("event") == "vig_settle"
    # each shoe of a table in seq order (`idx` from 0), with the first seq of the next,
    # its gaps, and whether what its seats owe at its end is known (no gap, began in the
    # log): where it is not, what the next shoe settles beyond its marks may be a late
    # settlement of this one's, never an overcharge
    gap_count = pl.col("gap_rounds").list.len().cast(pl.Int64)
    tables_shoes = shoes(ctx).select(
        *shoe_key, "next_shoe_seq", (pl.col("shoe_no") - 1).alias("idx"), "began_in_log",
        "gap_rounds", gap_count.alias("gaps"),
        (pl.col("began_in_log") & (gap_count == 0)).alias("end_known"),
    )
    events = (
        ctx.events.lazy()
        .filter(marked | settle)
        .select("rid", *group, "round", "seq", "event", "mode", "amount_cents")
        .collect(engine=replay.ENGINE)
    )
    # each row's segment: the rounds of its shoe set aside before its round
    events = events.with_columns(shoe_gaps.segment_of(ctx, events))
    balance = pl.col("balance")
    # what the seat owed at the segment's start is known: the shoe's start, in the log
    known = (pl.col("segment") == 0) & pl.col("began_in_log").fill_null(True)
    rows = (
        events.join(tables_shoes.select(*shoe_key, "began_in_log"),
                    on=shoe_key, how="left", maintain_order="left")
        .with_columns(
            pl.when(settle).then(-pl.col("amount_cents")).otherwise("amount_cents")
            .cum_sum()
            .over(span)
            .alias("balance")
        )
        .with_columns(
            # the least owed: nothing at a known start; else the seat owed at least what
            # the log's settlements took beyond its marks
            pl.when(known)
            .then(pl.lit(0, pl.Int64))
            .otherwise(pl.min_horizontal(balance.min().over(span), pl.lit(0, pl.Int64)))
            .alias("floor")
        )
        .with_columns(
            pl.col("seq").filter(balance <= pl.col("floor")).max().over(span).alias("cleared"),
            (balance.last() - pl.col("floor").first()).over(span).alias("outstanding"),
        )
    )
    since = pl.col("seq") > pl.col("cleared").fill_null(-1)
    counted = known | since
    open_lammer = marked & since
    # of the lammers open since, the one of exactly the amount outstanding, if any
    exact = open_lammer & (pl.col("amount_cents") == pl.col("outstanding"))
    too_much = settle & (balance < 0)
    per_seat = rows.group_by(span).agg(
        known.first().alias("start_known"),
        pl.col("amount_cents").filter(marked & counted).sum().alias("marked_cents"),
        pl.col("amount_cents").filter(settle & counted).sum().alias("settled_cents"),
        pl.col("seq").filter(counted).min().alias("since_seq"),
        pl.coalesce(
            pl.col("seq").filter(exact).first(), pl.col("seq").filter(open_lammer).first()
        ).alias("open_seq"),
        pl.coalesce(
            pl.col("round").filter(exact).first(), pl.col("round").filter(open_lammer).first()
        ).alias("open_round"),
        pl.col("seq").filter(too_much).first().alias("over_seq"),
        pl.col("round").filter(too_much).first().alias("over_round"),
    )
    per_seat = per_seat.join(tables_shoes, on=shoe_key, how="inner").with_columns(
        (pl.col("segment") == pl.col("gaps")).alias("final"),
        # the round set aside before the segment, and the one after it
        pl.col("gap_rounds").list.get(pl.col("segment") - 1, null_on_oob=True)
        .alias("gap_before"),
        pl.col("gap_rounds").list.get(pl.col("segment"), null_on_oob=True).alias("gap_after"),
    )
    # What the previous shoe left outstanding and this shoe settled late is that
    # shoe's finding, not an overcharge of this one: what its last segment left, or, where
    # what its seats owed at its end is unknown, anything
    carried = per_seat.filter("final").select(
        "table_id",
        "seat",
        (pl.col("idx") + 1).alias("idx"),
        (pl.col("marked_cents") - pl.col("settled_cents")).clip(lower_bound=0).alias("carried"),
    )
    unknown_end = tables_shoes.filter(~pl.col("end_known")).select(
        "table_id", (pl.col("idx") + 1).alias("idx"), pl.lit(True).alias("after_unknown"),
    )
    excess = (pl.col("settled_cents") - pl.col("marked_cents")).clip(lower_bound=0)
    late = (
        pl.when(pl.col("segment") > 0)
        .then(pl.lit(0, pl.Int64))
        .when(pl.col("after_unknown").fill_null(False))
        .then(excess)
        .otherwise(pl.min_horizontal(excess, pl.col("carried").fill_null(0)))
    )
    return (
        per_seat.join(carried, on=["table_id", "seat", "idx"], how="left")
        .join(unknown_end, on=["table_id", "idx"], how="left")
        .with_columns(late.alias("late"))
        .with_columns((pl.col("settled_cents") - pl.col("late")).alias("settled_cents"))
    )


def marked_not_settled(ctx: GameContext) -> pl.DataFrame:
    # (d)(2): "all outstanding vigorish shall be collected prior to reshuffling
    # the cards in a shoe": per shoe and seat, the marked commission must equal
    # the vig_settle rows. Commission left open is judged only where the next shuffle
    # is in the log (the log's last shoe of a table may be settled after it ends), and
    # only as the shoe's last segment shows it (a round set aside after it may have
    # settled it); a settlement beyond what was marked, wherever the shoe began in the
    # log, up to its first gap.
    short = pl.col("settled_cents") < pl.col("marked_cents")
    over = pl.col("settled_cents") > pl.col("marked_cents")
    owed = _lammers_per_shoe(ctx).filter(
        (pl.col("next_shoe_seq").is_not_null() & pl.col("final") & short) | over
    )
    # where the seat's count starts unknown: after the cut (the shoe began before the
    # log and no round the log shows of it came before), else after a round set aside
    if shoe_gaps.has_gaps(ctx):
        first_segment = (
            shoe_gaps.segments(ctx).group_by("table_id", "shoe_id").agg(pl.col("segment").min())
            .rename({"segment": "first_segment"})
        )
        owed = owed.join(first_segment, on=["table_id", "shoe_id"], how="left")
    else:
        owed = owed.with_columns(pl.lit(0, pl.Int64).alias("first_segment"))
    after_cut = ~pl.col("began_in_log") & (pl.col("segment") <= pl.col("first_segment"))
    counted_from = (
        pl.when(pl.col("start_known"))
        .then(pl.lit(""))
        .when(after_cut)
        .then(pl.format(" from seq {} on (the shoe began before this log)", "since_seq"))
        .otherwise(
            pl.format(" from seq {} on (after round {}, which was set aside)", "since_seq",
                      "gap_before")
        )
    )
    at_least = pl.when(pl.col("start_known")).then(pl.lit("")).otherwise(pl.lit("at least "))
    # a settlement beyond the marks is counted up to the shoe's first gap
    up_to = (
        pl.when(pl.col("gap_after").is_null())
        .then(pl.lit(""))
        .otherwise(pl.format(" before round {}, which was set aside", "gap_after"))
    )
    message = (
        pl.when(short)
        .then(
            pl.format(
                "Seat {} had {} commission marked in shoe {}{} and {} settled before the "
                "shuffle at seq {}: {}{} was outstanding (open since seq {}).",
                "seat", money(pl.col("marked_cents")), "shoe_id", counted_from,
                money(pl.col("settled_cents")), "next_shoe_seq", at_least,
                money(pl.col("marked_cents") - pl.col("settled_cents")), "open_seq",
            )
        )
        .otherwise(
            pl.format(
                "Seat {} settled {} of commission in shoe {}{}, more than the {} marked.",
                "seat", money(pl.col("settled_cents")), "shoe_id", up_to,
                money(pl.col("marked_cents")),
            )
        )
    )
    return owed.select(
        "table_id",
        "shoe_id",
        pl.when(short).then("open_round").otherwise("over_round").alias("round"),
        # the breach is the shuffle before which the lammer was not collected: reported
        # there (a nightly audit whose context holds the lammer reports it), or at the
        # settlement that took more than was marked
        pl.when(short).then("next_shoe_seq").otherwise("over_seq").alias("seq"),
        message.alias("message"),
        pl.format("{} settled before the shuffle", money(pl.col("marked_cents"))).alias("expected"),
        pl.format("{} settled", money(pl.col("settled_cents"))).alias("observed"),
        (pl.col("settled_cents") - pl.col("marked_cents")).alias("amount_cents"),
    )


def _pick(rates: list[int], by: pl.Expr, prefix: str) -> pl.Expr:
    """The column `<prefix><rate>` for the rate in `by`."""
    chain = pl.when(by == rates[0]).then(pl.col(f"{prefix}{rates[0]}"))
    for r in rates[1:]:
        chain = chain.when(by == r).then(pl.col(f"{prefix}{r}"))
    return chain


def build_shoe_rates(ctx: GameContext) -> pl.DataFrame:
    """Per shoe of a big non-EZ table: for each allowed rate, how many seat-rounds with a
    banker win were charged exactly that rate's commission (`n_at_<r>`), the first of them
    (`seq_at_<r>`), and the money those differ from the facility's rate by (`diff_at_<r>`);
    the shoe's `rate` (the one most of them match) and whether it is `divergent` (not the
    facility's, on at least MIN_RATE_EVIDENCE commissions, or on any where the shoe
    began before the log)."""
    rates = [int(p) for p in ctx.params["commission_percents"]]
    facility = int(ctx.house.baccarat["commission_percent"])
    seats = (
        settlement.seat_commission(ctx)
        .filter(
            (pl.col("variant") == "big")
            & ~pl.col("ez")
            & (pl.col("won_cents") > 0)
            & (pl.col("vig_cents") > 0)
        )
        .sort("table_id", "vig_seq")
    )
    at = {r: pl.col("vig_cents") == pl.col(f"vig_at_{r}") for r in rates}
    gap = pl.col("vig_cents") - settlement.expected_vig(pl.col("won_cents"), facility, ctx.params)
    per_shoe = seats.group_by("table_id", "shoe_id").agg(
        *[m.sum().alias(f"n_at_{r}") for r, m in at.items()],
        *[pl.col("vig_seq").filter(m).first().alias(f"seq_at_{r}") for r, m in at.items()],
        *[gap.filter(m).sum().alias(f"diff_at_{r}") for r, m in at.items()],
    )
    most = pl.max_horizontal(*[pl.col(f"n_at_{r}") for r in rates])
    rate = pl.lit(None, pl.Int64)
    for r in reversed(rates):  # the first rate in the list wins a tie
        rate = pl.when(pl.col(f"n_at_{r}") == most).then(pl.lit(r)).otherwise(rate)
    own = pl.col(f"n_at_{facility}") if facility in rates else pl.lit(0)
    # a shoe that began before the log shows only its last commissions: those it shows,
    # at one rate, are the evidence there is (a cut must not turn its rate into per-round
    # amount findings, BA601)
    began = shoes(ctx).select("table_id", "shoe_id", "began_in_log")
    evidence = pl.when(pl.col("began_in_log").fill_null(True)).then(
        pl.lit(MIN_RATE_EVIDENCE)).otherwise(pl.lit(1))
    return (
        per_shoe.join(began, on=["table_id", "shoe_id"], how="left")
        .with_columns(rate.alias("rate"), most.alias("n_rate"))
        .with_columns(
            ((pl.col("n_rate") > own) & (pl.col("n_rate") >= evidence)
             & (pl.col("rate") != facility)).alias("divergent")
        )
        .drop("began_in_log")
    )


def shoe_rates(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("baccarat.shoe_commission_rates", build_shoe_rates)


def rates_differ(ctx: GameContext) -> pl.DataFrame:
    # (d)(2)(iii): "the vigorish percentage shall be the same for all baccarat
    # tables at all times"; midi and mini may differ. A big table's shoe whose
    # commissions mostly follow another allowed rate breaks it.
    rates = [int(p) for p in ctx.params["commission_percents"]]
    facility = int(ctx.house.baccarat["commission_percent"])
    total = pl.sum_horizontal(*[pl.col(f"n_at_{r}") for r in rates])
    return shoe_rates(ctx).filter("divergent").select(
        "table_id",
        "shoe_id",
        pl.lit(None, pl.Int64).alias("round"),
        _pick(rates, pl.col("rate"), "seq_at_").alias("seq"),
        pl.format(
            "Big table {} charged {}% commission in shoe {} ({} of {} commissions at a known "
            "rate), while the facility's rate for big baccarat tables is {}%.",
            "table_id", "rate", "shoe_id", "n_rate", total, pl.lit(facility),
        ).alias("message"),
        pl.lit(f"{facility}% on every big table").alias("expected"),
        pl.format("{}%", "rate").alias("observed"),
        _pick(rates, pl.col("rate"), "diff_at_").alias("amount_cents"),
    )


RATE = register(
    Rule(
        "BA601",
        "commission-amount-wrong",
        "Commission wrong or missing",
        "9 NYCRR 5324.20(d)(2)",
        "error",
        "baccarat",
        "Per seat and round on a non-EZ table: the vig rows (collected or marked, summed) must "
        "equal the winnings the seat's banker wagers were owed (at 1:1, whatever was paid) "
        "times the table's commission_percent, rounded down to the rate's step ((d)(2)(ii): "
        "20c at 4%, 25c at 5%). A missing commission, a wrong one, and a commission without a "
        "banker win are reported at the vig row (else the banker pay); amount = recorded - "
        "owed (positive: overcharged). In a big table's shoe charged at the other allowed rate "
        "(BA604's finding) amounts are judged at that shoe's rate.",
        "5%: seat 1 wins $100 on banker; vig seat 1 $4.00.",
        "5%: seat 1 wins $100 on banker; vig seat 1 $5.00.",
        overcharge=True,
        check=commission_wrong,
        needs=("cards", "wagers", "single_settlements"),
    )
)
EZ = register(
    Rule(
        "BA602",
        "commission-on-ez-table",
        "Commission taken on an EZ table",
        "9 NYCRR 5324.20(d)(3)",
        "error",
        "baccarat",
        "Any vig row (collected or marked) at an EZ baccarat table (d)(3); the whole amount is "
        "the overcharge.",
        "BAC-02 (ez = true): banker wins; vig seat 1 $1.25.",
        "BAC-02 (ez = true): banker wins; pay seat 1 banker $25, no vig.",
        overcharge=True,
        check=commission_on_ez,
        needs=("wagers", "single_settlements"),
    )
)
SHUFFLE = register(
    Rule(
        "BA603",
        "marked-commission-not-settled",
        "Marked commission not settled before the shuffle",
        "9 NYCRR 5324.20(d)(2)",
        "error",
        "baccarat",
        "Per shoe and seat: the commission marked with lammers (vig rows with mode marked) must "
        "equal the seat's vig_settle rows in the same shoe, i.e. be collected before the next "
        "shuffle, for the same amount. Reported at that shuffle, in the round of the lammer "
        "left open (of the vigs marked since the seat last owed nothing, the first of the "
        "amount outstanding, else the first), or at the settlement that took more than was "
        "marked; amount = settled - marked (negative: left uncollected). Commission left over "
        "from the previous shoe and settled late counts against that shoe only. Where the log "
        "is cut: commission still open in a table's last shoe is not judged (it may be "
        "settled after the log ends), a settlement beyond the marks is. A shoe that began "
        "before the log may owe commission marked before it: its settlements are never "
        "judged too much, and it is judged short only on commission marked in the log after "
        "the seat last owed the least the log shows. A round set aside (a lost row) is read "
        "the same way: it may have marked or settled any seat's commission, so what a seat "
        "owed after it is counted as in a shoe that began before the log, settlements are "
        "judged too much only up to the shoe's first such round, commission left open only "
        "after its last. After a shoe with such a round, or one that began before the log, "
        "what the next shoe settles beyond its marks may be that shoe's commission settled "
        "late, and is not judged.",
        "seat 4: vig $1.25 marked in round 3 of shoe S1; no vig_settle before the shuffle of S2.",
        "seat 4: vig $1.25 marked in round 3 of shoe S1; vig_settle seat 4 $1.25 in round 9.",
        overcharge=True,
        check=marked_not_settled,
        needs=("wagers", "vig_settle", "single_settlements"),
    )
)
UNIFORM = register(
    Rule(
        "BA604",
        "big-table-commission-rates-differ",
        "Big tables charging different commission rates",
        "9 NYCRR 5324.20(d)(2)(iii)",
        "error",
        "baccarat",
        "The rate of each shoe of a big (non-EZ) table is inferred from its vig amounts: the "
        "allowed rate (4% or 5%, stepped) that most of its seats' commissions on banker wins "
        "match, on at least two of them. A shoe whose rate is not the facility's "
        "commission_percent is reported once (round empty), at its first commission at that "
        "rate; amount = what those commissions differ from the facility's rate by (positive: "
        "overcharged). Midi and mini tables may differ and are not judged; single wrong "
        "amounts are BA601's.",
        "Facility 5%; in shoe S4 BAC-03 (big) takes $1.00 on every $25 banker win.",
        "Facility 5%; every big table takes $1.25 on a $25 banker win in every shoe.",
        overcharge=True,
        check=rates_differ,
        needs=("wagers", "single_settlements"),
    )
)
