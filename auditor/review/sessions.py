"""Sessions held in the store (`review_sessions`, schema version 3), so that they can end.

Signing in makes a random token (32 bytes): the reviewer's cookie carries it (signed),
the store keeps only its SHA-256, with the reviewer, when the session began and was last
used, the client address, and a fingerprint of the reviewer's password hash at that
moment. Every request looks its session up (auth) and takes it as live only while

- it has not ended (signing out ends it),
- it was used within the idle timeout (30 minutes unless `auditor review --idle-timeout`
  says otherwise) and began less than MAX_AGE ago,
- its reviewer is still in the reviewers file, not disabled, and with the password the
  session began with (a changed password ends every session begun with the old one).

A session found no longer live is ended in the store then (`ended_at`, `ended_why`), with
an event in the trail; so are, at each sign-in, every session left idle. A replayed
cookie of an ended session opens nothing: its token's row says it ended. `last_seen` is
written at most once a minute (TOUCH_EVERY), not on every request.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..store.schema import review_sessions
from . import trail

IDLE_MINUTES = 30  # the default idle timeout
MAX_AGE = timedelta(hours=10)  # a working shift and some: then sign in again
TOUCH_EVERY = timedelta(minutes=1)
COOKIE_KEY = "sid"  # the token's key in the (signed) cookie
REASONS = ("signout", "idle", "expired", "password_changed", "disabled", "removed")


def now() -> datetime:
    """The time as the store keeps it: UTC, without tzinfo."""
    return datetime.now(UTC).replace(tzinfo=None)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def short(hashed: str) -> str:
    """How the trail names a session: the first 12 hex digits of its token's hash."""
    return hashed[:12]


def password_mark(password_hash: str) -> str:
    """A fingerprint of a reviewer's password hash: changes when the password does."""
    return hashlib.sha256(password_hash.encode("utf-8")).hexdigest()[:16]


def start(conn: Connection, reviewer: str, mark: str, client: str | None,
          at: datetime | None = None) -> str:
    """A new live session for REVIEWER, and the sign-in in the trail; returns its token
    (for the cookie: the store keeps only its hash)."""
    at = at or now()
    token = new_token()
    hashed = token_hash(token)
    conn.execute(review_sessions.insert().values(
        token_hash=hashed, reviewer=reviewer, created_at=at, last_seen=at, ended_at=None,
        ended_why=None, client=client[: trail.MAX_TEXT] if client else None,
        password_mark=mark))
    trail.record(conn, "signin", reviewer=reviewer, client=client, at=at,
                 detail={"session": short(hashed)})
    return token


def find(conn: Connection, hashed: str) -> dict[str, Any] | None:
    """The session whose token has this hash, live or ended (None: no such session)."""
    row = conn.execute(
        sa.select(review_sessions).where(review_sessions.c.token_hash == hashed)
    ).mappings().first()
    return dict(row) if row else None


def why_not_live(session: dict[str, Any], entry: Any, idle: timedelta,
                 at: datetime | None = None) -> str | None:
    """Why SESSION is no longer live (one of REASONS, or "ended" if it already ended), or
    None while it is. ENTRY: its reviewer in the reviewers file (auth.Reviewer: its
    password_hash and disabled), None where the file no longer names them."""
    at = at or now()
    if session["ended_at"] is not None:
        return "ended"
    if entry is None:
        return "removed"
    if entry.disabled:
        return "disabled"
    if password_mark(entry.password_hash) != session["password_mark"]:
        return "password_changed"
    if at - session["created_at"] > MAX_AGE:
        return "expired"
    if at - session["last_seen"] > idle:
        return "idle"
    return None


def touch(conn: Connection, hashed: str, at: datetime | None = None) -> None:
    """The session used now (only a live one)."""
    conn.execute(review_sessions.update()
                 .where(review_sessions.c.token_hash == hashed,
                        review_sessions.c.ended_at.is_(None))
                 .values(last_seen=at or now()))


def end(conn: Connection, hashed: str, why: str, client: str | None = None,
        at: datetime | None = None) -> bool:
    """End the session (if it is live), with its event in the trail: `signout`, or
    `session_ended` with WHY. False where it had already ended."""
    if why not in REASONS:
        raise ValueError(f"{why!r} is not why a session ends ({', '.join(REASONS)})")
    at = at or now()
    session = find(conn, hashed)
    if session is None or session["ended_at"] is not None:
        return False
    ended = conn.execute(review_sessions.update()
                         .where(review_sessions.c.token_hash == hashed,
                                review_sessions.c.ended_at.is_(None))
                         .values(ended_at=at, ended_why=why)).rowcount
    if not ended:  # another request ended it first
        return False
    detail = {"session": short(hashed)}
    if why == "signout":
        trail.record(conn, "signout", reviewer=session["reviewer"], client=client, at=at,
                     detail=detail)
    else:
        trail.record(conn, "session_ended", reviewer=session["reviewer"], client=client,
                     at=at, detail={**detail, "why": why})
    return True


def live_of(conn: Connection, reviewer: str) -> list[str]:
    """The hashes of REVIEWER's sessions that have not ended."""
    query = sa.select(review_sessions.c.token_hash).where(
        review_sessions.c.reviewer == reviewer, review_sessions.c.ended_at.is_(None))
    return list(conn.execute(query).scalars())


def end_all(conn: Connection, reviewer: str, why: str, client: str | None = None,
            at: datetime | None = None) -> int:
    """End every session of REVIEWER that has not ended (a password changed, the reviewer
    disabled); returns how many."""
    return sum(end(conn, hashed, why, client, at) for hashed in live_of(conn, reviewer))


def end_stale(conn: Connection, idle: timedelta, at: datetime | None = None) -> int:
    """End every session idle longer than IDLE, or older than MAX_AGE, that has not ended
    (the ones nobody came back to); returns how many."""
    at = at or now()
    c = review_sessions.c
    query = sa.select(c.token_hash, c.created_at).where(
        c.ended_at.is_(None), sa.or_(c.last_seen < at - idle, c.created_at < at - MAX_AGE))
    ended = 0
    for hashed, created_at in conn.execute(query).all():
        why = "expired" if at - created_at > MAX_AGE else "idle"
        ended += end(conn, hashed, why, at=at)
    return ended
