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
