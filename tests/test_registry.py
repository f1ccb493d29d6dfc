"""Every rule is a complete, documented unit with cases that exercise it."""

from __future__ import annotations

import re

import pytest
from casefiles import CASES, load_cases

from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets

RULES = REGISTRY.all()
ID = re.compile(r"^(IN|HR|EX|BA|BJ)\d{3}$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_has_complete_docs(rule):
    assert ID.match(rule.id), rule.id
    assert NAME.match(rule.name), rule.name
    for field in ("title", "what", "fail_example", "pass_example"):
        assert getattr(rule, field).strip(), f"{rule.id} has no {field}"
    assert rule.title[0].isupper()


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_citation_resolves(rule):
    rs = load_rulesets()
    assert rs.has_paragraph(rule.citation), f"{rule.id} cites {rule.citation!r}, not in rulesets/"
    if rule.scope in ("baccarat", "blackjack"):
        assert rule.citation.startswith("9 NYCRR 5324."), rule.citation
        assert rule.check is not None, f"{rule.id} is a game rule without a check"
    elif rule.id.startswith("EX"):
        assert rule.citation.startswith("export-profiles-v1 "), rule.citation
    else:
        assert rule.citation.startswith("hand-history-v1 "), rule.citation


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_has_failing_and_passing_cases(rule):
    path = CASES / rule.scope / f"{rule.id}.toml"
    assert path.exists(), f"no case file {path.relative_to(CASES.parent)}"
    kinds = {case["expect"] for case in load_cases(path)}
    assert kinds == {"fail", "pass"}, f"{rule.id} needs at least one fail and one pass case"


def test_no_case_file_without_a_rule():
    for path in CASES.glob("*/*.toml"):
        assert path.stem in REGISTRY, f"{path.name} names no registered rule"


def test_ids_and_names_are_unique():
    assert len({r.name for r in RULES}) == len(RULES)
