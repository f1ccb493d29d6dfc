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
from auditor.games import shoe_order
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


# --- shuffles that did not happen (BA108, BA109, BJ106, BJ107) -----------------------------

ORDER_RULES = {"baccarat": ("BA108", "BA109"), "blackjack": ("BJ106", "BJ107")}


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_shoe_dealt_without_a_shuffle_is_found_and_no_clean_shoe(game, seed, tmp_path):
    """Shoes reused from an earlier shoe's order and decks put in unshuffled, planted in a
    clean day: each planted shoe is found by its rule, no clean shoe by either. (A planted
    shoe may be found by the other rule too: two shoes holding unshuffled decks, or reusing
    one shoe, repeat each other's order.)"""
    module = importlib.import_module(f"auditor.simulate.{game}")
    sim = module.simulate(rounds=3000, tables=4, seed=seed,
                          order_faults=("shoe_reused", "decks_unshuffled"))
    log = write_events(sim.events, tmp_path / "log.parquet", "parquet")
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    house_path = write_house_rules(sim.tables, tmp_path / "house.toml", **extra)
    rs = load_rulesets()
    result = audit.run(expand([str(log)]), load_house(house_path, rs, date(2026, 11, 1)), rs)
    truth = sim.truth
    assert set(truth["rule_id"]) == set(ORDER_RULES[game])  # both kinds, and nothing else
    found = result.findings
    # a table's last shoe may end with the log before its planted run is dealt
    last = sim.events.group_by("table_id").agg(pl.col("shoe_id").max())
    for fault in truth.join(last, on=["table_id", "shoe_id"], how="anti").iter_rows(named=True):
        assert found.filter(reporting(fault)).height, f"planted {fault} not found"
    planted = truth.select("table_id", "shoe_id")
    assert found.join(planted, on=["table_id", "shoe_id"], how="anti").height == 0, \
        found.join(planted, on=["table_id", "shoe_id"], how="anti").select("rule_id", "message")
    assert set(found["rule_id"]) <= set(ORDER_RULES[game])


def test_a_million_rounds_of_clean_shoes_hold_no_run_of_either_kind():
    """Clean shoes, shuffled apart, dealt to the cover card: 12,800 shoes of 8 decks over 4
    seeds, about 1,050,000 rounds at the clean simulator's 82 rounds a shoe (the rounds
    themselves do not matter to these rules, only the cards in order)."""
    shoes = 3_200
    for seed in range(4):
        cards = (
            pl.DataFrame({"sid": pl.int_range(shoes, eager=True)})
            .with_columns(pl.lit(list(range(52)) * 8, pl.List(pl.UInt8)).alias("code"))
            .explode("code")
            # each shoe in an order of its own: sorted by a random key
            .with_columns(pl.int_range(pl.len()).shuffle(seed).alias("key"))
            .sort("sid", "key")
            .with_columns(pl.int_range(pl.len()).over("sid").alias("pos"))
            .filter(pl.col("pos") < 400)  # the cover card 16 cards from the end
            .select(
                (pl.col("sid") % 40).cast(pl.String).alias("table_id"),
                pl.format("{}-{}", pl.lit(seed), "sid").alias("shoe_id"),
                (pl.col("sid") * 1000 + pl.col("pos")).alias("seq"),
                pl.lit(None, pl.Datetime("us")).alias("time"), "code",
                pl.lit(False).alias("by_value"), pl.lit(14, pl.UInt16).alias("k"),
                pl.lit(28, pl.UInt16).alias("kv"))
        )
        assert shoe_order.repeated_runs(cards).is_empty()
        assert shoe_order.new_deck_runs(cards, 11).is_empty()
