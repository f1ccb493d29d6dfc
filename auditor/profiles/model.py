"""A profile as read (load): its sources, and for each how it gets the format's columns,
the maps of its values and how its exports write a card."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

LAYOUTS = ("events", "coups", "wagers")
FORMATS = ("csv", "jsonl", "parquet")
NOTATIONS = ("rank_suit", "suit_rank", "index", "pattern", "points")
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


@dataclass(frozen=True)
class Cards:
    """How a source's exports write a card ([source.cards])."""

    notation: str
    none: tuple[str, ...] = ("",)  # cells that mean "no card"
    player: tuple[str, ...] = ()  # coups, baccarat: each hand's card columns in order
    banker: tuple[str, ...] = ()
    separator: str = " "  # blackjack coups: a list written in one cell
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
    timestamp_format: str | None = None
    timezone: str | None = None
    columns: dict[str, Mapping] = field(default_factory=dict)
    values: dict[str, dict[str, str | int | bool]] = field(default_factory=dict)
    cards: Cards | None = None
    repeat_key: tuple[str, ...] = ()  # events
    shoe_starts: str | None = None  # coups
    join: str = "round"  # wagers

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
                  "coups": ("table_id", "shoe_id", "round", "game"),
                  "wagers": ("table_id", "seat", "bet", "amount")}[self.layout]
        if self.layout == "wagers":
            needed += ("shoe_id", "round") if self.join == "round" else ("ts",)
        return needed

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
