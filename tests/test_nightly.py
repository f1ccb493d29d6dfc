"""Nightly exports cut logs at any hour (hand-history-v1 1.1, "Logs cut at any hour").

Simulated days of both games, clean and with planted faults, are cut in two at many
places: between two cards or two payouts of a round, between rounds in the middle of a
shoe, just after a shuffle, between shoes, at the cover card, at a planted fault, every
table at another place or all of them at one time. The parts are written as files and
audited:

(a) one part with the other as context reports exactly what the whole log reports on
    that part's rows (a round's rows go with its round_start), and the parts' rounds and
    rows add up to the whole log's;
(b) one part alone reports no error the whole log does not, and warns of the cut (IN016,
    IN017, IN018) exactly where the part begins or ends inside a shoe or a round, once;
(c) a period of several gaming days audited a window at a time over all its files, or a
    day's file at a time with the day before as context, reports what the whole period
    does, each finding once (the day files: except the rounds in play at a cut, which
    the day they began in sets aside with one IN018 a table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import cuts
import polars as pl
import pytest
from cuts import ROUND

from auditor.audit import AuditResult
from auditor.house import HouseRules
from auditor.scope import Window, gaming_day
from auditor.summary import accounting

GAMES = ("baccarat", "blackjack")
ROUNDS_PER_TABLE = {"baccarat": 100, "blackjack": 75}  # a baccarat shoe lasts about 70
# name -> (seed, share of rounds with a planted fault, tables)
DAYS = {"clean-11": (11, 0.0, 4), "faulty-5": (5, 0.1, 3), "faulty-23": (23, 0.1, 4)}

# each table cut at another kind of place (cuts.KINDS), the next fraction of its rows in
MIXED_A = (["mid_deal", "between_rounds", "after_shuffle", "before_cover_card"],
           [0.35, 0.5, 0.65, 0.8])
MIXED_B = (["mid_settlement", "at_shuffle", "after_cover_card", "between_rounds"],
           [0.6, 0.45, 0.3, 0.75])

# name -> (how the tables are cut, from the events and the planted faults; parts' encoding)
CUTS = {
    "mixed_a": (lambda ev, _t: cuts.cuts_of_kinds(ev, *MIXED_A), "csv.gz"),
    "mixed_b": (lambda ev, _t: cuts.cuts_of_kinds(ev, *MIXED_B), "jsonl"),
    # every table cut where its cover card comes out (just before it or just after it):
    # the last rounds of a shoe in the second part
    "cover_card": (lambda ev, _t: cuts.cuts_of_kinds(
        ev, ["before_cover_card", "after_cover_card"], [0.5, 0.7]), "jsonl"),
    # every table cut just after its cover card, one written between two rounds where
    # there is one (it carries the number of the round whose round_start follows)
    "after_cover_card": (lambda ev, _t: cuts.cuts_of_kinds(
        ev, ["after_cover_card_between_rounds|after_cover_card"], [0.7]), "jsonl"),
    # every table cut at one time (most of them inside a round)
    "one_time": (lambda ev, _t: cuts.cuts_at_time(ev, 0.45), "parquet"),
    # at each table the planted fault's row the first of the second part, or the last of
    # the first
    "at_fault": (lambda ev, truth: cuts.cuts_at_faults(ev, truth, after=False), "jsonl"),
    "after_fault": (lambda ev, truth: cuts.cuts_at_faults(ev, truth, after=True), "jsonl"),
}

CASES = [
    *[(game, "faulty-5", cut) for game in GAMES for cut in CUTS],
    *[(game, "clean-11", cut) for game in GAMES for cut in ("mixed_a", "one_time")],
    *[(game, "faulty-23", "mixed_b") for game in GAMES],
]
CASE_IDS = [f"{g}-{d}-{c}" for g, d, c in CASES]


# (c): the periods of several gaming days, one file a day, each of these games
PERIOD = {"baccarat": {"rounds": 410, "tables": 2}, "blackjack": {"rounds": 300, "tables": 3}}
PERIOD_DAYS = 3
DAY_ENCODINGS = ("jsonl", "parquet", "csv.gz")
GAMING_DAY_START = "06:00"
FIRST_DAY = date(2026, 11, 1)

PERIODS = [
    ("baccarat", "faulty-5", "gaming_days"),
    ("blackjack", "faulty-5", "gaming_days"),
    ("baccarat", "faulty-23", "hours"),
    ("blackjack", "clean-11", "hours"),
]
PERIOD_IDS = [f"{g}-{d}-{c}" for g, d, c in PERIODS]


# --- the days cut in two, and the periods ---------------------------------------------


@dataclass
class Period:
    events: pl.DataFrame
    day: pl.Series  # each row's day, 0, 1, ...
    house: HouseRules
    windows: list[Window]
    files: list[Path]
    whole: AuditResult  # the period's files audited at once
    in_play: pl.DataFrame  # (table_id, shoe_id, round) of the rounds running over a cut


def make_period(folder: Path, game: str, day: str, calendar: str) -> Period:
    """A simulated period of PERIOD_DAYS days, one file a day. `gaming_days`: each day's
    rows moved on a day more than the day's before, the windows the house's gaming days;
    `hours`: the log as simulated, the windows spans of it (Window(start, until))."""
    seed, faults, _ = DAYS[day]
    sim = cuts.simulated(game, PERIOD[game]["rounds"], PERIOD[game]["tables"], seed, faults)
    events = sim.events
    bounds = cuts.day_boundaries(events, PERIOD_DAYS)
    index = pl.sum_horizontal(*[(cuts.local_time() >= b).cast(pl.Int32) for b in bounds])
    days = events.select(index.alias("day"))["day"]
    if calendar == "gaming_days":
        events = cuts.shifted(events, pl.lit(days))
        house = cuts.house_of(sim, game, folder, GAMING_DAY_START)
        assert house.gaming_day_start.isoformat(timespec="minutes") == GAMING_DAY_START
        windows = [gaming_day(FIRST_DAY + timedelta(days=n), house.gaming_day_start)
                   for n in range(PERIOD_DAYS)]
    else:
        house = cuts.house_of(sim, game, folder)
        edges = [None, *bounds, None]
        windows = [Window(a, b) for a, b in zip(edges, edges[1:], strict=False)]
    # each row's day is the window its time falls in
    for n, window in enumerate(windows):
        inside = events.select(window.covers(cuts.local_time()).alias("in"))["in"]
        assert (inside == (days == n)).all(), f"window {window} is not day {n}"
    files = [
        cuts.write(events.filter(days == n), folder / f"day{n + 1}.{DAY_ENCODINGS[n % 3]}")
        for n in range(PERIOD_DAYS)
    ]
    in_play = cuts.rounds_in_play(events, pl.lit(days))
    assert not in_play.is_empty(), "no round runs over a cut: the test would prove less"
    return Period(events, days, house, windows, files, cuts.run(files, house), in_play)


@dataclass
class CutDay:
    events: pl.DataFrame
    house: HouseRules
    cuts: dict[str, int]  # table -> seq of its first row in the second part
    parts: tuple[pl.DataFrame, pl.DataFrame]
    files: tuple[Path, Path]
    whole: AuditResult  # the day's log audited whole
    owned: pl.DataFrame  # (table_id, seq, owner): the part (1 or 2) each row's findings go to
    audits: dict[tuple[bool, int], AuditResult] = field(default_factory=dict)

    def audit(self, part: int, with_context: bool) -> AuditResult:
        """Part 1 or 2 audited, with the other part as context or alone (once)."""
        if (with_context, part) not in self.audits:
            other = [self.files[2 - part]] if with_context else []
            self.audits[with_context, part] = cuts.run([self.files[part - 1]], self.house,
                                                       context=other)
        return self.audits[with_context, part]


class Store:
    """The simulated days, their cuts and audits, made once for the module's tests."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.wholes: dict[tuple[str, str], tuple] = {}
        self.cut_days: dict[tuple[str, str, str], CutDay] = {}
        self.periods: dict[tuple[str, str, str], Period] = {}

    def whole_day(self, game: str, day: str):
        if (game, day) not in self.wholes:
            seed, faults, tables = DAYS[day]
            sim = cuts.simulated(game, ROUNDS_PER_TABLE[game] * tables, tables, seed, faults)
            folder = self.folder / f"{game}-{day}"
            folder.mkdir()
            house = cuts.house_of(sim, game, folder)
            log = cuts.write(sim.events, folder / "whole.jsonl")
            self.wholes[game, day] = (sim, house, cuts.run([log], house))
        return self.wholes[game, day]

    def cut_day(self, game: str, day: str, cut: str) -> CutDay:
        if (game, day, cut) not in self.cut_days:
            sim, house, whole = self.whole_day(game, day)
            how, encoding = CUTS[cut]
            at = how(sim.events, sim.truth)
            first, second = cuts.parts(sim.events, at)
            assert first.height and second.height
            folder = self.folder / f"{game}-{day}" / cut
            folder.mkdir()
            files = (cuts.write(first, folder / f"part1.{encoding}"),
                     cuts.write(second, folder / f"part2.{encoding}"))
            part = pl.when(cuts.in_first_part(at)).then(1).otherwise(2)
            owned = cuts.owners(sim.events, part)
            self.cut_days[game, day, cut] = CutDay(sim.events, house, at, (first, second),
                                                   files, whole, owned)
        return self.cut_days[game, day, cut]

    def period(self, game: str, day: str, calendar: str) -> Period:
        if (game, day, calendar) not in self.periods:
            folder = self.folder / f"period-{game}-{day}-{calendar}"
            folder.mkdir()
            self.periods[game, day, calendar] = make_period(folder, game, day, calendar)
        return self.periods[game, day, calendar]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    return Store(tmp_path_factory.mktemp("nightly"))


def _show(frame: pl.DataFrame) -> str:
    return str(frame.select("table_id", "shoe_id", "round", "seq", "rule_id", "message")
               .to_dicts())


# --- (a) a part with the other as context ------------------------------------------------


@pytest.mark.parametrize("part", [1, 2])
@pytest.mark.parametrize(("game", "day", "cut"), CASES, ids=CASE_IDS)
def test_part_with_the_other_as_context_reports_what_the_whole_log_does(
        store, game, day, cut, part):
    log = store.cut_day(game, day, cut)
    expected = cuts.comparable(cuts.findings_of(log.whole.findings, log.owned, part))
    got = cuts.comparable(log.audit(part, with_context=True).findings)
    missing = expected.join(got, on=expected.columns, how="anti", nulls_equal=True)
    extra = got.join(expected, on=expected.columns, how="anti", nulls_equal=True)
    assert missing.is_empty() and extra.is_empty(), (
        f"cut at {log.cuts}; missing: {_show(missing)}; not in the whole log's: {_show(extra)}"
    )
    assert got.equals(expected)  # and none twice


@pytest.mark.parametrize(("game", "day", "cut"), CASES, ids=CASE_IDS)
def test_parts_with_context_add_up_to_the_whole_log(store, game, day, cut):
    log = store.cut_day(game, day, cut)
    whole = accounting(log.whole)
    halves = [accounting(log.audit(part, with_context=True)) for part in (1, 2)]
    for half in halves:
        assert half["rows"]["balanced"], half
        assert half["rounds"]["audited"] > 0
    for kind in ("rows", "rounds"):
        for count in ("read", "audited", "reported"):
            assert sum(h[kind][count] for h in halves) == whole[kind][count], (
                f"{kind} {count}: {[h[kind][count] for h in halves]} vs {whole[kind][count]}"
            )


# --- (b) a part alone ----------------------------------------------------------------------


@pytest.mark.parametrize("part", [1, 2])
@pytest.mark.parametrize(("game", "day", "cut"), CASES, ids=CASE_IDS)
def test_part_alone_gives_no_error_the_whole_log_does_not(store, game, day, cut, part):
    log = store.cut_day(game, day, cut)
    alone = log.audit(part, with_context=False).findings
    errors = alone.filter(pl.col("severity") == "error")
    known = log.whole.findings.select(*ROUND, "rule_id").unique()
    new = errors.join(known, on=[*ROUND, "rule_id"], how="anti", nulls_equal=True)
    assert new.is_empty(), f"cut at {log.cuts}: {_show(new)}"


@pytest.mark.parametrize("part", [1, 2])
@pytest.mark.parametrize(("game", "day", "cut"), CASES, ids=CASE_IDS)
def test_part_alone_warns_of_the_cut_once_where_it_is(store, game, day, cut, part):
    log = store.cut_day(game, day, cut)
    alone = log.audit(part, with_context=False).findings
    where = cuts.table_edges(log.parts[part - 1])
    if part == 1:  # the simulated day begins with each table's first shuffle
        assert not where["IN016"] and not where["IN017"]
    for rule_id, key, per in (("IN016", ["table_id", "shoe_id"], ["table_id", "shoe_id"]),
                              ("IN017", ROUND, ["table_id"]), ("IN018", ROUND, ["table_id"])):
        warned = alone.filter(pl.col("rule_id") == rule_id)
        assert (warned["severity"] == "warning").all()
        assert warned.group_by(per).len().filter(pl.col("len") > 1).is_empty(), (
            f"{rule_id} more than once: {_show(warned)}"
        )
        assert set(warned.select(key).iter_rows()) == where[rule_id], (
            f"{rule_id} at {_show(warned)}, expected at {sorted(where[rule_id])}; "
            f"cut at {log.cuts}"
        )


# --- (c) consecutive gaming days ------------------------------------------------------------


@pytest.mark.parametrize(("game", "day", "calendar"), PERIODS, ids=PERIOD_IDS)
def test_windows_one_by_one_report_the_whole_period_once(store, game, day, calendar):
    p = store.period(game, day, calendar)
    results = [cuts.run(p.files, p.house, window=w) for w in p.windows]
    found = cuts.comparable(pl.concat([r.findings for r in results]), keep_files=True)
    whole = cuts.comparable(p.whole.findings, keep_files=True)
    missing = whole.join(found, on=whole.columns, how="anti", nulls_equal=True)
    extra = found.join(whole, on=whole.columns, how="anti", nulls_equal=True)
    assert missing.is_empty() and extra.is_empty(), (
        f"missing: {_show(missing)}; not in the whole period's: {_show(extra)}"
    )
    assert found.equals(whole), "a finding reported by two windows"
    counts = [accounting(r) for r in results]
    total = accounting(p.whole)
    for n, count in enumerate(counts):
        assert count["rows"]["balanced"], count
        assert count["rounds"]["audited"] > 0, f"window {n} audited no round"
    for kind in ("rows", "rounds"):
        for count in ("read", "audited", "reported"):
            assert sum(c[kind][count] for c in counts) == total[kind][count], (
                f"{kind} {count}: {[c[kind][count] for c in counts]} vs {total[kind][count]}"
            )


@pytest.mark.parametrize(("game", "day", "calendar"), PERIODS, ids=PERIOD_IDS)
def test_day_files_with_the_day_before_as_context_report_the_whole_period(
        store, game, day, calendar):
    p = store.period(game, day, calendar)
    results = [
        cuts.run([file], p.house, context=p.files[n - 1:n] if n else [])
        for n, file in enumerate(p.files)
    ]
    found = pl.concat([r.findings for r in results])
    in_play = p.in_play
    # the rounds in play at a cut: one IN018 a table, by the day they began in
    marked = found.filter(pl.col("rule_id") == "IN018")
    assert sorted(marked.select(ROUND).iter_rows()) == sorted(in_play.iter_rows()), (
        f"IN018 at {_show(marked)}; rounds in play {sorted(in_play.iter_rows())}"
    )
    for result in results:
        once = result.findings.filter(pl.col("rule_id") == "IN018").group_by("table_id").len()
        assert (once["len"] == 1).all()
    # and nothing else about them; every other finding as the whole period's
    their_rows = (p.events.filter(~pl.col("event").cast(pl.String).is_in(cuts.SHOE_LEVEL))
                  .join(in_play, on=ROUND, how="semi").select("table_id", "seq"))
    expected = cuts.comparable(
        p.whole.findings.join(their_rows, on=["table_id", "seq"], how="anti"), keep_files=True)
    got = cuts.comparable(found.filter(pl.col("rule_id") != "IN018"), keep_files=True)
    missing = expected.join(got, on=expected.columns, how="anti", nulls_equal=True)
    extra = got.join(expected, on=expected.columns, how="anti", nulls_equal=True)
    assert missing.is_empty() and extra.is_empty(), (
        f"missing: {_show(missing)}; not in the whole period's: {_show(extra)}"
    )
    assert got.equals(expected), "a finding reported by two days"
    counts = [accounting(r) for r in results]
    total = accounting(p.whole)
    assert all(c["rows"]["balanced"] for c in counts), counts
    # a round in play is read by the day it began in, and reported there, not audited
    rounds = {n: sum(c["rounds"][n] for c in counts) for n in ("read", "audited", "reported")}
    assert rounds == {"read": total["rounds"]["read"],
                      "audited": total["rounds"]["audited"] - in_play.height,
                      "reported": total["rounds"]["reported"] + in_play.height}
