"""Exports read through a profile, as the audit takes them: each export file, what was
read of it, and its events (held, or spilled by table)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from ..ingest import spill
from ..ingest import vocabulary as v
from ..ingest.partition import InputFile
from ..ingest.problems import Problem
from ..ingest.readers import RawFile
from ..ingest.sources import Source as LogSource
from .cards import has_suits
from .layouts import FILE
from .model import Cards, Profile, Source

TEXT = {c: pl.String for c in v.COLUMNS}
UNMAPPED = {FILE: pl.Int32, v.LINE: pl.Int64, "field": pl.String, "value": pl.String}


@dataclass
class Export:
    """One export file and the source that reads it."""

    path: Path
    source: Source
    # (1.1) one file, two layouts: the wagers source that reads the file too (the coups
    # source is `source`), and the reading of it (its Export, not counted on its own)
    also: Source | None = None
    companion: Export | None = None
    rows: int = 0
    sha256: str = ""
    size: int = 0
    problems: list[Problem] = field(default_factory=list)
    repeats: int = 0  # rows sent again (repeat_key), not read again
    no_event: int = 0  # rows whose event is mapped to none
    unread: int = 0  # rows that made no event, each reported (a coup or wager row)
    missing: list[str] = field(default_factory=list)  # the format's columns it cannot give
    header_line: int | None = None  # where a missing column would have been named
    made: int = 0  # rows that made events
    events: int = 0  # events made
    given: set[str] = field(default_factory=set)  # the format's columns its events hold
    seen: bool = False  # read once already (a log read in parts of tables reads it again)
    # values no map covers, (column, value) -> [rows, first line, last line]; and rows
    # whose repeat_key repeats with another cell different, [rows, first, last]
    unmapped_found: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    differ_found: list[int] = field(default_factory=list)
    # (1.1) the rounds each value no map covers withholds, (column, value) -> their keys;
    # and the lines of the rows holding such a value that made events (each withholds
    # the round it carries)
    unmapped_rounds: dict[tuple[str, str], set[tuple]] = field(default_factory=dict)
    unmapped_lines: set[int] = field(default_factory=set)
    elements_no_event: int = 0  # (1.1) list elements mapped to "" (dropped)


@dataclass
class Translated:
    profile: Profile
    exports: list[Export]
    events: list[pl.DataFrame]  # per export file: its events, the format's columns as text
    skipped: list[Path]  # files of a folder or glob that no source reads
    # (file, line, field, value) of cells whose value no map covers: their rows' own
    # findings are said once by that value's finding
    unmapped: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=UNMAPPED))
    # per table: the layouts and card notations its rows come through
    tables: dict[str, set[str]] = field(default_factory=dict)
    context_files: int = 0  # the last exports are context (--context)
    decks_of: Callable[[str], int | None] | None = None  # a blackjack table's decks
    # (table_id, shoe_id, round) of rounds with a settlement of no recorded order
    unordered: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema={"table_id": pl.String, "shoe_id": pl.String, "round": pl.Int64}))
    # a log too large to hold whole: each file's events written by table, a part of its
    # tables at a time (spill.Spilled), with the rows per table and each file's first day
    spilled: list[spill.Spilled] | None = None
    table_rows: list[pl.DataFrame] = field(default_factory=list)
    days: dict[int, date] = field(default_factory=dict)  # each file's first day
    text_limit: int | None = None  # the most text one export may hold (None: no limit)
    # (file, line, table_id, shoe_id, round) of the rows read in the part read now that
    # carry a round (coups and joined wagers rows; events rows)
    row_rounds: list[pl.DataFrame] = field(default_factory=list)

    def accounting(self) -> dict[str, int | bool]:
        """The audited exports' rows: each made events, was a repeat, was mapped to no
        event, or made none and was reported (summary.json `rows.export`)."""
        audited = self.exports[:len(self.exports) - self.context_files]
        counts = {
            "read": sum(e.rows for e in audited),
            "made_events": sum(e.made for e in audited),
            "events": sum(e.events for e in audited),
            "repeats": sum(e.repeats for e in audited),
            "no_event": sum(e.no_event for e in audited),
            "reported_without_events": sum(e.unread for e in audited),
            # (1.1) list elements mapped to "" (not rows: outside the balance)
            "elements_no_event": sum(e.elements_no_event for e in audited),
        }
        counts["balanced"] = counts["read"] == (
            counts["made_events"] + counts["repeats"] + counts["no_event"]
            + counts["reported_without_events"])
        return counts

    def shoes_unrecorded(self) -> frozenset[str]:
        """The tables given by coups sources that make no shuffles (no shoe_starts): their
        shoes are not recorded, and no round of theirs lacks a shuffle it could have had
        (export-profiles-v1: rules on shoes are not evidenced, and no finding per shoe
        says so)."""
        return frozenset(t for t, marks in self.tables.items()
                         if "coups" in marks and "shoe_starts" not in marks)

    def named(self) -> list[tuple[LogSource, InputFile, RawFile | spill.Spilled]]:
        """Each export file as the audit reads a log file: where it is, what it is (its
        rows: the events made from it) and its events (held, or spilled by table)."""
        out = []
        held = self.spilled if self.spilled is not None else self.raws()
        for export, raw in zip(self.exports, held, strict=True):
            source = log_source(export)
            out.append((source, InputFile(export.path, source.encoding + (
                ".gz" if source.gzip else ""), export.events, export.sha256, export.size),
                raw))
        return out

    @property
    def sources(self) -> list[LogSource]:
        """The exports audited (not context), as log sources."""
        return [log_source(e) for e in self.exports[:len(self.exports) - self.context_files]]

    @property
    def context(self) -> list[LogSource]:
        return [log_source(e) for e in self.exports[len(self.exports) - self.context_files:]]

    def raws(self) -> list[RawFile]:
        """Each export file's events as the rows of a log file (its own problems with
        them; the format's columns the profile does not give are missing)."""
        out = []
        for export, events in zip(self.exports, self.events, strict=True):
            frame = as_log_rows(events, held=True)
            out.append(RawFile(frame, list(export.problems), 0, list(export.missing),
                               export.header_line))
        return out


def lines_text(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first} to {last}"


def rows_text(rows: int) -> str:
    return "1 row has" if rows == 1 else f"{rows} rows have"


def log_source(export: Export) -> LogSource:
    kind = export.source.format_of(export.path.name) or "csv"
    return LogSource(export.path, kind, export.path.name.lower().endswith(".gz"))


def made_columns(source: Source) -> set[str]:
    """The format's columns a source gives by its layout, mapped or not."""
    made = {"table_id", "game", "shoe_id", "round", "seq", "event"}
    if source.layout == "coups":
        made |= {"target", "card", "decks"} if source.shoe_starts else {"target", "card"}
    if source.layout == "wagers":
        made |= {"seat", "bet", "amount", "mode"}
    if source.layout == "coups" and "net" in source.columns:  # (1.1) net results
        made |= {"bet", "amount"}
    return made | set(source.columns)


def as_log_rows(events: pl.DataFrame, held: bool = False) -> pl.DataFrame:
    """A file's events as the rows of a log file: the format's columns as text (times
    that were all read, as times), and `line`. `held` (rows held whole, sent as they are
    to the worker process): a column no event fills is left out rather than written as
    nulls (the rows are typed as a file's are, a column it lacks made null there; which
    columns the export cannot give is said apart, Export.missing), `ts` kept."""
    columns = v.COLUMNS
    if held and events.height:
        present = [c for c in v.COLUMNS if c in events.columns]
        empty = dict(zip(present, events.select(
            pl.col(present).null_count() == pl.len()).row(0), strict=True))
        columns = [c for c in v.COLUMNS if c == "ts" or not empty.get(c, True)]
    return events.select(
        *[pl.col(c) if c == "ts" and isinstance(events.schema[c], pl.Datetime)
          else pl.col(c).cast(pl.String) if c in events.columns
          else pl.lit(None, pl.String).alias(c) for c in columns],
        pl.col(v.LINE).cast(pl.Int64))



def note_table(out: Translated, frame: pl.DataFrame, layout: str, cards: Cards | None) -> None:
    """What the table's rows come through: the layout, and a notation without suits."""
    for table in frame["table_id"].drop_nulls().unique().to_list():
        out.tables.setdefault(table, set()).add(layout)
        if not has_suits(cards):
            out.tables[table].add("notation:suitless")


