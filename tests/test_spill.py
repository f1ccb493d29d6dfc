"""A large text log is read in chunks and spilled to Parquet by table (ingest.spill):
the audit is the same as reading it whole, findings, lines and counts alike."""

from __future__ import annotations

import gzip
import json
import re
from datetime import date

import polars as pl
import pytest

from auditor import audit, summary
from auditor.house import load as load_house
from auditor.ingest import chunks, compact, spill
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules


def _damaged(path, encoding: str) -> None:
    """A bad row inside, a broken record, and (gzip) the stream cut near its end."""
    text = (gzip.decompress(path.read_bytes()) if encoding.endswith(".gz")
            else path.read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    if encoding.startswith("csv"):
        lines[200] = lines[200].replace(",", ",,", 1)  # a row with one field too many
        lines[300] = lines[300].replace("baccarat", "bacarat").replace("blackjack", "blakjack")
        fields = lines[400].split(",")
        lines[400] = ",".join([*fields[:3], "7x", *fields[4:]])  # a round that is no integer
    else:
        lines[200] = lines[200][: len(lines[200]) // 2] + "\n"  # a truncated JSON line
        lines[300] = lines[300].replace('"card":"', '"card":"1')
        lines[400] = re.sub(r'"round":(\d+)', r'"round":"\1x"', lines[400])
    data = "".join(lines).encode()
    if encoding.endswith(".gz"):
        data = gzip.compress(data)[:-2000]  # the stream ends early
    path.write_bytes(data)


@pytest.mark.parametrize("encoding", ["jsonl", "jsonl.gz", "csv", "csv.gz"])
@pytest.mark.parametrize("game", ["baccarat", "blackjack"])
def test_a_spilled_log_audits_as_one_read_whole(game, encoding, tmp_path, monkeypatch):
    module = baccarat if game == "baccarat" else blackjack
    sim = module.simulate(rounds=160, tables=3, seed=6, faults=0.1)
    log = write_events(sim.events, tmp_path / f"log.{encoding}", encoding)
    _damaged(log, encoding)
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml", **extra), rs,
                       date(2026, 11, 1))
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 20_000)  # many chunks, lines cut anywhere
    work = tmp_path / "work"
    work.mkdir()
    spilled = audit.run(expand([str(log)]), house, rs, workdir=work)
    assert list(work.iterdir()) == []  # the spill is removed at the end
    assert (whole.plan.text, spilled.plan.text) == ("read whole", "spilled")
    assert whole.findings.height > 0
    assert spilled.findings.equals(whole.findings)
    assert summary.accounting(spilled) == summary.accounting(whole)
    assert spilled.totals.tables.sort("table_id").equals(whole.totals.tables.sort("table_id"))
    inputs = whole.findings.filter(pl.col("rule_id").str.starts_with("IN0"))
    assert inputs.filter(pl.col("line").is_not_null()).height >= 3
    assert "IN009" in inputs["rule_id"].to_list()  # the round that did not parse


def _imported(path, encoding: str) -> None:
    """Every row names the export line it was imported from (hand-history-v1 1.2): line
    n of the file came from line n + 1000 of export.csv."""
    lines = path.read_text().splitlines()
    if encoding == "csv":
        lines = [lines[0] + ",source_file,source_line",
                 *(f"{line},export.csv,{n + 1000}" for n, line in enumerate(lines[1:], 2))]
    else:
        lines = [json.dumps({**json.loads(line), "source_file": "export.csv",
                             "source_line": n + 1000}) for n, line in enumerate(lines, 1)]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("encoding", ["jsonl", "csv"])
def test_a_spilled_imported_log_reports_findings_at_the_export(encoding, tmp_path,
                                                               monkeypatch):
    sim = baccarat.simulate(rounds=160, tables=3, seed=6, faults=0.1)
    log = write_events(sim.events, tmp_path / f"log.{encoding}", encoding)
    _imported(log, encoding)
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml"), rs,
                       date(2026, 11, 1))
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 20_000)  # many chunks, lines cut anywhere
    work = tmp_path / "work"
    work.mkdir()
    spilled = audit.run(expand([str(log)]), house, rs, workdir=work)
    assert spilled.plan.text == "spilled"
    placed = spilled.findings.filter(pl.col("line").is_not_null())
    assert placed.height > 5
    assert set(placed["file"]) == {"export.csv"} and placed["line"].min() > 1000
    assert spilled.findings.equals(whole.findings)


def test_a_parquet_file_too_large_to_hold_is_spilled_by_table(tmp_path, monkeypatch):
    sim = baccarat.simulate(rounds=200, tables=3, seed=3, faults=0.1)
    log = write_events(sim.events, tmp_path / "log.parquet", "parquet")
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml"), rs,
                       date(2026, 11, 1))
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(compact, "ROWS_AT_MOST", 100)  # too large to hold
    monkeypatch.setattr(spill, "SLICE_ROWS", 1_000)
    monkeypatch.setattr(audit, "PART_ROWS", 2_000)  # in parts, as a large file is
    seen = []
    real = spill.spill_parquet
    monkeypatch.setattr(spill, "spill_parquet", lambda *a: seen.append(a) or real(*a))
    parted = audit.run(expand([str(log)]), house, rs)
    assert seen and whole.findings.height > 0
    assert parted.findings.equals(whole.findings)
    assert summary.accounting(parted) == summary.accounting(whole)


def test_a_gzip_name_on_a_file_that_is_not_gzip_is_reported_alike_spilled(tmp_path,
                                                                          monkeypatch):
    """A file named .csv.gz that holds plain CSV: read whole or spilled, one finding that
    it cannot be read (IN001), not also a missing column for every column of the format."""
    sim = blackjack.simulate(rounds=20, tables=1, seed=2)
    log = write_events(sim.events, tmp_path / "plain.csv", "csv").rename(tmp_path / "log.csv.gz")
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml",
                                         blackjack=sim.house), rs, date(2026, 11, 1))
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    spilled = audit.run(expand([str(log)]), house, rs, workdir=tmp_path)
    assert whole.findings["rule_id"].to_list() == ["IN001"]
    assert spilled.findings.equals(whole.findings)
