"""The baccarat engine against the published combinatorial analysis of 8 decks.

Every coup of a fresh 8-deck shoe is enumerated over the ten card values
(value 0 = 10/J/Q/K, 128 cards; values 1-9, 32 cards each) as one frame of
10^6 rows, p1 b1 p2 b2 c5 c6 in dealing order (f)(5), (f)(8). The engine's
expressions decide the draws, each coup is weighted by the number of ordered
6-card deals from 416 cards that produce it, and the totals must equal the
published counts exactly: any change to a draw rule moves them.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from datetime import date
from fractions import Fraction
from typing import Any

import polars as pl
import pytest

from auditor.games.baccarat import tableau
from auditor.rulesets import load_rulesets

ON = date(2024, 11, 2)  # the regulation text is current through this date

DECKS = 8
SUITS = 4
SHOE = DECKS * 52
POSITIONS = ("p1", "b1", "p2", "b2", "c5", "c6")
ORDERED_DEALS = math.perm(SHOE, len(POSITIONS))

# Published counts of ordered 6-card deals, 8 decks.
PUBLISHED = {
    "banker": 2_292_252_566_437_888,
    "player": 2_230_518_282_592_256,
    "tie": 475_627_426_473_216,
}
PUBLISHED_TOTAL = 4_998_398_275_503_360
PUBLISHED_DRAGON7 = 112_633_011_329_024
PUBLISHED_PANDA8 = 172_660_763_262_976
TIE_PAYS = 8  # the published tie edge is for 8 to 1


@pytest.fixture(scope="module")
def params() -> dict[str, Any]:
    return load_rulesets().params("baccarat", on=ON)


def _class_sizes(params: dict[str, Any]) -> dict[int, int]:
    # Cards of each point value in the shoe, from the ranks' values (a)(4)(i).
    ranks = Counter(params["card_points"].values())
    return {value: ranks[value] * SUITS * DECKS for value in range(10)}


@pytest.fixture(scope="module")
def deals(params: dict[str, Any]) -> pl.DataFrame:
    """Every coup as six card values in dealing order, with its ordered deals.

    `w4`, `w5`, `w_all`: the falling product of the remaining class sizes
    over the first 4, 5 and 6 cards. `w_all`, the ordered deals of exactly
    these six values, summed over the values of the positions a coup leaves
    unused gives that coup's ordered deals, so it needs no deduplication.
    """
    sizes = _class_sizes(params)
    assert sum(sizes.values()) == SHOE
    n = 10 ** len(POSITIONS)
    i = pl.int_range(n, dtype=pl.Int64)
    cards = {
        name: (i // 10 ** (len(POSITIONS) - 1 - k) % 10).cast(pl.Int8)
        for k, name in enumerate(POSITIONS)
    }
    # The k-th card is drawn from its class less the earlier cards of that class.
    factors = [
        pl.col(name).replace_strict(sizes, return_dtype=pl.Int64)
        - sum((pl.col(name) == pl.col(before)).cast(pl.Int64) for before in POSITIONS[:k])
        for k, name in enumerate(POSITIONS)
    ]
    return (
        pl.select(**cards)
        .with_columns(w4=factors[0] * factors[1] * factors[2] * factors[3])
        .with_columns(w5=pl.col("w4") * factors[4])
        .with_columns(w_all=pl.col("w5") * factors[5])
    )


def _coups(deals: pl.DataFrame, params: dict[str, Any], pay_table: dict[str, int]) -> pl.DataFrame:
    """Play every row through the engine; the outcome columns plus `used` cards."""
    p1, b1, p2, b2, c5, c6 = (pl.col(name) for name in POSITIONS)
    p_two, b_two = tableau.points(p1, p2), tableau.points(b1, b2)
    played = (
        deals.with_columns(
            p_two=p_two,
            b_two=b_two,
            p_draws=tableau.player_draws(p_two, b_two, params),
        )
        .with_columns(
            # The fifth card is the player's third if the player draws (f)(8).
            p3=pl.when("p_draws").then(c5),
        )
        .with_columns(
            b_draws=tableau.banker_draws(pl.col("b_two"), pl.col("p_two"), pl.col("p3"), params),
        )
        .with_columns(
            b3=pl.when("b_draws").then(pl.when("p_draws").then(c6).otherwise(c5)),
            p_cards=2 + pl.col("p_draws").cast(pl.Int8),
            b_cards=2 + pl.col("b_draws").cast(pl.Int8),
        )
        .with_columns(
            used=pl.col("p_cards") + pl.col("b_cards"),
            p_points=tableau.points(p1, p2, pl.col("p3")),
            b_points=tableau.points(b1, b2, pl.col("b3")),
            p_natural=tableau.is_natural(pl.col("p_two"), params),
            b_natural=tableau.is_natural(pl.col("b_two"), params),
        )
        .with_columns(
            winner=tableau.winner(pl.col("p_points"), pl.col("b_points")),
        )
    )
    p_points, b_points = pl.col("p_points"), pl.col("b_points")
    naturals = pl.col("p_natural"), pl.col("b_natural")
    return played.select(
        "used",
        "c5",
        "c6",
        "w4",
        "w5",
        "w_all",
        "winner",
        dragon7=tableau.is_dragon7(b_points, pl.col("b_cards"), pl.col("winner")),
        panda8=tableau.is_panda8(p_points, pl.col("p_cards"), pl.col("winner")),
        bonus_player=tableau.dragon_bonus_odds("player", p_points, b_points, *naturals, pay_table),
        bonus_banker=tableau.dragon_bonus_odds("banker", p_points, b_points, *naturals, pay_table),
    )


OUTCOME = ("winner", "dragon7", "panda8", "bonus_player", "bonus_banker")


def _tally(coups: pl.DataFrame, weight: str) -> dict[tuple, int]:
    # Sums in Int128: an Int64 sum wraps silently, and the totals come within
    # a factor of two of its limit.
    grouped = coups.group_by(OUTCOME).agg(pl.col(weight).cast(pl.Int128).sum())
    return {row[:-1]: int(row[-1]) for row in grouped.iter_rows()}


def _weighted(coups: pl.DataFrame) -> dict[str, dict[tuple, int]]:
    """Tallies by `w_all` and by `w_prefix`.

    `w_prefix` counts each distinct used prefix once, on the row whose unused
    positions hold value 0: the falling product over the cards used times the
    ordered ways to fill the rest, perm(416 - used, 6 - used); every other
    row weighs 0.
    """
    used = pl.col("used")
    prefix = (
        pl.when(used == 6)
        .then(pl.col("w_all"))
        .when((used == 5) & (pl.col("c6") == 0))
        .then(pl.col("w5") * math.perm(SHOE - 5, 1))
        .when((used == 4) & (pl.col("c5") == 0) & (pl.col("c6") == 0))
        .then(pl.col("w4") * math.perm(SHOE - 4, 2))
        .otherwise(0)
    )
    coups = coups.with_columns(w_prefix=prefix)
    return {"w_all": _tally(coups, "w_all"), "w_prefix": _tally(coups, "w_prefix")}


def _by(tally: dict[tuple, int], column: str) -> Counter:
    k = OUTCOME.index(column)
    totals: Counter = Counter()
    for key, weight in tally.items():
        totals[key[k]] += weight
    return totals


@pytest.fixture(scope="module")
def pay_table_a(params: dict[str, Any]) -> dict[str, int]:
    return params["dragon_bonus_pay_tables"]["A"]


@pytest.fixture(scope="module")
def tallies(deals, params, pay_table_a) -> dict[str, dict[tuple, int]]:
    return _weighted(_coups(deals, params, pay_table_a))


@pytest.fixture(scope="module")
def tally(tallies) -> dict[tuple, int]:
    return tallies["w_prefix"]


def test_cards_known_by_value_fall_in_the_value_classes_enumerated(params):
    """Format 1.3: a card known by value only (`8*`, `X*` a ten-value card) counts its
    rank's point value, so its coup is one of the coups by value class enumerated here,
    with the outcome counted for the same coup in full cards; and the shoe's cards by
    value class (`common.value_classes`, which BA107 counts against) are the classes
    enumerated: 8 decks hold 128 ten-value cards and 32 of each other value."""
    from auditor.games import common
    from auditor.games.baccarat import replay
    from auditor.ingest import vocabulary as v

    class Ctx:
        pass

    ctx = Ctx()
    ctx.params = params
    full = pl.Series(list(v.CARDS))
    by_value = full.str.slice(0, 1).replace(dict.fromkeys(v.TEN_VALUE_RANKS, v.TEN_VALUE)) + "*"
    points = pl.DataFrame({"card": full}).select(replay.card_values(ctx))["card"]
    known = pl.DataFrame({"card": by_value}).select(replay.card_values(ctx))["card"]
    assert points.null_count() == 0 and points.to_list() == known.to_list()
    classes = common.value_classes(params["card_points"])
    assert dict(zip(classes["value"], classes["a_deck"] * DECKS, strict=True)) == _class_sizes(
        params)


def test_weights_count_every_ordered_deal(tallies):
    assert ORDERED_DEALS == PUBLISHED_TOTAL
    assert sum(tallies["w_all"].values()) == ORDERED_DEALS
    assert sum(tallies["w_prefix"].values()) == ORDERED_DEALS


def test_prefix_count_matches_full_six_card_count(tallies):
    assert tallies["w_prefix"] == {k: v for k, v in tallies["w_all"].items() if v}


def test_winner_counts_are_exact(tally):
    assert dict(_by(tally, "winner")) == PUBLISHED


def test_dragon7_and_panda8_counts_are_exact(tally):
    assert _by(tally, "dragon7")[True] == PUBLISHED_DRAGON7
    assert _by(tally, "panda8")[True] == PUBLISHED_PANDA8


def _edge_percent(net: Fraction | int) -> Fraction:
    # House edge in percent of the wager, rounded to 4 decimals.
    return round(-Fraction(net) / PUBLISHED_TOTAL * 100, 4)


def test_house_edges(tally, params):
    wins = _by(tally, "winner")
    banker, player, tie = wins["banker"], wins["player"], wins["tie"]
    commission = Fraction(5, 100)
    assert 5 in params["commission_percents"]
    banker_net = banker * params["banker_pays"] * (1 - commission) - player
    assert _edge_percent(banker_net) == Fraction("1.0579")
    assert _edge_percent(player * params["player_pays"] - banker) == Fraction("1.2351")
    assert _edge_percent(tie * TIE_PAYS - banker - player) == Fraction("14.3596")


def test_dragon_bonus_edges_pay_table_a(tally):
    def net(column: str) -> int:
        return sum(odds * weight for odds, weight in _by(tally, column).items())

    assert _edge_percent(net("bonus_player")) == Fraction("2.6517")
    assert _edge_percent(net("bonus_banker")) == Fraction("9.3731")


def _flip(values: list[int], value: int) -> list[int]:
    return sorted(set(values) ^ {value})


def _banker_3_draws_on_8(p):
    table = p["banker_draws_on_player_third"]
    table["3"] = _flip(table["3"], 8)


def _banker_0_to_2_stays_on_8_9(p):
    # The printed (f)(13) table read literally: "draws" lists only 0-7.
    for count in ("0", "1", "2"):
        p["banker_draws_on_player_third"][count] = list(range(8))


def _player_stays_on_5(p):
    p["player_draws_on"] = _flip(p["player_draws_on"], 5)


def _banker_draws_on_6_when_player_stands(p):
    p["banker_draws_when_player_stands"] = _flip(p["banker_draws_when_player_stands"], 6)


def _banker_4_stays_on_2(p):
    table = p["banker_draws_on_player_third"]
    table["4"] = _flip(table["4"], 2)


def _only_9_is_natural(p):
    p["natural_points"] = [9]


@pytest.mark.parametrize(
    "mutate",
    [
        _banker_3_draws_on_8,
        _banker_0_to_2_stays_on_8_9,
        _player_stays_on_5,
        _banker_draws_on_6_when_player_stands,
        _banker_4_stays_on_2,
        _only_9_is_natural,
    ],
)
def test_a_wrong_draw_rule_changes_the_counts(deals, params, pay_table_a, mutate):
    wrong = copy.deepcopy(params)
    mutate(wrong)
    coups = _coups(deals, wrong, pay_table_a)
    counts = dict(_by(_tally(coups, "w_all"), "winner"))
    assert sum(counts.values()) == PUBLISHED_TOTAL
    assert counts != PUBLISHED


# Dragon bonus results by hand: final points and naturals -> odds on each side (b)(1)(iv).
@pytest.mark.parametrize(
    ("p_points", "b_points", "p_natural", "b_natural", "player", "banker"),
    [
        (9, 8, True, True, 1, -1),  # natural 9 over natural 8 is a natural win
        (8, 8, True, True, 0, 0),  # natural tie pushes
        (8, 7, True, False, 1, -1),  # a natural over a non-natural
        (9, 5, False, False, 1, -1),  # non-natural win by 4
        (9, 0, False, False, 30, -1),  # non-natural win by 9
        (7, 4, False, False, -1, -1),  # win by 3 loses, as does the loser
        (6, 6, False, False, -1, -1),  # a non-natural tie loses both
        (2, 8, False, True, -1, 1),
    ],
)
def test_dragon_bonus_odds_cases(
    pay_table_a, p_points, b_points, p_natural, b_natural, player, banker
):
    frame = pl.DataFrame(
        {"p": [p_points], "b": [b_points], "pn": [p_natural], "bn": [b_natural]},
        schema={"p": pl.Int8, "b": pl.Int8, "pn": pl.Boolean, "bn": pl.Boolean},
    )
    args = pl.col("p"), pl.col("b"), pl.col("pn"), pl.col("bn"), pay_table_a
    result = frame.select(
        player=tableau.dragon_bonus_odds("player", *args),
        banker=tableau.dragon_bonus_odds("banker", *args),
    )
    assert result.row(0) == (player, banker)
