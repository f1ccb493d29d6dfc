"""Exports read through a profile: every file's rows as the format's events, each at
its export file and line, and what could not be read, as input problems.

Each file is read whole and its cells mapped at once (cells, times, cards); then the
rows of each layout become events (layouts; coups and wagers: coups), numbered per table
in the order the contract gives. The events of each file are then handed to the audit as
that file's rows (`Translated.raws`), so that every finding points at the export's own
line; exports too large to hold are read a part of their tables at a time (parts).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import polars as pl

from .. import budget
from ..ingest import sequence
from ..ingest import vocabulary as v
from ..ingest.chunks import GZIP_RATIO
from ..ingest.problems import Problem
from ..ingest.sources import SourceError, sha256_of
from . import ProfileError, cells, layouts, times
from .cards import codes
from .coups import coup_events, wagers_without_coups
from .files import (
    absent_keys,
    absent_message,
    check_readers,
    csv_header,
    csv_lines,
    files_named,
    lines_of,
    named_columns,
    named_twice,
    own_built_ins,
    read_typed,
    read_whole,
    readers_of,
    sources_of,
    sql_columns,
    text_of,
    with_built_ins,
)
from .layouts import FILE, ROW, TABLE_ORDER
from .lists import HANDS, hands_of
from .model import BUILT_INS, LIST_COLUMNS, Cards, Profile, Source
from .parts import translate_in_parts
from .translated import (
    TEXT,
    UNMAPPED,
    Export,
    Translated,
    lines_text,
    made_columns,
    note_table,
    rows_text,
)

# The problems found here, by rule id (their titles and docs: auditor.rules.exports; the
# coups' and wagers': .coups)
EX_VALUE_NOT_MAPPED = "EX001"
EX_REPEAT_KEY_DIFFERS = "EX002"
EX_LIST_UNREADABLE = "EX007"


def translate(profile: Profile, arguments: list[str], context: list[str] = (),
              decks_of: Callable[[str], int | None] | None = None,
              memory: int | None = None, workdir: Path | None = None) -> Translated:
    """Every file the arguments (then the context arguments) name, read through the
    profile, as one log: a table's rows in several files are one sequence. A SourceError
    where a file named itself has no source; a ProfileError where a file lacks a mapped
    column. `decks_of`: a blackjack table's decks (the house rules'), for the shuffles a
    coups source's new shoes make where it maps no `decks`. `memory`: the budget in bytes
    the exports are read within: held whole where they fit, else (with a `workdir`) read
    a part of their tables at a time and spilled there, else a budget.BudgetError
    before any is read."""
    skipped: list[Path] = []
    audited = _exports(profile, list(arguments), skipped)
    later = _exports(profile, list(context), skipped)
    both = {str(e.path) for e in audited} & {str(e.path) for e in later}
    if both:
        raise SourceError(f"{sorted(both)[0]} is given both as a log to audit and as context")
    exports = [*audited, *later]
    out = Translated(profile, exports, [], skipped, context_files=len(later))
    out.decks_of = decks_of
    text = sum(_bytes_held(e.path) for e in exports)
    whole = True
    if memory is not None:
        out.text_limit = budget.export_text_limit(memory)
        try:
            budget.exports_fit(text, memory)
        except budget.BudgetError:
            if workdir is None:
                raise
            whole = False
    # a BudgetError while the files are read (a gzip file that holds more than
    # text_limit) stops the audit: read in parts, each file is still read whole
    if whole:
        out.events = _translate_part(out, None)
    else:
        translate_in_parts(out, memory, workdir, _translate_part)
    _finish(out)
    for export, spilled in zip(out.exports, out.spilled or [], strict=False):
        # what the file itself holds is said with the first part of the audit
        spilled.problems, spilled.missing = export.problems, export.missing
        spilled.header_line = export.header_line
    return out


def _translate_part(out: Translated, tables: list[str] | None,
                    files: list[int] | None = None) -> list[pl.DataFrame]:
    """The events of `tables` (None: every table) made from `files` (None: every file),
    per export file (in table order: an events file's rows in its own order, so that a
    mapped seq going backwards in the file is seen; made events by seq)."""
    exports = out.exports
    paths = [str(e.path) for e in exports]
    numbers = range(len(exports)) if files is None else files
    made: list[pl.DataFrame] = []
    by_layout: dict[str, list[pl.DataFrame]] = {"events": [], "coups": [], "wagers": []}
    out.row_rounds = []
    marked = out.unmapped.height  # the cells no map covers read before this part
    for n in numbers:
        by_layout[exports[n].source.layout].append(_cells(out, n, exports[n], tables))
        if exports[n].companion is not None:  # (1.1) one file read as coups and wagers
            by_layout["wagers"].append(_cells(out, n, exports[n].companion, tables))
    _check_kinds(out, by_layout)
    if by_layout["events"]:
        made.append(_events(out, pl.concat(by_layout["events"], how="diagonal_relaxed"), paths))
    if by_layout["coups"]:
        made.append(coup_events(out, by_layout, paths))
    elif by_layout["wagers"]:
        wagers_without_coups(out, pl.concat(by_layout["wagers"], how="diagonal_relaxed"))
    every = pl.concat(made, how="diagonal_relaxed") if made else pl.DataFrame(
        schema={**TEXT, v.LINE: pl.Int64, FILE: pl.Int32, ROW: pl.Int64})
    _withheld_by_unmapped(out, out.unmapped.slice(marked))
    parts = every.partition_by(FILE, as_dict=True, maintain_order=True)
    found = []
    for n, export in enumerate(exports):
        events = parts.get((n,), every.clear())
        export.made += events[ROW].n_unique() if events.height else 0
        export.events += events.height
        export.given |= {c for c in v.COLUMNS if c in events.columns
                         and events[c].null_count() < events.height}
        found.append(events)
    return found


def _withheld_by_unmapped(out: Translated, strays: pl.DataFrame) -> None:
    """(1.1) The rounds the rows holding a value no map covers carry (`strays`: those
    read in this part): each such round is withheld, never audited with the value read
    as nothing. Counted per value, and noted per row for its withholding (_finish)."""
    if not strays.height or not out.row_rounds:
        return
    rounds = pl.concat([r.select(FILE, v.LINE, "table_id", "shoe_id",
                                 pl.col("round").cast(pl.String)) for r in out.row_rounds])
    found = strays.join(rounds.unique(), on=[FILE, v.LINE], how="inner")
    for number, column, value, table, shoe, round_ in found.select(
            FILE, "field", "value", "table_id", "shoe_id", "round").unique().iter_rows():
        out.exports[number].unmapped_rounds.setdefault((column, value), set()).add(
            (table, shoe, round_))
    for number, lines in found.group_by(FILE).agg(pl.col(v.LINE).unique()).iter_rows():
        out.exports[number].unmapped_lines |= set(lines)
    marks = found.unique([FILE, v.LINE]).select(FILE, v.LINE, "table_id", "shoe_id", "round")
    for number, line, table, shoe, round_ in marks.iter_rows():
        out.exports[number].problems.append(withholding(line, table, shoe, round_))


# The message of a row's note that a value no map covers withholds its round: no finding
# of its own (quiet drops it; the value's finding counts the rows and rounds)
WITHHELD = "(withheld: a value no map covers)"


def withholding(line: int, table: str | None, shoe: str | None, round_: str | None
                ) -> Problem:
    """A row's note that its round is withheld for a value no map covers: at its line,
    naming the round it carries (read from it where no event is at that line)."""
    where = json.dumps({"table_id": table, "shoe_id": shoe, "round": round_})
    return Problem(EX_VALUE_NOT_MAPPED, line, None, where, None, WITHHELD)


def _finish(out: Translated) -> None:
    """What is said once per file, the whole log read: the values no map covers, rows
    whose repeat_key repeats with a cell changed, the columns its events lack."""
    for export in out.exports:
        source = export.source
        companion = export.companion
        if companion is not None:  # what the second reading of the file found in it
            export.problems += [p for p in companion.problems if p.rule_id not in
                                ("IN001", "IN002")]
            for key, seen in companion.unmapped_found.items():
                export.unmapped_found.setdefault(key, seen)
            for key, rounds in companion.unmapped_rounds.items():
                export.unmapped_rounds.setdefault(key, set()).update(rounds)
            export.elements_no_event += companion.elements_no_event
        for (column, value), (rows, first, last) in export.unmapped_found.items():
            rounds = len(export.unmapped_rounds.get((column, value), ()))
            withheld = ("; its round is withheld" if rows == 1 and rounds == 1 else
                        f"; {_count(rounds, 'round')} withheld" if rounds else "")
            export.problems.append(Problem(
                EX_VALUE_NOT_MAPPED, first, column, value,
                f"a value [source.values.{column}] lists",
                f"{rows_text(rows)} {column} {value!r}, which the source "
                f"{(_companion_source(export, column) or source).name!r} does not map "
                f"({lines_text(first, last)}){withheld}."))
        if export.differ_found:
            _differing(export, source.repeat_key, *export.differ_found)
        made = made_columns(source) | (made_columns(export.also) if export.also else set())
        export.missing = [c for c in v.COLUMNS if c not in export.given and c not in made]
        if source.format_of(export.path.name) == "csv":
            export.header_line = 1


def _count(n: int, what: str) -> str:
    return f"1 {what} is" if n == 1 else f"{n} {what}s are"


def _companion_source(export: Export, column: str) -> Source | None:
    """The source of a file read twice (one file, two layouts) whose value map of
    `column` it is, where only the second reading maps it."""
    if export.also is None or column in export.source.values:
        return None
    return export.also


def _csv_records(export: Export, rows: int, data: bytes, first: bool = True
                 ) -> tuple[pl.Series | None, pl.Series, pl.Series]:
    """Which of a CSV file's rows are records (None: all), the records' lines, and their
    numbers (`_row`: from 1, blank lines not counted): a blank line holds none; a record
    with a line break in a field is malformed at its first line (IN002), as in the
    format (said on the file's `first` read)."""
    found = csv_lines(data, export.source.delimiter, rows)
    if first:
        for _, line in found.broken:
            export.problems.append(Problem(
                "IN002", line, None, None, "one record a line",
                "A field of the record holds a line break; the record cannot be read."))
        export.unread += len(found.broken)
        export.rows -= len(found.blank)
    counted = pl.int_range(rows, eager=True)
    records = (~counted.is_in(found.blank)).cast(pl.Int64).cum_sum() if found.blank else (
        counted.cast(pl.Int64) + 1)
    dropped = [row for row, _ in found.broken] + found.blank
    if not dropped:
        return None, found.lines, records
    keep = ~counted.is_in(dropped)
    return keep, found.lines.filter(keep), records.filter(keep)


def _bytes_held(path: Path) -> int:
    """What a file holds, about: its size, a gzip file's GZIP_RATIO times it (a Parquet
    export is read whole too, unlike a hand-history log's: spill.text_bytes)."""
    size = path.stat().st_size if path.is_file() else 0
    return size * (GZIP_RATIO if path.name.lower().endswith(".gz") else 1)


def _exports(profile: Profile, arguments: list[str], skipped: list[Path]) -> list[Export]:
    found = []
    for path, named in files_named(arguments) if arguments else []:
        matching = sources_of(profile, path)
        if not matching:
            if named:
                raise SourceError(f"{path}: no source of the profile {profile.path} reads "
                                  "this file (its `files` patterns match none)")
            skipped.append(path)
            continue
        found.append(_export(profile, path, readers_of(profile, path)))
    return list({str(e.path): e for e in found}.values())


def _export(profile: Profile, path: Path, readers: list[Source]) -> Export:
    """The export of a file and the source that reads it: the first that matches; (1.1)
    a file matched by a coups source and a wagers source is read by both (the first of
    each), unless an events source reads it first."""
    check_readers(profile, path, readers)
    if len(readers) == 1:
        return Export(path, readers[0])
    coups, wagers = readers
    return Export(path, coups, also=wagers, companion=Export(path, wagers))


def _cells(out: Translated, number: int, export: Export,
           tables: list[str] | None = None) -> pl.DataFrame:
    """_file_cells, a mapping's SQL that fails on the file a ProfileError naming it."""
    try:
        return _file_cells(out, number, export, tables)
    except cells.SqlFailed as exc:
        raise ProfileError(f"{export.path}: {exc}") from None


def _file_cells(out: Translated, number: int, export: Export,
                tables: list[str] | None = None) -> pl.DataFrame:
    """One file's rows (of `tables`; None: all): the canonical cells as text, mapped,
    timed and with their cards read; `line`, `_file`, `_row` (its place in the file) and
    `_instant` beside them. What is said of the file itself is said on its first read
    (the rows without a table come with it)."""
    first, export.seen = not export.seen, True
    source, path = export.source, export.path
    kind = source.format_of(path.name)
    named, roots = named_columns(source), sql_columns(source)
    lists = _is_blackjack_coups(source)
    try:
        data = None if kind == "parquet" else text_of(path, out.text_limit)
        own = own_built_ins(path, source, data)
        named = [c for c in named if c not in BUILT_INS or c in own]
        roots = [c for c in roots if c not in BUILT_INS or c in own]
        # a CSV file's mapped columns only (a header may name thousands of others)
        raw = read_whole(path, source, named if kind == "csv" or not lists else None, data)
        typed = read_typed(path, source, roots, data) if roots else None
        readable = True
    except (ProfileError, budget.BudgetError):
        raise
    except Exception as exc:  # noqa: BLE001 - polars' reader (or gzip) says why
        if first:
            export.problems.append(Problem("IN001", None, None, None, None,
                                           f"the export cannot be read: {exc}"))
        # read on as a file of no rows, so that its frame is one the layouts know
        data, readable, own = b"", False, set()
        raw = pl.DataFrame(schema={c: pl.String for c in named})
        typed = pl.DataFrame(schema={c: pl.String for c in roots}) if roots else None
    if first and readable:
        export.rows, export.sha256 = raw.height, sha256_of(path)
        export.size = path.stat().st_size
    header = csv_header(data, source.delimiter) if kind == "csv" else []
    twice = named_twice(header)
    if twice:
        raise ProfileError(f"{path}: the header names the column {twice[0]!r} twice")
    raw = raw.rename({c: c.lstrip("\ufeff").strip() for c in raw.columns})
    lacking = [c for c in named if c not in raw.columns]
    if lacking and kind != "jsonl":
        raise ProfileError(f"{path}: has no column {lacking[0]!r}, which the profile's source "
                           f"{source.name!r} maps")
    absent = absent_keys(source, raw, data) if kind == "jsonl" else []
    if absent:
        raise ProfileError(absent_message(path, source, *absent[0]))
    raw = raw.with_columns(pl.lit(None, pl.String).alias(c) for c in lacking)
    records = pl.int_range(1, raw.height + 1, dtype=pl.Int64, eager=True)
    if kind == "csv":
        keep, lines, records = _csv_records(export, raw.height, data, first)
        if keep is not None:
            raw = raw.filter(keep)
            typed = None if typed is None else typed.filter(keep)
    else:
        lines = lines_of(path, source, raw.height, data)
    raw = with_built_ins(raw, path, records, own)
    if typed is not None:
        typed = with_built_ins(typed, path, records, own)
    place = pl.int_range(raw.height, dtype=pl.Int64, eager=True)
    if tables is not None:
        keep = _of_tables(raw, source, typed, tables, first)
        raw, lines, place = raw.filter(keep), lines.filter(keep), place.filter(keep)
        typed = None if typed is None else typed.filter(keep)
    frame = cells.raw_cells(raw, source, typed, LIST_COLUMNS if lists else ())
    silent = _silenced(frame, source)
    frame, unmapped, strays = cells.mapped(frame, source, lines)
    for u in unmapped:
        _count_unmapped(export, u.column, u.value, u.rows, u.first, u.last)
    _note_strays(out, number, strays)
    frame = frame.with_columns(lines.alias(v.LINE), pl.lit(number, pl.Int32).alias(FILE),
                               place.alias(ROW), silent.alias("_silent"))
    if source.cards is not None and "card" in frame.columns:
        frame = frame.with_columns(_cards_read(source.cards, frame.get_column("card")))
    if lists:
        frame = frame.with_columns(_hand_lists(out, number, export, raw, typed, lines))
    elif source.layout == "coups":
        frame = _coup_cards(frame, raw, typed, source)
    frame = frame.with_columns(raw.get_column(k).cast(pl.String).alias(f"_key:{k}")
                               for k in source.repeat_key)
    frame = times.with_times(frame, source)
    if "end_ts" in frame.columns:
        frame = times.with_times(frame, source, "end_ts", "_end")
        if frame.schema["ts"] != frame.schema["end_ts"]:  # one of them has a bad cell
            frame = frame.with_columns(pl.col(c).dt.strftime(times.WALL_CLOCK)
                                       for c in ("ts", "end_ts")
                                       if frame.schema[c] != pl.String)
    return frame


def _note_strays(out: Translated, number: int, strays: pl.DataFrame) -> None:
    """(file, line, field, value) of cells (or list elements) whose value no map covers."""
    if strays.height:
        out.unmapped = pl.concat([out.unmapped, strays.with_columns(
            pl.lit(number, pl.Int32).alias(FILE)).select(list(UNMAPPED)).cast(UNMAPPED)])


def _of_tables(raw: pl.DataFrame, source: Source, typed: pl.DataFrame | None,
               tables: list[str], first: bool) -> pl.Series:
    """Which rows are of `tables` (and, on the file's first read, which have none)."""
    table = cells.table_cells(raw, source, typed)
    keep = table.is_in(tables)
    return (keep | table.is_null()) if first else keep.fill_null(False)


def _count_unmapped(export: Export, column: str, value: str, rows: int, first: int,
                    last: int) -> None:
    """A value no map covers, counted over the file's reads (said once: _finish)."""
    seen = export.unmapped_found.setdefault((column, value), [0, first, last])
    seen[0] += rows
    seen[1], seen[2] = min(seen[1], first), max(seen[2], last)


def _coup_cards(frame: pl.DataFrame, raw: pl.DataFrame, typed: pl.DataFrame | None,
                source: Source) -> pl.DataFrame:
    """A baccarat coup's card columns beside the cells (each an export column, a
    constant or an SQL expression), read by the notation."""
    columns = source.card_columns
    read = cells.raw_cells(raw, replace(source, columns=columns, values={}), typed)
    return frame.with_columns(_cards_read(source.cards, read.get_column(name)).alias(name)
                              for name in columns)


def _is_blackjack_coups(source: Source) -> bool:
    return source.layout == "coups" and source.game == "blackjack"


# What a list element is mapped to where it means the box took insurance (1.1): not a
# decision, it makes (or asks for) the insurance wager
INSURANCE = "insurance"


def _hand_lists(out: Translated, number: int, export: Export, raw: pl.DataFrame,
                typed: pl.DataFrame | None, lines: pl.Series) -> list[pl.Series]:
    """A blackjack coup row's lists: `_cards` (its hands' cards, read by the notation,
    each hand a list: one hand, or (1.1) every hand of the box), `_actions` (aligned with
    them, through [source.values.action]), `_dealer` (the dealer's cards), `_nested`
    (the row holds every hand of its box), `_insured` (an action mapped to insurance)
    and `_bad` (a list cell that does not parse, or lists that do not align: the round
    is withheld, its finding at the row's line)."""
    source = export.source
    separator = source.cards.separator if source.cards else " "
    read = {}
    bad = pl.Series([False] * raw.height, dtype=pl.Boolean)
    for name in LIST_COLUMNS:
        cells_of = _list_cells(raw, typed, source, name)
        found = hands_of(cells_of, source.lists, separator)
        # said on every read: a read in parts holds each row once (by its table)
        # (a list column's cells are never bad: only text cells are cast to be said)
        for line, cell in zip(lines.filter(found["bad"]).to_list(),
                              cells_of.filter(found["bad"]).cast(pl.String).to_list(),
                              strict=True):
            export.problems.append(_list_problem(source, name, line, cell))
        bad = bad | found["bad"]
        read[name] = found
    cards, actions, dealer = (read[n] for n in LIST_COLUMNS)
    nested = cards["nested"] | actions["nested"]
    # a list of lists on one side and a flat list of some elements on the other; a
    # list of lists of the dealer's cards (the dealer has one hand)
    unaligned = ((cards["nested"] & ~actions["nested"]
                  & (actions["hands"].list.first().list.len() > 0))
                 | (actions["nested"] & ~cards["nested"]
                    & (cards["hands"].list.first().list.len() > 0)))
    twice = dealer["nested"] & (dealer["hands"].list.len() > 1)
    for mask, name, why in ((unaligned & ~bad, "actions",
                             "cards and actions must both hold every hand of the box "
                             "(a list of lists), or both one hand"),
                            (twice & ~bad, "dealer_cards",
                             "the dealer's cards are one list, not a list of lists")):
        for line in lines.filter(mask).to_list():
            export.problems.append(Problem(
                EX_LIST_UNREADABLE, line, name, None, "lists aligned with the hands",
                f"The row's {name}: {why}; its round is withheld."))
    bad = bad | unaligned | twice
    if nested.any() and "hand" in source.columns:
        line = lines.filter(nested).first()
        raise ProfileError(
            f"{export.path}: line {line}: the row holds every hand of its box (a list of "
            f"lists), and the source {source.name!r} maps columns.hand: a row that holds "
            "every hand numbers them itself; remove the key")
    cards_read = _elements(cards["hands"], lambda flat: _cards_read(source.cards, flat))
    actions_read, insured = _actions_of(out, number, export, actions["hands"], lines)
    return [cards_read.alias("_cards"), actions_read.alias("_actions"),
            _elements(dealer["hands"], lambda flat: _cards_read(source.cards, flat))
            .list.first().fill_null([]).alias("_dealer"),
            nested.alias("_nested"), insured.alias("_insured"), bad.alias("_bad")]


def _list_cells(raw: pl.DataFrame, typed: pl.DataFrame | None, source: Source,
                name: str) -> pl.Series:
    """A list key's cells as the mapping gives them: an export column's (as read: text,
    or a JSON or Parquet list), a constant's text, or the values of its SQL expression
    (text, a list, or a number read by value); an empty list where it is not mapped."""
    mapping = source.columns.get(name)
    if mapping is None:
        return pl.Series(name, [None] * raw.height, dtype=pl.String)
    if mapping.column is not None:
        return raw.get_column(mapping.column)
    if mapping.sql is None:
        return pl.Series(name, [cells.constant_text(mapping.value)] * raw.height,
                         dtype=pl.String)
    values = cells.sql_values(raw if typed is None else typed, source, name, mapping.sql)
    if isinstance(values.dtype, pl.List):
        return values
    return values.to_frame().select(cells.by_value(pl.col(name), values.dtype, name)).to_series()


def _list_problem(source: Source, name: str, line: int, cell: str | None) -> Problem:
    how = ('a bracketed list, as JSON or Python writes it ([10, 4], ["KS", "4H"], '
           "[['P', 'H'], ['S']])")
    shown = cell if cell is None or len(cell) <= 80 else cell[:77] + "..."
    return Problem(EX_LIST_UNREADABLE, line, name, shown, how,
                   f"The row's {name} cell is not {how}; its round is withheld.")


def _elements(hands: pl.Series, read) -> pl.Series:
    """Each element of a column of hands (List(List(String))) read at once by `read` (a
    function of a flat column of them), in its place; elements read as none dropped."""
    frame = hands.to_frame("h").with_row_index("_r").explode("h").with_row_index("_k")
    flat = frame.explode("h").with_columns(
        read(frame.explode("h").get_column("h")).alias("h"))
    rebuilt = (flat.group_by("_k", maintain_order=True)
               .agg(pl.col("_r").first(), pl.col("h").drop_nulls())
               .group_by("_r", maintain_order=True).agg(pl.col("h")))
    every = pl.DataFrame({"_r": pl.int_range(hands.len(), eager=True, dtype=pl.UInt32)})
    joined = every.join(rebuilt, on="_r", how="left", maintain_order="left")
    return joined.get_column("h").fill_null(pl.lit([], HANDS)).cast(HANDS)


def _actions_of(out: Translated, number: int, export: Export, hands: pl.Series,
                lines: pl.Series) -> tuple[pl.Series, pl.Series]:
    """Each decision through the source's action map: a value the map does not list is
    one finding per value (its rows counted), and withholds its round; an element mapped
    to "" is dropped (counted as mapped to no event); one mapped to insurance marks the
    box insured and is no decision."""
    table = export.source.values.get("action")
    if not table:
        return hands, pl.Series([False] * hands.len(), dtype=pl.Boolean)
    keys = list(table)
    flat = (hands.to_frame("h").with_columns(lines.alias("line")).with_row_index("_r")
            .explode("h").explode("h"))
    present = flat.filter(pl.col("h").is_not_null())
    stray = present.filter(~pl.col("h").is_in(keys))
    found = stray.group_by("h", maintain_order=True).agg(
        pl.col("_r").n_unique().alias("rows"), pl.col("line").min().alias("first"),
        pl.col("line").max().alias("last"))
    for value, rows, first, last in found.iter_rows():
        _count_unmapped(export, "action", value, rows, first, last)
    _note_strays(out, number, stray.select("line", pl.lit("action").alias("field"),
                                           pl.col("h").alias("value")).unique())
    targets = {k: str(t) for k, t in table.items()}
    dropped = [k for k, t in targets.items() if t == ""]
    export.elements_no_event += present.filter(pl.col("h").is_in(dropped)).height
    insured_rows = present.filter(pl.col("h").is_in(
        [k for k, t in targets.items() if t == INSURANCE])).get_column("_r").unique()
    insured = pl.int_range(hands.len(), eager=True, dtype=pl.UInt32).is_in(
        insured_rows.implode())

    def decisions(flat: pl.Series) -> pl.Series:
        mapped = flat.replace_strict(keys, list(targets.values()), default=None,
                                     return_dtype=pl.String)
        return mapped.to_frame("m").select(pl.when(~pl.col("m").is_in(["", INSURANCE]))
                                           .then("m")).to_series()

    return _elements(hands, decisions), insured


def _cards_read(cards: Cards, column: pl.Series) -> pl.Series:
    """A column of cards as the format writes them, each distinct cell read once (a
    log holds a few dozen)."""
    distinct = column.unique().drop_nulls()
    read = distinct.to_frame("c").select(codes(cards, pl.col("c")).alias("c")).to_series()
    return column.replace_strict(distinct, read, default=None, return_dtype=pl.String)


def _silenced(frame: pl.DataFrame, source: Source) -> pl.Series:
    """Rows whose event the map sends to none (a heartbeat, a lid opened)."""
    table = source.values.get("event", {})
    none = [k for k, target in table.items() if target == ""]
    if "event" not in frame.columns or not none:
        return pl.Series([False] * frame.height, dtype=pl.Boolean)
    return frame.select(pl.col("event").is_in(none).fill_null(False)).to_series()


def _check_kinds(out: Translated, by_layout: dict) -> None:
    """A table is given by events sources, or by coups (with wagers): not by both."""
    def tables(frames: list[pl.DataFrame]) -> set[str]:
        return {t for f in frames if "table_id" in f.columns
                for t in f["table_id"].drop_nulls().unique().to_list()}
    both = tables(by_layout["events"]) & tables(by_layout["coups"] + by_layout["wagers"])
    if both:
        table = sorted(both)[0]
        kinds = sorted({e.source.name for e in out.exports})
        raise ProfileError(f"{out.profile.path}: table {table} is given both by an events "
                           f"source and by coups or wagers sources ({', '.join(kinds)}); "
                           "a table's rows come from sources of one kind")


# --- events


def _events(out: Translated, rows: pl.DataFrame, paths: list[str]) -> pl.DataFrame:
    rows = rows.with_columns(pl.lit(None, pl.String).alias(c) for c in
                             ("table_id", "shoe_id", "round", "seq", "event", "ts")
                             if c not in rows.columns)
    silent = rows.filter("_silent")
    for number, count in silent.group_by(FILE).len().iter_rows():
        out.exports[number].no_event += count
    rows = rows.filter(~pl.col("_silent"))
    rows = layouts.file_order(rows, paths)
    rows = rows.sort("table_id", TABLE_ORDER, nulls_last=True)
    rows = _without_repeats(out, rows)
    sources = {e.source.name: e.source for e in out.exports if e.source.layout == "events"}
    mapped = {c for s in sources.values() for c in s.columns}
    if "seq" not in mapped:
        rows = layouts.numbered_events(rows)
    if "shoe_id" not in mapped:
        rows = layouts.derived_shoes(rows)
    if "round" not in mapped:
        rows = layouts.derived_rounds(rows)
    out.row_rounds.append(rows.select(FILE, v.LINE, "table_id", "shoe_id", "round"))
    for source in sources.values():
        note_table(out, rows.filter(pl.col(FILE).is_in(
            [n for n, e in enumerate(out.exports) if e.source is source])), "events",
            source.cards)
        if "seq" not in source.columns:
            for table in rows["table_id"].drop_nulls().unique().to_list():
                out.tables.setdefault(table, set()).add("seq:derived")
    return rows


def _without_repeats(out: Translated, rows: pl.DataFrame) -> pl.DataFrame:
    """Frames sent again (repeat_key) taken out and counted; rows whose key repeats with
    another cell different counted per file in one finding. `rows` in table order."""
    keyed: dict[tuple, list[int]] = {}
    for number, export in enumerate(out.exports):
        if export.source.layout == "events" and export.source.repeat_key:
            key = (export.source.repeat_key, tuple(export.source.columns))
            keyed.setdefault(key, []).append(number)
    for (key, columns), numbers in keyed.items():
        named = [c for c in columns if c in rows.columns]
        same_key = layouts.same_key(tuple(f"_key:{k}" for k in key))
        # rows are in table order, a file's rows of a table together: the row before a
        # repeated key is the row just above it; only those few are compared whole
        at = rows.select(same_key & pl.col(FILE).is_in(numbers)).to_series().arg_true()
        cells_now, cells_before = rows.select(named)[at], rows.select(named)[at - 1]
        repeat = pl.DataFrame([cells_now[c].eq_missing(cells_before[c]) for c in named]
                              ).select(pl.all_horizontal(pl.all()).alias("_repeat"))
        found = rows.select(FILE, v.LINE)[at].with_columns(repeat)
        counted = found.group_by(FILE).agg(
            pl.col("_repeat").sum().alias("repeats"),
            (~pl.col("_repeat")).sum().alias("differ"),
            pl.col(v.LINE).filter(~pl.col("_repeat")).min().alias("first"),
            pl.col(v.LINE).filter(~pl.col("_repeat")).max().alias("last"))
        for number, repeats, differ, first, last in counted.iter_rows():
            export = out.exports[number]
            export.repeats += repeats
            if differ:  # said once per file, the whole log read (_finish)
                had = export.differ_found or [0, first, last]
                export.differ_found = [had[0] + differ, min(had[1], first),
                                       max(had[2], last)]
        dropped = at.filter(repeat.to_series())
        rows = rows.with_row_index("_at").filter(~pl.col("_at").is_in(dropped.implode())
                                                  ).drop("_at")
    return rows


def _differing(export: Export, key: tuple[str, ...], count: int, first: int,
               last: int) -> None:
    """One finding for a file's rows whose repeat_key repeats with another cell changed."""
    said = (f"{count} rows repeat the repeat_key ({', '.join(key)}) of the row before "
            "them" if count > 1 else
            f"1 row repeats the repeat_key ({', '.join(key)}) of the row before it")
    export.problems.append(Problem(
        EX_REPEAT_KEY_DIFFERS, first, None, str(count),
        "a repeated key with every cell the same",
        f"{said} with another cell different ({lines_text(first, last)}); "
        + ("each was" if count > 1 else "it was") + " read as a record of its own."))


# Findings a cell made empty by an unmapped value would give its row: said once already
_SAID_BY_UNMAPPED = ("IN004", "IN005", "IN006", "IN009")
_ROUND_WITHHELD = "IN014"
_KEY = ["table_id", "shoe_id", "round"]


def quiet(out: Translated, findings: pl.DataFrame) -> pl.DataFrame:
    """The findings as an export's audit reports them: without those of cells an
    unmapped value emptied (that value's own finding says it, once per file and column),
    nor the notes of the rows whose round such a value withholds, nor the warning of a
    round withheld only for them (the value's finding counts its rounds). (1.1) The
    warning of a round withheld for another cause names it, never as a lost row."""
    marker = (pl.col("rule_id") == EX_VALUE_NOT_MAPPED) & pl.col("field").is_null()
    noted = findings.filter(marker & (pl.col("message") == WITHHELD)).select(
        pl.col("observed").str.json_decode(pl.Struct({k: pl.String for k in _KEY}))
        .alias("_k")).unnest("_k")
    said = [noted.select(pl.col(k).cast(findings.schema[k], strict=False) for k in _KEY)]
    if out.unmapped.height:
        paths = pl.DataFrame({FILE: list(range(len(out.exports))),
                              "file": [str(e.path) for e in out.exports]},
                             schema={FILE: pl.Int32, "file": pl.String})
        cells_emptied = out.unmapped.join(paths, on=FILE).select(
            "file", pl.col(v.LINE).alias("line"), "field").unique().with_columns(
            pl.lit(True).alias("_said"))
        marked = findings.join(cells_emptied, on=["file", "line", "field"], how="left",
                               maintain_order="left")
        emptied = marked["_said"].fill_null(False) & marked["rule_id"].is_in(_SAID_BY_UNMAPPED)
        said.append(marked.filter(emptied).select(_KEY))
        findings = marked.filter(~emptied).drop("_said")
    findings = findings.filter(~marker)
    return _withheld_said(findings, pl.concat(said).unique())


def _withheld_said(findings: pl.DataFrame, said: pl.DataFrame) -> pl.DataFrame:
    """The warning of each withheld round (IN014): none where a value no map covers is
    all that withholds it (`said`: those rounds); else naming the first finding that
    does, where one is at the round."""
    warning = pl.col("rule_id") == _ROUND_WITHHELD
    if not findings.select(warning.any()).item():
        return findings
    withholding = (pl.col("rule_id").str.contains("^(IN|EX)") & ~warning
                   & (pl.col("rule_id") != EX_VALUE_NOT_MAPPED)
                   & ~pl.col("rule_id").is_in(sequence.NOT_WITHHOLDING)
                   & ~pl.col("field").is_in(v.NOT_NEEDED_FOR_REPLAY).fill_null(False)
                   & pl.col("round").is_not_null())
    causes = (findings.filter(withholding).sort("line", nulls_last=True)
              .group_by(_KEY, maintain_order=True)
              .agg(pl.col("rule_id").first().alias("_rule"), pl.col("line").first().alias("_at"),
                   pl.len().alias("_causes")))
    only_said = said.join(causes, on=_KEY, how="anti", nulls_equal=True).with_columns(
        pl.lit(True).alias("_only"))
    findings = (findings.join(only_said, on=_KEY, how="left", maintain_order="left",
                              nulls_equal=True)
                .filter(~(pl.col("_only").fill_null(False) & warning)).drop("_only"))
    more = pl.when(pl.col("_causes") > 1).then(
        pl.format(" and {} more", pl.col("_causes") - 1)).otherwise(pl.lit(""))
    cause = pl.format("the input finding at line {} ({}){}", "_at", "_rule", more)
    named = pl.when(pl.col("round") == 0).then(pl.format(
        "The shoe-level events of shoe {} before round 1 are withheld for {}; its shoe "
        "procedure is not judged.", "shoe_id", cause)).otherwise(pl.format(
        "Round {} of shoe {} is withheld for {}: it is reported, not judged.", "round",
        "shoe_id", cause))
    findings = findings.join(causes, on=_KEY, how="left", maintain_order="left",
                             nulls_equal=True)
    # a round withheld for a row near it that could not be placed in a round (a coup row
    # without its key, say): that row's finding, the nearest in the file
    unplaced = (findings.filter(pl.col("rule_id").str.contains("^(IN|EX)") & ~warning
                                & pl.col("round").is_null() & pl.col("line").is_not_null())
                .select("file", pl.col("line").alias("_near"), pl.col("rule_id").alias("_what"))
                .sort("_near"))
    near = (findings.with_row_index("_i").filter(warning & pl.col("_rule").is_null()
                                                 & pl.col("line").is_not_null())
            .select("_i", "file", "line").sort("line")
            .join_asof(unplaced, left_on="line", right_on="_near", by="file",
                       strategy="nearest", check_sortedness=False)
            .select("_i", "_near", "_what"))
    findings = findings.with_row_index("_i").join(near, on="_i", how="left",
                                                  maintain_order="left").drop("_i")
    nearby = pl.format("Round {} of shoe {} is withheld: the row at line {} ({}) could not be "
                       "placed in a round, and may be one of its rows; it is reported, not "
                       "judged.", "round", "shoe_id", "_near", "_what")
    placed = warning & pl.col("_rule").is_not_null()
    unplaced_near = warning & pl.col("_rule").is_null() & pl.col("_near").is_not_null() & (
        pl.col("round") > 0)
    return (findings
            .with_columns(pl.when(placed).then(named).when(unplaced_near).then(nearby)
                          .otherwise("message").alias("message"),
                          pl.when(placed).then(pl.lit("a row withheld for an input finding"))
                          .when(unplaced_near).then(pl.lit("a row not placed in a round"))
                          .otherwise("observed").alias("observed"))
            .drop("_rule", "_at", "_causes", "_near", "_what"))
