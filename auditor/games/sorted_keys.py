"""Keys flagged sorted, for both games' frames.

Polars groups and joins on a column flagged sorted by reading runs of rows and
merging, not by hashing: several times faster on the event frames. The flag is
set only where the column is sorted (checked, or made so): in a faulty log a row
can stray into another round, and a wrong flag would group it wrongly.
"""

from __future__ import annotations

import polars as pl


def marked_sorted(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """`frame` with `column` flagged sorted where it is (ascending, without nulls)."""
    values = frame.get_column(column)
    if values.null_count() or not values.is_sorted():
        return frame
    return frame.with_columns(pl.col(column).set_sorted())


def sorted_by(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """`frame` stably sorted by `column` (moved only where it is not sorted yet), and
    flagged so."""
    if not frame.get_column(column).is_sorted():
        frame = frame.sort(column, maintain_order=True)
    return frame.with_columns(pl.col(column).set_sorted())
