"""The command line, through click's runner."""

from __future__ import annotations

import json

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, write_file
from click.testing import CliRunner

from auditor.cli import main
from auditor.rules.catalog import REGISTRY

CLEAN = """
{"macro": "shoe", "burn": "3S", "curator": 1}
{"macro": "round", "player": "9S KD", "banker": "7H QC", "wagers": [[1, "player", 25]]}
{"macro": "round", "player": "5S KD", "banker": "9H 9C", "wagers": [[1, "banker", 25], [2, "tie", 5]], "offers": [[2, true]]}
"""
DAMAGED = CLEAN + '{"event": "wager", "seat": 1, "bet": "banker", "amount": -5, "round": 3}\n'


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def logs(tmp_path):
    write_file(tmp_path, {"name": "clean.jsonl", "events": CLEAN})
    write_file(
        tmp_path, {"name": "damaged.jsonl", "events": DAMAGED, "defaults": {"table_id": "BAC-02"}}
    )
    return tmp_path


def test_audit_writes_every_output_and_exits_by_fail_on(logs, tmp_path):
    out = tmp_path / "out"
    result = _run(
        "audit", str(logs / "clean.jsonl"), "--house", str(DEFAULT_HOUSE), "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    for name in (
        "findings.csv",
        "findings.jsonl",
        "findings.parquet",
        "summary.json",
        "report.pdf",
        "report.html",
    ):
        assert (out / name).exists(), name
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"]["total"] == 0 and summary["rows"]["balanced"]

    result = _run(
        "audit",
        str(logs / "damaged.jsonl"),
        "--house",
        str(DEFAULT_HOUSE),
        "--out",
        str(out),
        "--no-report",
    )
    assert result.exit_code == 1
    found = pl.read_csv(out / "findings.csv")
    # the bad row's round is the last of the log, in play where it ends: set aside (IN018)
    assert set(found["rule_id"]) == {"IN007", "IN018"}
    assert (
        _run(
            "audit",
            str(logs / "damaged.jsonl"),
            "--house",
            str(DEFAULT_HOUSE),
            "--out",
            str(out),
            "--no-report",
            "--fail-on",
            "never",
        ).exit_code
        == 0
    )


def test_fail_on_warning_counts_warnings(logs, tmp_path):
    house = tmp_path / "empty.toml"
    house.write_text('facility = "X"\n')
    args = [
        "audit",
        str(logs / "clean.jsonl"),
        "--house",
        str(house),
        "--out",
        str(tmp_path / "o"),
        "--no-report",
        "-q",
    ]
    assert _run(*args).exit_code == 0  # HR001 is a warning
    result = _run(*args, "--fail-on", "warning")
    assert result.exit_code == 1 and result.output == ""


def test_findings_files_agree(logs, tmp_path):
    out = tmp_path / "out"
    _run("audit", str(logs), "--house", str(DEFAULT_HOUSE), "--out", str(out), "--no-report")
    parquet = pl.read_parquet(out / "findings.parquet")
    jsonl = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    csv = pl.read_csv(out / "findings.csv", infer_schema=False)
    assert parquet.height == len(jsonl) == csv.height > 0
    assert list(jsonl[0]) == parquet.columns == csv.columns
    assert [r["rule_id"] for r in jsonl] == parquet["rule_id"].to_list()


@pytest.mark.parametrize(
    ("house_text", "message"),
    [
        ("[baccarat]\ncommission_percent = 3\n", "baccarat.commission_percent"),
        ("[baccarat]\nvig = 5\n", "baccarat.vig"),
        ("not toml = = =", "not valid TOML"),
    ],
)
def test_bad_house_rules_exit_2_naming_the_key(logs, tmp_path, house_text, message):
    house = tmp_path / "house.toml"
    house.write_text(house_text)
    result = CliRunner().invoke(
        main, ["audit", str(logs), "--house", str(house), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_log_exits_2(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "audit",
            str(tmp_path / "nope.jsonl"),
            "--house",
            str(DEFAULT_HOUSE),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "no such file" in result.output


def test_rules_lists_every_rule_in_text_and_json():
    text = _run("rules").output.splitlines()
    assert len(text) == len(REGISTRY.all())
    assert text[0].startswith("HR001") or text[0].startswith("BA")
    listed = json.loads(_run("rules", "--format", "json").output)
    assert {r["id"] for r in listed} == {r.id for r in REGISTRY.all()}
    assert all(r["citation"] for r in listed)
    only_input = json.loads(_run("rules", "--format", "json", "--scope", "input").output)
    assert {r["scope"] for r in only_input} == {"input"}


def test_rule_explains_one_rule_with_its_quoted_section():
    result = _run("rule", "IN004")
    assert result.exit_code == 0
    assert "field-missing" in result.output and "hand-history-v1 Events" in result.output
    assert "Fails" in result.output and "Passes" in result.output
    assert "round_start" in result.output  # quoted from the format's Events section
    doc = json.loads(_run("rule", "in004", "--format", "json").output)
    assert doc["id"] == "IN004" and doc["paragraph"]
    assert CliRunner().invoke(main, ["rule", "XX999"]).exit_code == 2


def test_report_re_renders_from_the_output_folder(logs, tmp_path):
    out = tmp_path / "out"
    _run("audit", str(logs), "--house", str(DEFAULT_HOUSE), "--out", str(out), "--no-report")
    assert not (out / "report.pdf").exists()
    result = _run("report", str(out), "--paper", "Letter")
    assert result.exit_code == 0
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")
    assert CliRunner().invoke(main, ["report", str(tmp_path)]).exit_code == 2


def test_every_command_has_help():
    for command in ("audit", "report", "rules", "rule", "simulate"):
        result = _run(command, "--help")
        assert result.exit_code == 0 and "Usage" in result.output


def test_context_logs_give_history_and_are_not_reported(logs, tmp_path):
    """The clean log cut after its first round: the second part with the first as
    context has no finding, counts only its own round, and lists the context apart."""
    lines = (logs / "clean.jsonl").read_text().splitlines(keepends=True)
    cut = next(n for n, line in enumerate(lines) if '"round_end"' in line) + 1
    (tmp_path / "before.jsonl").write_text("".join(lines[:cut]))
    (tmp_path / "after.jsonl").write_text("".join(lines[cut:]))
    out = tmp_path / "out"
    args = ["audit", str(tmp_path / "after.jsonl"), "--house", str(DEFAULT_HOUSE), "--out",
            str(out), "--no-report", "-q"]
    alone = _run(*args, "--fail-on", "warning")
    assert alone.exit_code == 1  # IN016: the shoe began before this log
    assert set(pl.read_csv(out / "findings.csv")["rule_id"]) == {"IN016"}
    assert _run(*args, "--context", str(tmp_path / "before.jsonl"), "--fail-on",
                "warning").exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rounds"] == {"read": 1, "audited": 1, "reported": 0}
    assert [f["path"] for f in summary["context"]] == [str(tmp_path / "before.jsonl")]
    assert [f["path"] for f in summary["inputs"]] == [str(tmp_path / "after.jsonl")]
    assert summary["rows"]["read"] == len(lines) - cut and summary["window"] is None


def test_a_file_given_as_log_and_as_context_is_exit_2(logs, tmp_path):
    clean = str(logs / "clean.jsonl")
    result = _run("audit", clean, "--context", clean, "--house", str(DEFAULT_HOUSE), "--out",
                  str(tmp_path / "o"))
    assert result.exit_code == 2 and "both as a log to audit and as context" in result.output


def test_gaming_day_and_window_flags(logs, tmp_path):
    base = ["audit", str(logs / "clean.jsonl"), "--house", str(DEFAULT_HOUSE), "--out",
            str(tmp_path / "o"), "--no-report", "-q"]
    both = _run(*base, "--gaming-day", "2026-11-01", "--from", "2026-11-01T20:00")
    assert both.exit_code == 2 and "give one" in both.output
    backwards = _run(*base, "--from", "2026-11-02", "--until", "2026-11-01")
    assert backwards.exit_code == 2 and "after its start" in backwards.output
    # the log's rounds start after 20:00 on 2026-11-01 (the cases' clock)
    assert _run(*base, "--gaming-day", "2026-11-01").exit_code == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["window"] == {"gaming_day": "2026-11-01", "from": "2026-11-01T00:00:00",
                                 "until": "2026-11-02T00:00:00"}
    assert summary["rounds"]["audited"] == 2
    assert _run(*base, "--gaming-day", "2026-10-31").exit_code == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["rounds"]["read"] == 0 and summary["rows"]["read"] == 0
