"""Damaging simulated hand histories, for the property tests (tests/test_fuzz.py).

A day's events (a simulator's frame, as `day_rows`) are laid out over one or more files
as `Record`s, one a row, in a `Log`; damage is then done to them step by step (a field
blanked or corrupted, a row duplicated, swapped, dropped or moved to another table or
shoe, garbage lines, a file cut at a byte), each step noted as a `Damage`: the rounds it
touched, and where a finding must name it (file and 1-based line). `Log.write` writes
the files in their encodings (JSON Lines, CSV, either gzipped, Parquet), gives every
record its line, cuts the files to cut and settles what each step should lead to.

What is detectable is decided here from hand-history-v1 itself (its Columns and Events
tables) and the manual's readings, not from the auditor's own vocabulary, so that the
tests check the auditor against the format.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

# --- the format (hand-history-v1), as the oracle ----------------------------------

COLUMNS = (
    "table_id", "game", "shoe_id", "round", "seq", "ts", "event", "seat", "hand", "target",
    "card", "bet", "amount", "action", "player_id", "accepted", "mode", "decks", "winner",
    "player_points", "banker_points", "reason", "dealer_id", "exposure", "disclosed",
)
INTEGERS = ("round", "seq", "seat", "hand", "decks", "player_points", "banker_points")
EVERY_ROW = ("table_id", "game", "shoe_id", "round", "seq", "ts", "event")
KEYS = ("table_id", "shoe_id", "round", "seq", "event")  # where a row is placed
# Events tables: the fields each event carries (bracketed ones are optional)
EVENT_FIELDS = {
    "shuffle": ("decks",),
    "burn": ("card",),
    "cover_card": (),
    "shoe_offer": ("seat", "accepted"),
    "round_start": (),
    "wager": ("seat", "bet", "amount"),
    "no_more_bets": (),
    "card": ("target", "card"),
    "action": ("seat", "hand", "action"),
    "result": ("winner", "player_points", "banker_points"),
    "collect": ("seat", "bet", "amount"),
    "pay": ("seat", "bet", "amount"),
    "push": ("seat", "bet", "amount"),
    "vig": ("seat", "amount", "mode"),
    "vig_settle": ("seat", "amount"),
    "void": ("reason",),  # Columns table: `reason` is required on `void`
    "round_end": (),
    # (1.2, Irregularities) `disclosed` (baccarat) and `target` (misdealt): `required`
    "card_exposed": ("card", "exposure"),
    "dead_hand": ("seat", "hand"),
    "hole_card_check": (),
}
# fields no rule needs to replay a round (docs/reference/input-format.md: such rows are reported, their
# rounds still judged)
NOT_FOR_REPLAY = ("ts", "player_id", "reason")


def required(row: dict, name: str) -> bool:
    """Whether the format requires `name` on this row (so that a blank is reportable)."""
    event = row.get("event")
    if name in EVERY_ROW:
        return True
    if name in EVENT_FIELDS.get(event, ()):
        return True
    if event == "card_exposed":
        if name == "disclosed" and row.get("game") == "baccarat":
            return True
        if name == "target" and row.get("exposure") == "misdealt":
            return True
    if row.get("game") == "blackjack":
        money = event in ("wager", "collect", "pay", "push")
        to_seat = event == "card" and row.get("target") == "seat"
        if name == "hand" and (money or to_seat):
            return True
        if name == "seat" and to_seat:
            return True
    return False


# Values the format does not allow, per field, and the rules that may report them
CORRUPT: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "card": (("1S", "XX", "10H", "as", "A", "KSS", "Td"), frozenset({"IN006"})),
    "amount": (("abc", "12.345", "$5", "1e3", "5.", "--5", "1,5"), frozenset({"IN007"})),
    "event": (("teleport", "Wager", "round start", "ROUND_END"), frozenset({"IN005"})),
    "seq": (("12a", "3.5", "x", "1e2"), frozenset({"IN009"})),
    "game": (("poker", "Baccarat", "blackjac"), frozenset({"IN009"})),
    "round": (("r3", "1.5", "one"), frozenset({"IN009"})),
    "seat": (("0", "-2", "x"), frozenset({"IN008", "IN009"})),
    "hand": (("0", "-1", "h1"), frozenset({"IN009"})),
    "ts": (("yesterday", "2026-11-01", "20:00:00", "2026-11-01T25:00:00"),
           frozenset({"IN009"})),
    "target": (("table", "Player", "box"), frozenset({"IN009"})),
    "bet": (("side", "Banker", "all"), frozenset({"IN009"})),
    "action": (("fold", "Hit"), frozenset({"IN009"})),
    "mode": (("cash", "later"), frozenset({"IN009"})),
    "winner": (("dragon", "nobody"), frozenset({"IN009"})),
    "accepted": (("maybe", "yes"), frozenset({"IN009"})),
    "decks": (("0", "-8", "eight"), frozenset({"IN009"})),
    "player_points": (("10", "-1", "x"), frozenset({"IN009"})),
    "banker_points": (("10", "-1", "x"), frozenset({"IN009"})),
}
# a value of one game that the other game's rows may not hold
OTHER_GAME = {
    "baccarat": {"bet": "main", "target": "dealer"},
    "blackjack": {"bet": "tie", "target": "banker"},
}


def corrupt_values(row: dict) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """The fields of `row` that can be corrupted, with their bad values and rules."""
    out = {}
    for name, (values, rules) in CORRUPT.items():
        if row.get(name) is None and name not in EVERY_ROW:
            continue
        extra = ()
        if name in OTHER_GAME.get(row.get("game"), {}):
            extra = (OTHER_GAME[row["game"]][name],)
        if name == "amount" and row.get("amount"):
            extra = (f"-{row['amount']}",)  # negative: also IN007
        if name == "seat" and row.get("game") == "baccarat":
            extra = ("13",)  # not on the house's layout (no seat 13)
        out[name] = (values + extra, rules)
    return out


# --- records and damage ----------------------------------------------------------

Key = tuple  # (table_id, shoe_id, round)
Shoe = tuple  # (table_id, shoe_id)


@dataclass(eq=False)
class Record:
    """One line (or Parquet row) to write: an event's cells, or a garbage line."""

    cells: dict[str, Any] | None
    origin: int | None = None  # index of the simulated row it was made from
    raw: bytes | None = None  # a garbage line, written as it is
    damaged: bool = False  # some step of damage used it
    placed: bool = True  # its table, shoe, round, seq and event are there and parse
    file: str | None = None  # where it was written
    line: int | None = None
    present: str = "whole"  # after a cut: "whole", "part" (cut inside it) or "lost"

    def __repr__(self) -> str:
        if self.cells is None:
            return f"Garbage({self.raw!r})"
        c = self.cells
        return (f"Row({c.get('table_id')} {c.get('shoe_id')} round {c.get('round')} "
                f"seq {c.get('seq')} {c.get('event')})")

    @property
    def key(self) -> Key | None:
        if self.cells is None:
            return None
        return (self.cells.get("table_id"), self.cells.get("shoe_id"), self.cells.get("round"))

    @property
    def table(self) -> str | None:
        return None if self.cells is None else self.cells.get("table_id")


@dataclass(eq=False)
class Damage:
    """One step of damage and what it should lead to."""

    kind: str
    note: str
    records: list[Record] = field(default_factory=list)  # a finding must name one...
    lines: list[tuple[str, int | None]] | None = None  # ...or one of these (file, line)
    rules: frozenset[str] | None = None  # by one of these rules (None: any IN rule)
    detectable: bool = True
    whole: bool = False  # detectable only while every record is whole (not cut)
    rounds: set[Key] = field(default_factory=set)  # rounds that lost or changed rows
    shoes: set[Shoe] = field(default_factory=set)  # shoes whose history changed unseen
    withheld: Key | None = None  # a round the auditor must set aside, not judge
    together: bool = False  # `withheld` only where that round's rows are in one file
    swapped: tuple[Record, Record] | None = None  # swap: the two rows
    dropped: Record | None = None  # drop: the row

    def wanted(self) -> list[tuple[str, int | None, frozenset[str] | None]]:
        """(file, line, rules) of which a finding must match one (empty: none needed)."""
        if not self.detectable:
            return []
        if self.lines is not None:
            return [(f, n, self.rules) for f, n in self.lines]
        if self.whole and any(r.present != "whole" for r in self.records):
            return []
        wanted = [(r.file, r.line, self.rules if r.present == "whole" else None)
                  for r in self.records if r.present != "lost"]
        return wanted

    def describe(self) -> str:
        where = ", ".join(f"{r.file}:{r.line}" for r in self.records)
        return f"{self.kind}: {self.note}" + (f" [{where}]" if where else "")


# --- a damaged log ------------------------------------------------------------------


class Log:
    """A day's rows laid out over files, damaged step by step, then written."""

    def __init__(self, rows: list[dict], files: dict[str, list[int]], gapless: bool = False):
        self.rows = rows
        self.files: dict[str, list[Record]] = {
            name: [Record(dict(rows[i]), origin=i) for i in indices]
            for name, indices in files.items()
        }
        self.gapless = gapless
        self.damages: list[Damage] = []
        self.cuts: dict[str, int] = {}
        self.contents: dict[str, bytes] = {}  # each file's text (before gzip)
        self.readable: dict[str, bytes] = {}  # what of it can be read after a cut
        self.lost_files: set[str] = set()  # cut Parquet files: nothing of them is read

    # where the records are

    def where(self, record: Record) -> tuple[str, int]:
        for name, records in self.files.items():
            for index, other in enumerate(records):
                if other is record:
                    return name, index
        raise LookupError("record not in the log")

    def clean_records(self) -> list[Record]:
        """Rows not used by any damage yet, in file order."""
        return [r for records in self.files.values() for r in records
                if r.cells is not None and not r.damaged]

    def text_files(self) -> list[str]:
        return [name for name in self.files if kind_of(name) != "parquet"]

    # the kinds of damage

    def blank(self, record: Record, name: str, empty: bool = False) -> Damage:
        """Blank a field: absent (JSON), empty (CSV), null (Parquet); or, `empty`, an
        empty string where the encoding holds one (JSON, Parquet text; CSV: blank)."""
        cells = record.cells
        detectable = required(cells, name)
        damage = Damage("blank", f"{name} of a {cells.get('event')} row "
                        f"{'emptied' if empty else 'blanked'} (was {cells.get(name)!r})",
                        [record], detectable=detectable)
        self._touch(damage, record, seen=detectable)
        if detectable and name not in NOT_FOR_REPLAY and name not in KEYS:
            damage.withheld = record.key
        if empty and name in ("table_id", "shoe_id"):
            damage.withheld = record.key  # the round it left (see Log._withheld_rounds)
            damage.together = True
        if empty:
            cells[name] = ""
        else:
            del cells[name]
        if name in ("round", "seq") or name in KEYS:
            record.placed = False  # an empty table or shoe id is a missing one (IN004)
        damage.rounds.add(record.key)  # an empty table or shoe id: a round elsewhere
        record.damaged = True
        return self._add(damage)

    def corrupt(self, record: Record, name: str, value: str, rules: frozenset[str]) -> Damage:
        """Set a field to a value the format does not allow (see CORRUPT)."""
        cells = record.cells
        damage = Damage("corrupt", f"{name} of a {cells.get('event')} row set to {value!r} "
                        f"(was {cells.get(name)!r})", [record], rules=rules)
        self._touch(damage, record, seen=True)
        if name in ("round", "seq"):
            record.placed = False  # a round or seq that is no integer places it nowhere
        elif name not in NOT_FOR_REPLAY:
            damage.withheld = record.key
        cells[name] = value
        record.damaged = True
        return self._add(damage)

    def relabel(self, record: Record, name: str, value: str) -> Damage:
        """Move a row to another table or shoe (a value the format allows: not reported)."""
        cells = record.cells
        damage = Damage("relabel", f"{name} of a {cells.get('event')} row set to {value!r}",
                        [record], detectable=False)
        self._touch(damage, record, seen=False)  # its round lost the row...
        cells[name] = value
        self._touch(damage, record, seen=False)  # ...and another gained it
        record.damaged = True
        return self._add(damage)

    def duplicate(self, record: Record, file: str, position: int) -> Damage:
        """Write the row a second time, at `position` of `file`."""
        copy = Record(dict(record.cells), origin=record.origin, damaged=True)
        self.files[file].insert(min(position, len(self.files[file])), copy)
        damage = Damage("duplicate", f"a {record.cells.get('event')} row (seq "
                        f"{record.cells.get('seq')}) written twice", [record, copy],
                        rules=frozenset({"IN010", "IN011"}), whole=True,
                        withheld=record.key)
        self._touch(damage, record, seen=True)
        record.damaged = True
        return self._add(damage)

    def swap(self, first: Record, second: Record) -> Damage:
        """Swap two rows of one table in one file: a seq goes backwards."""
        name, i = self.where(first)
        other, j = self.where(second)
        assert name == other and first.table == second.table
        records = self.files[name]
        records[i], records[j] = records[j], records[i]
        damage = Damage("swap", f"rows seq {first.cells.get('seq')} and "
                        f"{second.cells.get('seq')} of {first.table} swapped",
                        [first, second], rules=frozenset({"IN011"}), whole=True)
        damage.swapped = (first, second)
        for record in (first, second):
            self._touch(damage, record, seen=True)
            record.damaged = True
        return self._add(damage)

    def drop(self, record: Record) -> Damage:
        name, index = self.where(record)
        del self.files[name][index]
        damage = Damage("drop", f"a {record.cells.get('event')} row (seq "
                        f"{record.cells.get('seq')} of {record.table}) dropped", [record],
                        detectable=False)
        record.present = "lost"
        self._touch(damage, record, seen=False)
        record.damaged = True
        damage.dropped = record
        return self._add(damage)

    def garbage(self, file: str, position: int, raw: bytes) -> Damage:
        record = Record(None, raw=raw, damaged=True, placed=False)
        self.files[file].insert(min(position, len(self.files[file])), record)
        # a blank line holds no event (the input format): nothing to report
        return self._add(Damage("garbage", f"garbage line {raw[:60]!r}", [record],
                                detectable=bool(raw.strip())))

    def cut(self, file: str, at: int) -> None:
        """Cut `file` at byte `at` of what is stored (done when the log is written)."""
        self.cuts[file] = at

    def _touch(self, damage: Damage, record: Record, seen: bool) -> None:
        """The row's round; and, for a change the log cannot show (`seen` False), its
        shoe: a row lost or changed unseen changes what later rounds see (a wager that
        made a seat occupied, a curator's offer, a marked commission)."""
        if record.key is None:
            return
        damage.rounds.add(record.key)
        if not seen:
            damage.shoes.add(record.key[:2])

    def _add(self, damage: Damage) -> Damage:
        self.damages.append(damage)
        return damage

    # writing, and what the damage leads to

    def write(self, folder: Path) -> list[Path]:
        """Write every file (cutting those to cut), then settle what each damage should
        lead to. Returns the files' paths."""
        paths = []
        for name, records in self.files.items():
            if kind_of(name) == "csv":  # an empty CSV field is a blank: no place
                for record in records:
                    if record.cells and any(record.cells.get(k) == "" for k in KEYS):
                        record.placed = False
            content = file_bytes(name, records)
            stored = gzipped(content) if name.endswith(".gz") else content
            self.contents[name] = content
            self.readable[name] = content
            if name in self.cuts:
                at = min(self.cuts[name], len(stored) - 1)
                stored = stored[:at]
                self._after_cut(name, content, stored, at)
            path = folder / name
            path.write_bytes(stored)
            paths.append(path)
        self._swaps()
        self._withheld_rounds()
        self._gaps()
        self._neighbours()
        return paths

    def _swaps(self) -> None:
        """Rows swapped: the seq goes backwards at some line from the first to the second
        (the first row of the table after the higher seq)."""
        for damage in self.damages:
            pair = damage.swapped
            if pair is None:
                continue
            if any(r.present != "whole" for r in pair):
                damage.detectable = False
                continue
            low, high = sorted(r.line for r in pair)
            damage.lines = [(pair[0].file, n) for n in range(low, high + 1)]

    def _after_cut(self, name: str, content: bytes, stored: bytes, at: int) -> None:
        records = self.files[name]
        kind = kind_of(name)
        damage = Damage("cut", f"{name} cut at byte {at}", [])
        if kind == "parquet":
            self.lost_files.add(name)
            self.readable[name] = b""
            for record in records:
                record.present = "lost"
            damage.lines, damage.rules = [(name, None)], frozenset({"IN001"})
        else:
            readable = recovered(stored) if name.endswith(".gz") else stored
            self.readable[name] = readable
            present_after_cut(content, readable, records, kind)
            part = [r for r in records if r.present == "part"]
            if name.endswith(".gz"):
                # the stream ends early: reported at the line where what is read ends;
                # what followed is not known, so each table's last round here may have
                # lost rows (the rounds beside a line that cannot be placed)
                damage.lines = [(name, readable.count(b"\n") + 1)]
                damage.rules = frozenset({"IN001"})
                last = {r.table: r for r in records if r.present == "whole" and r.placed}
                for record in last.values():
                    self._touch(damage, record, seen=False)
            elif kind == "csv" and len(readable) <= header_length(content):
                header = readable.decode(errors="replace").split(",")
                damage.lines = [(name, 1)]
                damage.detectable = not set(EVERY_ROW) <= set(header)
            elif part and cut_line_detectable(part[0], content, readable, kind):
                damage.records = part
            else:
                damage.detectable = False
        for record in records:
            if record.present != "whole":
                self._touch(damage, record, seen=False)
            if record.present == "part" and cut_line_detectable(
                    record, content, self.readable[name], kind):
                record.placed = False  # a broken record: no place (what is left still is)
        self._add(damage)

    def _withheld_rounds(self) -> None:
        """A round to be set aside for a row it lost to a place of its own (an empty table
        or shoe id) can be checked only where the round's other rows share that row's file:
        the rounds beside a row that cannot be placed are found in its own file."""
        for damage in self.damages:
            if not damage.together or damage.withheld is None:
                continue
            row = damage.records[0]
            files = {r.file for r in self.all_records()
                     if r.cells is not None and r.key == damage.withheld}
            if files - {row.file} or row.present != "whole":
                damage.withheld = None

    def _gaps(self) -> None:
        """With gapless seq, a dropped row is a gap, reported at the row after it; and the
        rounds on either side of every gap (rows dropped, cut off, moved or without a
        place) are not judged (the house rules' seq_gapless)."""
        if not self.gapless:
            return
        placed = [r for r in self.all_records() if r.placed and r.present == "whole"
                  and r.cells is not None]
        beside = Damage("gaps", "rounds on either side of a gap in gapless seq",
                        detectable=False)
        by_table: dict[str, dict[int, Record]] = {}
        for record in placed:
            if isinstance(record.cells.get("seq"), int):
                by_table.setdefault(record.table, {})[record.cells["seq"]] = record
        for records in by_table.values():
            seqs = sorted(records)
            for low, high in zip(seqs, seqs[1:], strict=False):
                if high - low > 1:
                    beside.rounds |= {records[low].key, records[high].key}
        self._add(beside)
        for damage in self.damages:
            dropped = damage.dropped
            if dropped is None:
                continue
            table, seq = dropped.table, dropped.cells["seq"]
            mine = [r for r in placed if r.table == table and isinstance(r.cells["seq"], int)]
            before = [r for r in mine if r.cells["seq"] < seq]
            after = [r for r in mine if r.cells["seq"] > seq]
            if before and after:
                nearest = min(r.cells["seq"] for r in after)
                damage.detectable = True
                damage.records = [r for r in after if r.cells["seq"] == nearest]
                damage.rules = frozenset({"IN019"})
                damage.lines = None

    def _neighbours(self) -> None:
        """A line that cannot be placed (garbage, a cut line, a row without its table,
        shoe, round, seq or event) makes the rounds on either side of it in its file not
        auditable: for every table of the file, the nearest placed rows before and after."""
        damage = Damage("neighbours", "rounds beside lines that cannot be placed",
                        detectable=False)
        for records in self.files.values():
            tables = {r.table for r in records if r.placed and r.cells is not None}
            for index, record in enumerate(records):
                if record.placed or record.present == "lost":
                    continue
                for table in tables:
                    for side in (reversed(records[:index]), records[index + 1:]):
                        for other in side:
                            if (other.placed and other.table == table
                                    and other.present != "lost"):
                                damage.rounds.add(other.key)
                                break
                # and its own round, where the row still has one
                if record.cells is not None:
                    damage.rounds.add(record.key)
        self._add(damage)

    # the expectations

    def all_records(self) -> list[Record]:
        return [r for records in self.files.values() for r in records]

    def rows_read(self) -> int:
        """Records a reader finds: every non-blank line (or Parquet row) that was kept."""
        count = 0
        for name, records in self.files.items():
            if name in self.lost_files:
                continue
            readable = self.readable[name]
            content = self.contents[name]
            if kind_of(name) == "csv" and len(readable) <= header_length(content):
                continue
            for record in records:
                if record.present == "whole":
                    count += record.raw is None or bool(record.raw.strip())  # a blank line
                elif record.present == "part":
                    start = _line_start(content, record.line)
                    count += bool(readable[start:].strip())
        return count

    def unwritten(self) -> set[Key]:
        """Rounds of the day with rows not written at all (a log of part of the day)."""
        written = {r.origin for r in self.all_records()} | {
            d.dropped.origin for d in self.damages if d.dropped is not None}
        return {(r["table_id"], r["shoe_id"], r["round"])
                for i, r in enumerate(self.rows) if i not in written}

    def unshuffled(self) -> set[Shoe]:
        """Shoes whose shuffle row is no longer there as it was (dropped, cut off, moved,
        or left without a place): every round of such a shoe lacks its shuffle (IN013) and
        may be set aside."""
        kept = {r.origin for r in self.all_records()
                if r.cells is not None and r.origin is not None and r.present == "whole"
                and r.placed and r.cells.get("event") == "shuffle"
                and r.key == _key_of(self.rows[r.origin])}
        return {(row["table_id"], row["shoe_id"]) for i, row in enumerate(self.rows)
                if row["event"] == "shuffle" and i not in kept}

    def touched_rounds(self) -> set[Key]:
        touched = set().union(*(d.rounds for d in self.damages)) if self.damages else set()
        unshuffled = self.unshuffled()
        whole_shoes = {_key_of(r) for r in self.rows
                       if (r["table_id"], r["shoe_id"]) in unshuffled}
        return touched | self.unwritten() | whole_shoes

    def touched_shoes(self) -> set[Shoe]:
        """Shoes with any touched round."""
        return {key[:2] for key in self.touched_rounds()}

    def unseen_shoes(self) -> set[Shoe]:
        """Shoes whose history changed in a way the log cannot show (a row lost or
        changed unreported): rules across rounds may then judge other rounds."""
        shoes = set().union(*(d.shoes for d in self.damages)) if self.damages else set()
        return shoes | {key[:2] for key in self.unwritten()} | self.unshuffled()


def _key_of(row: dict) -> Key:
    return (row.get("table_id"), row.get("shoe_id"), row.get("round"))


def _line_start(content: bytes, line: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = content.index(b"\n", start) + 1
    return start


def header_length(content: bytes) -> int:
    end = content.find(b"\n")
    return len(content) if end < 0 else end


def line_spans(content: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line's text (without its newline)."""
    spans, start = [], 0
    while start < len(content):
        end = content.find(b"\n", start)
        end = len(content) if end < 0 else end
        spans.append((start, end))
        start = end + 1
    return spans


def recovered(stored: bytes) -> bytes:
    """What a reader can get out of a gzip stream cut anywhere: every byte it inflates."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        return inflater.decompress(stored)
    except zlib.error:
        return b""


def present_after_cut(content: bytes, readable: bytes, records: list[Record],
                      kind: str) -> None:
    """Mark each record whole, cut inside ("part") or lost, given the `readable` prefix
    of the file's `content`."""
    spans = line_spans(content)
    offset = 1 if kind == "csv" else 0  # the header
    for record, (start, end) in zip(records, spans[offset:], strict=True):
        if end <= len(readable):
            record.present = "whole"
        elif start < len(readable):
            record.present = "part"
        else:
            record.present = "lost"


def cut_line_detectable(record: Record, content: bytes, readable: bytes, kind: str) -> bool:
    """Whether a line cut inside is still reportable: a JSON line is (it is no longer one
    complete object); a CSV line is when it lost a field separator."""
    start = _line_start(content, record.line)
    piece = readable[start:]
    if not piece.strip():
        return False
    if kind == "jsonl":
        return True
    end = content.find(b"\n", start)
    full = content[start:end]
    return piece.count(b",") < full.count(b",")


# --- writing -----------------------------------------------------------------------

ENCODINGS = ("jsonl", "jsonl.gz", "csv", "csv.gz", "parquet")


def kind_of(name: str) -> str:
    return "parquet" if name.endswith(".parquet") else "csv" if ".csv" in name else "jsonl"


def _json_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if name == "amount" and isinstance(value, str) and _decimal(value):
        return value  # amounts as JSON numbers, as the simulator writes them
    return json.dumps(value)


def _json_line(record: Record) -> bytes:
    if record.raw is not None:
        return record.raw
    cells = record.cells or {}
    body = ",".join(f"{json.dumps(k)}:{_json_value(k, cells[k])}"
                    for k in COLUMNS if cells.get(k) is not None)
    return ("{" + body + "}").encode()


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _csv_line(record: Record) -> bytes:
    if record.raw is not None:
        return record.raw
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(
        [_csv_text((record.cells or {}).get(c)) for c in COLUMNS])
    return buffer.getvalue().encode()


def _parquet_frame(records: list[Record]) -> pl.DataFrame:
    """Typed columns (strings, Int64, Decimal(12,2) amounts, boolean `accepted`), as the
    simulator writes Parquet; a column holding a value its type cannot hold (a corrupted
    seq, an amount "abc") is written as text instead, which the readers also read."""
    data = {}
    for name in COLUMNS:
        values = [(r.cells or {}).get(name) for r in records]
        present = [x for x in values if x is not None]
        if name in INTEGERS and all(isinstance(x, int) and not isinstance(x, bool)
                                    for x in present):
            data[name] = pl.Series(name, values, dtype=pl.Int64)
        elif name in ("accepted", "disclosed") and all(isinstance(x, bool) for x in present):
            data[name] = pl.Series(name, values, dtype=pl.Boolean)
        elif name == "amount" and all(_decimal(x) for x in present):
            data[name] = pl.Series(name, [None if x is None else Decimal(x) for x in values],
                                   dtype=pl.Decimal(12, 2))
        else:
            data[name] = pl.Series(name, [None if x is None else _csv_text(x) for x in values],
                                   dtype=pl.String)
    return pl.DataFrame(data)


def _decimal(text: Any) -> bool:
    """Decimal dollars of at most two decimals, not negative: a valid amount (and a valid
    JSON number)."""
    return isinstance(text, str) and re.fullmatch(r"(0|[1-9]\d*)(\.\d{1,2})?", text) is not None


def file_bytes(name: str, records: list[Record]) -> bytes:
    """The file's content (before any gzip); sets every record's file and line."""
    kind = kind_of(name)
    if kind == "parquet":
        for number, record in enumerate(records, start=1):
            record.file, record.line = name, number
        buffer = io.BytesIO()
        _parquet_frame(records).write_parquet(buffer)
        return buffer.getvalue()
    lines = []
    if kind == "csv":
        lines.append(",".join(COLUMNS).encode())
    for number, record in enumerate(records, start=len(lines) + 1):
        record.file, record.line = name, number
        lines.append(_json_line(record) if kind == "jsonl" else _csv_line(record))
    return b"".join(line + b"\n" for line in lines)


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


# --- the simulated day as rows ---------------------------------------------------


def day_rows(events: pl.DataFrame) -> list[dict]:
    """The simulator's events as one dict a row holding only the fields it uses; amounts
    as decimal-dollar text (`25`, `1.25`), as the format writes them."""
    text = [c for c in events.columns
            if c not in INTEGERS and c not in ("accepted", "disclosed", "amount")]
    frame = events.with_columns(pl.col(text).cast(pl.String))
    rows = []
    for row in frame.iter_rows(named=True):
        out = {}
        for name in COLUMNS:
            value = row.get(name)
            if value is None:
                continue
            out[name] = _dollars(value) if name == "amount" else value
        rows.append(out)
    return rows


def _dollars(value: Decimal | float | int | str) -> str:
    text = format(Decimal(str(value)), "f")
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0")
    return whole if not frac else f"{whole}.{frac.ljust(2, '0')}"


def stored_bytes(name: str, content: bytes) -> bytes:
    """The file as stored: gzipped where its name says so."""
    return gzipped(content) if name.endswith(".gz") else content
