"""One audit run written to the store: its run, inputs, tables and findings, in one
transaction, so that a run is in the store whole or not at all.

Every number is taken from the files the audit wrote (summary.json and the findings), so
what the store holds is what the run's folder holds; `out_dir` and `report_id` lead from
a run back to that folder and its report.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
from sqlalchemy.engine import Connection

from . import StoreError
from .engine import Store
from .schema import FINDING_COLUMNS, findings, inputs, migrate, run_dealers, run_tables, runs

# findings inserted this many at a time (one statement each, all in the one transaction)
BATCH = 5_000


@dataclass
class Run:
    run_id: str
    started_at: datetime  # UTC, without tzinfo (as stored)
    summary: dict
    findings: pl.DataFrame  # the findings files' columns, with finding_id and file_sha256
    out: Path


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def new_run_id(started_at: datetime) -> str:
    """When the run started (UTC) and 48 random bits: readable, in the order runs started,
    and never the same for two audits started in the same second."""
    return f"{started_at:%Y%m%dT%H%M%SZ}-{secrets.token_hex(6)}"


def local_time(iso: str | None) -> datetime | None:
    """A time of the log as written (its wall clock): an offset, where one is written, is
    not applied (docs/reference/input-format.md)."""
    return datetime.fromisoformat(iso).replace(tzinfo=None) if iso else None


def run_row(run: Run, finished_at: datetime) -> dict[str, Any]:
    from ..report.model import report_id

    s = run.summary
    window = s.get("window") or {}
    by_severity = s["findings"]["by_severity"]
    return {
        "run_id": run.run_id,
        "started_at": run.started_at,
        "finished_at": finished_at,
        "auditor_version": s["auditor_version"],
        "facility": s.get("facility"),
        "house_rules_path": s["house_rules"]["path"],
        "house_rules_sha256": s["house_rules"]["sha256"],
        "gaming_day": date.fromisoformat(window["gaming_day"])
        if window.get("gaming_day")
        else None,
        "window_from": local_time(window.get("from")),
        "window_until": local_time(window.get("until")),
        "period_start": local_time(s["period"]["start"]),
        "period_end": local_time(s["period"]["end"]),
        "inputs": len(s["inputs"]),
        "context_inputs": len(s.get("context", [])),
        "tables": len(s["tables"]),
        **{f"rows_{k}": s["rows"][k] for k in ("read", "audited", "reported")},
        **{f"rounds_{k}": s["rounds"][k] for k in ("read", "audited", "reported")},
        "findings": s["findings"]["total"],
        "errors": by_severity.get("error", 0),
        "warnings": by_severity.get("warning", 0),
        **{k: float(s["money"][k]) for k in ("underpaid", "overcharged", "overpaid")},
        "out_dir": str(run.out.resolve()),
        "report_id": report_id(s),
    }


def input_rows(run: Run) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run.run_id,
            "role": role,
            "position": n,
            "file": f["path"],
            "encoding": f.get("encoding"),
            "sha256": f["sha256"],
            "rows": f["rows"],
            "bytes": f.get("bytes"),
        }
        for role, files in (
            ("audited", run.summary["inputs"]),
            ("context", run.summary.get("context", [])),
        )
        for n, f in enumerate(files)
    ]


def table_rows(run: Run) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run.run_id,
            "table_id": t["table_id"],
            "game": t.get("game"),
            "pit": t.get("pit"),
            "rows_read": t["rows_read"],
            "rows_audited": t["rows_audited"],
            "rounds_read": t["rounds_read"],
            "rounds_audited": t["rounds_audited"],
            "first_event": local_time(t.get("first_event")),
            "last_event": local_time(t.get("last_event")),
            "findings": t["findings"],
            "errors": t["errors"],
        }
        for t in run.summary["tables"]
        if t["table_id"] is not None
    ]


def dealer_rows(run: Run) -> list[dict[str, Any]]:
    """The dealers the logs name (the rounds that name none are in the run's counts)."""
    return [
        {
            "run_id": run.run_id,
            "dealer_id": d["dealer_id"],
            "tables": ",".join(d.get("tables") or []),
            "rounds_dealt": d.get("rounds_dealt") or 0,
            "findings": d.get("findings") or 0,
            "errors": (d.get("by_severity") or {}).get("error", 0),
        }
        for d in run.summary.get("dealers", [])
        if d.get("dealer_id") is not None
    ]


def finding_rows(run: Run) -> Iterator[list[dict[str, Any]]]:
    """The findings in batches, every column as written; a column the store has no place
    for stops the write rather than being dropped."""
    frame = run.findings
    unknown = set(frame.columns) - {"finding_id", "file_sha256", *FINDING_COLUMNS}
    if unknown:
        raise StoreError(
            f"the findings have column(s) {', '.join(sorted(unknown))} that "
            "this store's schema does not hold"
        )
    missing = [pl.lit(None).alias(c) for c in FINDING_COLUMNS if c not in frame.columns]
    frame = frame.with_columns(missing).select("finding_id", "file_sha256", *FINDING_COLUMNS)
    for batch in frame.iter_slices(BATCH):
        yield [{"run_id": run.run_id, **row} for row in batch.iter_rows(named=True)]


def write(store: Store, run: Run, before_commit: Callable[[], None] = lambda: None,
          also: Callable[[Connection], None] = lambda conn: None) -> None:
    """The run, whole, in one transaction: nothing of it lands if any part fails;
    `before_commit` runs last within it (a failure there lands nothing either). Its
    `finished_at` is set last, just before the commit: a run that began after that time
    finds this one stored (history.previous_run compares with it), and a run that began
    while the findings were still being written does not take it for one before it."""
    with store.begin() as conn:
        migrate(conn)
        conn.execute(runs.insert(), [run_row(run, utc_now())])
        for table, rows in (
            (inputs, input_rows(run)),
            (run_tables, table_rows(run)),
            (run_dealers, dealer_rows(run)),
        ):
            if rows:
                conn.execute(table.insert(), rows)
        for batch in finding_rows(run):
            conn.execute(findings.insert(), batch)
        also(conn)  # what else the run keeps (its shoes' prints)
        before_commit()
        landed = runs.update().where(runs.c.run_id == run.run_id)
        conn.execute(landed.values(finished_at=utc_now()))
