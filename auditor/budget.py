"""The audit's memory budget, and the plan of its parts made within it.

An audit holds, at its largest: each process's own (an interpreter with polars), the
parts in flight (a local worker reads the next part while it checks one: two), the
Parquet rows held typed for all the parts (ingest.compact), and, while text files are
spilled, the chunks being parsed. Each is planned from the log's size before its rows
are read for a part, so that the peak stays under the budget: where even one table
cannot fit, the audit stops before reading it (BudgetError), never killed halfway.

The bytes below were measured on simulated logs of both games (benchmarks/NOTES.md,
"Memory budget") and rounded up: a plan errs on the side of more, smaller parts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .ingest import chunks, spill, threads

GB = 1 << 30

# The default budget: this share of the machine's memory (or of the memory its control
# group may use, where lower), leaving the rest to the system and other work
DEFAULT_SHARE = 0.75

PROCESS_BYTES = 320 << 20  # an interpreter with polars and the auditor loaded, at work
PART_ROW_BYTES = 400  # a part in flight: its rows typed and sorted, and the rules' frames
HELD_ROW_BYTES = 32  # a Parquet row held typed for all the parts (ingest.compact)
HELD_SHARE = 0.25  # of the budget, at most, for held Parquet rows
# Text read whole is held untyped until the last part and sent to the worker: only a
# small log's (at most spill.SPILL_BYTES of text, and TEXT_HELD_FACTOR times it within
# the budget); any larger log's text files are all spilled, read a chunk at a time
TEXT_HELD_FACTOR = 12
# Spilling holds the chunks in flight (threads.AT_ONCE of them), each parsed: about
# this many times its bytes. It runs before the parts, so it needs room beside the
# processes, not beside the parts; a chunk is made smaller where the budget is small
SPILL_FACTOR = 10
SMALLEST_CHUNK_BYTES = 1 << 20
# Exports read through a profile are read whole, every file at once, and their events
# held for the parts: about this many times their text (measured: a device feed of 181 MB
# peaked at 1.8 GB with its audit, coups and wagers of 65 MB at 1.2 GB)
EXPORT_FACTOR = 10


class BudgetError(Exception):
    """The log cannot be audited within the memory budget; the message says what to set."""


def exports_fit(text_bytes: int, budget: int) -> None:
    """A BudgetError where exports of `text_bytes` (a gzip file counting six times its
    size) cannot be held whole within `budget` bytes (an audit then reads them a part of
    their tables at a time; an import, which holds them, stops)."""
    needed = PROCESS_BYTES + EXPORT_FACTOR * text_bytes
    if needed > budget:
        raise BudgetError(
            f"the exports hold {text_bytes / (1 << 20):,.0f} MB of text; held whole they "
            f"need about {in_gb(needed)} GB, more than the memory budget of "
            f"{in_gb(budget)} GB: set --memory {in_gb(needed)} or more, or import fewer "
            "files at once (a gaming day's)")


def export_text_limit(budget: int) -> int:
    """The most text one export file may hold (a gzip file decompressed) within `budget`
    bytes: read whole, an export takes about EXPORT_FACTOR times its text, so a file of
    more cannot be read within the budget even alone, held whole or read in parts (each
    part reads its files whole). A gzip file is decompressed no further (a small file
    can expand to gigabytes)."""
    return budget // EXPORT_FACTOR


def machine_memory() -> int:
    """Bytes of memory this process may use: the machine's, or its control group's
    limit where that is lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def default_bytes() -> int:
    return int(machine_memory() * DEFAULT_SHARE)


def in_gb(size: float) -> str:
    return f"{size / GB:.1f}"


@dataclass(frozen=True)
class Budget:
    """What the audit may hold at once, and how it runs: `workers` local processes side
    by side (0: one worker process that reads a part ahead), or a cluster's (whose
    parts are held there; `part_rows_there` caps them by its workers' memory)."""

    bytes: int
    workers: int = 0
    cluster: bool = False
    part_rows_there: int | None = None

    @property
    def local_processes(self) -> int:
        if self.cluster:
            return 1
        return 1 + max(self.workers, 1)

    @property
    def in_flight(self) -> int:
        """Parts held at once: one worker reads a part while it checks one; N workers
        hold one each."""
        return 2 if self.workers <= 1 else self.workers

    def chunk_bytes(self) -> int:
        """Text parsed at once while spilling: chunks.CHUNK_BYTES, or less where the
        budget beside the processes cannot hold threads.AT_ONCE of them parsed."""
        room = self.bytes - self.local_processes * PROCESS_BYTES
        return min(chunks.CHUNK_BYTES,
                   max(SMALLEST_CHUNK_BYTES, room // (threads.AT_ONCE * SPILL_FACTOR)))

    def check_floor(self) -> None:
        """Refuse a budget below what any audit takes: its processes, and text read a
        chunk of SMALLEST_CHUNK_BYTES at a time."""
        floor = (self.local_processes * PROCESS_BYTES
                 + threads.AT_ONCE * SPILL_FACTOR * SMALLEST_CHUNK_BYTES)
        if self.bytes < floor:
            raise BudgetError(
                f"the memory budget ({in_gb(self.bytes)} GB) is below the "
                f"{in_gb(floor + GB // 20)} GB any audit takes here ({self.local_processes} "
                f"process(es), each with polars loaded); set --memory "
                f"{in_gb(floor + GB // 20)} or more")

    def holds_text(self, text_bytes: int) -> bool:
        """Whether text files of `text_bytes` (uncompressed) may be read whole and held:
        a small log's, audited by one worker; else every text file is spilled."""
        if self.workers > 1 or self.cluster:
            return False
        return text_bytes <= self.text_held_at_most()

    def text_held_at_most(self) -> int:
        """The text that may be read whole and held, in all: a gzip file's size only
        foretells its text, so its reading stops past this (and the log is spilled)."""
        room = self.bytes - self.local_processes * PROCESS_BYTES
        return max(0, min(spill.SPILL_BYTES, room // 2 // TEXT_HELD_FACTOR))

    def held_rows(self, at_most: int) -> int:
        """Parquet rows that may be held typed for all the parts (one worker only)."""
        if self.workers > 1 or self.cluster:
            return 0
        return min(at_most, int(self.bytes * HELD_SHARE) // HELD_ROW_BYTES)

    def part_rows(self, at_most: int, held_rows: int) -> int:
        """Rows a part may hold: within the budget less the processes and the held rows,
        for the parts in flight at once (one worker: two; N workers: one each)."""
        if self.cluster:
            return min(at_most, self.part_rows_there or at_most)
        room = self.bytes - self.local_processes * PROCESS_BYTES - held_rows * HELD_ROW_BYTES
        return max(0, min(at_most, room // (self.in_flight * PART_ROW_BYTES)))

    def needed_for(self, rows: int, held_rows: int) -> int:
        """The budget a part of `rows` rows would need, the rest as planned."""
        return (self.local_processes * PROCESS_BYTES + held_rows * HELD_ROW_BYTES
                + self.in_flight * rows * PART_ROW_BYTES)


def cluster_part_rows(memory_limits: list[int]) -> int | None:
    """Rows a part may hold on a cluster whose workers have these memory limits (0: no
    limit): the smallest limit less a process, for one part in flight."""
    limits = [m for m in memory_limits if m]
    if not limits:
        return None
    return max(0, (min(limits) - PROCESS_BYTES) // PART_ROW_BYTES)
