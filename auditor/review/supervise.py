"""What a supervisor does (issue 38): approve or reject a proposal (four eyes), and sign a
run off. The work is control's; these are its routes.

    POST /runs/{run_id}/findings/{finding_id}/approve   form: proposal (its id), note
    POST /runs/{run_id}/findings/{finding_id}/reject    form: proposal, note (why)
                                             (htmx: the #disposition part, as a
                                             disposition set answers)
    GET  /runs/{run_id}/sign-off             the run's findings by disposition, its
                                             sign-offs, and (for a supervisor) the form
    POST /runs/{run_id}/sign-off             form: note; a supervisor signs the run off,
                                             once none of its findings is open or pending

Only a signed-in supervisor's POST is taken (auth.require_supervisor: anyone else, and a
read-only server, get 403), with the session's form token (csrf) like every POST. A
supervisor never answers their own proposal (403, with why). A proposal that is no longer
the finding's latest disposition when the answer comes (someone decided, or another
supervisor answered, in between) is not answered (409: the page again, as it is now).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from ..store import PENDING, STATES, TALLIED, signoffs, state_label
from ..store import dispositions as dsp
from . import auth, control, queries
from .auth import Signed, require_reviewer, require_supervisor
from .pages import (
    MAX_NOTE,
    _disposition_context,
    _finding_context,
    _nav_now,
    _note,
    _run_or_404,
    finding_path,
    htmx,
    render,
    signoff_path,
)
from .queries import BadSelection, Selection

router = APIRouter()
Supervisor = Annotated[Signed, Depends(require_supervisor)]  # a signed-in supervisor, else 403


# --- approving or rejecting a proposal ----------------------------------------------------


def _proposal_id(form) -> int:
    try:
        return int(str(form.get("proposal") or ""))
    except ValueError:
        raise BadSelection("the proposal answered is not named") from None


def _answer_now(request: Request, run_id: str, finding_id: str, proposal_id: int,
                supervisor: str, approve: bool, note: str) -> tuple[list[dict], dict]:
    review = request.app.state.review
    with review.writing() as conn:
        if queries.finding_row(conn, run_id, finding_id) is None:
            raise HTTPException(404, f"Run {run_id} has no finding {finding_id}.")
        row = control.answer(conn, run_id, finding_id, proposal_id, supervisor, approve,
                             note, auth.client_of(request))
    with review.reading() as conn:
        return dsp.history(conn, finding_id), row


def _history_now(request: Request, finding_id: str) -> list[dict]:
    with request.app.state.review.reading() as conn:
        return dsp.history(conn, finding_id)


async def _answer(request: Request, run_id: str, finding_id: str, signed: Signed,
                  approve: bool) -> HTMLResponse:
    form = await request.form()
    proposal_id, note = _proposal_id(form), _note(form)
    sel = Selection.of(run_id, request.query_params)  # the selection the page came from
    try:
        decided, row = await run_in_threadpool(_answer_now, request, run_id, finding_id,
                                               proposal_id, signed.name, approve, note)
    except (dsp.Superseded, dsp.OwnProposal) as exc:
        status = 403 if isinstance(exc, dsp.OwnProposal) else 409
        said = f"Nothing was {'approved' if approve else 'rejected'}: {exc}."
        if htmx(request):  # htmx swaps only a 2xx answer: the part, with why
            decided = await run_in_threadpool(_history_now, request, finding_id)
            return render(request, "_disposition.html.j2",
                          **{**_disposition_context(run_id, finding_id, decided,
                                                    sel.carried()), "answer_error": said})
        context = await run_in_threadpool(_finding_context, request, run_id, finding_id)
        return render(request, "finding.html.j2", status=status,
                      **{**context, "answer_error": said})
    label = state_label(row["state"] if approve else "open")
    if approve:
        said = (f"Approved “{label}”, proposed by {row['reviewer']}, as {signed.name}.")
    else:
        said = f"Rejected the proposal as {signed.name}: the finding is open again."
    if htmx(request):
        nav = await run_in_threadpool(_nav_now, request, run_id, finding_id, sel)
        return render(request, "_disposition.html.j2", done=said, nav_oob=True, **nav,
                      **_disposition_context(run_id, finding_id, decided, sel.carried()))
    request.session["flash"] = said
    return RedirectResponse(finding_path(run_id, finding_id, sel.carried()), status_code=303)


@router.post("/runs/{run_id}/findings/{finding_id}/approve", response_class=HTMLResponse)
async def approve(request: Request, run_id: str, finding_id: str,
                  signed: Supervisor):
    return await _answer(request, run_id, finding_id, signed, approve=True)


@router.post("/runs/{run_id}/findings/{finding_id}/reject", response_class=HTMLResponse)
async def reject(request: Request, run_id: str, finding_id: str,
                 signed: Supervisor):
    return await _answer(request, run_id, finding_id, signed, approve=False)


# --- signing a run off --------------------------------------------------------------------


def _signoff_context(request: Request, run_id: str) -> dict[str, Any]:
    review = request.app.state.review
    with review.reading() as conn:
        run = _run_or_404(conn, run_id)
        counted = dsp.counts(conn, run_id)
        listed = signoffs.of_run(conn, run_id)
    standing = next((s for s in listed if s["standing"]), None)
    return {
        "run": run,
        "counts": counted,
        "tallied": TALLIED,
        "waiting": control.open_or_pending(counted),
        "open_state": STATES[0],
        "pending_state": PENDING,
        "signoffs": list(reversed(listed)),  # the latest first
        "standing": standing,
        "signoff_error": None,
        "note_given": "",
        "max_note": MAX_NOTE,
    }


@router.get("/runs/{run_id}/sign-off", response_class=HTMLResponse)
def signoff_page(request: Request, run_id: str,
                 reviewer: str | None = Depends(require_reviewer)):
    return render(request, "signoff.html.j2", **_signoff_context(request, run_id))


def _sign_now(request: Request, run_id: str, supervisor: str, note: str) -> dict:
    review = request.app.state.review
    with review.writing() as conn:
        _run_or_404(conn, run_id)
        return control.sign_off(conn, run_id, supervisor, note, auth.client_of(request))


@router.post("/runs/{run_id}/sign-off", response_class=HTMLResponse)
async def sign_off(request: Request, run_id: str, signed: Supervisor):
    form = await request.form()
    note = _note(form)
    try:
        done = await run_in_threadpool(_sign_now, request, run_id, signed.name, note)
    except (signoffs.NotReady, signoffs.AlreadySigned) as exc:
        context = await run_in_threadpool(_signoff_context, request, run_id)
        return render(request, "signoff.html.j2", status=409,
                      **{**context, "signoff_error": f"Not signed off: {exc}.",
                         "note_given": note})
    counted = ", ".join(f"{n:,} {state_label(s)}" for s, n in done["counts"].items() if n)
    request.session["flash"] = (f"Run {run_id} signed off by {signed.name}"
                                f"{': ' + counted if counted else ''}.")
    return RedirectResponse(signoff_path(run_id), status_code=303)

