"""Outputs safe to open: log text is data in every output. A findings.csv cell that
a spreadsheet would read as a formula is written as text; the report shows markup
from a log as text and fetches nothing while it is printed."""

from __future__ import annotations

import csv
import shutil
import subprocess

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, write_file
from click.testing import CliRunner

from auditor import report
from auditor.cli import main
from auditor.findings import spreadsheet_safe

HOSTILE = {
    "table_id": '<img src="file:///etc/passwd">',
    "shoe_id": "<script>alert(1)</script>",
}
FORMULA_TABLE = "=HYPERLINK(\"http://x\")"


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_formula_cells_are_written_as_text_and_numbers_stay_numbers():
    frame = pl.DataFrame({
        "table_id": ["=1+1", "+A1", "-2", "@SUM(A1)", "\tx", "\rx", "BAC-01", None],
        "round": [1, 2, 3, 4, 5, 6, 7, 8],
        "amount": [-2.5, 1.0, None, 0.0, 3.0, 4.0, 5.0, 6.0],
    })
    safe = spreadsheet_safe(frame)
    assert safe["table_id"].to_list() == [
        "'=1+1", "'+A1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "BAC-01", None]
    assert safe["round"].equals(frame["round"]) and safe["amount"].equals(frame["amount"])


@pytest.fixture
def hostile(tmp_path):
    """A log whose ids hold markup and a formula, with tables the house rules do not
    list and a five-deck shoe (so that the ids reach findings, HR001 and BA101)."""
    events = '{"macro": "shoe", "decks": 5, "burn": "AS"}\n' \
             '{"macro": "round", "player": "9S KD", "banker": "7H QC"}\n'
    write_file(tmp_path, {"name": "a.jsonl", "events": events, "defaults": HOSTILE})
    write_file(tmp_path, {"name": "b.jsonl", "events": events, "defaults": {
        "table_id": FORMULA_TABLE, "shoe_id": '<link href="file:///etc/hosts">'}})
    return tmp_path


def test_findings_csv_from_a_hostile_log_opens_as_text(hostile, tmp_path):
    out = tmp_path / "out"
    _run("audit", str(hostile / "a.jsonl"), str(hostile / "b.jsonl"), "--house",
         str(DEFAULT_HOUSE), "--out", str(out), "--no-report", "-q")
    with (out / "findings.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    tables = {row["table_id"] for row in rows}
    assert "'" + FORMULA_TABLE in tables and FORMULA_TABLE not in tables
    assert HOSTILE["table_id"] in tables  # not a formula: written as it is
    parquet = pl.read_parquet(out / "findings.parquet")
    assert FORMULA_TABLE in parquet["table_id"].to_list()  # machine files keep the value


class _Recording:
    """The report's own fetcher, recording every URL it is asked for."""

    def __init__(self):
        self.asked: list[str] = []
        self.fetcher = report.url_fetcher()

    def fetch(self, url, *args, **kwargs):
        self.asked.append(url)
        return self.fetcher.fetch(url, *args, **kwargs)


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils is not installed")
def test_report_shows_markup_as_text_and_fetches_nothing(hostile, tmp_path, monkeypatch):
    recording = _Recording()
    monkeypatch.setattr(report, "url_fetcher", lambda: recording)
    out = tmp_path / "out"
    result = _run("audit", str(hostile / "a.jsonl"), str(hostile / "b.jsonl"), "--house",
                  str(DEFAULT_HOUSE), "--out", str(out), "-q")
    assert result.exit_code in (0, 1), result.output
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '<img src="file:' not in page and '<link href="file:' not in page
    text = subprocess.run(["pdftotext", str(out / "report.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    assert '<img src="file:///etc/passwd">' in text.replace("\n", "")
    assert all(url.startswith("data:") for url in recording.asked), recording.asked


def test_the_report_fetcher_refuses_files_and_the_network():
    fetcher = report.url_fetcher()
    for url in ("file:///etc/passwd", "http://127.0.0.1:9/x.css"):
        with pytest.raises(ValueError, match="disallowed protocol"):
            fetcher.fetch(url)
