"""Net results (format 1.3 `settle_net`): read in every encoding, withheld where a wager is
settled both ways, judged by BJ707 and BA509 in place of the single-settlement rules, and
said once in coverage; a simulated day settled by nets gives no finding where its single
settlements gave none."""

from __future__ import annotations

import importlib
import json
from datetime import date

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, write_file

from auditor import audit
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets
from auditor.simulate.nets import as_nets
from auditor.simulate.writer import write_events, write_house_rules

BJ = {"table_id": "BJ-01", "game": "blackjack"}
# box 1's 20 beats the dealer's 17 and wins $25, box 2's 16 loses its $10; each is settled
# by its net
ROUND = """
{"event": "shuffle", "decks": 6}
{"event": "burn", "card": "2C"}
{"event": "round_start"}
{"event": "wager", "seat": 1, "hand": 1, "bet": "main", "amount": 25}
{"event": "wager", "seat": 2, "hand": 1, "bet": "main", "amount": 10}
{"event": "no_more_bets"}
{"event": "card", "target": "seat", "seat": 1, "hand": 1, "card": "TS"}
{"event": "card", "target": "seat", "seat": 2, "hand": 1, "card": "TH"}
{"event": "card", "target": "dealer", "card": "9D"}
{"event": "card", "target": "seat", "seat": 1, "hand": 1, "card": "QS"}
{"event": "card", "target": "seat", "seat": 2, "hand": 1, "card": "6H"}
{"event": "card", "target": "dealer", "card": "8C"}
{"event": "action", "seat": 1, "hand": 1, "action": "stand"}
{"event": "action", "seat": 2, "hand": 1, "action": "stand"}
"""
NETS = """
{"event": "settle_net", "seat": 1, "amount": %s}
{"event": "settle_net", "seat": 2, "amount": -10}
{"event": "round_end"}
"""


def _audit(tmp_path, name: str, events: str, defaults: dict | None = None):
    rs = load_rulesets()
    house = load_house(DEFAULT_HOUSE, rs, date(2026, 11, 1))
    path = write_file(tmp_path, {"name": name, "events": events, "defaults": defaults or BJ})
    return audit.run(expand([str(path)]), house, rs)


@pytest.mark.parametrize("name", ["log.jsonl", "log.csv", "log.csv.gz", "log.parquet"])
def test_a_signed_net_is_read_in_every_encoding(tmp_path, name):
    result = _audit(tmp_path, name, ROUND + NETS % "25")
    assert result.findings.is_empty(), result.findings.select("rule_id", "message")
    assert result.totals.rows_audited == result.totals.rows_placed


@pytest.mark.parametrize("name", ["log.jsonl", "log.csv", "log.parquet"])
def test_a_net_of_three_decimals_is_an_amount_error_and_a_negative_wager_still_is(
        tmp_path, name):
    events = ROUND.replace('"amount": 10}', '"amount": -10}') + NETS % "25.005"
    found = _audit(tmp_path, name, events).findings.filter(pl.col("rule_id") == "IN007")
    assert sorted(found["line"].to_list()) == ([6, 16] if name.endswith(".csv") else [5, 15])


def test_a_wager_settled_both_ways_withholds_its_round_with_that_cause(tmp_path):
    events = ROUND + NETS.replace(
        '{"event": "round_end"}',
        '{"event": "pay", "seat": 1, "hand": 1, "bet": "main", "amount": 25}\n'
        '{"event": "round_end"}') % "25"
    result = _audit(tmp_path, "log.jsonl", events)
    ids = result.findings["rule_id"].to_list()
    assert ids == ["IN020"], result.findings.select("rule_id", "message")
    assert "withheld" in result.findings["message"][0]
    assert result.totals.rounds_withheld == 1


def test_net_findings_cite_only_the_rule_s_paragraphs(tmp_path):
    result = _audit(tmp_path, "log.jsonl", ROUND + NETS % "37.5")
    found = result.findings.filter(pl.col("rule_id") == "BJ707")
    assert found.height == 1
    rule = REGISTRY.get("BJ707")
    assert found["citation"][0] in (rule.citation, *rule.also)
    assert found["amount"][0] == -12.5


def test_coverage_says_once_that_single_settlements_were_partly_judged(tmp_path):
    events = ROUND + NETS % "25" + ROUND.replace(
        '{"event": "shuffle", "decks": 6}\n{"event": "burn", "card": "2C"}\n', "") + """
{"event": "pay", "seat": 1, "hand": 1, "bet": "main", "amount": 25}
{"event": "settle_net", "seat": 2, "amount": -10}
{"event": "round_end"}
"""
    result = _audit(tmp_path, "log.jsonl", events)
    assert result.findings.is_empty(), result.findings.select("rule_id", "message")
    by_rule = {r["rule_id"]: r for r in result.coverage.as_dict()["by_rule"]}
    single = [r.id for r in REGISTRY.all() if "single_settlements" in r.needs
              and r.scope == "blackjack"]
    assert "BJ701" in single and "BJ706" in single
    for rule_id in single:
        entry = by_rule[rule_id]
        if entry["state"] == "not_judged":  # for another want (no irregularity rows)
            assert "boxes_not_judged" not in entry
            continue
        assert entry["state"] == "partly", entry
        assert entry["boxes_not_judged"] == 3  # two boxes, then one
    assert by_rule["BJ707"]["state"] == "judged"
    assert "boxes_not_judged" not in by_rule["BA501"]


# --- a simulated day settled by nets ----------------------------------------------


def _day(game: str, tmp_path, faults: float, nets: bool):
    module = importlib.import_module(f"auditor.simulate.{game}")
    sim = module.simulate(rounds=300, tables=2, seed=5, faults=faults)
    events = as_nets(sim.events) if nets else sim.events
    folder = tmp_path / ("nets" if nets else "single")
    log = write_events(events, folder / f"{game}.jsonl", "jsonl")
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    house_path = write_house_rules(sim.tables, folder / "house.toml", **extra)
    rs = load_rulesets()
    house = load_house(house_path, rs, date(2026, 11, 1))
    return events, audit.run(expand([str(log)]), house, rs)


@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_a_clean_day_settled_by_nets_has_no_finding(game, tmp_path):
    events, result = _day(game, tmp_path, 0.0, nets=True)
    assert events.filter(pl.col("event") == "settle_net").height > 0
    assert not events["event"].cast(pl.String).is_in(["collect", "pay", "push", "vig"]).any()
    assert result.findings.is_empty(), result.findings.select("rule_id", "round", "message")
    coverage = {r["rule_id"]: r for r in result.coverage.as_dict()["by_rule"]}
    rule = "BJ701" if game == "blackjack" else "BA501"
    assert coverage[rule]["state"] == "partly" and coverage[rule]["boxes_not_judged"] > 0


@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_a_faulty_day_settled_by_nets_is_found_where_its_settlements_were(game, tmp_path):
    _, single = _day(game, tmp_path, 0.3, nets=False)
    _, netted = _day(game, tmp_path, 0.3, nets=True)
    singly = [r.id for r in REGISTRY.all() if "single_settlements" in r.needs]
    net_rule = "BJ707" if game == "blackjack" else "BA509"
    key = ["table_id", "shoe_id", "round", "rule_id"]
    rounds = ["table_id", "shoe_id", "round"]

    def keys(frame: pl.DataFrame, which: pl.Expr) -> pl.DataFrame:
        return frame.filter(which).select(key).unique().sort(key, nulls_last=True)

    # every other rule finds the same, round by round
    other = ~pl.col("rule_id").is_in([*singly, net_rule])
    assert keys(single.findings, other).equals(keys(netted.findings, other))
    # a net finding only where a single settlement was found wrong; the shoes of BA604
    # (a shoe charged the other commission rate, one finding there) show it on every seat
    wrong = single.findings.filter(pl.col("rule_id").is_in(singly)).select(rounds).unique()
    rate = single.findings.filter(pl.col("rule_id") == "BA604").select("table_id", "shoe_id")
    nets = netted.findings.filter(pl.col("rule_id") == net_rule)
    assert nets.height > 0
    unexplained = nets.join(wrong, on=rounds, how="anti").join(
        rate, on=["table_id", "shoe_id"], how="anti")
    assert unexplained.is_empty(), unexplained.select(*rounds, "message")
    # the single-settlement rules are silent on netted boxes: what they still find is a
    # wager a box left unsettled (no net either), as before
    left = netted.findings.filter(pl.col("rule_id").is_in(singly))
    assert set(left["rule_id"]) <= {"BJ706"}
    assert left.select(rounds).join(wrong, on=rounds, how="anti").is_empty()


def test_simulate_writes_nets_only_when_asked(tmp_path):
    from click.testing import CliRunner

    runner = CliRunner()
    for flag, folder in (([], "single"), (["--nets"], "nets")):
        outcome = runner.invoke(main, ["simulate", "blackjack", "--rounds", "20", "--tables",
                                       "1", "--out", str(tmp_path / folder), *flag])
        assert outcome.exit_code == 0, outcome.output
    events = {folder: [json.loads(line)["event"] for line in
                       (tmp_path / folder / "blackjack.jsonl").read_text().splitlines()]
              for folder in ("single", "nets")}
    assert "settle_net" not in events["single"] and "pay" in events["single"]
    assert "settle_net" in events["nets"] and "pay" not in events["nets"]
    refused = runner.invoke(main, ["simulate", "blackjack", "--rounds", "5", "--out",
                                   str(tmp_path / "x"), "--nets", "--layout", "coups"])
    assert refused.exit_code == 2
