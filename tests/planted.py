"""Where the audit reports a fault the simulator planted (its truth row): the findings of
the fault's rule on its table and shoe, at its row or in its round (a fault seen across
rounds may be reported at another of the round's rows), else anywhere in its round."""

from __future__ import annotations

import polars as pl


def reporting(fault: dict) -> pl.Expr:
    """The findings that report `fault` (a row of a simulation's truth)."""
    same = (
        (pl.col("rule_id") == fault["rule_id"])
        & (pl.col("table_id") == fault["table_id"])
        & (pl.col("shoe_id") == fault["shoe_id"])
    )
    if fault["seq"] is not None:
        at = pl.col("seq") == fault["seq"]
        if fault["round"] is not None:
            at = at | (pl.col("round") == fault["round"])
        return same & at
    if fault["round"] not in (None, 0):
        return same & (pl.col("round") == fault["round"])
    return same
