"""A column missing from a file is one finding, and the rounds that do not need it are
judged (hand-history-v1 Columns: `ts` is on every row, but no rule reads it)."""

from __future__ import annotations

from datetime import date

import polars as pl

from auditor import audit, summary
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat
from auditor.simulate.writer import write_events, write_house_rules


def _faulty_day(tmp_path, drop: str):
    sim = baccarat.simulate(rounds=120, tables=2, seed=4, faults=0.1)
    full = write_events(sim.events, tmp_path / "full.csv", "csv")
    cut = tmp_path / f"no-{drop}.csv"
    pl.read_csv(full, infer_schema_length=0).drop(drop).write_csv(cut)
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml"), rs,
                       date(2026, 11, 1))
    return (audit.run(expand([str(full)]), house, rs), audit.run(expand([str(cut)]), house, rs))


def _keys(findings: pl.DataFrame) -> set[tuple]:
    return set(findings.select("table_id", "shoe_id", "round", "seq", "rule_id").iter_rows())


def test_a_file_without_ts_is_no_finding_and_every_round_is_judged(tmp_path):
    # hand-history-v1 1.3, No clock: a table whose rows all lack ts is read without times
    whole, cut = _faulty_day(tmp_path, "ts")
    assert cut.findings.filter(pl.col("rule_id").str.starts_with("IN")).is_empty()
    # every planted fault is still found, on its round, and nothing else
    assert _keys(cut.findings) == _keys(whole.findings)
    assert cut.coverage.untimed() == sorted(cut.coverage.tables)
    counts = summary.accounting(cut)
    assert counts["rounds"] == summary.accounting(whole)["rounds"]
    assert counts["rows"]["balanced"] and counts["rows"]["reported"] == 0


def test_a_file_without_amount_is_one_finding_and_its_rounds_are_reported(tmp_path):
    _, cut = _faulty_day(tmp_path, "amount")
    inputs = cut.findings.filter(pl.col("rule_id").str.starts_with("IN"))
    assert set(inputs["rule_id"]) <= {"IN003", "IN018"}
    assert inputs.filter(pl.col("rule_id") == "IN003").height == 1
    counts = summary.accounting(cut)
    assert counts["rows"]["balanced"] and counts["rounds"]["audited"] == 0
