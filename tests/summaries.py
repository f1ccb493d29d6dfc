"""Comparing two audits' summaries by what they found, not by how they ran."""

from __future__ import annotations

from datetime import datetime

from auditor import summary


def audited(result, run_at: datetime) -> dict:
    """summary.json of an audit less `execution` (its budget, parts and where they ran:
    what the comparison varies)."""
    built = summary.build(result, run_at)
    built.pop("execution")
    return built
