"""Dispositions carried to a run: what reviewers had last decided about each of the run's
findings when it was audited, kept in its output folder (dispositions.json) for the report.

`auditor audit --store` reads them while it prepares the run (record), before the report
is rendered and before the run is written to the store. A disposition hangs on a
finding_id, not on a run, and a finding found again holds the id the earlier runs stored,
so the new run need not be in the store for its findings' dispositions to be read; and
the report is still rendered before the store write, so an audit whose report fails
still writes nothing to the store. A disposition recorded between that read and the end
of the audit shows in the next run's report (and in `auditor history` at once).

With four eyes, a finding whose latest disposition is a proposal counts as "pending"
(its entry says `pending: true` and who proposed it); an approved one names its
supervisor (`approved_by`). `auditor report --store` also writes the run's latest
sign-off (`signoff`: who, when, the counts then; `standing` false once withdrawn), which
the report's cover shows.

The report renders from the folder alone, as it does the comparison (compare). This
module needs no database library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from . import MEANINGS, PENDING, PENDING_MEANING, TALLIED, state_label, tallied
from .compare import utc_text

FILE = "dispositions.json"


def tally(finding_ids: Iterable[str], decided: dict[str, dict[str, Any]]) -> dict[str, int]:
    """The findings by their latest disposition, every state of TALLIED present; a finding
    with none is open, one whose latest is a proposal pending."""
    counts = dict.fromkeys(TALLIED, 0)
    for finding_id in finding_ids:
        counts[tallied(decided.get(finding_id))] += 1
    return counts


def _entry(d: dict[str, Any]) -> dict[str, Any]:
    status = d.get("status") or "decided"
    return {
        "state": d["state"],
        "note": d["note"],
        "reviewer": d["reviewer"],
        "decided_at": utc_text(d["decided_at"]),
        "run_id": d["run_id"],  # the run it was set from
        "status": status,
        "pending": status == "proposed",  # four eyes: proposed, not yet approved
        "proposed_by": d["reviewer"] if status in ("proposed", "approved") else None,
        "approved_by": d.get("approved_by"),
    }


def document(
    store: str, run_id: str, finding_ids: list[str], latest: list[dict], read_at: datetime,
    signoff: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """dispositions.json: the counts over the run's findings, the latest disposition of
    each finding that has one (by finding_id; a finding not listed is open), and the
    run's latest sign-off (signoffs.as_json; None: never signed off)."""
    decided = {d["finding_id"]: _entry(d) for d in latest}
    return {
        "store": store,
        "run_id": run_id,
        "read_at": utc_text(read_at),
        "counts": tally(finding_ids, decided),
        "dispositions": decided,
        "signoff": signoff,
    }


def write(doc: dict[str, Any], out: Path) -> Path:
    """OUT/dispositions.json, readable by its owner only (it holds reviewers' notes)."""
    path = out / FILE
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), 0o600)  # a file there before keeps no wider mode
        file.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


def forget(out: Path) -> None:
    """An audit without a store leaves no dispositions of an earlier run in its folder."""
    (out / FILE).unlink(missing_ok=True)


def for_report(out: Path) -> dict[str, Any] | None:
    """What the report shows of OUT/dispositions.json (None without one): the counts with
    each state's meaning, and the dispositions by finding_id."""
    path = out / FILE
    if not path.exists():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {
        **doc,
        # pending only where there is one (four eyes)
        "states": [
            {"state": s, "label": state_label(s), "count": doc["counts"].get(s, 0),
             "meaning": PENDING_MEANING if s == PENDING else MEANINGS[s]}
            for s in TALLIED
            if s != PENDING or doc["counts"].get(s)
        ],
        "signoff": _signoff_view(doc.get("signoff")),
    }


def _minutes(iso: str | None) -> str:
    """A time of the file (ISO, UTC, with Z) to the minute, as the report writes it."""
    return f"{iso[:16].replace('T', ' ')} UTC" if iso else ""


def _signoff_view(signoff: dict[str, Any] | None) -> dict[str, Any] | None:
    if not signoff:
        return None
    counted = [f"{n:,} {state_label(s)}" for s, n in signoff["counts"].items() if n]
    return {
        **signoff,
        "at_text": _minutes(signoff["at"]),
        "withdrawn_text": _minutes(signoff.get("withdrawn_at")),
        "counts_text": " · ".join(counted) or "no finding",
    }
