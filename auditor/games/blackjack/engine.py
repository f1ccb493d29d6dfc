"""The blackjack hand arithmetic and dealer draw rule of 9 NYCRR 5324.10 as polars expressions.

Every function returns an expression, so one call judges any number of hands at
once: the audit applies them to the recorded rounds, and the exactness test
applies the very same expressions to every draw sequence of a deck.

Cards are point values with the ace counted 1 (see `card_value`, (b)(2)); an
ace counts 11 instead wherever that does not take the hand past 21
((b)(2)(iii)). Two shapes of hand are handled:

* a list column of a hand's card values, one row per hand (`hard_total`,
  `total`, `is_soft`, `is_blackjack`);
* one row per card in dealing order, grouped by a hand key (`running_totals`),
  giving the total and softness after each card, so that every decision point
  can be judged ("the player hit at 21", "the dealer stood on 16").

Rule parameters are plain Python values taken from the dated params dict of the
ruleset (`card_values`, `dealer_stands_on`); house rules (hitting soft 17) are
a plain bool or a Boolean column, so tables with different house rules are
judged in one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ...ingest import cards as card_codes

__all__ = [
    "ACE",
    "TWENTY_ONE",
    "card_value",
    "dealer_must_draw",
    "hard_total",
    "is_blackjack",
    "is_soft",
    "player_may_draw",
    "running_totals",
    "soft_from",
    "total",
    "total_from",
]

Params = Mapping[str, Any]

# (b)(2)(iii): the total an ace's 11 may not exceed, and (g)(1) the total at
# which a player may no longer draw; (b)(2) fixes it, the parameters do not.
TWENTY_ONE = 21
# The ace's value as a card value (the `card_values` parameter counts it 1);
# counting it 11 adds ACE_EXTRA to the hand (b)(2)(iii).
ACE = 1
ACE_EXTRA = 10

_TOTAL_DTYPE = pl.Int32


def _lit(value: bool | pl.Expr) -> pl.Expr:
    return value if isinstance(value, pl.Expr) else pl.lit(bool(value))


def card_value(card: pl.Expr, params: Params) -> pl.Expr:
    """Point value 1-10 of a card ("AS", "TH", a bare rank "7", or one known by value
    only, 1.3: "8*", "X*", "A*"), ace counted 1.

    (b)(2)(i) 2-10 face value, (b)(2)(ii) jack, queen, king 10, (b)(2)(iii) the
    ace as 1 (the 11 is added by `total`). Values come from the `card_values`
    parameter (`X` the value of every ten-value rank); an unknown rank gives null.
    """
    return card_codes.value(card, params["card_values"])


# --- totals from two facts: the hard total and whether an ace is present ------


def total_from(hard: pl.Expr, has_ace: pl.Expr) -> pl.Expr:
    """Best total from the hard total (aces as 1) and whether the hand holds an ace.

    (b)(2)(iii): one ace counts 11 (adds 10) unless that exceeds 21. Two aces
    at 11 would always exceed 21, so only one can ever count 11.
    """
    return (
        pl.when(has_ace & (hard + ACE_EXTRA <= TWENTY_ONE))
        .then(hard + ACE_EXTRA)
        .otherwise(hard)
        .cast(_TOTAL_DTYPE)
    )


def soft_from(hard: pl.Expr, has_ace: pl.Expr) -> pl.Expr:
    """Whether the hand is soft: an ace is counting 11 in its best total ((b)(2)(iii))."""
    return has_ace & (hard + ACE_EXTRA <= TWENTY_ONE)


# --- one row per hand: a list column of card values ---------------------------


def hard_total(values: pl.Expr) -> pl.Expr:
    """Total of a list of card values with every ace counted 1 ((b)(2)); nulls count nothing."""
    return values.cast(pl.List(_TOTAL_DTYPE)).list.sum()


def _has_ace(values: pl.Expr) -> pl.Expr:
    return values.list.contains(ACE)


def total(values: pl.Expr) -> pl.Expr:
    """Best total of a list of card values: ace 11 unless that busts, then 1 ((b)(2)(iii))."""
    return total_from(hard_total(values), _has_ace(values))


def is_soft(values: pl.Expr) -> pl.Expr:
    """Whether a list of card values is a soft hand (an ace counting 11, (b)(2)(iii))."""
    return soft_from(hard_total(values), _has_ace(values))


def is_blackjack(values: pl.Expr, from_split: bool | pl.Expr = False) -> pl.Expr:
    """Whether a hand is a natural: exactly two cards totalling 21, not on a split hand.

    (a)(2)(iii) the blackjack pays the posted odds; a two-card 21 on a hand made
    by splitting ((c)) is an ordinary 21. `from_split` is a bool or a Boolean
    expression, e.g. ``pl.col("hands_on_box") > 1``.
    """
    return (values.list.len() == 2) & (total(values) == TWENTY_ONE) & ~_lit(from_split)


# --- one row per card, in dealing order, grouped by hand ----------------------


def running_totals(
    value: pl.Expr,
    over: str | Sequence[str],
    order_by: str | Sequence[str] | None = None,
) -> dict[str, pl.Expr]:
    """The hand as it stands after each card, for a frame of one row per card.

    `value` is the card's value (ace 1), `over` the column(s) naming the hand,
    `order_by` the dealing order within it (the frame's row order if None). The
    result maps column names to expressions, for ``df.with_columns(**...)``:

    * ``n_cards``: cards in the hand so far;
    * ``hard_total``: the total with aces as 1 (cum_sum over the hand);
    * ``total``: the best total (b)(2)(iii);
    * ``soft``: whether an ace counts 11 in it.

    Judging a decision against the row of the card before it ((g)(1) a player
    drew at 21, (g)(2) the dealer stood on 16) is a shift by one within the hand.
    """
    keys = [over] if isinstance(over, str) else list(over)

    def windowed(expr: pl.Expr) -> pl.Expr:
        return expr.over(keys, order_by=order_by) if order_by is not None else expr.over(keys)

    v = value.cast(_TOTAL_DTYPE).fill_null(0)
    hard = windowed(v.cum_sum())
    has_ace = windowed((v == ACE).cum_max())
    return {
        "n_cards": windowed(pl.int_range(1, pl.len() + 1, dtype=_TOTAL_DTYPE)),
        "hard_total": hard,
        "total": total_from(hard, has_ace),
        "soft": soft_from(hard, has_ace),
    }


# --- drawing ------------------------------------------------------------------


def player_may_draw(total_expr: pl.Expr) -> pl.Expr:
    """Whether a player may draw on this best total: less than 21 ((g)(1))."""
    return total_expr < TWENTY_ONE


def dealer_must_draw(
    total_expr: pl.Expr,
    soft: pl.Expr,
    params: Params,
    hits_soft_17: bool | pl.Expr,
) -> pl.Expr:
    """Whether the dealer's hand must take another card.

    (g)(2): draw until the total is 17-21 (`dealer_stands_on`), then draw no
    more, except that a soft 17 draws where the house requires it (and posts
    it). `hits_soft_17` is the house rule as a bool or a Boolean column, so
    tables under different house rules are judged together. A busted hand
    draws nothing. The (g)(3) exception (no outcome can change) is the
    caller's, as it depends on the players' hands.
    """
    stands_on = int(params["dealer_stands_on"])
    soft_stand = (total_expr == stands_on) & soft & _lit(hits_soft_17)
    return (total_expr < stands_on) | soft_stand
