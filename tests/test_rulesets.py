"""The rulesets data and its loader: dated lookups, validation, and agreement between the
parameters and the regulation text they cite."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import tomllib
from datetime import date
from pathlib import Path

import pytest

from auditor.rulesets import DEFAULT_ROOT, Paragraph, RulesetError, load_rulesets

BACCARAT_PARAMETERS = "9-nycrr-5324.20/parameters.toml"
ADOPTED = date(2016, 11, 16)
AMENDED = date(2021, 6, 2)
TODAY_IN_TESTS = date(2024, 5, 1)


@pytest.fixture(scope="module")
def rulesets():
    return load_rulesets()


@pytest.fixture
def rulesets_copy(tmp_path: Path) -> Path:
    """A private copy of the rulesets folder that a test may edit."""
    root = tmp_path / "rulesets"
    shutil.copytree(DEFAULT_ROOT, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def table_rows(paragraph: Paragraph) -> list[list[str]]:
    """The tab-separated rows of a table printed inside a paragraph's text."""
    return [line.split("\t") for line in paragraph.own_text.splitlines() if "\t" in line]


def numbers(cell: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", cell)]


# --- the data as shipped -------------------------------------------------------------------


@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_every_parameter_reference_is_a_paragraph(rulesets, game):
    for name in rulesets.params(game, on=TODAY_IN_TESTS):
        reference = rulesets.parameter_reference(game, name)
        assert rulesets.has_paragraph(reference), f"{game}.{name} cites {reference}"
        assert rulesets.paragraph(reference).citation == reference


def test_paragraphs_are_in_document_order(rulesets):
    citations = [p.citation for p in rulesets.paragraphs() if p.section == "9 NYCRR 5324.20"]
    assert citations[:3] == [
        "9 NYCRR 5324.20(a)",
        "9 NYCRR 5324.20(a)(1)",
        "9 NYCRR 5324.20(a)(2)",
    ]
    assert citations.index("9 NYCRR 5324.20(f)(13)") < citations.index("9 NYCRR 5324.20(g)")
    assert citations[-1] == "9 NYCRR 5324.20(i)(4)"


def test_paragraph_records_its_section_title_and_date(rulesets):
    paragraph = rulesets.paragraph("9 NYCRR 5324.10(c)(3)(i)")
    assert paragraph.section == "9 NYCRR 5324.10"
    assert paragraph.title == "General provisions relating to blackjack games"
    assert paragraph.effective == AMENDED
    assert paragraph.own_text.startswith("a player may not split pairs after the third split")


def test_irregularities_is_a_subdivision_not_a_subparagraph(rulesets):
    for section in ("9 NYCRR 5324.20", "9 NYCRR 5324.10"):
        assert rulesets.paragraph(f"{section}(i)").own_text == "Irregularities."
        assert rulesets.has_paragraph(f"{section}(i)(1)")
    assert not rulesets.has_paragraph("9 NYCRR 5324.20(h)(2)(i)")
    assert not rulesets.has_paragraph("9 NYCRR 5324.10(h)(6)(i)")
    # Beneath a paragraph, (i) is still its first subparagraph.
    assert rulesets.paragraph("9 NYCRR 5324.20(h)(1)(i)").own_text.startswith("the curator shall")


def test_third_card_table_stays_in_f13(rulesets):
    text = rulesets.paragraph("9 NYCRR 5324.20(f)(13)").text
    for row in (
        "0,1,2\t0,1,2,3,4,5,6,7",
        "3\t0,1,2,3,4,5,6,7,9\t8",
        "4\t2, 3, 4, 5, 6, 7\t0,1,8,9",
        "5\t4, 5, 6, 7\t0,1,2,3,8,9",
        "6\t6,7\t0,1,2,3,4,5,8,9",
        "7\tStands\tStands",
        "8,9\tNatural stand\tNatural stand",
    ):
        assert row in text.splitlines()
    # The table belongs to (f)(13), not to the subdivision that follows.
    assert "Banker having" not in rulesets.paragraph("9 NYCRR 5324.20(g)").text


def test_dragon_bonus_clauses_are_in_b1iv_text(rulesets):
    paragraph = rulesets.paragraph("9 NYCRR 5324.20(b)(1)(iv)")
    lines = paragraph.text.splitlines()
    assert lines[0] == paragraph.own_text
    assert lines[1] == "(a) win if the selected hand is:"
    assert "(1) a natural and the other hand is not a natural;" in lines
    assert "(1) a natural 8 and other hand is a natural 9;" in lines
    assert lines[-1].startswith("(c) tie and be returned to the patron")
    assert len(lines) == 1 + (1 + 3) + (1 + 3) + 1  # itself, (a) and (b) with three each, (c)
    assert "dragon 7 insurance" not in paragraph.text  # (v) is a sibling, not a child


def test_input_format_sections_are_citable(rulesets):
    for heading in ("Files", "Columns", "Events", "House rules"):
        paragraph = rulesets.paragraph(f"hand-history-v1 {heading}")
        assert paragraph.text
        assert paragraph.effective is None
    assert (
        "strictly increasing within a table_id"
        in rulesets.paragraph("hand-history-v1 Columns").text
    )


def test_unknown_paragraph_is_a_key_error(rulesets):
    assert not rulesets.has_paragraph("9 NYCRR 5324.20(z)")
    with pytest.raises(KeyError):
        rulesets.paragraph("9 NYCRR 5324.20(z)")


# --- dated lookups --------------------------------------------------------------------------


def test_values_in_force_from_adoption(rulesets):
    assert rulesets.parameter("baccarat", "min_decks", on=ADOPTED) == 6
    assert rulesets.params("blackjack", on=TODAY_IN_TESTS)["max_boxes"] == 7
    assert rulesets.effective_date("baccarat", on=TODAY_IN_TESTS) == AMENDED
    assert rulesets.effective_date("baccarat", on=date(2018, 1, 1)) == ADOPTED


@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_lookup_before_adoption_raises(rulesets, game):
    before = date(2016, 11, 15)
    with pytest.raises(RulesetError):
        rulesets.params(game, on=before)
    with pytest.raises(RulesetError):
        rulesets.parameter(game, "min_decks", on=before)
    with pytest.raises(RulesetError):
        rulesets.effective_date(game, on=before)


def test_unknown_game_raises(rulesets):
    with pytest.raises(RulesetError, match="roulette"):
        rulesets.params("roulette", on=TODAY_IN_TESTS)


def test_returned_values_cannot_change_the_rulesets(rulesets):
    rulesets.params("baccarat", on=TODAY_IN_TESTS)["natural_points"].append(7)
    assert rulesets.parameter("baccarat", "natural_points", on=TODAY_IN_TESTS) == [8, 9]


def test_amended_value_applies_from_its_date_only(rulesets_copy):
    edit(
        rulesets_copy / BACCARAT_PARAMETERS,
        "values = { 2016-11-16 = 6 }",
        "values = { 2016-11-16 = 6, 2025-03-01 = 8 }",
    )
    rulesets = load_rulesets(root=rulesets_copy)
    assert rulesets.parameter("baccarat", "min_decks", on=date(2025, 2, 28)) == 6
    assert rulesets.parameter("baccarat", "min_decks", on=date(2025, 3, 1)) == 8
    assert rulesets.params("baccarat", on=date(2026, 1, 1))["min_decks"] == 8
    assert rulesets.effective_date("baccarat", on=date(2025, 2, 28)) == AMENDED
    assert rulesets.effective_date("baccarat", on=date(2025, 3, 1)) == date(2025, 3, 1)
    # The shipped rulesets are a separate, unchanged load.
    assert load_rulesets().parameter("baccarat", "min_decks", on=date(2026, 1, 1)) == 6


def test_load_is_cached_per_root(rulesets_copy):
    assert load_rulesets() is load_rulesets(root=DEFAULT_ROOT)
    assert load_rulesets(root=rulesets_copy) is load_rulesets(root=rulesets_copy)
    assert load_rulesets(root=rulesets_copy) is not load_rulesets()


# --- malformed data -------------------------------------------------------------------------


MALFORMED = [
    pytest.param(
        BACCARAT_PARAMETERS,
        'unit = "decks"\n',
        "",
        r"parameters\.min_decks lacks 'unit'",
        id="missing unit",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        'description = "Fewest decks a baccarat shoe may hold"\n',
        "",
        r"parameters\.min_decks lacks 'description'",
        id="missing description",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        "values = { 2016-11-16 = 6 }",
        "",
        r"parameters\.min_decks lacks 'values'",
        id="missing values",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        'reference = "9 NYCRR 5324.20(a)(4)"\n',
        "",
        r"parameters\.min_decks lacks 'reference'",
        id="missing reference",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        "values = { 2016-11-16 = 6 }",
        "values = { 2016-13-01 = 6 }",
        r"parameters\.min_decks\.values key '2016-13-01' is not a date",
        id="values key not a date",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        "values = { 2016-11-16 = 6 }",
        "values = { soon = 6 }",
        r"parameters\.min_decks\.values key 'soon' is not a date",
        id="values key a word",
    ),
    pytest.param(
        BACCARAT_PARAMETERS,
        'reference = "9 NYCRR 5324.20(a)(4)"',
        'reference = "9 NYCRR 5324.20(a)(9)"',
        r"parameters\.min_decks\.reference '9 NYCRR 5324\.20\(a\)\(9\)' is not a paragraph",
        id="reference to no paragraph",
    ),
    pytest.param(
        "9-nycrr-5324.20/paragraphs.toml",
        'citation = "9 NYCRR 5324.20(f)(13)"',
        'citation = "9 NYCRR 5324.20 (f)(13)"',
        r"paragraphs\[\d+\]\.citation '9 NYCRR 5324\.20 \(f\)\(13\)' is malformed",
        id="citation with a space",
    ),
    pytest.param(
        "9-nycrr-5324.20/paragraphs.toml",
        'citation = "9 NYCRR 5324.20(f)(13)"',
        'citation = "9 NYCRR 5324.20(f)(xiii)"',
        r"paragraphs\[\d+\]\.citation '9 NYCRR 5324\.20\(f\)\(xiii\)' is malformed",
        id="citation with a level of the wrong kind",
    ),
    pytest.param(
        "9-nycrr-5324.20/paragraphs.toml",
        'citation = "9 NYCRR 5324.20(f)(13)"',
        'citation = "9 NYCRR 5324.10(f)(13)"',
        r"paragraphs\[\d+\]\.citation '9 NYCRR 5324\.10\(f\)\(13\)' is malformed",
        id="citation of another section",
    ),
    pytest.param(
        "9-nycrr-5324.20/readings.toml",
        'rules = ["BA206"]',
        "rules = []",
        r"reading\[0\]\.rules is not a list of rule ids",
        id="reading governing no rule",
    ),
    pytest.param(
        "9-nycrr-5324.10/readings.toml",
        'topic = "Irregularities"',
        'topic = "Irregular"',
        r"reading\[\d+\]\.topic 'Irregular' is not in \[topics\]",
        id="reading under a topic with no heading",
    ),
]


@pytest.mark.parametrize(("file", "old", "new", "message"), MALFORMED)
def test_malformed_rulesets_raise_naming_file_and_key(rulesets_copy, file, old, new, message):
    edit(rulesets_copy / file, old, new)
    with pytest.raises(RulesetError, match=message) as raised:
        load_rulesets(root=rulesets_copy)
    assert Path(file).parts[0] in str(raised.value)


# --- the parameters agree with the regulation text they cite --------------------------------


def test_dragon_bonus_pay_tables_match_d5(rulesets):
    rows = table_rows(rulesets.paragraph("9 NYCRR 5324.20(d)(5)"))
    header, body = rows[0], rows[1:]
    tables = [cell.removeprefix("Pay table ") for cell in header[1:]]
    printed: dict[str, dict[str, int]] = {table: {} for table in tables}
    for label, *cells in body:
        if label == "Natural tie":
            assert cells == ["Push"] * len(tables)
            continue
        key = "natural" if label == "Natural winner" else f"by_{numbers(label)[0]}"
        for table, cell in zip(tables, cells, strict=True):
            odds, to_one = numbers(cell)
            assert to_one == 1
            printed[table][key] = odds
    assert tables == ["A", "B", "C"]
    assert rulesets.parameter("baccarat", "dragon_bonus_pay_tables", on=TODAY_IN_TESTS) == printed


def test_banker_third_card_rule_matches_f13(rulesets):
    draws = rulesets.parameter("baccarat", "banker_draws_on_player_third", on=TODAY_IN_TESTS)
    rows = {row[0]: row[1:] for row in table_rows(rulesets.paragraph("9 NYCRR 5324.20(f)(13)"))}
    for banker in range(3, 7):
        printed_draws, printed_stays = (numbers(cell) for cell in rows[str(banker)])
        assert draws[str(banker)] == printed_draws
        assert sorted(printed_draws + printed_stays) == list(range(10))
    for banker, row in (("7", "7"), ("8", "8,9"), ("9", "8,9")):
        assert "stand" in rows[row][0].lower() and draws[banker] == []


def test_player_third_card_rule_matches_f11(rulesets):
    rows = table_rows(rulesets.paragraph("9 NYCRR 5324.20(f)(11)"))
    printed = {cell: numbers(points) for points, cell in rows[1:]}
    low, high = printed["Draws"]
    draws = rulesets.parameter("baccarat", "player_draws_on", on=TODAY_IN_TESTS)
    assert draws == list(range(low, high + 1))
    assert printed["Stays"] == [6, 9] and max(draws) < 6


def test_panda8_odds_match_d4(rulesets):
    odds = rulesets.parameter("baccarat", "panda8_pays", on=TODAY_IN_TESTS)
    assert f"odds of {odds} to 1" in rulesets.paragraph("9 NYCRR 5324.20(d)(4)").text


def test_commission_steps_match_d2(rulesets):
    text = rulesets.paragraph("9 NYCRR 5324.20(d)(2)").own_text
    steps = rulesets.parameter("baccarat", "commission_step_cents", on=TODAY_IN_TESTS)
    assert "in 20-cent increments if the vigorish is four percent" in text
    assert "in 25 cent increments if the vigorish is five percent" in text
    assert steps == {"4": 20, "5": 25}
    step = rulesets.parameter("baccarat", "wager_step_cents", on=TODAY_IN_TESTS)
    assert f"${step // 100} increments" in text


# --- the paragraph extractor ------------------------------------------------------------------


SAMPLE_REGULATION = """N.Y. Comp. Codes R. & Regs. tit. 9 § 5399.1

Current through Register Vol. 1, No. 2, January 3, 2024

Section 5399.1 - Sample game

(a) Wagers.

(1) A wager shall:

(i) win if:

(a) the hand is higher;

(1) by one point; or

(2) by more; or

(b) lose otherwise.

(ii) Pay as follows:

Hand\tPays
Natural\t1:1

(b) Reserved.

(c) Reserved.

(d) Reserved.

(e) Reserved.

(f) Reserved.

(g) Reserved.

(h) Curator.

(1) The curator shall pass the shoe.

(i) Irregularities.

(1) A card found face up shall not be used.

(i) the dealer shall burn it.

N.Y. Comp. Codes R. & Regs. Tit. 9 § 5399.1

Adopted New York State Register November 16, 2016/Volume XXXVIII, Issue 46, eff. 11/16/2016

Amended New York State Register June 2, 2021/Volume XLIII, Issue 22, eff. 6/2/2021
"""


@pytest.fixture(scope="module")
def extractor():
    path = DEFAULT_ROOT.parent / "scripts" / "extract_paragraphs.py"
    spec = importlib.util.spec_from_file_location("extract_paragraphs", path)
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve the script's annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_extractor_output_loads_as_a_ruleset(extractor, tmp_path):
    source = tmp_path / "sample.txt"
    source.write_text(SAMPLE_REGULATION, encoding="utf-8")
    target = extractor.extract(source, tmp_path / "rulesets" / "sample" / "paragraphs.toml")
    first = target.read_bytes()
    assert extractor.extract(source, target) == target and target.read_bytes() == first

    rulesets = load_rulesets(root=tmp_path / "rulesets")
    assert [p.citation.removeprefix("9 NYCRR 5399.1") for p in rulesets.paragraphs()] == [
        "(a)",
        "(a)(1)",
        "(a)(1)(i)",
        "(a)(1)(i)(a)",
        "(a)(1)(i)(a)(1)",
        "(a)(1)(i)(a)(2)",
        "(a)(1)(i)(b)",
        "(a)(1)(ii)",
        *(f"({letter})" for letter in "bcdefgh"),
        "(h)(1)",
        "(i)",
        "(i)(1)",
        "(i)(1)(i)",
    ]
    assert rulesets.paragraph("9 NYCRR 5399.1(a)(1)(ii)").own_text == (
        "Pay as follows:\nHand\tPays\nNatural\t1:1"
    )
    assert rulesets.paragraph("9 NYCRR 5399.1(a)(1)(i)(a)").text == (
        "the hand is higher;\n(1) by one point; or\n(2) by more; or"
    )
    paragraph = rulesets.paragraph("9 NYCRR 5399.1(i)(1)(i)")
    assert paragraph.effective == AMENDED and paragraph.title == "Sample game"
    meta = tomllib.loads(target.read_text(encoding="utf-8"))["meta"]
    assert meta == {
        "section": "9 NYCRR 5399.1",
        "title": "Sample game",
        "source": "Current through Register Vol. 1, No. 2, January 3, 2024",
        "adopted": ADOPTED,
        "amended": AMENDED,
    }


def test_extractor_rejects_a_label_out_of_sequence(extractor):
    text = SAMPLE_REGULATION.replace("(b) lose otherwise.", "(d) lose otherwise.")
    with pytest.raises(extractor.ExtractError, match=r"label \(d\)"):
        extractor.parse_regulation(text)
