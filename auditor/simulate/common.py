"""What the baccarat and blackjack simulators share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import polars as pl

# truth.tsv: one row per planted fault, where it is and the rule that must find it
TRUTH_SCHEMA = {
    "table_id": pl.String,
    "shoe_id": pl.String,
    "round": pl.Int64,
    "seq": pl.Int64,
    "fault": pl.String,
    "rule_id": pl.String,
    "note": pl.String,
}


def truth_frame(truths: Iterable[Any]) -> pl.DataFrame:
    """The planted faults (objects with TRUTH_SCHEMA's attributes), in log order."""
    rows = list(truths)
    return pl.DataFrame(
        {name: [getattr(t, name) for t in rows] for name in TRUTH_SCHEMA},
        schema=TRUTH_SCHEMA,
    ).sort("table_id", "shoe_id", "round", "seq", nulls_last=False, maintain_order=True)


def offset_text(start: datetime) -> str:
    """The UTC offset written after each timestamp, e.g. "-05:00" ("" for local time)."""
    offset = start.utcoffset()
    if offset is None:
        return ""
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


# Dealers rotate: each deals a table for a down of 20 minutes, then moves to the next
# table, one more dealer than tables so that one is on a break in each down
DOWN_SECONDS = 20 * 60


def dealer_on(
    prefix: str, tables: int, table: pl.Expr, seconds: pl.Expr, event: pl.Expr
) -> pl.Expr:
    """`dealer_id` of a row (hand-history-v1 1.1): on round_start the dealer of the
    round, on shuffle who shuffled, null on the other rows. `table`: the table's index;
    `seconds`: the row's time on the table clock; dealers are named `prefix` and 01, 02..."""
    crew = tables + 1
    number = (table.cast(pl.Int64) + seconds.cast(pl.Int64) // DOWN_SECONDS) % crew + 1
    name = pl.lit(prefix) + number.cast(pl.String).str.zfill(2)
    return pl.when(event.cast(pl.String).is_in(["round_start", "shuffle"])).then(name)


class TableRounds:
    """Plays the tables' rounds in turn and hands out fault variants in turn.

    A subclass sets `tables` (each with `budget`, `done`, `play_round()`, `flush()`),
    `planner` (with `rounds_done`) and calls `TableRounds.__init__`.
    """

    tables: list[Any]
    planner: Any

    def __init__(self) -> None:
        self._turns: Counter[str] = Counter()

    def turn(self, kind: str, variants: tuple) -> Any:
        """The next variant of a fault kind, in turn, so that each one shows up."""
        self._turns[kind] += 1
        return variants[(self._turns[kind] - 1) % len(variants)]

    def run(self) -> None:
        longest = max((t.budget for t in self.tables), default=0)
        for _ in range(longest):
            for table in self.tables:
                if table.done < table.budget:
                    table.play_round()
                    self.planner.rounds_done += 1
        for table in self.tables:
            table.flush()
