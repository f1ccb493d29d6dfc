"""A profile as read (load): its sources, and for each how it gets the format's columns,
the maps of its values and how its exports write a card."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

LAYOUTS = ("events", "coups", "wagers")
FORMATS = ("csv", "jsonl", "parquet")
NOTATIONS = ("rank_suit", "suit_rank", "index", "pattern", "points")
LISTS = ("separated", "bracketed")  # (1.1) how a list is written in one text cell
# (1.1) Columns every export has, whatever it writes: the record's 1-based row number in
# its file (header and blank lines not counted; a Parquet row number) and the file's
# base name. An export's own column of that name wins.
BUILT_INS = ("_row", "_file")
# A blackjack coups source's list columns
LIST_COLUMNS = ("cards", "actions", "dealer_cards")
# The name's ending that says a file's format, where a source does not
EXTENSIONS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


@dataclass(frozen=True)
class Mapping:
    """How a source gets one canonical column: an export column by its name, a constant
    for every row, or a row-wise SQL expression over the export's columns."""

    column: str | None = None
    value: str | int | float | bool | None = None
    sql: str | None = None

    @property
    def constant(self) -> bool:
        return self.column is None and self.sql is None

    @property
    def key(self) -> str:
        """How the profile writes it, for messages."""
        if self.column is not None:
            return repr(self.column)
        return f"{{ sql = {self.sql!r} }}" if self.sql is not None else (
            f"{{ value = {self.value!r} }}")


@dataclass(frozen=True)
class Cards:
    """How a source's exports write a card ([source.cards])."""

    notation: str
    none: tuple[str, ...] = ("",)  # cells that mean "no card"
    # coups, baccarat: each hand's card columns in order (1.1: each an export column, a
    # constant or an SQL expression)
    player: tuple[Mapping, ...] = ()
    banker: tuple[Mapping, ...] = ()
    separator: str = " "  # blackjack coups: a list written in one cell, separated
    index_base: int = 1
    index_suits: str = "SHDC"
    pattern: str | None = None
    ranks: dict[str, str] = field(default_factory=dict)  # token maps of `pattern` (`points`: ranks)
    suits: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """One [[source]]: the files it reads and how their rows map onto the format."""

    name: str
    files: tuple[str, ...]  # patterns on a file's base name
    layout: str
    format: str | None = None  # None: from each file's name
    delimiter: str = ","
    lists: str = "separated"  # (1.1) blackjack coups: "separated" or "bracketed"
    timestamp_format: str | None = None
    timezone: str | None = None
    columns: dict[str, Mapping] = field(default_factory=dict)
    values: dict[str, dict[str, str | int | bool]] = field(default_factory=dict)
    cards: Cards | None = None
    repeat_key: tuple[str, ...] = ()  # events
    shoe_starts: str | None = None  # coups
    join: str = "round"  # wagers
    join_set: bool = False  # (1.1) `join` given in the profile (not with one file, two layouts)

    @property
    def game(self) -> str | None:
        """The game every row of the source is of, where the profile says it once."""
        mapping = self.columns.get("game")
        return mapping.value if mapping is not None and mapping.constant else None

    @property
    def needed(self) -> tuple[str, ...]:
        """The canonical columns the source's layout cannot do without
        (export-profiles-v1, Layouts)."""
        needed = {"events": ("table_id", "game", "event"),
                  "coups": ("table_id", "shoe_id", "game"),
                  "wagers": ("table_id", "seat", "bet", "amount")}[self.layout]
        if self.layout == "wagers":
            needed += ("shoe_id", "round") if self.join == "round" else ("ts",)
        return needed

    @property
    def card_columns(self) -> dict[str, Mapping]:
        """A baccarat coups source's card columns, each by the name its cards take in
        the rows read (`_card:player:1`, ...), in the order of each hand's cards."""
        if self.cards is None:
            return {}
        return {f"_card:{hand}:{n}": m
                for hand in ("player", "banker")
                for n, m in enumerate(getattr(self.cards, hand), start=1)}

    def mappings(self) -> list[Mapping]:
        """Every mapping of the source: its columns', then its card columns'."""
        return [*self.columns.values(), *self.card_columns.values()]

    @property
    def clocked(self) -> bool:
        """Whether the source's rows have times (1.1: `ts` may be left unmapped)."""
        return "ts" in self.columns

    def format_of(self, name: str) -> str | None:
        """The format a file of this name is read in (None: neither said nor named)."""
        if self.format is not None:
            return self.format
        return format_named(name)


def format_named(name: str) -> str | None:
    """The format a file's name ends with (.csv, .jsonl, .ndjson, .parquet; the first
    two optionally .gz), or None."""
    lowered = name.lower().removesuffix(".gz")
    for ending, kind in EXTENSIONS.items():
        if lowered.endswith(ending) and not (kind == "parquet" and name.lower().endswith(".gz")):
            return kind
    return None


@dataclass(frozen=True)
class Profile:
    path: Path
    name: str
    sources: tuple[Source, ...]
    sha256: str
