"""The PDF exception report and its HTML twin, read back as a person would: the text
of the PDF (pdftotext), its outline, fonts and page size; every number checked
against summary.json and the findings files."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor import details, paragraphs
from auditor.cli import main
from auditor.report import model, replays
from auditor.report.charts import Bar, columns, horizontal_bars
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat as sim_baccarat
from auditor.simulate import blackjack as sim_blackjack
from auditor.simulate.writer import write_events, write_house_rules

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) is not installed"
)


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _pdf_text(pdf: Path) -> list[str]:
    """The text of each page, laid out (one table row a line)."""
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    return text.split("\f")[:-1]


def _pdfinfo(pdf: Path) -> dict[str, str]:
    out = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True)
    return dict(
        (k.strip(), v.strip()) for k, v in (ln.split(":", 1) for ln in out.stdout.splitlines())
    )


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


class Sample:
    def __init__(self, out: Path):
        self.out = out
        self.summary = json.loads((out / "summary.json").read_text())
        self.findings = pl.read_parquet(out / "findings.parquet")
        self.pages = _pdf_text(out / "report.pdf")
        self.text = "\n".join(self.pages)
        self.flat = _flat(self.text)


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Sample:
    """A faulty day: simulated baccarat and blackjack with planted faults, and a damaged
    file (an unreadable line, a table the house rules do not list)."""
    root = tmp_path_factory.mktemp("report")
    bac = sim_baccarat.simulate(rounds=400, tables=4, seed=5, faults=0.1)
    bj = sim_blackjack.simulate(rounds=240, tables=2, seed=3, faults=0.1)
    logs = root / "logs"
    write_events(bac.events, logs / "baccarat.jsonl", "jsonl")
    write_events(bj.events, logs / "blackjack.csv", "csv")
    first = (logs / "baccarat.jsonl").read_text().splitlines()[:3]
    damaged = [ln.replace("BAC-01", "BAC-09") for ln in first] + ['{"table_id": "BAC-09", "ga']
    (logs / "damaged.jsonl").write_text("\n".join(damaged) + "\n")
    house = write_house_rules([*bac.tables, *bj.tables], root / "house.toml", blackjack=bj.house)
    out = root / "out"
    result = _run("audit", str(logs), "--house", str(house), "--out", str(out), "-q")
    assert result.exit_code == 1, result.output
    return Sample(out)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Sample:
    root = tmp_path_factory.mktemp("clean")
    sim = sim_baccarat.simulate(rounds=40, tables=2, seed=2, faults=0.0)
    log = write_events(sim.events, root / "logs" / "clean.parquet", "parquet")
    house = write_house_rules(sim.tables, root / "house.toml")
    out = root / "out"
    result = _run("audit", str(log), "--house", str(house), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    return Sample(out)


# --- cover, provenance, every page ---------------------------------------------------


def test_cover_and_provenance(sample):
    s, flat = sample.summary, sample.flat
    cover = _flat(sample.pages[0])
    assert "Table Games Compliance Exception Report" in cover
    assert s["facility"] in cover
    start, end = (s["period"][k].replace("T", " ") for k in ("start", "end"))
    assert f"{start} to {end}" in cover
    for table in s["tables"]:
        assert table["table_id"] in cover
    for game in ("baccarat", "blackjack"):
        rs = s["ruleset"][game]
        assert (
            f"{rs['section']} ({game}), text and parameters in force from {rs['effective']}"
            in cover
        )
    assert s["house_rules"]["sha256"] in cover
    assert f"auditor {s['auditor_version']}" in cover
    assert s["run_at"].replace("T", " ") in cover
    assert "Signature" in cover
    # chain of custody: every input with its rows and SHA-256, the house rules and outputs
    for f in s["inputs"]:
        assert f["sha256"] in flat
        assert re.search(
            rf"{re.escape(Path(f['path']).name)}\s+{f['encoding']}\s+"
            rf"{f['rows']:,}\s+{f['bytes']:,}",
            sample.text,
        ), f["path"]
    for name in ("summary.json", "findings.parquet", "round_details.parquet"):
        digest = hashlib.sha256((sample.out / name).read_bytes()).hexdigest()
        assert re.search(rf"{name}\s+[\d,]+\s+{digest}", sample.text), name
    r = s["rows"]
    assert (
        f"{r['read']:,} rows read = {r['audited']:,} audited + {r['reported']:,} reported" in flat
    )


def test_report_id_and_page_x_of_y_on_every_page(sample):
    report_id = model.report_id(sample.summary)
    n = int(_pdfinfo(sample.out / "report.pdf")["Pages"])
    assert n == len(sample.pages) > 10
    for i, page in enumerate(sample.pages, start=1):
        assert f"Report {report_id}" in page, f"page {i}"
        assert f"Page {i} of {n}" in page, f"page {i}"


def test_outline_contents_and_embedded_fonts(sample):
    pdf = sample.out / "report.pdf"
    xml = subprocess.run(
        ["pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    outline = [ET.fromstring(m).text for m in re.findall(r"<item[^>]*>[^<]*</item>", xml)]
    for section in (
        "Cover",
        "Contents",
        "1. Provenance and chain of custody",
        "2. Executive summary",
        "3. Charts",
        "4. Exceptions in detail",
        "Appendix A. Cited paragraphs",
        "Appendix B. Rules applied",
        "Appendix C. Coverage of the regulation",
    ):
        assert section in outline
    tables_found = {t for t in sample.findings["table_id"].drop_nulls().unique()}
    for table_id in tables_found:
        assert any(item.startswith(f"Table {table_id}") for item in outline), table_id
    # the table of contents gives each section's page
    contents = _flat(sample.pages[1])
    pages = dict(re.findall(r"(\d\. [A-Z][a-z]+[a-z ]*?) \.+ ?(\d+)", contents))
    assert "Executive summary" in sample.pages[int(pages["2. Executive summary"]) - 1]
    fonts = subprocess.run(
        ["pdffonts", str(pdf)], check=True, capture_output=True, text=True
    ).stdout.splitlines()[2:]
    assert fonts and all(line.split()[-5] == "yes" for line in fonts), fonts  # emb column


# --- every number agrees with summary.json and the findings ----------------------------


def _money(v: float) -> str:
    return f"${v:,.2f}"


def test_per_table_rows_equal_the_summary(sample):
    by_table = model.money_columns()
    split = {
        r["table_id"]: r
        for r in sample.findings.group_by("table_id").agg(*by_table).iter_rows(named=True)
    }
    for t in sample.summary["tables"]:
        m = split.get(t["table_id"], {"underpaid": 0, "overcharged": 0, "overpaid": 0})
        # the split by kind adds up to the summary's own per-table amounts
        assert round(m["underpaid"] + m["overcharged"], 2) == t["amount_against_patrons"]
        assert round(m["overpaid"], 2) == t["amount_overpaid"]
        cells = [
            t["rounds_read"],
            t["rounds_audited"],
            t["rounds_read"] - t["rounds_audited"],
            t["rows_read"],
            t["rows_audited"],
            t["rows_reported"],
            t["findings"],
            t["errors"],
            t["findings"] - t["errors"],
        ]
        row = (
            rf"{re.escape(t['table_id'])}\*?\s+{t['game']}\s+{re.escape(t['pit'] or '—')}\s+"
            + r"\s+".join(f"{c:,}" for c in cells)
            + r"\s+"
            + r"\s+".join(re.escape(_money(m[k])) for k in ("underpaid", "overcharged", "overpaid"))
        )
        assert re.search(row, sample.text), f"{t['table_id']}: {row}"


def test_totals_and_money_equal_the_summary(sample):
    s = sample.summary
    m = s["money"]
    sev = s["findings"]["by_severity"]
    total = (
        r"Total\s+"
        + r"\s+".join(
            f"{v:,}"
            for v in (
                s["rounds"]["read"],
                s["rounds"]["audited"],
                s["rounds"]["reported"],
                s["rows"]["read"],
                s["rows"]["audited"],
                s["rows"]["reported"],
                s["findings"]["total"],
                sev.get("error", 0),
                sev.get("warning", 0),
            )
        )
        + r"\s+"
        + r"\s+".join(re.escape(_money(m[k])) for k in ("underpaid", "overcharged", "overpaid"))
    )
    assert re.search(total, sample.text), total
    cover = _flat(sample.pages[0])
    assert (
        f"underpaid {_money(m['underpaid'])}, overcharged {_money(m['overcharged'])}, "
        f"overpaid {_money(m['overpaid'])}"
    ) in cover
    assert (
        f"{s['findings']['total']} exceptions found: {sev.get('error', 0)} errors, "
        f"{sev.get('warning', 0)} warnings" in cover
    )
    # the rows not tied to a table (an unreadable record) close the per-table sums
    assert re.search(r"Not tied to a table\s+0\s+0\s+0\s+1\s+0\s+1\s+1\s+1\s+0", sample.text)


def test_findings_by_rule_equal_the_summary(sample):
    layout = sample.text
    for rule_id, n in sample.summary["findings"]["by_rule"].items():
        rule = REGISTRY.get(rule_id)
        # the row may wrap its title; its first line holds id, citation, severity, count
        assert re.search(
            rf"^\s*{rule_id}\s.*{re.escape(rule.citation)}\s+{rule.severity}\s+{n}\b", layout, re.M
        ), rule_id


# --- the exceptions in detail ------------------------------------------------------------


def test_every_finding_is_shown_with_its_citation_and_message(sample):
    flat = sample.flat
    for f in sample.findings.iter_rows(named=True):
        assert f"{f['rule_id']} {f['severity'].upper()} {f['citation']}" in flat, f["rule_id"]
        assert _flat(f["message"])[:60] in flat, f["message"]
        if f["amount"]:
            assert f"At stake: {model.money(f['amount'])}" in flat


def test_rounds_are_replayed(sample):
    flat = sample.flat
    baccarat_rounds = sample.findings.filter(
        (pl.col("game") == "baccarat")
        & (pl.col("round") > 0)
        & pl.col("rule_id").str.starts_with("BA")
    )
    for f in baccarat_rounds.iter_rows(named=True):
        head = f"Round {f['round']} · shoe {f['shoe_id']} · table {f['table_id']}"
        assert head in flat, head
    assert "Player " in flat and "Banker " in flat and "third card required" in flat
    assert "Settlement required" in flat
    # a planted wrong draw shows the hand the rules and the log disagree on
    assert re.search(
        r"(Player|Banker) .*third card required (yes|no) +drawn (yes|no) +≠", sample.text
    )
    # a planted wrong payout shows the wager owed against the one recorded
    assert re.search(
        r"pay \$[\d,.]+ at \d+:1\s+pay \$[\d,.]+\s+−?\$[\d,.]+\s+\d+/\d+ ≠", sample.text
    )
    if sample.findings.filter(pl.col("game") == "blackjack").height:
        assert "Dealer " in flat and "Decisions" in flat


def test_table_and_file_level_findings_have_their_place(sample):
    flat = sample.flat
    assert "The table as a whole" in flat  # HR001 for BAC-09
    assert "Findings not tied to a table" in flat  # the unreadable line
    assert "damaged.jsonl, line 4" in flat


def test_appendix_quotes_every_cited_paragraph(sample):
    rs = load_rulesets()
    appendix = _flat(sample.text[sample.text.index("Appendix A. Cited paragraphs\n") :])
    for citation in sample.findings["citation"].unique():
        assert citation in appendix
        own = _flat(rs.paragraph(citation).own_text)
        assert own[:50] in appendix, citation
    catalogue = sample.text[sample.text.index("rules this audit applied") :]
    for rule_id in sample.summary["rules_applied"]:
        rule = REGISTRY.get(rule_id)
        assert re.search(rf"{rule_id}\s.*{re.escape(rule.citation)}", catalogue), rule_id


def test_appendix_c_gives_every_paragraph_its_rules_or_its_reason(sample):
    appendix = sample.text[sample.text.index("Appendix C. Coverage of the regulation\n") :]
    flat = _flat(appendix)
    listed = paragraphs.listing(load_rulesets())
    games = {t["game"] for t in sample.summary["tables"]}
    assert {s.game for s in listed} <= games  # the sample audits both games
    assert paragraphs.count_line(listed) in flat
    for s in listed:
        for c in s.paragraphs:
            assert s.short + c.label in appendix, c.citation
            if c.reason:
                assert _flat(c.reason)[:40] in flat, c.citation


def test_charts_are_inline_svg(sample):
    html = (sample.out / "report.html").read_text()
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert len(svgs) >= 3
    for svg in svgs:
        ET.fromstring(svg)  # well-formed
    assert "Findings over time, per hour" in html
    assert not re.search(r'(src|href)="(https?:|//|file:)', html)  # self-contained
    assert "<link" not in html and "@import" not in html


# --- re-rendering: from OUT alone, capped detail, paper ---------------------------------


def test_report_rerenders_from_out_alone_with_a_cap_and_letter_paper(sample, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(sample.out, out)
    (out / "report.pdf").unlink()
    (out / "report.html").unlink()
    assert _run("report", str(out)).exit_code == 0
    assert _pdf_text(out / "report.pdf") == sample.pages  # the same report, page for page

    result = _run("report", str(out), "--detail-per-rule", "1", "--paper", "Letter")
    assert result.exit_code == 0, result.output
    info = _pdfinfo(out / "report.pdf")
    assert info["Page size"].startswith("612 x 792")
    text = _flat("\n".join(_pdf_text(out / "report.pdf")))
    counts = sample.findings.group_by("rule_id").agg(pl.len()).filter(pl.col("len") > 1)
    assert counts.height
    assert "At most 1 finding per rule is shown here" in text
    layout = "\n".join(_pdf_text(out / "report.pdf"))
    for rule_id, n in counts.iter_rows():
        assert re.search(rf"{rule_id}\s+{n}\s+1\s+{n - 1}\b", layout), rule_id
    n_rules, total = sample.findings["rule_id"].n_unique(), sample.findings.height
    assert f"({n_rules:,} of {total:,})" in text


def test_report_without_round_details_still_renders(sample, tmp_path):
    out = tmp_path / "old"
    shutil.copytree(sample.out, out)
    (out / "round_details.parquet").unlink()
    assert _run("report", str(out)).exit_code == 0
    assert "No replay was recorded for this round" in _flat(
        "\n".join(_pdf_text(out / "report.pdf"))
    )


def test_clean_audit_says_no_exceptions(clean):
    assert clean.summary["findings"]["total"] == 0
    cover = _flat(clean.pages[0])
    assert "No exceptions were found." in cover
    assert "No exceptions were found." in clean.flat[clean.flat.index("4. Exceptions in detail") :]
    assert "No paragraph is cited" in clean.flat
    assert " ERROR " not in clean.flat
    assert pl.read_parquet(clean.out / "round_details.parquet").height == 0


# --- round_details and its pieces ----------------------------------------------------------


def test_round_details_match_the_findings_and_the_cap(sample):
    found = sample.findings.filter(pl.col("table_id").is_not_null())
    rounds = pl.read_parquet(sample.out / "round_details.parquet")
    keys = found.select(details.KEY).unique()
    assert rounds.height == keys.height
    assert rounds.join(keys, on=details.KEY, how="anti", nulls_equal=True).is_empty()
    assert rounds["time"].null_count() == 0
    replayed = rounds.filter(pl.col("detail").is_not_null())
    assert replayed.height and (replayed["round"] > 0).all()
    d = json.loads(replayed.filter(pl.col("game") == "baccarat")["detail"][0])
    assert {
        "player_cards",
        "banker_cards",
        "p_points",
        "player_must_draw",
        "player_drew",
        "winner",
        "declared_winner",
        "dragon7",
        "panda8",
        "wagers",
    } <= set(d)
    # the cap: at most N findings per rule are shown, in turn from each table
    shown = details.mark_shown(sample.findings, 1)
    per_rule = shown.filter(pl.col("shown")).group_by("rule_id").agg(pl.len())
    assert per_rule["len"].max() == 1
    assert per_rule.height == sample.findings["rule_id"].n_unique()
    two = details.mark_shown(sample.findings, 2).filter(pl.col("shown"))
    for _, group in two.group_by("rule_id"):
        tables = sample.findings.filter(pl.col("rule_id") == group["rule_id"][0])["table_id"]
        assert group["table_id"].n_unique() == min(2, tables.n_unique())


def test_baccarat_replay_lines_mark_what_disagrees():
    detail = {
        "player_cards": ["5S", "KD", "2H"],
        "banker_cards": ["7H", "QC"],
        "order": "PBPBP",
        "p_two": 5,
        "b_two": 7,
        "p_points": 7,
        "b_points": 7,
        "p_natural": False,
        "b_natural": False,
        "player_must_draw": True,
        "player_drew": True,
        "banker_must_draw": False,
        "banker_drew": False,
        "winner": "tie",
        "declared_winner": "banker",
        "declared_player_points": 7,
        "declared_banker_points": 7,
        "dragon7": False,
        "panda8": False,
        "void": False,
        "variant": "big",
        "ez": False,
        "commission_percent": 5,
        "wagers": [
            {
                "seat": 3,
                "bet": "player",
                "staked_cents": 2500,
                "expected_kind": "push",
                "odds": 1,
                "expected_cents": 2500,
                "settled_kind": "collect",
                "settled_cents": 2500,
                "n_settled": 1,
                "expected_net": 0,
                "settled_net": -2500,
                "wager_seq": 10,
                "settled_seq": 20,
            }
        ],
        "settlements": [],
        "commission": None,
    }
    replay = replays.baccarat(detail)
    lines = [line for block in replay.blocks for line in block]
    text = "\n".join(line.text for line in lines)
    assert "5♠ K♦ 2♥" in text and "7♥ Q♣" in text
    assert [line.style for line in lines[:2]] == ["", ""]
    assert lines[2].style == "bad" and "declared banker 7-7" in lines[2].text
    wager = next(line for line in lines if line.text.lstrip().startswith("3  player"))
    assert wager.style == "bad" and "push $25.00" in wager.text and "collect $25.00" in wager.text
    assert "$25.00  10/20 ≠" in wager.text  # owed $25 more than the record gives


def test_blackjack_replay_lines():
    detail = {
        "dealer_cards": ["TH", "7C"],
        "dealer_total": 17,
        "dealer_soft": False,
        "dealer_blackjack": False,
        "dealer_busted": False,
        "void": False,
        "dealer_hits_soft_17": False,
        "blackjack_pays": "3:2",
        "expected_known": True,
        "boxes": [
            {
                "seat": 2,
                "hands": [
                    {
                        "hand": 1,
                        "cards": ["TS", "9D"],
                        "actions": ["stand"],
                        "total": 19,
                        "soft": False,
                        "busted": False,
                        "natural": False,
                    }
                ],
                "wagers": [
                    {
                        "hand": 1,
                        "bet": "main",
                        "player_id": None,
                        "staked_cents": 1000,
                        "outcome": "win",
                        "expected_text": "paid $10.00 (1:1)",
                        "observed_text": "paid $5.00",
                        "settled_right": False,
                        "amount_cents": 500,
                        "wager_seq": 4,
                        "settled_seq": 30,
                    }
                ],
                "settlements": [
                    {
                        "hand": 1,
                        "bet": "main",
                        "player_id": None,
                        "event": "pay",
                        "amount_cents": 500,
                        "seq": 30,
                    }
                ],
            }
        ],
    }
    text = "\n".join(line.text for block in replays.blackjack(detail).blocks for line in block)
    assert "10♥ 7♣" in text and "10♠ 9♦" in text and "stands on soft 17" in text
    assert re.search(
        r"2 +1 +main +\$10\.00 +win +paid \$10\.00 \(1:1\) +paid \$5\.00 +4/30 ≠ \$5\.00", text
    )


def test_charts_scale_and_label():
    svg = horizontal_bars(
        [Bar("BA101", {"error": 3}), Bar("IN014", {"warning": 12})], ["error", "warning"], "t"
    )
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"BA101", "IN014", "3", "12", "15"} <= set(texts)  # axis ends at 15
    svg = columns([Bar("20:00", {"error": 2}), Bar("21:00", {})], ["error"], "t", "hour")
    assert "20:00" in svg and "21:00" in svg
