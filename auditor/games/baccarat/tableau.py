"""The baccarat tableau of 9 NYCRR 5324.20 as polars expressions.

Every function returns an expression, so one call decides any number of
rounds at once: the audit applies them to the recorded rounds, and the
exactness test applies the very same expressions to every coup of a shoe.

Cards are point values 0-9 (see `card_points`, (a)(4)(i)), with null where a
third card was not dealt. Rule parameters are plain Python values taken from
the dated params dict of the ruleset (`natural_points`, `player_draws_on`,
`banker_draws_when_player_stands`, `banker_draws_on_player_third`, a dragon
bonus pay table), never numbers written here, so that an amendment is a data
change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import polars as pl

__all__ = [
    "WINNERS",
    "banker_draws",
    "dragon_bonus_odds",
    "is_dragon7",
    "is_natural",
    "is_panda8",
    "player_draws",
    "points",
    "winner",
]

# The values `winner` produces, as the hand-history vocabulary spells them.
WINNERS = ("player", "banker", "tie")

Params = Mapping[str, Any]


def points(*cards: pl.Expr) -> pl.Expr:
    """Point count of a hand from its cards' values; nulls (undealt cards) count nothing.

    (a)(4)(ii): total the cards and keep the right digit.
    """
    # Cast before summing so that a narrow card dtype cannot overflow the total.
    return pl.sum_horizontal(*(card.cast(pl.Int32) for card in cards)) % 10


def is_natural(points_expr: pl.Expr, params: Params) -> pl.Expr:
    """Whether a two-card point count is a natural ((f)(10): 8 or 9 stands for both hands)."""
    return points_expr.is_in(list(params["natural_points"]))


def _no_natural(p_two: pl.Expr, b_two: pl.Expr, params: Params) -> pl.Expr:
    # (f)(10): a natural in either hand ends the round on the first four cards.
    return ~(is_natural(p_two, params) | is_natural(b_two, params))


def player_draws(p_two: pl.Expr, b_two: pl.Expr, params: Params) -> pl.Expr:
    """Whether the player's hand draws a third card.

    (f)(10) no draw if either hand is a natural; otherwise (f)(11): the player
    draws on the two-card counts in `player_draws_on` (0-5) and stays on 6-7.
    """
    return _no_natural(p_two, b_two, params) & p_two.is_in(list(params["player_draws_on"]))


def _banker_third_card_keys(params: Params) -> list[int]:
    # (f)(13) as a set of (banker two-card count, player's third card) pairs,
    # each packed as 10 * count + card: both are single digits by (a)(4)(ii),
    # so one flat `is_in` decides the whole table.
    table = params["banker_draws_on_player_third"]
    return sorted(10 * int(count) + int(card) for count, cards in table.items() for card in cards)


def banker_draws(b_two: pl.Expr, p_two: pl.Expr, p_third: pl.Expr, params: Params) -> pl.Expr:
    """Whether the banker's hand draws a third card.

    (f)(10) no draw if either hand is a natural. When the player stood
    (`p_third` null) the banker draws on `banker_draws_when_player_stands`,
    (f)(12). When the player drew, the banker's two-card count and the
    player's third card decide by `banker_draws_on_player_third`, (f)(13); the
    banker of 0-2 draws on every third card (see the note in parameters.toml).
    """
    when_stood = b_two.is_in(list(params["banker_draws_when_player_stands"]))
    key = b_two.cast(pl.Int32) * 10 + p_third.cast(pl.Int32)
    when_player_drew = key.is_in(_banker_third_card_keys(params))
    by_table = pl.when(p_third.is_null()).then(when_stood).otherwise(when_player_drew)
    return _no_natural(p_two, b_two, params) & by_table


def winner(p_points: pl.Expr, b_points: pl.Expr) -> pl.Expr:
    """The winner, "player", "banker" or "tie": the higher count wins ((b)(1)(i)-(iii))."""
    return (
        pl.when(p_points > b_points)
        .then(pl.lit("player"))
        .when(b_points > p_points)
        .then(pl.lit("banker"))
        .when(p_points == b_points)
        .then(pl.lit("tie"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def is_dragon7(b_points: pl.Expr, b_card_count: pl.Expr, winner: pl.Expr) -> pl.Expr:
    """A dragon 7: the banker's hand wins with a three-card 7.

    It decides the dragon 7 insurance wager (b)(1)(v) and pushes a banker
    wager at EZ baccarat (b)(1)(i)(a), (c). The regulation uses the term
    without a table, so the 7 and the three cards are the term's meaning.
    """
    return (winner == "banker") & (b_points == 7) & (b_card_count == 3)


def is_panda8(p_points: pl.Expr, p_card_count: pl.Expr, winner: pl.Expr) -> pl.Expr:
    """A panda 8: the player's hand wins with a three-card 8 (b)(1)(vi), paid by (d)(4)."""
    return (winner == "player") & (p_points == 8) & (p_card_count == 3)


# Encoding of `dragon_bonus_odds`: a push and a loss as odds.
DRAGON_PUSH = 0
DRAGON_LOSS = -1


def dragon_bonus_odds(
    side: Literal["player", "banker"],
    p_points: pl.Expr,
    b_points: pl.Expr,
    p_natural: pl.Expr,
    b_natural: pl.Expr,
    pay_table: Mapping[str, int],
) -> pl.Expr:
    """The dragon bonus result on `side` as the multiple of the wager won.

    Encoding: k > 0 wins k to 1 (the wager comes back with k times it),
    0 (`DRAGON_PUSH`) returns the wager, -1 (`DRAGON_LOSS`) loses it; so the
    value is the patron's net result per unit wagered.

    (b)(1)(iv): the selected hand wins as a natural ("natural" in the pay
    table) when it is a natural and the other is not, or it is a natural 9
    over a natural 8; a natural tie pushes, and a natural 8 under a natural 9
    loses. A non-natural hand wins only by 4 or more points and is paid by
    its margin ("by_4" .. "by_9"); any other result loses. Odds from one of
    the tables of (d)(5), e.g. `params["dragon_bonus_pay_tables"]["A"]`.

    `p_natural` / `b_natural` say whether each hand's two-card count was a
    natural; `p_points` / `b_points` are the final counts (equal to the
    two-card counts when either hand is a natural).
    """
    if side == "player":
        own, other, own_natural, other_natural = p_points, b_points, p_natural, b_natural
    elif side == "banker":
        own, other, own_natural, other_natural = b_points, p_points, b_natural, p_natural
    else:
        raise ValueError(f"dragon bonus side must be 'player' or 'banker', not {side!r}")

    margin_odds = {
        int(name.removeprefix("by_")): odds
        for name, odds in pay_table.items()
        if name.startswith("by_")
    }
    margin = own.cast(pl.Int32) - other.cast(pl.Int32)
    by_margin = margin.replace_strict(margin_odds, default=DRAGON_LOSS, return_dtype=pl.Int32)
    return (
        pl.when(own_natural & other_natural & (own == other))
        .then(pl.lit(DRAGON_PUSH, dtype=pl.Int32))
        .when(own_natural & (~other_natural | (own > other)))
        .then(pl.lit(pay_table["natural"], dtype=pl.Int32))
        .when(own_natural)
        .then(pl.lit(DRAGON_LOSS, dtype=pl.Int32))
        .otherwise(by_margin)
    )
