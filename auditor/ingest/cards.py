"""A card as the log records it: its value, and how it is printed.

hand-history-v1 writes a card as rank then suit (`TD`); format 1.3 adds the cards
known by value only: the suit `*` where it was not recorded (`8*`), and `X*` for a
ten-value card (10, J, Q or K) whose rank was not recorded. This module is the one place
that reads a code: the value a game's ruleset gives it (by rank; `X` takes the value
that every ten-value rank has), whether it is known by value only, and how findings,
reports and replays print it. Nothing printed gives a card a suit or a rank the log did
not record: `8*` is printed `8`, `X*` is printed `X`, explained as a ten-value card
where it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from . import vocabulary as v

# How an `X` is explained, once where it is shown
TEN_VALUE_WORDS = "a ten-value card"
TEN_VALUE_NOTE = (f"{v.TEN_VALUE}: {TEN_VALUE_WORDS} (10, J, Q or K) whose rank was not "
                  "recorded")
VALUE_ONLY_NOTE = ("A card shown without a suit was recorded by value only (format 1.3): "
                   "its suit is not recorded")


def by_rank(values: Mapping) -> dict[str, int]:
    """A ruleset's table of values by rank (`card_points`, `card_values`, `burn_values`),
    with `X`: the value every ten-value rank (T, J, Q, K) has in it. Where those ranks
    differ, `X` has none (a null value, as an unknown rank)."""
    table = {str(rank): int(value) for rank, value in values.items()}
    tens = {table.get(rank) for rank in v.TEN_VALUE_RANKS}
    if len(tens) == 1 and None not in tens:
        table[v.TEN_VALUE] = tens.pop()
    return table


def rank(card: pl.Expr) -> pl.Expr:
    """The rank of a card code, as recorded (`X` for a ten-value card of no rank)."""
    return card.str.slice(0, 1)


def value(card: pl.Expr, values: Mapping, dtype: pl.DataType = pl.Int8) -> pl.Expr:
    """The value of each card (`values`: a ruleset's table by rank, see `by_rank`); null
    for a code of no known rank (`X` only in `X*`)."""
    found = rank(card).replace_strict(by_rank(values), default=None, return_dtype=dtype)
    return pl.when((rank(card) != v.TEN_VALUE) | rank_unknown(card)).then(found)


def value_only(card: pl.Expr) -> pl.Expr:
    """Whether a card is known by value only (1.3): its suit, or its rank, not recorded."""
    return card.is_in(v.VALUE_ONLY_CARDS)


def rank_unknown(card: pl.Expr) -> pl.Expr:
    """Whether a card is a ten-value card whose rank was not recorded (`X*`)."""
    return card == v.TEN_VALUE + v.NOT_RECORDED


# --- printed ------------------------------------------------------------------------------


def is_value_only(code: str | None) -> bool:
    """Whether a card code (a string) is known by value only."""
    return code in v.VALUE_ONLY_CARDS


def shown(card: pl.Expr, explain: bool = True) -> pl.Expr:
    """Each card in a finding's text: the code as recorded (`TD`), a card known by value
    only without its `*` (`8`), `X` followed by its explanation ("X (a ten-value card)")
    unless the text around it says so."""
    plain = rank(card)
    ten = plain + pl.lit(f" ({TEN_VALUE_WORDS})") if explain else plain
    return (pl.when(rank_unknown(card)).then(ten)
            .when(value_only(card)).then(plain)
            .otherwise(card))


def shown_list(cards: pl.Expr, separator: str = " ") -> pl.Expr:
    """A list of cards joined for a finding's text, each as `shown` prints it, the first
    `X` alone explained ("X (a ten-value card) 7H X")."""
    card = pl.element()
    ten = rank_unknown(card)
    first_ten = ten & (ten.cast(pl.Int32).cum_sum() == 1)
    return cards.list.eval(
        pl.when(first_ten).then(rank(card) + pl.lit(f" ({TEN_VALUE_WORDS})"))
        .when(value_only(card)).then(rank(card))
        .otherwise(card)
    ).list.join(separator)
