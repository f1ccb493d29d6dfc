"""The worker process that audits the parts of a large log."""

from __future__ import annotations

import os

import pytest

from auditor import audit


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


def test_read_ahead_gives_the_rows_of_the_tables_it_read(monkeypatch):
    calls = []

    def read(log, tables, first):
        calls.append((log, tuple(tables), first))
        return f"rows of {tables}"

    monkeypatch.setattr(audit, "read_part", read)
    ahead = audit._ReadAhead()
    ahead.start("log", ["T2"])
    assert ahead.take(["T3"]) is None  # not what was read ahead: read it as usual
    assert ahead.take(["T2"]) is None  # taken once only (dropped by the miss above)
    ahead.start("log", ["T2"])
    assert ahead.take(["T2"]) == "rows of ['T2']"
    assert calls == [("log", ("T2",), False)] * 2


def test_read_ahead_raises_the_reading_error_when_taken(monkeypatch):
    def read(log, tables, first):
        raise OSError("the file went away")

    monkeypatch.setattr(audit, "read_part", read)
    ahead = audit._ReadAhead()
    ahead.start("log", ["T2"])
    with pytest.raises(OSError, match="went away"):
        ahead.take(["T2"])
