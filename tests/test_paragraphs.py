"""What is checked, paragraph by paragraph: every paragraph of the two sections has the rules
that check it or a reason no rule does (never both, never neither), the data they rest on is
consistent, and `auditor paragraphs`, the manual and the report list the same."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor import paragraphs as para
from auditor.cli import main
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import DEFAULT_ROOT, REASON_KINDS, RulesetError, load_rulesets

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = {"9 NYCRR 5324.20": "baccarat", "9 NYCRR 5324.10": "blackjack"}
BACCARAT_UNCHECKED = "9-nycrr-5324.20/unchecked.toml"


@pytest.fixture(scope="module")
def rs():
    return load_rulesets()


@pytest.fixture(scope="module")
def listed(rs):
    return para.listing(rs)


def _all(listed):
    return [c for s in listed for c in s.paragraphs]


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --- every paragraph: rules or a reason ------------------------------------------------------


def test_both_sections_list_every_paragraph_in_document_order(rs, listed):
    assert [s.section for s in listed] == list(SECTIONS)
    for s in listed:
        own = [p.citation for p in rs.paragraphs() if p.section == s.section]
        assert [c.citation for c in s.paragraphs] == own
        assert s.game == SECTIONS[s.section]


def test_every_paragraph_has_rules_or_a_reason(listed):
    missing = [c.citation for c in _all(listed) if c.state == "missing"]
    assert not missing, (
        "paragraphs with neither a rule (citation or `also`) nor a reason in "
        f"rulesets/*/unchecked.toml: {missing}"
    )


def test_no_paragraph_has_both_rules_and_a_reason(listed):
    both = [(c.citation, c.rules or c.through) for c in _all(listed) if c.state == "both"]
    assert not both, f"checked by rules, yet given a reason in unchecked.toml: {both}"


def test_every_reason_is_of_a_known_kind_and_a_sentence(listed):
    for c in _all(listed):
        if c.reason is None:
            continue
        assert c.kind in REASON_KINDS, c.citation
        assert c.reason[0].isupper() and c.reason.endswith("."), c.citation


def test_reasons_are_specific_to_their_paragraph(listed):
    for s in listed:
        reasons = [c.reason for c in s.paragraphs if c.reason is not None]
        assert len(reasons) == len(set(reasons)), f"{s.section}: two paragraphs share a reason"


def test_a_heading_is_checked_through_subparagraphs_only_when_all_are(listed):
    by_citation = {c.citation: c for c in _all(listed)}
    for c in by_citation.values():
        subs = [s for s in by_citation.values()
                if s.citation.startswith(c.citation + "(")
                and s.citation.count("(") == c.citation.count("(") + 1]
        if c.through:
            assert not c.rules and subs and all(s.checked for s in subs), c.citation
            assert set(c.through) == {r for s in subs for r in s.rules + s.through}
        elif not c.rules and subs and all(s.checked for s in subs):
            pytest.fail(f"{c.citation}: every subparagraph is checked, yet it is not")


def _rule(rule_id: str, citation: str, also: tuple[str, ...] = ()):
    return dataclasses.replace(REGISTRY.get("BA103"), id=rule_id, citation=citation, also=also)


def test_rules_check_their_citation_and_also_and_headings_follow(rs):
    """A rule made up for the test: the card values (a)(4)(i)(a)-(c) checked through `also`
    make (a)(4)(i) checked through them; (a)(4) is the rule's own."""
    bac = "9 NYCRR 5324.20"
    rule = _rule("ZZ001", bac + "(a)(4)", tuple(bac + f"(a)(4)(i)({x})" for x in "abc"))
    (section,) = para.listing(rs, [rule], ["5324.20"])
    by = {c.label: c for c in section.paragraphs}
    assert by["(a)(4)"].state == "checked" and by["(a)(4)"].rules == ("ZZ001",)
    assert by["(a)(4)(i)(b)"].rules == ("ZZ001",)
    assert by["(a)(4)(i)"].state == "subparagraphs" and by["(a)(4)(i)"].through == ("ZZ001",)
    # (a) also holds the layout: not all its subparagraphs are checked
    assert by["(a)"].state == "reason" and by["(a)"].kind == "heading"
    partial = _rule("ZZ002", bac + "(a)(4)(i)(a)")
    (section,) = para.listing(rs, [partial], ["9 NYCRR 5324.20"])
    by = {c.label: c for c in section.paragraphs}
    assert by["(a)(4)(i)"].state == "missing" and by["(a)(4)(i)(b)"].state == "missing"


# --- the data: rule citations, `also`, unchecked.toml -----------------------------------------


@pytest.mark.parametrize("rule", REGISTRY.all(), ids=[r.id for r in REGISTRY.all()])
def test_every_rule_citation_and_also_is_a_paragraph(rs, rule):
    for citation in (rule.citation, *rule.also):
        assert rs.has_paragraph(citation), f"{rule.id} names {citation!r}, not in rulesets/"
    assert rule.citation not in rule.also, f"{rule.id}: `also` repeats its citation"
    assert len(set(rule.also)) == len(rule.also), f"{rule.id}: `also` names one paragraph twice"
    if rule.also:
        section = rs.paragraph(rule.citation).section
        assert {rs.paragraph(c).section for c in rule.also} == {section}, rule.id


def test_every_reason_names_a_paragraph_of_its_own_section(rs):
    for folder in DEFAULT_ROOT.iterdir():
        if not (folder / "unchecked.toml").is_file():
            continue
        data = tomllib.loads((folder / "unchecked.toml").read_text(encoding="utf-8"))
        for entry in data["unchecked"]:
            assert rs.has_paragraph(entry["citation"]), entry["citation"]
            assert rs.paragraph(entry["citation"]).section == data["meta"]["section"]
            assert rs.reason(entry["citation"]).reason == entry["reason"].strip()


@pytest.fixture
def rulesets_copy(tmp_path: Path) -> Path:
    root = tmp_path / "rulesets"
    shutil.copytree(DEFAULT_ROOT, root)
    return root


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param('citation = "9 NYCRR 5324.20(a)(1)"', 'citation = "9 NYCRR 5324.20(a)(9)"',
                     r"unchecked\[1\]\.citation '9 NYCRR 5324\.20\(a\)\(9\)' is not a paragraph",
                     id="no such paragraph"),
        pytest.param('citation = "9 NYCRR 5324.20(a)(1)"', 'citation = "9 NYCRR 5324.10(a)(1)"',
                     r"is not a paragraph of 9 NYCRR 5324\.20", id="another section's"),
        pytest.param('citation = "9 NYCRR 5324.20(a)(1)"', 'citation = "9 NYCRR 5324.20(a)"',
                     r"unchecked\[1\]\.citation '9 NYCRR 5324\.20\(a\)' is given a reason twice",
                     id="twice"),
        pytest.param('kind = "layout"', 'kind = "decor"', r"unchecked\[1\]\.kind 'decor'",
                     id="unknown kind"),
        pytest.param('reason = "Where the players', 'rationale = "Where the players',
                     r"unchecked\[1\]\.reason is missing", id="no reason"),
    ],
)
def test_malformed_unchecked_raises_naming_file_and_key(rulesets_copy, old, new, message):
    path = rulesets_copy / BACCARAT_UNCHECKED
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RulesetError, match=message) as raised:
        load_rulesets(root=rulesets_copy)
    assert "unchecked.toml" in str(raised.value)


def test_rulesets_without_unchecked_files_list_every_paragraph_as_missing(rulesets_copy):
    for folder in rulesets_copy.iterdir():
        (folder / "unchecked.toml").unlink(missing_ok=True)
    listed = para.listing(load_rulesets(root=rulesets_copy))
    assert all(c.state in ("checked", "subparagraphs", "missing") for c in _all(listed))
    assert "with neither" in para.count_line(listed)


# --- the command, the manual --------------------------------------------------------------


def test_command_text_lists_every_paragraph_and_counts(listed):
    result = _run("paragraphs")
    assert result.exit_code == 0
    out = result.output
    assert "9 NYCRR 5324.20 Baccarat: 98 paragraphs" in out
    assert "9 NYCRR 5324.10" in out
    for s in listed:
        for c in s.paragraphs:
            assert f"{c.label}  " in out, c.citation
    t = para.totals(listed)
    assert (f"{t['checked']} of {t['paragraphs']} paragraphs checked by rules, "
            f"{t['with_reason']} with a reason") in out
    assert "checked by BA101, BA102" in out  # (a)(4)
    assert "checked through its subparagraphs by BA103" in out  # (a)(4)(i)
    assert "not checked (other_game): Spanish 21" in out  # 5324.10(i)(7)


def test_command_section_keeps_one_section():
    out = _run("paragraphs", "--section", "5324.10").output
    assert "9 NYCRR 5324.10" in out and "Baccarat" not in out
    assert " of 77 paragraphs checked by rules" in out


def test_command_json_is_the_listing(listed):
    result = _run("paragraphs", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert [s["section"] for s in data["sections"]] == list(SECTIONS)
    rows = [p for s in data["sections"] for p in s["paragraphs"]]
    assert [p["citation"] for p in rows] == [c.citation for c in _all(listed)]
    assert data["totals"]["paragraphs"] == len(rows) == 175
    assert data["totals"]["checked"] == sum(p["state"] in ("checked", "subparagraphs")
                                            for p in rows)
    assert data["totals"]["with_reason"] == sum(p["state"] == "reason" for p in rows)
    assert set(data["kinds"]) == set(REASON_KINDS)
    values = {p["citation"]: p for p in rows}
    i7 = values["9 NYCRR 5324.10(i)(7)"]
    assert i7["kind"] == "other_game" and i7["rules"] == [] and "Spanish 21" in i7["text"]
    a4 = values["9 NYCRR 5324.20(a)(4)"]
    assert a4["state"] == "checked" and "BA101" in a4["rules"]
    assert a4["effective"] == "2021-06-02" and a4["reason"] is None
    # a paragraph a rule names in `also` lists that rule
    assert "BA103" in values["9 NYCRR 5324.20(a)(4)(i)(b)"]["rules"]


def test_command_markdown_is_what_the_manual_holds(listed):
    out = _run("paragraphs", "--format", "markdown").output
    assert out.rstrip("\n") == para.as_markdown(listed)
    assert "| 5324.10(i)(7) |" in out
    page = (ROOT / "docs" / "checked" / "paragraphs.md").read_text(encoding="utf-8")
    # that the page is what docs_pages makes now: tests/test_docs.py, for every generated page
    assert "| 5324.10(i)(7) |" in page


# --- the report's appendix C ------------------------------------------------------------------


def test_report_appendix_lists_the_audited_games_paragraphs(rs):
    from auditor.report.model import _regulation

    appendix = _regulation(rs, ["blackjack"])
    assert [s["name"] for s in appendix["sections"]] == [
        "9 NYCRR 5324.10 " + rs.section_of("blackjack")[1]]
    rows = appendix["sections"][0]["rows"]
    assert len(rows) == 77 and rows[0]["label"] == "5324.10(a)"
    assert all(r["rules"] or r["through"] or r["reason"] or appendix["count"].find("neither") > 0
               for r in rows)
    both = _regulation(rs, [])
    assert len(both["sections"]) == 2


def test_rule_command_names_the_further_paragraphs_a_rule_checks():
    out = _run("rule", "BA103").output
    assert "Also checks: 9 NYCRR 5324.20(a)(4)(i)(a)" in out
    assert "Also checks" not in _run("rule", "BA101").output
    assert json.loads(_run("rule", "BA103", "--format", "json").output)["also"][-1] == (
        "9 NYCRR 5324.20(g)(1)")
