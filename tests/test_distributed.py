"""Parts audited side by side, on local processes (--workers) or on a Dask cluster
(--cluster): the findings and the summary are the single process's, whatever runs the
parts, and a worker lost in mid-part changes nothing."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from datetime import UTC, date, datetime

import polars as pl
import pytest
from summaries import audited

from auditor import audit
from auditor.house import load as load_house
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules

RUN_AT = datetime(2026, 11, 2, tzinfo=UTC)


@pytest.fixture(scope="module")
def floor(tmp_path_factory):
    """A faulty day of both games: baccarat in one Parquet file, blackjack's tables split
    over two JSON Lines files, and a file with damaged rows."""
    root = tmp_path_factory.mktemp("floor")
    bac = baccarat.simulate(rounds=240, tables=4, seed=12, faults=0.1)
    bj = blackjack.simulate(rounds=160, tables=2, seed=12, faults=0.1)
    write_events(bac.events, root / "logs" / "baccarat.parquet", "parquet")
    halves = bj.events.with_row_index("n").with_columns((pl.col("n") % 2).alias("half"))
    for half, rows in halves.partition_by("half", as_dict=True).items():
        write_events(rows.drop("n", "half"), root / "logs" / f"blackjack-{half[0]}.jsonl",
                     "jsonl")
    lines = (root / "logs" / "blackjack-0.jsonl").read_text().splitlines()[:60]
    damaged = [ln.replace('"amount":', '"amount":-') for ln in lines[20:40]]
    (root / "logs" / "damaged.jsonl").write_text("\n".join(damaged) + "\n{\"table_id\"")
    rs = load_rulesets()
    house = load_house(write_house_rules([*bac.tables, *bj.tables], root / "house.toml",
                                         blackjack=bj.house), rs, date(2026, 11, 1))
    sources = expand([str(root / "logs")])
    return sources, house, rs, audit.run(sources, house, rs)


def _same(result, whole) -> None:
    assert whole.findings.height > 0
    assert result.findings.equals(whole.findings)
    assert audited(result, RUN_AT) == audited(whole, RUN_AT)


def test_parts_on_two_local_processes_give_the_single_process_audit(floor, monkeypatch):
    sources, house, rs, whole = floor
    monkeypatch.setattr(audit, "PART_ROWS", 3_000)  # a table or two a part
    _same(audit.run(sources, house, rs, workers=2), whole)


def test_a_local_worker_killed_in_mid_audit_changes_nothing(floor, monkeypatch):
    """A worker process is killed while the parts are audited: the pool breaks, its
    parts run again on a new one, and the findings are the same."""
    sources, house, rs, whole = floor
    monkeypatch.setattr(audit, "PART_ROWS", 3_000)
    renewed = []
    renew = audit._Pool._renew

    def counted(pool) -> None:
        renewed.append(True)
        renew(pool)

    monkeypatch.setattr(audit._Pool, "_renew", counted)
    killed = []

    def kill_a_worker() -> None:
        while not killed:
            children = multiprocessing.active_children()
            if children:
                time.sleep(0.5)  # started, and taking its parts
                os.kill(children[0].pid, signal.SIGKILL)
                killed.append(children[0].pid)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    result = audit.run(sources, house, rs, workers=2)
    killer.join(timeout=5)
    assert killed and renewed
    _same(result, whole)


def test_parts_on_a_dask_cluster_give_the_single_process_audit(floor, cluster, monkeypatch):
    sources, house, rs, whole = floor
    monkeypatch.setattr(audit, "PART_ROWS", 3_000)
    local, _ = cluster
    _same(audit.run(sources, house, rs, cluster=local.scheduler_address), whole)


def test_a_dask_worker_killed_in_mid_audit_changes_nothing(floor, cluster, monkeypatch):
    """A worker's process is killed while the parts run: the scheduler runs its parts
    again on the other (or on the worker its nanny starts anew)."""
    sources, house, rs, whole = floor
    monkeypatch.setattr(audit, "PART_ROWS", 3_000)
    local, client = cluster
    killed = []

    def kill_a_worker() -> None:
        while not killed:
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy:
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    result = audit.run(sources, house, rs, cluster=local.scheduler_address)
    killer.join(timeout=10)
    assert killed
    _same(result, whole)


def test_an_unreachable_cluster_is_a_clear_error(floor):
    sources, house, rs, _ = floor
    with pytest.raises(audit.AuditError, match="cannot reach the Dask scheduler"):
        audit.run(sources, house, rs, cluster="tcp://127.0.0.1:9")
