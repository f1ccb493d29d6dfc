"""Dispositions carried to a run: what reviewers had last decided about each of the run's
findings when it was audited, kept in its output folder (dispositions.json) for the report.

`auditor audit --store` reads them while it prepares the run (record), before the report
is rendered and before the run is written to the store. A disposition hangs on a
finding_id, not on a run, and a finding found again holds the id the earlier runs stored,
so the new run need not be in the store for its findings' dispositions to be read; and
the report is still rendered before the store write, so an audit whose report fails
still writes nothing to the store. A disposition recorded between that read and the end
of the audit shows in the next run's report (and in `auditor history` at once).

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

from . import MEANINGS, STATES, state_label
from .compare import utc_text

FILE = "dispositions.json"


def tally(finding_ids: Iterable[str], decided: dict[str, dict[str, Any]]) -> dict[str, int]:
    """The findings by their latest disposition, every state present; a finding with none
    is open."""
    counts = dict.fromkeys(STATES, 0)
    for finding_id in finding_ids:
        counts[decided[finding_id]["state"] if finding_id in decided else STATES[0]] += 1
    return counts


def document(
    store: str, run_id: str, finding_ids: list[str], latest: list[dict], read_at: datetime
) -> dict[str, Any]:
    """dispositions.json: the counts over the run's findings, and the latest disposition
    of each finding that has one (by finding_id; a finding not listed is open)."""
    decided = {
        d["finding_id"]: {
            "state": d["state"],
            "note": d["note"],
            "reviewer": d["reviewer"],
            "decided_at": utc_text(d["decided_at"]),
            "run_id": d["run_id"],  # the run it was set from
        }
        for d in latest
    }
    return {
        "store": store,
        "run_id": run_id,
        "read_at": utc_text(read_at),
        "counts": tally(finding_ids, decided),
        "dispositions": decided,
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
        "states": [
            {"state": s, "label": state_label(s), "count": doc["counts"].get(s, 0),
             "meaning": MEANINGS[s]}
            for s in STATES
        ],
    }
