"""The log as a set of files read in parts of whole tables.

A day's log can be tens of millions of rows; holding it all, typed and sorted,
costs several times its size. So the files are first looked over (rows per
table, the first day), and then read part by part: the rows of a few tables
from every file at a time. Where every part is read in one process (the audit's
worker), a Parquet file is read once and held typed in a few bytes a row for all
the parts (compact); elsewhere it is scanned for each part, with the part's
tables as the filter. The text files of a small log are read once, whole, and their
untyped rows held until the last part; those of any larger log are read a chunk at a
time and spilled to Parquet by table (spill), judged for the log as a whole.

Rows without a table cannot join a part of tables: they come with the first
part, as do the problems of records that could not be read at all.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import polars as pl

from ..scope import Scope
from . import chunks, column_types, compact, readers, sourced, spill, storage, untabled
from . import vocabulary as v
from .parse import time_of
from .readers import RawFile
from .sources import Source, sha256_of
from .text import TextTooLarge

TABLE = "table_id"
# (1.2) the export file and line a row was imported from: findings report them
SOURCE_FILE, SOURCE_LINE = sourced.SOURCE_FILE, sourced.SOURCE_LINE
_READING_ONCE = threading.Lock()  # a file is read once, by the first part to need it


@dataclass(frozen=True)
class InputFile:
    path: Path
    encoding: str
    rows: int  # records read, including those that could not be parsed
    sha256: str
    size: int


@dataclass
class _Held:
    """One file as the parts read it: a text file's rows, or a Parquet file's place."""

    source: Source
    text: RawFile | None = None  # a text file, read whole, untyped
    columns: list[str] = field(default_factory=list)  # a Parquet file's spec columns
    missing: list[str] = field(default_factory=list)
    total: int = 0  # a Parquet file's rows
    broken: list[tuple[int, int]] = field(default_factory=list)  # unreadable Parquet slices
    problems: list = field(default_factory=list)  # the file's own problems (first part)
    typed: compact.Held | None = None  # a Parquet file read once for all its parts
    scanned: bool = False  # read part by part instead (see Log._held_typed)
    first_day: date | None = None  # the day of the file's earliest timestamp
    spilled: spill.Spilled | None = None  # a large text file, spilled to Parquet by table
    # (1.2) its rows name the export file and line they were imported from
    sourced: bool = False
    # its rows without a table past the log's allowance: counted, not held (untabled)
    cut: untabled.Cut | None = None
    untabled_until: int | None = None  # a Parquet file's: the last line of those held

    @property
    def cut_rows(self) -> int:
        return self.cut.rows if self.cut is not None else 0


@dataclass
class Log:
    files: list[InputFile]
    held: list[_Held]
    table_rows: pl.DataFrame  # table_id (null: rows without one), rows
    first_day: date | None  # the day of the earliest timestamp of any row
    # read each Parquet file once and hold it typed for all the parts (compact), rather
    # than scan it again for each part: set where every part is read in one process
    read_once: bool = False
    scope: Scope = field(default_factory=Scope)  # what is audited, what is context only
    hold_rows: int | None = None  # Parquet rows held at most (None: compact.ROWS_AT_MOST)
    max_line: int | None = None  # the longest line read (None: text.MAX_LINE_BYTES)
    # exports: the tables whose exports record no shoes (coups without shoe_starts): a
    # round there lacks no shuffle it could have had (IN013 is neither said nor withholds)
    shoes_unrecorded: frozenset[str] = frozenset()

    def cuts(self) -> list[tuple[int, untabled.Cut]]:
        """Each file's rows without a table that were counted, not held."""
        return [(n, h.cut) for n, h in enumerate(self.held) if h.cut is not None]

    def empty_files(self) -> list[Path]:
        """The files that hold no row at all, and nothing that could not be read."""
        return [file.path for file, held in zip(self.files, self.held, strict=True)
                if file.rows == 0 and not _said_of(held)]

    def first_day_of(self, file_ids: range) -> date | None:
        """The earliest day of the files `file_ids`."""
        return min((self.held[n].first_day for n in file_ids
                    if self.held[n].first_day is not None), default=None)

    @property
    def may_have_orphans(self) -> bool:
        """Whether some row may have no known round: a row without a table, or a
        record that could not be read (its rounds can only be guessed around it)."""
        no_table = self.table_rows["table_id"].null_count() > 0
        return no_table or any(_said_of(h) for h in self.held)

    def parts(self, tables: list[str] | None, first: bool) -> Iterator[tuple[int, RawFile]]:
        """Every file's rows of `tables` (None: every table), with the rows without a
        table and each file's own problems when `first`."""
        for file_id, held in enumerate(self.held):
            if held.spilled is not None:
                yield file_id, held.spilled.part(tables, first)
            elif held.text is not None:
                yield file_id, _text_part(held, tables, first)
            elif self.read_once and tables is not None and self._held_typed(file_id):
                frame, problems = held.typed.part(tables, first, held.untabled_until)
                own = list(held.problems) if first else []
                yield file_id, RawFile(readers.empty(), own, 0, held.missing,
                                       typed=(frame, problems))
            else:
                yield from ((file_id, raw) for raw in _parquet_part(held, tables, first))

    @property
    def rows_held_at_most(self) -> int:
        return _rows_held(self.hold_rows)

    @property
    def parquet_rows(self) -> int:
        return sum(h.total for h in self.held if h.spilled is None and h.columns)

    def _day_start(self) -> int:
        """The first day's midnight, in microseconds (0 where no time is known)."""
        if self.first_day is None:
            return 0
        midnight = datetime.combine(self.first_day, datetime.min.time())
        return (midnight - datetime(1970, 1, 1)) // timedelta(microseconds=1)

    def _held_typed(self, file_id: int) -> bool:
        """Whether the Parquet file is held typed, reading it now if it is not yet. It is
        read part by part instead where it cannot be read whole (a damaged slice), or
        where holding it would hold more than `hold_rows` rows of the log."""
        held = self.held[file_id]
        with _READING_ONCE:
            if held.typed is None and not held.scanned:
                held.typed = self._read_once(held, file_id)
                held.scanned = held.typed is None
        return held.typed is not None

    def _read_once(self, held: _Held, file_id: int) -> compact.Held | None:
        """The file read whole and held, or None where it is to be read part by part."""
        if held.broken or not held.columns or held.total == 0:
            return None
        held_already = sum(h.total for h in self.held if h.typed is not None)
        if held_already + held.total > self.rows_held_at_most:
            return None
        tables = self.table_rows["table_id"].drop_nulls().to_list()
        try:
            return compact.read(_scan_parquet(held.source.path), held.columns, tables,
                                held.total, file_id, self._day_start())
        except Exception:  # noqa: BLE001 - read part by part, to lose the least
            return None


def _said_of(held: _Held) -> bool:
    """Whether reading the file found a problem of its own (it cannot be read, ...)."""
    return bool(held.problems or (held.text is not None and held.text.problems)
                or (held.spilled is not None and held.spilled.problems))


def _in_part(tables: list[str] | None, first: bool, present: bool,
             untabled_until: int | None = None) -> pl.Expr:
    """Whether a row is of the part: of its tables, or (the first part) without a table
    and held (on a line up to `untabled_until`, where the rest are counted apart)."""
    held = pl.lit(True) if untabled_until is None else pl.col(v.LINE) <= untabled_until
    if not present:
        return pl.lit(first) & held  # no table column: every row is without a table
    table = pl.col(TABLE).cast(pl.String)
    if tables is None:
        return table.is_not_null() | held
    wanted = table.is_in(tables)
    return (wanted | (table.is_null() & held)) if first else wanted.fill_null(False)


def _text_part(held: _Held, tables: list[str] | None, first: bool) -> RawFile:
    raw = held.text
    frame = raw.frame.filter(_in_part(tables, first, TABLE in raw.frame.columns))
    return RawFile(frame, list(raw.problems) if first else [], raw.rows_lost if first else 0,
                   raw.missing, raw.header_line)


# --- looking the files over -------------------------------------------------------


class TableTooLarge(Exception):
    """A table's rows, counted so far, are more than a part may hold."""

    def __init__(self, table: str, rows: int) -> None:
        super().__init__(f"table {table} has more than {rows:,} rows")
        self.table, self.rows = table, rows


class _Counted:
    """Each table's rows, counted as the files are read: a TableTooLarge as soon as one
    passes `at_most` (None: no limit), before the rest of the log is read."""

    def __init__(self, at_most: int | None) -> None:
        self.at_most = at_most
        self.rows: dict[str, int] = {}

    def add(self, counts: pl.DataFrame) -> pl.DataFrame:
        if self.at_most is None:
            return counts
        for table, rows in counts.drop_nulls(TABLE).iter_rows():
            self.rows[table] = self.rows.get(table, 0) + rows
            if self.rows[table] > self.at_most:
                raise TableTooLarge(table, self.rows[table])
        return counts


def open_log(sources: list[Source], workdir: Path | None = None, spill_all: bool = False,
             spill_text: bool | None = None, hold_rows: int | None = None,
             chunk_bytes: int | None = None, max_line: int | None = None,
             hold_text: int | None = None, table_rows_at_most: int | None = None) -> Log:
    """The files looked over (rows per table, the first day), Parquet files kept where
    they are, and the text files, judged for the log as a whole, read whole or, with a
    `workdir`, spilled there by table a chunk at a time (`spill_text`; None: where
    there is more text than spill.SPILL_BYTES). `spill_all`: every file is spilled
    (parts read side by side); `hold_rows`: the Parquet rows the parts may hold typed
    (None: compact.ROWS_AT_MOST), a larger file being spilled instead; `chunk_bytes`:
    the text spilled at once (None: chunks.CHUNK_BYTES); `max_line`: the longest line
    read (None: text.MAX_LINE_BYTES); `hold_text`: the text that may be held whole, in
    all (None: any): gzip files that hold more than their size foretold are spilled
    instead, with the rest of the log's text; `table_rows_at_most`: a table counted past
    it stops the reading (TableTooLarge)."""
    if spill_text is None:
        spill_text = spill.should_spill(sources)
    spill_text = workdir is not None and (spill_all or spill_text)
    try:
        return _open_log(sources, workdir, spill_all, spill_text, hold_rows, chunk_bytes,
                         max_line, None if workdir is None else hold_text,
                         _Counted(table_rows_at_most))
    except TextTooLarge:
        return _open_log(sources, workdir, spill_all, True, hold_rows, chunk_bytes,
                         max_line, None, _Counted(table_rows_at_most))


def _open_log(sources: list[Source], workdir: Path | None, spill_all: bool, spill_text: bool,
              hold_rows: int | None, chunk_bytes: int | None, max_line: int | None,
              hold_text: int | None, counted: _Counted) -> Log:
    hold = _rows_held(hold_rows)
    files, held, days = [], [], []
    counts = _CountedList(counted)
    allowance = untabled.Allowance()  # rows without a table held, in file order
    # each file's hash is taken while polars looks the files over (hashing lets go of
    # Python, so the two share the cores)
    with ThreadPoolExecutor(1) as hasher:
        hashes = [hasher.submit(_sha256_if_there, source.path) for source in sources]
        for source, sha256 in zip(sources, hashes, strict=True):
            item = _Held(source)
            days_before = len(days)
            if source.encoding == "parquet":
                rows, lost = _look_over_parquet(item, counts, days, allowance)
                if workdir is not None and _spills(item, spill_all, hold):
                    item.spilled = spill.spill_parquet(
                        _scan_parquet(source.path), item.columns, item.total,
                        workdir / f"file-{len(held)}", len(held), item.missing,
                        item.untabled_until)
            elif spill_text:
                item.spilled = spill.spill(source, workdir / f"file-{len(held)}", len(held),
                                           counts, days, _first_day, chunk_bytes, max_line,
                                           allowance)
                rows, lost = item.spilled.rows, item.spilled.rows_lost
                item.sourced, item.cut = item.spilled.sourced, item.spilled.cut
            else:
                item.text = readers.read(source, max_line, hold_text)
                if hold_text is not None:
                    hold_text -= item.text.text_bytes
                item.sourced = item.text.sourced
                item.text.frame, item.cut = untabled.held_part(item.text.frame, allowance)
                frame = item.text.frame
                present = TABLE in frame.columns
                counts.append(_table_counts(frame.lazy(), present))
                days.append(_first_day(frame.lazy()) if "ts" in frame.columns else None)
                rows, lost = frame.height + item.cut_rows, item.text.rows_lost
            item.first_day = min((d for d in days[days_before:] if d is not None), default=None)
            held.append(item)
            exists = source.path.exists()
            files.append(InputFile(
                path=source.path,
                encoding=source.encoding + (".gz" if source.gzip else ""),
                rows=rows + lost,
                sha256=sha256.result(),
                size=source.path.stat().st_size if exists else 0,
            ))
    table_rows = (
        pl.concat([pl.DataFrame(schema={TABLE: pl.String, "rows": pl.UInt32}), *counts])
        .group_by(TABLE).agg(pl.col("rows").sum()).sort(TABLE, nulls_last=True)
    )
    known = [d for d in days if d is not None]
    return Log(files, held, table_rows, min(known) if known else None, hold_rows=hold_rows,
               max_line=max_line)


class _CountedList(list):
    """The counts of the files' rows per table, each added to the running count as it
    is appended (where the spill appends a chunk's as it goes)."""

    def __init__(self, counted: _Counted) -> None:
        super().__init__()
        self.counted = counted

    def append(self, counts: pl.DataFrame) -> None:
        super().append(self.counted.add(counts))


def _rows_held(hold_rows: int | None) -> int:
    """Parquet rows the parts may hold typed (None: compact.ROWS_AT_MOST, read now)."""
    return compact.ROWS_AT_MOST if hold_rows is None else hold_rows


def _spills(item: _Held, spill_all: bool, hold: int) -> bool:
    """Whether a Parquet file is spilled by table: where it is too large to hold typed
    for all the parts (each would scan it whole), or where parts run side by side; not
    a file of one table already (a partition), nor one that cannot be read whole."""
    if item.broken or not item.columns or hive_values(item.source.path).get(TABLE):
        return False
    return spill_all or item.total > hold


def _sha256_if_there(path: Path) -> str:
    return sha256_of(path) if path.exists() else ""


def _table_counts(frame: pl.LazyFrame, present: bool) -> pl.DataFrame:
    table = pl.col(TABLE).cast(pl.String) if present else pl.lit(None, pl.String).alias(TABLE)
    return (
        frame.select(table.alias(TABLE)).group_by(TABLE).agg(pl.len().alias("rows"))
        .collect().cast({"rows": pl.UInt32})
    )


# A log has a few days of timestamps: the earliest is found among the distinct days
# rather than by parsing every timestamp.
_MAX_DAY_CANDIDATES = 32


def _first_day(frame: pl.LazyFrame) -> date | None:
    dtype = frame.collect_schema()["ts"]
    if dtype != pl.String:  # typed by the file (a Datetime): no text to look at
        found = frame.select(time_of(dtype).min()).collect().item()
        return found.date() if isinstance(found, datetime) else None
    # the smallest text, where it is a timestamp, is of the first day: a timestamp
    # leads with its day in fixed-width digits, so none of an earlier day sorts after it
    smallest = frame.select(pl.col("ts").min()).collect()
    found = smallest.select(time_of(dtype)).item()
    if isinstance(found, datetime):
        return found.date()
    prefix = pl.col("ts").str.slice(0, 10)
    days = frame.select(prefix.unique().drop_nulls().sort()).collect().to_series().to_list()
    if len(days) > _MAX_DAY_CANDIDATES:
        days = [None]  # not a few days: parse every timestamp once
    for day in days:
        rows = frame if day is None else frame.filter(prefix == day)
        found = rows.select(time_of(dtype).min()).collect().item()
        if isinstance(found, datetime):
            return found.date()
    return None


def relocated(findings: pl.DataFrame, log: Log) -> pl.DataFrame:
    """Findings on rows of files that name where each row was imported from
    (`source_file`, `source_line`, hand-history-v1 1.2) reported there instead: their
    `file` and `line` become the export's. A finding of the file itself (no line) stays."""
    named = {str(h.source.path): h.source for h in log.held if h.sourced}
    if not named or findings.is_empty():
        return findings
    at = findings.filter(pl.col("file").is_in(list(named)) & pl.col("line").is_not_null())
    places = [_places(named[name], set(lines), max_line=log.max_line)
              for name, lines in at.group_by("file").agg(pl.col("line").unique()).iter_rows()]
    if not places:
        return findings
    where = pl.concat(places)
    return (findings.join(where, on=["file", "line"], how="left", maintain_order="left")
            .with_columns(pl.coalesce("_file", "file").alias("file"),
                          pl.coalesce("_line", "line").alias("line"))
            .drop("_file", "_line"))


def _places(source: Source, lines: set[int], chunk_bytes: int | None = None,
            max_line: int | None = None) -> pl.DataFrame:
    """(file, line, _file, _line): where each of `lines` of a file was imported from."""
    name = pl.lit(str(source.path)).alias("file")
    if source.encoding != "parquet":
        # a chunk at a time, as the file was read: a large log's text is never held whole
        found = [_chunk_places(chunk, source.encoding, lines)
                 for chunk in chunks.numbered(source, chunk_bytes, max_line)]
        return pl.concat([pl.DataFrame(schema=sourced.PLACES), *found]).select(
            name, "line", "_file", "_line")
    return (_scan_parquet(source.path).with_row_index("line", offset=1)
            .filter(pl.col("line").is_in(list(lines)))
            .select(name, pl.col("line").cast(pl.Int64),
                    pl.col(SOURCE_FILE).cast(pl.String).alias("_file"),
                    pl.col(SOURCE_LINE).cast(pl.Int64, strict=False).alias("_line"))
            .collect())


def _chunk_places(chunk: chunks.Chunk, encoding: str, lines: set[int]) -> pl.DataFrame:
    """(line, _file, _line) of the chunk's lines among `lines`, numbered in the file."""
    text, before = chunks.whole_lines(chunk, encoding)
    local = {line - before for line in lines if line > before}
    if not local:
        return pl.DataFrame(schema=sourced.PLACES)
    return sourced.text_places(text, encoding, local).with_columns(pl.col("line") + before)


def hive_values(path: Path) -> dict[str, str]:
    """The format's columns a file's path names in hive layout (`table_id=BAC-01/...`,
    the folders of a partitioned dataset): other keys (facility=, gaming_day=) aside."""
    found = {}
    for folder in path.parent.parts:
        key, sep, value = folder.partition("=")
        if sep and key in readers.TEXT_SCHEMA:
            found[key] = unquote(value)
    return found


def _scan_parquet(path: Path) -> pl.LazyFrame:
    """A Parquet file's rows, with the values its hive folders name where the file does
    not hold them (no such column, or an empty one)."""
    scan = pl.scan_parquet(storage.polars_source(path))
    held = scan.collect_schema().names()
    return scan.with_columns(
        (pl.coalesce(pl.col(k).cast(pl.String), pl.lit(val)) if k in held else pl.lit(val))
        .alias(k)
        for k, val in hive_values(path).items()
    )


def _may_hold(path: Path, tables: list[str] | None) -> bool:
    """Whether a Parquet file may hold rows of `tables`: not where its hive folder names
    another table (a part reads only the partitions it needs)."""
    table = hive_values(path).get(TABLE)
    return tables is None or table is None or table in tables


def _look_over_parquet(item: _Held, counts: list, days: list,
                       allowance: untabled.Allowance | None = None) -> tuple[int, int]:
    """A Parquet file's columns, rows per table and first day; slices that cannot be
    read are noted (each is reported once, with the first part); its rows without a
    table past the `allowance` are counted (item.cut), not read by any part."""
    path = item.source.path
    try:
        scan = _scan_parquet(path)
        names = scan.collect_schema().names()
        item.total = scan.select(pl.len()).collect().item()
    except Exception as exc:  # noqa: BLE001 - any failure means the file cannot be read
        item.problems = [readers.unreadable(f"the Parquet file cannot be read: {exc}")]
        return 0, 0
    column_types.refuse_unfit(path, scan.collect_schema())
    item.columns = [c for c in names if c in readers.TEXT_SCHEMA]
    item.missing = readers.missing_columns(names)
    item.sourced = {SOURCE_FILE, SOURCE_LINE} <= set(names)
    present = TABLE in names
    wanted = [c for c in (TABLE, "ts") if c in names]
    try:  # the whole file at once; slice by slice only when something cannot be read
        whole = _table_counts(scan.select(wanted), present)
        day = _first_day(scan.select(wanted)) if "ts" in wanted else None
        if allowance is not None:
            whole = _untabled_cut(item, scan, whole, allowance)
        counts.append(whole)
        days.append(day)
        return item.total, 0
    except Exception:  # noqa: BLE001 - the slices below say which rows are lost
        pass
    lost = 0
    for offset, rows in _slices(item.total):
        piece = scan.select(wanted).slice(offset, rows)
        try:
            counts.append(_table_counts(piece, present))
            days.append(_first_day(piece) if "ts" in wanted else None)
        except Exception as exc:  # noqa: BLE001 - a damaged row group loses its rows only
            item.broken.append((offset, rows))
            item.problems.append(readers.unreadable(
                f"rows {offset + 1} to {offset + rows} of the Parquet file cannot be read: "
                f"{exc}", line=offset + 1))
            lost += rows
    return item.total - lost, lost


def _untabled_cut(item: _Held, scan: pl.LazyFrame, counts: pl.DataFrame,
                  allowance: untabled.Allowance) -> pl.DataFrame:
    """The file's rows per table, its rows without a table past the allowance counted
    (item.cut, with their lines, read a slice at a time) and left out: held up to the
    line `item.untabled_until` only."""
    without = int(counts.filter(pl.col(TABLE).is_null())["rows"].sum())
    kept = allowance.take(without)
    if kept == without:
        return counts
    item.cut, item.untabled_until = untabled.Cut(), 0
    lines = scan.select(untabled.untabled(scan).alias("_u")).with_row_index(
        v.LINE, offset=1).filter("_u").select(pl.col(v.LINE).cast(pl.Int64))
    for offset, rows in _slices(without):  # the rows without a table, the n-th on
        piece = lines.slice(offset, rows).collect().to_series()
        held_here = max(0, min(kept - offset, piece.len()))
        if held_here:
            item.untabled_until = int(piece[held_here - 1])
        item.cut.add(piece.slice(held_here))
    return counts.with_columns(
        pl.when(pl.col(TABLE).is_null()).then(kept).otherwise("rows").cast(pl.UInt32)
        .alias("rows"))


def _slices(total: int) -> Iterator[tuple[int, int]]:
    size = readers.parquet_chunk_rows()
    for offset in range(0, total, size):
        yield offset, min(size, total - offset)


def _parquet_part(held: _Held, tables: list[str] | None, first: bool) -> Iterator[RawFile]:
    if not held.columns:
        if first:
            yield RawFile(readers.empty(), list(held.problems), 0, [])
        return
    if not _may_hold(held.source.path, tables):
        if first and held.problems:
            yield RawFile(readers.empty(), list(held.problems), 0, held.missing)
        return
    scan = _scan_parquet(held.source.path)
    keep = _in_part(tables, first, TABLE in held.columns, held.untabled_until)
    if first and held.problems:
        yield RawFile(readers.empty(), list(held.problems), 0, held.missing)
    if not held.broken:
        try:
            whole = readers.parquet_rows(scan, held.columns, keep, 0)
        except Exception:  # noqa: BLE001 - read slice by slice below, to lose the least
            whole = None
        if whole is not None:
            yield RawFile(whole, [], 0, held.missing)
            return
    broken = set(held.broken)
    for offset, rows in _slices(held.total):
        if (offset, rows) in broken:
            continue
        try:
            piece = readers.parquet_rows(scan.slice(offset, rows), held.columns, keep, offset)
        except Exception as exc:  # noqa: BLE001 - a damaged row group loses its rows only
            # every part meets it; the first reports it (the lost rows are counted as
            # rows read that no part parsed)
            lost = [readers.unreadable(
                f"rows {offset + 1} to {offset + rows} of the Parquet file cannot be read: "
                f"{exc}", line=offset + 1)] if first else []
            yield RawFile(readers.empty(), lost, 0, [])
            continue
        yield RawFile(piece, [], 0, held.missing if offset == 0 else [])


def dealt(table_rows: pl.DataFrame, part_rows: int, count: int = 1) -> list[list[str]]:
    """Tables (`table_id`, `rows`) in parts of at most `part_rows` rows (a larger table is
    a part of its own), at least `count` of them where there are as many tables: the
    largest tables first, each to the part holding the fewest rows, so that parts are
    about equal; a part full at part_rows takes no more. Each part's tables sorted, the
    parts by their first."""
    sizes = table_rows.filter(pl.col(TABLE).is_not_null()).sort(
        "rows", TABLE, descending=[True, False])
    total = int(sizes["rows"].sum())
    count = max(min(count, sizes.height), -(-total // max(part_rows, 1)), 1)
    parts: list[list[str]] = [[] for _ in range(count)]
    rows = [0] * count
    for table_id, length in sizes.select(TABLE, "rows").iter_rows():
        lightest = min(range(len(parts)), key=rows.__getitem__)
        if parts[lightest] and rows[lightest] + length > part_rows:
            parts.append([])
            rows.append(0)
            lightest = len(parts) - 1
        parts[lightest].append(table_id)
        rows[lightest] += length
    return sorted((sorted(p) for p in parts if p), key=lambda p: p[0]) or [[]]


def open_spilled(named: list[tuple[Source, InputFile, spill.Spilled]],
                 counts: list[pl.DataFrame], days: dict[int, date]) -> Log:
    """A log of rows already read and spilled by table (exports too large to hold,
    read through a profile a part of their tables at a time): each part reads its
    tables' rows only."""
    held, files = [], []
    for source, file, spilled in named:
        held.append(_Held(source, spilled=spilled))
        files.append(file)
    table_rows = (
        pl.concat([pl.DataFrame(schema={TABLE: pl.String, "rows": pl.UInt32}), *counts])
        .group_by(TABLE).agg(pl.col("rows").sum()).sort(TABLE, nulls_last=True)
    )
    for number, item in enumerate(held):
        item.first_day = days.get(number)
    return Log(files, held, table_rows, min(days.values()) if days else None)


def open_rows(named: list[tuple[Source, InputFile, RawFile]]) -> Log:
    """A log of rows already read (exports read through a profile: each file's events,
    at its own lines), held whole like a small log's text files."""
    held, counts, days, files = [], [], [], []
    for source, file, raw in named:
        item = _Held(source, text=raw)
        frame = raw.frame
        counts.append(_table_counts(frame.lazy(), TABLE in frame.columns))
        day = _first_day(frame.lazy()) if frame.height else None
        days.append(day)
        item.first_day = day
        held.append(item)
        files.append(file)
    table_rows = (
        pl.concat([pl.DataFrame(schema={TABLE: pl.String, "rows": pl.UInt32}), *counts])
        .group_by(TABLE).agg(pl.col("rows").sum()).sort(TABLE, nulls_last=True)
    )
    known = [d for d in days if d is not None]
    return Log(files, held, table_rows, min(known) if known else None)
