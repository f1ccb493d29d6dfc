"""Small operations on polars series that the reading and both games share."""

from __future__ import annotations

import polars as pl
import pyarrow.compute as pc


def placed(values: pl.Series, at: pl.Series, size: int) -> pl.Series:
    """`size` rows of `values`' name and type, null but for `values` at the rows `at`: a
    frame's column filled in by row number (the rows found by a few keys), rather than
    the whole frame joined to them."""
    return values.clear(size).scatter(at, values)


def stable_order_by_code(code: pl.Series) -> pl.Series:
    """Row numbers in a stable order by a small integer code, the rows without a code
    last. Arrow sorts integers of a small range by counting them (one pass, where
    polars' sort compares): ten times faster here. Rows of equal codes keep their order."""
    order = pc.array_sort_indices(code.to_arrow())
    return pl.Series("order", order).cast(pl.get_index_type())
