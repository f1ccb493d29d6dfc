"""The five card notations of export-profiles-v1, read as polars expressions over a
column of text: each cell to its rank (`A23456789TJQK`; `points`: the value's rank, `X`
for a ten-value card, whose rank is not recorded) and its suit (`SHDC`; null where the
notation has none). A cell the notation cannot read has no rank: a bad card. A card
without a suit is written as format 1.3 writes a card known by value only (`8*`, `X*`):
never with a suit the export did not record.
"""

from __future__ import annotations

import polars as pl

from ..ingest.vocabulary import NOT_RECORDED, RANKS, SUITS, TEN_VALUE
from .model import Cards

CARD = pl.Struct({"rank": pl.String, "suit": pl.String})
# `points`, one token table for both games (1.1): each token to the rank of its value, `X`
# for a ten-value card (0 in baccarat, 10 in blackjack), whose rank is not recorded
POINT_TOKENS = {"0": TEN_VALUE, "10": TEN_VALUE, "1": "A", "11": "A", "A": "A",
                **{rank: rank for rank in RANKS[1:9]}}
# rank_suit and suit_rank: ten as `10` or `T`, any case
_RANK = r"(?P<rank>10|[2-9AaTtJjQqKk])"
_SUIT = r"(?P<suit>[SsHhDdCc])"
# the named notations' patterns (the draft reads a sample's cells with them too)
PATTERNS = {"rank_suit": f"^{_RANK}{_SUIT}$", "suit_rank": f"^{_SUIT}{_RANK}$"}


def parts(cards: Cards, text: pl.Expr) -> pl.Expr:
    """The rank and suit of each cell of `text` (a struct of the two; no rank: not a
    card). Cells listed in `cards.none` are read like any other here: the caller says
    which cells hold no card."""
    cell = text.cast(pl.String).str.strip_chars()
    if cards.notation == "index":
        return _index(cards, cell)
    if cards.notation == "points":
        token = cell.replace(cards.ranks) if cards.ranks else cell
        rank = token.str.to_uppercase().replace_strict(POINT_TOKENS, default=None)
        return pl.struct(rank.alias("rank"), pl.lit(None, pl.String).alias("suit"))
    pattern = cards.pattern if cards.notation == "pattern" else PATTERNS[cards.notation]
    groups = cell.str.extract_groups(_whole(pattern))
    rank = _token(groups.struct.field("rank"), cards.ranks, _rank_of)
    suit = (_token(groups.struct.field("suit"), cards.suits, _suit_of)
            if "(?P<suit>" in pattern else pl.lit(None, pl.String))
    has_suit = "(?P<suit>" in pattern
    readable = rank.is_not_null() & (suit.is_not_null() if has_suit else pl.lit(True))
    return pl.struct(pl.when(readable).then(rank).alias("rank"),
                     pl.when(readable).then(suit).alias("suit"))


def _whole(pattern: str) -> str:
    """A pattern that must match the whole cell."""
    return pattern if pattern.startswith("^") and pattern.endswith("$") else f"^(?:{pattern})$"


def _index(cards: Cards, cell: pl.Expr) -> pl.Expr:
    """An integer (digits, or a number with no fraction) from index_base to
    index_base + 51: suits in index_suits' order, ranks A 2 ... 10 J Q K within each."""
    number = cell.cast(pl.Float64, strict=False)
    whole = (number == number.floor()) & cell.str.contains(r"^\d+(\.0*)?$")
    at = (number - cards.index_base).cast(pl.Int64, strict=False)
    inside = whole & (at >= 0) & (at < 52)
    rank = pl.lit(RANKS).str.slice(at % 13, 1)
    suit = pl.lit(cards.index_suits).str.slice(at // 13, 1)
    return pl.struct(pl.when(inside).then(rank).alias("rank"),
                     pl.when(inside).then(suit).alias("suit"))


def _token(token: pl.Expr, mapped: dict[str, str], usual) -> pl.Expr:
    """A pattern's group through its token map; a token the map does not list is read
    as rank_suit reads it."""
    if mapped:
        token = token.replace(mapped)
    return usual(token)


def _rank_of(token: pl.Expr) -> pl.Expr:
    upper = token.str.to_uppercase().replace({"10": "T", "1": None, "0": None})
    return pl.when(upper.str.contains(f"^[{RANKS}]$")).then(upper)


def _suit_of(token: pl.Expr) -> pl.Expr:
    upper = token.str.to_uppercase()
    return pl.when(upper.str.contains(f"^[{SUITS}]$")).then(upper)


def read_as_cards(cards: Cards, cells: list[str]) -> list[str]:
    """The cells that the notation reads as a card (a `none` value must not be one)."""
    frame = pl.DataFrame({"cell": cells}, schema={"cell": pl.String})
    read = frame.select(pl.col("cell"), parts(cards, pl.col("cell")).alias("card"))
    return read.filter(pl.col("card").struct.field("rank").is_not_null())["cell"].to_list()


def codes(cards: Cards, cell: pl.Expr) -> pl.Expr:
    """Each cell as the format writes a card: rank then suit (`TS`; a notation without
    suits gives a card known by value only, format 1.3: `8*`, `X*`, and rules that need
    the suit or the rank are not evidenced); a `none` cell or an empty one is no card
    (null); a cell the notation cannot read is kept as written, a bad card at its line."""
    cell = cell.cast(pl.String).str.strip_chars()
    read = parts(cards, cell)
    rank, suit = read.struct.field("rank"), read.struct.field("suit")
    none = [n.strip() for n in cards.none]
    return (pl.when(cell.is_null() | (cell == "") | cell.is_in(none)).then(None)
            .when(rank.is_not_null()).then(rank + pl.coalesce(suit, pl.lit(NOT_RECORDED)))
            .otherwise(cell))


def has_suits(cards: Cards | None) -> bool:
    """Whether the notation records suits."""
    if cards is None:
        return True
    if cards.notation == "points":
        return False
    return cards.notation != "pattern" or "(?P<suit>" in (cards.pattern or "")
