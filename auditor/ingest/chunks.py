"""A text log file read a chunk of whole lines at a time, each chunk parsed as the
whole file would be: the same line numbers, the same problems.

The memory of reading a file then follows the chunk, not the file: the text files of
a large log are spilled this way (spill).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

import polars as pl

from . import readers, sourced, text
from . import vocabulary as v
from .problems import Problem
from .sources import Source

GZIP_RATIO = 6  # a gzip file holds about six times its size in text
# Bytes of text parsed at once: the reading's memory follows this, not the file
CHUNK_BYTES = 64 << 20



@dataclass
class Chunk:
    """A chunk of the file's text, where it starts, and the problems of reading it."""

    number: int
    text: bytes
    before: int  # lines of the file before it
    problems: list[Problem]
    header: bytes | None  # a CSV file's header, for every chunk after the first
    newlines: int = 0  # the line breaks in `text`


@dataclass
class Parsed:
    """A chunk parsed: its rows (the spec's columns as read, each with its line in the
    file), and its problems at their lines in the file."""

    frame: pl.DataFrame | None  # None: nothing read (no header to judge yet)
    problems: list[Problem]
    rows_lost: int = 0
    missing: list[str] | None = None  # the first CSV chunk's: the header's columns
    header_line: int | None = None
    sourced: bool = False  # (1.2) its rows may name the export file and line they came from


def numbered(source: Source, chunk_bytes: int | None = None,
             max_line: int | None = None) -> Iterator[Chunk]:
    """The file's chunks (of about `chunk_bytes`; CHUNK_BYTES where not said) with their
    place, a CSV file's header with each chunk after the one it heads; lines longer
    than `max_line` are cut out and reported (text.pieces)."""
    header: bytes | None = None
    before = 0
    size = chunk_bytes or CHUNK_BYTES
    pieces = text.pieces(source, size, max_line,
                         read_bytes=size // (GZIP_RATIO if source.gzip else 1),
                         most_lines=max(1, size // text.ROW_BYTES[source.encoding]))
    for number, piece in enumerate(pieces):
        yield Chunk(number, piece.text, before, piece.problems, header, piece.newlines)
        if source.encoding == "csv" and header is None and piece.text:
            end = piece.text.find(b"\n")
            header = piece.text if end < 0 else piece.text[:end]
        before += piece.newlines + (0 if piece.text.endswith(b"\n") or not piece.text else 1)


def whole_lines(chunk: Chunk, encoding: str) -> tuple[bytes, int]:
    """The text to parse for a chunk as a file of its own (a CSV chunk after the first
    with its file's header before it), and the lines of the file before that text's."""
    if encoding == "csv" and chunk.header is not None:
        return chunk.header + b"\n" + chunk.text, chunk.before - 1
    return chunk.text, chunk.before


def parse(chunk: Chunk, encoding: str) -> Parsed:
    """One chunk parsed as the whole file would be, its lines numbered in the file."""
    problems = [at(p, chunk.before) for p in chunk.problems]
    missing = header_line = None
    text, offset = whole_lines(chunk, encoding)
    if encoding != "csv":
        raw = readers._read_jsonl(text, chunk.newlines)
    elif chunk.header is not None:
        raw = readers._read_csv(text, chunk.newlines + 1)
    elif chunk.text:  # the first chunk read: the header is its first line
        raw = readers._read_csv(text, chunk.newlines)
        missing, header_line = raw.missing, raw.header_line
    else:
        return Parsed(None, problems)  # nothing read (the file's damage is reported)
    problems += [at(p, offset) for p in raw.problems]
    frame = raw.frame.with_columns(pl.col(v.LINE) + offset)
    return Parsed(frame, problems, raw.rows_lost, missing, header_line,
                  sourced.names_sources(text, encoding))


@dataclass
class Joined:
    """What every chunk of a file found, joined: what reading it whole finds."""

    problems: list[Problem] = field(default_factory=list)
    rows_lost: int = 0
    missing: list[str] = field(default_factory=list)
    header_line: int | None = None
    sourced: bool = False

    def add(self, parsed: Parsed) -> None:
        self.problems += parsed.problems
        self.rows_lost += parsed.rows_lost
        self.sourced |= parsed.sourced
        if parsed.missing is not None:
            self.missing, self.header_line = parsed.missing, parsed.header_line


def at(problem: Problem, offset: int) -> Problem:
    """A chunk's problem at its line in the file."""
    line = None if problem.line is None else problem.line + offset
    message = problem.message
    if problem.line is not None and problem.rule_id == readers.IN_RECORD_MALFORMED:
        message = message.replace(f"Line {problem.line} ", f"Line {line} ", 1)
    elif problem.line is not None and problem.rule_id == readers.IN_FILE_UNREADABLE:
        message = message.replace(f"after line {problem.line};", f"after line {line};", 1)
    return dataclasses.replace(problem, line=line, message=message)
