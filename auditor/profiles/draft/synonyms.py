"""The synonym table (synonyms.toml): the names table systems give the format's columns
and the words they write for its values, kept as data."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("synonyms.toml")
# A card column's number in the table's spellings ("p{n}")
_N = "{n}"


def fold(text: str) -> str:
    """A name or word as the table compares it: lower case, letters and digits only."""
    return re.sub(r"[^0-9a-z]", "", text.casefold())


@cache
def table() -> dict:
    with TABLE.open("rb") as handle:
        return tomllib.load(handle)


def columns_named(name: str) -> list[str]:
    """The format's columns (and layout columns) a header of this name may be, in the
    table's order."""
    folded = fold(name)
    return [column for column, names in table()["columns"].items()
            if folded in {fold(n) for n in names}]


def is_repeat_key(name: str) -> bool:
    return fold(name) in {fold(n) for n in table()["repeat_key"]["names"]}


def card_column(name: str) -> tuple[str, int] | None:
    """(hand, number) where the header names a baccarat hand's card column (`P1`,
    `BankerCard3`), else None."""
    folded = fold(name)
    for hand, spellings in table()["card_columns"].items():
        for spelling in spellings:
            for n in (1, 2, 3):
                if folded == fold(spelling.replace(_N, str(n))):
                    return hand, n
    return None


def words(column: str) -> dict[str, str | bool]:
    """For a vocabulary column, each folded word to its target (`accepted` and
    `disclosed`: true or false)."""
    kind = "boolean" if column in ("accepted", "disclosed") else (
        "mode" if column == "vig_mode" else column)
    found: dict[str, str | bool] = {}
    for target, spellings in table()["values"].get(kind, {}).items():
        value: str | bool = {"true": True, "false": False}.get(target, target) \
            if kind == "boolean" else target
        for spelling in spellings:
            found.setdefault(fold(spelling), value)
    return found


VOCABULARY_COLUMNS = ("event", "game", "target", "bet", "action", "mode", "vig_mode",
                      "winner", "exposure", "accepted", "disclosed")
