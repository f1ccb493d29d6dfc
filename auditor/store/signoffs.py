"""Sign-offs: a supervisor says a run's findings are reviewed (schema, version 4).

A sign-off is one row of `signoffs`: the run, who signed it off and when (UTC), the run's
findings by disposition at that moment (TALLIED, as JSON) and a note. A run is signed off
only while none of its findings is open or pending (`sign`: NotReady otherwise), and has
at most one sign-off that stands (a partial unique index; AlreadySigned).

A sign-off stands until a finding of the run changes: a disposition recorded on one of
its findings afterwards (reopening it, proposing, or deciding anew, on this run's page or
on another run that found the same finding) withdraws it (`withdraw_touching`): the row
gets when, by whom and why, and stays. The review application records both in its trail
and takes `lock` first, so that a sign-off and a change to one of the run's findings do
not cross (SQLite's write lock does that already; on PostgreSQL an advisory lock).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import PENDING, STATES, TALLIED, StoreError
from .dispositions import counts
from .schema import findings, runs, signoffs

CHUNK = 5_000  # finding ids per statement
# PostgreSQL advisory lock key of the review's writes (dispositions, sign-offs): "reviews"
REVIEW_LOCK = 0x72657669657773


class NotReady(StoreError):
    """A run with findings open or pending is not signed off."""

    def __init__(self, run_id: str, counted: dict[str, int]) -> None:
        self.counts = counted
        waiting = [f"{counted[s]:,} {s}" for s in (STATES[0], PENDING) if counted.get(s)]
        n = counted.get(STATES[0], 0) + counted.get(PENDING, 0)
        super().__init__(
            f"run {run_id} has {' and '.join(waiting)} finding{'' if n == 1 else 's'}: a "
            "run is signed off once none of its findings is open or pending")


class AlreadySigned(StoreError):
    """The run has a sign-off that stands."""


def lock(conn: Connection) -> None:
    """Serialize the review's writes, until the transaction ends (PostgreSQL; SQLite's
    transactions take the store's write lock at their BEGIN)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(REVIEW_LOCK)))


def _utc(at: datetime | None) -> datetime:
    if at is None:
        return datetime.now(UTC).replace(tzinfo=None)
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at


def _row(row: Any) -> dict[str, Any]:
    out = dict(row)
    out["counts"] = {**dict.fromkeys(TALLIED, 0), **json.loads(out["counts"] or "{}")}
    out["standing"] = out["withdrawn_at"] is None
    return out


def _utc_text(at: datetime | None) -> str | None:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ") if at else None


def as_json(signoff: dict[str, Any] | None) -> dict[str, Any] | None:
    """A sign-off as JSON has it (`auditor history`, dispositions.json): times in UTC with
    a Z; `standing` false once withdrawn."""
    if signoff is None:
        return None
    return {
        "by": signoff["signed_by"],
        "at": _utc_text(signoff["signed_at"]),
        "counts": signoff["counts"],
        "note": signoff["note"],
        "standing": signoff["withdrawn_at"] is None,
        "withdrawn_at": _utc_text(signoff["withdrawn_at"]),
        "withdrawn_by": signoff["withdrawn_by"],
        "withdrawn_why": signoff["withdrawn_why"],
    }


def of_run(conn: Connection, run_id: str) -> list[dict[str, Any]]:
    """Every sign-off of the run, oldest first (each with `counts` as a dict and
    `standing`: not withdrawn)."""
    query = (sa.select(signoffs).where(signoffs.c.run_id == run_id)
             .order_by(signoffs.c.signoff_id))
    return [_row(r) for r in conn.execute(query).mappings()]


def latest_by_run(conn: Connection, run_ids: Iterable[str] | sa.Select) -> dict[str, dict]:
    """Each run's latest sign-off (the one that stands, else the last withdrawn), for the
    runs that have one, in one query."""
    ids = run_ids if isinstance(run_ids, sa.Select) else list(run_ids)
    last = (
        sa.select(signoffs.c.run_id, sa.func.max(signoffs.c.signoff_id).label("last"))
        .where(signoffs.c.run_id.in_(ids))
        .group_by(signoffs.c.run_id)
        .subquery("last_signoff")
    )
    query = sa.select(signoffs).join(last, signoffs.c.signoff_id == last.c["last"])
    return {r["run_id"]: _row(r) for r in conn.execute(query).mappings()}


def standing(conn: Connection, run_id: str) -> dict[str, Any] | None:
    """The run's sign-off that stands, if any."""
    query = sa.select(signoffs).where(signoffs.c.run_id == run_id,
                                      signoffs.c.withdrawn_at.is_(None))
    row = conn.execute(query).mappings().first()
    return _row(row) if row else None


def sign(conn: Connection, run_id: str, by: str, note: str = "",
         at: datetime | None = None) -> dict[str, Any]:
    """Sign the run off as BY, with the counts of its findings by disposition now;
    returns the sign-off. NotReady while a finding of it is open or pending;
    AlreadySigned where a sign-off of it stands; StoreError for a run not in the store."""
    if conn.execute(sa.select(runs.c.run_id).where(runs.c.run_id == run_id)).first() is None:
        raise StoreError(f"there is no run {run_id!r} in the store")
    if standing(conn, run_id) is not None:
        raise AlreadySigned(f"run {run_id} is signed off already")
    counted = counts(conn, run_id)
    if counted.get(STATES[0]) or counted.get(PENDING):
        raise NotReady(run_id, counted)
    values = {"run_id": run_id, "signed_by": by, "signed_at": _utc(at),
              "counts": json.dumps(counted), "note": note or ""}
    values["signoff_id"] = conn.execute(
        signoffs.insert().values(**values)).inserted_primary_key[0]
    return {**values, "counts": counted, "withdrawn_at": None, "withdrawn_by": None,
            "withdrawn_why": None, "standing": True}


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield list(items[start : start + CHUNK])


def withdraw_touching(conn: Connection, finding_ids: Sequence[str], by: str, why: str,
                      at: datetime | None = None) -> list[dict[str, Any]]:
    """Withdraw every standing sign-off of a run that found one of FINDING_IDS (their
    dispositions have just changed): returns those sign-offs, each with `findings`, the
    ids of FINDING_IDS in its run (in their order). Nothing is read beyond the runs
    signed off, so that a store without a standing sign-off costs one small query."""
    live = {r["run_id"]: _row(r) for r in conn.execute(
        sa.select(signoffs).where(signoffs.c.withdrawn_at.is_(None))).mappings()}
    if not live or not finding_ids:
        return []
    touched: dict[str, set[str]] = {}
    for chunk in _chunks(list(dict.fromkeys(finding_ids))):
        query = sa.select(findings.c.run_id, findings.c.finding_id).where(
            findings.c.run_id.in_(list(live)), findings.c.finding_id.in_(chunk))
        for run_id, finding_id in conn.execute(query):
            touched.setdefault(run_id, set()).add(finding_id)
    when = _utc(at)
    out = []
    for run_id in sorted(touched):
        conn.execute(
            signoffs.update()
            .where(signoffs.c.signoff_id == live[run_id]["signoff_id"])
            .values(withdrawn_at=when, withdrawn_by=by, withdrawn_why=why)
        )
        ids = [i for i in dict.fromkeys(finding_ids) if i in touched[run_id]]
        out.append({**live[run_id], "withdrawn_at": when, "withdrawn_by": by,
                    "withdrawn_why": why, "standing": False, "findings": ids})
    return out
