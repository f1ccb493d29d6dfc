"""`auditor history --store URL [--since DATE] [--by table|dealer|rule] [--format text|json]`."""

from __future__ import annotations

import json
from datetime import datetime

from .engine import connect
from .history import recurring, runs_report
from .schema import migrate
from .show import recurring_text, runs_text, utc_date_start


def history_of(url: str, since: datetime | None, by: str | None, fmt: str) -> str:
    """The history as text or JSON. The store must exist (a SQLite file is not made by
    reading it); an older schema is upgraded first, as any use of the store does."""
    store = connect(url, must_exist=True)
    since_utc = utc_date_start(since) if since is not None else None
    day = since.date().isoformat() if since is not None else None
    try:
        with store.begin() as conn:
            version = migrate(conn)
            result = recurring(conn, by, since_utc) if by else runs_report(conn, since_utc)
    finally:
        store.close()
    if fmt == "json":
        doc = {"store": store.name, "schema_version": version, "since": day, **result}
        return json.dumps(doc, indent=2, ensure_ascii=False)
    if by:
        return recurring_text(store.name, day, result)
    return runs_text(store.name, day, result)
