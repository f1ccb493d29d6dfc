"""A blackjack table simulator: realistic hand histories that obey 9 NYCRR 5324.10,
and the same logs with planted faults, each listed in a truth file.

`simulate(rounds, tables, seed, faults)` deals `rounds` rounds over `tables`
tables and returns the events in the hand-history-v1 columns (the blackjack
conventions of the project: box order, hole card recorded when dealt,
insurance settled at the check, settlement after the dealer's play), the table
settings for a house rules file, and the truth of every planted fault.
Everything comes from one `random.Random(seed)`, so a seed always gives the
same log.

Tables, in turn (`table_settings`): BJ-01 six-deck shoe, hits soft 17, 3:2,
surrender, an optional bonus wager offered (so six decks are the minimum,
(b)(1)(iii)); BJ-02 six-deck shoe, stands on soft 17, 3:2, no surrender, high
wagers ($100-$2000) under a $500 payout limit; BJ-03 two decks dealt from the
hand, stands on soft 17, 3:2, no surrender; BJ-04 six-deck shoe, hits soft 17,
6:5, surrender, optional bonus wager; BJ-05 six-deck shoe, stands on soft 17,
3:2, surrender; BJ-06 on repeat BJ-01, BJ-02, BJ-04, BJ-05 (only BJ-03 is dealt
from the hand). Every table pays insurance 2:1; the limit is $100,000 except
on the high-limit tables.

A clean log (``faults=0``): a shuffle and one burn per shoe; the cover card
about one deck from the end (reached during a round, or just before one: that
round is completed and the shoe reshuffled, (j)); 1-7 boxes with a wager, now
and then two or three patrons on a box ((h)(1), co-patrons carry a
`player_id`); the deal of the conventions; insurance offered on an ace (up to
half the wager, rounded up to the next dollar), settled at the check; the
dealer's blackjack settled at once; players acting box by box on a
basic-strategy chart (with a few plain deviations: a stiff hand standing or
hitting against the book), doubling on any two cards including split hands,
splitting pairs up to four hands, aces once with one card each, surrendering
(late) where the house allows it; co-patrons doubling or covering splits by
their own choice ((h)(4), (h)(5)); the dealer drawing to 17 by the house's
soft-17 rule and not at all when no outcome can change ((g)(3)); every wager
settled once, naturals at the posted odds, wins capped at the payout limit per
hand. Timestamps advance by seconds per event (about a minute a round).

Faults: `faults` is the share of rounds that get one planted fault. The kinds
are queued in the order below, over and over (``round(faults * rounds)`` in
all), and planted at an even pace at the next round (or shoe) where they fit,
the kind planted least often first, so a 600-round run over 4 tables at
``faults=0.1`` holds every kind. A fault breaks only the rule it names and
the rest of its round stays consistent (a dealer who wrongly stood on 16 still
has the settlements right for the cards dealt). Kinds that need a particular
deal (a pair of aces, a dealer ace, a natural) take the cards they need from
further back in the shoe, which is just another order of the same shoe, and
the first box of the round (the "target box") plays them.

====== ============================ ================================================================
rule   fault                        what is planted (truth `seq`: the row showing it)
====== ============================ ================================================================
BJ101  box_above_seven              a wager on box 8, dealt, played and settled like any other box
                                    (seq: the box-8 main wager)
BJ102  shoe_below_minimum           a 5-deck shoe on a table offering an optional bonus wager (six
                                    decks required); cards within 5 decks (seq: the shuffle; round
                                    null)
BJ103  card_over_decks              a card recorded as a code of the same value whose copies are all
                                    out already: one copy too many (seq: that card)
BJ104  round_after_cover            one more round dealt after the cover-card round before the
                                    shuffle (seq: its round_start)
BJ201  drew_at_21                   a hand that reached hard 21 by hitting hits again and busts
                                    (seq: the hit)
BJ202  double_after_hit             a hand doubles on its third card (seq: the double action)
BJ203  double_card_count            a doubled hand gets no card, or a second card after the first
                                    (seq: the double action, or the extra card)
BJ204  split_wrong                  a split wager of twice the original, or a split of two cards of
                                    different values, 8 and 9 (seq: the wager, or the split action)
BJ205  split_hand_out_of_order      after a split the second hand gets its card before the first
                                    hand (10 or 11) is played out (seq: the second hand's card)
BJ206  too_many_splits              a fourth split on one box: five hands (seq: the fourth split)
BJ207  split_ace_hit                the first split ace hits after its one card (seq: the hit)
BJ208  aces_resplit                 a split ace that gets an ace is split again (seq: that split)
BJ301  insurance_without_ace        insurance taken against a ten up card, settled at the check
                                    (seq: the insurance wager)
BJ302  insurance_over_half          insurance of the whole main wager; loses (seq: the wager)
BJ303  insurance_underpaid          winning insurance paid 1:1 or 3:2 instead of 2:1 (seq: the pay)
BJ304  insurance_not_collected      losing insurance pushed back to the player (seq: the push)
BJ401  surrender_not_allowed        a hard 16 surrenders against a ten on a no-surrender table,
                                    settled half and half (seq: the surrender action)
BJ402  surrender_late               surrender after a hit, settled half and half (seq: surrender)
BJ403  surrender_2_9_settled_wrong  16 surrendered against a 9: the whole wager collected, or all
                                    of it returned (seq: the collect or push)
BJ404  surrender_ten_settled_wrong  16 surrendered against a ten, no dealer blackjack: the whole
                                    wager collected (seq: the collect)
BJ405  insurance_netted_with_       a 16 insures against an ace (no dealer blackjack) and
       surrender                    surrenders; the insurance is not collected at the check but
                                    with the surrendered half, in one collect (seq: that collect)
BJ501  dealer_draw_wrong            the dealer stands on 16, draws on hard 17, or breaks the house
                                    soft-17 rule (seq: the drawn card, or the dealer's last card
                                    when it stood)
BJ502  dealer_drew_needlessly       the only box has a natural, yet the dealer draws from 12-16
                                    (seq: the dealer's first drawn card)
BJ601  four_patrons_on_box          four patrons wager on one box (seq: the fourth wager)
BJ602  uncovered_split_settled      a co-patron who did not cover a split gets a `split`
                                    settlement on the second hand (seq: that row)
BJ603  co_patron_doubled_alone      a co-patron's double wager while the deciding player hit (seq:
                                    the double wager)
BJ604  decision_called_by_wrong_    on a box with a co-patron, the box's first action carries the
       patron                       co-patron's player_id; or no one is seated (the seated
                                    player's rows carry an id, the highest main wager) and every
                                    action carries the smaller co-patron's id (seq: the first
                                    action)
BJ701  even_money_wrong             a win paid $5 short, a winning hand collected, or a losing
                                    (not busted) hand paid 1:1 (seq: the row)
BJ702  natural_odds_wrong           a natural paid 1:1 or at the other odds (6:5 for 3:2 and back)
                                    (seq: the pay)
BJ703  push_not_returned            a push collected or paid (seq: the row)
BJ704  bust_not_collected           a busted hand returned, or paid when the dealer busts too
                                    (seq: the row)
BJ705  payout_over_limit            a natural on a high-limit table paid in full above the $500
                                    limit (seq: the pay)
BJ706  settled_twice_or_never       a settled wager settled a second time (a collect where there is
                                    one), or a wager never settled (seq: the second row, or null)
BJ801  exposed_card_misused         a card exposed as the target box comes to play (a hard 14) is
                                    burned and the box hits on (seq: the burn), or drawn aside and
                                    the box dealt the card after it (seq: that card; the exposed
                                    card is burned at the end), or, the box standing on 18, exposed
                                    and burned while the dealer had to draw on 16 (seq: the burn)
BJ802  card_after_refuse            the target box (a hard 12) refuses a card exposed, then hits
                                    and is dealt it (seq: that card)
BJ803  missed_dealer_card_wrong     the dealer misses the up card and deals it right after the
                                    first box's second card, before the other boxes' (seq: the up
                                    card)
BJ806  hole_checked_without_ace     a `hole_card_check` with a 2-9 up (seq: the check; a warning)
BJ807  insurance_after_check        with an ace up the hole card is checked before the insurance
                                    wagers (seq: the target box's insurance wager)
BJ804  dead_hand_wager_taken        the first box is passed over in the deal and declared dead
                                    (i)(3); its main wager is collected or paid (seq: that row)
BJ805  dead_hand_by_choice_wager_   a 13 hits against a 7-9, the card is not dealt and the hand
       taken                        is called dead (i)(4)(ii); its main wager is collected or
                                    paid (seq: that row)
BJ808  late_card_after_dealer_drew  an 11 doubles against a 2-6 (hole card a ten); its card is not
                                    dealt, a later box acts, and the card is dealt only after the
                                    dealer's third card (seq: the late card)
====== ============================ ================================================================

Judgement calls (also in the report): split hands are played in hand-number
order (a re-split's new hand waits for the hands made before it), unless
`resplit_hand_placement="beside"`: then every table lays a re-split hand right
beside the hand it came from and plays the hands in that order (8-8 split, hand 1
re-split: hands 1, 3, 2), and the house rules say so ((c)(2), BJ205); insurance is
settled at the check, surrender at the decision (after the check, so never
against a dealer blackjack); the payout limit applies per hand and wager-holder
(main first, then the double) -- the simulator keeps co-patrons off the limited
tables, never doubles there above half the limit and keeps insurance within it,
so a capped payout is always a single row; the hand-dealt game places its cover
card about one deck from the end as well; a cover card reached exactly at a
round's first card is written before that round_start half the time (with that
round's number), otherwise just before the card it came out with; re-splitting
a split ace is planted as BJ208 only (it is also a decision on a split ace,
but (c)(3)(iii) is the paragraph it breaks); busted hands are collected with
the rest of the settlement after the dealer's play.

Right remedies (`EXPOSURE_REMEDIES`, only where `faults` > 0, about one every
2.5 / faults rounds without a fault, the kinds in turn): a card exposed as a box
comes to play, dealt as the next card to whoever draws next (burned at the end
where no one does); the same card refused by that box, which keeps its two cards;
a card exposed after a double, refused, the doubled hand keeping two cards; the
dealer's missed up card dealt with the hole card after every box's two cards; the
hole card checked after the insurance wagers (ace up) or with a ten up; then
(`MISSED_CARD_REMEDIES`) the last box passed over in the deal and declared dead,
its wagers pushed, or left unsettled and placed again on its seat in the next
round (if that round has no fault); a box's first hit not dealt and the hand
called dead, its wagers pushed; a double's card missed while a later box acts,
dealt before the dealer plays; on a box with a co-patron and the seated player's
wager the highest, no one seated: the seated player's rows and every action carry
one id; a 16 that insures against an ace and surrenders, each settled on its own.
Each is a truth row with no rule (`rule_id` null, `fault` "remedied_..."), in a round with
no fault, where no rule may find anything.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import polars as pl

from ..games.blackjack.shoes import deck_minimum
from ..house import BLACKJACK_DEFAULTS, RESPLIT_PLACEMENTS
from ..ingest import vocabulary as v
from ..rulesets import load_rulesets
from .baccarat import DEFAULT_START, Simulation
from .common import OrderPlants, TableRounds, dealer_on, offset_text, truth_frame

__all__ = [
    "DEFAULT_START",
    "FAULT_KINDS",
    "REMEDY_KINDS",
    "Simulation",
    "simulate",
    "table_settings",
]

# rule id -> fault name, in the order they are queued.
FAULT_KINDS: dict[str, str] = {
    "BJ101": "box_above_seven",
    "BJ102": "shoe_below_minimum",
    "BJ103": "card_over_decks",
    "BJ104": "round_after_cover",
    "BJ201": "drew_at_21",
    "BJ202": "double_after_hit",
    "BJ203": "double_card_count",
    "BJ204": "split_wrong",
    "BJ205": "split_hand_out_of_order",
    "BJ206": "too_many_splits",
    "BJ207": "split_ace_hit",
    "BJ208": "aces_resplit",
    "BJ301": "insurance_without_ace",
    "BJ302": "insurance_over_half",
    "BJ303": "insurance_underpaid",
    "BJ304": "insurance_not_collected",
    "BJ401": "surrender_not_allowed",
    "BJ402": "surrender_late",
    "BJ403": "surrender_2_9_settled_wrong",
    "BJ404": "surrender_ten_settled_wrong",
    "BJ405": "insurance_netted_with_surrender",
    "BJ501": "dealer_draw_wrong",
    "BJ502": "dealer_drew_needlessly",
    "BJ601": "four_patrons_on_box",
    "BJ602": "uncovered_split_settled",
    "BJ603": "co_patron_doubled_alone",
    "BJ604": "decision_called_by_wrong_patron",
    "BJ701": "even_money_wrong",
    "BJ702": "natural_odds_wrong",
    "BJ703": "push_not_returned",
    "BJ704": "bust_not_collected",
    "BJ705": "payout_over_limit",
    "BJ706": "settled_twice_or_never",
    "BJ801": "exposed_card_misused",
    "BJ802": "card_after_refuse",
    "BJ803": "missed_dealer_card_wrong",
    "BJ806": "hole_checked_without_ace",
    "BJ807": "insurance_after_check",
    "BJ804": "dead_hand_wager_taken",
    "BJ805": "dead_hand_by_choice_wager_taken",
    "BJ808": "late_card_after_dealer_drew",
}
_ORDER = {kind: i for i, kind in enumerate(FAULT_KINDS)}
SHOE_KINDS = frozenset({"BJ102", "BJ104"})
# Shuffles that did not happen, planted only on request (simulate's `order_faults`;
# common.OrderPlants): not queued with the kinds above, so the logs without them are as before
ORDER_KINDS = {"shoe_reused": "BJ106", "decks_unshuffled": "BJ107"}
_CO_PATRON_KINDS = frozenset({"BJ601", "BJ602", "BJ603", "BJ604"})
_DOUBLE_KINDS = frozenset({"BJ202", "BJ203", "BJ205", "BJ808"})
_CO_PATRON_REMEDIES = frozenset({"remedied_decisions_by_highest_wager"})
_NATURAL_KINDS = frozenset({"BJ502", "BJ702", "BJ705"})
# The right remedies of the irregularities (i)(1), (i)(2) and of (e)(2)'s timing, planted
# only in logs with faults, in rounds without one (`_Remedies`): truth rows with no rule,
# where no rule may find anything
EXPOSURE_REMEDIES = (
    "remedied_exposed_dealt_next",
    "remedied_exposed_refused",
    "remedied_double_refused",
    "remedied_dealer_card_missed",
    "remedied_insurance_before_check",
)
# The right remedies of (i)(3), (i)(4), (h)(2) and (f)(2), planted the same way
MISSED_CARD_REMEDIES = (
    "remedied_dead_hand_pushed",
    "remedied_dead_hand_wagered_again",
    "remedied_dead_hand_by_choice",
    "remedied_late_card_in_time",
    "remedied_decisions_by_highest_wager",
    "remedied_insurance_and_surrender_apart",
)
# every kind of right remedy, planted in turn (tests/test_simulated_audit.py reads it)
REMEDY_KINDS = EXPOSURE_REMEDIES + MISSED_CARD_REMEDIES

# --- cards and the closed vocabularies (held as small integers until the frame) ---

RANKS = v.RANKS
CODES = v.CARDS  # card index -> code
VALUE = tuple(min(1 + i // 4, 10) for i in range(52))  # ace 1, 2-9, ten and faces 10
TARGETS = ("dealer", "seat")
BETS = v.BLACKJACK_BETS
EVENT = {name: i for i, name in enumerate(v.EVENTS)}
ACTION = {name: i for i, name in enumerate(v.ACTIONS)}
MAIN, DOUBLE, SPLIT, INSURANCE = (BETS.index(b) for b in ("main", "double", "split", "insurance"))
DEALER, SEAT = 0, 1

E_SHUFFLE, E_BURN, E_COVER = EVENT["shuffle"], EVENT["burn"], EVENT["cover_card"]
E_START, E_WAGER, E_NMB, E_CARD = (
    EVENT[e] for e in ("round_start", "wager", "no_more_bets", "card")
)
E_ACTION, E_COLLECT, E_PAY, E_PUSH, E_END = (
    EVENT[e] for e in ("action", "collect", "pay", "push", "round_end")
)
A_HIT, A_STAND, A_DOUBLE, A_SPLIT, A_SURRENDER = (
    ACTION[a] for a in ("hit", "stand", "double", "split", "surrender")
)
E_DEAD = EVENT["dead_hand"]
E_EXPOSED, E_HOLE_CHECK, A_REFUSE = (
    EVENT["card_exposed"], EVENT["hole_card_check"], ACTION["refuse"]
)

# Seconds each event takes on the table clock (about a minute a round).
STEP = {
    "shuffle": 0,
    "burn": 3,
    "cover_card": 1,
    "round_start": 2,
    "wager": 1,
    "no_more_bets": 2,
    "card": 1,
    "action": 2,
    "collect": 1,
    "pay": 2,
    "push": 1,
    "round_end": 1,
}
_STEPS = tuple(STEP.get(name, 1) for name in v.EVENTS)

FLUSH_ROWS = 200_000
DEFAULT_LIMIT = 100_000
LOW_LIMIT = 500
WAGERS = (10, 15, 25, 25, 25, 25, 50, 50, 50, 75, 100, 100, 100, 150, 200, 250, 300, 500, 1000)
HIGH_WAGERS = (100, 100, 100, 150, 200, 200, 250, 250, 300, 300, 400, 500, 500, 750, 1000, 2000)


# Table settings: (pit, decks, dealt_from, hits soft 17, blackjack pays, surrender, limit,
# optional wagers).
_SHOE_CYCLE = (
    ("PIT-3", 6, "shoe", True, "3:2", True, DEFAULT_LIMIT, ["other_bonus"]),
    ("PIT-3", 6, "shoe", False, "3:2", False, LOW_LIMIT, []),
    ("PIT-4", 6, "shoe", True, "6:5", True, DEFAULT_LIMIT, ["other_bonus"]),
    ("PIT-4", 6, "shoe", False, "3:2", True, DEFAULT_LIMIT, []),
)
_HAND_TABLE = ("PIT-4", 2, "hand", False, "3:2", False, DEFAULT_LIMIT, [])
HAND_TABLE_INDEX = 2


def table_settings(index: int) -> dict[str, Any]:
    """Settings of the `index`-th simulated table (0-based), as written to the house file."""
    if index == HAND_TABLE_INDEX:
        spec = _HAND_TABLE
    else:
        spec = _SHOE_CYCLE[(index if index < HAND_TABLE_INDEX else index - 1) % len(_SHOE_CYCLE)]
    pit, decks, dealt_from, h17, pays, surrender, limit, optional = spec
    return {
        "table_id": f"BJ-{index + 1:02d}",
        "game": "blackjack",
        "pit": pit,
        "decks": decks,
        "dealt_from": dealt_from,
        "dealer_hits_soft_17": h17,
        "blackjack_pays": pays,
        "insurance_pays": "2:1",
        "surrender": surrender,
        "payout_limit": limit,
        "optional_wagers": list(optional),
    }


def _ratio(text: str) -> tuple[int, int]:
    num, den = text.split(":")
    return int(num), int(den)


# --- basic strategy ---------------------------------------------------------------
# Up card values 2..11 (ace 11). Decisions: H hit, S stand, D double (else hit),
# d double (else stand), P split, R surrender.


def _hard(total: int, up: int, h17: bool) -> str:
    if total <= 8:
        return "H"
    if total == 9:
        return "D" if 3 <= up <= 6 else "H"
    if total == 10:
        return "D" if up <= 9 else "H"
    if total == 11:
        return "D" if up <= 10 or h17 else "H"
    if total == 12:
        return "S" if 4 <= up <= 6 else "H"
    if total <= 16:
        return "S" if up <= 6 else "H"
    return "S"


def _soft(total: int, up: int, h17: bool) -> str:
    if total <= 14:
        return "D" if 5 <= up <= 6 else "H"
    if total <= 16:
        return "D" if 4 <= up <= 6 else "H"
    if total == 17:
        return "D" if 3 <= up <= 6 else "H"
    if total == 18:
        if (2 if h17 else 3) <= up <= 6:
            return "d"
        return "S" if up <= 8 else "H"
    if total == 19:
        return "d" if h17 and up == 6 else "S"
    return "S"


def _pair(value: int, up: int) -> bool:
    if value in (1, 8):
        return True
    if value == 9:
        return up <= 9 and up != 7
    if value in (2, 3, 7):
        return up <= 7
    if value == 6:
        return up <= 6
    if value == 4:
        return up in (5, 6)
    return False  # fives and tens


def _surrenders(total: int, up: int, h17: bool) -> bool:
    if total == 16:
        return up >= 9
    if total == 15:
        return up == 10 or (h17 and up == 11)
    return total == 17 and h17 and up == 11


def _charts(h17: bool) -> tuple[dict, dict, dict, dict]:
    hard = {(t, u): _hard(t, u, h17) for t in range(2, 22) for u in range(2, 12)}
    soft = {(t, u): _soft(t, u, h17) for t in range(12, 22) for u in range(2, 12)}
    pair = {(p, u): _pair(p, u) for p in range(1, 11) for u in range(2, 12)}
    surrender = {(t, u): _surrenders(t, u, h17) for t in range(2, 22) for u in range(2, 12)}
    return hard, soft, pair, surrender


# --- the pieces of a round -----------------------------------------------------------


class _Infeasible(Exception):
    """The cards a planted fault needs are not in the shoe: the round is dealt again clean."""


class _Hand:
    __slots__ = (
        "no",
        "cards",
        "hard",
        "aces",
        "wagers",
        "acted",
        "doubled",
        "split_aces",
        "bust",
        "surrendered",
        "natural",
        "dead",
    )

    def __init__(self, no: int):
        self.no = no
        self.cards: list[int] = []
        self.hard = 0
        self.aces = 0
        self.wagers: list[list] = []  # [pid, bet, cents] in the order placed
        self.acted = False
        self.doubled = False
        self.split_aces = False
        self.bust = False
        self.surrendered = False
        self.natural = False
        self.dead = False  # declared dead (i)(3), (i)(4)(ii): plays no more, owed a push

    def add(self, card: int) -> None:
        self.cards.append(card)
        value = VALUE[card]
        self.hard += value
        if value == 1:
            self.aces += 1

    def total(self) -> tuple[int, bool]:
        if self.aces and self.hard <= 11:
            return self.hard + 10, True
        return self.hard, False


class _Box:
    __slots__ = ("seat", "patrons", "hands", "split", "aces_split")

    def __init__(self, seat: int, patrons: list[list]):
        self.seat = seat
        self.patrons = patrons  # [pid, main cents]; the seated player first (pid None)
        self.hands: list[_Hand] = []
        self.split = False
        self.aces_split = False


@dataclass
class _Truth:
    table_id: str
    shoe_id: str
    round: int | None
    seq: int | None
    fault: str
    rule_id: str
    note: str


def _dollars(cents: int) -> str:
    return f"${cents // 100}" if cents % 100 == 0 else f"${cents / 100:.2f}"


class _Planner:
    """The queue of faults still to plant, paced over the run."""

    def __init__(self, faults: float, rounds: int, tables: int,
                 kinds: tuple[str, ...] | None = None):
        total = round(faults * rounds) if faults > 0 else 0
        kinds = list(FAULT_KINDS if kinds is None else kinds)
        self.left: Counter[str] = Counter(kinds[i % len(kinds)] for i in range(total))
        self.planted: Counter[str] = Counter()
        self.total = total
        self.done = 0
        self.rounds = max(rounds, 1)
        self.rounds_done = 0
        self.cooldown: dict[str, int] = {}
        self.wait = 2 * max(tables, 1)

    def due(self) -> bool:
        return bool(self.left) and self.done < self.total * (self.rounds_done + 1) / self.rounds

    def ranked(self) -> list[str]:
        now = self.rounds_done
        kinds = [k for k in self.left if self.cooldown.get(k, -1) <= now]
        return sorted(kinds, key=lambda k: (self.planted[k], _ORDER[k]))

    def take(self, kind: str) -> None:
        self.left[kind] -= 1
        if not self.left[kind]:
            del self.left[kind]
        self.planted[kind] += 1
        self.done += 1

    def give_back(self, kind: str) -> None:
        self.left[kind] += 1
        self.planted[kind] -= 1
        self.done -= 1
        self.cooldown[kind] = self.rounds_done + self.wait


class _Remedies:
    """The right remedies still to plant: one due every `every` rounds without a fault
    (none in a clean log), the kinds in turn; a kind whose round gives it no place (no
    double, no ace or ten up) stays due for the next round without a fault."""

    def __init__(self, faults: float, kinds: tuple[str, ...]):
        self.kinds = kinds
        self.every = max(5, round(2.5 / faults)) if faults > 0 else 0
        self.wait = self.every
        self.turn = 0

    def due(self) -> str | None:
        if not self.every:
            return None
        self.wait -= 1
        return self.kinds[self.turn % len(self.kinds)] if self.wait <= 0 else None

    def planted(self) -> None:
        self.turn += 1
        self.wait = self.every


# --- one table -------------------------------------------------------------------


class _Table:
    """One table's state and its log (columns of small integers), dealt round by round."""

    def __init__(self, sim: _Simulator, index: int, settings: dict[str, Any], budget: int):
        self.sim = sim
        rng = self.rng = sim.rng
        self.index = index
        self.table_id: str = settings["table_id"]
        self.decks: int = settings["decks"]
        self.hand_dealt = settings["dealt_from"] == "hand"
        self.h17: bool = settings["dealer_hits_soft_17"]
        self.bj = _ratio(settings["blackjack_pays"])
        self.ins = _ratio(settings["insurance_pays"])
        self.surrender: bool = settings["surrender"]
        self.limit = int(settings["payout_limit"]) * 100
        self.min_decks = sim.min_decks(settings)
        self.choices = HIGH_WAGERS if settings["payout_limit"] < 1000 else WAGERS
        # the limit binds on a single wager: keep co-patrons, big doubles and insurance clear
        self.limited = self.limit < max(self.choices) * 100 * 3
        # one patron a box: a limited table, or a day dealt without co-patrons
        self.alone = self.limited or not sim.co_patrons
        self.hard, self.soft, self.pair, self.surr = sim.charts[self.h17]
        self.max_hands = int(sim.params["max_splits"]) + 1
        self.beside = sim.beside
        self.budget = budget
        self.done = 0
        self.base = 0  # rows flushed so far
        self.clock = index * 11 + rng.randint(0, 9)
        self.start_clock = self.clock
        self.cols: list[list] = [[] for _ in range(9)]
        self.gaps: list[tuple[int, int]] = []  # (row, extra seconds before it)
        self.marks: list[tuple[int, int, int]] = []  # (row, round, shoe) where they change
        self.deck_rows: list[tuple[int, int]] = []  # (row, decks) of shuffles
        self.frames: list[pl.DataFrame] = []
        self.shoe_no = 0
        self.round_no = 0
        self.need_shuffle = True
        self.extra_round = False
        self.pool = [f"P{rng.randrange(1_000_000, 10_000_000)}" for _ in range(24)]
        self.seated: dict[int, int] = {}
        for seat in rng.sample(range(1, 8), rng.randint(2, 6)):
            self.seated[seat] = self._amount()
        # the round being dealt
        self.kind: str | None = None
        self.planted = False
        self.target: _Box | None = None
        self.fdata: dict[str, Any] = {}
        # a right remedy due this round, and what an exposed card left to do
        self.remedy: str | None = None
        self.remedy_now: str | None = None
        self.remedied = False
        self.exposed: int | None = None  # the shoe position of a card exposed, not drawn
        self.aside: int | None = None  # an exposed card drawn aside, burned at the end
        # (i)(3), (i)(4), (f)(2): the hands declared dead this round (box, hand, how), a
        # card dealt late (box, hand, fault), the box settling insurance and surrender apart,
        # the box passed over in the deal, the boxes dealt, and the wagers a box passed
        # over places again in the seat's next round (seat, patrons)
        self.dead: list[tuple[_Box, _Hand, str]] = []
        self.late: tuple[_Box, _Hand, bool] | None = None
        self.apart_box: _Box | None = None
        self.passed_over: tuple[_Box, _Hand, str] | None = None
        self.round_boxes: list[_Box] = []
        self.again: tuple[int, list[list]] | None = None

    # -- the log

    @property
    def shoe_id(self) -> str:
        return f"{self.table_id}-{self.shoe_no:04d}"

    def _put(
        self,
        event: int,
        seat=None,
        hand=None,
        target=None,
        card=None,
        bet=None,
        cents=None,
        action=None,
        pid=None,
    ) -> int:
        c = self.cols
        c[0].append(event)
        c[1].append(seat)
        c[2].append(hand)
        c[3].append(target)
        c[4].append(card)
        c[5].append(bet)
        c[6].append(cents)
        c[7].append(action)
        c[8].append(pid)
        return self.base + len(c[0])  # the row's seq

    def _mark(self) -> None:
        """The rows from here on carry the current round and shoe."""
        self.marks.append((len(self.cols[0]), self.round_no, self.shoe_no))

    def _gap(self, seconds: int) -> None:
        self.gaps.append((len(self.cols[0]), seconds))

    def _truth(self, kind: str, seq: int | None, note: str, round_no: int | None = -1) -> None:
        self.sim.truth.append(
            _Truth(
                self.table_id,
                self.shoe_id,
                self.round_no if round_no == -1 else round_no,
                seq,
                FAULT_KINDS[kind],
                kind,
                note,
            )
        )
        self.planted = True

    def flush(self) -> None:
        rows = len(self.cols[0])
        if not rows:
            return
        c = self.cols
        steps = _STEPS
        t = [steps[e] for e in c[0]]
        for row, seconds in self.gaps:
            if row < rows:
                t[row] += seconds
        rnd: list[int | None] = [None] * rows
        shoe: list[int | None] = [None] * rows
        for row, r, s in self.marks:
            rnd[row] = r
            shoe[row] = s
        decks: list[int | None] = [None] * rows
        for row, d in self.deck_rows:
            decks[row] = d
        u32 = pl.UInt32
        frame = pl.DataFrame(
            {
                "event": pl.Series(c[0], dtype=u32).cat.to(pl.Enum(v.EVENTS)),
                "seat": pl.Series(c[1], dtype=pl.Int8),
                "hand": pl.Series(c[2], dtype=pl.Int8),
                "target": pl.Series(c[3], dtype=u32).cat.to(pl.Enum(TARGETS)),
                "card": pl.Series(c[4], dtype=u32).cat.to(pl.Enum(CODES)),
                "bet": pl.Series(c[5], dtype=u32).cat.to(pl.Enum(BETS)),
                "amount_cents": pl.Series(c[6], dtype=pl.Int64),
                "action": pl.Series(c[7], dtype=u32).cat.to(pl.Enum(v.ACTIONS)),
                "player_id": pl.Series(c[8], dtype=pl.String),
                "decks": pl.Series(decks, dtype=pl.Int8),
                "_t": pl.Series(t, dtype=pl.Int32),
                "round": pl.Series(rnd, dtype=pl.Int32),
                "_shoe": pl.Series(shoe, dtype=pl.Int32),
            }
        )
        frame = frame.with_columns(pl.col("round", "_shoe").forward_fill())
        self.frames.append(frame)
        self.base += rows
        self.cols = [[] for _ in range(9)]
        self.gaps = []
        self.deck_rows = []
        self.marks = [(0, self.round_no, self.shoe_no)]

    # -- shoes

    def _new_shoe(self) -> None:
        rng = self.rng
        if self.shoe_no:
            self._gap(rng.randint(45, 90) if self.hand_dealt else rng.randint(120, 240))
        self.shoe_no += 1
        self.round_no = 0
        self.need_shuffle = False
        self.extra_round = False
        self.cover_out = False
        decks = self.decks
        planner = self.sim.planner
        kind = None
        if "BJ102" in planner.left and self.min_decks > 1:
            kind = "BJ102"
            planner.take(kind)
            decks = self.min_decks - 1
        self.shoe_decks = decks
        shoe = [c for c in range(52) for _ in range(decks)]
        rng.shuffle(shoe)
        order_kind = None
        if kind is None:
            shoe, order_kind, order_note = self.sim.order.plant(shoe, self.table_id)
        self.shoe = shoe
        self.seen = [0] * 52
        self._mark()
        self.deck_rows.append((len(self.cols[0]), decks))
        seq = self._put(E_SHUFFLE)
        if kind:
            self._truth(
                kind,
                seq,
                f"shoe of {decks} decks where the table's optional wagers need {self.min_decks}",
                round_no=None,
            )
        if order_kind is not None:
            self.sim.truth.append(_Truth(self.table_id, self.shoe_id, None, None, order_kind,
                                         ORDER_KINDS[order_kind], order_note))
        self._put(E_BURN, card=shoe[0])
        self.seen[shoe[0]] += 1
        self.pos = 1
        behind = rng.randint(44, 60) if decks > 2 else rng.randint(40, 52)  # about a deck
        self.cover = len(shoe) - behind
        self._gap(rng.randint(5, 15))

    def _cover(self) -> None:
        self._put(E_COVER)
        self.cover_out = True

    # -- seats and wagers

    def _amount(self) -> int:
        return 100 * self.rng.choice(self.choices)

    def _boxes(self, kind: str | None) -> list[_Box]:
        rng = self.rng
        seated = self.seated
        if len(seated) > 1 and rng.random() < 0.05:
            del seated[rng.choice(list(seated))]
        if len(seated) < 7 and rng.random() < 0.06:
            seat = rng.choice([s for s in range(1, 8) if s not in seated])
            seated[seat] = self._amount()
        occupied = [s for s in sorted(seated) if rng.random() < 0.95]
        if not occupied:
            occupied = [min(seated)]
        if kind == "BJ502":
            occupied = occupied[:1]
        if kind == "BJ101":
            occupied.append(8)
        boxes = []
        for seat in occupied:
            base = seated.get(seat) or self._amount()
            if rng.random() < 0.2:
                base = self._amount()
                if seat in seated:
                    seated[seat] = base
            patrons = [[None, base]]
            if not self.alone:
                x = rng.random()
                extra = 2 if x < 0.012 else 1 if x < 0.08 else 0
                for pid in rng.sample(self.pool, extra):
                    patrons.append([pid, 100 * rng.choice(WAGERS[:12])])
            boxes.append(_Box(seat, patrons))
        boxes = self._wagered_again(kind, boxes)
        if kind is None:
            return boxes
        # the target box of a planted fault
        box = boxes[0]
        pats = box.patrons
        if kind in _CO_PATRON_KINDS:
            want = 4 if kind == "BJ601" else max(2, len(pats))
            others = [p for p in self.pool if p not in {q[0] for q in pats}]
            for pid in rng.sample(others, want - len(pats)):
                pats.append([pid, 100 * rng.choice(WAGERS[:12])])
            del pats[want:]
        if self.limited:
            main = pats[0][1]
            if kind in _DOUBLE_KINDS and 2 * main > self.limit:
                pats[0][1] = 100 * rng.choice([w for w in self.choices if 200 * w <= self.limit])
            elif kind == "BJ702" and main * self.bj[0] > self.limit * self.bj[1]:
                pats[0][1] = 100 * min(self.choices)
            elif kind == "BJ705" and main * self.bj[0] <= self.limit * self.bj[1]:
                pats[0][1] = 100 * rng.choice(
                    [w for w in self.choices if 100 * w * self.bj[0] > self.limit * self.bj[1]]
                )
        return boxes

    # -- cards

    def _force(
        self, index: int, ok: Callable[[int], bool], floor: int, avoid: int | None = None
    ) -> None:
        """Put a card whose value passes `ok` at `index`, taken from `floor` onward (and,
        with `avoid`, a card other than that one)."""
        shoe = self.shoe
        if index >= len(shoe):
            raise IndexError("the shoe ran out")
        if ok(VALUE[shoe[index]]) and shoe[index] != avoid:
            return
        for j in range(floor, len(shoe)):
            if ok(VALUE[shoe[j]]) and shoe[j] != avoid:
                shoe[index], shoe[j] = shoe[j], shoe[index]
                return
        raise _Infeasible

    def _force_next(self, ok: Callable[[int], bool]) -> None:
        if self.pos >= len(self.shoe):
            raise IndexError("the shoe ran out")
        self._force(self.pos, ok, self.pos + 1)

    def _draw(self) -> int:
        if self.pos == self.cover and not self.cover_out:
            self._cover()
        card = self.shoe[self.pos]
        self.pos += 1
        return card

    def _to_seat(self, box: _Box, hand: _Hand, code: int | None = None) -> int:
        card = self._draw()
        hand.add(card)
        shown = card if code is None else code
        self.seen[shown] += 1
        return self._put(E_CARD, box.seat, hand.no, SEAT, shown)

    def _to_dealer(self) -> int:
        card = self._draw()
        self.dealer.add(card)
        self.seen[card] += 1
        self.dealer_seq = self._put(E_CARD, target=DEALER, card=card)
        return card

    # -- which fault this round takes

    def _fits(self, kind: str) -> bool:
        if kind in SHOE_KINDS:
            return False
        if kind == "BJ401":
            return not self.surrender
        if kind in ("BJ402", "BJ403", "BJ404", "BJ405"):
            return self.surrender
        if kind == "BJ705":
            return self.limited
        if kind in _CO_PATRON_KINDS:
            return not self.alone
        if kind == "BJ103":
            return self.shoe_decks in self.seen  # a code with every copy out, not yet over
        return True

    def _pick(self) -> str | None:
        planner = self.sim.planner
        if not planner.due():
            return None
        for kind in planner.ranked():
            if self._fits(kind):
                planner.take(kind)
                return kind
        return None

    def _forced(self, kind: str) -> dict[str, Callable[[int], bool]]:
        """The values the initial deal must hold for `kind`: c1/c2 of the target box, up, hole."""

        def eq(x: int) -> Callable[[int], bool]:
            return lambda value: value == x

        def between(lo: int, hi: int) -> Callable[[int], bool]:
            return lambda value: lo <= value <= hi

        ten, ace, up29 = eq(10), eq(1), between(2, 9)

        def not_ten(value: int) -> bool:
            return value != 10

        def not_ace(value: int) -> bool:
            return value != 1

        if kind == "BJ103":
            return {"c1": eq(self.fdata["value"])}
        if kind == "BJ201":
            return {"c1": ten, "c2": eq(3), "up": between(7, 9)}
        if kind == "BJ202":
            return {"c1": eq(5), "c2": eq(3), "up": up29}
        if kind == "BJ203":
            return {"c1": eq(6), "c2": eq(5), "up": up29}
        if kind == "BJ204":
            second = 8 if self.fdata["variant"] == "wager" else 9
            return {"c1": eq(8), "c2": eq(second), "up": up29}
        if kind in ("BJ205", "BJ602"):
            return {"c1": eq(8), "c2": eq(8), "up": up29}
        if kind == "BJ206":
            x = self.fdata["value"]
            return {"c1": eq(x), "c2": eq(x), "up": up29}
        if kind in ("BJ207", "BJ208"):
            return {"c1": ace, "c2": ace, "up": up29}
        if kind == "BJ301":
            return {"up": ten}
        if kind in ("BJ302", "BJ304"):
            return {"up": ace, "hole": not_ten}
        if kind == "BJ303":
            return {"up": ace, "hole": ten}
        if kind in ("BJ401", "BJ404"):
            return {"c1": ten, "c2": eq(6), "up": ten, "hole": not_ace}
        if kind == "BJ402":
            return {"c1": ten, "c2": eq(2), "up": between(7, 9)}
        if kind == "BJ403":
            return {"c1": ten, "c2": eq(6), "up": eq(9)}
        if kind == "BJ501":
            variant = self.fdata["variant"]
            up, hole = {"stood": (6, 10), "drew": (7, 10), "soft17": (6, 1)}[variant]
            return {"c1": ten, "c2": eq(8), "up": eq(up), "hole": eq(hole)}
        if kind == "BJ502":
            return {"c1": ace, "c2": ten, "up": between(2, 6), "hole": ten}
        if kind == "BJ603":
            return {"c1": ten, "c2": eq(3), "up": between(7, 9)}
        if kind in ("BJ702", "BJ705"):
            return {"c1": ace, "c2": ten, "up": up29}
        if kind == "BJ703":
            return {"c1": ten, "c2": eq(8), "up": ten, "hole": eq(8)}
        if kind == "BJ704":
            return {"c1": ten, "c2": eq(2), "up": between(2, 3)}
        if kind == "BJ801":  # a hard 14 that hits, or a standing 18 and the dealer on 16
            if self.fdata["variant"] == "dealer":
                return {"c1": ten, "c2": eq(8), "up": ten, "hole": eq(6)}
            return {"c1": ten, "c2": eq(4), "up": between(7, 9)}
        if kind == "BJ802":
            return {"c1": ten, "c2": eq(2), "up": between(7, 9)}
        if kind == "BJ806":
            return {"up": up29}
        if kind == "BJ405":  # a 16 that insures against the ace, then surrenders
            return {"c1": ten, "c2": eq(6), "up": ace, "hole": not_ten}
        if kind == "BJ805":  # a 13 that hits against a 7-9
            return {"c1": ten, "c2": eq(3), "up": between(7, 9)}
        if kind == "BJ808":  # an 11 that doubles against a dealer who must draw on 12-16
            return {"c1": eq(6), "c2": eq(5), "up": between(2, 6), "hole": ten}
        if kind == "BJ807":
            return {"up": ace, "hole": not_ten}
        return {}

    def _prepare(self, kind: str, boxes: list[_Box]) -> None:
        """Choose the variant and arrange the initial deal of a planted fault."""
        sim, rng = self.sim, self.rng
        fd = self.fdata
        if kind == "BJ103":
            spent = [c for c in range(52) if self.seen[c] == self.shoe_decks]
            rng.shuffle(spent)
            rest = Counter(VALUE[c] for c in self.shoe[self.pos + 20 :])
            spent = [c for c in spent if rest[VALUE[c]]]
            if not spent:
                raise _Infeasible
            fd["code"] = spent[0]
            fd["value"] = VALUE[spent[0]]
        elif kind == "BJ204":
            fd["variant"] = sim.turn(kind, ("wager", "values"))
        elif kind == "BJ206":
            rest = Counter(VALUE[c] for c in self.shoe[self.pos :])
            fd["value"] = 8 if rest[8] >= 5 else max(range(2, 11), key=lambda x: rest[x])
        elif kind in (
            "BJ203", "BJ303", "BJ403", "BJ501", "BJ701", "BJ702", "BJ703", "BJ706", "BJ801",
            "BJ604", "BJ804", "BJ805",
        ):
            variants = {
                "BJ203": ("none", "extra"),
                "BJ303": ((1, 1), (3, 2)),
                "BJ403": ("collect", "push"),
                "BJ501": ("stood", "drew", "soft17"),
                "BJ701": ("short", "collected", "paid_loss"),
                "BJ702": ("even", "other"),
                "BJ703": ("collect", "pay"),
                "BJ706": ("twice", "never"),
                "BJ801": ("burned", "not_next", "dealer"),
                "BJ604": ("seated", "unseated"),
                "BJ804": ("collect", "pay"),
                "BJ805": ("collect", "pay"),
            }[kind]
            fd["variant"] = sim.turn(kind, variants)
        if kind == "BJ604" and fd["variant"] == "unseated":  # the smaller wager calls
            pats = boxes[0].patrons
            pats[0][1] = max(pats[0][1], max(p[1] for p in pats[1:]) + 2500)
        forced = self._forced(kind)
        if not forced:
            return
        n = len(boxes)
        offset = {"c1": 0, "up": n, "c2": n + 1, "hole": 2 * n + 1}
        floor = self.pos + 2 * n + 2
        for name in ("c1", "up", "c2", "hole"):
            if name in forced:
                if self.pos + offset[name] >= len(self.shoe):
                    raise _Infeasible
                self._force(self.pos + offset[name], forced[name], floor)

    # -- a round

    def play_round(self) -> None:
        if self.need_shuffle:
            self._new_shoe()
        planner = self.sim.planner
        kind = "BJ104" if self.extra_round else self._pick()
        self.remedy = self.sim.remedies.due() if kind is None else None
        snapshot = self._snapshot()
        try:
            self._deal(kind)
        except (_Infeasible, IndexError):
            self._restore(snapshot)
            if kind is not None:
                planner.give_back(kind)
            if kind == "BJ104":  # no cards for the extra round: shuffle as the rules say
                self.extra_round = False
                self._new_shoe()
                snapshot = self._snapshot()
            try:
                self._deal(None)
            except IndexError:  # a monster round at the end of the shoe: one box, no fault
                self._restore(snapshot)
                self._deal(None, one_box=True)
        else:
            if kind is not None and not self.planted:
                planner.give_back(kind)
        if self.remedied:
            self.sim.remedies.planted()
        self.done += 1
        if self.extra_round:
            self.extra_round = False
            self.need_shuffle = True
        elif self.cover_out:
            if (
                "BJ104" in planner.left
                and self.done < self.budget
                and self.sim.planner.cooldown.get("BJ104", -1) <= planner.rounds_done
            ):
                planner.take("BJ104")
                self.extra_round = True
            else:
                self.need_shuffle = True
        if len(self.cols[0]) >= FLUSH_ROWS:
            self.flush()

    def _snapshot(self) -> tuple:
        return (
            len(self.cols[0]),
            len(self.gaps),
            len(self.marks),
            self.pos,
            list(self.seen),
            self.cover_out,
            len(self.sim.truth),
            self.round_no,
        )

    def _restore(self, snap: tuple) -> None:
        rows, gaps, marks, self.pos, self.seen, self.cover_out, truths, self.round_no = snap
        for col in self.cols:
            del col[rows:]
        del self.gaps[gaps:]
        del self.marks[marks:]
        del self.sim.truth[truths:]

    def _deal(self, kind: str | None, one_box: bool = False) -> None:
        rng = self.rng
        put = self._put
        self.kind = kind
        self.planted = False
        self.fdata = {}
        self.remedy_now, self.remedy = self.remedy, None  # a deal again plants none
        self.remedied = False
        self.exposed = self.aside = None
        self.round_no += 1
        self._gap(rng.randint(4, 12))
        self._mark()
        boxes = self._boxes(kind)
        if one_box:
            boxes = boxes[:1]
        self.target = boxes[0] if kind is not None else None
        if kind is not None:
            self._prepare(kind, boxes)
        if self.pos == self.cover and not self.cover_out and rng.random() < 0.5:
            self._cover()

        seq = put(E_START)
        if kind == "BJ104":
            self._truth(
                kind,
                seq,
                f"round {self.round_no} dealt after the cover-card round without a shuffle",
            )
        for box in boxes:
            for k, (pid, cents) in enumerate(box.patrons):
                seq = put(E_WAGER, box.seat, 1, None, None, MAIN, cents, None, pid)
                if kind == "BJ101" and box.seat == 8 and k == 0:
                    self._truth(kind, seq, f"a wager on box 8 ({len(boxes)} boxes)")
                elif kind == "BJ601" and box is self.target and k == 3:
                    self._truth(kind, seq, f"a fourth patron wagers on box {box.seat}")
        put(E_NMB)
        boxes = self._missed_cards_setup(kind, boxes)

        # the deal: a card to each box, the up card, a second card to each, the hole card
        self.dealer = dealer = _Hand(0)
        for box in boxes:
            hand = _Hand(1)
            hand.wagers = [[pid, MAIN, cents] for pid, cents in box.patrons]
            box.hands = [hand]
        for i, box in enumerate(boxes):
            if i == 0 and kind == "BJ103":
                code = self.fdata["code"]
                seq = self._to_seat(box, box.hands[0], code)
                self._truth(
                    kind, seq, f"{CODES[code]} recorded once more than {self.shoe_decks} decks hold"
                )
            else:
                self._to_seat(box, box.hands[0])
        if kind == "BJ803" or self.remedy_now == "remedied_dealer_card_missed":
            up = self._deal_missed_dealer_card(boxes)
        else:
            up = VALUE[self._to_dealer()]
            for box in boxes:
                self._to_seat(box, box.hands[0])
            self._to_dealer()
        up11 = 11 if up == 1 else up
        dealer_bj = dealer.hard == 11 and dealer.aces == 1
        for box in boxes:
            hand = box.hands[0]
            hand.natural = hand.hard == 11 and hand.aces == 1

        self._declare_passed_over()
        self._hole_check_first(up)
        if up == 1 or kind == "BJ301":
            self._insurance(boxes, dealer_bj)
        if dealer_bj:
            entries = []
            for box in boxes:
                hand = box.hands[0]
                for pid, bet, cents in hand.wagers:
                    if hand.natural:
                        entries.append([E_PUSH, box.seat, 1, bet, cents, pid, "push", cents])
                    else:
                        entries.append([E_COLLECT, box.seat, 1, bet, cents, pid, "lose", cents])
            self._settle(entries, dealer_bust=False)
            put(E_END)
            return

        for box in boxes:
            self._play_box(box, up11)
        self._dealer_plays(boxes)
        self._burn_exposed_left()
        self._settle(self._outcomes(boxes), dealer_bust=self.dealer.total()[0] > 21)
        put(E_END)

    # -- insurance

    def _insurance(self, boxes: list[_Box], dealer_bj: bool) -> None:
        rng, put, kind = self.rng, self._put, self.kind
        placed = []
        for box in boxes:
            for k, (pid, main) in enumerate(box.patrons):
                most = (main // 100 + 1) // 2 * 100  # half, up to the next dollar
                if self.limited:
                    most = min(most, self.limit * self.ins[1] // self.ins[0] // 100 * 100)
                target = (
                    box is self.target
                    and k == 0
                    and kind in ("BJ301", "BJ302", "BJ303", "BJ304", "BJ807", "BJ405")
                ) or (box is self.apart_box and k == 0)
                if target:
                    cents = main if kind == "BJ302" else most
                elif kind == "BJ301":
                    continue
                else:
                    natural = box.hands[0].natural
                    if rng.random() >= (0.35 if natural else 0.1):
                        continue
                    cents = most if rng.random() < 0.8 else 100 * rng.randint(1, most // 100)
                seq = put(E_WAGER, box.seat, 1, None, None, INSURANCE, cents, None, pid)
                if target and kind == "BJ301":
                    self._truth(kind, seq, "insurance taken against a ten up card")
                elif target and kind == "BJ302":
                    self._truth(
                        kind,
                        seq,
                        f"insurance of {_dollars(cents)} on a "
                        f"{_dollars(main)} wager (at most {_dollars(most)})",
                    )
                elif target and kind == "BJ807":
                    self._truth(kind, seq, "insurance placed after the hole card check")
                placed.append((box.seat, pid, cents, target))
        if self._remedy_due("remedied_insurance_before_check"):
            seq = put(E_HOLE_CHECK)
            self._remedy_truth(seq, f"hole card checked after {len(placed)} insurance wager(s)")
        num, den = self.ins
        for seat, pid, cents, target in placed:
            if dealer_bj:
                pay = cents * num // den
                if target and kind == "BJ303":
                    wrong_num, wrong_den = self.fdata["variant"]
                    pay = cents * wrong_num // wrong_den
                    seq = put(E_PAY, seat, 1, None, None, INSURANCE, pay, None, pid)
                    self._truth(
                        kind,
                        seq,
                        f"insurance paid {wrong_num}:{wrong_den}, "
                        f"{_dollars(pay)} instead of {_dollars(cents * num // den)}",
                    )
                else:
                    put(E_PAY, seat, 1, None, None, INSURANCE, pay, None, pid)
            elif target and kind == "BJ304":
                seq = put(E_PUSH, seat, 1, None, None, INSURANCE, cents, None, pid)
                self._truth(kind, seq, "losing insurance returned instead of collected")
            elif target and kind == "BJ405":
                self.fdata["insured"] = cents  # collected with the surrender (f)(2)
            else:
                put(E_COLLECT, seat, 1, None, None, INSURANCE, cents, None, pid)

    # -- players

    def _play_box(self, box: _Box, up: int) -> None:
        hands = box.hands
        k = 0
        while k < len(hands):
            hand = hands[k]
            if len(hand.cards) == 1:
                self._to_seat(box, hand)
            self._play_hand(box, hand, up)
            k += 1

    def _play_hand(self, box: _Box, hand: _Hand, up: int) -> None:
        put, kind, rng = self._put, self.kind, self.rng
        target = kind is not None and box is self.target
        seat = box.seat
        if hand.natural or hand.split_aces:
            return
        if self._expose_at(box, hand):
            return  # the hand refused the card exposed: it keeps what it holds
        while True:
            total, soft = hand.total()
            if total >= 21:
                if total > 21:
                    hand.bust = True
                elif (
                    target
                    and kind == "BJ201"
                    and self.fdata.get("hand") is hand
                    and not self.planted
                ):
                    seq = put(E_ACTION, seat, hand.no, action=A_HIT)
                    self._truth(kind, seq, f"box {seat} hand {hand.no} hit at hard 21")
                    self._to_seat(box, hand)
                    hand.bust = hand.total()[0] > 21
                return
            two = len(hand.cards) == 2
            first = two and not hand.acted
            value = VALUE[hand.cards[0]]
            pair = two and VALUE[hand.cards[1]] == value
            decision = None
            if target and not self.planted:
                decision = self._fault_decision(box, hand, total, first, pair)
            if decision is None:
                if (
                    first
                    and hand.no == 1
                    and not box.split
                    and self.surrender
                    and not pair
                    and not soft
                    and self.surr[total, up]
                ):
                    decision = "R"
                elif (
                    pair
                    and len(box.hands) < self.max_hands
                    and not (value == 1 and box.aces_split)
                    and self.pair[value, up]
                ):
                    decision = "P"
                else:
                    decision = (self.soft if soft else self.hard)[total, up]
                    if decision in "Dd":
                        if two and self._may_double(hand):
                            decision = "D"
                        else:
                            decision = "H" if decision == "D" else "S"
                    if kind is None and 12 <= total <= 16 and not soft and rng.random() < 0.03:
                        decision = "S" if decision == "H" else "H"  # a player's own call
            if decision == "S":
                put(E_ACTION, seat, hand.no, action=A_STAND)
                return
            if decision == "H":
                self._hit(box, hand, total, soft)
                if hand.dead:  # its card was not dealt: called dead (i)(4)(ii)
                    return
                continue
            if decision == "D":
                self._double(box, hand)
                return
            if decision == "P":
                if self._split(box, hand, up):
                    return
                continue
            self._surrender(box, hand, up)
            return

    def _may_double(self, hand: _Hand) -> bool:
        if not self.limited:
            return True
        return all(2 * cents <= self.limit for _, bet, cents in hand.wagers)

    def _fault_decision(
        self, box: _Box, hand: _Hand, total: int, first: bool, pair: bool
    ) -> str | None:
        kind = self.kind
        if kind == "BJ202" and len(hand.cards) >= 3:
            return "D"
        if kind == "BJ204" and self.fdata["variant"] == "values" and first and hand.no == 1:
            return "P"
        if kind == "BJ206" and pair and len(box.hands) < 5:
            return "P"
        if kind in ("BJ401", "BJ403", "BJ404") and first and hand.no == 1:
            return "R"
        if kind == "BJ402" and hand.acted and hand.no == 1:
            return "R"
        return None

    def _hit(self, box: _Box, hand: _Hand, total: int, soft: bool) -> None:
        kind = self.kind
        self._put(E_ACTION, box.seat, hand.no, action=A_HIT)
        if kind is not None and box is self.target and not self.planted and not hand.acted:
            if kind == "BJ201" and not soft and 11 <= total <= 20:
                self._force_next(lambda value, need=21 - total: value == need)
                self.fdata["hand"] = hand
            elif kind == "BJ402":
                self._force_next(lambda value: 2 <= value <= 4)
            elif kind == "BJ603":
                pid, cents = box.patrons[1]
                wseq = self._put(E_WAGER, box.seat, hand.no, None, None, DOUBLE, cents, None, pid)
                hand.wagers.append([pid, DOUBLE, cents])
                self._truth(
                    kind,
                    wseq,
                    f"co-patron {pid} doubled on box {box.seat} while the deciding player hit",
                )
                self._force_next(lambda value: 5 <= value <= 8)
            elif kind == "BJ704":
                self._force_next(lambda value: value == 10)
        if self._card_missed(box, hand):
            return
        hand.acted = True
        self._to_seat(box, hand)

    def _double(self, box: _Box, hand: _Hand) -> None:
        kind, rng, put = self.kind, self.rng, self._put
        seat = box.seat
        fault = kind is not None and box is self.target and not self.planted
        seq = put(E_ACTION, seat, hand.no, action=A_DOUBLE)
        if fault and kind == "BJ202":
            self._truth(kind, seq, f"box {seat} hand {hand.no} doubled on {len(hand.cards)} cards")
        doubles = []
        for pid, bet, cents in hand.wagers:
            if bet == DOUBLE:
                continue
            if pid is None or rng.random() < 0.5:
                put(E_WAGER, seat, hand.no, None, None, DOUBLE, cents, None, pid)
                doubles.append([pid, DOUBLE, cents])
        hand.wagers += doubles
        hand.doubled = True
        hand.acted = True
        if not fault and self._double_refused(box, hand):
            return
        if self._card_late(box, hand):
            return
        if fault and kind == "BJ203" and self.fdata["variant"] == "none":
            self._truth(kind, seq, f"box {seat} hand {hand.no} doubled and got no card")
            return
        self._to_seat(box, hand)
        if fault and kind == "BJ203" and hand.total()[0] < 21:
            extra = self._to_seat(box, hand)
            self._truth(kind, extra, f"box {seat} hand {hand.no} doubled and got two cards")
        hand.bust = hand.total()[0] > 21

    def _split(self, box: _Box, hand: _Hand, up: int) -> bool:
        """Split `hand`; True when it is complete (split aces) afterwards."""
        kind, rng, put = self.kind, self.rng, self._put
        seat = box.seat
        fault = kind is not None and box is self.target and not self.planted
        aces = VALUE[hand.cards[0]] == 1
        seq = put(E_ACTION, seat, hand.no, action=A_SPLIT)
        if fault and kind == "BJ204" and self.fdata["variant"] == "values":
            self._truth(
                kind, seq, f"box {seat} split {CODES[hand.cards[0]]} and {CODES[hand.cards[1]]}"
            )
        elif fault and kind == "BJ206" and len(box.hands) == 4:
            self._truth(kind, seq, f"box {seat} split a fourth time (five hands)")
        elif fault and kind == "BJ208" and box.aces_split:
            self._truth(kind, seq, f"box {seat} split aces a second time")
        new = _Hand(len(box.hands) + 1)
        originals = {p: c for p, c in box.patrons}
        holders = [pid for pid, bet, _ in hand.wagers if bet != DOUBLE]
        for pid in holders:
            cents = originals[pid]
            if pid is not None:
                declines = fault and kind == "BJ602" and pid == box.patrons[1][0]
                if declines or rng.random() >= 0.7:
                    if declines:
                        self.fdata["uncovered"] = (pid, new)
                    continue
            elif fault and kind == "BJ204" and self.fdata["variant"] == "wager":
                cents = 2 * cents
                wseq = put(E_WAGER, seat, new.no, None, None, SPLIT, cents, None, pid)
                self._truth(
                    kind,
                    wseq,
                    f"split wager {_dollars(cents)} on an original {_dollars(originals[pid])}",
                )
                new.wagers.append([pid, SPLIT, cents])
                continue
            put(E_WAGER, seat, new.no, None, None, SPLIT, cents, None, pid)
            new.wagers.append([pid, SPLIT, cents])
        second = hand.cards.pop()
        hand.hard -= VALUE[second]
        if VALUE[second] == 1:
            hand.aces -= 1
        new.add(second)
        # box.hands is the layout from the dealer's left, played in that order (_play_box):
        # the new hand right beside the hand split, or after the box's hands
        if self.beside:
            box.hands.insert(box.hands.index(hand) + 1, new)
        else:
            box.hands.append(new)
        box.split = True
        hand.acted = False
        if aces:
            box.aces_split = True
            hand.split_aces = new.split_aces = True
        # the first hand gets its second card
        if fault and kind == "BJ205":
            self._force_next(lambda value: 2 <= value <= 3)
        elif fault and kind == "BJ206" and len(box.hands) < 5:
            self._force_next(lambda value, x=self.fdata["value"]: value == x)
        elif fault and kind == "BJ207":
            self._force_next(lambda value: 2 <= value <= 9)
        elif fault and kind == "BJ208" and len(box.hands) == 2:
            self._force_next(lambda value: value == 1)
        self._to_seat(box, hand)
        if fault and kind == "BJ205":
            later = new
            self._force_next(lambda value: value != 8)
            cseq = self._to_seat(box, later)
            self._truth(
                kind,
                cseq,
                f"box {seat} hand {later.no} got its card before hand {hand.no} was played out",
            )
        if aces:
            if fault and kind == "BJ208" and VALUE[hand.cards[1]] == 1 and len(box.hands) == 2:
                self._split(box, hand, up)
                return True
            if fault and kind == "BJ207" and hand.no == 1:
                seq = put(E_ACTION, seat, hand.no, action=A_HIT)
                self._truth(kind, seq, f"split ace on box {seat} hit after its one card")
                self._to_seat(box, hand)
            return True
        return False

    def _surrender(self, box: _Box, hand: _Hand, up: int) -> None:
        kind, put = self.kind, self._put
        seat = box.seat
        fault = kind is not None and box is self.target and not self.planted
        seq = put(E_ACTION, seat, hand.no, action=A_SURRENDER)
        if fault and kind == "BJ401":
            self._truth(kind, seq, f"box {seat} surrendered where the house allows no surrender")
        elif fault and kind == "BJ402":
            self._truth(
                kind, seq, f"box {seat} surrendered after a hit, on {len(hand.cards)} cards"
            )
        hand.surrendered = True
        if self._insured_surrender(box, hand, seq):
            return
        wrong = fault and kind in ("BJ403", "BJ404")
        for pid, bet, cents in hand.wagers:
            half = cents // 2
            if wrong and pid is None:
                how = "collect" if kind == "BJ404" else self.fdata["variant"]
                event = E_COLLECT if how == "collect" else E_PUSH
                rseq = put(event, seat, hand.no, None, None, bet, cents, None, pid)
                upname = {10: "a ten", 11: "an ace"}.get(up, f"a {up}")
                self._truth(
                    kind,
                    rseq,
                    f"surrender against {upname}: the whole "
                    f"{_dollars(cents)} {'collected' if how == 'collect' else 'returned'}",
                )
                continue
            put(E_COLLECT, seat, hand.no, None, None, bet, half, None, pid)
            put(E_PUSH, seat, hand.no, None, None, bet, cents - half, None, pid)

    # -- irregularities (i)(1), (i)(2), the hole card check (i)(5), (e)(2)

    def _remedy_due(self, remedy: str) -> bool:
        """Whether `remedy` is this round's right remedy, not planted yet (a round with a
        fault has none: `play_round`)."""
        return self.remedy_now == remedy and not self.remedied

    def _remedy_truth(self, seq: int | None, note: str) -> None:
        """A right remedy planted this round: a truth row with no rule."""
        self.sim.truth.append(
            _Truth(self.table_id, self.shoe_id, self.round_no, seq, self.remedy_now, None, note)
        )
        self.remedied = True

    def _expose(self) -> int:
        """The next card of the shoe drawn and exposed in error: a card_exposed row. It stays
        the next card (the next draw takes it) unless burned or drawn aside."""
        if self.pos >= len(self.shoe):
            raise IndexError("the shoe ran out")
        if self.pos == self.cover and not self.cover_out:
            self._cover()  # the cover card came out first
        self.exposed = self.pos
        return self._put(E_EXPOSED, card=self.shoe[self.pos])

    def _burn_exposed(self) -> int:
        """The exposed card, still the next card, burned."""
        card = self.shoe[self.pos]
        self.pos += 1
        self.seen[card] += 1
        self.exposed = None
        return self._put(E_BURN, card=card)

    def _burn_exposed_left(self) -> None:
        """At the end of play, the exposed card no one drew (refused by all, the dealer
        unable to use it) and the card drawn aside are burned."""
        if self.exposed is not None and self.pos <= self.exposed:
            self._burn_exposed()
        if self.aside is not None:
            self.seen[self.aside] += 1
            self._put(E_BURN, card=self.aside)
        self.exposed = self.aside = None

    def _expose_at(self, box: _Box, hand: _Hand) -> bool:
        """A card exposed as `hand` (not yet acted on) comes to play: the target box's (i)(1)
        fault or a right remedy. True where the hand refuses it and its play ends."""
        kind, remedy = self.kind, self.remedy_now
        if (kind is None and remedy is None) or hand.no != 1 or box.split or hand.acted:
            return False  # nearly every hand: no card is exposed
        put, seat = self._put, box.seat
        if kind in ("BJ801", "BJ802") and box is self.target and not self.planted:
            variant = self.fdata.get("variant")
            if kind == "BJ801" and variant == "burned":
                self._expose()
                seq = self._burn_exposed()
                self._truth(kind, seq, f"card exposed and burned while box {seat} took cards")
            elif kind == "BJ801" and variant == "not_next":
                self._expose()
                self.aside = aside = self.shoe[self.pos]
                self.pos += 1
                self.exposed = None
                self._force(self.pos, lambda value: True, self.pos + 1, avoid=aside)
                put(E_ACTION, seat, hand.no, action=A_HIT)
                seq = self._to_seat(box, hand)
                self._truth(kind, seq, f"box {seat} dealt another card than the one exposed")
                hand.acted = True
            elif kind == "BJ802":
                self._expose()
                put(E_ACTION, seat, hand.no, action=A_REFUSE)
                put(E_ACTION, seat, hand.no, action=A_HIT)
                seq = self._to_seat(box, hand)
                self._truth(kind, seq, f"box {seat} refused the exposed card, then hit")
                hand.acted = True
            return False
        if remedy in ("remedied_exposed_dealt_next", "remedied_exposed_refused") and not (
            self.remedied or kind
        ):
            seq = self._expose()
            if remedy == "remedied_exposed_dealt_next":
                self._remedy_truth(seq, f"card exposed at box {seat}'s turn, dealt as the next")
                return False
            put(E_ACTION, seat, hand.no, action=A_REFUSE)
            self._remedy_truth(seq, f"box {seat} refused the card exposed at its turn")
            return True
        return False

    def _double_refused(self, box: _Box, hand: _Hand) -> bool:
        """A right remedy: the card exposed after a double is refused, and the doubled hand
        keeps its two cards."""
        if not self._remedy_due("remedied_double_refused"):
            return False
        seq = self._expose()
        self._put(E_ACTION, box.seat, hand.no, action=A_REFUSE)
        self._remedy_truth(seq, f"box {box.seat} hand {hand.no} doubled and refused its card")
        return True

    def _deal_missed_dealer_card(self, boxes: list[_Box]) -> int:
        """(i)(2): the dealer missed the up card, and deals both cards after every box's
        second card (a right remedy), or (BJ803) deals the first right after box 1's
        second card. Returns the up card's value: the dealer's first card."""
        wrong = self.kind == "BJ803"
        if wrong and len(boxes) < 2:
            raise _Infeasible
        up = 0
        for i, box in enumerate(boxes):
            self._to_seat(box, box.hands[0])
            if wrong and i == 0:
                up = VALUE[self._to_dealer()]
                self._truth(
                    "BJ803", self.dealer_seq, "the missed dealer card dealt before box 2's card"
                )
        if not wrong:
            up = VALUE[self._to_dealer()]
            self._remedy_truth(self.dealer_seq, "the dealer's missed card dealt after the boxes'")
        self._to_dealer()
        return up

    def _hole_check_first(self, up: int) -> None:
        """The hole card checked right after the deal: with a 2-9 up (BJ806), before the
        insurance wagers (BJ807), or, a right remedy, with a ten up (with an ace up the
        remedy checks after the insurance wagers, `_insurance`)."""
        kind = self.kind
        if kind == "BJ806":
            seq = self._put(E_HOLE_CHECK)
            self._truth(kind, seq, f"hole card checked with a {up} up")
        elif kind == "BJ807":
            self._put(E_HOLE_CHECK)
        elif self.remedy_now == "remedied_insurance_before_check" and up == 10:
            seq = self._put(E_HOLE_CHECK)
            self._remedy_truth(seq, "hole card checked with a ten up")

    # -- the dealer

    def _dealer_plays(self, boxes: list[_Box]) -> None:
        kind = self.kind
        dealer = self.dealer
        self._late_card(third=False)
        live = any(
            not (h.bust or h.surrendered or h.natural or h.dead) for b in boxes for h in b.hands
        )
        fault = kind in ("BJ501", "BJ502") and not self.planted
        if not live and not (fault and kind == "BJ502"):
            return
        if kind == "BJ801" and self.fdata["variant"] == "dealer" and not self.planted:
            self._expose()
            seq = self._burn_exposed()
            self._truth(kind, seq, "card exposed and burned while the dealer had to draw on 16")
        first = True
        while True:
            total, soft = dealer.total()
            must = total < 17 or (total == 17 and soft and self.h17)
            if fault and kind == "BJ501" and not self.planted:
                variant = self.fdata["variant"]
                if variant == "stood" and must and total < 17:
                    self._truth(kind, self.dealer_seq, f"dealer stood on {total}")
                    return
                if variant == "drew" and not must and not soft:
                    self._to_dealer()
                    self._truth(kind, self.dealer_seq, f"dealer drew on hard {total}")
                    continue
                if variant == "soft17" and total == 17 and soft:
                    if self.h17:
                        self._truth(
                            kind,
                            self.dealer_seq,
                            "dealer stood on soft 17 at a table that hits soft 17",
                        )
                        return
                    self._to_dealer()
                    self._truth(
                        kind,
                        self.dealer_seq,
                        "dealer hit soft 17 at a table that stands on soft 17",
                    )
                    continue
            if not must:
                return
            self._to_dealer()
            if first:
                self._late_card(third=True)
            if first and fault and kind == "BJ502":
                self._truth(kind, self.dealer_seq, "dealer drew though the only hand was a natural")
            first = False

    # -- settlement

    def _outcomes(self, boxes: list[_Box]) -> list[list]:
        """Settlement rows: [event, seat, hand, bet, cents, pid, outcome, stake]."""
        dealer_total = self.dealer.total()[0]
        dealer_bust = dealer_total > 21
        num, den = self.bj
        limit = self.limit
        entries = []
        for box in boxes:
            for hand in box.hands:
                if hand.surrendered or hand.dead:  # a dead hand's: `_settle_dead`
                    continue
                total = hand.total()[0]
                if hand.bust:
                    outcome = "bust"
                elif hand.natural:
                    outcome = "natural"
                elif dealer_bust or total > dealer_total:
                    outcome = "win"
                elif total == dealer_total:
                    outcome = "push"
                else:
                    outcome = "lose"
                paid: dict[str | None, int] = {}
                for pid, bet, cents in hand.wagers:
                    if outcome in ("win", "natural"):
                        due = cents * num // den if outcome == "natural" else cents
                        pay = min(due, limit - paid.get(pid, 0))
                        paid[pid] = paid.get(pid, 0) + pay
                        entries.append([E_PAY, box.seat, hand.no, bet, pay, pid, outcome, cents])
                    elif outcome == "push":
                        entries.append([E_PUSH, box.seat, hand.no, bet, cents, pid, outcome, cents])
                    else:
                        entries.append(
                            [E_COLLECT, box.seat, hand.no, bet, cents, pid, outcome, cents]
                        )
                uncovered = self.fdata.get("uncovered")
                if uncovered and uncovered[1] is hand and box is self.target:
                    pid = uncovered[0]
                    cents = next(c for p, c in box.patrons if p == pid)
                    event = {"win": E_PAY, "natural": E_PAY, "push": E_PUSH}.get(outcome, E_COLLECT)
                    entries.append([event, box.seat, hand.no, SPLIT, cents, pid, "phantom", cents])
        return entries

    def _settle(self, entries: list[list], dealer_bust: bool) -> None:
        """Apply a planted settlement fault to the rows, then write them."""
        self._settle_dead()
        kind = self.kind
        notes: dict[int, str] = {}
        target = self.target
        if kind is not None and not self.planted and entries:
            seat = target.seat if target is not None else None
            mine = [i for i, e in enumerate(entries) if e[1] == seat and e[5] is None and e[2] == 1]
            if kind == "BJ602":
                for i, e in enumerate(entries):
                    if e[6] == "phantom":
                        notes[i] = f"co-patron {e[5]} settled on hand {e[2]} without a split wager"
            elif kind == "BJ701":
                self._even_money_fault(entries, notes)
            elif kind in ("BJ702", "BJ705"):
                for i in mine:
                    e = entries[i]
                    if e[6] != "natural":
                        continue
                    stake, right = e[7], e[4]
                    if kind == "BJ705":
                        full = stake * self.bj[0] // self.bj[1]
                        if full > right:
                            e[4] = full
                            notes[i] = (
                                f"natural paid {_dollars(full)} above the "
                                f"{_dollars(self.limit)} limit"
                            )
                    else:
                        if self.fdata["variant"] == "even":
                            odds = (1, 1)
                        else:
                            odds = (6, 5) if self.bj == (3, 2) else (3, 2)
                        e[4] = stake * odds[0] // odds[1]
                        notes[i] = (
                            f"natural paid {odds[0]}:{odds[1]}, {_dollars(e[4])} "
                            f"instead of {_dollars(right)}"
                        )
                    break
            elif kind == "BJ703":
                for i in mine:
                    e = entries[i]
                    if e[6] == "push":
                        how = self.fdata["variant"]
                        e[0] = E_COLLECT if how == "collect" else E_PAY
                        notes[i] = f"a push {'collected' if how == 'collect' else 'paid 1:1'}"
                        break
            elif kind == "BJ704":
                for i in mine:
                    e = entries[i]
                    if e[6] == "bust":
                        e[0] = E_PAY if dealer_bust else E_PUSH
                        notes[i] = "a busted hand " + (
                            "paid when the dealer busted" if dealer_bust else "returned"
                        )
                        break
            elif kind == "BJ706":
                if self.fdata["variant"] == "twice":
                    i = next((i for i, e in enumerate(entries) if e[0] == E_COLLECT), 0)
                    entries.insert(i + 1, list(entries[i]))
                    notes[i + 1] = "a wager settled a second time"
                else:
                    e = entries.pop(0)
                    self._truth(
                        kind,
                        None,
                        f"box {e[1]} hand {e[2]} {BETS[e[3]]} wager "
                        f"of {'co-patron ' + e[5] if e[5] else 'the seated player'} "
                        "never settled",
                    )
        put = self._put
        for i, e in enumerate(entries):
            seq = put(e[0], e[1], e[2], None, None, e[3], e[4], None, e[5])
            if i in notes:
                self._truth(kind, seq, notes[i])
        self._name_callers()

    def _even_money_fault(self, entries: list[list], notes: dict[int, str]) -> None:
        variants = ("short", "collected", "paid_loss")
        first = variants.index(self.fdata["variant"])
        for variant in variants[first:] + variants[:first]:
            for i, e in enumerate(entries):
                if variant in ("short", "collected") and (e[6] != "win" or e[4] != e[7]):
                    continue
                if variant == "paid_loss" and e[6] != "lose":
                    continue
                if variant == "short":
                    e[4] = e[7] - 500 if e[7] >= 1000 else e[7] + 500
                    notes[i] = f"a win of {_dollars(e[7])} paid {_dollars(e[4])}"
                elif variant == "collected":
                    e[0] = E_COLLECT
                    notes[i] = "a winning hand collected"
                else:
                    e[0] = E_PAY
                    notes[i] = "a losing hand paid 1:1"
                return

    # -- cards missed (i)(3), (i)(4); who calls the decisions (h)(2); insurance and
    # surrender settled apart (f)(2). Planted faults BJ804, BJ805, BJ808, BJ604, BJ405 and
    # their right remedies (MISSED_CARD_REMEDIES); every hook returns at once in a round
    # with neither.

    def _missed_cards_setup(self, kind: str | None, boxes: list[_Box]) -> list[_Box]:
        """After no_more_bets: this round's state, the box passed over in the deal ((i)(3):
        BJ804's target, or a remedy's last box), the cards the (f)(2) remedy needs. Returns
        the boxes to deal."""
        self.dead, self.late, self.apart_box, self.passed_over = [], None, None, None
        remedy = self.remedy_now if kind is None and not self.remedied else None
        if kind in ("BJ804", "BJ808") and len(boxes) < 2:
            raise _Infeasible  # a box stays to play (BJ804) or to act after the target
        over = None
        if kind == "BJ804":
            over = (boxes[0], "fault")
        elif remedy == "remedied_dead_hand_pushed" and len(boxes) >= 2:
            over = (boxes[-1], "push")
        elif remedy == "remedied_dead_hand_wagered_again" and len(boxes) >= 2:
            over = (boxes[-1], "again")
        if over is not None:
            box, how = over
            hand = _Hand(1)
            hand.wagers = [[pid, MAIN, cents] for pid, cents in box.patrons]
            box.hands = [hand]
            self.passed_over = (box, hand, how)
            boxes = [b for b in boxes if b is not box]
        if remedy == "remedied_insurance_and_surrender_apart" and self.surrender:
            n = len(boxes)
            floor = self.pos + 2 * n + 2
            wants = {0: 10, 1 + n: 6}  # the first box holds a ten and a six
            for offset, value in wants.items():
                if self.pos + offset >= len(self.shoe):
                    raise _Infeasible
                self._force(self.pos + offset, lambda x, v=value: x == v, floor)
            if self.pos + 2 * n + 1 >= len(self.shoe):
                raise _Infeasible
            self._force(self.pos + n, lambda x: x == 1, floor)  # the dealer's ace up
            self._force(self.pos + 2 * n + 1, lambda x: x != 10, floor)  # and no blackjack
            self.apart_box = boxes[0]
        self.round_boxes = boxes
        return boxes

    def _declare_passed_over(self) -> None:
        """After the deal: the box passed over is declared dead (i)(3)."""
        if self.passed_over is None:
            return
        box, hand, how = self.passed_over
        seq = self._put(E_DEAD, box.seat, 1)
        hand.dead = True
        self.dead.append((box, hand, how))
        if how == "again":
            self.again = (box.seat, [list(p) for p in box.patrons])
            self._remedy_truth(seq, f"box {box.seat} dealt no card: dead, wagered again next round")
        elif how == "push":
            self._remedy_truth(seq, f"box {box.seat} dealt no card: dead, its wagers pushed")

    def _wagered_again(self, kind: str | None, boxes: list[_Box]) -> list[_Box]:
        """The wagers of a box passed over last round placed again on its seat ((i)(3): the
        player is included in the next deal), in a round without a fault."""
        again, self.again = self.again, None
        if again is None or kind is not None:
            return boxes
        seat, patrons = again
        boxes = [b for b in boxes if b.seat != seat] + [_Box(seat, patrons)]
        return sorted(boxes, key=lambda b: b.seat)

    def _card_missed(self, box: _Box, hand: _Hand) -> bool:
        """A hit whose card the dealer fails to deal; the player calls the hand dead
        (i)(4)(ii): BJ805's target, or the remedy's first hit. True where so."""
        kind = self.kind
        fault = kind == "BJ805" and box is self.target and not self.planted
        remedy = self._remedy_due("remedied_dead_hand_by_choice")
        if not (fault or remedy) or box.split or hand.no != 1:
            return False
        seq = self._put(E_DEAD, box.seat, hand.no)
        hand.dead = True
        self.dead.append((box, hand, "fault" if fault else "push"))
        if remedy:
            self._remedy_truth(seq, f"box {box.seat}'s hit not dealt: called dead, pushed")
        return True

    def _card_late(self, box: _Box, hand: _Hand) -> bool:
        """A double whose card the dealer fails to deal while a later box still acts
        (i)(4)(i): dealt after the dealer's third card (BJ808's target) or, the remedy,
        before the dealer plays (`_late_card`). True where the card waits."""
        kind = self.kind
        fault = kind == "BJ808" and box is self.target and not self.planted
        remedy = self._remedy_due("remedied_late_card_in_time") and self.late is None
        if not (fault or remedy) or box.split or box not in self.round_boxes:
            return False
        later = self.round_boxes[self.round_boxes.index(box) + 1 :]
        if not any(not b.hands[0].natural for b in later):  # no later box acts
            return False
        self.late = (box, hand, fault)
        return True

    def _late_card(self, third: bool) -> None:
        """Deal the card that waits: before the dealer plays (the remedy), or after the
        dealer's third card (BJ808); where the dealer draws none, before it plays, unplanted."""
        if self.late is None:
            return
        box, hand, fault = self.late
        if fault and not third:
            total, soft = self.dealer.total()
            if total < 17 or (total == 17 and soft and self.h17):
                return  # the dealer draws: after its third card
        self.late = None
        seq = self._to_seat(box, hand)
        hand.bust = hand.total()[0] > 21
        if fault and third:
            self._truth(
                "BJ808", seq, f"box {box.seat}'s double card dealt after the dealer's third card"
            )
        elif not fault:
            self._remedy_truth(seq, f"box {box.seat}'s double card dealt late, before the dealer")

    def _settle_dead(self) -> None:
        """The wagers of the hands declared dead: each pushed, or left for the seat's next
        round; BJ804's and BJ805's target collects or pays the seated player's main wager."""
        dead, self.dead = self.dead, []
        for box, hand, how in dead:
            if how == "again":
                continue
            wrong = how == "fault" and not self.planted
            for pid, bet, cents in hand.wagers:
                event = E_PUSH
                if wrong and pid is None and bet == MAIN:
                    event = E_COLLECT if self.fdata["variant"] == "collect" else E_PAY
                seq = self._put(event, box.seat, hand.no, None, None, bet, cents, None, pid)
                if event != E_PUSH:
                    wrong = False
                    verb = "collected" if event == E_COLLECT else "paid"
                    self._truth(
                        self.kind, seq, f"box {box.seat}'s dead hand: its main wager {verb}"
                    )

    def _insured_surrender(self, box: _Box, hand: _Hand, seq: int) -> bool:
        """A surrender after an insurance wager: BJ405's target collects the insurance with
        the surrendered half, one collect (True: the settlement is written); the remedy's
        box settles each apart (the insurance at the check)."""
        kind = self.kind
        if box is self.apart_box and hand.no == 1 and not self.remedied:
            self._remedy_truth(seq, f"box {box.seat} insured and surrendered, settled apart")
            return False
        fault = kind == "BJ405" and box is self.target and not self.planted
        if not fault or "insured" not in self.fdata or hand.no != 1:
            return False
        insured, put = self.fdata["insured"], self._put
        for pid, bet, cents in hand.wagers:
            half = cents // 2
            if pid is None and bet == MAIN:
                rseq = put(E_COLLECT, box.seat, 1, None, None, bet, half + insured, None, pid)
                self._truth(
                    kind,
                    rseq,
                    f"insurance of {_dollars(insured)} collected with the surrendered half",
                )
            else:
                put(E_COLLECT, box.seat, 1, None, None, bet, half, None, pid)
            put(E_PUSH, box.seat, 1, None, None, bet, cents - half, None, pid)
        return True

    def _name_callers(self) -> None:
        """At the round's end, who called the decisions (h)(2), as `player_id` on the
        actions of one box several patrons wager on: BJ604's target (a co-patron at a seated
        player's box, or with no player seated a smaller wager's patron), or the remedy (no
        player seated: the seated player's rows carry an id, and so do the actions, as the
        highest wager)."""
        kind = self.kind
        fault = kind == "BJ604" and not self.planted
        remedy = self._remedy_due("remedied_decisions_by_highest_wager")
        if not (fault or remedy):
            return
        c = self.cols
        start = len(c[0]) - 1
        while start > 0 and c[0][start] != E_START:
            start -= 1
        if fault:
            boxes = [self.target]
        else:
            boxes = [
                b for b in self.round_boxes
                if len(b.patrons) >= 2 and b.patrons[0][1] >= max(p[1] for p in b.patrons[1:])
            ]
        for box in boxes:
            rows = [i for i in range(start, len(c[0])) if c[1][i] == box.seat]
            actions = [i for i in rows if c[0][i] == E_ACTION]
            if len(box.patrons) < 2 or not actions:
                continue
            first_seq = self.base + actions[0] + 1
            co_patron = box.patrons[1][0]
            if fault and self.fdata["variant"] == "seated":
                c[8][actions[0]] = co_patron
                self._truth(kind, first_seq, f"co-patron {co_patron} called box {box.seat}'s play")
                return
            standing = f"S{self.index}{box.seat}{self.round_no}"  # the player, not seated
            for i in rows:
                if c[8][i] is None and c[0][i] in (E_WAGER, E_COLLECT, E_PAY, E_PUSH):
                    c[8][i] = standing
            caller = co_patron if fault else standing
            for i in actions:
                c[8][i] = caller
            if fault:
                self._truth(
                    kind, first_seq, f"no one seated at box {box.seat}: {co_patron}'s smaller "
                    "wager called the play",
                )
            else:
                self._remedy_truth(first_seq, f"no one seated at box {box.seat}: the highest "
                                   "wager called the play")
            return


# --- the whole simulation -------------------------------------------------------

AMOUNT_DTYPE = pl.Decimal(12, 2)


class _Simulator(TableRounds):
    def __init__(
        self,
        rounds: int,
        tables: int,
        seed: int,
        faults: float,
        start: datetime,
        beside: bool = False,
        co_patrons: bool = True,
        order_faults: Iterable[str] = (),
    ):
        self.rng = random.Random(seed)
        self.order = OrderPlants(order_faults, seed)
        self.co_patrons = co_patrons
        on: date = start.date()
        self.params = load_rulesets().params("blackjack", on=on)
        self.beside = beside  # a re-split hand laid beside the hand it came from
        # without co-patrons, neither the faults nor the remedy that need one
        self.planner = _Planner(faults, rounds, tables, None if co_patrons else tuple(
            k for k in FAULT_KINDS if k not in _CO_PATRON_KINDS))
        self.remedies = _Remedies(faults, REMEDY_KINDS if co_patrons else tuple(
            k for k in REMEDY_KINDS if k not in _CO_PATRON_REMEDIES))
        self.truth: list[_Truth] = []
        TableRounds.__init__(self)
        self.charts = {h17: _charts(h17) for h17 in (False, True)}
        self.settings = [table_settings(i) for i in range(tables)]
        base, extra = divmod(rounds, tables)
        self.tables = [
            _Table(self, i, s, base + (1 if i < extra else 0)) for i, s in enumerate(self.settings)
        ]

    def min_decks(self, settings: dict[str, Any]) -> int:
        """Fewest decks (b)(1) allows the table (the rule BJ102 judges by)."""
        return deck_minimum(settings, self.params)[0]

    def events(self, start: datetime) -> pl.DataFrame:
        naive = start.replace(tzinfo=None)
        # the offset is literal text in the format: one string column, not two
        fmt = "%Y-%m-%dT%H:%M:%S" + offset_text(start)
        parts = []
        for index, table in enumerate(self.tables):
            if not table.frames:
                continue
            frame = pl.concat(table.frames, rechunk=False)
            table.frames = []
            parts.append(
                frame.with_columns(
                    pl.lit(index, pl.UInt32).alias("_table"),
                    pl.int_range(1, frame.height + 1, dtype=pl.Int64).alias("seq"),
                    (pl.col("_t").cast(pl.Int64).cum_sum() + table.start_clock).alias("_t"),
                )
            )
        if not parts:
            return _empty_events()
        # sort the compact columns, drop the parts, and only then build the text columns
        frame = pl.concat(parts, rechunk=False).sort("_t", "_table", "seq")
        del parts
        ids = pl.Enum([t.table_id for t in self.tables])
        table_id = pl.col("_table").cat.to(ids).cast(pl.String)
        ts = (pl.lit(naive) + pl.duration(seconds=pl.col("_t"))).dt.strftime(fmt)
        shoe_id = pl.format("{}-{}", table_id, pl.col("_shoe").cast(pl.String).str.zfill(4))
        amount = (pl.col("amount_cents").cast(AMOUNT_DTYPE) / 100).cast(AMOUNT_DTYPE)
        columns = {
            "table_id": table_id,
            "game": pl.lit("blackjack", pl.Enum(v.GAMES)),
            "shoe_id": shoe_id,
            "round": pl.col("round").cast(pl.Int64),
            "seq": pl.col("seq"),
            "ts": ts,
            "event": pl.col("event"),
            "seat": pl.col("seat").cast(pl.Int64),
            "hand": pl.col("hand").cast(pl.Int64),
            "target": pl.col("target"),
            "card": pl.col("card"),
            "bet": pl.col("bet"),
            "amount": amount,
            "action": pl.col("action"),
            "player_id": pl.col("player_id"),
            "accepted": pl.lit(None, pl.Boolean),
            "mode": pl.lit(None, pl.String),
            "decks": pl.col("decks").cast(pl.Int64),
            "winner": pl.lit(None, pl.String),
            "player_points": pl.lit(None, pl.Int64),
            "banker_points": pl.lit(None, pl.Int64),
            "reason": pl.lit(None, pl.String),
            "dealer_id": dealer_on(
                "D-2", len(self.tables), pl.col("_table"), pl.col("_t"), pl.col("event")
            ),
            # every blackjack card exposed is "exposed" (5324.10(i)(1))
            "exposure": pl.when(pl.col("event") == "card_exposed")
            .then(pl.lit("exposed"))
            .otherwise(pl.lit(None, pl.String)),
            "disclosed": pl.lit(None, pl.Boolean),
        }
        return frame.select(expr.alias(name) for name, expr in columns.items())

    def truth_frame(self) -> pl.DataFrame:
        return truth_frame(self.truth)


def _empty_events() -> pl.DataFrame:
    schema: dict[str, Any] = {}
    for column in v.COLUMNS:
        if column in v.INTEGER_COLUMNS:
            schema[column] = pl.Int64
        elif column in v.BOOLEAN_COLUMNS:
            schema[column] = pl.Boolean
        elif column == "amount":
            schema[column] = AMOUNT_DTYPE
        else:
            schema[column] = pl.String
    return pl.DataFrame(schema=schema)


def simulate(
    rounds: int,
    tables: int = 4,
    seed: int = 0,
    faults: float = 0.0,
    start: datetime = DEFAULT_START,
    resplit_hand_placement: str | None = None,
    co_patrons: bool = True,
    order_faults: Iterable[str] = (),
) -> Simulation:
    """Simulate `rounds` rounds of blackjack over `tables` tables (see the module docstring).

    `faults` is the share of rounds that get a planted fault (0 gives a clean
    log); `start` is when the first table opens (its UTC offset is written on
    every timestamp; a naive datetime writes local time without one).
    `resplit_hand_placement` ("beside" or "end", default unset) is where every table
    lays a re-split hand, written to `Simulation.house`; unset, re-splits are laid at
    the end (hand-number order) and the house rules leave the key out.
    `Simulation.house` is the [blackjack] section the tables override.
    `co_patrons=False` deals one patron a box, as a simulator does (no co-patron, and none
    of the faults or remedies that need one: BJ601-BJ604).
    `order_faults`: shuffles that did not happen to plant besides, of
    common.ORDER_FAULTS (`shoe_reused`, `decks_unshuffled`; ORDER_KINDS names their
    rules), in turn in about 3 shoes in 10 after each table's first; none unless asked.
    """
    if rounds < 0:
        raise ValueError("rounds must be 0 or more")
    if tables < 1:
        raise ValueError("tables must be 1 or more")
    if not 0.0 <= faults <= 1.0:
        raise ValueError("faults must be a share from 0 to 1")
    if resplit_hand_placement not in (None, *RESPLIT_PLACEMENTS):
        raise ValueError("resplit_hand_placement must be one of " + ", ".join(RESPLIT_PLACEMENTS))
    beside = resplit_hand_placement == "beside"
    sim = _Simulator(rounds, tables, seed, faults, start, beside, co_patrons, order_faults)
    sim.run()
    house = dict(BLACKJACK_DEFAULTS)
    if resplit_hand_placement is not None:
        house["resplit_hand_placement"] = resplit_hand_placement
    return Simulation(
        events=sim.events(start),
        tables=[dict(s) for s in sim.settings],
        truth=sim.truth_frame(),
        seed=seed,
        start=start,
        house=house,
    )
