"""Logs and the work folder at fsspec URLs: an S3 bucket served by moto's S3 server (a
real HTTP endpoint, which s3fs and polars reach as they would AWS). The findings are
those of the same files on the local disk, audited in one process or on two, with
the parts spilled to the bucket; the bucket's work folder is empty afterwards."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor import audit
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest.sources import SourceError, expand
from auditor.ingest.storage import location
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules

BUCKET = "floor"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """An S3 endpoint for the module: the environment names it, as a deployment would
    (spawned workers inherit it)."""
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    server = moto_server.ThreadedMotoServer(port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = dict(os.environ)
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                      AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://{host}:{port}",
                      AWS_ALLOW_HTTP="true")
    fs = s3fs.S3FileSystem()
    fs.mkdir(BUCKET)
    try:
        yield fs
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()


@pytest.fixture(scope="module")
def floor(tmp_path_factory, s3):
    """A faulty day of both games on the local disk and the same files in the bucket:
    baccarat as a hive dataset by table, blackjack as JSON Lines and gzip CSV, and a
    file with damaged rows."""
    root = tmp_path_factory.mktemp("floor")
    logs = root / "logs"
    bac = baccarat.simulate(rounds=200, tables=3, seed=4, faults=0.1)
    bj = blackjack.simulate(rounds=120, tables=2, seed=4, faults=0.1)
    for (table,), rows in bac.events.partition_by("table_id", as_dict=True).items():
        write_events(rows, logs / "baccarat" / f"table_id={table}" / "part-0.parquet",
                     "parquet")
    first = bj.events.filter(pl.col("table_id") == bj.events["table_id"].min())
    write_events(first, logs / "blackjack-1.jsonl", "jsonl")
    write_events(bj.events.join(first, on=list(first.columns), how="anti"),
                 logs / "blackjack-2.csv.gz", "csv.gz")
    lines = (logs / "blackjack-1.jsonl").read_text().splitlines()[:40]
    (logs / "damaged.jsonl").write_text(
        "\n".join(ln.replace('"amount":', '"amount":-') for ln in lines) + '\n{"table_id"')
    s3.put(str(logs), f"{BUCKET}/logs", recursive=True)
    rs = load_rulesets()
    house_path = write_house_rules([*bac.tables, *bj.tables], root / "house.toml",
                                   blackjack=bj.house)
    house = load_house(house_path, rs, date(2026, 11, 1))
    return root, house_path, house, rs


def _as_local(findings: pl.DataFrame) -> pl.DataFrame:
    """The findings with each file named by its path below the logs folder."""
    return findings.with_columns(
        pl.col("file").str.replace(r"^.*?/logs/", "logs/").alias("file"))


def test_logs_in_a_bucket_give_the_findings_of_the_same_files_on_disk(floor):
    root, _, house, rs = floor
    local = audit.run(expand([str(root / "logs")]), house, rs)
    remote = audit.run(expand([f"s3://{BUCKET}/logs"]), house, rs)
    assert local.findings.height > 0
    assert _as_local(remote.findings).equals(_as_local(local.findings))
    assert remote.findings["file"].drop_nulls().str.starts_with(f"s3://{BUCKET}/logs/").all()


def test_a_glob_in_a_bucket_names_its_matches(floor):
    names = [Path(str(s.path)).name for s in expand([f"s3://{BUCKET}/logs/blackjack-*"])]
    assert names == ["blackjack-1.jsonl", "blackjack-2.csv.gz"]


def test_parts_on_two_processes_spill_to_a_work_folder_in_the_bucket(floor, s3, monkeypatch):
    """Every text file is spilled (parts side by side) into s3://floor/work: the workers
    read their tables from there, and the audit's folder is removed at the end."""
    root, _, house, rs = floor
    monkeypatch.setattr(audit, "PART_ROWS", 3_000)
    local = audit.run(expand([str(root / "logs")]), house, rs)
    work = location(f"s3://{BUCKET}/work")
    remote = audit.run(expand([f"s3://{BUCKET}/logs"]), house, rs, workers=2, workdir=work)
    assert _as_local(remote.findings).equals(_as_local(local.findings))
    s3.invalidate_cache()
    assert not s3.exists(f"{BUCKET}/work") or s3.find(f"{BUCKET}/work") == []


def test_the_command_line_audits_a_bucket(floor, tmp_path):
    root, house_path, _, _ = floor
    result = CliRunner().invoke(main, [
        "audit", f"s3://{BUCKET}/logs", "--house", str(house_path), "--out",
        str(tmp_path / "out"), "--no-report", "-q", "--workdir", f"s3://{BUCKET}/work"])
    assert result.exit_code == 1, result.output  # the faulty day has errors
    findings = pl.read_csv(tmp_path / "out" / "findings.csv")
    assert findings["file"].drop_nulls().str.starts_with(f"s3://{BUCKET}/").any()


def test_a_missing_bucket_or_filesystem_is_a_clear_error(floor, tmp_path):
    root, house_path, _, _ = floor
    with pytest.raises(SourceError, match="no such file or folder"):
        expand([f"s3://{BUCKET}/nothing-here/"])
    result = CliRunner().invoke(main, [
        "audit", "nosuchscheme://x/logs", "--house", str(house_path), "--out",
        str(tmp_path / "out"), "--no-report", "-q"])
    assert result.exit_code == 2
    assert "nosuchscheme://" in result.output and "Traceback" not in result.output
