"""The same inputs give the same outputs: byte-identical findings files and round
details, and a summary and report that differ only in the run's time (and the report
id, which hashes it)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor import audit, summary
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.rules.registry import SEVERITIES
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules

BYTE_IDENTICAL = ("findings.csv", "findings.jsonl", "findings.parquet", "round_details.parquet")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path]:
    """A faulty day of both games, with a damaged file beside it."""
    root = tmp_path_factory.mktemp("determinism")
    bac = baccarat.simulate(rounds=240, tables=3, seed=8, faults=0.1)
    bj = blackjack.simulate(rounds=200, tables=2, seed=8, faults=0.1)
    write_events(bac.events, root / "logs" / "baccarat.parquet", "parquet")
    write_events(bj.events, root / "logs" / "blackjack.jsonl", "jsonl")
    lines = (root / "logs" / "blackjack.jsonl").read_text().splitlines()
    damaged = [line.replace('"seat":1', '"seat":"x"') for line in lines[40:80]]
    (root / "logs" / "damaged.jsonl").write_text("\n".join([*damaged, '{"table_id": "BJ']) + "\n")
    house = write_house_rules([*bac.tables, *bj.tables], root / "house.toml", blackjack=bj.house)
    return root / "logs", house


def _audit(logs: Path, house: Path, out: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(logs), "--house", str(house), "--out",
                                       str(out), "-q"], catch_exceptions=False)
    assert result.exit_code == 1, result.output


def _without_run(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "run_at"}


def _summary_bytes(out: Path) -> bytes:
    """summary.json less the line of the run's own time (it is written one key a line)."""
    lines = (out / "summary.json").read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(b'  "run_at": ')]
    assert len(kept) == len(lines) - 1
    return b"".join(kept)


def _report_text(out: Path, summary: dict) -> str:
    # the words in the order the pages draw them (-raw), spaces collapsed: the report id's
    # letters are of other widths than the other run's, which moves the running head's
    # boxes, and pdftotext's reading order (its column guess) can follow them
    text = subprocess.run(["pdftotext", "-raw", str(out / "report.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    text = re.sub(r"\s+", " ", text)
    run = summary["run_at"].replace("T", " ")
    # the run's time, the report id that hashes it, and summary.json's digest (it holds it)
    digest = hashlib.sha256((out / "summary.json").read_bytes()).hexdigest()
    text = text.replace(run, "RUN").replace(digest, "SUMMARY-SHA256")
    return re.sub(r"AUD-[0-9A-F]{12}", "AUD-", text)


@pytest.mark.parametrize("parts", [1, 3], ids=["one part", "in parts, in the worker"])
def test_the_same_inputs_give_the_same_outputs(logs, tmp_path, monkeypatch, parts):
    if parts > 1:
        monkeypatch.setattr(audit, "PART_ROWS", 4_000)  # a table or two a part
    first, second = tmp_path / "first", tmp_path / "second"
    _audit(*logs, first)
    _audit(*logs, second)
    for name in BYTE_IDENTICAL:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    summaries = [json.loads((o / "summary.json").read_text()) for o in (first, second)]
    assert summaries[0]["findings"]["total"] > 0
    assert _without_run(summaries[0]) == _without_run(summaries[1])
    # the same bytes, in the same key order, not only equal mappings
    assert _summary_bytes(first) == _summary_bytes(second)
    if shutil.which("pdftotext"):
        assert _report_text(first, summaries[0]) == _report_text(second, summaries[1])


def test_the_summary_of_an_audit_is_the_same_bytes_each_time_it_is_built(logs):
    # a group-by's groups come in any order, from one call to the next: built many times,
    # a summary that follows one would differ (findings.by_severity did)
    rs = load_rulesets()
    result = audit.run(expand([str(logs[0])]), load_house(logs[1], rs, date(2026, 11, 1)), rs)
    run_at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    built = [json.dumps(summary.build(result, run_at), indent=2) for _ in range(12)]
    assert len(set(built)) == 1
    by_severity = json.loads(built[0])["findings"]["by_severity"]
    assert list(by_severity) == list(SEVERITIES)  # the log has both: in their order
