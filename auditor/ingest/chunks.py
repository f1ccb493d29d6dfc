"""A text log file read a chunk of whole lines at a time, each chunk parsed as the
whole file would be: the same line numbers, the same problems.

The memory of reading a file then follows the chunk, not the file: the text files of
a large log are spilled this way (spill).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import polars as pl

from . import readers, sourced
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


def numbered(source: Source, chunk_bytes: int | None = None) -> Iterator[Chunk]:
    """The file's chunks (of about `chunk_bytes`; CHUNK_BYTES where not said) with their
    place, a CSV file's header with each chunk after the one it heads."""
    header: bytes | None = None
    before = 0
    chunks = _chunks(source, chunk_bytes or CHUNK_BYTES)
    for number, (text, problems, newlines) in enumerate(chunks):
        yield Chunk(number, text, before, problems, header, newlines)
        if source.encoding == "csv" and header is None and text:
            end = text.find(b"\n")
            header = text if end < 0 else text[:end]
        before += newlines + (0 if text.endswith(b"\n") or not text else 1)


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
    return dataclasses.replace(problem, line=line, message=message)


def _chunks(source: Source, chunk_bytes: int) -> Iterator[tuple[bytes, list[Problem], int]]:
    """The file's text in chunks of whole lines (about `chunk_bytes` each), with the
    problems of reading it (a gzip stream cut or corrupt: reported where it stops) and
    the line breaks it holds (counted once, here)."""
    try:
        handle = source.path.open("rb")
    except OSError as exc:
        yield b"", [readers.unreadable(f"the file cannot be read: {exc.strerror or exc}")], 0
        return
    with handle:
        if source.gzip:
            yield from _gzip_chunks(handle, chunk_bytes)
            return
        while True:
            # a chunk ends at a line's end: the rest of the line is read after it
            chunk = handle.read(chunk_bytes)
            if chunk and not chunk.endswith(b"\n"):
                chunk += handle.readline()
            yield chunk, [], chunk.count(b"\n")
            if not chunk:
                return


def _gzip_chunks(handle, chunk_bytes: int) -> Iterator[tuple[bytes, list[Problem], int]]:
    """_chunks of a gzip file, decompressed as it streams."""
    tail = b""
    lines = 0
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    while True:
        # read a sixth of a chunk at a time: the text is what is held
        block = handle.read(chunk_bytes // GZIP_RATIO)
        problems: list[Problem] = []
        ended = not block
        if block:
            try:
                block = inflater.decompress(block)
            except zlib.error as exc:
                # what was read before the damage is still audited
                problems.append(readers.unreadable(f"the gzip data is corrupt: {exc}"))
                yield tail, problems, tail.count(b"\n")
                return
        data = tail + block
        if ended:
            newlines = data.count(b"\n")
            if not inflater.eof:
                cut = lines + newlines + 1
                # at its line within this last chunk (numbered adds the lines before it)
                problems.append(readers.unreadable(
                    f"the gzip stream ends early after line {cut}; what followed is lost",
                    line=cut - lines))
            yield data, problems, newlines
            return
        end = data.rfind(b"\n")
        if end < 0:
            tail = data
            continue
        chunk, tail = data[: end + 1], data[end + 1:]
        newlines = chunk.count(b"\n")
        lines += newlines
        yield chunk, problems, newlines
