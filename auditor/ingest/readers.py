"""Reading one log file into a frame of its columns, each row with its line.

Every encoding the format allows ends up as the same shape: the spec's
columns (text columns as strings, Parquet columns as stored) plus `line`, the
1-based line (CSV: the header is line 1; Parquet: the row number). A record
that cannot be read is a problem with its line, and the rest of the file is
still read: a fast path reads clean files whole, and only a damaged file is
read line by line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field

import polars as pl

from . import sourced, text
from . import vocabulary as v
from .problems import Problem
from .sources import Source

IN_FILE_UNREADABLE = text.IN_FILE_UNREADABLE
IN_RECORD_MALFORMED = text.IN_RECORD_MALFORMED

TEXT_SCHEMA = {c: pl.String for c in v.COLUMNS}
# The format's integers (and JSON's booleans) typed by polars' reader as it reads them:
# cheaper than reading them as text to parse. A file where any such value is written
# otherwise (a JSON "3" or 3.0, a CSV " 3") makes the reader fail, and it is read as
# text instead: parse.typed reads either the same way.
TYPED_SCHEMA = {**TEXT_SCHEMA, **{c: pl.Int64 for c in v.INTEGER_COLUMNS},
               **{c: pl.Boolean for c in v.BOOLEAN_COLUMNS}}


@dataclass
class RawFile:
    frame: pl.DataFrame  # the spec's columns present in the file, plus `line`
    problems: list[Problem] = field(default_factory=list)
    rows_lost: int = 0  # records that could not be read (each also a problem)
    missing: list[str] = field(default_factory=list)  # spec columns the file lacks
    header_line: int | None = None  # where a missing column would have been named
    # rows already typed (the canonical frame, and the problems of typing it), in place
    # of `frame`: a Parquet file held typed for all its parts (compact.Held)
    typed: tuple[pl.DataFrame, pl.DataFrame] | None = None
    sourced: bool = False  # (1.2) its rows name the export file and line they came from
    text_bytes: int = 0  # the text read (decompressed), where read whole


def read(source: Source, max_line: int | None = None, cap: int | None = None) -> RawFile:
    """Read a JSON Lines or CSV log file; never raises for bad content, only reports it.
    Lines longer than `max_line` are cut out and reported (text.pieces); more than `cap`
    bytes of text is text.TextTooLarge. (Parquet files are scanned part by part:
    `partition`.)"""
    data, problems = read_bytes(source, max_line, cap)
    if data is None:
        return RawFile(empty(), problems)
    raw = _read_jsonl(data) if source.encoding == "jsonl" else _read_csv(data)
    raw.problems[:0] = problems
    raw.sourced = sourced.names_sources(data, source.encoding)
    raw.text_bytes = len(data)
    return raw


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema={**TEXT_SCHEMA, v.LINE: pl.Int64})


def read_bytes(source: Source, max_line: int | None = None,
               cap: int | None = None) -> tuple[bytes | None, list[Problem]]:
    """The file's text whole (a gzip file's, every member), its long lines cut out, and
    the problems of reading it: what was read before a fault is still read."""
    piece = next(text.pieces(source, None, max_line, cap,
                             read_bytes=None if not source.gzip else text.READ_BYTES), None)
    if piece is None:
        return b"", []
    if not piece.text and piece.problems:
        return None, piece.problems  # nothing could be read
    return piece.text, piece.problems


unreadable = text.unreadable


# --- JSON Lines -------------------------------------------------------------


# A line that is blank, or white space only, between two others: it holds no event, and
# polars' reader would skip it without a word, so the line numbers after it would shift
_BLANK_LINE = re.compile(rb"\n[ \t\r\x0b\x0c]*\n")
_BLANK_FIRST_LINE = re.compile(rb"[ \t\r\x0b\x0c]*\n")


def _read_jsonl(data: bytes, newlines: int | None = None) -> RawFile:
    """A clean file (every line an object, no blank line) is read whole by polars: what
    is checked first are searches over the bytes, not a loop over the lines. Any other
    is read line by line. `newlines`: the line breaks in `data`, where counted already."""
    lines = _clean_jsonl_lines(data, newlines)
    if lines:
        frame = _polars_jsonl(data, TYPED_SCHEMA)
        if frame is None:
            frame = _polars_jsonl(data, TEXT_SCHEMA)
        if frame is not None and frame.height == lines:
            return RawFile(frame.with_columns(_line_numbers(frame.height)))
    split = data.split(b"\n")
    if split and split[-1].strip() == b"":
        split.pop()
    return _read_jsonl_by_line(split)


def _clean_jsonl_lines(data: bytes, newlines: int | None = None) -> int | None:
    """The lines of JSON Lines text where none is blank (polars' reader then reads one
    record a line, or fails), else None."""
    if _BLANK_LINE.search(data) or _BLANK_FIRST_LINE.match(data):
        return None
    return line_count(data, newlines)


def _polars_jsonl(data: bytes, schema: dict) -> pl.DataFrame | None:
    try:
        return pl.read_ndjson(io.BytesIO(data), schema=schema)
    except Exception:  # noqa: BLE001 - any parse failure: read otherwise
        return None


def line_count(data: bytes, newlines: int | None = None) -> int:
    """Lines of the text, the last one counted where it holds more than white space
    (`newlines`: its line breaks, where counted already)."""
    last = data.rfind(b"\n")
    breaks = data.count(b"\n") if newlines is None else newlines
    return breaks + (1 if data[last + 1:].strip() else 0)


def _line_numbers(n: int, start: int = 1) -> pl.Series:
    return pl.Series(v.LINE, range(start, start + n), dtype=pl.Int64)


def _read_jsonl_by_line(lines: list[bytes]) -> RawFile:
    """The careful path: each line on its own, so one bad line costs one row."""
    records: list[dict] = []
    numbers: list[int] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue  # a blank line holds no event
        record, error = _parse_json_object(line)
        if error:
            problems.append(_malformed(number, line, error))
            continue
        records.append(record)
        numbers.append(number)
    frame = pl.DataFrame(
        {c: [_as_text(r.get(c)) for r in records] for c in v.COLUMNS},
        schema=TEXT_SCHEMA,
    ).with_columns(pl.Series(v.LINE, numbers, dtype=pl.Int64))
    return RawFile(frame, problems, rows_lost=len(problems))


def _parse_json_object(line: bytes) -> tuple[dict, str | None]:
    try:
        record = json.loads(line)
    except UnicodeDecodeError:
        return {}, "the line is not UTF-8 text"
    except json.JSONDecodeError as exc:
        return {}, f"the line is not valid JSON ({exc.msg} at character {exc.pos + 1})"
    if not isinstance(record, dict):
        return {}, "the line is JSON but not an object"
    return record, None


def _as_text(value: object) -> str | None:
    """A JSON value as the text the typed parser reads (as polars would give it)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _malformed(number: int, line: bytes, why: str) -> Problem:
    excerpt = line[:200].decode("utf-8", "replace")
    return Problem(
        IN_RECORD_MALFORMED,
        number,
        None,
        excerpt,
        "one complete record",
        f"Line {number} cannot be read: {why}.",
    )


# --- CSV --------------------------------------------------------------------


def _read_csv(data: bytes, newlines: int | None = None) -> RawFile:
    header = sourced.csv_header(data)
    if header is None:
        first = data.split(b"\n", 1)[0].rstrip(b"\r")
        why = (": a carriage return in it ends no line (the format's lines end with a line "
               "feed)" if b"\r" in first else "")
        return RawFile(empty(), [unreadable(f"the CSV header row cannot be read{why}", line=1)])
    problems: list[Problem] = []
    if b'"' in data:
        frame, bad = _read_csv_by_row(data, header)
    else:
        frame, bad = _read_csv_fast(data, header, newlines)
    problems.extend(bad)
    keep = [c for c in dict.fromkeys(header) if c in TEXT_SCHEMA]
    frame = frame.select([*keep, v.LINE])
    return RawFile(
        frame, problems, rows_lost=len(bad), missing=missing_columns(header), header_line=1
    )


def missing_columns(columns: list[str]) -> list[str]:
    return [c for c in v.COLUMNS if c not in columns]


# An empty line of a CSV file holds no event (polars' reader would make it a row of nulls)
_BLANK_CSV_LINE = re.compile(rb"\n\r?\n")


def _read_csv_fast(data: bytes, header: list[str],
                   newlines: int | None = None) -> tuple[pl.DataFrame, list[Problem]]:
    """Unquoted CSV. A clean file (no empty line, as many commas as its rows need and
    no row with more fields than the header) is read whole by polars, checked by
    searches over the bytes; any other row by row, a row bad when its comma count
    differs from the header's."""
    rows = _clean_csv_rows(data, len(header), newlines)
    if rows:
        frame = _polars_csv(data, header, TYPED_SCHEMA)
        if frame is None:
            frame = _polars_csv(data, header)
        if frame is not None and frame.height == rows:
            return frame.with_columns(_line_numbers(rows, start=2)), []
    return _read_csv_checked(data, header)


def _clean_csv_rows(data: bytes, width: int, newlines: int | None = None) -> int | None:
    """The rows below the header of unquoted CSV text where no line is empty and the
    commas are as many as rows of `width` fields need (polars' reader then reads one
    record a line, or fails on a row with more), else None."""
    rows = line_count(data, newlines) - 1
    if _BLANK_CSV_LINE.search(data) or data.count(b",") != (width - 1) * (rows + 1):
        return None
    return rows


def _polars_csv(data: bytes, header: list[str],
                types: dict | None = None) -> pl.DataFrame | None:
    """The format's columns of the CSV, read by polars, every one as text, or (`types`)
    the format's integers as integers: a file with any that is not one plainly ("3.0",
    " 3") fails, and is read as text instead. Other columns are not read: a file
    with thousands of them costs what its rows of the format's cost."""
    wanted = [name for name in dict.fromkeys(header) if name in TEXT_SCHEMA]
    schema = {name: pl.String for name in wanted}
    if types is not None:
        schema |= {name: pl.Int64 for name in wanted if types.get(name) == pl.Int64}
    try:
        return pl.read_csv(data, infer_schema=False, has_header=True, columns=wanted,
                           schema_overrides=schema)
    except Exception:  # noqa: BLE001 - e.g. bad UTF-8 or a ragged row: read it carefully
        return None


def _read_csv_checked(data: bytes, header: list[str]) -> tuple[pl.DataFrame, list[Problem]]:
    """Unquoted CSV with some row out of shape: the rows whose comma count is the
    header's are read by polars, each other is a problem at its line."""
    width = len(header)
    lines = data.split(b"\n")
    good: list[bytes] = [lines[0]]
    numbers: list[int] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.rstrip(b"\r")
        if not stripped:
            continue
        if stripped.count(b",") + 1 != width:
            why = f"it has {stripped.count(b',') + 1} fields where the header has {width}"
            problems.append(_malformed(number, stripped, why))
            continue
        good.append(stripped)
        numbers.append(number)
    frame = _polars_csv(b"\n".join(good), header)
    if frame is None:
        return _read_csv_by_row(data, header)
    return frame.with_columns(pl.Series(v.LINE, numbers, dtype=pl.Int64)), problems


def _read_csv_by_row(data: bytes, header: list[str]) -> tuple[pl.DataFrame, list[Problem]]:
    """Quoted CSV, read line by line with the csv module. A record is one line (the
    format numbers CSV rows by line): a quote left open is that line's damage, not a
    field that runs on and swallows the lines after it."""
    lines = data.decode("utf-8-sig", errors="replace").split("\n")
    width = len(header)
    # the format's columns only (the first of a name given twice)
    wanted = {name: index for index, name in reversed(list(enumerate(header)))
              if name in TEXT_SCHEMA}
    columns: dict[str, list[str | None]] = {name: [] for name in wanted}
    numbers: list[int] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line:
            continue
        try:
            record = next(csv.reader([line], strict=True))
        except csv.Error as exc:
            problems.append(_malformed(number, line.encode(), f"the CSV is malformed ({exc})"))
            continue
        if len(record) != width:
            why = f"it has {len(record)} fields where the header has {width}"
            problems.append(_malformed(number, line.encode(), why))
            continue
        for name, index in wanted.items():
            columns[name].append(record[index] if record[index] != "" else None)
        numbers.append(number)
    frame = pl.DataFrame(columns, schema={name: pl.String for name in wanted})
    return frame.with_columns(pl.Series(v.LINE, numbers, dtype=pl.Int64)), problems


# --- Parquet ----------------------------------------------------------------


PARQUET_CHUNK_ROWS = 2_000_000


def parquet_chunk_rows() -> int:
    """The slice a damaged Parquet file is read in: an unreadable slice loses its
    rows only (read at call time, so tests can make it small)."""
    return PARQUET_CHUNK_ROWS


def parquet_rows(scan: pl.LazyFrame, columns: list[str], keep: pl.Expr,
                 offset: int) -> pl.DataFrame:
    """The rows of a Parquet scan (a slice of the file starting at row `offset`) that
    `keep` keeps, each with its line (the row number in the file). The columns are
    chosen after the filter: so the filter reaches the Parquet reader, which then
    decodes only the rows kept (several times faster)."""
    return (
        scan.with_row_index(v.LINE, offset=offset + 1)
        .filter(keep)
        .select(pl.col(v.LINE).cast(pl.Int64), *columns)
        .collect()
    )
