"""The review's trail: what happened in the review application besides the dispositions
themselves, one row of `review_events` (schema, version 3) per event, only ever appended.

Each event has its time (UTC), its kind (KINDS), the reviewer it concerns (for a failed
sign-in, the name as typed, which may be nobody's), the client address it came from, the
run and the finding where it has them, and what else it says as a JSON object (`detail`:
a bulk change's filter, count and disposition; why a session ended...). A single
disposition is not repeated here: the `dispositions` table is its own record (who, when,
what, from which run), nor is a proposal (four eyes): its answer is (approve, reject).

`record` appends one event in the caller's transaction (so a bulk change and its event
land together or not at all); `read` and `count` read them back by a Filter, for the
trail page (/events) and `auditor review export --events` (`export_rows`: a
spreadsheet-safe table). Nothing here updates or removes an event, and the store refuses
it too (triggers on the table). A later step adds its kinds to KINDS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..findings import spreadsheet_safe
from ..store.schema import review_events

__all__ = ["EXPORT_COLUMNS", "KINDS", "Filter", "count", "export_rows", "read", "record"]

# What each kind of event says; the page and the manual list them in this order.
KINDS: dict[str, str] = {
    "signin": "a reviewer signed in",
    "signin_failed": "a sign-in was refused: a wrong name or password, or a disabled "
    "reviewer (detail.why)",
    "signin_throttled": "sign-ins held back after failures, for a name or an address "
    "(detail: which, and for how many seconds)",
    "signout": "a reviewer signed out",
    "session_ended": "a session ended without signing out (detail.why: idle, expired, "
    "password_changed, disabled, removed)",
    "bulk": "a disposition set on a whole selection (detail: its filter, count, "
    "disposition and note)",
    "reviewer_added": "a reviewer added by `auditor review add-reviewer --store`",
    "password_changed": "a reviewer's password changed by `add-reviewer --store`, which "
    "ends their sessions",
    "reviewer_disabled": "a reviewer disabled by `auditor review disable-reviewer`, which "
    "ends their sessions",
    "reviewer_enabled": "a reviewer enabled again by `auditor review enable-reviewer`",
    "approve": "a supervisor approved a proposal (four eyes): the finding is what was "
    "proposed (detail: the disposition, its proposer, the proposal's id, a note)",
    "reject": "a supervisor rejected a proposal (four eyes): the finding is open again "
    "(detail: the disposition proposed, its proposer, the proposal's id, why)",
    "signoff": "a supervisor signed a run off (detail: its findings by disposition, a "
    "note)",
    "signoff_withdrawn": "a run's sign-off withdrawn because one of its findings changed "
    "(the finding; detail: the change, how many of the run's findings it touched, the "
    "sign-off withdrawn)",
}
MAX_TEXT = 200  # characters of a name or address kept (a failed sign-in's name is anything)
EXPORT_COLUMNS = {
    "event_id": pl.Int64,
    "at": pl.String,  # UTC, ISO 8601 with Z
    "kind": pl.String,
    "reviewer": pl.String,
    "client": pl.String,
    "run_id": pl.String,
    "finding_id": pl.String,
    "detail": pl.String,  # JSON
}


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _utc(at: datetime | None) -> datetime:
    """A time as the store keeps it: UTC without tzinfo (a naive time is taken as UTC)."""
    if at is None:
        return _now()
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:MAX_TEXT]


def record(
    conn: Connection,
    kind: str,
    *,
    reviewer: str,
    client: str | None = None,
    run_id: str | None = None,
    finding_id: str | None = None,
    detail: Mapping[str, Any] | None = None,
    at: datetime | None = None,
) -> int:
    """Append one event (in the caller's transaction); returns its event_id. KIND is one of
    KINDS; DETAIL is kept as JSON (times as text)."""
    if kind not in KINDS:
        raise ValueError(f"{kind!r} is not a kind of review event ({', '.join(KINDS)})")
    values = {
        "at": _utc(at),
        "kind": kind,
        "reviewer": _cut(reviewer) or "",
        "client": _cut(client),
        "run_id": run_id,
        "finding_id": finding_id,
        "detail": None if detail is None else json.dumps(
            dict(detail), ensure_ascii=False, sort_keys=True, default=str),
    }
    return conn.execute(review_events.insert().values(**values)).inserted_primary_key[0]


@dataclass(frozen=True)
class Filter:
    """Which events: of these kinds (none: every kind), of one reviewer, at or after
    `since` and before `until` (UTC), of one run or one finding."""

    kinds: tuple[str, ...] = ()
    reviewer: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    run_id: str | None = None
    finding_id: str | None = None

    def conditions(self) -> list[sa.ColumnElement]:
        c = review_events.c
        where = []
        if self.kinds:
            where.append(c.kind.in_(list(self.kinds)))
        if self.reviewer is not None:
            where.append(c.reviewer == self.reviewer)
        if self.since is not None:
            where.append(c.at >= _utc(self.since))
        if self.until is not None:
            where.append(c.at < _utc(self.until))
        if self.run_id is not None:
            where.append(c.run_id == self.run_id)
        if self.finding_id is not None:
            where.append(c.finding_id == self.finding_id)
        return where


def _event(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["detail"] = json.loads(out["detail"]) if out["detail"] else {}
    return out


def read(conn: Connection, where: Filter | None = None, *, limit: int | None = None,
         offset: int = 0, newest_first: bool = False) -> list[dict[str, Any]]:
    """The events WHERE says, in the order they were recorded (or the newest first), each a
    dict of the table's columns with `detail` read back into a dict ({} for none)."""
    order = review_events.c.event_id.desc() if newest_first else review_events.c.event_id
    query = sa.select(review_events).where(*(where or Filter()).conditions()).order_by(order)
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    return [_event(r) for r in conn.execute(query).mappings()]


def count(conn: Connection, where: Filter | None = None) -> int:
    query = sa.select(sa.func.count()).select_from(review_events)
    return conn.execute(query.where(*(where or Filter()).conditions())).scalar() or 0


def utc_text(at: datetime) -> str:
    """A stored time as ISO 8601 in UTC with its Z (to the second)."""
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def export_rows(conn: Connection, where: Filter | None = None) -> pl.DataFrame:
    """The events, oldest first, as a table for a CSV file: times in UTC with Z, the detail
    as JSON text, and every text cell a spreadsheet would take for a formula made text
    (findings.spreadsheet_safe): names typed at the sign-in page and notes reach them."""
    rows = [
        {**{k: e[k] for k in EXPORT_COLUMNS}, "at": utc_text(e["at"]),
         "detail": json.dumps(e["detail"], ensure_ascii=False, sort_keys=True)
         if e["detail"] else None}
        for e in read(conn, where)
    ]
    return spreadsheet_safe(pl.DataFrame(rows, schema=EXPORT_COLUMNS))
