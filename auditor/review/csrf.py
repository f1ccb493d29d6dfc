"""Form tokens against cross-site requests: one random token per session, in every form
that posts (a hidden `csrf_token` field) and in every htmx request (the `X-CSRF-Token`
header, set once on the page's body with `hx-headers`).

Every POST is checked before its route runs (`check`, a dependency of the whole app): a
token that is missing or not the session's is refused, 403, with the one word "Refused."
and nothing about which. The session cookie is also SameSite=Strict, so another site's
page does not send it at all; the token stands where that is not enough (an old browser,
a page of a sibling subdomain).
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import Request
from fastapi.responses import HTMLResponse

FIELD = "csrf_token"
HEADER = "x-csrf-token"
SESSION_KEY = "csrf"
REFUSED_PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refused</title>'
    '</head><body><p id="refused">Refused.</p></body></html>'
)


class Refused(Exception):
    """A request that is refused (403) without saying why."""


def token(request: Request) -> str:
    """The session's token, made on first use."""
    value = request.session.get(SESSION_KEY)
    if not isinstance(value, str) or len(value) < 32:
        value = secrets.token_urlsafe(32)
        request.session[SESSION_KEY] = value
    return value


async def check(request: Request) -> None:
    """Refuse a POST whose token (header or form field) is not the session's."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    expected = request.session.get(SESSION_KEY)
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
