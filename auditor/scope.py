"""What an audit reports on, and what it only reads as context.

A nightly log is cut at any hour (hand-history-v1 1.1): the rows recorded before it
(yesterday's file, the hours before a window) give its rounds their history. They
are read and replayed with the audited rows, so that every rule sees the shoe as it
was, and then left out of what the audit reports: their rounds are not counted and
get no findings.

A row is audited when its file is not a context file and its time is within the
window; the round-level rows of a round follow its `round_start` row (a round belongs
to the audited logs when its `round_start` is in them, and to a gaming day when it
starts within it), every other row (shoe-level rows, a round whose start was not
recorded) stands for itself. A finding belongs to the audit when the row it points at does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

import polars as pl

from .ingest import vocabulary as v
from .ingest.rows import rows_with_keys

IN_SCOPE = "in_scope"  # the column of each row's membership, where the audit has a scope
ROUND_IN_SCOPE = "round_in_scope"  # and of its round's (a round is counted by this)


@dataclass(frozen=True)
class Window:
    """The rounds that start from `start` (inclusive) until `until` (exclusive), in the
    facility's local time as the log writes it; either end may be open."""

    start: datetime | None = None
    until: datetime | None = None
    gaming_day: date | None = None  # the gaming day the window is, where it is one

    def __post_init__(self) -> None:
        if self.start and self.until and self.until <= self.start:
            raise ValueError("the window's end must come after its start")

    def covers(self, moment: pl.Expr) -> pl.Expr:
        inside = pl.lit(True)
        if self.start is not None:
            inside = inside & (moment >= self.start)
        if self.until is not None:
            inside = inside & (moment < self.until)
        return inside

    def as_dict(self) -> dict[str, str | None]:
        return {
            "gaming_day": self.gaming_day.isoformat() if self.gaming_day else None,
            "from": self.start.isoformat(timespec="seconds") if self.start else None,
            "until": self.until.isoformat(timespec="seconds") if self.until else None,
        }


def gaming_day(day: date, starts: time) -> Window:
    """The gaming day `day`: from its start (the house's gaming_day_start) to the next."""
    start = datetime.combine(day, starts)
    return Window(start, start + timedelta(days=1), day)


@dataclass(frozen=True)
class Scope:
    """The files read as context only (by file id), and the window audited."""

    context_files: tuple[int, ...] = ()
    window: Window | None = None

    @property
    def whole(self) -> bool:
        """Every row read is audited (no context file, no window)."""
        return not self.context_files and self.window is None

    def file_audited(self, file_id: pl.Expr) -> pl.Expr:
        return ~file_id.is_in(list(self.context_files)) if self.context_files else pl.lit(True)

    def own(self) -> pl.Expr:
        """A row's own membership: an audited file's, and in the window. A row without a
        time (damaged) goes by its file."""
        member = self.file_audited(pl.col(v.FILE_ID))
        if self.window is not None:
            member = member & self.window.covers(pl.col("time")).fill_null(True)
        return member

    def rows(self, ordered: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
        """Each row's membership (`ordered` sorted by table and seq, with `rid`) and its
        round's: a round goes by its round_start where it has one, and so do its
        round-level rows; every other row goes by its own."""
        own = ordered.select(self.own().alias(IN_SCOPE))[IN_SCOPE]
        rounds = _by_round_start(ordered, own)
        return _shoe_level_own(ordered, own, rounds), rounds.alias(ROUND_IN_SCOPE)


def _by_round_start(ordered: pl.DataFrame, values: pl.Series) -> pl.Series:
    """`values` (one per row of `ordered`, which has `rid`), each row taking its round's
    round_start row's value where the round has one."""
    started = ordered.select("rid", values, (pl.col("event") == "round_start").alias("_start"))
    return (
        started.filter("_start").group_by("rid").agg(pl.col(values.name).first())
        .join(ordered.select("rid"), on="rid", how="right", maintain_order="right")
    )[values.name].fill_null(values)


def _shoe_level_own(ordered: pl.DataFrame, own: pl.Series, rounds: pl.Series) -> pl.Series:
    """`rounds`, but a shoe-level row's own value (a shoe_offer or cover_card carries the
    round it precedes, and is not of it)."""
    shoe_level = ordered.select(pl.col("event").is_in(v.SHOE_EVENTS))
    return pl.select(
        pl.when(shoe_level.to_series()).then(own).otherwise(rounds).alias(own.name)
    ).to_series()


def as_round_starts(ordered: pl.DataFrame, values: pl.Series) -> pl.Series:
    """`values` with the round-level rows of a round that has a round_start taking that
    row's value: a round is where and when it began; a shoe-level row keeps its own."""
    return _shoe_level_own(ordered, values, _by_round_start(ordered, values))


def rows_in_scope(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of `frame` the audit reports on (all of them where it has no scope)."""
    return frame.filter(IN_SCOPE) if IN_SCOPE in frame.columns else frame


def rounds_in_scope(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of `frame` whose round the audit reports on."""
    return frame.filter(ROUND_IN_SCOPE) if ROUND_IN_SCOPE in frame.columns else frame


def findings_in_scope(found: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """The findings whose row (by table_id and seq, among `rows`) is audited, not context;
    all of them where the audit has no scope. A finding without a row is kept."""
    if IN_SCOPE not in rows.columns or found.is_empty():
        return found
    keys = ["table_id", "seq"]
    named = rows_with_keys(rows.select(*keys, IN_SCOPE), found.select(keys).drop_nulls(), keys)
    member = named.unique(keys, keep="first")  # a seq used twice (IN010) names one row
    return (
        found.join(member, on=keys, how="left", maintain_order="left")
        .filter(pl.col(IN_SCOPE).fill_null(True)).drop(IN_SCOPE)
    )
