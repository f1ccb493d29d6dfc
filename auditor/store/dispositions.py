"""Dispositions: what reviewers decided each finding is, kept whole and carried across runs.

A disposition is one row of `dispositions` (schema, version 2): a finding_id, its state
(STATES, each explained in MEANINGS), the reviewer's note, who decided and when (UTC).
Rows are only ever appended: a change of mind is a new row, so a finding's history reads
back whole (`history`), and its latest row (the highest disposition_id) is what it is now
(`latest`). Rows name the finding, not the run: finding_id is the same for the same finding
in every run (ids), so a finding found again by a later run keeps its last disposition,
and a finding no reviewer has decided on counts as "open".

Two reviewers deciding at once both land: each decision is a row of its own (SQLite takes
its write lock per transaction, PostgreSQL gives each row its own id), and the later id
is the finding's disposition.

Four eyes (version 4): a row's `status` says what it is: a decision (`decided`), a
proposal waiting for a supervisor (`proposed`: the finding counts as "pending", TALLIED),
a proposal approved (`approved`: the state proposed, `reviewer` its proposer,
`approved_by` the supervisor) or rejected (`rejected`: state open, `reviewer` the
supervisor); `proposal_id` names the proposal answered. Approving is a new row too: the
proposal's row stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..findings import spreadsheet_safe
from . import MEANINGS, PENDING, PROPOSABLE, STATES, STATUSES, TALLIED, StoreError
from .schema import dispositions, findings, migrate, runs

__all__ = [
    "EXPORT_COLUMNS",
    "MEANINGS",
    "STATES",
    "TALLIED",
    "counts",
    "counts_by_run",
    "export_rows",
    "history",
    "latest",
    "latest_select",
    "record",
]

# ids per statement: under SQLite's and PostgreSQL's limits on bound parameters
CHUNK = 5_000
UNKNOWN_NAMED = 3  # unknown finding ids quoted in the error (the count says the rest)
FIELDS = ("finding_id", "state", "note", "reviewer", "decided_at", "run_id", "status",
          "approved_by", "proposal_id")
EXPORT_COLUMNS = {
    "disposition_id": pl.Int64,
    "finding_id": pl.String,
    "state": pl.String,
    "note": pl.String,
    "reviewer": pl.String,
    "decided_at": pl.Datetime("us"),
    "run_id": pl.String,
    "status": pl.String,
    "approved_by": pl.String,
    "proposal_id": pl.Int64,
    "rule_id": pl.String,
    "table_id": pl.String,
    "shoe_id": pl.String,
    "round": pl.Int64,
    "seq": pl.Int64,
    "message": pl.String,
}


def _chunks(items: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield list(items[start : start + CHUNK])


def _unique(ids: Iterable[str]) -> list[str]:
    """The ids once each, in their first order."""
    return list(dict.fromkeys(ids))


def _utc(at: datetime | None) -> datetime:
    """A time as the store keeps it: UTC without tzinfo (a naive time is taken as UTC)."""
    if at is None:
        return datetime.now(UTC).replace(tzinfo=None)
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at


def _unknown(conn: Connection, ids: list[str]) -> list[str]:
    """The ids no run of the store found."""
    known: set[str] = set()
    for chunk in _chunks(ids):
        query = sa.select(findings.c.finding_id).where(findings.c.finding_id.in_(chunk)).distinct()
        known.update(conn.execute(query).scalars())
    return [i for i in ids if i not in known]


def _check(conn: Connection, ids: list[str], state: str, reviewer: str, run_id: str | None,
           status: str = "decided"):
    if state not in STATES:
        raise StoreError(
            f"{state!r} is not a disposition: a finding is one of {', '.join(STATES)}"
        )
    if status not in STATUSES:
        raise StoreError(f"{status!r} is not a status: one of {', '.join(STATUSES)}")
    if status == "proposed" and state not in PROPOSABLE:
        raise StoreError(f"only {' and '.join(PROPOSABLE)} are proposed (four eyes), "
                         f"not {state!r}")
    if not reviewer or not reviewer.strip():
        raise StoreError("a disposition names its reviewer, and none was given")
    unknown = _unknown(conn, ids)
    if unknown:
        named = ", ".join(repr(i) for i in unknown[:UNKNOWN_NAMED])
        more = f" and {len(unknown) - UNKNOWN_NAMED} more" if len(unknown) > UNKNOWN_NAMED else ""
        raise StoreError(
            f"no run in the store found the finding{'s' if len(unknown) > 1 else ''} "
            f"{named}{more}: nothing was recorded"
        )
    if run_id is not None:
        found = conn.execute(sa.select(runs.c.run_id).where(runs.c.run_id == run_id)).first()
        if found is None:
            raise StoreError(f"there is no run {run_id!r} in the store: nothing was recorded")


def record(
    conn: Connection,
    finding_ids: Sequence[str],
    state: str,
    note: str,
    reviewer: str,
    run_id: str | None = None,
    at: datetime | None = None,
    status: str = "decided",
    approved_by: str | None = None,
    proposal_id: int | None = None,
) -> int:
    """Append one disposition per finding (each id once); returns the rows appended.

    Nothing is updated or removed. The state must be one of STATES and every id a finding
    some run of the store found, else a StoreError and no row (the caller's transaction
    then holds none of them). `at` defaults to now; the store keeps it in UTC. STATUS,
    APPROVED_BY and PROPOSAL_ID: a proposal, or the answer to one (four eyes)."""
    ids = _unique(finding_ids)
    if not ids:
        return 0
    migrate(conn)  # a store an older auditor made has no dispositions table yet
    _check(conn, ids, state, reviewer, run_id, status)
    decided_at = _utc(at)
    rows = [
        {
            "finding_id": i,
            "state": state,
            "note": note or "",
            "reviewer": reviewer.strip(),
            "decided_at": decided_at,
            "run_id": run_id,
            "status": status,
            "approved_by": approved_by,
            "proposal_id": proposal_id,
        }
        for i in ids
    ]
    for chunk in _chunks(rows):
        conn.execute(dispositions.insert(), chunk)
    return len(rows)


def latest_select(finding_ids: Sequence[str] | None = None) -> sa.Select:
    """The latest disposition of each finding that has one, as a query (FIELDS, and
    disposition_id) to join: a page of findings filtered by disposition joins it as a
    subquery on finding_id (a finding it lacks is "open")."""
    last = sa.select(
        dispositions.c.finding_id, sa.func.max(dispositions.c.disposition_id).label("last")
    ).group_by(dispositions.c.finding_id)
    if finding_ids is not None:
        last = last.where(dispositions.c.finding_id.in_(list(finding_ids)))
    last = last.subquery("last_disposition")
    return sa.select(dispositions.c.disposition_id, *(dispositions.c[f] for f in FIELDS)).join(
        last, dispositions.c.disposition_id == last.c["last"]
    )


def _as_dict(row: Any) -> dict[str, Any]:
    return {f: row[f] for f in FIELDS}


def latest(conn: Connection, finding_ids: Sequence[str] | None = None) -> list[dict]:
    """The last disposition of each finding (of `finding_ids`; None: of every finding that
    has one), ordered by finding_id; a finding with none is not listed (it is open)."""
    if finding_ids is None:
        query = latest_select().order_by(dispositions.c.finding_id)
        return [_as_dict(r) for r in conn.execute(query).mappings()]
    rows = []
    for chunk in _chunks(_unique(finding_ids)):
        rows += [_as_dict(r) for r in conn.execute(latest_select(chunk)).mappings()]
    return sorted(rows, key=lambda r: r["finding_id"])


def history(conn: Connection, finding_id: str) -> list[dict]:
    """Every disposition of the finding, oldest first (an empty list: never decided)."""
    query = (
        sa.select(dispositions)
        .where(dispositions.c.finding_id == finding_id)
        .order_by(dispositions.c.disposition_id)
    )
    return [dict(r) for r in conn.execute(query).mappings()]


class Superseded(StoreError):
    """The proposal answered is no longer the finding's latest disposition: another row
    came after it (a new decision, or another supervisor's answer)."""


class OwnProposal(StoreError):
    """A reviewer answering their own proposal (four eyes needs a second reviewer)."""


def answer(
    conn: Connection,
    finding_id: str,
    proposal_id: int,
    supervisor: str,
    approve: bool,
    note: str = "",
    run_id: str | None = None,
    at: datetime | None = None,
) -> tuple[dict, dict]:
    """Approve or reject PROPOSAL_ID, which must still be FINDING_ID's latest disposition
    and a proposal (else Superseded) by another reviewer than SUPERVISOR (else
    OwnProposal); returns the proposal and the row appended. An approval is the
    proposal's state and note, by its proposer, approved by SUPERVISOR; a rejection sets
    the finding open again, by SUPERVISOR, with NOTE (why). On PostgreSQL the proposal's
    row is locked first, so that two supervisors answering at once do not both answer
    it."""
    proposal = conn.execute(
        sa.select(dispositions).where(dispositions.c.disposition_id == proposal_id,
                                      dispositions.c.finding_id == finding_id)
        .with_for_update()
    ).mappings().first()
    last = conn.execute(
        sa.select(sa.func.max(dispositions.c.disposition_id))
        .where(dispositions.c.finding_id == finding_id)
    ).scalar()
    if proposal is None or proposal["status"] != "proposed" or last != proposal_id:
        raise Superseded(f"finding {finding_id} has no such proposal waiting any more: "
                         "its disposition changed since the page was shown")
    if proposal["reviewer"] == supervisor:
        raise OwnProposal(f"{supervisor} proposed it: another supervisor approves or "
                          "rejects it")
    if approve:
        row = {"state": proposal["state"], "note": proposal["note"],
               "reviewer": proposal["reviewer"], "status": "approved",
               "approved_by": supervisor}
    else:
        row = {"state": STATES[0], "note": note or "", "reviewer": supervisor,
               "status": "rejected", "approved_by": None}
    values = {**row, "finding_id": finding_id, "decided_at": _utc(at),
              "run_id": run_id, "proposal_id": proposal_id}
    values["disposition_id"] = conn.execute(
        dispositions.insert().values(**values)).inserted_primary_key[0]
    return dict(proposal), values


def latest_state() -> sa.ColumnElement:
    """What a finding counts as by its latest disposition (TALLIED: "open" where it has
    none, "pending" where it is a proposal), for the findings row at hand: the last entry
    of its rows, read on the (finding_id, disposition_id) index. Joining every finding to
    a grouped subquery of the latest rows instead makes SQLite scan that subquery once a
    finding, a cost of findings times dispositions."""
    counted = sa.case((dispositions.c.status == "proposed", PENDING),
                      else_=dispositions.c.state)
    last = (
        sa.select(counted)
        .where(dispositions.c.finding_id == findings.c.finding_id)
        .order_by(dispositions.c.disposition_id.desc())
        .limit(1)
        .correlate(findings)
        .scalar_subquery()
    )
    return sa.func.coalesce(last, STATES[0])


def counts_by_run(conn: Connection, run_ids: Iterable[str] | sa.Select) -> dict[str, dict]:
    """Each run's findings by their latest disposition, every state of TALLIED present (0
    where none; a finding with no disposition is open, one whose latest disposition is a
    proposal pending), in one query for all the runs."""
    state = latest_state().label("state")
    ids = run_ids if isinstance(run_ids, sa.Select) else list(run_ids)
    query = (
        sa.select(findings.c.run_id, state, sa.func.count().label("n"))
        .where(findings.c.run_id.in_(ids))
        .group_by(findings.c.run_id, state)
    )
    out: dict[str, dict[str, int]] = {}
    if not isinstance(ids, sa.Select):
        out = {run_id: dict.fromkeys(TALLIED, 0) for run_id in ids}
    for run_id, found, n in conn.execute(query):
        out.setdefault(run_id, dict.fromkeys(TALLIED, 0))[found] = n
    return out


def counts(conn: Connection, run_id: str) -> dict[str, int]:
    """The run's findings by their latest disposition, every state of TALLIED present (0
    where none); a finding with no disposition counts as open, a proposal as pending."""
    return counts_by_run(conn, [run_id])[run_id]


def export_rows(conn: Connection) -> pl.DataFrame:
    """Every disposition, oldest first, with what its finding is (rule, table, shoe, round,
    seq, message: those of the latest run that found it), for a CSV file: every text
    cell a spreadsheet would take for a formula is made text (findings.spreadsheet_safe),
    as in findings.csv. Reviewers' notes and log text both reach these cells."""
    wanted = sa.select(dispositions.c.finding_id).distinct().subquery("disposed")
    newest = (
        sa.select(findings.c.finding_id, sa.func.max(findings.c.run_id).label("run_id"))
        .where(findings.c.finding_id.in_(sa.select(wanted.c.finding_id)))
        .group_by(findings.c.finding_id)
        .subquery("newest")
    )
    found = (
        sa.select(findings)
        .join(
            newest,
            sa.and_(
                findings.c.finding_id == newest.c.finding_id, findings.c.run_id == newest.c.run_id
            ),
        )
        .subquery("found")
    )
    query = (
        sa.select(
            dispositions,
            *(found.c[c] for c in ("rule_id", "table_id", "shoe_id", "round", "seq", "message")),
        )
        .select_from(
            dispositions.outerjoin(found, found.c.finding_id == dispositions.c.finding_id)
        )
        .order_by(dispositions.c.disposition_id)
    )
    rows = [dict(r) for r in conn.execute(query).mappings()]
    return spreadsheet_safe(pl.DataFrame(rows, schema=EXPORT_COLUMNS))
