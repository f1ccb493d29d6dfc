"""The trail page: the review's events (.trail), the newest first, filtered by kind,
reviewer and days (UTC), a page at a time.

    GET /events?kind=&reviewer=&from=YYYY-MM-DD&until=YYYY-MM-DD&page=

Signed-in reviewers see it, and a read-only server shows it as it shows every finding and
note; `auditor review export --events` writes the same events as CSV.
"""

from __future__ import annotations

import math
from datetime import date, datetime, time, timedelta
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from . import trail
from .auth import require_reviewer
from .pages import link, render
from .queries import BadSelection

PER_PAGE = 100
router = APIRouter()


def _day(text: str, name: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadSelection(f"{name} is a day, YYYY-MM-DD") from None


def _page(text: str) -> int:
    try:
        page = int(text or 1)
    except ValueError:
        raise BadSelection("page is a whole number") from None
    if page < 1:
        raise BadSelection("page is 1 or more")
    return page


def described(event: dict[str, Any]) -> str:
    """What an event's detail says, in a line: `key: value` pairs (a filter as its
    `name=value` pairs)."""
    parts = []
    for key, value in event["detail"].items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
        parts.append(f"{key}: {value}")
    return "; ".join(parts)


@router.get("/events", response_class=HTMLResponse)
def events_page(request: Request, reviewer: str | None = Depends(require_reviewer)):
    given = {k: request.query_params.get(k, "").strip()
             for k in ("kind", "reviewer", "from", "until")}
    if given["kind"] and given["kind"] not in trail.KINDS:
        raise BadSelection(f"a kind of event is one of {', '.join(trail.KINDS)}")
    since, until = _day(given["from"], "from"), _day(given["until"], "until")
    page = _page(request.query_params.get("page", ""))
    where = trail.Filter(
        kinds=(given["kind"],) if given["kind"] else (),
        reviewer=given["reviewer"] or None,
        since=datetime.combine(since, time()) if since else None,
        until=datetime.combine(until + timedelta(days=1), time()) if until else None,
    )
    review = request.app.state.review
    with review.reading() as conn:
        total = trail.count(conn, where)
        pages = max(1, math.ceil(total / PER_PAGE))
        page = min(page, pages)
        listed = trail.read(conn, where, limit=PER_PAGE, offset=(page - 1) * PER_PAGE,
                            newest_first=True)
    params = {k: v for k, v in given.items() if v}
    return render(request, "events.html.j2", events=listed, total=total, page=page,
                  pages=pages, given=given, kinds=trail.KINDS, described=described,
                  previous=link("/events", {**params, "page": str(page - 1)})
                  if page > 1 else None,
                  following=link("/events", {**params, "page": str(page + 1)})
                  if page < pages else None)
