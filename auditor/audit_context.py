"""What a game rule sees: the auditable rows of one game and the rules in force."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import polars as pl

from .house import HouseRules

GAP_SCHEMA = {"table_id": pl.String, "shoe_id": pl.String, "round": pl.Int64,
              "shuffle_seq": pl.Int64}


@dataclass
class GameContext:
    game: str
    events: pl.DataFrame  # rows of auditable rounds of this game, sorted by table_id, seq
    house: HouseRules
    params: dict[str, Any]  # the regulation's parameters in force on `on`
    on: date
    tables: pl.DataFrame  # one row per table in the log, with its house settings as columns
    # (table_id, shoe_id, round) of the rounds set aside (a lost row, the log's cut): gaps
    # in their shoes, where state carried across rounds resumes from the next fact; with
    # `shuffle_seq`, the seq of a shuffle among the set-aside rows (a shoe the log shows
    # began, though its opening rows are not judged)
    gaps: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=GAP_SCHEMA))
    _derived: dict[str, pl.DataFrame] = field(default_factory=dict)
    _building: dict[str, threading.Lock] = field(default_factory=dict)
    _locks: threading.Lock = field(default_factory=threading.Lock)

    def derived(self, name: str, build: Callable[[GameContext], pl.DataFrame]) -> pl.DataFrame:
        """A frame several rules share (e.g. the rounds replayed), built once per audit,
        by the first rule to ask: rules checked at once wait for it rather than build it
        again."""
        if name in self._derived:
            return self._derived[name]
        with self._locks:
            lock = self._building.setdefault(name, threading.Lock())
        with lock:
            if name not in self._derived:
                self._derived[name] = build(self)
        return self._derived[name]


def table_settings(house: HouseRules, game: str, table_ids: list[str]) -> pl.DataFrame:
    """House settings per table as columns, so rules can join them onto rounds."""
    rows = []
    for table_id in table_ids:
        table = house.table(table_id, game)
        settings = {
            k: val for k, val in table.settings.items() if not isinstance(val, (list, dict))
        }
        rows.append({"table_id": table_id, "pit": table.pit, "listed": table.listed, **settings})
    if not rows:
        return pl.DataFrame(schema={"table_id": pl.String, "pit": pl.String, "listed": pl.Boolean})
    return pl.DataFrame(rows, infer_schema_length=None)


def gaps_of(unauditable: pl.DataFrame, table_ids: pl.Series,
            events: pl.DataFrame | None = None) -> pl.DataFrame:
    """The rounds set aside of the tables `table_ids`, as GameContext.gaps; `events`
    (every row read, set aside or not) gives the shuffles among them."""
    key = ["table_id", "shoe_id", "round"]
    gaps = (unauditable.select(key).cast({c: GAP_SCHEMA[c] for c in key})
            .filter(pl.col("table_id").is_in(table_ids.implode())).unique())
    shuffles = None
    if events is not None and gaps.height:
        shuffles = (
            events.lazy().filter(pl.col("event") == "shuffle")
            .select(*[pl.col(c).cast(GAP_SCHEMA[c]) for c in key], "seq")
            .join(gaps.lazy(), on=key, how="semi")
            .group_by(key).agg(pl.col("seq").min().cast(pl.Int64).alias("shuffle_seq"))
            .collect()
        )
    if shuffles is None:
        gaps = gaps.with_columns(pl.lit(None, pl.Int64).alias("shuffle_seq"))
    else:
        gaps = gaps.join(shuffles, on=key, how="left")
    return gaps.select(list(GAP_SCHEMA)).sort(key)
