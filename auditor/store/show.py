"""`auditor history` as text: aligned columns a person reads in a terminal or a mail."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..rules.catalog import REGISTRY
from . import PENDING, STATES, TALLIED, state_label
from .compare import EVERY_ROUND, compared_with

NEW_LISTED = 30  # new findings of the latest run listed in text (JSON lists every one)
MESSAGE_WIDTH = 90
TITLE_WIDTH = 60
EXPLAINED = (
    "new: not found by the run before; still: found by both; gone: no longer present, on "
    "tables (or files) this run audited again over the same period; not again: found by the "
    "run before on what this run did not audit (another night, table or file). The run "
    "before (compared with) is the last run of the facility that audited one of the run's "
    "tables to finish before the run began: two runs that overlapped in time are not "
    "compared with each other."
)


def columns(headers: list[str], rows: list[list[Any]], right: set[int]) -> list[str]:
    """Rows under their headers, each column as wide as its widest cell; the columns in
    `right` (numbers) aligned right."""
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(r[n]) for r in cells) for n in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            c.rjust(w) if n in right else c.ljust(w)
            for n, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(parts).rstrip())
    return lines


def local(iso_utc: str | None) -> str:
    """A stored time (ISO, UTC) in this machine's local time, to the minute."""
    if not iso_utc:
        return ""
    moment = datetime.fromisoformat(iso_utc.replace("Z", "+00:00")).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def audited(run: dict[str, Any]) -> str:
    """The period a run audited, as the runs are listed: its window (a gaming day, --from
    and --until), else the times of its first and last rounds."""
    if run["window"] != EVERY_ROUND:
        return run["window"]
    start, end = run["period"]["start"], run["period"]["end"]
    if not start:
        return "no round"
    return f"{start[:16].replace('T', ' ')} to {end[:16].replace('T', ' ')}"


def _where(f: dict[str, Any]) -> str:
    parts = [f["table_id"] or "(no table)"]
    if f.get("shoe_id"):
        parts.append(f"shoe {f['shoe_id']}")
    if f.get("round"):
        parts.append(f"round {f['round']}")
    if f.get("seq") is not None:
        parts.append(f"seq {f['seq']}")
    return " ".join(parts)


def _short(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= MESSAGE_WIDTH else text[: MESSAGE_WIDTH - 1] + "…"


def runs_text(store: str, since: str | None, report: dict[str, Any]) -> str:
    runs = report["runs"]
    head = f"{len(runs)} run{'s' if len(runs) != 1 else ''} in {store}"
    head += f" started since {since}" if since else ""
    if not runs:
        return head + "."
    rows = [
        [
            local(r["started_at"]),
            r["run_id"],
            audited(r),
            r["tables"],
            f"{r['rounds_audited']:,}",
            f"{r['findings']:,}",
            f"{r['errors']:,}",
            f"{r['warnings']:,}",
            f"{r['new']:,}",
            f"{r['still_present']:,}",
            f"{r['no_longer_present']:,}",
            f"{r['not_audited_again']:,}",
            r["previous_run_id"] or "(none)",
        ]
        for r in runs
    ]
    headers = [
        "started",
        "run",
        "audited",
        "tables",
        "rounds",
        "findings",
        "errors",
        "warnings",
        "new",
        "still",
        "gone",
        "not again",
        "compared with",
    ]
    if len({r["facility"] for r in runs}) > 1:  # a store of several facilities names each
        headers.insert(2, "facility")
        rows = [
            [*row[:2], r["facility"] or "", *row[2:]] for row, r in zip(rows, runs, strict=True)
        ]
    numbers = set(range(len(headers) - 10, len(headers) - 1))
    lines = [head + ":", "", *columns(headers, rows, numbers), "", EXPLAINED, ""]
    lines += dispositions_text(runs)
    latest, new = runs[-1], report["latest_new"]
    compared = compared_with(latest["previous_run_id"])
    lines += ["", f"New in the latest run, {latest['run_id']}, {compared}: {len(new)}"]
    listed = [
        [f["rule_id"], f["severity"], _where(f), _short(f["message"])] for f in new[:NEW_LISTED]
    ]
    lines += (
        ["  " + line for line in columns(["rule", "severity", "where", "message"], listed, set())]
        if listed
        else []
    )
    if len(new) > NEW_LISTED:
        lines.append(f"  ... and {len(new) - NEW_LISTED:,} more (--format json lists them all)")
    return "\n".join(lines)


def dispositions_text(runs: list[dict[str, Any]]) -> list[str]:
    """Each run's findings by their latest disposition, a line per run, with its sign-off
    where a run has one; one sentence where no reviewer has decided on any finding yet.
    The pending column (four eyes: proposals not yet approved) is there where a run has
    one."""
    decided = any(n for r in runs for state, n in r["dispositions"].items()
                  if state != STATES[0])
    signed = any(r.get("signoff") for r in runs)
    if not decided and not signed:
        return [
            "No finding of these runs has a disposition yet: every one is open "
            "(`auditor review` records what reviewers decide)."
        ]
    shown = TALLIED if any(r["dispositions"].get(PENDING) for r in runs) else STATES
    rows = [[r["run_id"], *(f"{r['dispositions'].get(s, 0):,}" for s in shown)] for r in runs]
    headers = ["run", *map(state_label, shown)]
    if signed:
        headers.append("signed off")
        for row, r in zip(rows, runs, strict=True):
            row.append(_signoff_cell(r.get("signoff")))
    return [
        "Findings by disposition (what reviewers last decided each is; a finding found "
        "again keeps its disposition, one never decided is open"
        + (", one proposed and not yet approved pending" if shown is TALLIED else "")
        + (("; signed off: by whom and when (local time), a supervisor's once none of "
            "the run's findings was open or pending; withdrawn when one changed since")
           if signed else "") + "):",
        "",
        *columns(headers, rows, set(range(1, len(shown) + 1))),
    ]


def _signoff_cell(signoff: dict[str, Any] | None) -> str:
    if not signoff:
        return ""
    if signoff["standing"]:
        return f"{signoff['by']} {local(signoff['at'])}"
    return f"withdrawn {local(signoff['withdrawn_at'])}"


def _title(rule_id: str) -> str:
    title = REGISTRY.get(rule_id).title if rule_id in REGISTRY else ""
    return title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1] + "…"


def recurring_text(store: str, since: str | None, result: dict[str, Any]) -> str:
    by, rows = result["by"], result["recurring"]
    span = f"{result['runs_in_range']} run{'s' if result['runs_in_range'] != 1 else ''}"
    span += f" started since {since}" if since else ""
    if by == "dealer" and not rows:
        return (
            f"No finding of the {span} in {store} names a dealer (logs name the dealer "
            "of a round in `dealer_id`, hand-history 1.1)."
        )
    if not rows:
        return f"No finding in the {span} in {store}."
    out_of = {"table": "runs that audited the table", "dealer": "runs whose logs name the dealer"}
    out_of = out_of.get(by, "runs")
    heading = {"table": "Rules per table", "dealer": "Rules per dealer", "rule": "Rules"}[by]
    lines = [
        f"{heading} over the {span} in {store}: in how many runs each found something "
        f"(of the {out_of}), how many findings (one found again by a later run counts "
        "once), and when the last run that found one was stored.",
        "",
    ]
    key = {"table": "table_id", "dealer": "dealer_id"}.get(by)
    headers = ([by] if key else []) + ["rule", "title", "runs", "findings", "last found"]
    table = [
        ([r[key] if r[key] is not None else "(none)"] if key else [])
        + [
            r["rule_id"],
            _title(r["rule_id"]),
            f"{r['runs']} of {r['of_runs']}",
            f"{r['findings']:,}",
            local(r["last_found"]),
        ]
        for r in rows
    ]
    first = 3 if key else 2
    lines += columns(headers, table, {first, first + 1})
    return "\n".join(lines)


def utc_date_start(day: datetime) -> datetime:
    """The start of a local calendar day, in UTC without tzinfo (as the store keeps times)."""
    return day.astimezone().astimezone(UTC).replace(tzinfo=None)
