"""A bounded sample of one export file: its header (or keys), its first rows in order,
and a reservoir sample of rows from the rest, so that a file of any size is drafted in
seconds.

- Plain text (CSV, JSON Lines): the first HEAD_BYTES, then BLOCKS blocks read at random
  offsets (seeking, never reading what lies between); whole lines of those blocks feed a
  reservoir of SAMPLED rows.
- Gzip text cannot be sought: its first GZIP_BYTES of decompressed text are read, the
  first rows kept and the rest feeding the reservoir.
- Parquet: the first rows and row slices at random offsets (polars reads only the row
  groups they fall in).

Every cell is kept as the profile reader takes it: text, spaces around it removed, an
empty cell or a JSON null as None; a JSON list as JSON writes it (and its column noted).
The random offsets are seeded by the file's size, so a draft is the same from one run
to the next.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..model import format_named

HEAD_BYTES = 1 << 20
HEAD_ROWS = 2_000
BLOCKS = 64
BLOCK_BYTES = 1 << 16
GZIP_BYTES = 16 << 20
SAMPLED = 20_000
DELIMITERS = ",;\t|"


class SampleError(Exception):
    """The file cannot be sampled: the message names the file (and line)."""


@dataclass
class Sample:
    path: Path
    format: str | None  # csv | jsonl | parquet; None: not told by name nor content
    delimiter: str = ","
    header: list[str] = field(default_factory=list)  # the file's columns, in order
    frame: pl.DataFrame = field(default_factory=pl.DataFrame)  # every column as text
    head_rows: int = 0  # the frame's first rows are the file's first, in order
    whole: bool = True  # every row of the file is in the frame
    size: int = 0
    list_columns: set[str] = field(default_factory=set)  # JSON lists, Parquet lists
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, why): said
    sniffed_header: bool = True  # csv.Sniffer's reading of the first line
    shapes: dict | None = None  # each column's shape (roles.shape), once worked out

    @property
    def rows(self) -> int:
        return self.frame.height


def sample(path: Path) -> Sample:
    """The sample of the file at `path`, or a SampleError naming it."""
    try:
        size = path.stat().st_size
        kind = format_named(path.name) or _format_by_content(path)
        if kind == "parquet":
            return _parquet(path, size)
        lines, head_count, whole = _lines(path, size)
    except SampleError as exc:
        raise SampleError(f"{path}: {exc}") from None
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise SampleError(f"{path}: cannot be read ({exc})") from None
    except pl.exceptions.PolarsError as exc:
        raise SampleError(f"{path}: cannot be read as Parquet ({str(exc).splitlines()[0]})"
                          ) from None
    if kind == "jsonl":
        return _jsonl(path, size, lines, head_count, whole)
    return _csv(path, size, lines, head_count, whole, kind)


def _format_by_content(path: Path) -> str | None:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as handle:
        start = handle.read(4096)
    if start.startswith(b"PAR1"):
        return "parquet"
    text = start.lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if text.startswith(b"{") else "csv" if text else None


def _lines(path: Path, size: int) -> tuple[list[str], int, bool]:
    """The file's first lines (as many as HEAD_BYTES hold, the last partial one left
    out) followed by the reservoir's lines in file order; how many are first lines; and
    whether that is every line of the file."""
    rng = random.Random(size)
    if path.name.lower().endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            data = handle.read(GZIP_BYTES)
            whole = not handle.read(1)
        head, rest = _split(data, HEAD_BYTES, whole)
        return head + _reservoir(rest, rng), len(head), whole and not rest
    with path.open("rb") as handle:
        data = handle.read(HEAD_BYTES)
        whole = size <= HEAD_BYTES
        head, _ = _split(data, HEAD_BYTES, whole)
        if whole:
            return head, len(head), True
        start = len(data)
        offsets = sorted(rng.randrange(start, size) for _ in range(BLOCKS))
        found: list[bytes] = []
        last = start
        for offset in offsets:
            offset = max(offset, last)  # blocks never overlap
            handle.seek(offset)
            block = handle.read(BLOCK_BYTES)
            last = offset + len(block)
            parts = block.split(b"\n")
            # the first part may be a line's tail, the last a line's head
            found.extend(parts[1:-1] if len(parts) > 2 else [])
    return head + _reservoir(found, rng), len(head), False


def _split(data: bytes, limit: int, whole: bool) -> tuple[list[str], list[bytes]]:
    """The first lines of `data` (up to `limit` bytes, whole lines only unless `whole`),
    decoded; and the lines after them, as bytes."""
    cut = data if whole else data[:data.rfind(b"\n") + 1]
    head = cut[:limit]
    if len(cut) > limit:
        head = head[:head.rfind(b"\n") + 1]
    rest = cut[len(head):].split(b"\n")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = head[:exc.start].count(b"\n") + 1
        raise SampleError(f"line {line}: not UTF-8 text (byte {head[exc.start]:#04x}); "
                          "an export is read as UTF-8") from None
    return text.removeprefix("\ufeff").splitlines(), [r for r in rest if r.strip()]


def _reservoir(lines: list[bytes], rng: random.Random) -> list[str]:
    """A uniform sample of SAMPLED lines (Algorithm R), kept in file order."""
    kept: list[tuple[int, bytes]] = []
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        if len(kept) < SAMPLED:
            kept.append((n, line))
        else:
            slot = rng.randrange(n + 1)
            if slot < SAMPLED:
                kept[slot] = (n, line)
    kept.sort()
    return [line.decode("utf-8", "replace").rstrip("\r") for _, line in kept]


def _cell(value) -> str | None:
    text = value.strip() if isinstance(value, str) else value
    return text if text not in ("", None) else None


def _frame(header: list[str], rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame({name: [_cell(r.get(name)) for r in rows] for name in header},
                        schema={name: pl.String for name in header})


def _csv(path: Path, size: int, lines: list[str], head_count: int, whole: bool,
         kind: str | None) -> Sample:
    head_text = "\n".join(lines[:min(head_count, 200)])
    delimiter, sniffed = ",", True
    try:
        dialect = csv.Sniffer().sniff(head_text[:65536], delimiters=DELIMITERS)
        delimiter = dialect.delimiter
        sniffed = csv.Sniffer().has_header(head_text[:65536])
    except csv.Error:  # one column, or too few lines to tell: a comma, the default
        pass
    records = list(csv.reader(io.StringIO("\n".join(lines[:head_count])),
                              delimiter=delimiter))
    records = [r for r in records if r]
    if not records:
        return Sample(path, kind or "csv", delimiter, whole=whole, size=size)
    header = [h.strip() for h in records[0]]
    rows, skipped = [], []
    for n, record in enumerate(records[1:], start=2):
        if len(record) != len(header):
            skipped.append((n, f"{len(record)} fields where the header has {len(header)}"))
            continue
        rows.append(dict(zip(header, record, strict=True)))
    first = len(rows)
    for record in csv.reader(io.StringIO("\n".join(lines[head_count:])), delimiter=delimiter):
        if len(record) == len(header) and record != records[0]:
            rows.append(dict(zip(header, record, strict=True)))
    unique = list(dict.fromkeys(header))
    skipped[:0] = [(1, f"the header names {name!r} twice (profile check refuses such a "
                       "file)") for name in unique if header.count(name) > 1]
    return Sample(path, kind or "csv", delimiter, unique, _frame(unique, rows), first, whole,
                  size, skipped=skipped, sniffed_header=sniffed)


def _jsonl(path: Path, size: int, lines: list[str], head_count: int, whole: bool) -> Sample:
    rows, skipped, header, lists = [], [], {}, set()
    first = 0
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if n < head_count:
                skipped.append((n + 1, f"not a JSON object ({exc.msg})"))
            continue
        if not isinstance(record, dict):
            if n < head_count:
                skipped.append((n + 1, "not a JSON object"))
            continue
        row = {}
        for key, value in record.items():
            header.setdefault(key, None)
            if isinstance(value, list | dict):
                lists.add(key)
                row[key] = json.dumps(value)
            elif isinstance(value, str) or value is None:
                row[key] = value
            else:
                row[key] = json.dumps(value)
        rows.append(row)
        first += n < head_count
    names = list(header)
    return Sample(path, "jsonl", ",", names, _frame(names, rows), first, whole, size, lists,
                  skipped)


def _parquet(path: Path, size: int) -> Sample:
    scan = pl.scan_parquet(path)
    count = scan.select(pl.len()).collect().item()
    parts = [scan.head(HEAD_ROWS).collect()]
    rng = random.Random(size)
    if count > HEAD_ROWS:
        step = max(1, SAMPLED // BLOCKS)
        for offset in sorted(rng.randrange(HEAD_ROWS, count) for _ in range(BLOCKS)):
            parts.append(scan.slice(offset, step).collect())
    frame = pl.concat(parts, how="vertical_relaxed")
    lists = {name for name, dtype in frame.schema.items()
             if isinstance(dtype, pl.List | pl.Array | pl.Struct)}
    texts = {}
    for name in frame.columns:
        values = frame.get_column(name).to_list()
        texts[name] = [json.dumps(v) if name in lists and v is not None
                       else None if v is None else str(v) for v in values]
    rows = [dict(zip(texts, values, strict=True)) for values in zip(*texts.values(), strict=True)]
    return Sample(path, "parquet", ",", frame.columns, _frame(frame.columns, rows),
                  parts[0].height, count <= HEAD_ROWS, size, lists)
