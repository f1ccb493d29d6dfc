"""What the review pages read from the store: runs, a run's findings filtered and paged,
one finding with everything said about it.

A run's findings are selected in SQL (Selection): the run (its rows by the findings
table's primary key, run_id first), then severity, rule, table and dealer, new or still
present (against the run before it, by finding_id, as `auditor history` compares), and
the latest disposition (a correlated look-up on the dispositions' (finding_id,
disposition_id) index: a finding with none is "open"), and a text searched for in the
message or rule id (LIKE, case-insensitive, its wildcards escaped). One query counts the
selection by severity, novelty and disposition; another reads one page of it
(LIMIT/OFFSET) in the order asked (SORTS: the findings files' order by default); another
finds a finding's place in it and its neighbours (a window function over the same
order); the CSV export reads all of it, a part at a time. A store of 100,000 findings
over 30 runs answers in milliseconds: every filter works within one run's rows.

A run never changes once stored, so what is costly to work out per run (the run before
it, its comparison, the values its filters offer) is kept for the server's life (RunFacts).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..store import PENDING, STATES, TALLIED, signoffs, tallied
from ..store import dispositions as dsp
from ..store.compare import run_facts, utc_text, window_words
from ..store.history import changes, previous_run, tables_of
from ..store.schema import dispositions as dsp_table
from ..store.schema import findings, runs
from ..store.show import audited

SEVERITIES = ("error", "warning")
PRESENCE = {"new": "new in this run", "still_present": "still present (found by the run before)"}
PER_PAGE = 50
MAX_PER_PAGE = 500
MAX_SEARCH = 200  # characters searched for
SORTS = {
    "file": "table, shoe, round (the findings files' order)",
    "table": "table, then round",
    "amount": "amount at stake, largest first",
    "amount_asc": "amount at stake, smallest first",
}
DEFAULT_SORT = "file"
LISTED_COLUMNS = (
    "finding_id",
    "table_id",
    "shoe_id",
    "round",
    "seq",
    "rule_id",
    "severity",
    "message",
    "dealer_id",
    "amount",
)


class BadSelection(ValueError):
    """A filter's value that cannot be: one sentence for the page."""


@dataclass(frozen=True)
class Selection:
    """A run's findings as the filters narrow them, and the page shown."""

    run: str
    severity: str | None = None
    rule: str | None = None
    table: str | None = None
    dealer: str | None = None
    presence: str | None = None  # "new" or "still_present"
    state: str | None = None  # a disposition state (STATES), or "pending" (TALLIED)
    q: str | None = None  # text searched for in the message or the rule id
    sort: str = DEFAULT_SORT  # one of SORTS
    page: int = 1
    per_page: int = PER_PAGE

    FILTERS = ("severity", "rule", "table", "dealer", "presence", "state", "q")

    @classmethod
    def of(cls, run_id: str, given: Mapping[str, Any]) -> Selection:
        """From a request's values: empty means any; a value that cannot be is refused."""
        values = {k: (v or None) for k, v in given.items() if k in cls.FILTERS}
        if values.get("q") is not None:
            values["q"] = str(values["q"]).strip() or None
            if values["q"] is not None and len(values["q"]) > MAX_SEARCH:
                raise BadSelection(f"a search is at most {MAX_SEARCH} characters")
        sort = given.get("sort") or DEFAULT_SORT
        if sort not in SORTS:
            raise BadSelection(f"sort is one of {', '.join(SORTS)}")
        if values.get("severity") not in (None, *SEVERITIES):
            raise BadSelection(f"severity is {' or '.join(SEVERITIES)}")
        if values.get("presence") not in (None, *PRESENCE):
            raise BadSelection(f"presence is {' or '.join(PRESENCE)}")
        if values.get("state") not in (None, *TALLIED):
            raise BadSelection(f"a disposition is one of {', '.join(TALLIED)}")
        page = _number(given.get("page"), 1, "page")
        per_page = min(_number(given.get("per_page"), PER_PAGE, "per_page"), MAX_PER_PAGE)
        return cls(run=run_id, sort=sort, page=page, per_page=per_page, **values)

    def filters(self) -> dict[str, str]:
        """The filters set (for links and hidden fields), the run first."""
        out = {"run": self.run}
        out.update({k: getattr(self, k) for k in self.FILTERS if getattr(self, k) is not None})
        return out

    def params(self, **changed: Any) -> dict[str, str]:
        """The query of this selection with some values changed (None: dropped); the page
        and its size only where they are not the first page and the default size."""
        merged = {**{f.name: getattr(self, f.name) for f in fields(self)}, **changed}
        out = {k: str(v) for k, v in merged.items() if v is not None}
        if merged.get("page") == 1:
            out.pop("page", None)
        if merged.get("per_page") == PER_PAGE:
            out.pop("per_page", None)
        if merged.get("sort") == DEFAULT_SORT:
            out.pop("sort", None)
        return out

    def carried(self) -> dict[str, str]:
        """The query a finding's page is opened with: the selection it was opened from
        (its filters, search, order and page size), without the run (in its path)."""
        return self.params(run=None, page=None)

    def words(self) -> str:
        """The filters set, in words (for a finding's page)."""
        said = []
        for name in ("severity", "rule", "table", "dealer"):
            if getattr(self, name) is not None:
                said.append(f"{name} {getattr(self, name)}")
        if self.presence is not None:
            said.append(PRESENCE[self.presence])
        if self.state is not None:
            said.append(f"disposition {self.state.replace('_', ' ')}")
        if self.q is not None:
            said.append(f"“{self.q}” in the message or rule")
        return ", ".join(said)

    def narrowed(self) -> bool:
        return any(getattr(self, k) is not None for k in self.FILTERS)

    def at_page(self, page: int) -> Selection:
        return replace(self, page=page)


def _number(text: Any, default: int, name: str) -> int:
    if text in (None, ""):
        return default
    try:
        value = int(str(text))
    except ValueError:
        raise BadSelection(f"{name} is a whole number") from None
    if value < 1:
        raise BadSelection(f"{name} is 1 or more")
    return value


# --- runs -------------------------------------------------------------------------------


def run_rows(conn: Connection) -> list[dict[str, Any]]:
    """Every run, the latest first."""
    query = sa.select(runs).order_by(runs.c.finished_at.desc(), runs.c.run_id.desc())
    return [dict(r) for r in conn.execute(query).mappings()]


def run_row(conn: Connection, run_id: str) -> dict[str, Any] | None:
    row = conn.execute(sa.select(runs).where(runs.c.run_id == run_id)).mappings().first()
    return dict(row) if row else None


def latest_run_id(conn: Connection) -> str | None:
    query = sa.select(runs.c.run_id).order_by(runs.c.finished_at.desc(), runs.c.run_id.desc())
    return conn.execute(query.limit(1)).scalar()


class RunFacts:
    """What is worked out once per stored run: the run before it, its comparison with
    that run (new, still present, no longer present, not audited again), and the rules,
    tables and dealers its findings name. Stored runs do not change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._previous: dict[str, str | None] = {}
        self._compared: dict[str, dict[str, Any]] = {}
        self._choices: dict[str, dict[str, list]] = {}

    def previous(self, conn: Connection, run: dict[str, Any]) -> str | None:
        run_id = run["run_id"]
        if run_id not in self._previous:
            before = previous_run(
                conn, run["facility"], tables_of(conn, run_id), run["started_at"]
            )
            with self._lock:
                self._previous[run_id] = before["run_id"] if before else None
        return self._previous[run_id]

    def compared(self, conn: Connection, listed: list[dict[str, Any]]) -> dict[str, dict]:
        """Each listed run's comparison counts and the run before it."""
        missing = [r for r in listed if r["run_id"] not in self._compared]
        if missing:
            # oldest first, so that a run's facts read for it serve the run after it too
            for item in changes(conn, sorted(missing, key=_stored_order)):
                comparison = item["comparison"]
                before = comparison["previous_run"]
                with self._lock:
                    self._compared[item["run"]["run_id"]] = {
                        **comparison["counts"],
                        "previous_run_id": before["run_id"] if before else None,
                    }
        return {r["run_id"]: self._compared[r["run_id"]] for r in listed}

    def choices(self, conn: Connection, run_id: str) -> dict[str, list]:
        """The rules (with their count), tables and dealers of the run's findings."""
        if run_id not in self._choices:
            of_run = findings.c.run_id == run_id
            rules = conn.execute(
                sa.select(findings.c.rule_id, sa.func.count())
                .where(of_run)
                .group_by(findings.c.rule_id)
                .order_by(findings.c.rule_id)
            ).all()
            found = {}
            for name in ("table_id", "dealer_id"):
                column = findings.c[name]
                found[name] = list(
                    conn.execute(
                        sa.select(column).where(of_run, column.is_not(None)).distinct()
                        .order_by(column)
                    ).scalars()
                )
            with self._lock:
                self._choices[run_id] = {
                    "rules": [(r, n) for r, n in rules],
                    "tables": found["table_id"],
                    "dealers": found["dealer_id"],
                }
        return self._choices[run_id]


def _stored_order(run: dict[str, Any]) -> tuple:
    return (run["finished_at"], run["run_id"])


def runs_listed(conn: Connection, facts: RunFacts) -> list[dict[str, Any]]:
    """The runs as `auditor history` lists them (the latest first), with the period each
    audited (as `history` words it), what each found new, the dispositions of its
    findings and its latest sign-off (None: never signed off)."""
    listed = run_rows(conn)
    compared = facts.compared(conn, listed)
    decided = dsp.counts_by_run(conn, [r["run_id"] for r in listed])
    signed = signoffs.latest_by_run(conn, [r["run_id"] for r in listed])
    return [
        {
            **run_facts(run),
            "audited": audited(run_facts(run)),
            "facility": run["facility"],
            "tables": run["tables"],
            "rounds_audited": run["rounds_audited"],
            "errors": run["errors"],
            "warnings": run["warnings"],
            **compared[run["run_id"]],
            "dispositions": decided[run["run_id"]],
            "signoff": signed.get(run["run_id"]),
        }
        for run in listed
    ]


# --- a run's findings -------------------------------------------------------------------


def _found_before(previous_id: str | None) -> sa.ColumnElement:
    """Whether the run before found the finding (the same finding_id)."""
    if previous_id is None:
        return sa.false()
    before = findings.alias("before")
    return sa.exists().where(
        before.c.run_id == previous_id, before.c.finding_id == findings.c.finding_id
    )


def _conditions(sel: Selection, previous_id: str | None) -> list[sa.ColumnElement]:
    where = [findings.c.run_id == sel.run]
    for attr, column in (
        ("severity", "severity"),
        ("rule", "rule_id"),
        ("table", "table_id"),
        ("dealer", "dealer_id"),
    ):
        value = getattr(sel, attr)
        if value is not None:
            where.append(findings.c[column] == value)
    if sel.presence == "new":
        where.append(sa.not_(_found_before(previous_id)))
    elif sel.presence == "still_present":
        where.append(_found_before(previous_id))
    if sel.state is not None:
        where.append(dsp.latest_state() == sel.state)
    if sel.q is not None:
        # a substring, any case; % and _ in it are themselves (autoescape)
        where.append(sa.or_(findings.c.message.icontains(sel.q, autoescape=True),
                            findings.c.rule_id.icontains(sel.q, autoescape=True)))
    return where


@dataclass
class Counts:
    total: int
    by_severity: dict[str, int]
    by_presence: dict[str, int]
    by_state: dict[str, int]


def count(conn: Connection, sel: Selection, previous_id: str | None) -> Counts:
    """The selection counted by severity, new or still present, and disposition: one
    query, grouped."""
    state = dsp.latest_state().label("state")
    before = _found_before(previous_id)
    found_before = sa.case((before, 1), else_=0).label("found_before")
    query = (
        sa.select(findings.c.severity, found_before, state, sa.func.count().label("n"))
        .where(*_conditions(sel, previous_id))
        .group_by(findings.c.severity, found_before, state)
    )
    counts = Counts(0, dict.fromkeys(SEVERITIES, 0), dict.fromkeys(PRESENCE, 0),
                    dict.fromkeys(TALLIED, 0))
    for severity, seen, found_state, n in conn.execute(query):
        counts.total += n
        counts.by_severity[severity] = counts.by_severity.get(severity, 0) + n
        counts.by_presence["still_present" if seen else "new"] += n
        counts.by_state[found_state] = counts.by_state.get(found_state, 0) + n
    return counts


def _in_file_order() -> list[sa.ColumnElement]:
    return [
        findings.c.table_id.asc().nulls_last(),
        findings.c.shoe_id.asc().nulls_last(),
        findings.c.round.asc().nulls_last(),
        findings.c.seq.asc().nulls_last(),
        findings.c.rule_id,
        findings.c.finding_id,
    ]


def _ordered(sel: Selection) -> list[sa.ColumnElement]:
    """The selection's order (SORTS), each one total: it ends in finding_id, unique in a
    run, so that pages, neighbours and the export agree. An amount sorts by its size (an
    overpayment is negative), a finding without one last."""
    size = sa.func.abs(findings.c.amount)
    first = {
        "file": [],
        "table": [findings.c.table_id.asc().nulls_last(), findings.c.round.asc().nulls_last(),
                  findings.c.seq.asc().nulls_last()],
        "amount": [size.desc().nulls_last()],
        "amount_asc": [size.asc().nulls_last()],
    }[sel.sort]
    return [*first, *_in_file_order()]


def page(conn: Connection, sel: Selection, previous_id: str | None) -> list[dict[str, Any]]:
    """One page of the selection, each finding with its latest disposition (state,
    reviewer, when) and whether the run before found it."""
    query = (
        sa.select(
            *(findings.c[c] for c in LISTED_COLUMNS),
            _found_before(previous_id).label("found_before"),
        )
        .where(*_conditions(sel, previous_id))
        .order_by(*_ordered(sel))
        .limit(sel.per_page)
        .offset((sel.page - 1) * sel.per_page)
    )
    rows = [dict(r) for r in conn.execute(query).mappings()]
    decided = {d["finding_id"]: d for d in dsp.latest(conn, [r["finding_id"] for r in rows])}
    for row in rows:
        row["disposition"] = decided.get(row["finding_id"])
        row["state"] = tallied(row["disposition"])  # "pending" for a proposal
    return rows


def selected_ids(conn: Connection, sel: Selection, previous_id: str | None) -> list[str]:
    """Every finding of the selection (all pages), for a disposition set on all at once."""
    query = sa.select(findings.c.finding_id).where(*_conditions(sel, previous_id))
    return list(conn.execute(query.order_by(*_ordered(sel))).scalars())


@dataclass
class Place:
    """Where a finding stands in a selection: its number in it (None: the finding is not
    in it, as when its disposition changed under a filter by disposition), how many the
    selection holds, and the findings before and after it in the selection's order."""

    position: int | None
    total: int
    previous: str | None
    next: str | None

    def page(self, per_page: int) -> int:
        """The page of the list that shows it (the first where it is not in it)."""
        return (self.position - 1) // per_page + 1 if self.position else 1


def place(conn: Connection, sel: Selection, previous_id: str | None,
          finding_id: str) -> Place:
    """The finding's place in the selection, in one query: the selection and the finding
    itself (in it or not) numbered in the selection's order (a window function), and the
    rows on either side of the finding's number read."""
    of_run, *narrowing = _conditions(sel, previous_id)
    inside = sa.and_(sa.true(), *narrowing)
    numbered = (
        sa.select(
            findings.c.finding_id,
            sa.func.row_number().over(order_by=_ordered(sel)).label("n"),
            sa.case((inside, 1), else_=0).label("inside"),
            sa.func.sum(sa.case((inside, 1), else_=0)).over().label("total"),
        )
        .where(of_run, sa.or_(inside, findings.c.finding_id == finding_id))
        .subquery("numbered")
    )
    here = (sa.select(numbered.c.n).where(numbered.c.finding_id == finding_id)
            .scalar_subquery())
    rows = conn.execute(
        sa.select(numbered).where(numbered.c.n.between(here - 1, here + 1))
        .order_by(numbered.c.n)
    ).mappings().all()
    this = next((r for r in rows if r["finding_id"] == finding_id), None)
    if this is None:  # not a finding of the run
        return Place(None, 0, None, None)
    before = next((r["finding_id"] for r in rows if r["n"] == this["n"] - 1), None)
    after = next((r["finding_id"] for r in rows if r["n"] == this["n"] + 1), None)
    return Place(this["n"] if this["inside"] else None, int(this["total"] or 0), before,
                 after)


EXPORTED_COLUMNS = (
    "run_id", "finding_id", "table_id", "shoe_id", "round", "seq", "rule_id", "rule_title",
    "severity", "citation", "dealer_id", "amount", "message", "expected", "observed",
    "file", "line", "presence", "disposition", "reviewer", "decided_at", "note",
    "proposed", "approved_by",
)


def exported(conn: Connection, sel: Selection, previous_id: str | None,
             rule_titles: Mapping[str, str], part: int = 500) -> Iterator[list[tuple]]:
    """Every finding of the selection (all pages) in its order, with its latest
    disposition, as rows of EXPORTED_COLUMNS, PART rows at a time (read as they are
    sent: the selection is never held whole). A proposal (four eyes) is "pending", with
    the disposition proposed in `proposed`; an approved one names its supervisor."""
    last = (
        sa.select(dsp_table.c.disposition_id)
        .where(dsp_table.c.finding_id == findings.c.finding_id)
        .order_by(dsp_table.c.disposition_id.desc())
        .limit(1)
        .correlate(findings)
        .scalar_subquery()
    )
    query = (
        sa.select(
            *(findings.c[c] for c in ("run_id", "finding_id", "table_id", "shoe_id", "round",
                                      "seq", "rule_id", "severity", "citation", "dealer_id",
                                      "amount", "message", "expected", "observed", "file",
                                      "line")),
            _found_before(previous_id).label("found_before"),
            dsp_table.c.state, dsp_table.c.reviewer, dsp_table.c.decided_at, dsp_table.c.note,
            dsp_table.c.status, dsp_table.c.approved_by,
        )
        .select_from(findings.outerjoin(dsp_table, dsp_table.c.disposition_id == last))
        .where(*_conditions(sel, previous_id))
        .order_by(*_ordered(sel))
    )
    result = conn.execution_options(yield_per=part).execute(query)
    for rows in result.mappings().partitions():
        yield [
            (
                r["run_id"], r["finding_id"], r["table_id"], r["shoe_id"], r["round"], r["seq"],
                r["rule_id"], rule_titles.get(r["rule_id"], ""), r["severity"], r["citation"],
                r["dealer_id"], r["amount"], r["message"], r["expected"], r["observed"],
                r["file"], r["line"], "still present" if r["found_before"] else "new",
                PENDING if r["status"] == "proposed" else r["state"] or STATES[0],
                r["reviewer"], utc_text(r["decided_at"]), r["note"],
                r["state"] if r["status"] == "proposed" else None, r["approved_by"],
            )
            for r in rows
        ]


# --- one finding ------------------------------------------------------------------------


def finding_row(conn: Connection, run_id: str, finding_id: str) -> dict[str, Any] | None:
    query = sa.select(findings).where(
        findings.c.run_id == run_id, findings.c.finding_id == finding_id
    )
    row = conn.execute(query).mappings().first()
    return dict(row) if row else None


def runs_that_found(conn: Connection, finding_id: str) -> list[dict[str, Any]]:
    """Every run that found the finding, in the order they were stored."""
    query = (
        sa.select(
            runs.c.run_id,
            runs.c.started_at,
            runs.c.finished_at,
            runs.c.gaming_day,
            runs.c.window_from,
            runs.c.window_until,
            runs.c.period_start,
            runs.c.period_end,
            findings.c.severity,
        )
        .join(findings, findings.c.run_id == runs.c.run_id)
        .where(findings.c.finding_id == finding_id)
        .order_by(runs.c.finished_at, runs.c.run_id)
    )
    return [{**dict(r), "window": _audited(dict(r))} for r in conn.execute(query).mappings()]


def _audited(run: dict[str, Any]) -> str:
    """The period a stored run audited, in `auditor history`'s words."""
    period = {k: run[f"period_{k}"].isoformat() if run.get(f"period_{k}") else None
              for k in ("start", "end")}
    return audited({"window": window_words(run), "period": period})


def earlier_and_later(found_in: list[dict], run: dict[str, Any]) -> list[dict]:
    """The runs that found the finding, each marked earlier, this run or later."""
    at = _stored_order(run)
    out = []
    for r in found_in:
        order = _stored_order(r)
        when = "this run" if r["run_id"] == run["run_id"] else (
            "earlier" if order < at else "later")
        out.append({**r, "when": when})
    return out


def utc_minutes(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""
