"""Exports too large to hold, read a part of their tables at a time: each part's events
spilled by table, as a large text log is, for the audit to read in parts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

import polars as pl

from .. import budget
from ..ingest import spill
from ..ingest.partition import dealt
from . import cells, layouts
from .files import own_built_ins, read_typed, read_whole, text_of, with_built_ins
from .model import BUILT_INS
from .translated import Translated, as_log_rows

# Bytes an export row takes, read and made into events, about (a device feed: 1.2 million
# rows peaked at 1.8 GB with their audit)
_ROW_BYTES = 1_500


def translate_in_parts(out: Translated, memory: int, workdir: Path,
                       translate_part: Callable) -> None:
    """Exports too large to read whole, read a part of their tables at a time: each
    file's events written by table to `workdir` (a table's rows, from every file, are
    one part's). A file is read again for each part that holds its tables."""
    counts = _tables_of_files(out)
    room = max(1, (memory - budget.PROCESS_BYTES) // _ROW_BYTES)
    parts = dealt(counts.group_by("table_id").agg(pl.col("rows").sum()), room)
    out.spilled = [spill.Spilled(workdir / f"export-{n}", n)
                   for n in range(len(out.exports))]
    for folder in out.spilled:
        folder.folder.mkdir(parents=True, exist_ok=True)
    naming = threading.Lock()
    # files whose rows name no table are read with the first part
    tableless = set(range(len(out.exports))) - set(counts["file"].to_list())
    for number, tables in enumerate(parts):
        files = counts.filter(pl.col("table_id").is_in(tables))["file"].unique().to_list()
        files = sorted(set(files) | (tableless if number == 0 else set()))
        made = translate_part(out, tables, files)
        for n, events in enumerate(made):
            if not events.height:
                continue
            frame = as_log_rows(events)
            out.table_rows.append(spill._write(frame, out.spilled[n], number, naming))
            day = _first_day(frame)
            if day is not None:
                out.days[n] = min(day, out.days.get(n, day))


def _tables_of_files(out: Translated) -> pl.DataFrame:
    """(file, table_id, rows): the rows of each table in each export file, only what
    gives its table read (a file whose rows name no table counts under none)."""
    found = []
    for n, export in enumerate(out.exports):
        source = export.source
        mapping = source.columns.get("table_id")
        if mapping is None:
            continue
        kind = source.format_of(export.path.name)
        roots = pl.sql_expr(mapping.sql).meta.root_names() if mapping.sql else []
        try:
            data = None if kind == "parquet" else text_of(export.path, out.text_limit)
            own = own_built_ins(export.path, source, data)
            named = [c for c in ([mapping.column] if mapping.column else roots)
                     if c not in BUILT_INS or c in own]
            roots = [c for c in roots if c not in BUILT_INS or c in own]
            raw = read_whole(export.path, source, named if kind != "parquet" else None, data)
            typed = read_typed(export.path, source, roots, data) if roots else None
            # the built-in columns (a table named by its file, say): the row numbers are
            # not needed to count a table's rows
            records = pl.int_range(1, raw.height + 1, eager=True)
            raw = with_built_ins(raw, export.path, records, own)
            typed = None if typed is None else with_built_ins(typed, export.path, records, own)
            table = cells.table_cells(raw, source, typed)
        except Exception:  # noqa: BLE001 - said where the file is read for its part
            continue
        found.append(table.to_frame().group_by("table_id").len("rows").drop_nulls(
            "table_id").with_columns(pl.lit(n).alias("file")))
    schema = {"table_id": pl.String, "rows": pl.UInt32, "file": pl.Int64}
    return pl.concat([pl.DataFrame(schema=schema),
                      *[f.cast(schema).select(list(schema)) for f in found]])


def _first_day(frame: pl.DataFrame) -> date | None:
    found = frame.select(layouts.clock(frame).min()).item()
    return found.date() if isinstance(found, datetime) else None


