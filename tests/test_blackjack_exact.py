"""The blackjack engine against the published single-deck dealer tables.

The dealer's play is enumerated exactly for one deck with only the up card
removed (51 cards): the live hands, as sorted lists of card values, are joined
round by round with the ten card values still in the deck, each draw weighed by
the cards of that value left, and the engine's `dealer_must_draw` (on the
engine's `total` and `is_soft`) decides which hands draw again. A hand of k
drawn cards weighs its ordered draw sequences out of perm(51, k), summed as
exact integers and turned into Fractions, so any change to the draw rule or to
the ace's value moves the figures.

The published table (dealer stands on soft 17, one deck) is "before the
check": the dealer's blackjack is counted, as not a bust, in every up card's
figures. For hitting soft 17 the published bust rate with a 6 up is 0.43776
"after the check"; a 6 up is never checked, so the readings "unconditional"
and "given no dealer blackjack" are the same number, 0.437756, and match it.
The same rule dealt from more decks does not (2 decks 0.438754, 6 decks
0.439259, 8 decks 0.439314), nor does standing on soft 17 (0.420823).
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

from auditor.games.blackjack import engine
from auditor.rulesets import load_rulesets

ON = date(2024, 11, 2)
SUITS = 4
DECK = 52
BUST = "bust"
NATURAL = "blackjack"

# Published single-deck dealer bust probabilities, stand on soft 17, before the
# check; keyed by the up card's value (1 = ace), 6 decimals.
PUBLISHED_S17_BUST = {
    2: "0.352973",
    3: "0.375588",
    4: "0.402803",
    5: "0.428905",
    6: "0.420823",
    7: "0.259854",
    8: "0.238627",
    9: "0.233442",
    10: "0.214264",
    1: "0.116540",
}
PUBLISHED_ACE_BLACKJACK = "0.313725"
PUBLISHED_H17_SIX_BUST = "0.43776"  # 5 decimals, "after the check"


@pytest.fixture(scope="module")
def params() -> dict[str, Any]:
    return load_rulesets().params("blackjack", on=ON)


def _shoe(params: dict[str, Any], decks: int = 1) -> dict[int, int]:
    """Cards of each value in the shoe, from the ranks' values (b)(2)."""
    ranks = Counter(int(v) for v in params["card_values"].values())
    return {value: ranks[value] * SUITS * decks for value in sorted(ranks)}


def dealer_play(
    params: dict[str, Any],
    ups: list[int],
    rules: list[bool],
    decks: int = 1,
) -> dict[tuple[int, bool], dict[object, Fraction]]:
    """Exact distribution of the dealer's final hand, by (up card, hits soft 17).

    Every up card and house rule is played in one pass: `h17` is a column, so
    `dealer_must_draw` judges hands under both rules together. Outcomes are
    the final total 17-21, `BUST`, or `NATURAL` (the dealer's blackjack, before
    the check).
    """
    shoe = _shoe(params, decks)
    unseen = sum(shoe.values()) - 1  # the deck less the up card
    values = pl.DataFrame(
        {"value": list(shoe), "in_shoe": list(shoe.values())},
        schema={"value": pl.Int8, "in_shoe": pl.Int64},
    )
    cards, value = pl.col("cards"), pl.col("value")
    # Cards of the drawn value still in the deck: the shoe less those in the hand.
    in_hand = pl.coalesce(
        [pl.when(value == v).then(cards.list.count_matches(v)) for v in shoe]
    ).cast(pl.Int64)
    live = pl.DataFrame(
        {
            "up": [u for u in ups for _ in rules],
            "h17": [h for _ in ups for h in rules],
            "cards": [[u] for u in ups for _ in rules],
            "w": [1] * (len(ups) * len(rules)),
        },
        schema={"up": pl.Int8, "h17": pl.Boolean, "cards": pl.List(pl.Int8), "w": pl.Int64},
    )
    done = []
    while live.height:
        live = live.with_columns(
            draw=engine.dealer_must_draw(
                engine.total(cards), engine.is_soft(cards), params, pl.col("h17")
            )
        )
        done.append(live.filter(~pl.col("draw")).drop("draw"))
        live = (
            live.filter("draw")
            .drop("draw")
            .join(values, how="cross")
            .with_columns(left=pl.col("in_shoe") - in_hand)
            .filter(pl.col("left") > 0)
            .select(
                "up",
                "h17",
                cards=pl.concat_list(cards, value).list.sort(),
                w=pl.col("w") * pl.col("left"),
            )
            .group_by("up", "h17", "cards")
            .agg(pl.col("w").sum())
        )
    final = (
        pl.concat(done)
        .with_columns(
            drawn=cards.list.len() - 1,
            outcome=pl.when(engine.is_blackjack(cards))
            .then(pl.lit(NATURAL))
            .when(engine.total(cards) > engine.TWENTY_ONE)
            .then(pl.lit(BUST))
            .otherwise(engine.total(cards).cast(pl.String)),
        )
        .group_by("up", "h17", "drawn", "outcome")
        .agg(pl.col("w").cast(pl.Int128).sum())
    )
    result: dict[tuple[int, bool], dict[object, Fraction]] = {}
    for up, h17, drawn, outcome, w in final.iter_rows():
        key = outcome if outcome in (BUST, NATURAL) else int(outcome)
        dist = result.setdefault((up, h17), {})
        dist[key] = dist.get(key, Fraction(0)) + Fraction(int(w), math.perm(unseen, drawn))
    return result


def unconditional_bust(dist: dict[object, Fraction]) -> Fraction:
    """Bust before the check: a dealer blackjack counts as not bust."""
    return dist.get(BUST, Fraction(0))


def bust_given_no_blackjack(dist: dict[object, Fraction]) -> Fraction:
    """Bust after the check: given the dealer does not have blackjack."""
    return dist.get(BUST, Fraction(0)) / (1 - dist.get(NATURAL, Fraction(0)))


@pytest.fixture(scope="module")
def one_deck(params) -> dict[tuple[int, bool], dict[object, Fraction]]:
    return dealer_play(params, ups=list(range(1, 11)), rules=[False, True])


def test_every_distribution_sums_to_one(one_deck):
    assert len(one_deck) == 20
    for dist in one_deck.values():
        assert sum(dist.values()) == 1
        assert set(dist) <= {17, 18, 19, 20, 21, BUST, NATURAL}


@pytest.mark.parametrize("up", sorted(PUBLISHED_S17_BUST))
def test_stand_soft_17_bust_matches_published(one_deck, up):
    bust = unconditional_bust(one_deck[(up, False)])
    assert round(bust, 6) == Fraction(PUBLISHED_S17_BUST[up])


def test_dealer_blackjack_with_ace_up(one_deck):
    for h17 in (False, True):
        natural = one_deck[(1, h17)][NATURAL]
        assert natural == Fraction(16, 51)  # a ten-value hole card among 51
        assert round(natural, 6) == Fraction(PUBLISHED_ACE_BLACKJACK)
        assert one_deck[(10, h17)][NATURAL] == Fraction(4, 51)  # an ace in the hole
    for up in range(2, 10):
        assert NATURAL not in one_deck[(up, False)]


def test_hit_soft_17_six_up_matches_published(one_deck):
    dist = one_deck[(6, True)]
    # No check with a 6 up: both readings coincide, and match.
    assert unconditional_bust(dist) == bust_given_no_blackjack(dist)
    assert round(unconditional_bust(dist), 5) == Fraction(PUBLISHED_H17_SIX_BUST)


def test_soft_17_rule_changes_six_up(one_deck):
    stand, hit = one_deck[(6, False)], one_deck[(6, True)]
    assert unconditional_bust(hit) > unconditional_bust(stand)
    assert round(unconditional_bust(stand), 5) != Fraction(PUBLISHED_H17_SIX_BUST)
    # A soft 17 is an ace (as 11) with a hard 7 including it: it can only be
    # made with an up card of 6 or less, so only those up cards are changed.
    for up in range(1, 11):
        changed = one_deck[(up, True)] != one_deck[(up, False)]
        assert changed == (up <= 6)


def test_more_decks_do_not_match_the_hit_soft_17_figure(params):
    dist = dealer_play(params, ups=[6], rules=[True], decks=2)[(6, True)]
    assert round(unconditional_bust(dist), 5) != Fraction(PUBLISHED_H17_SIX_BUST)


def test_wrong_draw_rule_misses_the_table(params):
    wrong = copy.deepcopy(params)
    wrong["dealer_stands_on"] = 16
    dist = dealer_play(wrong, ups=[6], rules=[False])[(6, False)]
    assert round(unconditional_bust(dist), 6) != Fraction(PUBLISHED_S17_BUST[6])


def test_dealer_must_draw_with_house_rule_column(params):
    frame = pl.DataFrame(
        {
            "total": [16, 17, 17, 17, 17, 18, 12, 22],
            "soft": [False, False, True, True, False, True, True, False],
            "h17": [False, True, False, True, True, True, True, True],
        }
    )
    got = frame.select(
        engine.dealer_must_draw(pl.col("total"), pl.col("soft"), params, pl.col("h17"))
    ).to_series()
    assert got.to_list() == [True, False, False, True, False, False, True, False]
    fixed = frame.select(
        s17=engine.dealer_must_draw(pl.col("total"), pl.col("soft"), params, False),
        h17=engine.dealer_must_draw(pl.col("total"), pl.col("soft"), params, True),
    )
    assert fixed["s17"].to_list() == [True, False, False, False, False, False, True, False]
    assert fixed["h17"].to_list() == [True, False, True, True, False, False, True, False]


HANDS = {
    # cards: (hard total, best total, soft)
    ("AS", "6H"): (7, 17, True),
    ("AS", "6H", "KD"): (17, 17, False),
    ("AS", "AD", "9C"): (11, 21, True),
    ("KS", "QH", "5D"): (25, 25, False),
    ("AS", "KH"): (11, 21, True),
    ("7S", "7H", "7D"): (21, 21, False),
    ("TS", "6H"): (16, 16, False),
}


def test_hand_totals(params):
    frame = pl.DataFrame({"cards": [list(h) for h in HANDS]}).with_columns(
        values=pl.col("cards").list.eval(engine.card_value(pl.element(), params))
    )
    values = pl.col("values")
    got = frame.select(
        hard=engine.hard_total(values),
        total=engine.total(values),
        soft=engine.is_soft(values),
        natural=engine.is_blackjack(values),
        split_natural=engine.is_blackjack(values, from_split=True),
        may_draw=engine.player_may_draw(engine.total(values)),
    )
    assert list(got.select("hard", "total", "soft").iter_rows()) == list(HANDS.values())
    assert got["natural"].to_list() == [False, False, False, False, True, False, False]
    assert not got["split_natural"].any()
    assert got["may_draw"].to_list() == [True, True, False, False, False, False, True]
    assert got["total"].filter(got["total"] > engine.TWENTY_ONE).to_list() == [25]


def test_card_values(params):
    cards = pl.Series(["AS", "2H", "9D", "TC", "JS", "QH", "KD", "7", "XX"])
    got = pl.select(engine.card_value(pl.lit(cards), params)).to_series().to_list()
    assert got == [1, 2, 9, 10, 10, 10, 10, 7, None]


def test_cards_known_by_value_are_enumerated_by_their_value(params):
    """Format 1.3: a card known by value only has the value of its rank's cards (`X*` a
    ten-value card's), so the dealer's play enumerated above by value holds for a hand
    recorded by value as for the same hand in full."""
    from auditor.ingest import vocabulary as v

    full = pl.Series(list(v.CARDS))
    by_value = full.str.slice(0, 1).replace(dict.fromkeys(v.TEN_VALUE_RANKS, v.TEN_VALUE)) + "*"
    values = pl.select(engine.card_value(pl.lit(full), params).alias("full"),
                       engine.card_value(pl.lit(by_value), params).alias("by_value"))
    assert values["full"].null_count() == 0
    assert values["full"].to_list() == values["by_value"].to_list()
    hands = pl.DataFrame({"cards": [["A*", "X*"], ["A*", "6*"], ["A*", "6*", "X*"],
                                    ["8*", "8*"], ["AS", "KD"], ["AH", "6C"]]})
    got = hands.with_columns(
        pl.col("cards").list.eval(engine.card_value(pl.element(), params)).alias("v")
    ).select(engine.is_blackjack(pl.col("v")).alias("natural"),
             engine.total(pl.col("v")).alias("total"), engine.is_soft(pl.col("v")).alias("soft"))
    assert got.rows() == [(True, 21, True), (False, 17, True), (False, 17, False),
                          (False, 16, False), (True, 21, True), (False, 17, True)]


def test_running_totals_over_several_hands(params):
    # Three hands, cards interleaved and out of order: `seq` gives dealing order.
    frame = pl.DataFrame(
        {
            "hand": ["d", "p1", "p2", "p1", "d", "p2", "p1", "d", "p1", "d"],
            "seq": [3, 1, 2, 4, 6, 5, 7, 8, 9, 10],
            "card": ["6S", "AS", "TD", "5H", "AH", "AC", "9C", "KD", "4S", "AD"],
        }
    ).with_columns(value=engine.card_value(pl.col("card"), params))
    got = (
        frame.with_columns(**engine.running_totals(pl.col("value"), "hand", order_by="seq"))
        .sort("hand", "seq")
        .select("hand", "card", "n_cards", "hard_total", "total", "soft")
    )
    expected = [
        ("d", "6S", 1, 6, 6, False),
        ("d", "AH", 2, 7, 17, True),  # soft 17: stands or hits by the house rule
        ("d", "KD", 3, 17, 17, False),
        ("d", "AD", 4, 18, 18, False),  # drew on hard 17: a (g)(2) breach
        ("p1", "AS", 1, 1, 11, True),
        ("p1", "5H", 2, 6, 16, True),
        ("p1", "9C", 3, 15, 15, False),
        ("p1", "4S", 4, 19, 19, False),
        ("p2", "TD", 1, 10, 10, False),
        ("p2", "AC", 2, 11, 21, True),
    ]
    assert list(got.iter_rows()) == expected
    # Each decision point judged in the same pass: the dealer drew with the
    # total before the card, under either house rule.
    judged = (
        frame.with_columns(**engine.running_totals(pl.col("value"), "hand", order_by="seq"))
        .sort("hand", "seq")
        .filter(pl.col("hand") == "d")
        .with_columns(
            before_total=pl.col("total").shift(1).over("hand"),
            before_soft=pl.col("soft").shift(1).over("hand"),
        )
        .drop_nulls("before_total")
        .select(
            s17=engine.dealer_must_draw(
                pl.col("before_total"), pl.col("before_soft"), params, False
            ),
            h17=engine.dealer_must_draw(
                pl.col("before_total"), pl.col("before_soft"), params, True
            ),
        )
    )
    assert judged["s17"].to_list() == [True, False, False]
    assert judged["h17"].to_list() == [True, True, False]


def test_running_totals_in_row_order(params):
    frame = pl.DataFrame({"hand": [1, 1, 2, 1, 2], "value": [1, 1, 10, 9, 1]})
    got = frame.with_columns(**engine.running_totals(pl.col("value"), ["hand"]))
    assert got["total"].to_list() == [11, 12, 10, 21, 21]
    assert got["soft"].to_list() == [True, True, False, True, True]
    assert got["n_cards"].to_list() == [1, 2, 1, 3, 2]
