"""`auditor import`: exports read through a profile, kept as a Parquet dataset in hive
layout (`facility=.../gaming_day=.../table_id=.../*.parquet`), and read back for an
audit that gives exactly the findings the audit of the exports gives.

Each row keeps `source_file` (the export's path as named) and `source_line`. Beside the
rows: `_import_findings.parquet` (what the import found in the exports: unmapped values,
rows that made no event, ...) and `_import.json` (the profile, each export's digest and
counts, and what each table's exports can show). An audit of the folder reads all of it
back into the same events, at the same files and lines, as `audit --profile`.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time
from pathlib import Path
from urllib.parse import quote

import polars as pl

from ..ingest import vocabulary as v
from ..ingest.problems import Problem
from .layouts import FILE, ROW, clock
from .model import Profile, Source
from .translated import Export, Translated

META = "_import.json"
FINDINGS = "_import_findings.parquet"
UNMAPPED = "_import_unmapped.parquet"
SOURCE_FILE, SOURCE_LINE, SOURCE_ROW = "source_file", "source_line", "source_row"
_FINDING_COLUMNS = {"rule_id": pl.String, "file": pl.String, "line": pl.Int64,
                    "field": pl.String, "observed": pl.String, "expected": pl.String,
                    "message": pl.String}


class DatasetError(Exception):
    """A folder that is not an import dataset this version can read."""


def is_dataset(path: Path) -> bool:
    return path.is_dir() and (path / META).is_file()


def write(out: Translated, facility: str, day_starts: time, folder: Path,
          gaming_day: date | None = None) -> int:
    """The exports' events as a hive dataset in `folder`; returns the rows written.
    `gaming_day`: the day the rows of tables that record no times are filed under (a
    DatasetError naming such a table where it is not given, before anything is
    written)."""
    untimed = _untimed(out)
    if untimed and gaming_day is None:
        raise DatasetError(
            f"table {untimed[0]}" + (f" (and {len(untimed) - 1} other table(s))"
                                     if len(untimed) > 1 else "")
            + " records no times (no ts): give --gaming-day, the day its rows are filed "
            "under")
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for number, (export, events) in enumerate(zip(out.exports, out.events, strict=True)):
        if not events.height:
            continue
        rows = _with_days(events, day_starts, untimed, gaming_day).with_columns(
            pl.lit(str(export.path)).alias(SOURCE_FILE),
            pl.col(v.LINE).alias(SOURCE_LINE), pl.col(ROW).alias(SOURCE_ROW))
        columns = [c for c in v.COLUMNS if c in events.columns]
        for (day, table), part in rows.group_by("_day", "table_id", maintain_order=True):
            place = (folder / f"facility={quote(facility, safe='')}"
                     / f"gaming_day={day or 'unknown'}"
                     / f"table_id={quote(table or 'unknown', safe='')}")
            place.mkdir(parents=True, exist_ok=True)
            part.select(*[pl.col(c).cast(pl.String) for c in columns], SOURCE_FILE,
                        SOURCE_LINE, SOURCE_ROW).write_parquet(place / f"export-{number}.parquet")
            written += part.height
    _findings(out).write_parquet(folder / FINDINGS)
    out.unmapped.join(_paths(out), on=FILE).select(
        SOURCE_FILE, pl.col(v.LINE).alias(SOURCE_LINE), "field").write_parquet(folder / UNMAPPED)
    (folder / META).write_text(json.dumps(_meta(out), indent=2) + "\n", encoding="utf-8")
    return written


def _untimed(out: Translated) -> list[str]:
    """The tables none of whose events has a time (1.3, No clock)."""
    every = [e.select("table_id", clock(e).alias("_t")) for e in out.events if e.height]
    if not every:
        return []
    timed = pl.concat(every).group_by("table_id").agg(pl.col("_t").is_not_null().any())
    return sorted(t for t, has in timed.iter_rows() if t is not None and not has)


def _with_days(events: pl.DataFrame, day_starts: time, untimed: list[str] = (),
               gaming_day: date | None = None) -> pl.DataFrame:
    """`_day` for each event: the gaming day its round's round_start falls in (a
    shoe-level row: that of the next round_start of its table, else of the last); the
    rows of a table that records no times, `gaming_day`."""
    shifted = clock(events) - pl.duration(hours=day_starts.hour, minutes=day_starts.minute,
                                  seconds=day_starts.second)
    start_day = pl.when(pl.col("event") == "round_start").then(shifted.dt.date())
    ordered = events.with_columns(pl.col("seq").cast(pl.Int64, strict=False).alias("_seq"))
    return ordered.with_columns(
        pl.coalesce(start_day.backward_fill().over("table_id", order_by="_seq"),
                    start_day.forward_fill().over("table_id", order_by="_seq"),
                    shifted.dt.date()).cast(pl.String).alias("_day")).drop("_seq").with_columns(
        pl.when(pl.col("table_id").is_in(list(untimed)))
        .then(pl.lit(gaming_day.isoformat() if gaming_day else None, pl.String))
        .otherwise(pl.col("_day")).alias("_day"))


def _paths(out: Translated) -> pl.DataFrame:
    return pl.DataFrame({FILE: list(range(len(out.exports))),
                         SOURCE_FILE: [str(e.path) for e in out.exports]},
                        schema={FILE: pl.Int32, SOURCE_FILE: pl.String})


def _findings(out: Translated) -> pl.DataFrame:
    rows = [{"rule_id": p.rule_id, "file": str(e.path), "line": p.line, "field": p.field,
             "observed": p.observed, "expected": p.expected, "message": p.message}
            for e in out.exports for p in e.problems]
    return pl.DataFrame(rows, schema=_FINDING_COLUMNS)


def _meta(out: Translated) -> dict:
    profile = out.profile
    return {
        "format": "auditor import, export-profiles-v1",
        "written_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        "profile": {"name": profile.name, "path": str(profile.path),
                    "sha256": profile.sha256},
        "exports": [{"path": str(e.path), "source": e.source.name, "layout": e.source.layout,
                     "format": e.source.format_of(e.path.name), "rows": e.rows,
                     "sha256": e.sha256, "bytes": e.size, "repeats": e.repeats,
                     "no_event": e.no_event, "unread": e.unread,
                     "elements_no_event": e.elements_no_event,
                     "missing": e.missing, "header_line": e.header_line}
                    for e in out.exports],
        "skipped": [str(p) for p in out.skipped],
        "tables": {t: sorted(marks) for t, marks in sorted(out.tables.items())},
        "unordered": out.unordered.sort(pl.all()).to_dicts(),
    }


def read(folder: Path) -> Translated:
    """An import dataset back as the exports it was made from, read through its
    profile: the same events at the same files and lines, the same problems."""
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{folder}: {META} cannot be read ({exc})") from None
    recorded = meta["profile"]
    profile = Profile(Path(recorded["path"]), recorded["name"], (), recorded["sha256"])
    exports = [_export(e) for e in meta["exports"]]
    index = {str(e.path): n for n, e in enumerate(exports)}
    problems = pl.read_parquet(folder / FINDINGS)
    for rule_id, file, line, fld, observed, expected, message in problems.iter_rows():
        exports[index[file]].problems.append(
            Problem(rule_id, line, fld, observed, expected, message))
    rows = _rows(folder, index)
    parts = rows.partition_by(FILE, as_dict=True, maintain_order=True)
    empty = rows.clear()
    events = [parts.get((n,), empty) for n in range(len(exports))]
    for export, made in zip(exports, events, strict=True):
        export.made = made[ROW].n_unique() if made.height else 0
        export.events = made.height
    out = Translated(profile, exports, events, [Path(p) for p in meta["skipped"]])
    out.tables = {t: set(marks) for t, marks in meta["tables"].items()}
    if meta["unordered"]:
        out.unordered = pl.DataFrame(meta["unordered"], schema=out.unordered.schema)
    unmapped = pl.read_parquet(folder / UNMAPPED)
    out.unmapped = unmapped.with_columns(
        pl.col(SOURCE_FILE).replace_strict(index, return_dtype=pl.Int32).alias(FILE)).select(
        FILE, pl.col(SOURCE_LINE).alias(v.LINE), "field", pl.lit(None, pl.String).alias("value"))
    return out


def _export(recorded: dict) -> Export:
    kind = recorded["format"] or "csv"
    source = Source(recorded["source"], ("*",), recorded["layout"], kind)
    export = Export(Path(recorded["path"]), source, rows=recorded["rows"],
                    sha256=recorded["sha256"], size=recorded["bytes"],
                    repeats=recorded["repeats"], no_event=recorded["no_event"],
                    unread=recorded["unread"], missing=recorded["missing"],
                    header_line=recorded["header_line"])
    export.elements_no_event = recorded.get("elements_no_event", 0)
    return export


def _rows(folder: Path, index: dict[str, int]) -> pl.DataFrame:
    """Every row of the dataset's Parquet files, in each export's order (table, seq)."""
    files = sorted(p for p in folder.rglob("*.parquet") if not p.name.startswith("_"))
    schema = {**{c: pl.String for c in v.COLUMNS}, SOURCE_FILE: pl.String,
              SOURCE_LINE: pl.Int64, SOURCE_ROW: pl.Int64}
    frames = [pl.read_parquet(p, hive_partitioning=False) for p in files]
    rows = pl.concat([pl.DataFrame(schema=schema), *frames], how="diagonal_relaxed")
    return (rows.with_columns(
        pl.col(SOURCE_FILE).replace_strict(index, return_dtype=pl.Int32).alias(FILE),
        pl.col(SOURCE_LINE).alias(v.LINE), pl.col(SOURCE_ROW).alias(ROW))
        .sort(FILE, "table_id", pl.col("seq").cast(pl.Int64, strict=False), nulls_last=True))
