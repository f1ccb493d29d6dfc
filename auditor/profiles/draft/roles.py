"""Column roles: which of the format's columns an export column gives, by its header (the
synonym table) and by the shape of its cells. A header names candidates; the cells keep
those whose shape fits (a `won` of money is a payout, a `won` of P/B/T the winner). A
role claimed by two columns, or a column left with two roles, is not decided here: the
caller writes a TODO.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import polars as pl

from . import synonyms
from .notation import is_card_like, none_tokens, time_formats

# Shapes a role's cells must have
ID_ROLES = ("table_id", "shoe_id", "dealer_id", "player_id", "reason")
WORD_ROLES = synonyms.VOCABULARY_COLUMNS
INTEGER_ROLES = ("round", "seq", "seat", "hand", "decks", "player_points", "banker_points")
MONEY_ROLES = ("amount", "pay", "collect", "push", "vig", "net")
TIME_ROLES = ("ts", "end_ts")
ORDER_ROLES = ("settle_order", "vig_order")  # an integer or a time
LIST_ROLES = ("cards", "actions", "dealer_cards")
# The most distinct words a vocabulary column takes
MOST_WORDS = 60

_INTEGER = re.compile(r"^[+-]?\d+(\.0*)?$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass
class Shape:
    """What a column's sampled cells look like."""

    name: str
    cells: int  # non-empty cells
    values: Counter  # each distinct cell and its count
    integers: int = 0
    numbers: int = 0
    decimals: int = 0  # numbers with a fraction
    cards: int = 0  # cells a card notation may read (none tokens counted apart)
    nones: int = 0
    lists: int = 0  # bracketed cells, or JSON lists
    times: bool = False  # some format reads every cell
    list_cards: int = 0  # list cells whose elements look like cards
    smallest: float | None = None
    largest: float | None = None

    @property
    def empty(self) -> bool:
        return self.cells == 0

    def all(self, count: int, share: float = 1.0) -> bool:
        return self.cells > 0 and count >= self.cells * share

    @property
    def words(self) -> bool:
        """A small vocabulary of non-numeric words."""
        return (self.cells > 0 and len(self.values) <= MOST_WORDS
                and not self.all(self.numbers) and not self.all(self.lists, 0.5)
                and not self.times)


def shape(name: str, cells: pl.Series, json_lists: bool = False) -> Shape:
    kept = cells.drop_nulls()
    values = Counter(dict(kept.value_counts().iter_rows())) if kept.len() else Counter()
    found = Shape(name, kept.len(), values)
    nones = set(none_tokens(values))
    numbers = []
    for value, n in values.items():
        if _NUMBER.match(value):
            found.numbers += n
            numbers.append(float(value))
            if _INTEGER.match(value):
                found.integers += n
            else:
                found.decimals += n
        if value in nones:
            found.nones += n
        elif is_card_like(value):
            found.cards += n
        if json_lists or (value.startswith("[") and value.endswith("]")):
            found.lists += n
            elements = re.findall(r"[^\[\]\s,'\"]+", value)
            if elements and all(is_card_like(e) for e in elements):
                found.list_cards += n
        elif " " in value.strip() and all(is_card_like(e) for e in value.split()):
            found.list_cards += n
    if numbers:
        found.smallest, found.largest = min(numbers), max(numbers)
    if found.cells and not found.all(found.numbers) and len(values) > 1:
        sample = pl.Series(list(values)[:500], dtype=pl.String)
        found.times = bool(time_formats(sample))
    elif found.cells and len(values) == 1 and not found.all(found.numbers):
        found.times = bool(time_formats(pl.Series(list(values), dtype=pl.String)))
    return found


def fits(role: str, s: Shape) -> bool:
    """Whether cells of this shape can be the role's."""
    if s.empty:
        return True  # nothing sampled: the name alone says
    if role in TIME_ROLES:
        return s.times
    if role in ORDER_ROLES:
        return s.all(s.integers) or s.times
    if role in MONEY_ROLES:
        return s.all(s.numbers)
    if role in INTEGER_ROLES:
        return s.all(s.integers) and (s.smallest or 0) >= 0
    if role == "card":
        return s.all(s.cards + s.nones, 0.95) and not s.all(s.lists, 0.5)
    if role in ("cards", "dealer_cards"):
        return s.all(s.list_cards + s.nones, 0.9) or s.all(s.lists, 0.9)
    if role == "actions":
        return not s.times and not s.all(s.numbers)
    if role in WORD_ROLES:
        return s.words
    if role in ID_ROLES:
        return not s.times and not s.all(s.lists, 0.5)
    return True


@dataclass
class Roles:
    """The roles found: role -> column, with the evidence; and what is undecided."""

    found: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)
    clashes: dict[str, list[str]] = field(default_factory=dict)  # role -> its columns
    unread: list[str] = field(default_factory=list)  # columns no role was found for
    card_columns: dict[str, dict[int, str]] = field(default_factory=dict)  # hand -> n -> col
    repeat_key: str | None = None
    unsure: dict[str, list[str]] = field(default_factory=dict)  # column -> roles it may have


def candidates(name: str, s: Shape) -> list[str]:
    """The roles a column of this header and shape may have."""
    return [role for role in synonyms.columns_named(name) if fits(role, s)]


def describe(s: Shape) -> str:
    """The cells' shape in a few words, for evidence."""
    if s.empty:
        return "no cell sampled"
    top = ", ".join(f"`{v}`" for v, _ in s.values.most_common(3))
    whole = "integers" if not any("." in v for v in s.values) else "whole numbers"
    kind = (whole if s.all(s.integers) else "numbers" if s.all(s.numbers)
            else "times" if s.times else "lists" if s.all(s.lists, 0.9) else
            "card-like cells" if s.all(s.cards + s.nones, 0.95) else "words" if s.words
            else "texts")
    span = (f" from {s.smallest:g} to {s.largest:g}" if s.all(s.numbers)
            and s.smallest is not None else "")
    return f"{s.cells:,} {kind}{span}, {len(s.values):,} distinct (e.g. {top})"


def assign(shapes: dict[str, Shape], allowed: set[str] | None) -> Roles:
    """Each role to the one column that may have it (`allowed`: the roles the layout
    reads, None: any)."""
    roles = Roles()
    claims: dict[str, list[str]] = {}
    unsure: dict[str, list[str]] = {}  # a column -> the roles its cells cannot choose among
    for name, s in shapes.items():
        card = synonyms.card_column(name)
        if card is not None and fits("card", s):
            roles.card_columns.setdefault(card[0], {})[card[1]] = name
            continue
        if synonyms.is_repeat_key(name) and roles.repeat_key is None:
            roles.repeat_key = name
            continue
        kept = [r for r in candidates(name, s) if allowed is None or r in allowed]
        if not kept:
            roles.unread.append(name)
            continue
        if len(kept) > 1 and not _narrowed(kept, s):
            unsure[name] = kept
            for role in kept:
                claims.setdefault(role, []).append(name)
            continue
        role = kept[0] if len(kept) == 1 else _narrowed(kept, s)
        claims.setdefault(role, []).append(name)
    for role, names in claims.items():
        seen = [n for n in names if not shapes[n].empty]
        if len(names) > 1 and len(seen) == 1 and seen[0] not in unsure:
            # a column with cells over columns with none: the cells are the evidence
            names = seen
        if len(names) == 1 and names[0] not in unsure:
            roles.found[role] = names[0]
            roles.evidence[role] = (f"header `{names[0]}` names {role}; "
                                    f"{describe(shapes[names[0]])}")
        else:
            roles.clashes[role] = names
            for name in names:
                if name in unsure:
                    roles.unsure[name] = unsure[name]
    # a column that lost every role it claimed is unread
    for names in roles.clashes.values():
        for name in names:
            if name not in roles.found.values() and name not in roles.unread:
                roles.unread.append(name)
    return roles


def _narrowed(roles: list[str], s: Shape) -> str | None:
    """One role of several a header names, where the cells settle it: the first one
    whose shape is the narrower (words over ids)."""
    if s.empty:
        return None  # no cell to tell
    words = [r for r in roles if r in WORD_ROLES]
    others = [r for r in roles if r not in WORD_ROLES and r not in ID_ROLES]
    if len(others) == 1 and not words:
        return others[0]
    if len(words) == 1 and not others:
        return words[0]
    return None
