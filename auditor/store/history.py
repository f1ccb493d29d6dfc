"""Reading the store back: runs over time, what each found new since the run before it,
how its findings stand with reviewers (their latest dispositions), and the rules that
recur per table, dealer or rule.

The run before a run is the last run of the same facility that audited at least one of
its tables to finish (be stored: `finished_at`) before the run began (`started_at`):
last night's run for a nightly job, the earlier audit of the same logs for a re-audit.
It is read from the two runs' own times only, not from when anyone asks: a run that
began before another had finished is not compared with it, however the two ended, so
`auditor audit --store` (which asks before its own run is stored) and `auditor history`
(which asks afterwards) name the same run, and the report and the history agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import TALLIED, signoffs
from .compare import LISTED, Facts, compare, run_facts, utc_text
from .dispositions import counts_by_run
from .schema import findings, inputs, run_dealers, run_tables, runs

BY = ("table", "dealer", "rule")


def tables_of(conn: Connection, run_id: str) -> list[str]:
    query = sa.select(run_tables.c.table_id).where(run_tables.c.run_id == run_id)
    return list(conn.execute(query).scalars())


def previous_run(
    conn: Connection,
    facility: str | None,
    tables: Iterable[str],
    began: datetime,
) -> dict[str, Any] | None:
    """The run before a run that began at `began` (UTC, as stored): the last run of
    `facility` that audited one of `tables` to finish before then (the latest
    `finished_at` below `began`; of two that finished at once, the higher run id)."""
    tables = sorted(set(tables))
    if not tables:
        return None
    audited = sa.select(run_tables.c.run_id).where(run_tables.c.table_id.in_(tables))
    query = sa.select(runs).where(
        runs.c.facility.is_not_distinct_from(facility),
        runs.c.run_id.in_(audited),
        runs.c.finished_at < began,
    )
    query = query.order_by(runs.c.finished_at.desc(), runs.c.run_id.desc()).limit(1)
    row = conn.execute(query).mappings().first()
    return dict(row) if row else None


def facts_of(conn: Connection, run: dict[str, Any]) -> Facts:
    """A stored run, as a comparison needs it."""
    run_id = run["run_id"]
    columns = [findings.c[c] for c in (*LISTED, "file_sha256")]
    found = conn.execute(
        sa.select(*columns)
        .where(findings.c.run_id == run_id)
        .order_by(
            findings.c.table_id,
            findings.c.shoe_id,
            findings.c.round,
            findings.c.seq,
            findings.c.rule_id,
            findings.c.finding_id,
        )
    ).mappings()
    spans = conn.execute(
        sa.select(run_tables.c.table_id, run_tables.c.first_event, run_tables.c.last_event).where(
            run_tables.c.run_id == run_id
        )
    )
    files = conn.execute(
        sa.select(inputs.c.sha256).where(inputs.c.run_id == run_id, inputs.c.role == "audited")
    ).scalars()
    return Facts(run, [dict(f) for f in found], {t: (a, b) for t, a, b in spans}, set(files))


def _started_since(query: sa.Select, since: datetime | None) -> sa.Select:
    return query.where(runs.c.started_at >= since) if since is not None else query


def runs_since(conn: Connection, since: datetime | None) -> list[dict[str, Any]]:
    """The runs started at or after `since` (UTC), in the order they were stored."""
    query = _started_since(sa.select(runs), since).order_by(runs.c.finished_at, runs.c.run_id)
    return [dict(r) for r in conn.execute(query).mappings()]


def changes(conn: Connection, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run with its comparison against the run before it (previous_run: the last to
    finish before it began, which may be older than `since`)."""
    facts: dict[str, Facts] = {}

    def of(run: dict[str, Any]) -> Facts:
        if run["run_id"] not in facts:
            facts[run["run_id"]] = facts_of(conn, run)
        return facts[run["run_id"]]

    out = []
    for run in listed:
        before = previous_run(
            conn, run["facility"], tables_of(conn, run["run_id"]), run["started_at"]
        )
        out.append({"run": run, "comparison": compare(of(run), of(before) if before else None)})
    return out


def runs_report(conn: Connection, since: datetime | None) -> dict[str, Any]:
    """`auditor history`: the runs, what each found new, how its findings stand now (by
    their latest disposition; "pending" a proposal not yet approved), each run's latest
    sign-off, and the latest run's new findings."""
    compared = changes(conn, runs_since(conn, since))
    # every run's findings by disposition in one query (a run with none: all zero)
    in_range = _started_since(sa.select(runs.c.run_id), since)
    disposed = counts_by_run(conn, in_range)
    signed = signoffs.latest_by_run(conn, in_range)
    rows = []
    for item in compared:
        run, comparison = item["run"], item["comparison"]
        rows.append(
            {
                **run_facts(run),
                "facility": run["facility"],
                "tables": run["tables"],
                "rounds_audited": run["rounds_audited"],
                "errors": run["errors"],
                "warnings": run["warnings"],
                "inputs": [
                    {"file": f, "sha256": s, "role": r}
                    for f, s, r in conn.execute(
                        sa.select(inputs.c.file, inputs.c.sha256, inputs.c.role)
                        .where(inputs.c.run_id == run["run_id"])
                        .order_by(inputs.c.role, inputs.c.position)
                    )
                ],
                "previous_run_id": (comparison["previous_run"] or {}).get("run_id"),
                **{k: v for k, v in comparison["counts"].items() if k != "findings"},
                "dispositions": disposed.get(run["run_id"], dict.fromkeys(TALLIED, 0)),
                "signoff": signoffs.as_json(signed.get(run["run_id"])),
            }
        )
    latest = compared[-1]["comparison"] if compared else None
    return {"runs": rows, "latest_new": latest["new"] if latest else []}


def _key_columns(by: str) -> list[sa.ColumnElement]:
    return {
        "table": [findings.c.table_id, findings.c.rule_id],
        "dealer": [findings.c.dealer_id, findings.c.rule_id],
        "rule": [findings.c.rule_id],
    }[by]


def _runs_present(conn: Connection, by: str, in_range: sa.Select) -> dict[str, int]:
    """Per table (or dealer): how many of the runs audited it (or name the dealer)."""
    if by not in ("table", "dealer"):
        return {}
    table, column = (run_tables, "table_id") if by == "table" else (run_dealers, "dealer_id")
    query = (
        sa.select(table.c[column], sa.func.count(sa.distinct(table.c.run_id)))
        .where(table.c.run_id.in_(in_range))
        .group_by(table.c[column])
    )
    return dict(conn.execute(query).all())


def recurring(conn: Connection, by: str, since: datetime | None) -> dict[str, Any]:
    """Per rule (and table or dealer): in how many runs it found something, how many
    findings (each once, however many runs found it again), and when last; per table
    also of how many runs audited the table."""
    in_range = sa.select(runs.c.run_id)
    if since is not None:
        in_range = in_range.where(runs.c.started_at >= since)
    keys = _key_columns(by)
    query = (
        sa.select(
            *keys,
            sa.func.count(sa.distinct(findings.c.run_id)).label("runs"),
            # a finding found again by a later run (the same finding_id) counts once
            sa.func.count(sa.distinct(findings.c.finding_id)).label("findings"),
            sa.func.max(runs.c.finished_at).label("last_found"),
        )
        .join(runs, runs.c.run_id == findings.c.run_id)
        .where(findings.c.run_id.in_(in_range))
        .group_by(*keys)
    )
    if by == "dealer":
        query = query.where(findings.c.dealer_id.is_not(None))
    rows = [dict(r) for r in conn.execute(query).mappings()]
    total = conn.execute(sa.select(sa.func.count()).select_from(in_range.subquery())).scalar()
    present = _runs_present(conn, by, in_range)
    for row in rows:
        row["last_found"] = utc_text(row["last_found"])
        # of the runs that audited the table, or whose logs name the dealer; a finding on
        # no table (about a file) counts against every run
        where = row.get(f"{by}_id")
        row["of_runs"] = present.get(where) or total if where is not None else total
    # per table or dealer, the rules found in the most runs first
    rows.sort(
        key=lambda r: (
            *((r[k.name] is None, r[k.name] or "") for k in keys[:-1]),
            -r["runs"],
            -r["findings"],
            r["rule_id"],
        )
    )
    return {"by": by, "runs_in_range": total, "recurring": rows}
