"""Simulated logs cut the way nightly exports cut them (hand-history-v1 1.1, "Logs cut at
any hour"), and what the audit of a cut log should then report.

A cut of a table is the `seq` of the first row of its second part: the rows of that
table below it are the first part, the others the second. Which rows an audit of one
part reports on follows the spec: a round belongs to the part holding its `round_start`
row, any other row (shoe-level rows, a round whose start is not there) to its own.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl

from auditor import audit
from auditor.audit import AuditResult
from auditor.house import HouseRules
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.rulesets import Rulesets, load_rulesets
from auditor.scope import Window
from auditor.simulate.writer import write_events, write_house_rules

ROUND = ["table_id", "shoe_id", "round"]
WHERE = ["table_id", "seq"]
FILE_COLUMNS = ["file", "line"]
BOUNDARY = ("IN016", "IN017", "IN018")
SETTLING = frozenset({"collect", "pay", "push", "vig", "vig_settle"})
# shoe-level events (hand-history-v1 Events): they carry the round they precede and are
# not of it, so they belong where they are, whatever part holds that round's start
SHOE_LEVEL = ("shuffle", "burn", "cover_card", "shoe_offer")


# --- simulated days ----------------------------------------------------------------


@functools.cache
def simulated(game: str, rounds: int, tables: int, seed: int, faults: float):
    """A simulated day (the simulation is deterministic: one per arguments)."""
    module = importlib.import_module(f"auditor.simulate.{game}")
    return module.simulate(rounds=rounds, tables=tables, seed=seed, faults=faults)


@functools.cache
def rulesets() -> Rulesets:
    return load_rulesets()


def house_of(sim, game: str, folder: Path, gaming_day_start: str | None = None) -> HouseRules:
    """The simulation's house rules, written to `folder` and read back."""
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    path = write_house_rules(sim.tables, folder / "house.toml", **extra)
    if gaming_day_start is not None:  # a top-level key: before every section
        path.write_text(f'gaming_day_start = "{gaming_day_start}"\n' + path.read_text())
    return load_house(path, rulesets(), date(2026, 11, 1))


def write(events: pl.DataFrame, path: Path) -> Path:
    """`events` written to `path`, the encoding named by its extension."""
    encoding = path.name.split(".", 1)[1]
    return write_events(events, path, encoding)


def run(logs: Iterable[Path], house: HouseRules, context: Iterable[Path] = (),
        window: Window | None = None) -> AuditResult:
    sources = expand([str(p) for p in logs])
    ctx = expand([str(p) for p in context]) if context else []
    return audit.run(sources, house, rulesets(), context=ctx, window=window)


# --- time ----------------------------------------------------------------------------

_STAMP = r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(.*)$"


def local_time() -> pl.Expr:
    """A row's wall-clock time as the log writes it (its offset not applied): what a
    window is compared with."""
    return pl.col("ts").str.extract(_STAMP, 1).str.to_datetime("%Y-%m-%dT%H:%M:%S%.f")


def shifted(events: pl.DataFrame, days: pl.Expr) -> pl.DataFrame:
    """`events` with each row's `ts` moved on by `days` whole days (its offset kept)."""
    moved = local_time() + pl.duration(days=days)
    return events.with_columns(
        (moved.dt.strftime("%Y-%m-%dT%H:%M:%S") + pl.col("ts").str.extract(_STAMP, 2))
        .alias("ts")
    )


# --- where a table is cut -----------------------------------------------------------


def by_table(events: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {t: f.sort("seq") for (t,), f in events.group_by("table_id")}


def _mid_deal(ev, key, i):
    return ev[i] == ev[i - 1] == "card" and key[i] == key[i - 1]


def _mid_settlement(ev, key, i):
    return ev[i] in SETTLING and ev[i - 1] in SETTLING and key[i] == key[i - 1]


def _between_rounds(ev, key, i):  # mid-shoe: the next round of the same shoe follows
    return ev[i] == "round_start" and ev[i - 1] == "round_end" and key[i][0] == key[i - 1][0]


def _after_shuffle(ev, key, i):  # a later shoe's (not the table's opening shuffle)
    return ev[i - 1] == "shuffle" and i > 1


def _at_shuffle(ev, key, i):
    return ev[i] == "shuffle"


def _before_cover_card(ev, key, i):
    return ev[i] == "cover_card"


def _after_cover_card(ev, key, i):
    return ev[i - 1] == "cover_card"


def _after_cover_card_between_rounds(ev, key, i):  # it carries the round that follows
    return ev[i - 1] == "cover_card" and ev[i] == "round_start" and ev[i - 2] == "round_end"


KINDS: dict[str, Callable] = {
    "mid_deal": _mid_deal,  # between two cards of a round
    "mid_settlement": _mid_settlement,  # between two payouts of a round
    "between_rounds": _between_rounds,  # mid-shoe: a round_end, then the next round_start
    "after_shuffle": _after_shuffle,  # the shuffle in the first part, its burns in the second
    "at_shuffle": _at_shuffle,  # between two shoes
    "before_cover_card": _before_cover_card,  # the cover card the second part's first row
    "after_cover_card": _after_cover_card,  # the cover card the first part's last row
    # and that cover card written between two rounds (with the next one's number)
    "after_cover_card_between_rounds": _after_cover_card_between_rounds,
}


def cut_of_kind(table: pl.DataFrame, kind: str, fraction: float) -> int:
    """The cut of one table (its rows in seq order) of `kind` nearest `fraction` of it;
    `kind` may be "a|b": of kind a where the table has one, else of kind b."""
    ev = table["event"].cast(pl.String).to_list()
    key = list(zip(table["shoe_id"], table["round"], strict=True))
    found = []
    for each in kind.split("|"):
        found = found or [i for i in range(1, table.height) if KINDS[each](ev, key, i)]
    assert found, f"{table['table_id'][0]} has no place to cut {kind}"
    at = min(found, key=lambda i: abs(i - fraction * table.height))
    return int(table["seq"][at])


def cuts_of_kinds(events: pl.DataFrame, kinds: list[str],
                  fractions: list[float]) -> dict[str, int]:
    """Each table (in id order) cut by the next kind and fraction in turn."""
    tables = by_table(events)
    return {
        t: cut_of_kind(tables[t], kinds[n % len(kinds)], fractions[n % len(fractions)])
        for n, t in enumerate(sorted(tables))
    }


def cuts_at_time(events: pl.DataFrame, fraction: float) -> dict[str, int]:
    """Every table cut at one time: `fraction` of the way through the log."""
    times = events.select(local_time().alias("time"), "table_id", "seq")
    first, last = times["time"].min(), times["time"].max()
    at = first + (last - first) * fraction
    after = times.filter(pl.col("time") >= at).group_by("table_id").agg(pl.col("seq").min())
    ends = times.group_by("table_id").agg((pl.col("seq").max() + 1).alias("end"))
    # a table that closed before `at` is wholly in the first part
    both = ends.join(after, on="table_id", how="left")
    return {t: int(s if s is not None else e) for t, e, s in both.iter_rows()}


def cuts_at_faults(events: pl.DataFrame, truth: pl.DataFrame, after: bool) -> dict[str, int]:
    """Each table cut at the planted fault nearest its middle: the fault's row first in
    the second part, or (`after`) last in the first."""
    cuts = {}
    for table_id, rows in by_table(events).items():
        faults = truth.filter((pl.col("table_id") == table_id) & pl.col("seq").is_not_null()
                              & (pl.col("seq") > 1))
        if faults.is_empty():
            cuts[table_id] = cut_of_kind(rows, "mid_deal", 0.5)
            continue
        middle = rows["seq"][rows.height // 2]
        seq = int(faults.sort((pl.col("seq") - middle).abs())["seq"][0])
        cuts[table_id] = seq + 1 if after else seq
    return cuts


def in_first_part(cuts: dict[str, int]) -> pl.Expr:
    """Whether a row is in the first part, at `cuts` (table -> first seq of the second)."""
    return pl.col("seq") < pl.col("table_id").replace_strict(cuts, return_dtype=pl.Int64)


def parts(events: pl.DataFrame, cuts: dict[str, int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The two parts of `events` at `cuts`."""
    first = in_first_part(cuts)
    return events.filter(first), events.filter(~first)


# --- what each part owns ---------------------------------------------------------------


def _round_level() -> pl.Expr:
    return ~pl.col("event").cast(pl.String).is_in(SHOE_LEVEL)


def owners(events: pl.DataFrame, part: pl.Expr) -> pl.DataFrame:
    """(table_id, seq, owner): the part (`part`, an expression over the rows) each row's
    findings belong to: a round-level row its round's round_start row's, any other (a
    shoe-level row, a round whose start is not in the log) its own."""
    rows = events.select(*ROUND, "seq", "event", part.alias("own"))
    started = (
        rows.filter(pl.col("event") == "round_start")
        .group_by(ROUND).agg(pl.col("own").first().alias("start"))
    )
    return (
        rows.join(started, on=ROUND, how="left")
        .select("table_id", "seq",
                pl.when(_round_level()).then(pl.coalesce("start", "own")).otherwise("own")
                .alias("owner"))
    )


def findings_of(findings: pl.DataFrame, owned: pl.DataFrame, owner) -> pl.DataFrame:
    """The findings whose row belongs to `owner` (a finding without a row to every one)."""
    return (
        findings.join(owned, on=WHERE, how="left", maintain_order="left")
        .filter(pl.col("owner").is_null() | (pl.col("owner") == owner))
        .drop("owner")
    )


def comparable(findings: pl.DataFrame, keep_files: bool = False) -> pl.DataFrame:
    """Findings in one order, without their file and line unless `keep_files`."""
    frame = findings if keep_files else findings.drop(FILE_COLUMNS)
    return frame.sort(frame.columns, nulls_last=True)


def table_edges(part: pl.DataFrame) -> dict[str, set[tuple]]:
    """Where a part alone must warn that it was cut, per hand-history-v1 1.1: IN016 the
    (table_id, shoe_id) of each table's first shoe whose shuffle is not in the part; IN017
    the round (table_id, shoe_id, round) of a table's first round-level row if its
    round_start is not in the part; IN018 the round of a table's last row, if its round_end
    is not in the part (a cover card or offer there carries the round it precedes: the
    part ends as that round begins)."""
    rows = part.sort("table_id", "seq").with_columns(pl.col("event").cast(pl.String))
    marks = rows.group_by(ROUND).agg(
        (pl.col("event") == "round_start").any().alias("started"),
        (pl.col("event") == "round_end").any().alias("ended"),
    )
    shuffled = rows.filter(pl.col("event") == "shuffle").select("table_id", "shoe_id").unique()
    first_shoes = rows.group_by("table_id").agg(pl.col("shoe_id").first())
    played = rows.filter(_round_level() & (pl.col("round") > 0))
    first = played.group_by("table_id").agg(pl.col(ROUND[1:]).first()).join(marks, on=ROUND)
    last = (rows.group_by("table_id").agg(pl.col(ROUND[1:]).last()).join(marks, on=ROUND)
            .filter(pl.col("round") > 0))
    return {
        "IN016": set(first_shoes.join(shuffled, on=["table_id", "shoe_id"], how="anti")
                     .select("table_id", "shoe_id").iter_rows()),
        "IN017": set(first.filter(~pl.col("started")).select(ROUND).iter_rows()),
        "IN018": set(last.filter(~pl.col("ended")).select(ROUND).iter_rows()),
    }


def rounds_in_play(events: pl.DataFrame, day: pl.Expr) -> pl.DataFrame:
    """(table_id, shoe_id, round) of the rounds whose rows run from one day (`day`, an
    expression over the rows) into the next."""
    return (
        events.with_columns(day.alias("day")).filter(_round_level() & (pl.col("round") > 0))
        .group_by(ROUND)
        .agg(
            pl.col("day").filter(pl.col("event") == "round_start").first().alias("start"),
            pl.col("day").max().alias("until"),
        )
        .filter(pl.col("until") > pl.col("start"))
        .select(ROUND)
    )


def day_boundaries(events: pl.DataFrame, days: int) -> list[datetime]:
    """`days - 1` times that cut the log into `days` spans, each between two longer than
    any shoe lasts (so that a shoe runs over one boundary at most: the day before is
    then all the history a day needs)."""
    times = events.select("table_id", "shoe_id", local_time().alias("time"))
    longest = times.group_by("table_id", "shoe_id").agg(
        (pl.col("time").max() - pl.col("time").min()).alias("span"))["span"].max()
    first, last = times["time"].min(), times["time"].max()
    step = max(longest + timedelta(minutes=1), (last - first) / (days + 0.5))
    bounds = [first + step * n for n in range(1, days)]
    assert bounds[-1] < last - timedelta(minutes=5), (
        f"the log ({first} to {last}) is too short for {days} days of {step}"
    )
    return bounds
