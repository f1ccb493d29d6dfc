"""Timestamps of an export (export-profiles-v1, "Times"): read with the source's
`timestamp_format` (else ISO 8601), as instants where the source names its `timezone`.

Two things come out of a `ts` cell: the time the format reads (the wall-clock time in
the source's zone, or as written where the source names no zone: a Datetime where every
cell of the file was read, else text, each cell that cannot be read kept as written for
its finding), and the instant used to order files and join wagers by time.
"""

from __future__ import annotations

import polars as pl

from .model import Source

WALL_CLOCK = "%Y-%m-%dT%H:%M:%S"
_ISO_ZONED = "%Y-%m-%dT%H:%M:%S%.f%z"
_ISO_LOCAL = "%Y-%m-%dT%H:%M:%S%.f"


def _parsed(cell: pl.Expr, source: Source) -> tuple[pl.Expr, pl.Expr]:
    """(a zoned instant where the text has an offset, a naive wall-clock time where
    it has none)."""
    if source.timestamp_format is not None:
        fmt = source.timestamp_format
        if "%z" in fmt or "%:z" in fmt or "%#z" in fmt:
            return cell.str.to_datetime(fmt, strict=False, time_zone="UTC"), pl.lit(None)
        return pl.lit(None, pl.Datetime("us", "UTC")), cell.str.to_datetime(fmt, strict=False)
    iso = cell.str.replace(r"^(\d{4}-\d\d-\d\d) ", "${1}T").str.replace(r"Z$", "+00:00")
    return (iso.str.to_datetime(_ISO_ZONED, strict=False, time_zone="UTC"),
            iso.str.to_datetime(_ISO_LOCAL, strict=False))


def with_times(rows: pl.DataFrame, source: Source, column: str = "ts",
               instant_name: str = "_instant", table: str = "table_id") -> pl.DataFrame:
    """`column` as the format reads it and `instant_name` (UTC where a zone is known,
    else the wall clock as written; null where the cell is not a time) for each row."""
    if column not in rows.columns:
        return rows.with_columns(pl.lit(None, pl.Datetime("us")).alias(instant_name))
    cell = pl.col(column)
    # each run of equal times read once (a table writes a few rows a second): the runs'
    # first rows are read, and every row takes its run's reading
    starts = rows.select(cell.ne_missing(cell.shift(1)) | (pl.int_range(pl.len()) == 0)
                         ).to_series()
    run = starts.cast(pl.get_index_type()).cum_sum() - 1
    needed = [column, *([table] if table in rows.columns else [])]
    read = _read_times(rows.select(needed).filter(starts), source, column, instant_name,
                       table)
    wall = read.get_column("_wall")
    if wall.null_count() == read.get_column(column).null_count():
        when = wall  # every cell read: the times themselves
    else:  # the cells read as the format writes them, the others as written
        when = read.select(pl.coalesce(pl.col("_wall").dt.strftime(WALL_CLOCK),
                                       pl.col(column))).to_series()
    return rows.with_columns(when.gather(run).alias(column),
                             read.get_column(instant_name).gather(run))


def _read_times(rows: pl.DataFrame, source: Source, column: str, instant_name: str,
                table: str) -> pl.DataFrame:
    """For each of `rows`: `column` as written (marked where the local time does not
    exist), `_wall` the wall-clock time the format reads, and `instant_name`."""
    cell = pl.col(column)
    zoned, local = _parsed(cell, source)
    frame = rows.with_columns(zoned.dt.cast_time_unit("us").alias("_zoned"),
                              local.cast(pl.Datetime("us")).alias("_local"))
    zone = source.timezone
    if zone is None:
        # taken as written, as the format takes them: an offset is not applied
        as_written = (cell.str.slice(0, 19).str.replace(" ", "T", literal=True)
                      .str.to_datetime(WALL_CLOCK, strict=False)
                      if source.timestamp_format is None
                      else pl.col("_zoned").dt.replace_time_zone(None))
        wall = pl.coalesce("_local", pl.when(pl.col("_zoned").is_not_null()).then(as_written))
        return frame.select(cell, wall.alias("_wall"), wall.alias(instant_name))
    earliest = pl.col("_local").dt.replace_time_zone(zone, ambiguous="earliest",
                                                     non_existent="null")
    latest = pl.col("_local").dt.replace_time_zone(zone, ambiguous="latest",
                                                   non_existent="null")
    frame = frame.with_columns(earliest.alias("_early"), latest.alias("_late"))
    # the hour repeated when clocks go back: the earlier instant, unless the table's
    # previous row in the file is already at or past the later one
    resolved = pl.coalesce(pl.col("_zoned").dt.convert_time_zone(zone), "_early")
    before = resolved.shift(1).over(table) if table in frame.columns else resolved.shift(1)
    local_instant = (pl.when((pl.col("_early") != pl.col("_late")) & (before >= pl.col("_late")))
                     .then("_late").otherwise("_early"))
    instant = pl.coalesce(pl.col("_zoned").dt.convert_time_zone(zone), local_instant)
    skipped = pl.col("_local").is_not_null() & pl.col("_early").is_null()
    text = pl.when(skipped).then(
        cell + pl.lit(f" (a local time that does not exist in {zone})")).otherwise(cell)
    return frame.select(
        text.alias(column), instant.dt.replace_time_zone(None).alias("_wall"),
        instant.dt.convert_time_zone("UTC").dt.replace_time_zone(None).alias(instant_name))
