"""Signing in and out: the sign-in page and form, and signing out (who may sign in and the
checks: .auth; the sessions in the store: .sessions; holding back repeated failures:
.throttle; the page: .pages' render).

Every sign-in, sign-out and failure goes into the trail (.trail), with the name (as
typed, for a failure) and the client's address; a burst of failures held back is
recorded once per wait.
"""

from __future__ import annotations

import asyncio
import weakref

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from . import auth, sessions, trail
from .pages import render
from .throttle import Held

router = APIRouter()
# the password checks waiting their turn (auth.MAX_HASHING at once) wait here, not in the
# worker threads the pages need: one limiter per event loop
_limiters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def _checked(review, name: str, password: str) -> str | None:
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(auth.MAX_HASHING)
    return await anyio.to_thread.run_sync(review.reviewers.check, name, password,
                                          limiter=limiter)


def held_sentence(seconds: int) -> str:
    return (f"Too many sign-ins have failed: wait {seconds} second{'' if seconds == 1 else 's'}, "
            "then try again.")


@router.get("/sign-in", response_class=HTMLResponse)
def sign_in_page(request: Request, next: str = "/"):  # noqa: A002 - the query's name
    if request.app.state.review.read_only:
        return RedirectResponse("/", status_code=303)
    if auth.reviewer_of(request) is not None:
        return RedirectResponse(auth.safe_next(next), status_code=303)
    return render(request, "signin.html.j2", next=auth.safe_next(next), error=None)


def _record(review, kind: str, name: str, client: str | None, detail: dict) -> None:
    with review.writing() as conn:
        trail.record(conn, kind, reviewer=name, client=client, detail=detail)


def _begin(review, name: str, client: str | None) -> str:
    """A new session for NAME (the sessions nobody came back to ended first); its token."""
    entry = review.reviewers.get(name)
    with review.writing() as conn:
        sessions.end_stale(conn, review.idle)
        return sessions.start(conn, name, sessions.password_mark(entry.password_hash), client)


@router.post("/sign-in", response_class=HTMLResponse)
async def sign_in(request: Request):
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = auth.safe_next(str(form.get("next", "/")))
    review = request.app.state.review
    client = auth.client_of(request)
    request.state.signed = None  # whoever the cookie named, this answer is the form's
    try:
        attempt = review.throttle.attempt(name, client)
    except Held as held:
        if held.first:
            await run_in_threadpool(_record, review, "signin_throttled", name, client,
                                    {"by": held.kind, "seconds": held.seconds})
        answer = render(request, "signin.html.j2", status=429, next=target,
                        error=held_sentence(held.seconds), name=name)
        answer.headers["Retry-After"] = str(held.seconds)
        return answer
    with attempt:
        why = await _checked(review, name, password)
        if why is not None:
            attempt.failed()
            await run_in_threadpool(_record, review, "signin_failed", name, client,
                                    {"why": why})
            return render(request, "signin.html.j2", status=401, next=target,
                          error=auth.REFUSED, name=name)
        attempt.succeeded()
    token = await run_in_threadpool(_begin, review, name, client)
    request.session.clear()  # a new session: nothing from before signing in is kept
    request.session[sessions.COOKIE_KEY] = token
    return RedirectResponse(target, status_code=303)


@router.post("/sign-out")
def sign_out(request: Request):
    signed = auth.signed_in(request)
    if signed is not None:
        review = request.app.state.review
        with review.writing() as conn:
            sessions.end(conn, signed.session, "signout", auth.client_of(request))
    request.session.clear()
    return RedirectResponse("/sign-in", status_code=303)
