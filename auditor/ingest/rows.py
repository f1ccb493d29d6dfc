"""The rows of a frame named by a few keys: what the ingest, the scope and the findings
all look up (the rows of lost rounds, of a finding's shoe, of a finding's row)."""

from __future__ import annotations

import polars as pl

# The key columns that most nearly name a row, in that order: the rows wanted are few,
# so those with a wanted value of one such column are picked first (one column is
# cheaper to look up than the whole key), and only they are matched on every column.
_NARROWING = ("seq", "shoe_id", "round")


def rows_with_keys(events: pl.DataFrame, keys: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """The rows of `events` whose `on` columns are a row of `keys`. Usually there are
    no keys (no lost round, no finding): then no pass over the events at all."""
    if keys.is_empty():
        return events.clear()
    narrowing = next((c for c in _NARROWING if c in on), None)
    if narrowing is not None:
        events = events.filter(pl.col(narrowing).is_in(keys.get_column(narrowing).implode()))
    return events.join(keys.select(on), on=on, how="semi")
