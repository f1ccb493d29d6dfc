"""The review's pages: runs, a run's findings (filtered, paged), one finding, and setting
dispositions on one finding or on a whole selection.

URL map (every page needs a signed-in reviewer unless the server is read-only):

    GET  /                                   the runs, as `auditor history` lists them
    GET  /findings?run=&severity=&rule=&table=&dealer=&presence=&state=&q=&sort=&page=&per_page=
                                             a run's findings (htmx: the #findings-view part)
    GET  /findings.csv?(the same)            that selection, every page of it, as CSV
    GET  /runs/{run_id}/findings/{finding_id}?(the selection, without run and page)
                                             one finding: rule, paragraph, replay, runs,
                                             dispositions; its place in the selection and
                                             the findings before and after it there
    POST /runs/{run_id}/findings/{finding_id}/disposition?(the selection)
                                             state + note on that finding (htmx: the
                                             #disposition part, and #finding-nav)
    POST /findings/bulk/confirm              state + note on a selection: the count to confirm
    POST /findings/bulk                      ... confirmed: set on every finding of it
    POST /runs/{run_id}/findings/{finding_id}/approve, .../reject
                                             a supervisor answers a proposal (supervise)
    GET  /runs/{run_id}/sign-off, POST the same
                                             a run's sign-offs; a supervisor signs it off
                                             (supervise)
    GET  /sign-in, POST /sign-in, POST /sign-out (auth)
    GET  /events?kind=&reviewer=&from=&until=&page=
                                             the review's trail (events)
    GET  /static/...                         htmx, the style sheet, the shortcuts (review.js)

An htmx request (header HX-Request) gets the part it swaps; the same URL without it the
whole page, so every page also works without scripts and from a bookmark. HEAD is
answered wherever GET is (app.HeadAsGet). Keyboard shortcuts (static/review.js) follow
the pages' links and submit their forms: nothing they do needs them.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..report.replays import cents
from ..rules.catalog import REGISTRY
from ..store import (
    MEANINGS,
    PENDING,
    PENDING_MEANING,
    PROPOSABLE,
    STATES,
    TALLIED,
    StoreError,
    state_label,
)
from ..store import dispositions as dsp
from . import auth, control, csrf, queries, rounds, trail
from .auth import require_reviewer
from .queries import BadSelection, Selection, utc_minutes

MAX_NOTE = 10_000  # characters
RULE_TITLES = {rule.id: rule.title for rule in REGISTRY.all()}
# a key per disposition (static/review.js reads them from the options' data-key)
KEYS = {state: str(n) for n, state in enumerate(STATES, start=1)}
router = APIRouter()

__all__ = ["add_handlers", "code_spans", "dash", "money", "render", "router", "utc_minutes"]


# --- rendering ----------------------------------------------------------------------------


def money(amount: float | None) -> str:
    """Dollars as the report writes them (findings keep amounts in dollars)."""
    return cents(None if amount is None else round(amount * 100))


def dash(value: Any) -> Any:
    return "—" if value is None or value == "" else value


_CODE = re.compile(r"`([^`]+)`")


def code_spans(text: str | None) -> Markup:
    """A rule's text with its `backticked` words as code: escaped first, then the
    backticks (escaping leaves them) made <code> elements."""
    return Markup(_CODE.sub(r"<code>\1</code>", str(escape(text or ""))))


def link(path: str, params: dict[str, str] | None = None) -> str:
    return f"{path}?{urlencode(params)}" if params else path


def finding_path(run_id: str, finding_id: str, query: dict[str, str] | None = None) -> str:
    """A finding's page; QUERY: the selection it is opened from (Selection.carried)."""
    return link(f"/runs/{quote(run_id, safe='')}/findings/{quote(finding_id, safe='')}", query)


def signoff_path(run_id: str) -> str:
    """A run's sign-off page (supervise)."""
    return f"/runs/{quote(run_id, safe='')}/sign-off"


def htmx(request: Request) -> bool:
    """An htmx request for a part (not a history restore, which wants the whole page)."""
    return bool(request.headers.get("hx-request")) and not request.headers.get(
        "hx-history-restore-request")


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    review = request.app.state.review
    signed = None if review.read_only else auth.signed_in(request)
    reviewer = signed.name if signed else None
    base = {
        "reviewer": reviewer,
        "supervisor": signed is not None and signed.role == "supervisor",
        "four_eyes": review.four_eyes,
        "proposable": PROPOSABLE,
        "pending_meaning": PENDING_MEANING,
        "read_only": review.read_only,
        "can_write": not review.read_only and reviewer is not None,
        "csrf_token": None if review.read_only else csrf.token(request),
        "flash": request.session.pop("flash", None) if reviewer else None,
        "store_name": review.store.name,
        "states": STATES,
        "meanings": MEANINGS,
        "state_label": state_label,
        "link": link,
        "finding_path": finding_path,
        "signoff_path": signoff_path,
    }
    html = review.templates.get_template(template).render(**base, **context)
    # the same URL answers a part to htmx and a page otherwise: caches must tell them apart
    return HTMLResponse(html, status_code=status, headers={"Vary": "HX-Request"})


def _error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html.j2", status=status, message=message)


def add_handlers(app: FastAPI) -> None:
    """Errors as pages with one sentence, never a traceback."""

    @app.exception_handler(BadSelection)
    async def _bad(request: Request, exc: BadSelection):
        return _error_page(request, 400, f"That selection cannot be: {exc}.")

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError):
        return _error_page(request, 503, f"The store cannot be read: {exc}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        messages = {404: "There is no such page.", 405: "That is not a way to ask for it."}
        # a sentence of ours, not Starlette's bare reason phrase ("Not Found")
        detail = exc.detail if isinstance(exc.detail, str) and exc.status_code != 405 else None
        if detail == _phrase(exc.status_code):
            detail = None
        return _error_page(request, exc.status_code,
                           detail or messages.get(exc.status_code, "That cannot be done."))


def _phrase(status: int) -> str | None:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return None


# --- runs ---------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request, reviewer: str | None = Depends(require_reviewer)):
    review = request.app.state.review
    with review.reading() as conn:
        listed = queries.runs_listed(conn, review.facts)
    pending = any(r["dispositions"][PENDING] for r in listed)
    return render(request, "runs.html.j2", runs=listed,
                  run_states=TALLIED if review.four_eyes or pending else STATES)


# --- a run's findings ---------------------------------------------------------------------


def _run_or_404(conn, run_id: str) -> dict[str, Any]:
    run = queries.run_row(conn, run_id)
    if run is None:
        raise HTTPException(404, f"There is no run {run_id} in the store.")
    return run


def _findings_context(request: Request, given: dict[str, Any]) -> dict[str, Any] | None:
    """Everything the findings view shows for the query GIVEN (None: the store holds no
    run yet)."""
    review = request.app.state.review
    with review.reading() as conn:
        run_id = given.get("run") or queries.latest_run_id(conn)
        if run_id is None:
            return None
        run = _run_or_404(conn, run_id)
        sel = Selection.of(run_id, given)
        previous_id = review.facts.previous(conn, run)
        counts = queries.count(conn, sel, previous_id)
        pages = max(1, math.ceil(counts.total / sel.per_page))
        if sel.page > pages:
            sel = sel.at_page(pages)
        rows = queries.page(conn, sel, previous_id)
        choices = review.facts.choices(conn, run_id)
        run_list = [(r["run_id"], r["started_at"], r["findings"])
                    for r in queries.run_rows(conn)]
    return {
        "sel": sel,
        "run": run,
        "run_list": run_list,
        "previous_id": previous_id,
        "counts": counts,
        "rows": rows,
        "pages": pages,
        "choices": choices,
        "severities": queries.SEVERITIES,
        "presence": queries.PRESENCE,
        "sorts": queries.SORTS,
        "csv_name": _csv_name(run_id),
        "rule_titles": RULE_TITLES,
        "keys": KEYS,
        "max_note": MAX_NOTE,
        "max_search": queries.MAX_SEARCH,
        # "pending" among the dispositions shown and filtered by, with four eyes or where
        # there are proposals
        "filter_states": TALLIED if (review.four_eyes or counts.by_state.get(PENDING)
                                     or sel.state == PENDING) else STATES,
    }


@router.get("/findings", response_class=HTMLResponse)
def findings_page(request: Request, reviewer: str | None = Depends(require_reviewer)):
    context = _findings_context(request, dict(request.query_params))
    if context is None:
        return render(request, "empty.html.j2")
    if not htmx(request):
        return render(request, "findings.html.j2", **context)
    response = render(request, "_findings_view.html.j2", **context)
    # the address bar shows the selection without the form's empty fields
    response.headers["HX-Push-Url"] = link("/findings", context["sel"].params())
    return response


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as the text it is: text that would be read as a
    formula gets an apostrophe first, as findings.csv's cells do (numbers stay numbers)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _csv_name(run_id: str) -> str:
    return "findings-" + re.sub(r"[^A-Za-z0-9._-]+", "_", run_id) + ".csv"


def _csv_lines(review, sel: Selection, previous_id: str | None) -> Iterator[str]:
    """The selection as CSV, a part of it at a time, read as it is sent."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(queries.EXPORTED_COLUMNS)
    with review.reading() as conn:
        for part in queries.exported(conn, sel, previous_id, RULE_TITLES):
            writer.writerows([_cell(v) for v in row] for row in part)
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


def _csv_selection(request: Request, given: dict[str, Any]) -> tuple[Selection, str | None]:
    review = request.app.state.review
    with review.reading() as conn:
        run_id = given.get("run") or queries.latest_run_id(conn)
        if run_id is None:
            raise HTTPException(404, "The store holds no run yet.")
        run = _run_or_404(conn, run_id)
        return Selection.of(run_id, given), review.facts.previous(conn, run)


@router.get("/findings.csv")
def findings_csv(request: Request, reviewer: str | None = Depends(require_reviewer)):
    """The selection of the findings page (its filters, search and order; every page of
    it) as CSV, safe to open in a spreadsheet."""
    sel, previous_id = _csv_selection(request, dict(request.query_params))
    return StreamingResponse(
        _csv_lines(request.app.state.review, sel, previous_id),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{_csv_name(sel.run)}"'},
    )


# --- one finding --------------------------------------------------------------------------


def _nav_context(conn, review, run: dict[str, Any], finding_id: str,
                 sel: Selection) -> dict[str, Any]:
    """The finding's place in the selection it was opened from, and the links to the
    findings before and after it there and back to the list (its page of it)."""
    here = queries.place(conn, sel, review.facts.previous(conn, run), finding_id)
    carried = sel.carried()
    back = sel.params(page=here.page(sel.per_page))
    return {
        "sel": sel,
        "place": here,
        "prev_href": finding_path(sel.run, here.previous, carried) if here.previous else None,
        "next_href": finding_path(sel.run, here.next, carried) if here.next else None,
        "back_href": link("/findings", back) + f"#finding-{finding_id}",
        "carried": carried,
        "sorts": queries.SORTS,
    }


def _finding_context(request: Request, run_id: str, finding_id: str) -> dict[str, Any]:
    review = request.app.state.review
    sel = Selection.of(run_id, request.query_params)
    with review.reading() as conn:
        run = _run_or_404(conn, run_id)
        finding = queries.finding_row(conn, run_id, finding_id)
        if finding is None:
            raise HTTPException(404, f"Run {run_id} has no finding {finding_id}.")
        found_in = queries.earlier_and_later(queries.runs_that_found(conn, finding_id), run)
        decided = dsp.history(conn, finding_id)
        nav = _nav_context(conn, review, run, finding_id, sel)
    rule = REGISTRY.get(finding["rule_id"]) if finding["rule_id"] in REGISTRY else None
    citation = finding.get("citation") or (rule.citation if rule else None)
    rulesets = review.rulesets
    paragraph = (rulesets.paragraph(citation)
                 if citation and rulesets.has_paragraph(citation) else None)
    return {
        "run": run,
        "f": finding,
        "rule": rule,
        "citation": citation,
        "paragraph": paragraph,
        "round": rounds.round_of(run, finding),
        "found_in": found_in,
        **nav,
        **_disposition_context(run_id, finding_id, decided, nav["carried"]),
    }


def _disposition_context(run_id: str, finding_id: str, decided: list[dict],
                         carried: dict[str, str] | None = None) -> dict[str, Any]:
    """The disposition part; CARRIED: the selection the page was opened from, which its
    form posts back (in its address) so that the page it leads to keeps it."""
    return {
        "run_id": run_id,
        "finding_id": finding_id,
        "history": decided,
        "current": decided[-1] if decided else None,
        "action": link(finding_path(run_id, finding_id) + "/disposition", carried),
        "approve_action": link(finding_path(run_id, finding_id) + "/approve", carried),
        "reject_action": link(finding_path(run_id, finding_id) + "/reject", carried),
        "max_note": MAX_NOTE,
        "keys": KEYS,
        "note_error": None,
        "note_given": "",
        "state_given": None,
        "answer_error": None,
    }


@router.get("/runs/{run_id}/findings/{finding_id}", response_class=HTMLResponse)
def finding_page(request: Request, run_id: str, finding_id: str,
                 reviewer: str | None = Depends(require_reviewer)):
    return render(request, "finding.html.j2", **_finding_context(request, run_id, finding_id))


def _note(form) -> str:
    note = _note_given(form)
    if len(note) > MAX_NOTE:
        raise BadSelection(_too_long(note))
    return note


def _note_given(form) -> str:
    return str(form.get("note") or "").replace("\r\n", "\n").strip()


def _too_long(note: str) -> str:
    return (f"The note has {len(note):,} characters; a note has at most {MAX_NOTE:,}. "
            "Shorten it and set the disposition again: nothing was set.")


def _state(form) -> str:
    """The disposition a form sets (its field `disposition`: a selection's own `state`
    field is the filter by disposition)."""
    state = str(form.get("disposition") or "")
    if state not in STATES:
        raise BadSelection(f"a disposition is one of {', '.join(STATES)}")
    return state


def _record_one(request: Request, run_id: str, finding_id: str, state: str, note: str,
                reviewer: str) -> tuple[list[dict], control.Decided]:
    """STATE on the finding (a proposal with four eyes: control.decide); its history
    after, and what was recorded."""
    review = request.app.state.review
    with review.writing() as conn:
        if queries.finding_row(conn, run_id, finding_id) is None:
            raise HTTPException(404, f"Run {run_id} has no finding {finding_id}.")
        decided = control.decide(conn, [finding_id], state, note, reviewer, run_id=run_id,
                                 four_eyes=review.four_eyes, client=auth.client_of(request))
    with review.reading() as conn:
        return dsp.history(conn, finding_id), decided


def withdrawn_said(withdrawn: list[dict]) -> str:
    """The sign-offs a change withdrew, in a sentence ("" for none)."""
    if not withdrawn:
        return ""
    runs = ", ".join(w["run_id"] for w in withdrawn)
    return (f" The sign-off of run{'s' if len(withdrawn) > 1 else ''} {runs} was withdrawn: "
            "a supervisor signs it off again.")


def _said(decided: control.Decided, state: str, reviewer: str, count: int | None = None) -> str:
    """What a disposition set says on the next page."""
    on = f" on {count} finding{'' if count == 1 else 's'}" if count is not None else ""
    if decided.proposed:
        said = (f"Proposed “{state_label(state)}”{on} by {reviewer}: pending until a "
                "supervisor approves it.")
    elif count is not None:
        said = f"Set “{state_label(state)}”{on} by {reviewer}."
    else:
        said = f"Set to “{state_label(state)}” by {reviewer}."
    return said + withdrawn_said(decided.withdrawn)


def _nav_now(request: Request, run_id: str, finding_id: str,
             sel: Selection) -> dict[str, Any]:
    review = request.app.state.review
    with review.reading() as conn:
        return _nav_context(conn, review, _run_or_404(conn, run_id), finding_id, sel)


def _note_refused(request: Request, run_id: str, finding_id: str, state: str,
                  note: str) -> HTMLResponse:
    """A note over the limit: the form again with the note and state given, and why at
    the box (htmx swaps only a 2xx answer; a page loaded whole says 400)."""
    kept = {"note_error": _too_long(note), "note_given": note, "state_given": state}
    if htmx(request):
        review = request.app.state.review
        with review.reading() as conn:
            decided = dsp.history(conn, finding_id)
        sel = Selection.of(run_id, request.query_params)
        return render(request, "_disposition.html.j2",
                      **{**_disposition_context(run_id, finding_id, decided, sel.carried()),
                         **kept})
    context = _finding_context(request, run_id, finding_id)
    return render(request, "finding.html.j2", status=400, **{**context, **kept})


@router.post("/runs/{run_id}/findings/{finding_id}/disposition", response_class=HTMLResponse)
async def set_disposition(request: Request, run_id: str, finding_id: str,
                          reviewer: str | None = Depends(require_reviewer)):
    form = await request.form()
    sel = Selection.of(run_id, request.query_params)  # the selection the page came from
    state, note = _state(form), _note_given(form)
    if len(note) > MAX_NOTE:
        return await run_in_threadpool(_note_refused, request, run_id, finding_id, state, note)
    decided, recorded = await run_in_threadpool(_record_one, request, run_id, finding_id,
                                                state, note, reviewer)
    said = _said(recorded, state, reviewer)
    if htmx(request):
        # the finding's place in a selection by disposition changes: the nav too (oob)
        nav = await run_in_threadpool(_nav_now, request, run_id, finding_id, sel)
        return render(request, "_disposition.html.j2", done=said, nav_oob=True, **nav,
                      **_disposition_context(run_id, finding_id, decided, sel.carried()))
    request.session["flash"] = said
    return RedirectResponse(finding_path(run_id, finding_id, sel.carried()), status_code=303)


# --- a disposition on a whole selection ---------------------------------------------------


def _selection_of(request: Request, form) -> tuple[Selection, str | None, int]:
    """The selection the form names, the run before its run, and how many it holds now."""
    review = request.app.state.review
    given = {k: str(form.get(k) or "") for k in ("run", *Selection.FILTERS)}
    if not given["run"]:
        raise BadSelection("a selection names its run")
    with review.reading() as conn:
        run = _run_or_404(conn, given["run"])
        sel = Selection.of(run["run_id"], given)
        previous_id = review.facts.previous(conn, run)
        total = queries.count(conn, sel, previous_id).total
    return sel, previous_id, total


def _bulk_context(sel: Selection, state: str, note: str, total: int,
                  changed: bool = False) -> dict[str, Any]:
    return {"sel": sel, "state": state, "note": note, "total": total, "changed": changed,
            "back": link("/findings", sel.params(page=None, per_page=None))}


@router.post("/findings/bulk/confirm", response_class=HTMLResponse)
async def bulk_confirm(request: Request, reviewer: str | None = Depends(require_reviewer)):
    form = await request.form()
    state, note = _state(form), _note_given(form)
    sel, _previous, total = await run_in_threadpool(_selection_of, request, form)
    context = _bulk_context(sel, state, note, total)
    if len(note) > MAX_NOTE:  # the form again, the note kept, why at the box
        context.update(note_error=_too_long(note), max_note=MAX_NOTE)
        if htmx(request):
            return render(request, "_bulk_form.html.j2", **context)
        return render(request, "bulk_confirm.html.j2", status=400, **context)
    name = "_bulk_confirm.html.j2" if htmx(request) else "bulk_confirm.html.j2"
    return render(request, name, **context)


def _record_selection(request: Request, sel: Selection, previous_id: str | None, state: str,
                      note: str, reviewer: str, expected: int) -> control.Decided | None:
    """Set STATE on every finding of the selection (proposals with four eyes), in one
    transaction, if it still holds EXPECTED findings (None: it changed since it was
    confirmed; nothing is set); the trail records it in the same transaction, with the
    selection's filter and count."""
    review = request.app.state.review
    with review.writing() as conn:
        ids = queries.selected_ids(conn, sel, previous_id)
        if len(ids) != expected:
            return None
        client = auth.client_of(request)
        done = control.decide(conn, ids, state, note, reviewer, run_id=sel.run,
                              four_eyes=review.four_eyes, client=client)
        given = {k: v for k, v in sel.filters().items() if k != "run"}
        trail.record(conn, "bulk", reviewer=reviewer, client=client,
                     run_id=sel.run, detail={"filter": given, "count": done.count,
                                             "disposition": state, "note": note,
                                             # four eyes: proposals, not decisions
                                             **({"proposed": True} if done.proposed
                                                else {})})
        return done


@router.post("/findings/bulk", response_class=HTMLResponse)
async def bulk_set(request: Request, reviewer: str | None = Depends(require_reviewer)):
    form = await request.form()
    state, note = _state(form), _note(form)
    try:
        expected = int(str(form.get("count") or ""))
    except ValueError:
        raise BadSelection("the confirmed count is missing") from None
    sel, previous_id, total = await run_in_threadpool(_selection_of, request, form)
    done = None
    if expected == total and total > 0:
        done = await run_in_threadpool(_record_selection, request, sel, previous_id, state,
                                       note, reviewer, expected)
    if done is None:  # the selection changed under the reviewer: confirm it again
        # htmx swaps only a 2xx answer; a page loaded whole says 409 (conflict)
        part = htmx(request)
        name = "_bulk_confirm.html.j2" if part else "bulk_confirm.html.j2"
        return render(request, name, status=200 if part else 409,
                      **_bulk_context(sel, state, note, total, changed=expected != total))
    request.session["flash"] = _said(done, state, reviewer, done.count)
    target = link("/findings", sel.params(page=None, per_page=None))
    if htmx(request):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)
