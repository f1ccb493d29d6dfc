"""Coverage per check, not per rule (export-profiles-v1 1.1, Coverage): a rule whose
checks need different evidence is judged on what each table's log records, the check
that needs more named as not judged ("partly"), never the whole rule switched off for
want of what one check needs. Each split rule is shown both ways: its parts named on the
findings of a hand history that records everything, and an export that lacks a part's
evidence still finding the fault of the rest of the rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, audit_case, load_cases
from click.testing import CliRunner
from test_exports import _COUPS as BACCARAT_COUPS
from test_exports import _WAGERS as BACCARAT_WAGERS

from auditor import coverage, findings
from auditor.cli import main
from auditor.rules.catalog import REGISTRY
from auditor.rules.registry import Part, Rule
from auditor.simulate import exports

CASES = Path(__file__).resolve().parent / "cases"

# a blackjack table system's exports: shoe coups, and wagers joined by round (the sample's
# profile), and the coups alone
_COUPS_AND_WAGERS = exports.BLACKJACK_PROFILE
_COUPS = _COUPS_AND_WAGERS[:_COUPS_AND_WAGERS.index('[[source]]\nname = "wagers"')]

# One planted fault a round, each of a check a wagers export shows (its amounts), of a
# rule whose other check it cannot show (when a settlement was made, a second one), or
# that needs no more than the amounts
_DAY_COUPS = """\
Table,Shoe,Round,Start,End,Dealer,Decks,Box,Hand,Cards,Decisions,DealerCards
BJ-01,S1,1,2026-11-01 20:00:00,2026-11-01 20:00:50,D-1,6,1,1,KS 6S,SURRENDER,9H 5D 9C
BJ-01,S1,1,2026-11-01 20:00:00,2026-11-01 20:00:50,D-1,6,2,1,TS KD,STAND,9H 5D 9C
BJ-01,S1,2,2026-11-01 20:01:00,2026-11-01 20:01:50,D-1,6,1,1,9C KD,STAND,AH 8H
BJ-01,S1,3,2026-11-01 20:02:00,2026-11-01 20:02:50,D-1,6,3,1,8D 7C,SPLIT STAND,6D 6S TS
BJ-01,S1,3,2026-11-01 20:02:00,2026-11-01 20:02:50,D-1,6,3,2,8S 4D,STAND,6D 6S TS
BJ-01,S1,4,2026-11-01 20:03:00,2026-11-01 20:03:50,D-1,6,1,1,TS 9D,STAND,TC 7D
BJ-01,S1,5,2026-11-01 20:04:00,2026-11-01 20:04:50,D-1,6,1,1,JC 6C,SURRENDER,QH 4S 2C KC
BJ-01,S1,5,2026-11-01 20:04:00,2026-11-01 20:04:50,D-1,6,2,1,TS TD,STAND,QH 4S 2C KC
BJ-01,S1,6,2026-11-01 20:05:00,2026-11-01 20:05:50,D-1,6,1,1,TS 6C,SURRENDER,AC 2D 8H
BJ-01,S1,6,2026-11-01 20:05:00,2026-11-01 20:05:50,D-1,6,2,1,TD 9D,STAND,AC 2D 8H
"""
_DAY_WAGERS = """\
Table,Shoe,Round,Box,Hand,Bet,Patron,Amount,Paid,Taken,Returned,SettledAt
BJ-01,S1,1,1,1,main,,50,,50,,1
BJ-01,S1,1,2,1,main,,25,25,,,2
BJ-01,S1,2,1,1,main,,100,,,100,3
BJ-01,S1,2,1,1,insurance,,50,,,50,4
BJ-01,S1,3,3,1,main,,100,100,,,5
BJ-01,S1,3,3,2,split,,200,200,,,6
BJ-01,S1,4,1,1,main,,25,,,,
BJ-01,S1,5,1,1,main,,100,,100,,7
BJ-01,S1,5,2,1,main,,25,25,,,8
BJ-01,S1,6,1,1,main,,25,,25.5,12.5,9
BJ-01,S1,6,1,1,insurance,,13,,,,
BJ-01,S1,6,2,1,main,,25,,25,,10
"""
# (rule, round, line of the wagers file) of each planted fault
_DAY_FOUND = [
    ("BJ403", 1, 2),   # surrender against a 9: the whole $50 collected
    ("BJ304", 2, 5),   # losing insurance pushed back
    ("BJ204", 3, 7),   # a $200 split wager on a $100 original
    ("BJ706", 4, 8),   # a winning wager never settled
    ("BJ404", 5, 9),   # surrender against a queen (no blackjack): the whole $100 collected
    ("BJ405", 6, 11),  # the $13 insurance collected with the surrendered half
]
_TIMING = coverage.EVIDENCE["wager_timing"]
_ORDER = coverage.EVIDENCE["deal_order"]
_AGAIN = coverage.EVIDENCE["settlements"]


def _write(folder: Path, profile: str, files: dict[str, str]) -> list[str]:
    (folder / "profile.toml").write_text(profile)
    (folder / "house.toml").write_text(DEFAULT_HOUSE.read_text())
    for name, text in files.items():
        (folder / name).write_text(text)
    return [str(folder / name) for name in files]


def _audit(folder: Path, profile: str, files: dict[str, str], *more: str):
    """The exports `files` audited through `profile`: the CLI's result, the findings and
    the summary's coverage by rule."""
    paths = _write(folder, profile, files)
    result = CliRunner().invoke(main, [
        "audit", *paths, "--profile", str(folder / "profile.toml"),
        "--house", str(folder / "house.toml"), "--out", str(folder / "out"), "-q", *more])
    assert result.exit_code == 1, (result.output, result.exception)
    summary = json.loads((folder / "out" / "summary.json").read_text())
    by_rule = {r["rule_id"]: r for r in summary["coverage"]["by_rule"]}
    return result, pl.read_parquet(folder / "out" / "findings.parquet"), summary, by_rule


def _part_missed(entry: dict, part: str, why: str) -> None:
    """`entry` (a rule's coverage) is partly judged: only its `part` not, on BJ-01."""
    assert entry["state"] == "partly", entry
    assert "not_judged_on" not in entry
    missed = entry["parts_not_judged"]
    assert [p["part"] for p in missed] == [part]
    assert missed[0]["tables"] == [{"table_id": "BJ-01", "why": why}]


@pytest.fixture(scope="module")
def _day(tmp_path_factory):
    folder = tmp_path_factory.mktemp("day")
    return folder, *_audit(folder, _COUPS_AND_WAGERS,
                           {"bj-coups-day.csv": _DAY_COUPS, "bj-wagers-day.csv": _DAY_WAGERS})


def test_a_wagers_export_finds_what_its_amounts_show_of_a_rule_split_in_parts(_day):
    _, _, found, _, _ = _day
    assert sorted(found.select("rule_id", "round", "line").rows()) == sorted(_DAY_FOUND)
    assert found["file"].str.ends_with("bj-wagers-day.csv").all()


def test_the_checks_a_wagers_export_cannot_show_are_said_not_judged(_day):
    _, _, _, summary, by_rule = _day
    _part_missed(by_rule["BJ403"], "timing", _TIMING)
    _part_missed(by_rule["BJ304"], "timing", _TIMING)
    _part_missed(by_rule["BJ706"], "again", _AGAIN)
    _part_missed(by_rule["BJ205"], "order", _ORDER)
    missed = by_rule["BJ403"]["parts_not_judged"][0]
    assert missed["needs"] == ["wager_timing"] and "immediately" in missed["what"]
    # needing no more than the amounts (or the wagers, there), judged whole
    for rule in ("BJ204", "BJ404", "BJ405"):
        assert by_rule[rule]["state"] == "judged", by_rule[rule]
    # "partly" counts the rules, the part of the rule named once
    partly = [r for r, entry in by_rule.items() if entry["state"] == "partly"]
    assert summary["coverage"]["partly"] == len(partly)
    assert {"BJ205", "BJ304", "BJ403", "BJ706"} <= set(partly)


def test_the_report_scope_lists_each_check_not_judged(_day):
    folder, *_ = _day
    html = (folder / "out" / "report.html").read_text()
    scope = html[html.index('id="scope"'):]
    table = scope[scope.index("Check not judged"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><td>(\w+)</td><td>[^<]*\(<code>(\w+)</code>\)</td>"
                      r"<td>([^<]*)</td><td>([^<]*)</td></tr>", table)
    assert sorted((rule, part, where) for rule, part, where, _ in rows) == [
        ("BJ205", "order", "every blackjack table"), ("BJ304", "timing", "every blackjack table"),
        ("BJ403", "timing", "every blackjack table"), ("BJ706", "again", "every blackjack table")]
    assert dict((rule, why) for rule, _, _, why in rows)["BJ403"] == _TIMING
    assert "partly (a check of theirs not judged)" in html


def test_profile_check_says_per_table_what_an_audit_will_not_judge(tmp_path):
    paths = _write(tmp_path, _COUPS_AND_WAGERS,
                   {"bj-coups-day.csv": _DAY_COUPS, "bj-wagers-day.csv": _DAY_WAGERS})
    result = CliRunner().invoke(main, ["profile", "check", str(tmp_path / "profile.toml"),
                                       *paths])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert ("table BJ-01 (blackjack): the exports record cards, suits, ranks, shuffles, "
            "wagers, settle_order, decisions, single_settlements, times, stakes; not deal_order, "
            "shoe_procedure, offers, round_events, wager_timing, settlements, vig_settle, "
            "deciders, split_order, irregularities, seq") in lines
    assert f"table BJ-01: checks not judged: BJ304 timing, BJ403 timing ({_TIMING})" in lines
    assert f"table BJ-01: checks not judged: BJ205 order ({_ORDER})" in lines
    assert f"table BJ-01: checks not judged: BJ706 again ({_AGAIN})" in lines
    assert (f"table BJ-01: not judged: BJ803, BJ808 ({_ORDER})") in lines
    # said before any audit, and the verdict last
    assert lines[-1].startswith("profile check: the profile is valid")
    assert not (tmp_path / "out").exists()


def test_coups_without_wagers_judge_a_split_s_cards_and_a_hand_left_on_one_card(tmp_path):
    rows = """\
Table,Shoe,Round,Start,End,Dealer,Decks,Box,Hand,Cards,Decisions,DealerCards
BJ-01,S1,1,2026-11-01 20:00:00,2026-11-01 20:00:50,D-1,6,1,1,8H 3D,SPLIT STAND,TC 7D
BJ-01,S1,1,2026-11-01 20:00:00,2026-11-01 20:00:50,D-1,6,1,2,9S 7C,STAND,TC 7D
BJ-01,S1,2,2026-11-01 20:01:00,2026-11-01 20:01:50,D-1,6,1,1,8D 7C,SPLIT STAND,6H TC 5D
BJ-01,S1,2,2026-11-01 20:01:00,2026-11-01 20:01:50,D-1,6,1,2,8S,,6H TC 5D
BJ-01,S1,2,2026-11-01 20:01:00,2026-11-01 20:01:50,D-1,6,2,1,TS 5D 4C,HIT STAND,6H TC 5D
"""
    _, found, _, by_rule = _audit(tmp_path, _COUPS, {"bj-coups-day.csv": rows}, "--no-report")
    # a split of 8 and 9 (at the split), and the next box dealt while split hand 2 of box
    # 1 holds one card, which it still holds at the end: plain whatever the deal's order
    assert sorted(found.select("rule_id", "round", "line").rows()) == [
        ("BJ204", 1, 2), ("BJ205", 2, 6)]
    assert "split hand 2 of box 1 never had its second card" in found["message"][1]
    _part_missed(by_rule["BJ204"], "wager", coverage.EVIDENCE["wagers"])
    _part_missed(by_rule["BJ205"], "order", _ORDER)


def test_a_baccarat_wager_never_settled_is_judged_where_a_second_settlement_is_not(tmp_path):
    profile = BACCARAT_COUPS + BACCARAT_WAGERS + 'collect = "Lost"\n'
    coups = ("T,S,R,Start,W,PP,BP,P1,P2,B1,B2\n"
             "BAC-01,S1,1,2026-11-01T20:00:00,P,9,7,7S,2H,3D,4C\n")
    wagers = ("T,S,R,Seat,Bet,Amt,Pay,Lost\n"
              "BAC-01,S1,1,1,player,25,25,\n"
              "BAC-01,S1,1,2,banker,25,,\n")  # the losing banker wager never collected
    _, found, _, by_rule = _audit(tmp_path, profile,
                                  {"coups.csv": coups, "wagers.csv": wagers}, "--no-report")
    assert found.filter(pl.col("rule_id") != "HR001").select(
        "rule_id", "round", "line").rows() == [("BA404", 1, 3)]
    entry = by_rule["BA404"]
    assert entry["state"] == "partly"
    assert entry["parts_not_judged"][0]["part"] == "again"
    assert entry["parts_not_judged"][0]["tables"] == [{"table_id": "BAC-01", "why": _AGAIN}]


# --- a hand history records everything: each finding names the part that gave it -------

def _case(rule: str, name: str) -> dict:
    scope = "baccarat" if rule.startswith("BA") else "blackjack"
    return next(c for c in load_cases(CASES / scope / f"{rule}.toml") if c["name"] == name)


# (rule, case, the parts of the rule's findings in (round, seq) order: None the common check)
PARTS = [
    ("BJ403", "the whole $50 collected on a surrender against a 9 overcharges the patron $25",
     [None]),
    ("BJ403", "half and half settled only after the next box played is reported at the late "
     "row, nothing at stake", ["timing"]),
    ("BJ304", "losing insurance pushed back to the player is reported with the stake at stake",
     [None]),
    ("BJ304", "losing insurance collected only after the boxes played is reported at the "
     "collect, with nothing at stake", ["timing"]),
    ("BJ205", "hand 2's card before hand 1 is played out is reported at hand 2's card",
     ["order"]),
    # round 1: hand 2 waits, then gets its card (the order); round 2: it never does
    ("BJ205", "the next box dealt while hand 2 waits for its second card, and the dealer "
     "drawing while it never gets one", ["order", None]),
    ("BJ204", "a split of 8 and 9 is reported at the split; a split wager of twice the "
     "original at the wager", [None, "wager"]),
    ("BJ706", "a losing wager collected twice is reported at the second collect", ["again"]),
    ("BJ706", "a pay to a box without a wager, and losing insurance never collected, are "
     "each reported", [None, None]),
    ("BA404", "a winning wager paid twice is reported at the second pay", ["again"]),
    ("BA404", "a losing wager never collected is reported at its wager row, the stake not "
     "taken as overpaid", [None]),
    ("BA404", "a pay to a seat with no wager on that bet is reported at the pay", [None]),
]


@pytest.mark.parametrize(("rule", "name", "parts"), PARTS,
                         ids=[f"{r}-{n[:40]}" for r, n, _ in PARTS])
def test_each_finding_names_the_part_of_its_rule(tmp_path, rule, name, parts):
    result = audit_case(_case(rule, name), tmp_path)
    assert list(result.findings.columns) == list(findings.FINDING_SCHEMA)  # no column more
    assert result.parts.len() == result.findings.height
    own = result.findings.with_columns(result.parts).filter(pl.col("rule_id") == rule)
    assert own.sort("round", "seq")[findings.PART].to_list() == parts


def _lacking(result, kind: str) -> coverage.Coverage:
    """The coverage of `result`'s log had its tables not recorded `kind`."""
    lacking = coverage.Coverage(dict(result.coverage.tables))
    for table, (game, has) in lacking.tables.items():
        lacking.tables[table] = (game, has - {kind})
    return lacking


@pytest.mark.parametrize(("rule", "name", "kind", "kept"), [
    ("BJ205", PARTS[5][1], "split_order", [2]),   # the hand never completed, round 2
    ("BJ403", PARTS[1][1], "wager_timing", []),
    ("BJ706", PARTS[7][1], "settlements", []),
    ("BJ706", PARTS[8][1], "settlements", [1, 1]),  # neither is a second settlement
])
def test_a_part_not_evidenced_loses_its_findings_and_the_rest_stand(tmp_path, rule, name,
                                                                   kind, kept):
    result = audit_case(_case(rule, name), tmp_path)
    lacking = _lacking(result, kind)
    gathered = result.findings.with_columns(result.parts)
    left = lacking.keep(gathered).filter(pl.col("rule_id") == rule)
    assert left["round"].to_list() == kept
    # the findings of other rules stand
    assert lacking.keep(gathered).filter(pl.col("rule_id") != rule).height == \
        gathered.filter(pl.col("rule_id") != rule).height
    entry = next(r for r in lacking.as_dict()["by_rule"] if r["rule_id"] == rule)
    assert entry["state"] == "partly"
    part = REGISTRY.get(rule).parts[0]
    assert entry["parts_not_judged"] == [{
        "part": part.name, "what": part.what, "needs": list(part.needs),
        "tables": [{"table_id": "BJ-01", "why": coverage.EVIDENCE[kind]}]}]
    # a finding of a part cannot be told without the part: refused, not kept
    with pytest.raises(ValueError, match="without their parts"):
        lacking.keep(result.findings)


def test_a_rule_not_judged_says_so_whole_not_its_parts(tmp_path):
    result = audit_case(_case("BJ403", PARTS[1][1]), tmp_path)
    lacking = _lacking(result, "wagers")
    entry = next(r for r in lacking.as_dict()["by_rule"] if r["rule_id"] == "BJ403")
    assert entry["state"] == "not_judged" and "parts_not_judged" not in entry
    assert lacking.unjudged("BJ-01").count((REGISTRY.get("BJ403"), None,
                                            coverage.EVIDENCE["wagers"])) == 1


# --- the registry ----------------------------------------------------------------------

def test_a_part_needs_evidence_of_its_own_and_a_kind_decided_per_table():
    per_round_or_box = {"settle_order", *coverage.PER_BOX}
    split = [r for r in REGISTRY.all() if r.parts]
    assert {r.id for r in split} == {"BA404", "BJ204", "BJ205", "BJ304", "BJ403", "BJ706"}
    for rule in split:
        for part in rule.parts:
            assert set(part.needs) <= set(coverage.EVIDENCE), (rule.id, part.name)
            assert not set(part.needs) & per_round_or_box, (rule.id, part.name)
    base = dict(id="ZZ999", name="z", title="z", citation="c", severity="error",
                scope="blackjack", what="w", fail_example="f", pass_example="p",
                needs=("wagers",))
    with pytest.raises(ValueError, match="must need evidence of its own"):
        REGISTRY.add(Rule(**base, parts=(Part("p", "w", ("wagers",)),)))
    with pytest.raises(ValueError, match="named twice"):
        REGISTRY.add(Rule(**base, parts=(Part("p", "w", ("cards",)),
                                          Part("p", "x", ("suits",)))))
    assert "ZZ999" not in REGISTRY


def test_a_check_row_naming_a_part_its_rule_lacks_is_refused():
    rows = pl.DataFrame({"table_id": ["BJ-01"], findings.PART: ["timng"]})
    with pytest.raises(ValueError, match="timng"):
        findings.from_check(REGISTRY.get("BJ403"), rows, "blackjack")
    assert findings.from_check(REGISTRY.get("BJ403"), rows.with_columns(
        pl.lit("timing").alias(findings.PART)), "blackjack")[findings.PART].to_list() == ["timing"]
