"""The worker process that audits the parts of a large log."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE

from auditor import audit
from auditor.audit_context import GameContext
from auditor.audit_part import Setting, audit_part, prepare_part
from auditor.house import load as load_house
from auditor.ingest.partition import open_log
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import blackjack


def _die(_job: object) -> None:
    os._exit(9)  # as a worker killed for want of memory


def _echo(job: object) -> object:
    return job


def test_worker_that_dies_stops_the_audit_with_an_audit_error():
    worker = audit._Worker()
    try:
        with pytest.raises(audit.AuditError, match="worker process stopped"):
            list(worker.parts(None, [1, 2], task=_die))
    finally:
        worker.stop()


def test_worker_started_early_runs_the_parts_in_order():
    worker = audit._Worker()
    try:
        worker.start()
        worker.start()  # once only
        assert list(worker.parts(None, [3, 1, 2], task=_echo)) == [3, 1, 2]
    finally:
        worker.stop()


def test_part_read_ahead_is_given_to_its_own_part_only(monkeypatch):
    calls = []

    def ingest(setting, tables, first, row_offset, orphans):
        calls.append((setting, tuple(tables), first, row_offset))
        return f"rows of {tables}"

    monkeypatch.setattr(audit, "prepare_part", ingest)
    ahead = audit._Ahead()
    ahead.start("setting", (["T2"], False, 10, None))
    assert ahead.take(["T3"]) is None  # not what was read ahead: read it as usual
    assert ahead.take(["T2"]) is None  # taken once only (dropped by the miss above)
    ahead.start("setting", (["T2"], False, 10, None))
    assert ahead.take(["T2"]) == "rows of ['T2']"
    assert calls == [("setting", ("T2",), False, 10)] * 2


def test_part_read_ahead_raises_the_reading_error_when_taken(monkeypatch):
    def ingest(*_args):
        raise OSError("the file went away")

    monkeypatch.setattr(audit, "prepare_part", ingest)
    ahead = audit._Ahead()
    ahead.start("setting", (["T2"], False, 0, None))
    with pytest.raises(OSError, match="went away"):
        ahead.take(["T2"])


def test_each_job_names_the_part_after_it():
    parts = [["A"], ["B", "C"], ["D"]]
    jobs = audit._jobs(parts, [0, 5, 9])
    assert [j[:3] for j in jobs] == [(["A"], True, 0), (["B", "C"], False, 5), (["D"], False, 9)]
    assert [j[4] for j in jobs] == [(["B", "C"], False, 5, None), (["D"], False, 9, None), None]
    later = audit._jobs(parts, [0, 5, 9], orphans="orphans", start=1)
    assert [j[:4] for j in later] == [(["B", "C"], False, 5, "orphans"), (["D"], False, 9, "orphans")]
    assert later[0][4] == (["D"], False, 9, "orphans")


def test_a_shared_frame_is_built_once_when_rules_ask_at_once():
    """Rules of a part are checked two at a time: a frame they share is built by the
    first to ask, and the other waits for it."""
    ctx = GameContext("baccarat", pl.DataFrame(), None, {}, date(2026, 11, 1), pl.DataFrame())
    builds = []
    started = threading.Event()

    def build(_ctx):
        builds.append(1)
        started.set()
        time.sleep(0.2)  # long enough for the other rule to ask meanwhile
        return pl.DataFrame({"x": [len(builds)]})

    def rule(_n):
        return ctx.derived("rounds", build)

    with ThreadPoolExecutor(2) as pool:
        frames = list(pool.map(rule, range(2)))
    assert started.is_set()
    assert len(builds) == 1
    assert frames[0] is frames[1]


def test_a_part_prepared_ahead_is_audited_as_one_read_then(tmp_path):
    """The reading side builds blackjack's shared replay frames (BUILT_AHEAD); the part
    then audits exactly as one read and checked by audit_part itself."""
    path = tmp_path / "bj.parquet"
    blackjack.simulate(rounds=120, tables=2, seed=5, faults=0.1).events.write_parquet(path)
    rs = load_rulesets()
    log = open_log(expand([str(path)]))
    setting = Setting(log, load_house(DEFAULT_HOUSE, rs, date(2026, 11, 1)), rs, log.first_day)
    prepared = prepare_part(setting, None, True, 0, None)
    built = prepared.contexts["blackjack"]._derived
    assert {"blackjack.rounds", "blackjack.wagers", "blackjack.settlements",
            "blackjack.hand_facts"} <= set(built)
    assert prepared.contexts["baccarat"] is None  # no baccarat row
    ahead = audit_part(setting, None, True, 0, None, prepared=prepared)
    now = audit_part(setting, None, True, 0, None)
    assert ahead.found.height > 0
    assert ahead.found.equals(now.found)
    assert ahead.totals.tables.equals(now.totals.tables)
