"""A run compared with the run before it: new, still present, no longer present.

The run before (history.previous_run) is the last run of the same facility that audited
at least one of its tables to finish (be stored) before this run began: two audits that
overlap in time are not compared with each other. Findings are matched by finding_id:

- new: found now, not by the run before;
- still present: found by both;
- no longer present: found by the run before and not now, where this run audited the
  same ground again: the finding's table, over at least the period the run before
  audited it (or, for a finding about a file with no table, the same file);
- not audited again: found by the run before on ground this run did not audit (another
  night, another table, another file). Such a finding is not said to be gone: the run
  did not look.

`auditor audit --store` writes the comparison into its output folder as comparison.json
(the report renders from that folder only) and the report shows it as "Compared with the
previous run". This module needs no database library: the report reads it too.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

FILE = "comparison.json"
# what a comparison lists of each finding
LISTED = (
    "finding_id",
    "rule_id",
    "severity",
    "table_id",
    "shoe_id",
    "round",
    "seq",
    "dealer_id",
    "message",
)
EVERY_ROUND = "every round of its logs"  # a run without --gaming-day, --from or --until
KINDS = ("new", "still_present", "no_longer_present", "not_audited_again")
# which run a run is compared with, as the report and `auditor history` both say it
BEFORE = "the last to finish before this run began"
Span = tuple[datetime | None, datetime | None]


@dataclass
class Facts:
    """What a comparison needs of one run."""

    run: dict[str, Any]  # the run's row (schema.runs), or what it will be
    findings: list[dict[str, Any]]  # at least LISTED and file_sha256
    spans: dict[str, Span] = field(default_factory=dict)  # table: first and last event audited
    files: set[str] = field(default_factory=set)  # the audited inputs' SHA-256


def _within(before: Span | None, now: Span | None) -> bool:
    """Whether this run audited the table over at least the period the run before did."""
    if before is None or now is None:
        return False
    if None in before or None in now:  # a log without times: only the same (no) span
        return before == now
    return now[0] <= before[0] and before[1] <= now[1]


def _looked_again(finding: dict[str, Any], now: Facts, before: Facts) -> bool:
    table = finding.get("table_id")
    if table is not None:
        return _within(before.spans.get(table), now.spans.get(table))
    return finding.get("file_sha256") is not None and finding["file_sha256"] in now.files


def _listed(finding: dict[str, Any]) -> dict[str, Any]:
    return {k: finding.get(k) for k in LISTED}


def compare(now: Facts, before: Facts | None) -> dict[str, Any]:
    """The comparison as comparison.json holds it (lists in the findings' order)."""
    previous = before.findings if before else []
    ids_before = {f["finding_id"] for f in previous}
    ids_now = {f["finding_id"] for f in now.findings}
    kinds: dict[str, list[dict]] = {k: [] for k in KINDS}
    for f in now.findings:
        kinds["still_present" if f["finding_id"] in ids_before else "new"].append(_listed(f))
    for f in previous:
        if f["finding_id"] not in ids_now:
            gone = _looked_again(f, now, before)
            kinds["no_longer_present" if gone else "not_audited_again"].append(_listed(f))
    rules_now = Counter(f["rule_id"] for f in now.findings)
    rules_before = Counter(f["rule_id"] for f in previous)
    return {
        "run_id": now.run["run_id"],
        "started_at": utc_text(now.run.get("started_at")),
        "previous_run": run_facts(before.run) if before else None,
        "counts": {
            "findings": len(now.findings),
            "previous_findings": len(previous),
            **{k: len(v) for k, v in kinds.items()},
        },
        "by_rule": [
            {"rule_id": r, "now": rules_now[r], "previous": rules_before[r]}
            for r in sorted(rules_now | rules_before)
        ],
        **kinds,
    }


def compared_with(previous_run_id: str | None) -> str:
    """Which run a run was compared with, in words."""
    if previous_run_id is None:
        return ("compared with no run: none of the facility's runs on its tables finished "
                "before this run began")
    return f"compared with run {previous_run_id}, {BEFORE}"


def utc_text(moment: datetime | None) -> str | None:
    """A stored time (UTC, without tzinfo) as ISO 8601 with its Z."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def _iso(value: date | datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def window_words(run: dict[str, Any]) -> str:
    """The window a run audited, in words."""
    if run.get("gaming_day"):
        return f"gaming day {_iso(run['gaming_day'])}"
    if run.get("window_from") or run.get("window_until"):
        start = _iso(run.get("window_from")) or "the start of the logs"
        return f"{start} to {_iso(run.get('window_until')) or 'their end'}"
    return EVERY_ROUND


def run_facts(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run as comparison.json and `auditor history --format json` show it."""
    return {
        "run_id": run["run_id"],
        "started_at": utc_text(run["started_at"]),
        "finished_at": utc_text(run["finished_at"]),
        "window": window_words(run),
        "period": {"start": _iso(run.get("period_start")), "end": _iso(run.get("period_end"))},
        "findings": run["findings"],
        "out_dir": run["out_dir"],
        "report_id": run["report_id"],
    }


def write(comparison: dict[str, Any], store_name: str, out: Path) -> Path:
    path = out / FILE
    doc = {"store": store_name, **comparison}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def forget(out: Path) -> None:
    """An audit without a store leaves no comparison of an earlier audit in its folder."""
    (out / FILE).unlink(missing_ok=True)


def for_report(out: Path, listed: int = 10) -> dict[str, Any] | None:
    """What the report shows of OUT/comparison.json (None without one): the counts, the
    run before, the rules in either run and the first `listed` findings of each kind."""
    path = out / FILE
    if not path.exists():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    shown = {k: doc[k][:listed] for k in KINDS}
    return {
        **doc,
        "shown": shown,
        "listed": listed,
        "more": {k: len(doc[k]) - len(shown[k]) for k in KINDS},
    }
