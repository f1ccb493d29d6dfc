"""End to end on simulated days: a clean day has no finding, and every planted
fault is found on its round, with its rule's citation."""

from __future__ import annotations

import importlib
from datetime import UTC, date, datetime

import polars as pl
import pytest
from planted import reporting
from summaries import audited

from auditor import audit
from auditor.details import round_details
from auditor.house import load as load_house
from auditor.ingest.partition import open_log
from auditor.ingest.sources import expand
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets
from auditor.simulate.writer import write_events, write_house_rules

GAMES = {
    "baccarat": {"rounds": 400, "tables": 4, "encoding": "parquet"},
    "blackjack": {"rounds": 600, "tables": 4, "encoding": "jsonl.gz"},
}


def _audit_simulation(game: str, tmp_path, faults: float, seed: int):
    module = importlib.import_module(f"auditor.simulate.{game}")
    settings = GAMES[game]
    sim = module.simulate(rounds=settings["rounds"], tables=settings["tables"], seed=seed,
                          faults=faults)
    log = write_events(sim.events, tmp_path / f"log.{settings['encoding']}",
                       settings["encoding"])
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    house_path = write_house_rules(sim.tables, tmp_path / "house.toml", **extra)
    rs = load_rulesets()
    house = load_house(house_path, rs, date(2026, 11, 1))
    return sim, audit.run(expand([str(log)]), house, rs)


def _implemented(game: str) -> bool:
    return any(r.scope == game and r.check is not None for r in REGISTRY.all())


@pytest.mark.parametrize("game", GAMES)
def test_clean_simulated_day_has_no_findings(game, tmp_path):
    if not _implemented(game):
        pytest.skip(f"no {game} rules registered")
    _, result = _audit_simulation(game, tmp_path, faults=0.0, seed=11)
    assert result.findings.height == 0, result.findings.select("rule_id", "round", "message")
    assert result.totals.rows_audited == result.totals.rows_placed


@pytest.mark.parametrize("game", GAMES)
def test_every_planted_fault_is_found_on_its_round(game, tmp_path):
    if not _implemented(game):
        pytest.skip(f"no {game} rules registered")
    sim, result = _audit_simulation(game, tmp_path, faults=0.1, seed=5)
    module = importlib.import_module(f"auditor.simulate.{game}")
    # a right remedy (no rule id) is no fault: test_no_finding_in_a_right_remedys_round
    truth = sim.truth.filter(pl.col("rule_id").is_not_null())
    # the run must hold every kind of fault, or this test would prove less than it says
    assert set(truth["rule_id"]) == set(module.FAULT_KINDS), "a fault kind was not planted"
    found = result.findings
    for fault in truth.iter_rows(named=True):
        hits = found.filter(reporting(fault))
        assert hits.height >= 1, f"planted {fault} not found"
        rule = REGISTRY.get(fault["rule_id"])
        assert hits["citation"][0] == rule.citation
        assert rs_has(rule.citation)
    # and nothing is found that was not planted
    planted = set(zip(truth["rule_id"], truth["table_id"], truth["shoe_id"], strict=True))
    extra = found.filter(
        ~pl.struct("rule_id", "table_id", "shoe_id").map_elements(
            lambda r: (r["rule_id"], r["table_id"], r["shoe_id"]) in planted,
            return_dtype=pl.Boolean,
        )
    )
    assert extra.height == 0, extra.select("rule_id", "table_id", "shoe_id", "round", "message")


@pytest.mark.parametrize("game", GAMES)
def test_no_finding_in_a_right_remedys_round(game, tmp_path):
    """Each irregularity is planted with a right remedy too (a truth row with no rule id,
    its `fault` "remedied_..."): no rule may find anything in that round."""
    if not _implemented(game):
        pytest.skip(f"no {game} rules registered")
    sim, result = _audit_simulation(game, tmp_path, faults=0.1, seed=5)
    remedied = sim.truth.filter(pl.col("rule_id").is_null())
    assert remedied.height, "no right remedy was planted"
    assert remedied["fault"].str.starts_with("remedied_").all()
    kinds = getattr(importlib.import_module(f"auditor.simulate.{game}"), "REMEDY_KINDS", None)
    if kinds is not None:  # the run must hold every kind of remedy
        assert set(remedied["fault"]) == set(kinds)
    key = ["table_id", "shoe_id", "round"]
    found = result.findings.join(remedied.select(key), on=key, how="semi")
    assert found.height == 0, found.select("rule_id", *key, "seq", "message")


def rs_has(citation: str) -> bool:
    return load_rulesets().has_paragraph(citation)


@pytest.mark.parametrize("game", GAMES)
def test_log_audited_in_parts_gives_the_same_findings_and_summary(game, tmp_path, monkeypatch):
    _, whole = _audit_simulation(game, tmp_path, faults=0.1, seed=5)
    monkeypatch.setattr(audit, "PART_ROWS", 2_000)  # several parts of whole tables
    sources = expand([str(next(tmp_path.glob("log.*")))])
    assert len(audit._parts(open_log(sources))) > 1
    parted = audit.run(sources, whole.house, whole.rulesets)  # the same file, read again
    assert parted.findings.equals(whole.findings)
    assert set(parted.contexts) == {game}
    run_at = datetime(2026, 11, 2, tzinfo=UTC)
    assert audited(parted, run_at) == audited(whole, run_at)
    assert round_details(parted).equals(round_details(whole))
