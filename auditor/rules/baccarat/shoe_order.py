"""The order of the cards: a shoe dealt without the shuffle (c)(1) and (f)(9) require
(auditor.games.shoe_order; docs/checked/shoe-order.md)."""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import shoe_order
from ...house import HouseRules
from ..registry import Rule, register

GAME = "baccarat"


def repeated_order(shoes: pl.DataFrame, house: HouseRules | None) -> pl.DataFrame:
    """BA108's check rows from the shoes' cards of every part."""
    return repeated_in(shoe_order.repeated_in_shoes(shoes))


def repeated_in(runs: pl.DataFrame) -> pl.DataFrame:
    """The check rows of repeated runs found (within the log, or through the store)."""
    return shoe_order.repeated_findings(
        runs, "(f)(9)", "re-shuffles the cards after each shoe")


REPEATED = register(
    Rule(
        "BA108",
        "shoe-repeats-another-shoes-order",
        "A shoe repeats a run of another shoe's card order",
        "9 NYCRR 5324.20(f)(9)",
        "error",
        GAME,
        "The cards of each shoe in the order they left it, burns included, against every "
        "other shoe of the log and its context (same table or another; with `--store`, "
        "every shoe of earlier runs too): a shoe that repeats in order a run of 14 or more "
        "consecutive cards of another shoe was not shuffled (`order_runs.repeated`). Two "
        "honest shuffles share such a run by chance less than once in a million over a "
        "year of 200 tables dealing 12 shoes a day: E = (N^2 / 2) x n^2 x q^k with "
        "N = 876,000 shoes, n = 416 cards, q = 1/52, k = 14 gives 6.3e-8. A shoe of a "
        "table whose log records cards by value only (format 1.3) is compared on values, "
        "q = 25/169, with k = 28 (E = 3.8e-7). One finding per pair of shoes, at the later "
        "shoe's first card of its longest shared run, naming both shoes, where the run "
        "starts in each and its length. In coups (one row per round) the order within a "
        "round is presumed: judged on that order. The shuffle of the decks at opening, "
        "(c)(1), is checked in part by this rule and BA109.",
        "shoe S2 deals, from its card 40, the 60 cards shoe S1 dealt from its card 1",
        "two shoes of eight decks shuffled apart, sharing no run of 14 cards",
        check=shoe_order.packed_evidence,
        across=repeated_order,
        evidence_names_shoes=False,
        needs=("cards",),
        also=("9 NYCRR 5324.20(c)(1)",),
    )
)


def new_deck_order(ctx: GameContext) -> pl.DataFrame:
    return shoe_order.new_deck_check(ctx, "(c)(1)", "requires each deck shuffled")


NEW_DECK = register(
    Rule(
        "BA109",
        "cards-in-new-deck-order",
        "A shoe deals a run of cards in a new deck's order",
        "9 NYCRR 5324.20(c)(1)",
        "error",
        GAME,
        "A run of 11 or more cards of a shoe, burns included, in a manufacturer's new-deck "
        "order (`order_runs.new_deck`): each suit A to K or K to A, a suit's last card "
        "followed by the first of another suit. Decks put in the shoe unshuffled deal such "
        "runs; a shuffled shoe deals one by chance less than once in a million over a year "
        "of 200 tables dealing 12 shoes a day (E = 2.9e-8; docs/checked/shoe-order.md). "
        "One finding per run, at its first card. Not judged on a table whose log records "
        "cards by value only (format 1.3). The order of the previous shoe's discards is "
        "not recorded by a hand history, so a shoe dealt in that order is found by BA108 "
        "only where the discards kept the order dealt.",
        "shoe S1 deals AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS from its card 12",
        "shoe S1 deals AS 2S 3S then 9D: a run of 3",
        check=new_deck_order,
        needs=("cards", "suits", "ranks"),
    )
)
