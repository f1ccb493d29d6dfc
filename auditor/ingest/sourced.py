"""Where an imported row came from (hand-history-v1 1.2: `source_file`, `source_line`).

Rows written by `auditor import` name the export file and line they were read from; a
finding on such a row is reported there. A Parquet file's places are read by its scan
(partition.relocated); a JSON Lines or CSV file's by the lines the findings point at,
read again once the audit is done: only files whose rows name their sources, and only
the lines with findings.
"""

from __future__ import annotations

import csv
import io
import json

import polars as pl

SOURCE_FILE, SOURCE_LINE = "source_file", "source_line"
PLACES = {"line": pl.Int64, "_file": pl.String, "_line": pl.Int64}


def csv_header(data: bytes) -> list[str] | None:
    """The names in CSV text's first line (None: it cannot be read: not UTF-8, or a
    carriage return in it that ends no line)."""
    end = data.find(b"\n")
    try:
        first = (data if end < 0 else data[:end]).decode("utf-8-sig").rstrip("\r")
        return next(csv.reader([first]))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None


def names_sources(data: bytes, encoding: str) -> bool:
    """Whether a text log's rows may name their sources: its CSV header names both
    columns, or its JSON Lines mention them."""
    if encoding == "csv":
        header = csv_header(data) or []
        return {SOURCE_FILE, SOURCE_LINE} <= {h.strip() for h in header}
    return b'"' + SOURCE_LINE.encode() + b'"' in data


def text_places(data: bytes, encoding: str, lines: set[int]) -> pl.DataFrame:
    """(line, _file, _line): the source of each of `lines` of a text log (its bytes,
    `encoding` csv or jsonl) whose row names one."""
    text = data.decode("utf-8", "replace")
    found = _csv_places(text, lines) if encoding == "csv" else _jsonl_places(text, lines)
    return pl.DataFrame(found, schema=PLACES, orient="row")


def _line_value(value: object) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _jsonl_places(text: str, lines: set[int]) -> list[tuple]:
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if number not in lines:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get(SOURCE_FILE) is not None:
            found.append((number, str(record[SOURCE_FILE]), _line_value(record.get(SOURCE_LINE))))
    return found


def _csv_places(text: str, lines: set[int]) -> list[tuple]:
    """A record's line is its first line (a quoted field may hold line breaks)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next(reader, [])]
    if SOURCE_FILE not in header or SOURCE_LINE not in header:
        return []
    at_file, at_line = header.index(SOURCE_FILE), header.index(SOURCE_LINE)
    found, start = [], reader.line_num + 1
    for record in reader:
        if start in lines and len(record) > max(at_file, at_line) and record[at_file]:
            found.append((start, record[at_file], _line_value(record[at_line])))
        start = reader.line_num + 1
    return found
