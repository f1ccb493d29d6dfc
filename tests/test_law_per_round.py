"""The law in force on each round's own day: a log that spans an amendment is judged
with each day's values (the rulesets keep them dated)."""

from __future__ import annotations

import shutil
from datetime import date, time
from pathlib import Path

import pytest
from casefiles import default_house, write_file

from auditor import audit
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.scope import gaming_day

SHIPPED = Path(__file__).resolve().parent.parent / "rulesets"

# Two shoes of seven decks, one on each side of midnight (ts is 20:00 plus seq seconds)
BEFORE = '''
{"event": "shuffle", "decks": 7}
{"event": "burn", "card": "AS"}
{"event": "burn", "card": "5D"}
{"macro": "round", "player": "2S 6H", "banker": "3D 4C"}
'''
AFTER = '''
{"event": "shuffle", "decks": 7, "seq": 20000}
{"event": "burn", "card": "AS"}
{"event": "burn", "card": "5D"}
{"macro": "round", "player": "2S 6H", "banker": "3D 4C"}
'''


@pytest.fixture
def amended(tmp_path: Path) -> Path:
    """The shipped rulesets, with baccarat's minimum raised to eight decks on 2026-11-02."""
    root = tmp_path / "rulesets"
    shutil.copytree(SHIPPED, root)
    parameters = root / "9-nycrr-5324.20" / "parameters.toml"
    text = parameters.read_text(encoding="utf-8")
    old = "[parameters.min_decks]"
    block = text[text.index(old):]
    line = next(x for x in block.splitlines() if x.startswith("values"))
    parameters.write_text(
        text.replace(line, "values = { 2016-11-16 = 6, 2026-11-02 = 8 }", 1), encoding="utf-8")
    return root


def _audit(folder: Path, rulesets_root: Path | None, **scope) -> list[tuple[str, str]]:
    house = default_house()
    write_file(folder, {"name": "s1.jsonl", "events": BEFORE}, house)
    write_file(folder, {"name": "s2.jsonl", "events": AFTER, "defaults": {"shoe_id": "S2"}},
               house)
    rs = load_rulesets(rulesets_root)
    logs = expand([str(folder / "s1.jsonl"), str(folder / "s2.jsonl")])
    result = audit.run(logs, house, rs, **scope)
    return sorted(result.findings.select("rule_id", "shoe_id").iter_rows())


def test_a_shoe_after_an_amendment_is_judged_by_the_new_value(amended, tmp_path):
    assert _audit(tmp_path, amended) == [("BA101", "S2")]


def test_the_shipped_values_pass_both_shoes(tmp_path):
    assert _audit(tmp_path, None) == []


def test_the_amendment_is_found_within_a_part_of_the_period(amended):
    rs = load_rulesets(amended)
    assert rs.amendments("baccarat", date(2026, 11, 1), date(2026, 11, 3)) == [date(2026, 11, 2)]
    assert rs.amendments("baccarat", date(2026, 11, 2), date(2026, 11, 3)) == []
    assert rs.params("baccarat", on=date(2026, 11, 2))["min_decks"] == 8


@pytest.mark.parametrize(("day", "found"), [(1, []), (2, [("BA101", "S2")])])
def test_each_gaming_day_is_judged_by_its_own_law(amended, tmp_path, day, found):
    window = gaming_day(date(2026, 11, day), time(0, 0))
    assert _audit(tmp_path, amended, window=window) == found
