"""Exports read through a profile (export-profiles-v1): the same simulated days, written
as hand histories and as a table system would export them, give the same findings on
every rule the export can show, at the export's own files and lines; an import dataset
audits to exactly what the exports audit to; profile and content errors are said as the
contract says."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auditor import audit
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.profiles.load import load as load_profile
from auditor.profiles.read import translate
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack, exports
from auditor.simulate.nets import as_nets
from auditor.simulate.writer import write_events, write_house_rules

KEY = ["rule_id", "table_id", "shoe_id", "round"]
GAMES = {"baccarat": baccarat, "blackjack": blackjack}


def _day(folder: Path, game: str, seed: int, faults: float, layout: str, rounds: int = 160):
    """A simulated day as a hand history and in `layout`, and its house rules."""
    sim = GAMES[game].simulate(rounds=rounds, tables=2, seed=seed, faults=faults)
    write_events(sim.events, folder / "hh" / "log.jsonl", "jsonl")
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    write_house_rules(sim.tables, folder / "house.toml", **extra)
    exports.write(sim.events, folder / "x", layout, "day")
    return sim


def _audits(folder: Path):
    rs = load_rulesets()
    house = load_house(folder / "house.toml", rs, on=date(2026, 11, 1))
    hand_history = audit.run(expand([str(folder / "hh")]), house, rs)
    read = translate(load_profile(folder / "x" / "profile.toml"), [str(folder / "x")])
    return hand_history, audit.run(read.sources, house, rs, export=read)


def _sorted(frame: pl.DataFrame) -> list[dict]:
    return frame.sort(frame.columns, nulls_last=True).to_dicts()


def _with_parts(result) -> pl.DataFrame:
    """An audit's findings with the rule part of each (AuditResult.parts): another log's
    coverage drops those of the parts it does not judge (Coverage.keep)."""
    return result.findings.with_columns(result.parts)


def _expressible(truth: pl.DataFrame, coverage) -> pl.DataFrame:
    """Rounds whose planted fault the export cannot write as it was planted (its rule, or
    a part of it, needs evidence the layout lacks, so the exporter wrote something else):
    left out. So are the rounds of an irregularity rightly remedied (no rule id) where the
    layout records no irregularities: its rows are not written, and what is left of the
    round is not what was dealt."""
    rules = {r.id: r for r in REGISTRY.all()}

    def lost_to(row: dict) -> bool:
        has = coverage.tables[row["table_id"]][1]
        if row["rule_id"] is None:
            return "irregularities" not in has
        rule = rules[row["rule_id"]]
        return any(coverage.why_not(rule, row["table_id"], part)
                   for part in (None, *rule.parts))

    lost = [row for row in truth.iter_rows(named=True)
            if row["table_id"] in coverage.tables and lost_to(row)]
    return pl.DataFrame(lost, schema=truth.schema).select(
        "table_id", "shoe_id", pl.col("round").cast(pl.Int64))


@pytest.mark.parametrize(("game", "layout", "seed", "faults"), [
    ("baccarat", "events", 1, 0.0),
    ("baccarat", "events", 2, 0.15),
    ("blackjack", "events", 3, 0.15),
    ("baccarat", "coups", 4, 0.0),
    ("baccarat", "coups", 5, 0.15),
    ("baccarat", "coups", 6, 0.15),
    ("blackjack", "coups", 7, 0.0),
    ("blackjack", "coups", 8, 0.15),
    ("blackjack", "coups", 9, 0.3),
])
def test_an_export_finds_what_its_hand_history_finds(tmp_path, game, layout, seed, faults):
    sim = _day(tmp_path, game, seed, faults, layout)
    hand_history, export = _audits(tmp_path)
    coverage = export.coverage
    expected = coverage.keep(_with_parts(hand_history)).select(KEY).unique()
    found = export.findings.select(KEY).unique()
    if faults:
        lost = _expressible(sim.truth, coverage)
        expected = expected.join(lost, on=KEY[1:], how="anti")
        found = found.join(lost, on=KEY[1:], how="anti")
        assert expected.height, "the faulty day should have findings the export can show"
    if layout == "coups":
        # coups record no burn: a card is counted over the cards dealt only, a lower
        # bound, so a copy the hand history finds only with the burns is not seen
        counted = pl.col("rule_id") == "BA102"
        assert found.filter(counted).join(expected.filter(counted), on=KEY, how="anti",
                                          nulls_equal=True).is_empty()
        found, expected = found.filter(~counted), expected.filter(~counted)
    assert _sorted(found) == _sorted(expected)
    # a finding of the export points at the export's own file and line
    located = export.findings.filter(pl.col("line").is_not_null())
    assert located["file"].str.contains("/x/").all()
    if not faults:
        assert export.findings.height == 0


def test_the_exports_say_what_they_cannot_show(tmp_path):
    _day(tmp_path, "baccarat", 7, 0.0, "coups", rounds=40)
    hand_history, export = _audits(tmp_path)
    told = export.coverage.as_dict()
    states = {r["rule_id"]: r for r in told["by_rule"]}
    assert states["BA201"]["state"] == "not_judged"  # the deal's order is presumed
    assert "order" in states["BA201"]["not_judged_on"][0]["why"]
    assert states["BA801"]["state"] == "not_judged"  # no shoe offers in coups
    assert states["BA204"]["state"] == "judged"  # the draw is in the cards
    assert states["BA501"]["state"] == "judged"  # wagers and amounts are
    assert states["BA701"]["state"] == "judged"  # settle_order and vig_order mapped
    assert states["BJ201"]["why"] == "the log has no blackjack table"
    whole = hand_history.coverage.as_dict()
    # a clean day records no irregularity (1.2): the rules shown only by those rows are not
    # judged on it
    shown = {r["rule_id"]: r for r in whole["by_rule"] if r["rule_id"][:2] == "BA"}
    astray = {i for i in shown if "irregularities" in REGISTRY.get(i).needs}
    assert astray and all(shown[i]["state"] == "not_judged" for i in astray)
    assert all(r["state"] == "judged" for i, r in shown.items() if i not in astray)


def test_a_hand_history_without_wagers_is_not_judged_on_wagers(tmp_path):
    sim = baccarat.simulate(rounds=30, tables=1, seed=8, faults=0.0)
    no_money = sim.events.filter(~pl.col("event").is_in(["wager", "collect", "pay", "push",
                                                         "vig", "vig_settle"]))
    write_events(no_money, tmp_path / "log.jsonl", "jsonl")
    write_house_rules(sim.tables, tmp_path / "house.toml")
    rs = load_rulesets()
    house = load_house(tmp_path / "house.toml", rs, on=date(2026, 11, 1))
    result = audit.run(expand([str(tmp_path / "log.jsonl")]), house, rs)
    by_rule = {r["rule_id"]: r for r in result.coverage.as_dict()["by_rule"]}
    assert by_rule["BA501"]["state"] == "not_judged"
    assert by_rule["BA501"]["not_judged_on"] == [
        {"table_id": "BAC-01", "why": "the log records no wagers"}]
    assert by_rule["BA204"]["state"] == "judged"
    # the curator rules need wagers (an occupied seat): not judged, so no finding
    assert result.findings.filter(pl.col("rule_id").str.starts_with("BA8")).height == 0


def test_import_then_audit_equals_audit_with_the_profile(tmp_path):
    _day(tmp_path, "baccarat", 9, 0.2, "coups", rounds=80)
    runner = CliRunner()
    x = tmp_path / "x"
    direct = runner.invoke(main, ["audit", str(x), "--profile", str(x / "profile.toml"),
                                  "--house", str(tmp_path / "house.toml"),
                                  "--out", str(tmp_path / "direct"), "--no-report", "-q"])
    assert direct.exit_code == 1, direct.output
    made = runner.invoke(main, ["import", str(x), "--profile", str(x / "profile.toml"),
                                "--house", str(tmp_path / "house.toml"),
                                "--out", str(tmp_path / "dataset")])
    assert made.exit_code == 0, made.output
    assert list((tmp_path / "dataset").glob("facility=*/gaming_day=*/table_id=*/*.parquet"))
    assert (tmp_path / "dataset" / "_import_findings.parquet").is_file()
    again = runner.invoke(main, ["audit", str(tmp_path / "dataset"),
                                 "--house", str(tmp_path / "house.toml"),
                                 "--out", str(tmp_path / "again"), "--no-report", "-q"])
    assert again.exit_code == 1, again.output
    one = pl.read_parquet(tmp_path / "direct" / "findings.parquet")
    two = pl.read_parquet(tmp_path / "again" / "findings.parquet")
    assert one.height > 0
    assert one.to_dicts() == two.to_dicts()
    first = json.loads((tmp_path / "direct" / "summary.json").read_text())
    second = json.loads((tmp_path / "again" / "summary.json").read_text())
    for key in ("rows", "rounds", "coverage", "profile", "inputs"):
        assert first[key] == second[key], key


# --- errors the contract names


_COUPS = """\
[profile]
name = "errors"
version = 1

[[source]]
name = "coups"
files = ["coups*.csv"]
layout = "coups"

[source.columns]
table_id = "T"
game = { value = "baccarat" }
shoe_id = "S"
round = "R"
ts = "Start"
winner = "W"
player_points = "PP"
banker_points = "BP"

[source.values.winner]
P = "player"
B = "banker"

[source.cards]
notation = "rank_suit"
player = ["P1", "P2"]
banker = ["B1", "B2"]
"""


# a wagers source joined to _COUPS by round (more columns may follow)
_WAGERS = """
[[source]]
name = "wagers"
files = ["wagers*.csv"]
layout = "wagers"

[source.columns]
table_id = "T"
shoe_id = "S"
round = "R"
seat = "Seat"
bet = "Bet"
amount = "Amt"
pay = "Pay"
"""


def _audit(tmp_path: Path, files: dict[str, str], profile: str = _COUPS, *more: str):
    (tmp_path / "profile.toml").write_text(profile)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "house.toml").write_text('facility = "Errors"\n')
    return CliRunner().invoke(main, ["audit", *[str(tmp_path / n) for n in files],
                                     "--profile", str(tmp_path / "profile.toml"),
                                     "--house", str(tmp_path / "house.toml"),
                                     "--out", str(tmp_path / "out"), "--no-report", "-q",
                                     *more])


def test_a_file_no_source_reads_named_on_the_command_line_is_exit_2(tmp_path):
    result = _audit(tmp_path, {"other.csv": "T,S,R\n"})
    assert result.exit_code == 2
    assert "other.csv" in result.output and "no source" in result.output


def test_a_mapped_column_a_csv_lacks_is_exit_2_naming_file_and_column(tmp_path):
    result = _audit(tmp_path, {"coups.csv": "T,S,R,Start,PP,BP,P1,P2,B1,B2\n"})
    assert result.exit_code == 2
    assert "coups.csv" in result.output and "'W'" in result.output


def test_a_profile_mistake_is_exit_2_naming_the_key(tmp_path):
    bad = _COUPS.replace('layout = "coups"', 'layout = "coups"\ndelimiter = ";;"')
    result = _audit(tmp_path, {"coups.csv": "T\n"}, bad)
    assert result.exit_code == 2
    assert "delimiter" in result.output


def test_an_unmapped_value_withholds_its_round_with_no_finding_of_its_own(tmp_path):
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n"
            "BAC-01,S1,2,2026-11-01T20:01:00,X,8,5,8H,KD,2C,3S\n")
    result = _audit(tmp_path, {"coups.csv": rows})
    assert result.exit_code == 1, result.output
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet").filter(
        pl.col("rule_id") != "HR001")  # the house rules list no table
    assert found["rule_id"].to_list() == ["EX001"]
    assert found.row(0, named=True)["line"] == 3
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rounds"]["reported"] == 1
    assert summary["rows"]["read"] == 2 and summary["rows"]["balanced"]


def test_a_local_time_that_does_not_exist_is_an_invalid_ts_at_its_line(tmp_path):
    profile = _COUPS.replace('layout = "coups"', 'layout = "coups"\n'
                             'timezone = "America/New_York"')
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
            "BAC-01,S1,1,2026-03-08 01:59:00,P,9,7,7S,2H,3D,4C\n"
            "BAC-01,S1,2,2026-03-08 02:30:00,P,9,7,7S,2H,3D,4C\n")
    result = _audit(tmp_path, {"coups.csv": rows}, profile)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    invalid = found.filter(pl.col("field") == "ts")
    assert invalid["line"].unique().to_list() == [3], result.output
    assert "does not exist" in invalid["observed"][0]


def test_the_repeated_hour_takes_the_later_instant_after_a_later_row(tmp_path):
    from auditor.profiles import times
    from auditor.profiles.model import Source

    source = Source("s", ("*",), "events", timezone="America/New_York")
    rows = pl.DataFrame({"table_id": ["T"] * 5,
                         "ts": ["2026-11-01T01:30:00", "2026-11-01T01:50:00-05:00",
                                "2026-11-01T01:40:00", "2026-11-01T01:10:00-05:00",
                                "2026-11-01T01:20:00"]})
    read = times.with_times(rows, source)
    # 01:30 is the earlier instant (EDT, 05:30 UTC); 01:40 after a row at 01:50 EST (past
    # 01:40 EST) is the later; 01:20 after 01:10 EST (not past 01:20 EST) the earlier
    assert read["_instant"].dt.strftime("%H:%M").to_list() == [
        "05:30", "06:50", "06:40", "06:10", "05:20"]
    assert read["ts"].dt.strftime("%Y-%m-%dT%H:%M:%S").to_list()[:3] == [
        "2026-11-01T01:30:00", "2026-11-01T01:50:00", "2026-11-01T01:40:00"]


@pytest.mark.parametrize(("notation", "extra", "cells", "codes"), [
    ("rank_suit", {}, ["AS", "10h", "td", "Qc", "1S", "-"], ["AS", "TH", "TD", "QC", "1S", None]),
    ("suit_rank", {}, ["SA", "h10", "DT", "cq"], ["AS", "TH", "TD", "QC"]),
    ("index", {"index_base": 1, "index_suits": "SHDC"}, ["1", "14", "52", "53", "2.0"],
     ["AS", "AH", "KC", "53", "2S"]),
    # no invented suit (1.3): a card without one is known by value only
    ("points", {}, ["0", "9", "10", "1", "11", "12"], ["X*", "9*", "X*", "A*", "A*", "12"]),
    ("pattern", {"pattern": "(?P<rank>\\w+)"}, ["7", "10", "Q", "1"], ["7*", "T*", "Q*", "1"]),
    ("pattern", {"pattern": "(?P<rank>\\w+) of (?P<suit>\\w+)",
                 "ranks": {"Ace": "A", "Ten": "10"}, "suits": {"spades": "S", "hearts": "H"}},
     ["Ace of spades", "Ten of hearts", "7 of hearts", "Ace of cups"],
     ["AS", "TH", "7H", "Ace of cups"]),
])
def test_every_notation_reads_its_cards(notation, extra, cells, codes):
    from auditor.profiles.cards import codes as read_codes
    from auditor.profiles.model import Cards

    cards = Cards(notation, none=("", "-"), **extra)
    read = pl.DataFrame({"c": cells}).select(read_codes(cards, pl.col("c")).alias("c"))["c"].to_list()
    assert read == codes


def test_a_device_feed_without_seq_round_or_shoe_is_numbered_as_the_contract_says(tmp_path):
    profile = """\
[profile]
name = "feed"
version = 1

[[source]]
name = "feed"
files = ["feed*.jsonl"]
layout = "events"

[source.columns]
table_id = "t"
game = { value = "baccarat" }
ts = "ts"
event = "e"
decks = "d"
"""
    lines = [
        {"t": "BAC-01", "ts": "2026-11-01T20:00:00", "e": "cover_card"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:05", "e": "shuffle", "d": 8},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:06", "e": "shoe_offer"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:07", "e": "round_start"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:08", "e": "round_end"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:09", "e": "cover_card"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:10", "e": "round_start"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:11", "e": "round_end"},
        {"t": "BAC-01", "ts": "2026-11-01T20:00:12", "e": "shuffle", "d": 8},
    ]
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "feed.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "feed.jsonl")])
    made = read.events[0].select("seq", "shoe_id", "round").rows()
    assert made == [
        ("1", "BAC-01@start", "0"),
        ("2", "BAC-01@20261101T200005", "0"),
        ("3", "BAC-01@20261101T200005", "0"),  # before the shoe's first round: 0
        ("4", "BAC-01@20261101T200005", "1"),
        ("5", "BAC-01@20261101T200005", "1"),
        ("6", "BAC-01@20261101T200005", "2"),  # between rounds: the next round's
        ("7", "BAC-01@20261101T200005", "2"),
        ("8", "BAC-01@20261101T200005", "2"),
        ("9", "BAC-01@20261101T200012", "0"),
    ]
    assert "seq:derived" in read.tables["BAC-01"]


# --- any names, words, notation and file order, with the matching profile

_NAME = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", min_size=1,
                max_size=8)
_TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=6)


@st.composite
def _styles(draw) -> exports.FeedStyle:
    canonical = list(exports.FEED_COLUMNS)
    names = draw(st.lists(_NAME.filter(lambda n: n != "FrameNo"), min_size=len(canonical),
                          max_size=len(canonical), unique=True))
    words = {}
    for column, table in exports.FEED_WORDS.items():
        codes = draw(st.lists(_NAME.filter(lambda n: n != "HEARTBEAT"), min_size=len(table),
                              max_size=len(table), unique=True))
        words[column] = dict(zip(table, codes, strict=True))
    notation = draw(st.sampled_from(["index", "rank_suit", "suit_rank", "pattern"]))
    cards = exports.CardStyle(notation)
    if notation == "index":
        cards = exports.CardStyle("index", draw(st.sampled_from([0, 1])),
                                  "".join(draw(st.permutations("SHDC"))))
    elif notation in ("rank_suit", "suit_rank"):
        cards = exports.CardStyle(notation, ten=draw(st.sampled_from(["10", "T"])),
                                  lower=draw(st.booleans()))
    elif notation == "pattern":
        ranks = draw(st.lists(_TOKEN, min_size=13, max_size=13, unique=True))
        suits = draw(st.lists(_TOKEN, min_size=4, max_size=4, unique=True))
        keep = draw(st.sets(st.sampled_from("A23456789TJQK")))  # ranks written as they are
        cards = exports.CardStyle(
            "pattern", rank_tokens={r: t for r, t in zip("A23456789TJQK", ranks, strict=True)
                                    if r not in keep},
            suit_tokens=dict(zip("SHDC", suits, strict=True)))
    return exports.FeedStyle(dict(zip(canonical, names, strict=True)), words, cards)


@pytest.fixture(scope="module")
def _faulty_day(tmp_path_factory):
    """A faulty day of both games, and its hand history's findings."""
    folder = tmp_path_factory.mktemp("day")
    bac = baccarat.simulate(rounds=60, tables=1, seed=12, faults=0.2)
    bj = blackjack.simulate(rounds=60, tables=1, seed=12, faults=0.2)
    events = pl.concat([e.with_columns(pl.col(pl.Enum).cast(pl.String))
                        for e in (bac.events, bj.events)], how="diagonal_relaxed")
    write_events(events, folder / "log.jsonl", "jsonl")
    write_house_rules([*bac.tables, *bj.tables], folder / "house.toml", blackjack=bj.house)
    rs = load_rulesets()
    house = load_house(folder / "house.toml", rs, on=date(2026, 11, 1))
    found = _with_parts(audit.run(expand([str(folder / "log.jsonl")]), house, rs))
    return events, house, found


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(style=_styles(), split=st.booleans(), order=st.randoms(use_true_random=False))
def test_any_names_words_and_notation_read_through_their_profile(
        _faulty_day, tmp_path_factory, style, split, order):
    events, house, hand_history = _faulty_day
    folder = tmp_path_factory.mktemp("feed")
    feed = exports.feed(events, style)
    table = style.columns["table_id"]
    parts = feed.partition_by(table) if split else [feed]
    paths = []
    for n, part in enumerate(parts):
        path = folder / f"feed-{n}.jsonl"
        part.write_ndjson(path)
        paths.append(str(path))
    order.shuffle(paths)
    (folder / "profile.toml").write_text(exports.feed_profile(style))
    read = translate(load_profile(folder / "profile.toml"), paths)
    result = audit.run(read.sources, house, load_rulesets(), export=read)
    expected = result.coverage.keep(hand_history).select(KEY).unique()
    assert _sorted(result.findings.select(KEY).unique()) == _sorted(expected)


def test_a_csv_header_naming_a_column_twice_is_exit_2(tmp_path):
    result = _audit(tmp_path, {"coups.csv": "T,S,R,Start,W,PP,BP,P1,P2,B1,B2,R\n"})
    assert result.exit_code == 2
    assert "'R' twice" in result.output


def test_settlements_in_one_place_leave_the_rounds_order_not_judged(tmp_path):
    profile = _COUPS + _WAGERS + 'collect = "Lost"\nsettle_order = "At"\n'
    coups = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
             "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n"
             "BAC-01,S1,2,2026-11-01T20:01:00,P,9,7,7S,2H,3D,4C\n")
    # round 1: the winner paid before the loser was collected; round 2: the same, but
    # both settlements in one place, so their order is not known
    wagers = ("T,S,R,Seat,Bet,Amt,Pay,Lost,At\n"
              "BAC-01,S1,1,1,player,25,25,,1\n"
              "BAC-01,S1,1,2,banker,25,,25,2\n"
              "BAC-01,S1,2,1,player,25,25,,5\n"
              "BAC-01,S1,2,2,banker,25,,25,5\n")
    result = _audit(tmp_path, {"coups.csv": coups, "wagers.csv": wagers}, profile)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    early = found.filter(pl.col("rule_id") == "BA701")
    assert early["round"].to_list() == [1], result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    ba701 = next(r for r in summary["coverage"]["by_rule"] if r["rule_id"] == "BA701")
    assert ba701["rounds_not_judged"] == 1


def test_profile_check_lists_a_decision_no_map_covers(tmp_path):
    (tmp_path / "profile.toml").write_text("""\
[profile]
name = "blackjack coups"
version = 1

[[source]]
name = "coups"
files = ["coups*.csv"]
layout = "coups"

[source.columns]
table_id = "T"
game = { value = "blackjack" }
shoe_id = "S"
round = "R"
seat = "Box"
cards = "Cards"
actions = "Do"
dealer_cards = "Dealer"

[source.values.action]
S = "stand"

[source.cards]
notation = "rank_suit"
""")
    (tmp_path / "coups.csv").write_text("T,S,R,Box,Cards,Do,Dealer\n"
                                        "BJ-01,S1,1,1,TS 2H 5C,H S,9C 8D\n"
                                        "BJ-01,S1,1,2,5S 5H,S,9C 8D\n")
    result = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml"),
                                       str(tmp_path / "coups.csv")])
    assert result.exit_code == 0, result.output
    assert "action: 'H' is in no value map (1 row(s), first at line 2)" in result.output


def test_exports_too_large_to_hold_are_refused_where_they_must_be_held(tmp_path):
    # auditor import holds the rows whole: no work folder to read them in parts
    from auditor import budget

    _day(tmp_path, "baccarat", 10, 0.0, "coups", rounds=20)
    profile = load_profile(tmp_path / "x" / "profile.toml")
    with pytest.raises(budget.BudgetError, match="held whole"):
        translate(profile, [str(tmp_path / "x")], memory=budget.PROCESS_BYTES + 1000)
    read = translate(profile, [str(tmp_path / "x")], memory=budget.GB)
    assert read.accounting()["read"] > 0


def test_profile_check_says_what_an_audit_would_refuse(tmp_path):
    profile = _COUPS + """
[[source]]
name = "feed"
files = ["feed*.jsonl"]
layout = "events"

[source.columns]
table_id = "t"
game = { value = "baccarat" }
event = "e"
"""
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "coups.csv").write_text("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
                                        "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n")
    (tmp_path / "feed.jsonl").write_text('{"t": "BAC-01", "e": "shuffle"}\n')
    check = ["profile", "check", str(tmp_path / "profile.toml")]
    both = CliRunner().invoke(main, [*check, str(tmp_path / "coups.csv"),
                                     str(tmp_path / "feed.jsonl")])
    assert both.exit_code == 2
    assert "table BAC-01: given by an events source (feed)" in both.output
    (tmp_path / "coups2.csv").write_text("T,S,R,Start,W,PP,BP,P1,P2,B1,B2,R\n")
    twice = CliRunner().invoke(main, [*check, str(tmp_path / "coups2.csv")])
    assert twice.exit_code == 2
    assert "names the column 'R' twice" in twice.output


def test_csv_blank_lines_hold_no_record_and_a_line_break_in_a_field_is_malformed(tmp_path):
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n"
            "\n"
            "BAC-01,S1,2,2026-11-01T20:01:00,\"P\nB\",9,7,7S,2H,3D,4C\n"
            "BAC-01,S1,3,2026-11-01T20:02:00,X,9,7,7S,2H,3D,4C\n")
    result = _audit(tmp_path, {"coups.csv": rows})
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    at = {r["rule_id"]: r["line"] for r in found.to_dicts() if r["rule_id"] != "HR001"}
    assert at["IN002"] == 4, result.output  # the record of two lines, at its first
    assert at["EX001"] == 6  # lines counted past the blank line and the broken record
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rows"]["read"] == 3 and summary["rows"]["balanced"]


def test_an_imported_rows_findings_point_at_the_export_where_the_files_are_audited_alone(
        tmp_path):
    # hand-history-v1 1.2: rows carrying source_file and source_line are reported there,
    # also where the dataset's files are named one by one (no _import.json read)
    _day(tmp_path, "baccarat", 11, 0.2, "coups", rounds=60)
    x, house = tmp_path / "x", str(tmp_path / "house.toml")
    runner = CliRunner()
    runner.invoke(main, ["audit", str(x), "--profile", str(x / "profile.toml"), "--house",
                         house, "--out", str(tmp_path / "direct"), "--no-report", "-q"])
    made = runner.invoke(main, ["import", str(x), "--profile", str(x / "profile.toml"),
                                "--house", house, "--out", str(tmp_path / "dataset")])
    assert made.exit_code == 0, made.output
    files = sorted(str(p) for p in (tmp_path / "dataset").rglob("export-*.parquet"))
    alone = runner.invoke(main, ["audit", *files, "--house", house, "--out",
                                 str(tmp_path / "alone"), "--no-report", "-q"])
    assert alone.exit_code == 1, alone.output
    key = ["rule_id", "table_id", "round", "file", "line"]
    games = pl.col("rule_id").str.starts_with("BA")
    direct = pl.read_parquet(tmp_path / "direct" / "findings.parquet").filter(games)
    found = pl.read_parquet(tmp_path / "alone" / "findings.parquet").filter(games)
    assert direct.height
    missing = direct.select(key).join(found.select(key), on=key, how="anti", nulls_equal=True)
    assert missing.is_empty(), missing
    # the same rows written as JSON Lines and as CSV are reported at the export too
    rows = pl.concat([pl.read_parquet(f).with_columns(pl.col("game").cast(pl.String))
                      for f in files], how="diagonal_relaxed").drop("source_row")
    rows = rows.sort("table_id", pl.col("seq").cast(pl.Int64))
    for encoding in ("jsonl", "csv"):
        text = tmp_path / f"as-{encoding}" / f"log.{encoding}"
        text.parent.mkdir()
        if encoding == "csv":
            rows.write_csv(text)
        else:
            rows.write_ndjson(text)
        out = tmp_path / f"out-{encoding}"
        done = runner.invoke(main, ["audit", str(text), "--house", house, "--out", str(out),
                                    "--no-report", "-q"])
        assert done.exit_code == 1, done.output
        found = pl.read_parquet(out / "findings.parquet").filter(games)
        missing = direct.select(key).join(found.select(key), on=key, how="anti",
                                          nulls_equal=True)
        assert missing.is_empty(), (encoding, missing)


def test_a_wager_joins_its_round_by_the_rounds_number(tmp_path):
    profile = _COUPS + _WAGERS
    coups = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
             "BAC-01,S1,07,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n")
    wagers = "T,S,R,Seat,Bet,Amt,Pay\nBAC-01,S1,7,1,player,25,25\n"
    _audit(tmp_path, {"coups.csv": coups, "wagers.csv": wagers}, profile)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert "EX005" not in found["rule_id"].to_list()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rows"]["export"]["made_events"] == 2


@pytest.mark.parametrize(("game", "layout"), [("baccarat", "events"), ("baccarat", "coups"),
                                              ("blackjack", "coups")])
def test_exports_too_large_to_hold_are_read_a_part_of_tables_at_a_time(tmp_path, game,
                                                                      layout):
    """Exports that cannot be held whole within the budget are read a part of their
    tables at a time and spilled: the same findings, files and lines, and the same
    summary, as read whole."""
    from auditor import budget

    _day(tmp_path, game, 12, 0.2, layout, rounds=120)
    rs = load_rulesets()
    house = load_house(tmp_path / "house.toml", rs, on=date(2026, 11, 1))
    profile = load_profile(tmp_path / "x" / "profile.toml")
    whole = translate(profile, [str(tmp_path / "x")])
    # room for a part of about one table: the two tables are read in two parts
    small = budget.PROCESS_BYTES + 1_500 * 100
    parts = translate(profile, [str(tmp_path / "x")], memory=small,
                      workdir=tmp_path / "spill")
    assert parts.spilled is not None and whole.spilled is None
    assert len({p.name for s in parts.spilled for p in s.folder.rglob("*.parquet")}) == 2
    one = audit.run(whole.sources, house, rs, export=whole)
    two = audit.run(parts.sources, house, rs, export=parts)
    assert one.findings.height
    assert two.findings.to_dicts() == one.findings.to_dicts()
    assert parts.accounting() == whole.accounting()
    assert two.coverage.as_dict() == one.coverage.as_dict()


@pytest.mark.parametrize("clock", [True, False])
def test_box_rows_too_large_to_hold_are_read_a_part_of_tables_at_a_time(tmp_path, clock):
    """(1.1) Bracketed lists, every hand of a box in one row, rounds numbered from the
    rows, with or without a clock: read in parts as read whole."""
    from auditor import budget

    _boxes_day(tmp_path, 14, 0.2, exports.BoxStyle(rounds=False, clock=clock), rounds=120)
    # a cell of the second table's that does not parse: said in the part that reads it
    path = tmp_path / "x" / "bj-boxes-day.csv"
    lines = path.read_text().splitlines(keepends=True)
    at = max(n for n, line in enumerate(lines) if line.startswith("BJ-02"))
    lines[at] = lines[at].replace("]]", "]", 1)
    path.write_text("".join(lines))
    rs = load_rulesets()
    house = load_house(tmp_path / "house.toml", rs, on=date(2026, 11, 1))
    profile = load_profile(tmp_path / "x" / "profile.toml")
    whole = translate(profile, [str(tmp_path / "x")])
    parts = translate(profile, [str(tmp_path / "x")], memory=budget.PROCESS_BYTES + 1_500 * 100,
                      workdir=tmp_path / "spill")
    assert parts.spilled is not None
    one = audit.run(whole.sources, house, rs, export=whole)
    two = audit.run(parts.sources, house, rs, export=parts)
    assert one.findings.filter(pl.col("rule_id") == "EX007")["line"].to_list() == [at + 1]
    assert two.findings.to_dicts() == one.findings.to_dicts()
    assert parts.accounting() == whole.accounting()


@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_a_feed_without_shoe_or_round_finds_what_it_finds_with_them(tmp_path, game):
    """Shoes derived from the shuffles and rounds from the round_starts (export-profiles-
    v1, Layouts): the same findings at the same lines as where the feed names them."""
    _day(tmp_path, game, 13, 0.2, "events", rounds=120)
    rs = load_rulesets()
    house = load_house(tmp_path / "house.toml", rs, on=date(2026, 11, 1))
    profile = tmp_path / "x" / "profile.toml"
    named = translate(load_profile(profile), [str(tmp_path / "x")])
    text = profile.read_text().replace('shoe_id = "Shoe"\n', "").replace('round = "Coup"\n', "")
    profile.write_text(text)
    derived = translate(load_profile(profile), [str(tmp_path / "x")])
    key = ["rule_id", "table_id", "round", "file", "line"]
    one = audit.run(named.sources, house, rs, export=named).findings
    two = audit.run(derived.sources, house, rs, export=derived).findings
    assert one.height
    assert _sorted(two.select(key)) == _sorted(one.select(key))
    assert two["shoe_id"].drop_nulls().str.contains("@").all()


# --- what stops an audit of exports: exit 2 with one line naming the file, never a traceback

SAMPLES = Path(__file__).parent.parent / "sample_logs" / "exports"


def _sample(tmp_path: Path, name: str, old: str = "", new: str = "", rows: int = 60) -> Path:
    """A small copy of a sample export (each file's first `rows` records) and its
    profile, `old` replaced by `new` in the profile."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    text = (SAMPLES / name / "profile.toml").read_text()
    assert old in text, old
    (folder / "profile.toml").write_text(text.replace(old, new, 1))
    for path in (SAMPLES / name).iterdir():
        if path.name == "profile.toml":
            continue
        gzipped = path.name.endswith(".gz")
        data = gzip.decompress(path.read_bytes()) if gzipped else path.read_bytes()
        header = 1 if ".csv" in path.name else 0
        data = b"".join(data.splitlines(keepends=True)[:rows + header])
        (folder / path.name).write_bytes(gzip.compress(data) if gzipped else data)
    return folder


def _stops(folder: Path, *files: str, command: str = "audit", more: tuple = ()) -> str:
    """`auditor audit` (or `import`, `profile check`) of the exports: exit 2 with one
    line, no traceback; that line."""
    profile = str(folder / "profile.toml")
    paths = [str(folder / f) for f in files] or [str(folder)]
    house = str(SAMPLES.parent / "house.toml")
    args = {"audit": ["audit", *paths, "--profile", profile, "--house", house, "--out",
                      str(folder.parent / "out"), "--no-report", "-q"],
            "import": ["import", *paths, "--profile", profile, "--house", house, "--out",
                       str(folder.parent / "dataset")],
            "check": ["profile", "check", profile, *paths]}[command]
    result = CliRunner().invoke(main, [*args, *more])
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    said = result.output.strip().splitlines()
    assert said[-1].startswith("Error: ") and "Traceback" not in result.output
    if command != "check":
        assert len(said) == 1, said
    return said[-1]


_AMOUNT = "CAST(stake_cents AS DOUBLE) / 100"


@pytest.mark.parametrize(("sql", "why"), [
    ("CAST(spot AS INTEGER)", "conversion from `str` to `i32` failed"),
    ("UPPER(stake_cents)", "expected `String`, got `i64`"),
    ("CASE WHEN REGEXP_LIKE(spot, '(') THEN 1 END", "regex"),
])
@pytest.mark.parametrize("command", ["audit", "import", "check"])
def test_profile_sql_that_fails_on_a_file_is_exit_2_naming_file_and_key(tmp_path, sql, why,
                                                                         command):
    folder = _sample(tmp_path, "baccarat-coups", _AMOUNT, sql)
    line = _stops(folder, command=command)
    assert f"{folder / 'wagers-baccarat.jsonl'}: source 'rfid'.columns.amount: its SQL " \
        "fails on this file" in line
    assert why in line


def test_profile_sql_of_a_table_that_fails_is_exit_2_where_the_exports_are_read_in_parts(
        tmp_path):
    from auditor import budget
    from auditor.profiles import ProfileError

    folder = _sample(tmp_path, "baccarat-coups", 'table_id = "table"',
                     'table_id = { sql = "CAST(\\"table\\" AS INTEGER)" }')
    profile = load_profile(folder / "profile.toml")
    for memory in (None, budget.PROCESS_BYTES + 1_500 * 100):
        with pytest.raises(ProfileError, match="rfid'.columns.table_id: its SQL fails"):
            translate(profile, [str(folder)], memory=memory, workdir=tmp_path / "spill")


def test_profile_sql_dividing_by_zero_makes_bad_values_not_a_crash(tmp_path):
    # polars gives inf (or NaN) for x / 0 and null for x // 0 and x % 0: each row's
    # amount is then a bad value, an input finding at its line
    folder = _sample(tmp_path, "baccarat-coups", _AMOUNT, "stake_cents / 0", rows=20)
    result = _audit_sample(folder)
    assert result.exit_code == 1, (result.output, result.exception)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    bad = found.filter(pl.col("rule_id") == "IN007", pl.col("field") == "amount")
    assert bad["line"].to_list() == list(range(1, 21)) and set(bad["observed"]) == {"inf"}


def _audit_sample(folder: Path):
    return CliRunner().invoke(main, [
        "audit", str(folder), "--profile", str(folder / "profile.toml"), "--house",
        str(SAMPLES.parent / "house.toml"), "--out", str(folder.parent / "out"),
        "--no-report", "-q"])


@pytest.mark.parametrize(("old", "new", "key", "column"), [
    (_AMOUNT, "CAST(stake_cent AS DOUBLE) / 100", "stake_cent", "amount"),
    ('seat = "position"', 'seat = "pos"', "pos", "seat"),
])
@pytest.mark.parametrize("command", ["audit", "import", "check"])
def test_a_needed_json_lines_key_no_row_has_is_exit_2_naming_file_and_key(tmp_path, old, new,
                                                                          key, column,
                                                                          command):
    # before, the wagers were read with that column empty: 7,332 events became 5,342
    folder = _sample(tmp_path, "baccarat-coups", old, new)
    line = _stops(folder, command=command)
    assert (f"{folder / 'wagers-baccarat.jsonl'}: no row has the key {key!r}, from which the "
            f"profile's source 'rfid' takes {column}, a column the wagers layout needs") in line


def test_a_json_lines_key_some_rows_lack_is_an_empty_cell_in_those_rows(tmp_path):
    folder = _sample(tmp_path, "baccarat-coups", rows=30)
    wagers = folder / "wagers-baccarat.jsonl"
    rows = [json.loads(line) for line in wagers.read_text().splitlines()]
    for row in rows[1:]:
        del row["position"]
    wagers.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = _audit_sample(folder)
    assert result.exit_code == 1, (result.output, result.exception)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    lacking = found.filter(pl.col("file") == str(wagers), pl.col("field") == "seat")
    assert lacking["line"].unique().sort().to_list() == list(range(2, 31))
    check = CliRunner().invoke(main, ["profile", "check", str(folder / "profile.toml"),
                                      str(folder)])
    assert check.exit_code == 0, check.output


def test_a_key_no_row_has_of_a_column_the_layout_does_without_is_named_not_refused(tmp_path):
    # one profile reads both games' feeds: a baccarat feed writes no Hand, Move, Patron
    folder = _sample(tmp_path, "feed", rows=200)
    check = CliRunner().invoke(main, ["profile", "check", str(folder / "profile.toml"),
                                      str(folder)])
    assert check.exit_code == 0, check.output
    assert "feed-baccarat.jsonl.gz: lacks the mapped column 'Hand'" in check.output
    assert _audit_sample(folder).exit_code in (0, 1)


def test_a_needed_json_lines_key_null_in_every_row_is_empty_cells_not_refused(tmp_path):
    folder = _sample(tmp_path, "baccarat-coups", rows=10)
    wagers = folder / "wagers-baccarat.jsonl"
    rows = [{**json.loads(line), "position": None} for line in wagers.read_text().splitlines()]
    wagers.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = _audit_sample(folder)
    assert result.exit_code == 1, (result.output, result.exception)


# --- gzip exports: read to their end, within the budget, a damaged one an input finding


def test_a_gzip_export_of_several_members_is_read_to_its_end(tmp_path):
    one = _sample(tmp_path / "one", "feed", rows=300)
    two = _sample(tmp_path / "two", "feed", rows=300)
    for path in two.glob("*.gz"):  # each file two gzip members, one after the other
        lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
        path.write_bytes(gzip.compress(b"".join(lines[:100]))
                         + gzip.compress(b"".join(lines[100:])))
    whole = translate(load_profile(one / "profile.toml"), [str(one)])
    members = translate(load_profile(two / "profile.toml"), [str(two)])
    assert members.accounting() == whole.accounting()
    assert members.accounting()["read"] == 600


def _gzip_bomb(path: Path, megabytes: int, line: bytes) -> None:
    """A small gzip file of `line` repeated to `megabytes` of text."""
    block = line * ((1 << 20) // len(line) + 1)
    with gzip.open(path, "wb", compresslevel=9) as handle:
        for _ in range(megabytes):
            handle.write(block)


def test_a_gzip_export_that_expands_past_the_budget_stops_before_it_is_held(tmp_path):
    from auditor import budget
    from auditor.profiles.files import look

    folder = _sample(tmp_path, "feed", rows=20)
    bomb = folder / "feed-bomb.jsonl.gz"
    first = gzip.decompress((folder / "feed-baccarat.jsonl.gz").read_bytes()).split(b"\n")[0]
    _gzip_bomb(bomb, 120, first + b"\n")
    assert bomb.stat().st_size < 1 << 20
    # a budget of 1 GB holds an export of at most a tenth of it: 102 MB of text
    said = (f"{bomb}: the gzip file holds more than 102 MB of text, the most one export "
            "may hold within the memory budget")
    assert said in _stops(folder, more=("--memory", "1"))
    profile = load_profile(folder / "profile.toml")
    with pytest.raises(budget.BudgetError, match="more than 102 MB"):  # read in parts too
        translate(profile, [str(folder)], memory=budget.GB, workdir=tmp_path / "spill")
    with pytest.raises(budget.BudgetError, match="more than 102 MB"):  # profile check
        look(bomb, profile.sources[0], budget.export_text_limit(budget.GB))
    # within a budget it fits, it is read
    assert translate(profile, [str(bomb)], memory=2 * budget.GB).accounting()["read"] > 0


@pytest.mark.parametrize(("name", "file"), [("feed", "feed-baccarat.jsonl.gz"),
                                            ("baccarat-coups", "coups-baccarat.csv"),
                                            ("blackjack-coups", "bj-coups-blackjack.csv")])
@pytest.mark.parametrize("damage", ["cut short", "corrupt"])
def test_a_damaged_gzip_export_is_an_input_finding_not_a_traceback(tmp_path, name, file,
                                                                   damage):
    pattern = file.split("-blackjack")[0].split("-baccarat")[0] + "-*.csv"
    folder = _sample(tmp_path, name, f'files = ["{pattern}"]',
                     f'files = ["{pattern}", "{pattern}.gz"]') if "csv" in file else _sample(
        tmp_path, name)
    path = folder / file
    data = path.read_bytes() if file.endswith(".gz") else gzip.compress(path.read_bytes())
    path.unlink()
    path = path.with_name(path.name.removesuffix(".gz") + ".gz")
    if damage == "cut short":
        data = data[:len(data) // 2]
    else:
        data = data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[
            len(data) // 2 + 1:]
    path.write_bytes(data)
    for files in ([path], list(folder.glob("*-*"))):  # the file alone, and with the others
        result = CliRunner().invoke(main, [
            "audit", *map(str, files), "--profile", str(folder / "profile.toml"), "--house",
            str(SAMPLES.parent / "house.toml"), "--out", str(tmp_path / "out"),
            "--no-report", "-q"])
        assert result.exit_code == 1, (result.output, result.exception)
        found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
        unreadable = found.filter(pl.col("rule_id") == "IN001")
        assert unreadable["file"].to_list() == [str(path)]
        assert damage in unreadable["message"][0]
    check = CliRunner().invoke(main, ["profile", "check", str(folder / "profile.toml"),
                                      str(path)])
    assert check.exit_code == 0, check.output
    assert f"{path}: source " in check.output and damage in check.output


# --- a CSV export read for its mapped columns only

# the peak resident memory of a process that reads the exports, in KB (VmHWM: its own,
# where getrusage's maxrss would carry the parent's high mark over exec)
_PEAK = """
import re, sys
from pathlib import Path
from auditor.profiles.load import load
from auditor.profiles.read import translate
folder = Path(sys.argv[1])
translate(load(folder / "profile.toml"), [str(folder / "coups-baccarat.csv")])
print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text())[1])
"""


def _wide(tmp_path: Path, extra: int, rows: int = 100) -> Path:
    """The sample coups, its first `rows` rows, with `extra` columns it does not map."""
    folder = _sample(tmp_path / f"wide{extra}", "baccarat-coups", rows=rows)
    (folder / "wagers-baccarat.jsonl").unlink()
    path = folder / "coups-baccarat.csv"
    header, *lines = path.read_text().splitlines()
    header += "".join(f";Extra{n}" for n in range(extra))
    path.write_text("\n".join([header, *(line + ";x" * extra for line in lines)]) + "\n")
    return folder


def test_a_csv_export_with_many_more_columns_than_mapped_reads_its_mapped_ones_only(
        tmp_path):
    narrow, wide = _wide(tmp_path, 0), _wide(tmp_path, 20_000)
    one = translate(load_profile(narrow / "profile.toml"), [str(narrow)])
    two = translate(load_profile(wide / "profile.toml"), [str(wide)])
    assert two.accounting() == one.accounting() and one.accounting()["read"] == 100
    assert [e.drop("_file").to_dicts() for e in two.events] == [
        e.drop("_file").to_dicts() for e in one.events]
    root = Path(__file__).parent.parent

    def peak(folder: Path) -> int:  # KB, the whole process: an interpreter with polars
        ran = subprocess.run([sys.executable, "-c", _PEAK, str(folder)], check=True,
                             capture_output=True, text=True, cwd=root,
                             env={**os.environ, "PYTHONPATH": str(root)})
        return int(ran.stdout.split()[-1])

    # read whole, the 2 million extra cells took about 140 MB more (and the header's
    # names were counted against each other: 5 seconds); their names alone take ~35 MB
    assert peak(wide) - peak(narrow) < 80_000
    # the header is still checked for a name given twice, mapped or not
    path = wide / "coups-baccarat.csv"
    path.write_text(path.read_text().replace("Extra19999", "Extra7", 1))
    result = _audit_sample(wide)
    assert result.exit_code == 2 and "names the column 'Extra7' twice" in result.output


# --- revision 1.1: what exports that exist were found to need


def _tsv_feed(tmp_path: Path, amount: str, cents) -> Path:
    """The sample device feed's first 400 frames as a tab-separated file whose amounts
    are written in cents (`cents`: the cell of a dollar amount), its profile mapping
    `amount` by `amount` (an SQL expression over AmountCents)."""
    folder = _sample(tmp_path, "feed", rows=400)
    gz = folder / "feed-baccarat.jsonl.gz"
    rows = pl.read_ndjson(gzip.decompress(gz.read_bytes()), infer_schema_length=None)
    for other in folder.glob("feed-*.gz"):
        other.unlink()
    rows = rows.with_columns(pl.col("Amt").map_elements(cents, return_dtype=pl.String)
                             .alias("AmountCents")).drop("Amt")
    mapped = ("Hand", "Move", "Patron", "Took", "Mode", "Why", "Exposure", "Shown", "To",
              "Card", "Box", "Spot", "Decks", "Won", "PPts", "BPts", "Dealer")
    rows = rows.with_columns(pl.lit(None, pl.String).alias(c) for c in mapped
                             if c not in rows.columns)
    rows.write_csv(folder / "feed-baccarat.tsv", separator="\t")
    text = (folder / "profile.toml").read_text()
    text = text.replace('files = ["feed-*.jsonl", "feed-*.jsonl.gz"]',
                        'files = ["feed-*.tsv"]\nformat = "csv"\ndelimiter = "\\t"')
    (folder / "profile.toml").write_text(text.replace('amount = "Amt"',
                                                      f'amount = {{ sql = "{amount}" }}'))
    return folder


@pytest.mark.parametrize(("amount", "cents"), [
    ("AmountCents / 100.0", lambda a: str(round(float(a) * 100))),
    ("CAST(AmountCents AS DOUBLE) / 100", lambda a: str(round(float(a) * 100))),
    ("AmountCents * 0.01", lambda a: str(round(float(a) * 100))),
    # a float's representation error (0.1 + 0.2) is no extra decimal
    ("CAST(AmountCents AS DOUBLE) / 100 + 0.1 + 0.2 - 0.3", lambda a: str(round(float(a) * 100))),
    # cents written with decimals: polars reads the column as floats
    ("AmountCents / 100", lambda a: f"{float(a) * 100:.1f}"),
])
def test_a_tab_separated_feed_with_amounts_in_cents_by_sql_reads_as_dollars(tmp_path, amount,
                                                                            cents):
    """Issue 37: `AmountCents / 100.0` was read as the text 200.000000 and rejected."""
    folder = _tsv_feed(tmp_path, amount, cents)
    result = _audit_sample(folder)
    assert result.exit_code in (0, 1), (result.output, result.exception)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert found.filter(pl.col("field") == "amount").is_empty(), found.filter(
        pl.col("field") == "amount")["observed"].to_list()[:3]
    # the same findings as the feed with its amounts in dollars (a line below: the header)
    same = _sample(tmp_path / "dollars", "feed", rows=400)
    for other in same.glob("feed-blackjack*"):
        other.unlink()
    assert _audit_sample(same).exit_code in (0, 1)
    dollars = pl.read_parquet(tmp_path / "dollars" / "out" / "findings.parquet")
    assert dollars.height
    key = ["rule_id", "table_id", "shoe_id", "round", "line"]
    assert _sorted(found.select(key)) == _sorted(dollars.select(key).with_columns(
        pl.col("line") + 1))


def test_sql_results_are_read_by_value_whatever_their_type():
    from auditor.profiles.cells import sql_cells
    from auditor.profiles.model import Mapping, Source

    frame = pl.DataFrame({"c": [20000, 1234, 12345, 300, 350, None],
                          "s": ["3.0", "3.5", "4", "x", "7", None]})
    columns = {"amount": Mapping(sql="c / 100.0"), "pay": Mapping(sql="c / 1000.0"),
               "push": Mapping(sql="CAST(c AS DOUBLE) / 100 + 0.1 + 0.2 - 0.3"),
               "seat": Mapping(sql="c / 100.0"), "round": Mapping(sql="CAST(c AS DOUBLE) / 100"),
               "decks": Mapping(sql="TRY_CAST(s AS DOUBLE)")}
    read = {s.name: s.to_list() for s in sql_cells(frame, Source("s", ("*",), "wagers",
                                                                  columns=columns))}
    # an empty cell stays empty (a decimal's too)
    assert read["amount"] == ["200", "12.34", "123.45", "3", "3.5", None]
    assert read["pay"] == ["20", "1.234", "12.345", "0.3", "0.35", None]  # 12.345: 3 decimals
    assert read["push"] == read["amount"]  # a float's error is no extra decimal
    # an integer column takes 3.0 as 3 and 3.5 as a bad value (kept as written)
    assert read["seat"] == read["round"] == ["200", "12.34", "123.45", "3", "3.5", None]
    assert read["decks"] == ["3", "3.5", "4", None, "7", None]


_BJ = """\
[profile]
name = "blackjack coups"
version = 1

[[source]]
name = "coups"
files = ["coups*.csv"]
layout = "coups"
{source}
[source.columns]
table_id = "T"
game = {{ value = "blackjack" }}
shoe_id = "S"
seat = "Box"
{columns}
[source.values.action]
H = "hit"
S = "stand"
D = "double"
P = "split"
{actions}
[source.cards]
notation = "rank_suit"
{cards}"""


def _bj(tmp_path: Path, rows: str, columns: str = 'round = "R"\ncards = "Cards"\n'
        'actions = "Do"\ndealer_cards = "Dealer"\n', actions: str = "", source: str = "",
        cards: str = "", more: tuple = (), *extra: str):
    """A blackjack coups export (`rows`: its CSV text) audited through a profile of
    those columns; the CLI's result, the findings and the summary."""
    (tmp_path / "profile.toml").write_text(_BJ.format(
        source=source, columns=columns, actions=actions, cards=cards) + "".join(extra))
    (tmp_path / "coups.csv").write_text(rows)
    (tmp_path / "house.toml").write_text(
        'facility = "T"\n[[tables]]\ntable_id = "BJ-01"\ngame = "blackjack"\n')
    result = CliRunner().invoke(main, [
        "audit", str(tmp_path / "coups.csv"), "--profile", str(tmp_path / "profile.toml"),
        "--house", str(tmp_path / "house.toml"), "--out", str(tmp_path / "out"),
        "--no-report", "-q", *more])
    if result.exit_code == 2:
        return result, None, None
    assert result.exit_code in (0, 1), (result.output, result.exception)
    return (result, pl.read_parquet(tmp_path / "out" / "findings.parquet"),
            json.loads((tmp_path / "out" / "summary.json").read_text()))


def _replayed(tmp_path: Path) -> pl.DataFrame:
    """The events the audit replayed, from the exports of `tmp_path` (_bj's)."""
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "coups.csv")])
    return pl.concat(read.events, how="diagonal_relaxed")


_ROWS = ("T,S,R,Box,Cards,Do,Dealer,Final\n"
         'BJ-01,S1,1,1,TS 2H 5C,H S,9C 8D,"TS,2H,5C"\n'
         'BJ-01,S1,1,2,5S 5H,S,9C 8D,"5S,5H"\n'
         'BJ-01,S1,2,1,9S 9H,S,TC 7D,"9S,9H"\n')


@pytest.mark.parametrize("mapping", [
    'cards = { sql = "REPLACE(Final, \',\', \' \')" }',
    'cards = { sql = "Cards" }',
])
def test_sql_on_a_list_column_makes_its_cards(tmp_path, mapping):
    """Issue 37: `cards = { sql = "player_final" }` passed `profile check` and then made
    no cards at all."""
    columns = f'round = "R"\n{mapping}\nactions = "Do"\ndealer_cards = "Dealer"\n'
    result, found, _ = _bj(tmp_path, _ROWS, columns)
    assert result.exit_code in (0, 1), result.output
    made = _replayed(tmp_path).filter((pl.col("event") == "card") & (pl.col("target") == "seat"))
    assert made.sort("line", "seq")["card"].to_list() == ["TS", "2H", "5C", "5S", "5H", "9S", "9H"]


def test_constants_and_sql_on_every_list_and_card_column(tmp_path):
    columns = ('round = "R"\ncards = "Cards"\nactions = { value = "S" }\n'
               'dealer_cards = { sql = "UPPER(LOWER(Dealer))" }\n')
    _bj(tmp_path, _ROWS, columns)
    made = _replayed(tmp_path)
    assert made.filter(pl.col("event") == "action")["action"].unique().to_list() == ["stand"]
    assert made.filter(pl.col("target") == "dealer").height == 4
    # a baccarat coup's card columns: an export column, a constant or SQL
    profile = _COUPS.replace('player = ["P1", "P2"]',
                             'player = ["P1", { sql = "UPPER(P2)" }]').replace(
        'banker = ["B1", "B2"]', 'banker = [{ value = "3D" }, "B2"]')
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2h,xx,4C\n")
    (tmp_path / "bac").mkdir()
    result = _audit(tmp_path / "bac", {"coups.csv": rows}, profile)
    assert result.exit_code in (0, 1), result.output
    read = translate(load_profile(tmp_path / "bac" / "profile.toml"),
                     [str(tmp_path / "bac" / "coups.csv")])
    assert read.events[0].filter(pl.col("event") == "card")["card"].to_list() == [
        "7S", "3D", "2H", "4C"]


@pytest.mark.parametrize(("old", "new", "key"), [
    # a value map of a list column: its elements are cards or decisions
    ("[source.values.action]", "[source.values.cards]\nX = \"AS\"\n[source.values.action]",
     "values.cards"),
    # a format column the layout does not read
    ('seat = "Box"', 'seat = "Box"\nseq = "R"', "columns.seq"),
    ('seat = "Box"', 'seat = "Box"\nplayer_id = "R"', "columns.player_id"),
    ('seat = "Box"', 'seat = "Box"\namount = "R"', "columns.amount"),
    # (1.1) net results: a box's main wager and its net, one with the other
    ('seat = "Box"', 'seat = "Box"\nnet = "R"', "columns.net"),
    # decks without shoe_starts makes no shuffle
    ('seat = "Box"', 'seat = "Box"\ndecks = { value = 6 }', "columns.decks"),
    # times without a time column
    ('layout = "coups"', 'layout = "coups"\ntimestamp_format = "%Y"', "timestamp_format"),
    # a separator with bracketed lists
    ('notation = "rank_suit"', 'notation = "rank_suit"\nseparator = ","', "cards.separator"),
])
def test_a_key_nothing_reads_is_exit_2_naming_it(tmp_path, old, new, key):
    text = _BJ.format(source='lists = "bracketed"',
                      columns='round = "R"\ncards = "C"\nactions = "A"\n', actions="", cards="")
    assert old in text
    (tmp_path / "profile.toml").write_text(text.replace(old, new, 1))
    result = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml")])
    assert result.exit_code == 2, result.output
    assert f"source 'coups'.{key}:" in result.output


@pytest.mark.parametrize(("profile", "old", "new", "key"), [
    (_COUPS + _WAGERS, 'pay = "Pay"', 'pay = "Pay"\ngame = { value = "baccarat" }',
     "'wagers'.columns.game"),
    (_COUPS + _WAGERS, 'pay = "Pay"', 'pay = "Pay"\n[source.cards]\nnotation = "index"',
     "'wagers'.cards"),
    (_COUPS + _WAGERS, 'pay = "Pay"', 'pay = "Pay"\nvig_mode = "M"', "'wagers'.columns.vig_mode"),
    (_COUPS + _WAGERS, 'layout = "wagers"', 'layout = "wagers"\nlists = "bracketed"',
     "'wagers'.lists"),
    (_COUPS + _WAGERS.replace('pay = "Pay"', 'pay = "Pay"\nts = "When"'), 'layout = "wagers"',
     'layout = "wagers"\njoin = "time"', "'wagers'.columns.shoe_id"),
    (_COUPS, 'winner = "W"', 'winner = "W"\ncard = "P1"', "'coups'.columns.card"),
])
def test_a_column_a_layout_does_not_read_is_exit_2_naming_it(tmp_path, profile, old, new,
                                                             key):
    assert old in profile
    (tmp_path / "profile.toml").write_text(profile.replace(old, new, 1))
    result = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml")])
    assert result.exit_code == 2, result.output
    assert f"source {key}:" in result.output


def test_an_unmapped_decision_withholds_its_round_and_is_counted_with_its_rounds(tmp_path):
    """Issue 37: a decision no map covers was read as nothing and its round audited."""
    rows = ("T,S,R,Box,Cards,Do,Dealer\n"
            "BJ-01,S1,1,1,TS 2H 5C,H Q S,9C 8D\n"     # Q: no map covers it
            "BJ-01,S1,1,2,5S 5H,S,9C 8D\n"
            "BJ-01,S1,2,1,9S 9H 3C,Q Z,TC 7D\n"     # Q and Z first seen here: two findings
            "BJ-01,S1,3,1,9S 9H,S,TC 7D\n")
    result, found, summary = _bj(tmp_path, rows)
    mine = found.filter(pl.col("rule_id") == "EX001").sort("line", "observed")
    assert mine.select("line", "observed").rows() == [(2, "Q"), (4, "Z")]
    assert "2 rows have action 'Q'" in mine["message"][0]
    assert "2 rounds are withheld" in mine["message"][0]
    assert "its round is withheld" in mine["message"][1]
    # rounds 1 and 2 withheld, said by the value's finding alone; round 3 audited
    assert found.filter(pl.col("rule_id") == "IN014").is_empty()
    assert summary["rounds"] == {"read": 3, "audited": 1, "reported": 2}
    assert not found.filter(pl.col("field") == "action", pl.col("rule_id") != "EX001").height


def test_an_unmapped_value_in_a_column_no_rule_needs_still_withholds_its_round(tmp_path):
    # dealer_id is needed by no replay: read as nothing, its round would be audited
    profile = _COUPS.replace('winner = "W"', 'winner = "W"\ndealer_id = "D"') + (
        '\n[source.values.dealer_id]\n"7" = "D-7"\n')
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2,D\n"
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C,7\n"
            "BAC-01,S1,2,2026-11-01T20:01:00,P,8,5,8H,KD,2C,3S,8\n")
    result = _audit(tmp_path, {"coups.csv": rows}, profile)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rounds"]["reported"] == 1, result.output
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert found.filter(pl.col("rule_id").is_in(["EX001", "IN014"]))["rule_id"].to_list() == [
        "EX001"]


def _boxes_day(folder: Path, seed: int, faults: float, style, rounds: int = 160):
    """A simulated blackjack day as a hand history and as box rows (every hand of a box
    in one row, bracketed lists), with the table-management wagers where the rows have
    round numbers to join them by."""
    sim = blackjack.simulate(rounds=rounds, tables=2, seed=seed, faults=faults)
    write_events(sim.events, folder / "hh" / "log.jsonl", "jsonl")
    write_house_rules(sim.tables, folder / "house.toml", blackjack=sim.house)
    (folder / "x").mkdir()
    exports.blackjack_boxes(sim.events, style).write_csv(folder / "x" / "bj-boxes-day.csv")
    if style.rounds:
        exports.blackjack_wagers(sim.events).write_csv(folder / "x" / "bj-wagers-day.csv")
    (folder / "x" / "profile.toml").write_text(exports.boxes_profile(style))
    return sim


@pytest.mark.parametrize(("seed", "faults", "rounds", "clock"), [
    (21, 0.0, True, True),
    (22, 0.3, True, True),
    (23, 0.3, False, True),
    (24, 0.3, False, False),
])
def test_blackjack_boxes_in_one_row_find_what_their_hand_history_finds(tmp_path, seed, faults,
                                                                      rounds, clock):
    """(1.1) Every hand of a box in one row, bracketed lists, a hit recorded for a split
    hand's second card; without round numbers (numbered per shoe) and without a clock."""
    style = exports.BoxStyle(rounds=rounds, clock=clock)
    sim = _boxes_day(tmp_path, seed, faults, style)
    hand_history, export = _audits(tmp_path)
    coverage = export.coverage
    expected = coverage.keep(_with_parts(hand_history)).select(KEY).unique()
    found = export.findings.select(KEY).unique()
    if faults:
        lost = _expressible(sim.truth, coverage)
        expected = expected.join(lost, on=KEY[1:], how="anti")
        found = found.join(lost, on=KEY[1:], how="anti")
        assert expected.height
    assert _sorted(found) == _sorted(expected)
    if not faults:
        assert export.findings.height == 0
    if not clock:
        assert coverage.untimed() == sorted(coverage.tables)


@pytest.mark.parametrize(("cell", "hands", "nested", "bad"), [
    ("[10, 4]", [["10", "4"]], False, False),
    ('["KS","4H"]', [["KS", "4H"]], False, False),
    ("[['P', 'H'], ['S']]", [["P", "H"], ["S"]], True, False),
    ('[[6, 10], [6, 4, 11]]', [["6", "10"], ["6", "4", "11"]], True, False),
    (' [ "A" , 2 , ] ', [["A", "2"]], False, False),  # spaces ignored; Python's comma
    ("[]", [[]], False, False),
    ("[[]]", [[]], True, False),
    ("", [[]], False, False),  # an empty cell: no element
    ("[1,", [], False, True),
    ("KS 4H", [], False, True),
    ("[[1], 2]", [], False, True),
    ("[[[1]]]", [], False, True),
    ("['it's']", [], False, True),
])
def test_a_bracketed_list_is_read_by_a_parser(cell, hands, nested, bad):
    from auditor.profiles.lists import hands_of

    read = hands_of(pl.Series([cell]), "bracketed", " ").row(0, named=True)
    assert (read["hands"], read["nested"], read["bad"]) == (hands, nested, bad)
    # separated: split at the separator, never a list of lists
    assert hands_of(pl.Series(["KS  4H"]), "separated", " ")["hands"].to_list() == [
        [["KS", "4H"]]]


_BRACKETED = 'lists = "bracketed"'


def test_a_list_cell_that_does_not_parse_withholds_its_round_naming_the_cause(tmp_path):
    rows = ('T,S,R,Box,Cards,Do,Dealer\n'
            'BJ-01,S1,1,1,"[\'TS\', \'9H\']",[\'S\'],"[\'9C\', \'8D\']"\n'
            'BJ-01,S1,1,2,"[\'5S\', \'5H\'",[\'S\'],"[\'9C\', \'8D\']"\n'   # not closed
            'BJ-01,S1,2,1,"[\'9S\', \'9H\']",[\'S\'],"[\'TC\', \'7D\']"\n')
    result, found, summary = _bj(tmp_path, rows, source=_BRACKETED)
    bad = found.filter(pl.col("rule_id") == "EX007")
    assert bad.select("line", "field", "observed").rows() == [(3, "cards", "['5S', '5H'")]
    assert summary["rounds"] == {"read": 2, "audited": 1, "reported": 1}
    withheld = found.filter(pl.col("rule_id") == "IN014")
    assert withheld["round"].to_list() == [1]
    assert "withheld for the input finding at line 3 (EX007)" in withheld["message"][0]
    assert "lost a row" not in withheld["message"][0]


def test_an_element_mapped_to_nothing_is_dropped_and_insurance_is_no_decision(tmp_path):
    rows = ("T,S,R,Box,Cards,Do,Dealer\n"
            'BJ-01,S1,1,1,"[\'TS\', \'9H\']","[\'N\', \'S\']","[\'AC\', \'8D\']"\n'
            'BJ-01,S1,1,2,"[\'5S\', \'5H\', \'KD\']","[\'I\', \'H\', \'S\']","[\'AC\', \'8D\']"\n')
    result, found, summary = _bj(tmp_path, rows, source=_BRACKETED,
                                 actions='N = ""\nI = "insurance"\n')
    made = _replayed(tmp_path)
    assert made.filter(pl.col("event") == "action").select("seat", "action").rows() == [
        ("1", "stand"), ("2", "hit"), ("2", "stand")]
    # no money is mapped: the insurance makes no wager
    assert made.filter(pl.col("event") == "wager").is_empty()
    assert summary["rows"]["export"]["elements_no_event"] == 1
    assert summary["rows"]["balanced"]
    assert found.filter(pl.col("rule_id").str.starts_with("EX")).is_empty()


def test_every_hand_of_a_box_in_one_row_is_laid_as_dealt(tmp_path):
    """1.1 in detail, item 1: the split gives the hand's second card to the hand it
    makes; a hit recorded on a one-card split hand is the request for its second card."""
    rows = ("T,S,R,Box,Cards,Do,Dealer\n"
            'BJ-01,S1,1,1,"[[\'6S\', \'TD\'], [\'6H\', \'4C\', \'JS\']]",'
            '"[[\'P\', \'H\', \'S\'], [\'D\']]","[\'9C\', \'8D\']"\n'
            'BJ-01,S1,1,2,"[[\'5S\', \'QH\']]","[[\'S\']]","[\'9C\', \'8D\']"\n')
    _bj(tmp_path, rows, source=_BRACKETED)
    made = _replayed(tmp_path).sort(pl.col("seq").cast(pl.Int64)).filter(
        pl.col("event").is_in(["card", "action"]))
    seat1 = made.filter(pl.col("seat") == "1").select("hand", "card", "action").rows()
    assert seat1 == [("1", "6S", None), ("1", "6H", None), ("1", None, "split"),
                     ("1", "TD", None), ("1", None, "stand"), ("2", "4C", None),
                     ("2", None, "double"), ("2", "JS", None)]
    # the first deal: box 1, box 2, the dealer's up card; again; then the play
    assert made.head(6).select("seat", "card").rows() == [
        ("1", "6S"), ("2", "5S"), (None, "9C"), ("1", "6H"), ("2", "QH"), (None, "8D")]
    # a source whose rows hold every hand numbers them itself: hand is not mapped
    columns = 'round = "R"\nhand = "Box"\ncards = "Cards"\nactions = "Do"\ndealer_cards = "Dealer"\n'
    (tmp_path / "hand").mkdir()
    result, _, _ = _bj(tmp_path / "hand", rows, columns, source=_BRACKETED)
    assert result.exit_code == 2 and "columns.hand" in result.output


# --- (1.1) exports with no clock; format 1.3: a table whose rows all lack ts


def test_a_hand_history_table_with_no_times_is_no_input_finding(tmp_path):
    sim = baccarat.simulate(rounds=30, tables=2, seed=31, faults=0.0)
    events = sim.events.with_columns(pl.col(pl.Enum).cast(pl.String))
    write_house_rules(sim.tables, tmp_path / "house.toml")
    # BAC-01 records no times at all; BAC-02 has one row without its ts
    first = events.filter(pl.col("table_id") == "BAC-02")["seq"].min()
    untimed = events.with_columns(
        pl.when((pl.col("table_id") == "BAC-01")
                | ((pl.col("table_id") == "BAC-02") & (pl.col("seq") == first + 5)))
        .then(None).otherwise(pl.col("ts")).alias("ts"))
    write_events(untimed, tmp_path / "log.jsonl", "jsonl")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(tmp_path / "log.jsonl"), "--house",
                                       str(tmp_path / "house.toml"), "--out", str(out),
                                       "--no-report", "-q"])
    assert result.exit_code in (0, 1), result.output
    found = pl.read_parquet(out / "findings.parquet")
    lacking = found.filter(pl.col("field") == "ts")
    assert lacking.select("rule_id", "table_id").rows() == [("IN004", "BAC-02")]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["period"]["times"] == "partly recorded"
    assert summary["period"]["untimed_tables"] == ["BAC-01"]
    assert summary["rounds"]["reported"] == 0
    told = {r["rule_id"]: r for r in summary["coverage"]["by_rule"]}
    assert all(r["state"] != "not_judged" or "times" not in REGISTRY.get(i).needs
               for i, r in told.items())
    # a window cannot apply to it: exit 2 naming the table
    windowed = CliRunner().invoke(main, ["audit", str(tmp_path / "log.jsonl"), "--house",
                                         str(tmp_path / "house.toml"), "--out",
                                         str(tmp_path / "w"), "--no-report", "-q",
                                         "--gaming-day", "2026-11-01"])
    assert windowed.exit_code == 2 and "table BAC-01 records no times" in windowed.output


def test_exports_with_no_clock_are_read_in_path_order_and_filed_on_the_day_given(tmp_path):
    style = exports.BoxStyle(rounds=False, clock=False)
    _boxes_day(tmp_path, 41, 0.2, style, rounds=80)
    x = tmp_path / "x"
    # the day split in two files: taken in the byte order of their paths
    path = x / "bj-boxes-day.csv"
    rows = pl.read_csv(path, infer_schema=False)
    half = rows.height // 2
    rows.head(half).write_csv(x / "bj-boxes-day-1.csv")
    rows.tail(rows.height - half).write_csv(x / "bj-boxes-day-2.csv")
    path.unlink()
    whole = tmp_path / "whole"
    whole.mkdir()
    rows.write_csv(whole / "bj-boxes-day.csv")
    (whole / "profile.toml").write_text((x / "profile.toml").read_text())
    house = str(tmp_path / "house.toml")
    runner = CliRunner()

    def audited(folder: Path, out: Path, *more: str):
        result = runner.invoke(main, ["audit", str(folder), "--profile",
                                      str(folder / "profile.toml"), "--house", house,
                                      "--out", str(out), "--no-report", "-q", *more])
        return result

    assert audited(x, tmp_path / "split").exit_code == 1
    assert audited(whole, tmp_path / "one").exit_code == 1
    key = ["rule_id", "table_id", "shoe_id", "round"]
    one = pl.read_parquet(tmp_path / "one" / "findings.parquet").select(key)
    split = pl.read_parquet(tmp_path / "split" / "findings.parquet").select(key)
    assert _sorted(split) == _sorted(one)
    summary = json.loads((tmp_path / "split" / "summary.json").read_text())
    assert summary["period"] == {"start": None, "end": None, "times": "not recorded",
                                 "untimed_tables": ["BJ-01", "BJ-02"]}
    told = audited(x, tmp_path / "w", "--from", "2026-11-01T20:00:00")
    assert told.exit_code == 2 and "records no times" in told.output
    # import: the day the rows are filed under is needed, and given
    dataset = tmp_path / "dataset"
    made = runner.invoke(main, ["import", str(x), "--profile", str(x / "profile.toml"),
                                "--house", house, "--out", str(dataset)])
    assert made.exit_code == 2 and "give --gaming-day" in made.output
    assert not dataset.exists()
    made = runner.invoke(main, ["import", str(x), "--profile", str(x / "profile.toml"),
                                "--house", house, "--out", str(dataset),
                                "--gaming-day", "2026-11-02"])
    assert made.exit_code == 0, made.output
    days = {p.name for p in dataset.glob("facility=*/gaming_day=*")}
    assert days == {"gaming_day=2026-11-02"}
    again = audited(dataset, tmp_path / "again") if False else runner.invoke(main, [
        "audit", str(dataset), "--house", house, "--out", str(tmp_path / "again"),
        "--no-report", "-q"])
    assert again.exit_code == 1, again.output
    assert (pl.read_parquet(tmp_path / "again" / "findings.parquet").to_dicts()
            == pl.read_parquet(tmp_path / "split" / "findings.parquet").to_dicts())


def test_a_feed_with_no_clock_names_its_shoes_by_their_count(tmp_path):
    profile = """\
[profile]
name = "feed"
version = 1

[[source]]
name = "feed"
files = ["feed*.jsonl"]
layout = "events"

[source.columns]
table_id = "t"
game = { value = "baccarat" }
event = "e"
decks = "d"
"""
    lines = [{"t": "BAC-01", "e": "round_start"}, {"t": "BAC-01", "e": "round_end"},
             {"t": "BAC-01", "e": "shuffle", "d": 8}, {"t": "BAC-01", "e": "round_start"},
             {"t": "BAC-01", "e": "round_end"}, {"t": "BAC-01", "e": "shuffle", "d": 8}]
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "feed.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "feed.jsonl")])
    assert read.events[0]["shoe_id"].to_list() == [
        "BAC-01@start", "BAC-01@start", "BAC-01@1", "BAC-01@1", "BAC-01@1", "BAC-01@2"]


def test_join_by_time_needs_times(tmp_path):
    path = tmp_path / "profile.toml"
    coups = _COUPS.replace('ts = "Start"\n', "")
    wagers = _WAGERS.replace('layout = "wagers"', 'layout = "wagers"\njoin = "time"').replace(
        'shoe_id = "S"\nround = "R"\n', 'ts = "When"\n')
    path.write_text(coups + wagers)
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    assert result.exit_code == 2 and "source 'wagers'.join:" in result.output
    path.write_text(_COUPS + wagers.replace('ts = "When"\n', ""))
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    assert result.exit_code == 2 and "source 'wagers'.columns.ts:" in result.output


# --- (1.1) coups without round numbers, the built-in columns, one file read as both


def test_coups_without_round_numbers_are_numbered_within_each_shoe(tmp_path):
    profile = _COUPS.replace('round = "R"\n', "").replace(
        'layout = "coups"', 'layout = "coups"\nshoe_starts = "new_shoe_id"') + (
        '\n[source.columns.decks]\nvalue = 8\n' if False else "")
    profile = profile.replace('shoe_id = "S"', 'shoe_id = "S"\ndecks = { value = 8 }')
    rows = ("T,S,Start,W,PP,BP,P1,P2,B1,B2\n"
            "BAC-01,S1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n"
            "BAC-01,S1,2026-11-01T20:01:00,P,8,5,8H,KD,2C,3S\n"
            "BAC-01,S2,2026-11-01T20:02:00,P,8,5,8H,KD,2C,3S\n"
            "BAC-01,S1,2026-11-01T20:03:00,P,8,5,8H,KD,2C,3S\n")   # S1 again: a new shoe
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "coups.csv").write_text(rows)
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "coups.csv")])
    starts = read.events[0].filter(pl.col("event").is_in(["round_start", "shuffle"]))
    assert starts.select("event", "shoe_id", "round", "line").rows() == [
        ("round_start", "S1", "1", 2), ("round_start", "S1", "2", 3),
        ("shuffle", "S2", "0", 4), ("round_start", "S2", "1", 4),
        ("shuffle", "S1-2", "0", 5), ("round_start", "S1-2", "1", 5)]
    # a derived round 1 is no evidence the shoe began in the log: S1 began before it
    result = _audit(tmp_path, {"coups.csv": rows}, profile)
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert found.filter(pl.col("rule_id") == "IN016")["shoe_id"].to_list() == ["S1"], \
        result.output
    # profile check prints the rounds so derived for each table's first rows
    check = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml"),
                                      str(tmp_path / "coups.csv")])
    assert check.exit_code == 0, check.output
    assert ("table BAC-01: rounds derived from the rows: line 2: shoe S1 round 1, line 3: "
            "shoe S1 round 2, line 4: shoe S2 round 1") in check.output


@pytest.mark.parametrize(("clock", "rounds"), [
    # the same ts: a box the round has already begins the next round
    (True, [1, 1, 2, 2, 3]),
    # no ts: a box later in the dealing order continues the round, an earlier one begins
    # the next; other dealer's cards begin one too
    (False, [1, 1, 2, 2, 3]),
])
def test_blackjack_rows_without_round_numbers_continue_a_round_as_the_contract_says(
        tmp_path, clock, rounds):
    start = "2026-11-01T20:00:00"
    rows = ("T,S,Start,Box,Cards,Do,Dealer\n"
            f"BJ-01,S1,{start},1,TS 9H,S,9C 8D\n"
            f"BJ-01,S1,{start},3,TS 8H,S,9C 8D\n"
            f"BJ-01,S1,{start},{'1' if clock else '2'},TS 7H,S,9C 8D\n"
            f"BJ-01,S1,{start},5,TS 6H,S,9C 8D\n"
            f"BJ-01,S1,{start},6,TS 5H,S,9C 7D\n")
    columns = ('cards = "Cards"\nactions = "Do"\ndealer_cards = "Dealer"\n'
               + ('ts = "Start"\n' if clock else ""))
    _bj(tmp_path, rows, columns)
    made = _replayed(tmp_path).filter(pl.col("event") == "card", pl.col("target") == "seat")
    per_line = made.group_by("line").agg(pl.col("round").first()).sort("line")
    assert per_line["round"].cast(pl.Int64).to_list() == rounds


def test_the_built_in_row_and_file_columns_read_like_export_columns(tmp_path):
    profile = _COUPS.replace('table_id = "T"', 'table_id = { sql = "SPLIT_PART(_file, \'.\', 1)" }'
                             ).replace('round = "R"', 'round = "_row"').replace(
        'files = ["coups*.csv"]', 'files = ["BAC*.csv"]')
    rows = ("S,Start,W,PP,BP,P1,P2,B1,B2\n"
            "S1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n"
            "\n"                                      # a blank line: no record, no number
            "S1,2026-11-01T20:01:00,P,8,5,8H,KD,2C,3S\n")
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "BAC-07.csv").write_text(rows)
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "BAC-07.csv")])
    starts = read.events[0].filter(pl.col("event") == "round_start")
    assert starts.select("table_id", "round", "line").rows() == [("BAC-07", "1", 2),
                                                                 ("BAC-07", "2", 4)]
    # an export's own column of that name wins, and profile check says so
    (tmp_path / "BAC-07.csv").write_text("_row," + rows.replace("\n\n", "\n").replace(
        "\nS1", "\n41,S1").replace("S,Start", "S,Start", 1))
    read = translate(load_profile(tmp_path / "profile.toml"), [str(tmp_path / "BAC-07.csv")])
    assert read.events[0].filter(pl.col("event") == "round_start")["round"].to_list() == [
        "41", "41"]
    check = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml"),
                                      str(tmp_path / "BAC-07.csv")])
    assert "has a column of its own named '_row': read in place of the built-in" in \
        check.output


_ONE_FILE = _COUPS.replace('files = ["coups*.csv"]', 'files = ["day*.csv"]') + """
[[source]]
name = "bets"
files = ["day*.csv"]
layout = "wagers"

[source.columns]
table_id = "T"
shoe_id = "S"
round = "R"
seat = "Seat"
bet = "Bet"
amount = "Amt"
pay = "Pay"
collect = "Lost"

[source.values.bet]
P = "player"
B = "banker"
"""


def test_one_file_is_read_as_both_coups_and_wagers(tmp_path):
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2,Seat,Bet,Amt,Pay,Lost\n"
            ",S1,0,2026-11-01T19:59:00,P,9,7,7S,2H,3D,4C,1,P,25,25,\n"       # no table
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C,1,P,25,25,\n"
            "BAC-01,S1,2,2026-11-01T20:01:00,B,5,8,2H,3D,4C,4S,1,P,25,,25\n"
            "BAC-01,S1,3,2026-11-01T20:02:00,B,5,8,2H,3D,4C,4S,1,X,25,,25\n"   # X: unmapped
            "BAC-01,S1,4,2026-11-01T20:03:00,P,9,7,7S,2H,3D,4C,2,B,25,25,\n")  # B paid: wrong
    result = _audit(tmp_path, {"day.csv": rows}, _ONE_FILE)
    assert result.exit_code == 1, result.output
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet").filter(
        pl.col("rule_id") != "HR001")
    assert sorted(found.select("rule_id", "line").rows()) == [
        ("BA502", 6), ("EX001", 5), ("EX003", 2), ("IN014", 3)]
    # the row without a table may have been round 1's: withheld, naming that row
    assert "the row at line 2 (EX003) could not be placed" in found.filter(
        pl.col("rule_id") == "IN014")["message"][0]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    export = summary["rows"]["export"]
    assert export["read"] == 5 and export["made_events"] == 4
    assert export["reported_without_events"] == 1 and summary["rows"]["balanced"]
    assert summary["rounds"] == {"read": 4, "audited": 2, "reported": 2}
    check = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml"),
                                      str(tmp_path / "day.csv")])
    assert "read as both coups (source coups) and wagers (source bets)" in check.output


@pytest.mark.parametrize(("old", "new", "key"), [
    ('layout = "wagers"', 'layout = "wagers"\njoin = "round"', "'bets'.join"),
    ('seat = "Seat"', 'seat = "Seat"\nts = "Start"', None),
    ('round = "R"\nseat', 'round = { sql = "R" }\nseat', "'bets'.columns.round"),
])
def test_one_file_two_layouts_needs_one_key_and_no_join(tmp_path, old, new, key):
    profile = _ONE_FILE[:_ONE_FILE.index('name = "bets"')] + _ONE_FILE[
        _ONE_FILE.index('name = "bets"'):].replace(old, new, 1)
    rows = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2,Seat,Bet,Amt,Pay,Lost\n"
            "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C,1,P,25,25,\n")
    result = _audit(tmp_path, {"day.csv": rows}, profile)
    if key is None:
        assert result.exit_code in (0, 1), result.output
        return
    assert result.exit_code == 2 and f"source {key}:" in result.output, result.output


@pytest.fixture(scope="module")
def _faulty_blackjack(tmp_path_factory):
    """A faulty blackjack day, its house rules and its hand history's findings (with their
    parts); and the same for a day dealt one patron a box, its hand history settled by
    nets."""
    days = {}
    for nets in (False, True):
        folder = tmp_path_factory.mktemp("bj")
        sim = blackjack.simulate(rounds=90, tables=2, seed=17, faults=0.3,
                                 co_patrons=not nets)
        write_events(as_nets(sim.events) if nets else sim.events, folder / "log.jsonl",
                     "jsonl")
        write_house_rules(sim.tables, folder / "house.toml", blackjack=sim.house)
        rs = load_rulesets()
        house = load_house(folder / "house.toml", rs, on=date(2026, 11, 1))
        days[nets] = (sim, house,
                      _with_parts(audit.run(expand([str(folder / "log.jsonl")]), house, rs)))
    return days


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(rounds=st.booleans(), clock=st.booleans(), as_json=st.booleans(), spaced=st.booleans(),
       cents=st.booleans(), split=st.booleans(), nets=st.booleans(), points=st.booleans())
# a simulator's box rows (SIMULATOR_STYLE), their amounts in cents, in two files: always tried
@example(rounds=False, clock=False, as_json=False, spaced=True, cents=True, split=True,
         nets=True, points=True)
def test_any_box_rows_read_through_their_profile(_faulty_blackjack, tmp_path_factory, rounds,
                                                 clock, as_json, spaced, cents, split, nets,
                                                 points):
    """(1.1) Box rows drawn with or without round numbers and times, as JSON or Python
    lists, spaced or not, cards in full or by value, their wagers' amounts in cents
    through SQL, in one file or two; or (nets) with the box's main wager and net result
    in place of the wagers (cents too): the findings of the hand history (settled by
    nets, for nets) on every rule they evidence."""
    sim, house, hand_history = _faulty_blackjack[nets]
    folder = tmp_path_factory.mktemp("boxes")
    style = exports.BoxStyle(rounds=rounds, clock=clock, json=as_json, spaced=spaced,
                             nets=nets, points=points)
    boxes = exports.blackjack_boxes(sim.events, style)
    profile = exports.boxes_profile(style)
    if nets and cents:
        boxes = boxes.with_columns((pl.col(c) * 100).round().cast(pl.Int64) for c in
                                   ("Bet", "Net"))
        profile = profile.replace('amount = "Bet"', 'amount = { sql = "Bet / 100.0" }').replace(
            'net = "Net"', 'net = { sql = "Net / 100.0" }')
    parts = [boxes.head(boxes.height // 2), boxes.tail(boxes.height - boxes.height // 2)] \
        if split else [boxes]
    for n, part in enumerate(parts):
        part.write_csv(folder / f"bj-boxes-{n}.csv")
    if rounds and not nets:
        wagers = exports.blackjack_wagers(sim.events)
        if cents:
            wagers = wagers.with_columns((pl.col("Amount") * 100).round().cast(pl.Int64)
                                         .alias("Amount"))
            profile = profile.replace('amount = "Amount"',
                                      'amount = { sql = "Amount / 100.0" }')
        wagers.write_csv(folder / "bj-wagers-day.csv")
    (folder / "profile.toml").write_text(profile)
    read = translate(load_profile(folder / "profile.toml"), [str(folder)])
    result = audit.run(read.sources, house, load_rulesets(), export=read)
    coverage = result.coverage
    # the wagers' amounts recorded by a wagers export, presumed beside net results
    if nets or rounds:
        assert ("stakes" in coverage.tables["BJ-01"][1]) is not nets
    lost = _expressible(sim.truth, coverage)
    expected = coverage.keep(hand_history).select(KEY).unique().join(lost, on=KEY[1:],
                                                                     how="anti")
    found = result.findings.select(KEY).unique().join(lost, on=KEY[1:], how="anti")
    assert _sorted(found) == _sorted(expected)


# --- (1.1) net results: a wagers row's net, a blackjack coups row's amount and net


def _simulator_day(folder: Path, seed: int, faults: float, rounds: int = 240):
    """A simulated blackjack day dealt one patron a box, as a hand history settled by nets
    (format 1.3, as `auditor simulate --nets` writes it) and as a simulator's box rows with
    the box's main wager and net (`--layout boxes`), and its house rules."""
    sim = blackjack.simulate(rounds=rounds, tables=2, seed=seed, faults=faults,
                             co_patrons=False)
    write_events(as_nets(sim.events), folder / "hh" / "log.jsonl", "jsonl")
    write_house_rules(sim.tables, folder / "house.toml", blackjack=sim.house)
    exports.write(sim.events, folder / "x", "boxes", "day")
    return sim


@pytest.mark.parametrize(("seed", "faults"), [(51, 0.0), (52, 0.15), (53, 0.3)])
def test_box_rows_with_net_results_find_what_the_hand_history_with_nets_finds(tmp_path, seed,
                                                                             faults):
    """The same day as a hand history settled by nets and as a simulator's box rows (cards
    by value, no round, no clock, the box's main wager and net): the same findings on every
    rule the box rows evidence; where a planted settlement fault is in a net, the net rule
    finds it in both, unless the amounts the rules allow a presumed wager explain it."""
    sim = _simulator_day(tmp_path, seed, faults)
    hand_history, export = _audits(tmp_path)
    coverage = export.coverage
    expected = coverage.keep(_with_parts(hand_history)).select(KEY).unique()
    found = export.findings.select(KEY).unique()
    lost = _expressible(sim.truth, coverage)
    assert _sorted(found.join(lost, on=KEY[1:], how="anti")) == _sorted(
        expected.join(lost, on=KEY[1:], how="anti"))
    if not faults:
        assert export.findings.height == 0
        return
    assert expected.join(lost, on=KEY[1:], how="anti").height
    # what the boxes cannot show: amounts presumed, single settlements, shoes, suits
    has = coverage.tables["BJ-01"][1]
    assert {"wagers", "cards", "decisions"} <= has
    assert not {"stakes", "single_settlements", "suits", "times", "shuffles"} & has
    # the net rule on the rounds of settlement faults (not expressible as themselves):
    # the box rows' nets differ only where the hand history's do, and the hand history's
    # differ in the box rows too but where a presumed wager's allowed amounts explain it,
    # or where a right remedy of an irregularity the box rows do not record was applied
    rules = {r.id: r for r in REGISTRY.all()}
    settled = sim.truth.filter(pl.col("rule_id").is_in(
        [i for i, r in rules.items() if "single_settlements" in r.needs
         and "irregularities" not in r.needs])).select(
        "table_id", "shoe_id", pl.col("round").cast(pl.Int64))
    net = pl.col("rule_id") == "BJ707"
    by_net = [f.filter(net).select(KEY[1:]).unique().join(settled, on=KEY[1:], how="semi")
              for f in (hand_history.findings, export.findings)]
    assert by_net[1].height and by_net[1].join(by_net[0], on=KEY[1:], how="anti").is_empty()
    read = translate(load_profile(tmp_path / "x" / "profile.toml"), [str(tmp_path / "x")])
    presumed = pl.concat(read.events, how="diagonal_relaxed").filter(
        pl.col("reason") == "presumed").select(
        "table_id", "shoe_id", pl.col("round").cast(pl.Int64)).unique()
    unexplained = by_net[0].join(by_net[1], on=KEY[1:], how="anti").join(
        presumed, on=KEY[1:], how="anti")
    assert unexplained.is_empty(), unexplained


def test_box_rows_with_net_results_say_what_they_presume(tmp_path):
    _simulator_day(tmp_path, 54, 0.0, rounds=120)
    text = (tmp_path / "x" / "boxes-day.csv").read_text().splitlines()
    assert text[0] == "Table,Shoe,Box,Cards,Actions,Dealer,Bet,Net"
    read = translate(load_profile(tmp_path / "x" / "profile.toml"), [str(tmp_path / "x")])
    events = pl.concat(read.events, how="diagonal_relaxed")
    wagers = events.filter(pl.col("event") == "wager")
    presumed = wagers.filter(pl.col("reason") == "presumed")
    # only the wagers beside the main wager are presumed, and all of them are
    assert set(presumed["bet"]) == {"double", "split", "insurance"}
    assert wagers.filter(pl.col("bet") == "main")["reason"].is_null().all()
    assert wagers.filter(pl.col("bet") != "main")["reason"].eq("presumed").all()
    # insurance at half the main wager, rounded down to the cent
    mains = wagers.filter(pl.col("bet") == "main").select(
        "table_id", "round", "shoe_id", "seat", pl.col("amount").alias("main"))
    insured = presumed.filter(pl.col("bet") == "insurance").join(
        mains, on=["table_id", "shoe_id", "round", "seat"])
    cents = (pl.col("main").cast(pl.Float64) * 100).round().cast(pl.Int64) // 2
    assert insured.height and insured.select(
        ((pl.col("amount").cast(pl.Float64) * 100).round().cast(pl.Int64) == cents).all()
    ).item()
    assert read.tables["BJ-01"] >= {"coups:net", "stakes:presumed"}
    rs = load_rulesets()
    house = load_house(tmp_path / "house.toml", rs, on=date(2026, 11, 1))
    result = audit.run(read.sources, house, rs, export=read)
    by_rule = {r["rule_id"]: r for r in result.coverage.as_dict()["by_rule"]}
    assert by_rule["BJ302"]["state"] == "not_judged"
    assert "presumed from the main wager" in by_rule["BJ302"]["not_judged_on"][0]["why"]
    # a split's cards are judged; its wager, presumed, is not (BJ204's part `wager`)
    assert by_rule["BJ204"]["state"] == "partly"
    [wager] = by_rule["BJ204"]["parts_not_judged"]
    assert wager["part"] == "wager"
    assert "presumed from the main wager" in wager["tables"][0]["why"]
    assert by_rule["BJ707"]["state"] == "judged"
    assert by_rule["BJ701"]["state"] == "not_judged"
    assert "single settlements" in by_rule["BJ701"]["not_judged_on"][0]["why"]
    # an import keeps the presumed amounts and what they leave unjudged
    dataset = tmp_path / "dataset"
    made = CliRunner().invoke(main, ["import", str(tmp_path / "x"), "--profile",
                                     str(tmp_path / "x" / "profile.toml"), "--house",
                                     str(tmp_path / "house.toml"), "--out", str(dataset),
                                     "--gaming-day", "2026-11-01"])
    assert made.exit_code == 0, made.output
    again = CliRunner().invoke(main, ["audit", str(dataset), "--house",
                                      str(tmp_path / "house.toml"), "--out",
                                      str(tmp_path / "again"), "--no-report", "-q"])
    assert again.exit_code == 0, again.output
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert summary["coverage"] == result.coverage.as_dict()


def test_a_table_of_box_rows_and_no_presumed_wager_judges_the_amounts(tmp_path):
    """stakes:presumed is decided per table, from the wagers made: a table whose boxes
    neither doubled, split nor insured presumes nothing."""
    rows = ("T,S,R,Box,Cards,Do,Dealer,Bet,Net\n"
            'BJ-01,S1,1,1,"[\'TS\', \'9H\']",[\'S\'],"[\'TC\', \'8D\']",25,25\n')
    result, found, summary = _bj(
        tmp_path, rows, 'round = "R"\ncards = "Cards"\nactions = "Do"\n'
        'dealer_cards = "Dealer"\namount = "Bet"\nnet = "Net"\n', source=_BRACKETED)
    assert result.exit_code == 0, result.output
    by_rule = {r["rule_id"]: r for r in summary["coverage"]["by_rule"]}
    assert by_rule["BJ302"]["state"] == "judged" and by_rule["BJ707"]["state"] == "judged"


def test_a_table_of_coups_with_net_results_and_of_a_wagers_source_is_exit_2(tmp_path):
    profile = _BJ.format(source="", columns='round = "R"\ncards = "Cards"\nactions = "Do"\n'
                         'dealer_cards = "Dealer"\namount = "Bet"\nnet = "Net"\n',
                         actions="", cards="") + """
[[source]]
name = "rfid"
files = ["wagers*.csv"]
layout = "wagers"

[source.columns]
table_id = "T"
shoe_id = "S"
round = "R"
seat = "Box"
bet = { value = "main" }
amount = "Amt"
pay = "Paid"
"""
    (tmp_path / "profile.toml").write_text(profile)
    (tmp_path / "coups.csv").write_text("T,S,R,Box,Cards,Do,Dealer,Bet,Net\n"
                                        "BJ-01,S1,1,1,TS 9H,S,TC 8D,10,10\n")
    (tmp_path / "wagers.csv").write_text("T,S,R,Box,Amt,Paid\nBJ-01,S1,1,1,10,10\n")
    (tmp_path / "house.toml").write_text(
        'facility = "T"\n[[tables]]\ntable_id = "BJ-01"\ngame = "blackjack"\n')
    for command in (["audit", "--house", str(tmp_path / "house.toml"), "--out",
                     str(tmp_path / "out"), "--no-report", "-q"], ["profile", "check"]):
        if command[0] == "profile":
            args = [*command, str(tmp_path / "profile.toml"), str(tmp_path / "coups.csv"),
                    str(tmp_path / "wagers.csv")]
        else:
            args = [command[0], str(tmp_path / "coups.csv"), str(tmp_path / "wagers.csv"),
                    "--profile", str(tmp_path / "profile.toml"), *command[1:]]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        said = [line for line in result.output.splitlines() if "BJ-01" in line]
        assert len(said) == 1 and "'coups'" in said[0] and "'rfid'" in said[0], result.output
        assert "Traceback" not in result.output


def test_simulate_writes_box_rows_of_blackjack_only(tmp_path):
    runner = CliRunner()
    made = runner.invoke(main, ["simulate", "blackjack", "--rounds", "30", "--tables", "1",
                                "--layout", "boxes", "--out", str(tmp_path / "bj")])
    assert made.exit_code == 0, made.output
    assert (tmp_path / "bj" / "profile.toml").read_text() == exports.SIMULATOR_PROFILE
    rows = pl.read_csv(tmp_path / "bj" / "boxes-blackjack.csv", infer_schema=False)
    assert rows.columns == ["Table", "Shoe", "Box", "Cards", "Actions", "Dealer", "Bet", "Net"]
    # cards by value only: 2-10, an ace 11; no suit, no face
    values = rows["Cards"].str.extract_all(r"\d+").explode().cast(pl.Int64)
    assert set(values.to_list()) <= set(range(2, 12))
    refused = runner.invoke(main, ["simulate", "baccarat", "--rounds", "5", "--layout",
                                   "boxes", "--out", str(tmp_path / "bac")])
    assert refused.exit_code == 2 and "blackjack" in refused.output
