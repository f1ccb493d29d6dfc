"""Every rule's pass and fail cases, from tests/cases/*/<RULE>.toml, in one test.

`pytest -k IN004` runs one rule's cases.
"""

from __future__ import annotations

import polars as pl
import pytest
from casefiles import case_files, load_cases, matches, run_case

from auditor import audit
from auditor.rules.catalog import REGISTRY

CASES = [case for path in case_files() for case in load_cases(path)]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['rule']}: {c['name']}" for c in CASES])
def test_case(case, tmp_path):
    findings = run_case(case, tmp_path)
    mine = findings.filter(findings["rule_id"] == case["rule"]).to_dicts()
    if case["expect"] == "pass":
        assert mine == [], f"{case['rule']} fired on a passing case: {mine}"
        return
    assert case["expect"] == "fail", "expect must be pass or fail"
    assert mine, f"{case['rule']} did not fire"
    for wanted in case.get("findings", []):
        assert any(matches(f, wanted) for f in mine), f"no finding like {wanted} in {mine}"
    if "count" in case:
        assert len(mine) == case["count"], mine


ACROSS = [c for c in CASES if REGISTRY.get(c["rule"]).across is not None]


@pytest.mark.parametrize("case", ACROSS, ids=[f"{c['rule']}: {c['name']}" for c in ACROSS])
def test_rules_across_parts_find_the_same_with_each_table_in_its_own_part(
    case, tmp_path, monkeypatch
):
    (tmp_path / "whole").mkdir()
    (tmp_path / "parted").mkdir()
    whole = run_case(case, tmp_path / "whole")
    monkeypatch.setattr(audit, "PART_ROWS", 1)  # every table a part of its own
    parted = run_case(case, tmp_path / "parted")
    assert parted.drop("file").equals(whole.drop("file"))
    assert case["expect"] == "pass" or parted.filter(pl.col("rule_id") == case["rule"]).height
