"""Form tokens against cross-site requests: one token per session, in every form that
posts (a hidden `csrf_token` field) and in every htmx request (the `X-CSRF-Token` header,
set once on the page's body with `hx-headers`).

The token is an HMAC of the session's token (the random token the cookie carries: a
signed-in session's, or one given to a visitor of the sign-in page) under the server's
secret: nothing more is kept, and a new session (signing in) has a new form token.

Every POST is checked before its route runs (`check`, a dependency of the whole app): a
token that is missing or not the session's is refused, 403, with the one word "Refused."
and nothing about which. The session cookie is also SameSite=Strict, so another site's
page does not send it at all; the token stands where that is not enough (an old browser,
a page of a sibling subdomain).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from fastapi import Request
from fastapi.responses import HTMLResponse

from . import sessions

FIELD = "csrf_token"
HEADER = "x-csrf-token"
REFUSED_PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refused</title>'
    '</head><body><p id="refused">Refused.</p></body></html>'
)


class Refused(Exception):
    """A request that is refused (403) without saying why."""


def _derived(request: Request, session_token: str) -> str:
    key = request.app.state.review.secret.encode("utf-8")
    mac = hmac.new(key, b"csrf:" + session_token.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def token(request: Request) -> str:
    """The session's form token; a visitor without a session token is given one (in the
    cookie) first."""
    session_token = request.session.get(sessions.COOKIE_KEY)
    if not isinstance(session_token, str) or len(session_token) < 32:
        session_token = sessions.new_token()
        request.session[sessions.COOKIE_KEY] = session_token
    return _derived(request, session_token)


async def check(request: Request) -> None:
    """Refuse a POST whose token (header or form field) is not the session's."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    session_token = request.session.get(sessions.COOKIE_KEY)
    expected = (_derived(request, session_token)
                if isinstance(session_token, str) and len(session_token) >= 32 else None)
    sent = request.headers.get(HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        sent = (await request.form()).get(FIELD)  # kept by Starlette for the route
    if not isinstance(expected, str) or not isinstance(sent, str):
        raise Refused()
    if not hmac.compare_digest(sent.encode(), expected.encode()):
        raise Refused()


def refused(_request: Request, _exc: Exception) -> HTMLResponse:
    return HTMLResponse(REFUSED_PAGE, status_code=403)
