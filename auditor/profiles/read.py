"""Exports read through a profile: every file's rows as the format's events, each at
its export file and line, and what could not be read, as input problems.

Each file is read whole and its cells mapped at once (cells, times, cards); then the
rows of each layout become events (layouts; coups and wagers: coups), numbered per table
in the order the contract gives. The events of each file are then handed to the audit as
that file's rows (`Translated.raws`), so that every finding points at the export's own
line; exports too large to hold are read a part of their tables at a time (parts).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from .. import budget
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
    csv_header,
    csv_lines,
    files_named,
    lines_of,
    list_of,
    named_columns,
    named_twice,
    read_typed,
    read_whole,
    sources_of,
    sql_columns,
    text_of,
)
from .layouts import FILE, ROW, TABLE_ORDER
from .model import Cards, Profile, Source
from .parts import translate_in_parts
from .translated import (
    TEXT,
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
    for n in numbers:
        by_layout[exports[n].source.layout].append(_cells(out, n, exports[n], tables))
    _check_kinds(out, by_layout)
    if by_layout["events"]:
        made.append(_events(out, pl.concat(by_layout["events"], how="diagonal_relaxed"), paths))
    if by_layout["coups"]:
        made.append(coup_events(out, by_layout, paths))
    elif by_layout["wagers"]:
        wagers_without_coups(out, pl.concat(by_layout["wagers"], how="diagonal_relaxed"))
    every = pl.concat(made, how="diagonal_relaxed") if made else pl.DataFrame(
        schema={**TEXT, v.LINE: pl.Int64, FILE: pl.Int32, ROW: pl.Int64})
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


def _finish(out: Translated) -> None:
    """What is said once per file, the whole log read: the values no map covers, rows
    whose repeat_key repeats with a cell changed, the columns its events lack."""
    for export in out.exports:
        source = export.source
        for (column, value), (rows, first, last) in export.unmapped_found.items():
            what, read = (("decision", "none") if column == "action"
                          else ("cell", "empty"))
            export.problems.append(Problem(
                EX_VALUE_NOT_MAPPED, first, column, value,
                f"a value [source.values.{column}] lists",
                f"{rows_text(rows)} {column} {value!r}, which the source "
                f"{source.name!r} does not map ({lines_text(first, last)}); "
                + (f"each such {what} is" if rows > 1 else f"the {what} is")
                + f" read as {read}."))
        if export.differ_found:
            _differing(export, source.repeat_key, *export.differ_found)
        made = made_columns(source)
        export.missing = [c for c in v.COLUMNS if c not in export.given and c not in made]
        if source.format_of(export.path.name) == "csv":
            export.header_line = 1


def _csv_records(export: Export, rows: int, data: bytes,
                 first: bool = True) -> tuple[pl.Series | None, pl.Series]:
    """Which of a CSV file's rows are records (None: all), and the records' lines: a
    blank line holds none; a record with a line break in a field is malformed at its
    first line (IN002), as in the format (said on the file's `first` read)."""
    found = csv_lines(data, export.source.delimiter, rows)
    if first:
        for _, line in found.broken:
            export.problems.append(Problem(
                "IN002", line, None, None, "one record a line",
                "A field of the record holds a line break; the record cannot be read."))
        export.unread += len(found.broken)
        export.rows -= len(found.blank)
    dropped = [row for row, _ in found.broken] + found.blank
    if not dropped:
        return None, found.lines
    keep = ~pl.int_range(rows, eager=True).is_in(dropped)
    return keep, found.lines.filter(keep)


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
        found.append(Export(path, matching[0]))
    return list({str(e.path): e for e in found}.values())


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
        data, readable = b"", False
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
    if kind == "csv":
        keep, lines = _csv_records(export, raw.height, data, first)
        if keep is not None:
            raw = raw.filter(keep)
            typed = None if typed is None else typed.filter(keep)
    else:
        lines = lines_of(path, source, raw.height, data)
    place = pl.int_range(raw.height, dtype=pl.Int64, eager=True)
    if tables is not None:
        keep = _of_tables(raw, source, typed, tables, first)
        raw, lines, place = raw.filter(keep), lines.filter(keep), place.filter(keep)
        typed = None if typed is None else typed.filter(keep)
    frame = cells.raw_cells(raw, source, typed, _LISTS if lists else ())
    silent = _silenced(frame, source)
    frame, unmapped, strays = cells.mapped(frame, source, lines)
    for u in unmapped:
        _count_unmapped(export, u.column, u.value, u.rows, u.first, u.last)
    out.unmapped = pl.concat([out.unmapped, strays.with_columns(
        pl.lit(number, pl.Int32).alias(FILE)).select(out.unmapped.columns)])
    frame = frame.with_columns(lines.alias(v.LINE), pl.lit(number, pl.Int32).alias(FILE),
                               place.alias(ROW), silent.alias("_silent"))
    if source.cards is not None and "card" in frame.columns:
        frame = frame.with_columns(_cards_read(source.cards, frame.get_column("card")))
    if lists:
        frame = frame.with_columns(_hand_lists(export, raw, lines))
    elif source.layout == "coups":
        frame = _coup_cards(frame, raw, source)
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


def _coup_cards(frame: pl.DataFrame, raw: pl.DataFrame, source: Source) -> pl.DataFrame:
    """A baccarat coup's card columns beside the cells, read by the notation."""
    names = [*source.cards.player, *source.cards.banker]
    return frame.with_columns(
        _cards_read(source.cards, raw.select(cells.text(pl.col(c))).to_series()).alias(
            f"_card:{c}") for c in names)


_LISTS = ("cards", "actions", "dealer_cards")


def _is_blackjack_coups(source: Source) -> bool:
    return source.layout == "coups" and source.game == "blackjack"


def _hand_lists(export: Export, raw: pl.DataFrame, lines: pl.Series) -> list[pl.Series]:
    """A blackjack coup row's hand cards, decisions and dealer cards, each a list: the
    cards read by the notation, the decisions through [source.values.action]."""
    source = export.source
    separator = source.cards.separator if source.cards else " "
    out = []
    for name, target in (("cards", "_cards"), ("actions", "_actions"),
                         ("dealer_cards", "_dealer")):
        mapping = source.columns.get(name)
        if mapping is None or mapping.column is None:
            out.append(pl.Series(target, [[]] * raw.height, dtype=pl.List(pl.String)))
            continue
        items = list_of(raw, mapping.column, separator)
        flat = items.to_frame("i").with_row_index("_r").explode("i")
        if name == "actions":
            read = _actions_read(export, flat, lines)
        else:
            read = _cards_read(source.cards, flat.get_column("i"))
        rebuilt = flat.with_columns(read.alias("i")).group_by("_r").agg(
            pl.col("i").drop_nulls())
        # every row back, in order (an empty list explodes to no row at all)
        every = pl.DataFrame({"_r": pl.int_range(raw.height, eager=True, dtype=pl.UInt32)})
        lists = every.join(rebuilt, on="_r", how="left", maintain_order="left")
        out.append(lists.get_column("i").fill_null([]).alias(target))
    return out


def _actions_read(export: Export, flat: pl.DataFrame, lines: pl.Series) -> pl.Series:
    """Each decision through the source's action map; a value the map does not list is
    one finding per value (its rows counted), and read as no decision."""
    table = export.source.values.get("action")
    items = flat.get_column("i")
    if not table:
        return items
    keys = list(table)
    stray = flat.with_columns(lines.gather(flat.get_column("_r")).alias("line")).filter(
        pl.col("i").is_not_null() & ~pl.col("i").is_in(keys))
    found = stray.group_by("i", maintain_order=True).agg(
        pl.col("_r").n_unique().alias("rows"), pl.col("line").min().alias("first"),
        pl.col("line").max().alias("last"))
    for value, rows, first, last in found.iter_rows():
        _count_unmapped(export, "action", value, rows, first, last)
    return items.replace_strict(keys, [str(t) for t in table.values()], default=None,
                                return_dtype=pl.String)


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


def quiet(out: Translated, findings: pl.DataFrame) -> pl.DataFrame:
    """The findings without those of cells an unmapped value emptied (that value's own
    finding says it, once per file and column) nor the warning of a round withheld only
    for them."""
    if not out.unmapped.height:
        return findings
    paths = pl.DataFrame({FILE: list(range(len(out.exports))),
                          "file": [str(e.path) for e in out.exports]},
                         schema={FILE: pl.Int32, "file": pl.String})
    cells_emptied = out.unmapped.join(paths, on=FILE).select(
        "file", pl.col(v.LINE).alias("line"), "field").with_columns(pl.lit(True).alias("_said"))
    marked = findings.join(cells_emptied, on=["file", "line", "field"], how="left",
                           maintain_order="left")
    said = marked["_said"].fill_null(False) & marked["rule_id"].is_in(_SAID_BY_UNMAPPED)
    kept = marked.filter(~said).drop("_said")
    key = ["table_id", "shoe_id", "round"]
    quieted = marked.filter(said).select(key).unique()
    still = kept.filter(pl.col("rule_id").str.starts_with("IN")
                        & (pl.col("rule_id") != _ROUND_WITHHELD)).select(key).unique()
    only_said = quieted.join(still, on=key, how="anti", nulls_equal=True).with_columns(
        pl.lit(True).alias("_only"))
    return (kept.join(only_said, on=key, how="left", maintain_order="left", nulls_equal=True)
            .filter(~(pl.col("_only").fill_null(False) & (pl.col("rule_id") == _ROUND_WITHHELD)))
            .drop("_only"))
