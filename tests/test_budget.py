"""The memory budget (auditor.budget): any set of files is audited in parts planned
within it, text spilled where the log as a whole is large, parts sized for the workers
that take them, and a log that cannot fit refused before it is audited; whatever the
plan, the findings are those of the unbounded audit."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from summaries import audited

from auditor import audit, budget
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest import spill, text
from auditor.ingest.partition import open_log
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules

RUN_AT = datetime(2026, 11, 2, tzinfo=UTC)
ENCODINGS = ["jsonl", "csv", "jsonl.gz", "csv.gz", "parquet"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A faulty day of both games as a folder of small exports: a file per table, in
    every encoding, and a hive dataset of one more baccarat table."""
    root = tmp_path_factory.mktemp("exports")
    bac = baccarat.simulate(rounds=150, tables=5, seed=21, faults=0.1)
    bj = blackjack.simulate(rounds=120, tables=3, seed=21, faults=0.1)
    tables = [(events, table) for events in (bac.events, bj.events)
              for table in events["table_id"].unique().sort().to_list()]
    for n, (events, table) in enumerate(tables):
        rows = events.filter(pl.col("table_id") == table)
        if n == len(tables) - 1:
            target = root / "logs" / "dataset" / f"table_id={table}" / "part-0.parquet"
            write_events(rows, target, "parquet")
        else:
            encoding = ENCODINGS[n % len(ENCODINGS)]
            write_events(rows, root / "logs" / f"{table}.{encoding}", encoding)
    rs = load_rulesets()
    house = load_house(write_house_rules([*bac.tables, *bj.tables], root / "house.toml",
                                         blackjack=bj.house), rs, date(2026, 11, 1))
    sources = expand([str(root / "logs")])
    return root, sources, house, rs, audit.run(sources, house, rs)


def _tiny_model(monkeypatch) -> None:
    """The model's per-process bytes out of the way, so that a budget of a few MB plans a
    small log as a large one is planned within a few GB."""
    monkeypatch.setattr(budget, "PROCESS_BYTES", 0)
    monkeypatch.setattr(budget, "SMALLEST_CHUNK_BYTES", 4_096)


def test_many_small_files_in_a_low_budget_give_the_unbounded_audit(folder, monkeypatch):
    root, sources, house, rs, whole = folder
    assert whole.plan.parts == 1 and whole.plan.where == "here"
    assert whole.plan.text == "read whole"
    _tiny_model(monkeypatch)
    largest = int(open_log(sources).table_rows["rows"].max())
    memory = 2 * budget.PART_ROW_BYTES * (largest + 200)  # a table or so a part
    bounded = audit.run(sources, house, rs, memory=memory)
    assert bounded.plan.text == "spilled"  # the text held would not fit: every file spilled
    assert bounded.plan.parts >= 5
    assert bounded.plan.part_rows <= largest + 200
    assert whole.findings.height > 0
    assert bounded.findings.equals(whole.findings)
    assert audited(bounded, RUN_AT) == audited(whole, RUN_AT)


def test_the_spill_is_read_in_chunks_the_budget_can_hold(folder, monkeypatch, tmp_path):
    _, sources, house, rs, whole = folder
    _tiny_model(monkeypatch)
    seen = []
    real = spill.spill
    monkeypatch.setattr(spill, "spill", lambda *a: seen.append(a[6]) or real(*a))
    largest = int(open_log(sources).table_rows["rows"].max())
    memory = 2 * budget.PART_ROW_BYTES * (largest + 200)  # chunks of tens of kB
    result = audit.run(sources, house, rs, memory=memory, workdir=tmp_path)
    assert seen and set(seen) == {memory // (2 * budget.SPILL_FACTOR)}
    assert result.findings.equals(whole.findings)


def test_a_table_too_large_for_the_budget_is_refused_before_it_is_audited(folder,
                                                                         monkeypatch):
    _, sources, house, rs, _ = folder
    _tiny_model(monkeypatch)
    counts = open_log(sources).table_rows.drop_nulls().sort("rows", descending=True)
    table, rows = counts.row(0)
    audited_parts = []
    monkeypatch.setattr(audit, "audit_part", lambda *a, **k: audited_parts.append(a))
    with pytest.raises(audit.AuditError) as refused:
        audit.run(sources, house, rs, memory=2 * budget.PART_ROW_BYTES * (rows - 1))
    message = str(refused.value)
    assert f"table {table} has {rows:,} rows" in message
    assert "set --memory" in message and "nothing was audited" in message
    assert not audited_parts


def test_a_table_too_large_is_refused_once_counted_before_the_rest_is_read(monkeypatch,
                                                                            tmp_path):
    """The refusal comes from the rows counted so far: the files after the one that
    shows the table too large are never read (it used to come after the whole log was
    read and spilled)."""
    _tiny_model(monkeypatch)
    clean = Path(__file__).resolve().parents[1] / "sample_logs" / "clean" / "baccarat.jsonl"
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):  # the same tables in each
        (tmp_path / name).write_bytes(clean.read_bytes())
    sources = expand([str(tmp_path)])
    rows = int(open_log(sources[:1]).table_rows.drop_nulls()["rows"].max())
    read = []
    real = text.pieces
    monkeypatch.setattr(text, "pieces", lambda s, *a, **k: read.append(s.path.name)
                        or real(s, *a, **k))
    rs = load_rulesets()
    house = load_house(Path(__file__).resolve().parents[1] / "sample_logs" / "house.toml", rs,
                       date(2026, 11, 1))
    with pytest.raises(audit.AuditError) as refused:
        audit.run(sources, house, rs, memory=2 * budget.PART_ROW_BYTES * (rows + 1))
    assert "rows or more (the log was read no further" in str(refused.value)
    assert read == ["a.jsonl", "b.jsonl"]  # past the room once b's rows are counted


def test_a_budget_below_any_audit_is_exit_2_saying_what_to_set(folder, tmp_path):
    root, *_ = folder
    result = CliRunner().invoke(main, ["audit", str(root / "logs"), "--house",
                                       str(root / "house.toml"), "--out", str(tmp_path / "o"),
                                       "--memory", "0.1"])
    assert result.exit_code == 2
    assert "memory budget (0.1 GB) is below" in result.output
    assert "set --memory" in result.output
    assert not (tmp_path / "o" / "findings.csv").exists()


def test_the_plan_is_in_summary_json_and_on_the_console(folder, tmp_path):
    root, *_ = folder
    out = tmp_path / "o"
    result = CliRunner().invoke(main, ["audit", str(root / "logs"), "--house",
                                       str(root / "house.toml"), "--out", str(out),
                                       "--no-report", "--memory", "6"])
    assert result.exit_code == 1, result.output
    execution = json.loads((out / "summary.json").read_text())["execution"]
    assert execution == {"memory_budget_gb": 6.0, "parts": 1, "where": "here", "workers": 1,
                         "text_files": "read whole", "part_rows_at_most": 3_000_000}
    assert "audited in one part of whole tables in this process, within a memory budget " \
        "of 6.0 GB" in result.output


def test_parts_are_at_least_as_many_as_the_workers_to_take_them(folder):
    _, sources, *_ = folder
    log = open_log(sources)
    tables = log.table_rows.drop_nulls()["table_id"].to_list()
    assert audit._parts(log) == [None]
    for slots in (2, 3, len(tables), len(tables) + 5):
        parts = audit._parts(log, slots=slots)
        assert len(parts) == min(slots, len(tables))
        assert sorted(t for part in parts for t in part) == sorted(tables)


def test_parts_are_about_equal_and_within_their_rows(folder):
    _, sources, *_ = folder
    log = open_log(sources)
    rows = dict(log.table_rows.drop_nulls().iter_rows())
    cap = 2 * max(rows.values())
    parts = audit._parts(log, part_rows=cap)
    sizes = [sum(rows[t] for t in part) for part in parts]
    assert len(parts) > 1 and max(sizes) <= cap
    assert len(parts) == -(-sum(rows.values()) // cap)


@pytest.fixture(scope="module")
def seven_tables(tmp_path_factory):
    """About 125,000 rows over seven baccarat tables in one JSON Lines file: far under
    PART_ROWS, one part where it is audited alone."""
    root = tmp_path_factory.mktemp("seven")
    sim = baccarat.simulate(rounds=6_600, tables=7, seed=8, faults=0.02)
    log = write_events(sim.events, root / "day.jsonl", "jsonl")
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, root / "house.toml"), rs,
                       date(2026, 11, 1))
    sources = expand([str(log)])
    return sim.events.height, sources, house, rs, audit.run(sources, house, rs)


def test_a_small_log_on_a_cluster_reaches_more_than_one_worker(seven_tables, cluster):
    """A log of several tables under PART_ROWS is cut into a part per worker, each run by
    the scheduler as a task on a worker of its own, and the findings are the local
    audit's."""
    from distributed import get_task_stream

    rows, sources, house, rs, whole = seven_tables
    assert 110_000 < rows < 140_000 and whole.plan.parts == 1
    local, client = cluster
    with get_task_stream(client) as stream:
        result = audit.run(sources, house, rs, cluster=local.scheduler_address)
    parts = [task for task in stream.data if "run_part" in task["key"]]
    assert len(parts) == result.plan.parts == 2
    assert len({task["worker"] for task in parts}) == 2
    assert result.plan.where == "cluster" and result.plan.workers == 2
    assert whole.findings.height > 0
    assert result.findings.equals(whole.findings)
    assert audited(result, RUN_AT) == audited(whole, RUN_AT)


def test_one_table_on_a_cluster_is_still_run_there(folder, cluster):
    """The cluster is used for any log: one table is one task, not an audit here."""
    from distributed import get_task_stream

    root, _, house, rs, _ = folder
    one = expand([str(root / "logs" / "dataset")])
    local, client = cluster
    here = audit.run(one, house, rs)
    with get_task_stream(client) as stream:
        there = audit.run(one, house, rs, cluster=local.scheduler_address)
    assert len([t for t in stream.data if "run_part" in t["key"]]) == 1
    assert (here.plan.where, there.plan.where) == ("here", "cluster")
    assert there.findings.equals(here.findings)
