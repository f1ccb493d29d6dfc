"""A text log's bytes as the readers take them, whole lines at a time.

Three things are settled here, once for every reader (a file read whole and a file
spilled a chunk at a time see the same text, so they find the same rows):

- A gzip file is decompressed as it streams, every member of it: two gzip files
  written one after the other (log rotation, many exporters) are one valid gzip file,
  and a reader that stops at the end of the first member loses the rest without a
  word. The output of one compressed block is bounded too, so a small file that
  expands to gigabytes is never held at once.
- The text decompressed is counted: a caller holding the file whole gives a cap, and
  a file past it (each line counting as a row's usual size at least) is TextTooLarge
  (it is then read a chunk at a time instead).
- A line longer than the line limit is cut out where it is found and reported at its
  line: it is read no further, and an empty line stands in its place, so the lines
  after it keep their numbers. One line of hundreds of megabytes is never held.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from .problems import Problem
from .sources import Source

IN_FILE_UNREADABLE = "IN001"
IN_RECORD_MALFORMED = "IN002"

MAX_LINE_BYTES = 1 << 20  # the longest line read (--max-line): no record of the format
# comes near it (a few hundred bytes), and a line past it is cut out
READ_BYTES = 8 << 20  # bytes read from the file at once
# A row of the format as text, about (the simulated logs'). Reading costs about as much
# a row whatever its text: a piece holds at most its bytes over this in rows, and text
# held whole counts each line as this many bytes at least (a file of `{}` lines would
# otherwise be fifty times the rows its size foretells)
ROW_BYTES = {"jsonl": 160, "csv": 80}
INFLATE_BYTES = 16 << 20  # text decompressed from one read at most, before more is asked


class TextTooLarge(Exception):
    """The file holds more text than the caller may hold (its cap)."""


def unreadable(message: str, line: int | None = None) -> Problem:
    sentence = message[0].upper() + message[1:] + "."
    return Problem(IN_FILE_UNREADABLE, line, None, None, "a readable file", sentence)


@dataclass
class _Stop:
    """Why the bytes ended before the file did: the reason, and whether the line count
    where they ended belongs in the message."""

    reason: str
    at_line: bool = False


@dataclass
class Piece:
    """Text of whole lines (the last piece may end without a line break), the line
    breaks it holds, and the problems found in it at their lines within it (1-based)."""

    text: bytes
    newlines: int
    problems: list[Problem] = field(default_factory=list)


def _blocks(source: Source, read_bytes: int | None) -> Iterator[bytes | _Stop]:
    """The file's bytes (decompressed, for a gzip file), a block at a time (`read_bytes`
    None: a plain file in one read), then a _Stop where they ended early."""
    try:
        handle = source.path.open("rb")
    except OSError as exc:
        yield _Stop(_cannot_open(source, exc))
        return
    with handle:
        try:
            if source.gzip:
                yield from _inflated(handle, read_bytes or READ_BYTES)
                return
            while block := handle.read(-1 if read_bytes is None else read_bytes):
                yield block
                if read_bytes is None:
                    return
        except OSError as exc:
            yield _Stop(f"the file cannot be read past this point: {exc.strerror or exc}",
                        at_line=True)


def _cannot_open(source: Source, exc: OSError) -> str:
    path = source.path
    if path.is_symlink() and not path.exists():
        return (f"the file is a symbolic link to {os.readlink(path)}, which does not "
                "exist")
    return f"the file cannot be read: {exc.strerror or exc}"


def _inflated(handle, read_bytes: int) -> Iterator[bytes | _Stop]:
    """A gzip file's text, member after member, no more than INFLATE_BYTES at once."""
    inflater, fed, started = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), False, False
    while True:
        block = handle.read(read_bytes)
        if not block:
            # a file of no bytes at all is no gzip stream either: one cut at its start
            if (fed and not inflater.eof) or not started:
                yield _Stop("the gzip stream ends early", at_line=True)
            return
        started = True
        while block:
            if inflater.eof:  # the member before ended: another follows, or padding
                if not block.strip(b"\0"):
                    break  # zeros after the last member: padding, as gzip(1) reads it
                inflater, fed = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS), False
            try:
                out = inflater.decompress(block, INFLATE_BYTES)
            except zlib.error as exc:
                yield _Stop(f"the gzip data is corrupt: {exc}")
                return
            fed = True
            block = inflater.unconsumed_tail or inflater.unused_data
            if out:
                yield out


def pieces(source: Source, piece_bytes: int | None = None, max_line: int | None = None,
           cap: int | None = None, read_bytes: int | None = READ_BYTES,
           most_lines: int | None = None) -> Iterator[Piece]:
    """The file's text in pieces of whole lines of about `piece_bytes` (None: the whole
    file in one piece) and of about `most_lines` lines at most (None: any), each line
    longer than `max_line` (MAX_LINE_BYTES where not said) cut out and reported;
    TextTooLarge once more than `cap` bytes of text are decompressed. The problems of
    the file (it cannot be read, its gzip stream is cut or corrupt) are reported in
    the last piece, where the text stops."""
    cutter = _Cutter(max_line or MAX_LINE_BYTES)
    gathered: list[bytes] = []
    size = lines = total = 0
    stop = None
    for block in _blocks(source, read_bytes):
        if isinstance(block, _Stop):
            stop = block
            break
        if cap is not None:
            total += max(len(block), block.count(b"\n") * ROW_BYTES.get(source.encoding, 1))
            if total > cap:
                raise TextTooLarge(f"{source.path} holds more than {cap:,} bytes of text")
        for kept in _split(cutter.take(block), most_lines):
            gathered.append(kept)
            size += len(kept)
            lines += kept.count(b"\n") if most_lines is not None else 0
            if piece_bytes is not None and (size >= piece_bytes or (
                    most_lines is not None and lines >= most_lines)):
                yield _piece(cutter, gathered)
                gathered, size, lines = [], 0, 0
    gathered.append(cutter.finish())
    last = _piece(cutter, gathered, stop, end=True)
    if last.text or last.problems:
        yield last


def _split(kept: bytes, most_lines: int | None) -> Iterator[bytes]:
    """Whole lines in parts of about `most_lines` lines at most (cut where the bytes
    would be, were the lines of one length: a part may hold somewhat more)."""
    if not kept:
        return
    lines = 0 if most_lines is None else kept.count(b"\n")
    if most_lines is None or lines <= most_lines:
        yield kept
        return
    parts = -(-lines // most_lines)
    start = 0
    for number in range(1, parts):
        end = kept.find(b"\n", max(start, len(kept) * number // parts))
        if end < 0:
            break
        yield kept[start:end + 1]
        start = end + 1
    if start < len(kept):
        yield kept[start:]


def _piece(cutter: _Cutter, gathered: list[bytes], stop: _Stop | None = None,
           end: bool = False) -> Piece:
    """The text gathered as a piece, with the lines cut out of it and the reason the
    text stopped, if any, as problems at their lines."""
    text = gathered[0] if len(gathered) == 1 else b"".join(gathered)
    newlines = text.count(b"\n")
    problems = cutter.problems_in(text, end)
    if stop is not None:
        line = newlines + 1
        reason = (f"{stop.reason} after line {line}; what followed is lost" if stop.at_line
                  else stop.reason)
        problems.append(unreadable(reason, line=line if stop.at_line else None))
    return Piece(text, newlines, problems)


class _Cutter:
    """Lines longer than the limit cut out of the text as it streams by: their bytes are
    dropped up to their line break, which is kept (an empty line stands in their place).
    Only text of whole lines is let through; the line not yet ended is held (it is at
    most the limit long) until its line break comes, or the text ends."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = b""  # the start of a line not yet ended
        self.skipping = False  # inside a line over the limit: drop up to its line break
        self.passed = 0  # bytes let through since the last piece was taken
        self.cut: list[int] = []  # where, in those bytes, each line cut out was

    def take(self, block: bytes) -> bytes:
        """The whole lines the block ends, those over the limit cut out."""
        if self.skipping:
            end = block.find(b"\n")
            if end < 0:
                return b""
            block, self.skipping = block[end:], False
        if self.open:
            block, self.open = self.open + block, b""
        kept: list[bytes] = []
        at = start = 0  # what is let through from `at`; the line being judged at `start`
        # a line is over the limit where no line break ends it within `limit` bytes of
        # its start: the search hops a limit at a time, not a line at a time
        while len(block) - start > self.limit:
            found = block.rfind(b"\n", start, start + self.limit + 1)
            if found >= 0:
                start = found + 1
                continue
            kept.append(block[at:start])
            self.cut.append(self.passed + sum(map(len, kept)))
            end = block.find(b"\n", start + self.limit)
            if end < 0:
                self.skipping = True
                return self._through(kept)
            at = start = end
        last = block.rfind(b"\n", at)
        self.open = block[last + 1:] if last >= 0 else block[at:]
        if last >= 0:
            kept.append(block[at:last + 1])
        return self._through(kept)

    def finish(self) -> bytes:
        """The last line, where the text ends without a line break."""
        rest, self.open = self.open, b""
        self.passed += len(rest)
        return rest

    def _through(self, kept: list[bytes]) -> bytes:
        out = kept[0] if len(kept) == 1 else b"".join(kept)
        self.passed += len(out)
        return out

    def problems_in(self, text: bytes, end: bool = False) -> list[Problem]:
        """The lines cut out of `text` (the first bytes let through since the last piece,
        or all of them at the `end`), as problems at their lines in it."""
        inside = [at for at in self.cut if end or at < len(text)]
        found = [_too_long(text.count(b"\n", 0, at) + 1, self.limit) for at in inside]
        self.cut = [at - len(text) for at in self.cut[len(inside):]]
        self.passed -= len(text)
        return found


def _too_long(line: int, limit: int) -> Problem:
    return Problem(IN_RECORD_MALFORMED, line, None, None, f"a line of at most {limit:,} bytes",
                   f"Line {line} cannot be read: it is longer than {limit:,} bytes, and was "
                   "read no further.")
