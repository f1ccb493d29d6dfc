"""Signing in and out: the sign-in page and form, and signing out (who may sign in, the
session and the checks: .auth; the page: .pages' render)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from . import auth, csrf
from .pages import render

router = APIRouter()


@router.get("/sign-in", response_class=HTMLResponse)
def sign_in_page(request: Request, next: str = "/"):  # noqa: A002 - the query's name
    if request.app.state.review.read_only:
        return RedirectResponse("/", status_code=303)
    if auth.reviewer_of(request) is not None:
        return RedirectResponse(auth.safe_next(next), status_code=303)
    return render(request, "signin.html.j2", next=auth.safe_next(next), error=None)


@router.post("/sign-in", response_class=HTMLResponse)
async def sign_in(request: Request):
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = auth.safe_next(str(form.get("next", "/")))
    reviewers = request.app.state.review.reviewers
    if not await run_in_threadpool(reviewers.verify, name, password):
        return render(request, "signin.html.j2", status=401, next=target, error=auth.REFUSED,
                      name=name)
    request.session.clear()  # a new session: a token from before signing in is not reused
    request.session["reviewer"] = name
    csrf.token(request)
    return RedirectResponse(target, status_code=303)


@router.post("/sign-out")
def sign_out(request: Request):
    request.session.clear()
    return RedirectResponse("/sign-in", status_code=303)
