"""Cards known by value only (hand-history-v1 1.3, "Cards known by value"): `8*` an eight
whose suit was not recorded, `X*` a ten-value card whose rank was not recorded.

The replays count their values as any card's: a day recorded by value only is judged as
the same day recorded in full, on every rule that needs no suit and no rank. Nothing the
auditor writes gives such a card a suit: not the findings, not the report or the review
app's replays, not `auditor import` of an export whose notation has no suits. And the
rules that need a suit or a rank are not judged on a table whose rows hold such cards
(coverage: "suits", "ranks"), where the count by value (BA107, BJ105) is.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor import audit, coverage, report
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest import cards
from auditor.ingest import vocabulary as v
from auditor.ingest.sources import expand
from auditor.report import replays
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules

GAMES = {"baccarat": baccarat, "blackjack": blackjack}
SUIT_SYMBOLS = "♠♥♦♣"
# a card code with a suit, as a whole word
FULL_CODE = re.compile(r"(?<![\w*])[A2-9TJQK][SHDC](?![\w*])")
# the rules that need a card's suit or its rank beyond its value
NEED_SUITS_OR_RANKS = [r.id for r in REGISTRY.all() if {"suits", "ranks"} & set(r.needs)]
BY_VALUE = ["BA107", "BJ105"]


def by_value(events: pl.DataFrame) -> pl.DataFrame:
    """The same events with every card known by value only: `8*`, `X*` for 10, J, Q, K."""
    card = pl.col("card").cast(pl.String)
    rank = card.str.slice(0, 1)
    value_only = pl.when(rank.is_in(list(v.TEN_VALUE_RANKS))).then(pl.lit("X*")).otherwise(
        rank + pl.lit("*"))
    return events.with_columns(pl.when(card.is_not_null()).then(value_only).alias("card"))


@pytest.fixture(scope="module", params=sorted(GAMES))
def day(request, tmp_path_factory):
    """A simulated day with planted faults, audited as recorded in full and by value."""
    game = request.param
    root = tmp_path_factory.mktemp(game)
    sim = GAMES[game].simulate(rounds=300, tables=2, seed=7, faults=0.2)
    write_events(sim.events, root / "full" / "log.jsonl", "jsonl")
    write_events(by_value(sim.events), root / "value" / "log.csv", "csv")
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    write_house_rules(sim.tables, root / "house.toml", **extra)
    rs = load_rulesets()
    house = load_house(root / "house.toml", rs, on=date(2026, 11, 1))
    full = audit.run(expand([str(root / "full")]), house, rs)
    valued = audit.run(expand([str(root / "value")]), house, rs)
    return game, full, valued


def test_a_day_recorded_by_value_only_is_judged_as_recorded_in_full(day):
    game, full, valued = day
    key = ["rule_id", "table_id", "shoe_id", "round", "seq", "amount"]
    judged = ~pl.col("rule_id").is_in(NEED_SUITS_OR_RANKS + BY_VALUE)
    one = full.findings.filter(judged).select(key).sort(key, nulls_last=True)
    two = valued.findings.filter(judged).select(key).sort(key, nulls_last=True)
    assert one.height > 20
    assert one.to_dicts() == two.to_dicts()
    # the planted duplicate cards are found by rank and suit in full; by value, a copy of a
    # card too many is no value over what the decks hold
    assert full.findings.filter(pl.col("rule_id").is_in(["BA102", "BJ103"])).height
    assert valued.findings.filter(pl.col("rule_id").is_in(NEED_SUITS_OR_RANKS + BY_VALUE)
                                  ).is_empty()
    # the same rounds were read and audited
    assert valued.totals.rounds_read == full.totals.rounds_read
    assert valued.totals.rows_audited == full.totals.rows_audited


def test_a_day_by_value_says_which_rules_it_did_not_judge_and_why(day):
    game, full, valued = day
    rules = {r["rule_id"]: r for r in valued.coverage.as_dict()["by_rule"]}
    counted = {"baccarat": ("BA102", "BA107"), "blackjack": ("BJ103", "BJ105")}[game]
    by_suit, by_value_rule = counted
    assert rules[by_suit]["state"] == "not_judged"
    whys = {entry["why"] for entry in rules[by_suit]["not_judged_on"]}
    assert whys == {coverage.EVIDENCE["suits"]}
    assert "by value only (format 1.3)" in coverage.EVIDENCE["suits"]
    assert rules[by_value_rule]["state"] == "judged"
    full_rules = {r["rule_id"]: r for r in full.coverage.as_dict()["by_rule"]}
    assert full_rules[by_suit]["state"] == "judged"


def test_findings_print_a_card_known_by_value_as_recorded(day):
    _, _, valued = day
    text = valued.findings.select(
        pl.concat_str("message", "expected", "observed", separator=" | ", ignore_nulls=True)
    ).to_series()
    assert valued.findings.height > 20
    for line in text:
        assert "*" not in line, line
        assert not FULL_CODE.search(line), line  # no suit the log did not record
        assert not any(symbol in line for symbol in SUIT_SYMBOLS), line


# --- a small log: the replays in the report ---------------------------------------------


LOG = [
    # baccarat: banker 6 after the player stood on 7 must stand, but drew (BA205)
    {"table_id": "BAC-01", "game": "baccarat", "event": "shuffle", "decks": 8, "round": 0},
    {"table_id": "BAC-01", "game": "baccarat", "event": "burn", "card": "2*", "round": 0},
    {"table_id": "BAC-01", "game": "baccarat", "event": "burn", "card": "X*", "round": 0},
    {"table_id": "BAC-01", "game": "baccarat", "event": "burn", "card": "4*", "round": 0},
    {"table_id": "BAC-01", "game": "baccarat", "event": "round_start", "round": 1},
    {"table_id": "BAC-01", "game": "baccarat", "event": "no_more_bets", "round": 1},
    *({"table_id": "BAC-01", "game": "baccarat", "event": "card", "target": target,
       "card": card, "round": 1}
      for target, card in (("player", "7*"), ("banker", "3*"), ("player", "X*"),
                           ("banker", "3*"), ("banker", "A*"))),
    {"table_id": "BAC-01", "game": "baccarat", "event": "result", "winner": "tie",
     "player_points": 7, "banker_points": 7, "round": 1},
    {"table_id": "BAC-01", "game": "baccarat", "event": "round_end", "round": 1},
    # blackjack: the dealer's A* 6* is a soft 17; the house stands on it, the dealer drew
    # (BJ501); an X* dealt to the box
    {"table_id": "BJ-01", "game": "blackjack", "event": "shuffle", "decks": 6, "round": 0},
    {"table_id": "BJ-01", "game": "blackjack", "event": "burn", "card": "9*", "round": 0},
    {"table_id": "BJ-01", "game": "blackjack", "event": "round_start", "round": 1},
    {"table_id": "BJ-01", "game": "blackjack", "event": "wager", "seat": 1, "hand": 1,
     "bet": "main", "amount": 25, "round": 1},
    {"table_id": "BJ-01", "game": "blackjack", "event": "no_more_bets", "round": 1},
    *({"table_id": "BJ-01", "game": "blackjack", "event": "card", "round": 1, **card}
      for card in ({"target": "seat", "seat": 1, "hand": 1, "card": "X*"},
                   {"target": "dealer", "card": "A*"},
                   {"target": "seat", "seat": 1, "hand": 1, "card": "8*"},
                   {"target": "dealer", "card": "6*"})),
    {"table_id": "BJ-01", "game": "blackjack", "event": "action", "seat": 1, "hand": 1,
     "action": "stand", "round": 1},
    {"table_id": "BJ-01", "game": "blackjack", "event": "card", "target": "dealer",
     "card": "3*", "round": 1},
    {"table_id": "BJ-01", "game": "blackjack", "event": "collect", "seat": 1, "hand": 1,
     "bet": "main", "amount": 25, "round": 1},
    {"table_id": "BJ-01", "game": "blackjack", "event": "round_end", "round": 1},
]

HOUSE = """\
facility = "Value cards"

[blackjack]
dealer_hits_soft_17 = false

[[tables]]
table_id = "BAC-01"
game = "baccarat"
pit = "PIT-1"
variant = "mini"

[[tables]]
table_id = "BJ-01"
game = "blackjack"
pit = "PIT-2"
decks = 6
"""


def _write_log(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for seq, row in enumerate(LOG, start=1):
        lines.append(json.dumps({"shoe_id": "S1", "seq": seq,
                                 "ts": f"2026-11-01T20:{seq // 60:02d}:{seq % 60:02d}-05:00",
                                 **row}))
    (folder / "log.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "house.toml").write_text(HOUSE)
    return folder


def _replays(html: str) -> list[str]:
    """The text of each replay block of the report."""
    return [re.sub(r"<[^>]+>", "", block)
            for block in re.findall(r'<pre class="replay">(.*?)</pre>', html, re.S)]


def test_the_report_shows_cards_known_by_value_without_a_suit(tmp_path):
    folder = _write_log(tmp_path / "log")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(folder / "log.jsonl"), "--house",
                                       str(folder / "house.toml"), "--out", str(out),
                                       "--no-report", "-q"])
    assert result.exit_code == 1, result.output
    found = pl.read_parquet(out / "findings.parquet")
    assert sorted(found["rule_id"].to_list()) == ["BA205", "BJ501"], found
    drew = found.filter(pl.col("rule_id") == "BJ501").row(0, named=True)
    assert drew["observed"] == "drew 3 on soft 17"
    assert "drew 3 (card 3) on soft 17" in drew["message"]
    html = report.html(out)
    blocks = _replays(html)
    assert blocks
    shown = "\n".join(blocks)
    assert not any(symbol in shown for symbol in SUIT_SYMBOLS), shown
    assert "*" not in shown
    assert re.search(r"Player +7 X +two-card 7", shown), shown
    assert re.search(r"Banker +3 3 A +two-card 6", shown), shown
    assert re.search(r"Dealer +A 6 3 +total 20", shown), shown
    assert re.search(r"1 +1 +X 8 ", shown), shown
    # X is explained once where a replay shows it
    assert html.count(cards.TEN_VALUE_NOTE) == 2  # the baccarat and the blackjack replay


def test_a_replay_prints_the_card_as_recorded():
    assert [replays.card(c) for c in ("8*", "X*", "A*", "T*", "K*", "TD", "8H")] == [
        "8", "X", "A", "10", "K", "10♦", "8♥"]
    assert replays.value_only_notes(["8H", "TD"]) == []
    assert replays.value_only_notes(["8*", "9H"]) == [cards.VALUE_ONLY_NOTE + "."]
    (note,) = replays.value_only_notes(["X*", "X*", "9H"])
    assert note.count("ten-value card") == 1


def test_a_card_in_a_sentence_is_as_recorded_and_x_explained_once():
    frame = pl.DataFrame({"card": ["8*", "X*", "TD", None],
                          "cards": [["X*", "7H", "X*"], ["8*"], [], None]})
    out = frame.select(cards.shown(pl.col("card")), cards.shown_list(pl.col("cards")))
    assert out["card"].to_list() == ["8", "X (a ten-value card)", "TD", None]
    assert out["cards"].to_list() == ["X (a ten-value card) 7H X", "8", "", None]


# --- coverage, per table, from its rows ---------------------------------------------------


def test_a_table_holding_a_card_by_value_lacks_suits_and_one_holding_x_lacks_ranks():
    tables = pl.DataFrame({
        "table_id": ["FULL", "EIGHT", "TEN"], "game": ["baccarat"] * 3,
        "wager_rows": [1, 1, 1], "irregularity_rows": [1, 1, 1],
        "value_only_cards": [0, 3, 2], "rankless_cards": [0, 0, 1],
        "net_boxes": [0, 0, 0], "first": [datetime(2026, 11, 1)] * 3,
    })
    found = coverage.of_log(tables, None)
    assert {"suits", "ranks"} <= found.tables["FULL"][1]
    assert "suits" not in found.tables["EIGHT"][1] and "ranks" in found.tables["EIGHT"][1]
    assert not {"suits", "ranks"} & found.tables["TEN"][1]
    rule = REGISTRY.get("BA102")
    assert found.missing(rule, "FULL") == []
    assert found.missing(rule, "EIGHT") == ["suits"]
    assert found.missing(rule, "TEN") == ["suits", "ranks"]
    assert found.missing(REGISTRY.get("BA107"), "TEN") == []
    assert coverage.EVIDENCE["ranks"] == ("the log records some cards by value only (format "
                                          "1.3): their rank is not recorded (X*, a ten-value "
                                          "card)")


# --- an export whose notation has no suits ------------------------------------------------


POINTS_PROFILE = """\
[profile]
name = "points"
version = 1

[[source]]
name = "coups"
files = ["coups*.csv"]
layout = "coups"
shoe_starts = "new_shoe_id"

[source.columns]
table_id = "T"
game = { value = "baccarat" }
shoe_id = "S"
round = "R"
ts = "Start"
decks = "D"
winner = "W"
player_points = "PP"
banker_points = "BP"

[source.values.winner]
P = "player"
B = "banker"
T = "tie"

[source.cards]
notation = "points"
none = [""]
player = ["P1", "P2", "P3"]
banker = ["B1", "B2", "B3"]
"""

# round 2: player 7 stands, banker 6 must stand (f)(12) but drew a 1: BA205
POINTS_COUPS = """\
T,S,R,Start,D,W,PP,BP,P1,P2,P3,B1,B2,B3
BAC-01,S1,1,2026-11-01T20:00:00,8,T,0,0,0,0,0,0,0,0
BAC-01,S1,2,2026-11-01T20:01:00,8,T,7,7,7,0,,3,3,1
BAC-01,S1,3,2026-11-01T20:02:00,8,P,9,7,4,5,,3,4,
"""


def _points_export(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profile.toml").write_text(POINTS_PROFILE)
    (folder / "coups.csv").write_text(POINTS_COUPS)
    (folder / "house.toml").write_text(HOUSE)
    return folder


def test_a_points_export_imports_cards_known_by_value_never_a_suit(tmp_path):
    x = _points_export(tmp_path / "x")
    made = CliRunner().invoke(main, ["import", str(x / "coups.csv"), "--profile",
                                     str(x / "profile.toml"), "--house", str(x / "house.toml"),
                                     "--out", str(tmp_path / "dataset")])
    assert made.exit_code == 0, made.output
    files = list((tmp_path / "dataset").rglob("*.parquet"))
    rows = pl.concat([pl.read_parquet(f).select("event", "card") for f in files
                      if not f.name.startswith("_")], how="vertical_relaxed")
    dealt = rows.filter(pl.col("card").is_not_null())["card"].to_list()
    assert dealt == ["X*"] * 6 + ["7*", "3*", "X*", "3*", "A*", "4*", "3*", "5*", "4*"]


def test_a_points_export_is_judged_by_value_and_shown_without_a_suit(tmp_path):
    x = _points_export(tmp_path / "x")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(x / "coups.csv"), "--profile",
                                       str(x / "profile.toml"), "--house", str(x / "house.toml"),
                                       "--out", str(out), "--no-report", "-q"])
    assert result.exit_code == 1, result.output
    found = pl.read_parquet(out / "findings.parquet")
    assert found["rule_id"].to_list() == ["BA205"], found
    assert found["line"].to_list() == [3]
    summary = json.loads((out / "summary.json").read_text())
    rules = {r["rule_id"]: r for r in summary["coverage"]["by_rule"]}
    assert rules["BA102"]["state"] == "not_judged"
    assert rules["BA107"]["state"] == "judged"
    shown = "\n".join(_replays(report.html(out)))
    assert not any(symbol in shown for symbol in SUIT_SYMBOLS), shown
    assert re.search(r"Player +7 X +two-card 7", shown), shown
