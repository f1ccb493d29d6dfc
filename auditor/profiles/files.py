"""Which source of a profile reads a file, and what a file holds that its source cannot
read: the mapped columns it lacks, and the values no map covers (`profile check`)."""

from __future__ import annotations

import csv
import fnmatch
import glob
import gzip
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import polars as pl

from .. import budget
from ..ingest import storage
from ..ingest.sources import SourceError, glob_matches
from . import ProfileError
from .cells import SqlFailed, sql_cells, sql_values
from .lists import hands_of
from .model import BUILT_INS, LIST_COLUMNS, Profile, Source


def base_name(path: Path | str) -> str:
    """The last segment of a path or URL, without its query, percent-decoded."""
    text = str(path)
    if "://" in text:
        text = urlsplit(text).path
    return unquote(text.rstrip("/").rsplit("/", 1)[-1])


def files_named(arguments) -> list[tuple[Path, bool]]:
    """Each file the LOG arguments name (files, folders, globs; URLs too), and whether it
    was named itself: a folder's or a glob's file that no source matches is skipped, a
    file named on the command line is not. Any extension: the profile's `files` choose."""
    found: list[tuple[Path, bool]] = []
    for argument in arguments:
        matched = glob_matches(argument) if glob.has_magic(argument) else None
        path = storage.location(argument)
        if matched is None and path.is_file():
            found.append((path, True))
            continue
        folders = matched if matched is not None else [path] if path.is_dir() else []
        files = [m for m in matched or [] if m.is_file()]
        files += [f for folder in folders if folder.is_dir()
                  for f in sorted(folder.rglob("*"), key=lambda p: p.parts) if f.is_file()]
        if matched is None and not folders:
            raise SourceError(f"{argument}: no such file or folder")
        if not files:
            raise SourceError(f"{argument}: names no file")
        found += [(f, False) for f in files]
    return found


def sources_of(profile: Profile, path: Path | str) -> list[Source]:
    """The sources whose `files` match the file's base name, in profile order: the first
    reads it (case-sensitive; `*`, `?`, `[...]`, `[!...]`)."""
    name = base_name(path)
    return [s for s in profile.sources
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in s.files)]


def readers_of(profile: Profile, path: Path | str) -> list[Source]:
    """The sources that read a file: the first that matches; (1.1) where that is a coups
    or wagers source, the first coups source and the first wagers source that match it
    (one file read as both); an events source reads a file alone."""
    matching = sources_of(profile, path)
    if not matching or matching[0].layout == "events":
        return matching[:1]
    found = [next((s for s in matching if s.layout == layout), None)
             for layout in ("coups", "wagers")]
    return [s for s in found if s is not None]


def check_readers(profile: Profile, path: Path, readers: list[Source]) -> None:
    """A ProfileError, naming the key, where the sources that read a file cannot: a
    wagers source that joins by round and leaves shoe_id or round unmapped reads a file
    no coups source reads; (1.1, one file, two layouts) a wagers source that sets `join`,
    or whose table, shoe and round keys are not the coups source's own."""
    first = readers[0]
    if len(readers) == 1:
        lacking = [c for c in first.needed if c not in first.columns]
        if lacking:  # a wagers source that joins by round, its file read as wagers only
            raise ProfileError(
                f"{profile.path}: source {first.name!r}.columns.{lacking[0]}: is needed by "
                f'the wagers layout (join = "round"): {path.name} is read as wagers only, '
                "so its rows join their rounds by table_id, shoe_id and round")
        return
    coups, wagers = readers
    where = f"{profile.path}: source {wagers.name!r}"
    if wagers.join_set:
        raise ProfileError(f"{where}.join: must not be set: {path.name} is read as both "
                           f"coups (source {coups.name!r}) and wagers, and a record's wager "
                           "joins the coup made from that record")
    for key in ("table_id", "shoe_id", "round"):
        mapping = coups.columns.get(key)
        if mapping != wagers.columns.get(key):
            raise ProfileError(
                f"{where}.columns.{key}: must be the coups source {coups.name!r}'s own (its "
                f"{key}: {'not mapped' if mapping is None else mapping.key}), as "
                f"{path.name} is read as both coups and wagers")


@dataclass
class Looked:
    """What one file holds, as its source reads it."""

    rows: int = 0
    missing: list[str] = field(default_factory=list)  # mapped export columns it lacks
    # (canonical column, value, rows, first line) of each value no map covers
    unmapped: list[tuple[str, str, int, int]] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)  # columns a CSV header names twice
    # (key, column) of each key no row of a JSON Lines file has, that a column its
    # layout needs is taken from
    absent: list[tuple[str, str]] = field(default_factory=list)
    tables: set[str] = field(default_factory=set)  # the tables its rows name
    own: list[str] = field(default_factory=list)  # (1.1) built-ins the export has its own of


def look(path: Path, source: Source, limit: int | None = None) -> Looked:
    """The file read whole, every column as text, against its source's mappings.
    `limit`: the most text it may hold (text_of)."""
    kind = source.format_of(path.name)
    data = None if kind == "parquet" else text_of(path, limit)
    own = own_built_ins(path, source, data)
    named = [c for c in named_columns(source) if c not in BUILT_INS or c in own]
    frame = read_whole(path, source, named if kind == "csv" else None, data)
    found = Looked(rows=frame.height)
    found.missing = [c for c in named if c not in frame.columns]
    found.own = sorted(own & set(BUILT_INS) & set(named_columns(source)))
    records = pl.int_range(1, frame.height + 1, eager=True)
    frame = with_built_ins(frame, path, records, own)
    if source.format_of(path.name) == "jsonl":
        found.absent = absent_keys(source, frame, data)
    if source.format_of(path.name) == "csv":
        header = csv_header(data, source.delimiter)
        found.twice = named_twice(header)
    table = source.columns.get("table_id")
    if table is not None and table.column in frame.columns:
        found.tables = set(frame.get_column(table.column).cast(pl.String).str.strip_chars()
                           .drop_nulls().unique().to_list())
    elif table is not None and table.constant:
        found.tables = {str(table.value)}
    roots = [c for c in sql_columns(source) if c not in BUILT_INS or c in own]
    if source.format_of(path.name) == "jsonl" or not set(roots) & set(found.missing):
        # as an audit would: a mapping's SQL that fails on the file stops it
        typed = with_built_ins(read_typed(path, source, roots, data), path, records, own) \
            if roots else frame
        lists = LIST_COLUMNS if source.layout == "coups" and source.game == "blackjack" else ()
        try:
            sql_cells(typed, source, lists)
            for name in lists:
                mapping = source.columns.get(name)
                if mapping is not None and mapping.sql is not None:
                    sql_values(typed, source, name, mapping.sql)
        except SqlFailed as exc:
            raise ProfileError(f"{path}: {exc}") from None
    lines = frame.with_columns(lines_of(path, source, frame.height, data).alias("line"))
    for canonical, mapped in source.values.items():
        column = source.columns.get(canonical)
        if column is None or column.column is None or column.column not in frame.columns:
            continue
        text = pl.col(column.column).cast(pl.String).str.strip_chars()
        stray = (lines.filter(text.is_not_null() & (text != "")
                              & ~text.is_in(list(mapped)))
                 .group_by(text.alias("value"))
                 .agg(pl.len().alias("rows"), pl.col("line").min().alias("first"))
                 .sort("first"))
        found.unmapped += [(canonical, value, rows, first)
                           for value, rows, first in stray.iter_rows()]
    found.unmapped += _unmapped_actions(lines, source)
    return found


def needed_keys(source: Source) -> dict[str, str]:
    """Each export column (a JSON Lines key) a column the source's layout needs is taken
    from, by its name or in its SQL, and that column."""
    found: dict[str, str] = {}
    for column in source.needed:
        mapping = source.columns.get(column)
        if mapping is None or mapping.constant:
            continue
        keys = ([mapping.column] if mapping.column is not None
                else pl.sql_expr(mapping.sql).meta.root_names())
        for key in keys:
            found.setdefault(key, column)
    return found


def absent_keys(source: Source, frame: pl.DataFrame, data: bytes) -> list[tuple[str, str]]:
    """(key, column) of each key of needed_keys that no row of a JSON Lines file has: a
    mapping that names a key the export does not write, which would leave that column
    empty in every row (a key absent from some rows only is an empty cell there; a file
    of no rows lacks nothing). `frame`: the file as read, the keys asked for included
    (null where absent: those null in every row are looked for in `data`)."""
    if not frame.height:
        return []
    needed = needed_keys(source)
    unseen = [k for k in needed
              if k not in frame.columns or frame.get_column(k).null_count() == frame.height]
    if any(k in frame.columns for k in unseen):
        try:  # null in every row, or absent from every row: every key a row has
            written = set(pl.read_ndjson(data, infer_schema_length=None).columns)
        except pl.exceptions.PolarsError:  # unreadable so: taken as written
            written = set(unseen)
        unseen = [k for k in unseen if k not in written]
    return [(k, needed[k]) for k in unseen]


def absent_message(path: Path, source: Source, key: str, column: str) -> str:
    return (f"{path}: no row has the key {key!r}, from which the profile's source "
            f"{source.name!r} takes {column}, a column the {source.layout} layout needs")


def sql_columns(source: Source) -> list[str]:
    """The export columns a source's SQL expressions read, each once."""
    named = [c for m in source.mappings() if m.sql is not None
             for c in pl.sql_expr(m.sql).meta.root_names()]
    return list(dict.fromkeys(named))


def own_built_ins(path: Path, source: Source, data: bytes | None) -> set[str]:
    """The built-in columns (`_row`, `_file`) the export has a column of its own of: the
    export's wins (1.1)."""
    kind = source.format_of(path.name)
    if kind == "csv":
        return set(BUILT_INS) & set(csv_header(data or b"", source.delimiter))
    if kind == "parquet":
        try:
            return set(BUILT_INS) & set(pl.read_parquet_schema(path))
        except Exception:  # noqa: BLE001 - a file that cannot be read: said when read
            return set()
    said = [b for b in BUILT_INS if f'"{b}"'.encode() in (data or b"")]
    if not said:
        return set()
    try:
        return set(said) & set(pl.read_ndjson(data, infer_schema_length=None).columns)
    except pl.exceptions.PolarsError:
        return set()


def with_built_ins(frame: pl.DataFrame, path: Path, records: pl.Series,
                   own: set[str]) -> pl.DataFrame:
    """`frame` with the built-in columns the export has none of its own of: `_row` (each
    record's 1-based number in its file, `records`) and `_file` (the file's base name)."""
    made = []
    if "_row" not in own:
        made.append(records.cast(pl.Int64).alias("_row"))
    if "_file" not in own:
        made.append(pl.lit(base_name(path), pl.String).alias("_file"))
    return frame.with_columns(made) if made else frame


def _unmapped_actions(frame: pl.DataFrame, source: Source) -> list[tuple[str, str, int, int]]:
    """A blackjack coups source's decisions no [source.values.action] entry covers."""
    table, mapping = source.values.get("action"), source.columns.get("actions")
    if not table or mapping is None or mapping.column not in frame.columns:
        return []
    separator = source.cards.separator if source.cards else " "
    hands = hands_of(frame.get_column(mapping.column), source.lists, separator)
    items = frame.select(hands.get_column("hands").alias("a"), "line")
    stray = (items.explode("a").explode("a").filter(pl.col("a").is_not_null()
                                                    & ~pl.col("a").is_in(list(table)))
             .group_by("a").agg(pl.col("line").n_unique().alias("rows"),
                                pl.col("line").min().alias("first")).sort("first"))
    return [("action", value, rows, first) for value, rows, first in stray.iter_rows()]


def named_columns(source: Source) -> list[str]:
    """The export columns a source names: mapped directly, inside its SQL expressions,
    as card columns, and in `repeat_key`, each once in profile order."""
    named: list[str] = []
    for mapping in source.mappings():
        if mapping.column is not None:
            named.append(mapping.column)
        elif mapping.sql is not None:
            named += pl.sql_expr(mapping.sql).meta.root_names()
    named += source.repeat_key
    return list(dict.fromkeys(named))


@dataclass
class CsvLines:
    """Where each row polars read from a CSV file starts, and which rows hold nothing
    of a record: a blank line (no row), or a record with a line break in a field
    (malformed at its first line, as in the format)."""

    lines: pl.Series
    blank: list[int] = field(default_factory=list)  # row indices of blank lines
    broken: list[tuple[int, int]] = field(default_factory=list)  # (row index, first line)


def csv_lines(data: bytes, delimiter: str, rows: int) -> CsvLines:
    """The lines of a CSV file's rows (the header is line 1; blank lines counted). The
    usual file (no blank line, no line break in a field) is counted over the bytes; any
    other is read record by record to place them."""
    count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if count == rows + 1 and not _BLANK_LINE.search(data):
        return CsvLines(pl.int_range(2, rows + 2, eager=True))
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()
    reader = csv.reader(text, delimiter=delimiter)
    next(reader, None)  # the header
    lines, blank, broken = [], [], []
    start = reader.line_num + 1
    for record in reader:
        row = len(lines)
        lines.append(start)
        if not record or all(not cell.strip() for cell in record) and len(record) <= 1:
            blank.append(row)
        elif reader.line_num > start:
            broken.append((row, start))
        start = reader.line_num + 1
    if len(lines) != rows:  # read otherwise than polars: keep the counted lines
        return CsvLines(pl.int_range(2, rows + 2, eager=True))
    return CsvLines(pl.Series(lines, dtype=pl.Int64), blank, broken)


def lines_of(path: Path, source: Source, rows: int, data: bytes | None = None) -> pl.Series:
    """Each row's line: a CSV row's below its header, a Parquet row's number, and a JSON
    Lines record's line in the text, blank lines counted (polars' reader passes them).
    `data`: the file's text, where it was read already."""
    kind = source.format_of(path.name)
    if kind != "jsonl":
        return pl.int_range(2 if kind == "csv" else 1, rows + (2 if kind == "csv" else 1),
                            eager=True)
    data = text_of(path) if data is None else data
    if not _BLANK_LINE.search(data) and not data[:1].isspace():
        return pl.int_range(1, rows + 1, eager=True)  # no blank line: one record a line
    text = pl.Series([data.decode("utf-8", errors="replace")]).str.split("\n").explode()
    numbered = text.to_frame("text").with_row_index("line", offset=1)
    records = numbered.filter(pl.col("text").str.strip_chars() != "")["line"]
    return records.cast(pl.Int64) if records.len() == rows else pl.int_range(
        1, rows + 1, eager=True)


_BLANK_LINE = re.compile(rb"\n[ \t\r]*(\n|$)(?!\Z)|\n[ \t\r]+\Z")


def csv_header(data: bytes, delimiter: str) -> list[str]:
    """A CSV file's column names as written (a byte-order mark and spaces removed)."""
    first = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").lstrip("\ufeff")
    return [name.strip() for name in next(csv.reader([first], delimiter=delimiter), [])]


def named_twice(header: list[str]) -> list[str]:
    """The names a CSV header gives more than one column, sorted (counted once each: a
    header may have thousands)."""
    return sorted(name for name, count in Counter(header).items() if count > 1)


def text_of(path: Path, limit: int | None = None) -> bytes:
    """A file's bytes; a gzip file's (its first two bytes say it) decompressed: every
    member of it (gzip files written one after another are one), a cut or corrupt one a
    gzip.BadGzipFile. `limit`: the most text it may hold (budget.export_text_limit),
    decompressed as it streams so that a small file that expands to gigabytes stops
    there, a budget.BudgetError naming it."""
    with path.open("rb") as handle:
        if handle.read(2) != b"\x1f\x8b":
            handle.seek(0)
            return handle.read()
        handle.seek(0)
        return _gunzipped(handle, path, limit)


_GZIP_READ_BYTES = 1 << 20  # compressed bytes read at once
_GZIP_OUT_BYTES = 16 << 20  # text made at once from them, at most (a bomb's stays small)


def _gunzipped(handle, path: Path, limit: int | None) -> bytes:
    text = bytearray()
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    pending, begun, more = b"", False, False  # input not decompressed yet; a member has
    # begun; text may remain to make from what was read (its last call filled its room)
    while True:
        if not pending and not more:
            pending = handle.read(_GZIP_READ_BYTES)
            if not pending:
                break
        if not begun:  # between members zero bytes may pad a file, as gzip allows
            pending = pending.lstrip(b"\0")
            if not pending:
                continue
            begun = True
        try:
            made = inflater.decompress(pending, _GZIP_OUT_BYTES)
        except zlib.error as exc:
            raise gzip.BadGzipFile(f"the gzip data is corrupt ({exc})") from None
        text += made
        if limit is not None and len(text) > limit:
            raise budget.BudgetError(
                f"{path}: the gzip file holds more than {limit / (1 << 20):,.0f} MB of text, "
                "the most one export may hold within the memory budget (read whole, an "
                f"export takes about {budget.EXPORT_FACTOR} times its text): split the "
                "file, or set a larger --memory")
        pending, more = inflater.unconsumed_tail, len(made) == _GZIP_OUT_BYTES
        if inflater.eof:  # a member ends: another may follow (what is left of the input)
            pending = inflater.unused_data
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            begun = more = False
    if begun:
        raise gzip.BadGzipFile("the gzip stream ends early: the file is cut short, and "
                               "none of it is read")
    return bytes(text)


def read_whole(path: Path, source: Source, columns: list[str] | None = None,
               data: bytes | None = None) -> pl.DataFrame:
    """A file read whole: CSV every column as text (with `columns`: those its header
    names only), JSON Lines as JSON types it (with `columns`: those keys only, each as
    its text), Parquet as stored (a .gz file decompressed first). `data`: the file's
    text, where it was read already."""
    kind = source.format_of(path.name)
    if kind == "parquet":
        return pl.read_parquet(path)
    data = text_of(path) if data is None else data
    if kind == "csv":
        return _read_csv(data, source.delimiter, columns)
    if columns is not None:
        try:
            return pl.read_ndjson(data, schema={c: pl.String for c in columns})
        except pl.exceptions.PolarsError:  # a value that is not a scalar: typed below
            pass
    return pl.read_ndjson(data, infer_schema_length=None)


def _read_csv(data: bytes, delimiter: str, columns: list[str] | None) -> pl.DataFrame:
    """A CSV file, every column as text; with `columns`, only those of them its header
    names (by their place in it, so that a name written with spaces around it is still
    found): a header of a hundred thousand other columns then costs no frame of them."""
    if columns is None:
        return pl.read_csv(data, infer_schema=False, separator=delimiter)
    wanted = set(columns)
    places = [n for n, name in enumerate(csv_header(data, delimiter)) if name in wanted]
    # none of them: the first column, so that the rows are still counted
    return pl.read_csv(data, infer_schema=False, separator=delimiter,
                       columns=places or [0])


def read_typed(path: Path, source: Source, columns: list[str], data: bytes) -> pl.DataFrame:
    """The columns an SQL expression reads, each with the type polars infers from all
    the file's rows (a column empty throughout is text; Parquet as stored)."""
    kind = source.format_of(path.name)
    if kind == "parquet":
        return pl.read_parquet(path, columns=columns)
    if kind == "csv":
        frame = pl.read_csv(data, separator=source.delimiter, infer_schema_length=None,
                            columns=columns)
    else:
        frame = pl.read_ndjson(data, infer_schema_length=None)
        frame = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in columns
                                   if c not in frame.columns).select(columns)
    return frame.with_columns(pl.col(c).cast(pl.String) for c in columns
                              if frame.schema[c] == pl.Null)
