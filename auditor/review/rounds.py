"""A finding's round replayed, as the report shows it: read from the run's output folder
(runs.out_dir), its round_details.parquet (details), rendered by report.replays.

The store keeps findings, not replays: where the folder is gone, holds another run now
(an audit written again into the same --out), or did not replay the round, the page says
so in a sentence instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .. import details
from ..report import replays


@dataclass
class RoundShown:
    replay: replays.Replay | None
    why: str = ""  # why there is no replay, a sentence


def _folder_run(out: Path) -> str | None:
    try:
        return json.loads((out / "summary.json").read_text(encoding="utf-8")).get("run_id")
    except (OSError, ValueError, AttributeError):
        return None


def _round_row(path: Path, finding: dict[str, Any]) -> dict[str, Any] | None:
    shoe = pl.col("shoe_id").eq_missing(pl.lit(finding["shoe_id"], pl.String))
    rows = (
        pl.scan_parquet(path)
        .filter(pl.col("table_id") == finding["table_id"], shoe,
                pl.col("round") == finding["round"])
        .collect()
    )
    return rows.row(0, named=True) if rows.height else None


def round_of(run: dict[str, Any], finding: dict[str, Any]) -> RoundShown:
    """The finding's round replayed from the run's folder, or why it cannot be."""
    if finding.get("table_id") is None or not finding.get("round"):
        return RoundShown(None, "This finding is about a shoe, a table or a file as a whole: "
                                "it has no round to replay.")
    out = Path(run["out_dir"])
    if not out.is_dir():
        return RoundShown(None, f"The run's output folder {out} is no longer there, so its "
                                "round cannot be replayed.")
    if _folder_run(out) != run["run_id"]:
        return RoundShown(None, f"The run's output folder {out} now holds another audit, so "
                                "this run's round cannot be replayed from it.")
    path = out / details.FILE
    if not path.exists():
        return RoundShown(None, f"The run's output folder {out} has no {details.FILE}, so "
                                "the round cannot be replayed.")
    try:
        row = _round_row(path, finding)
        cap = details.read(out)[1] if row is None or not row["detailed"] else None
    except (OSError, pl.exceptions.PolarsError) as exc:
        return RoundShown(None, f"{path} cannot be read ({exc}).")
    if row is not None and row["detail"]:
        show = replays.VIEWS.get(row["game"])
        if show is not None:
            return RoundShown(show(json.loads(row["detail"])))
    if row is None or not row["detailed"]:
        kept = f"{cap} findings per rule" if cap is not None else "some findings per rule"
        return RoundShown(None, f"The round was not replayed at audit time (the audit kept "
                                f"replays for {kept}; `auditor audit --detail-per-rule N` "
                                "keeps more).")
    return RoundShown(None, "Not replayed: the round is reported as not fully auditable "
                            "(see IN014), or its game was not audited.")
