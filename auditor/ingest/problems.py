"""Problems found while reading input, before they become findings."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

# The long form every input check reports in: one row per bad field of a row.
# `row` ties a problem to a parsed row (null when the record could not be
# parsed at all); `file_id`/`line` always say where it is in the input.
PROBLEM_SCHEMA = {
    "rule_id": pl.String,
    "row": pl.Int64,
    "file_id": pl.Int32,
    "line": pl.Int64,
    "field": pl.String,
    "observed": pl.String,
    "expected": pl.String,
    "message": pl.String,
}


@dataclass(frozen=True)
class Problem:
    """One problem found by a reader (rare: kept as Python objects)."""

    rule_id: str
    line: int | None
    field: str | None
    observed: str | None
    expected: str | None
    message: str


def problems_frame(problems: list[Problem], file_id: int) -> pl.DataFrame:
    rows = [
        {
            "rule_id": p.rule_id,
            "row": None,
            "file_id": file_id,
            "line": p.line,
            "field": p.field,
            "observed": p.observed,
            "expected": p.expected,
            "message": p.message,
        }
        for p in problems
    ]
    return pl.DataFrame(rows, schema=PROBLEM_SCHEMA)


def dollars(cents: pl.Expr) -> pl.Expr:
    """Integer cents as dollar text with two decimals: -2550 -> "-25.50"."""
    sign = pl.when(cents < 0).then(pl.lit("-")).otherwise(pl.lit(""))
    whole = (cents.abs() // 100).cast(pl.String)
    frac = (cents.abs() % 100).cast(pl.String).str.pad_start(2, "0")
    return pl.format("{}{}.{}", sign, whole, frac)
