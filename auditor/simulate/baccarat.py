"""A baccarat table simulator: realistic hand histories that obey 9 NYCRR 5324.20,
and the same logs with planted faults, each listed in a truth file.

`simulate(rounds, tables, seed, faults)` deals `rounds` rounds over `tables`
tables (BAC-01 big standard in PIT-1, BAC-02 midi EZ in PIT-1, BAC-03 mini
standard in PIT-2, BAC-04 big EZ in PIT-2, then again from the top) and returns
the events in the hand-history-v1 columns, the table settings for a house
rules file, and the truth of every planted fault. Everything comes from one
`random.Random(seed)`, so a seed always gives the same log.

A clean log (``faults=0``) follows the regulation and the house rules
exactly: 8-deck shoes, the burn of (e), the shoe offered and passed on big
tables ((f)(1), (h)), the first four cards P,B,P,B (f)(5), third cards by the
tableau (f)(8)-(13) (decided by the ruleset's parameters, replayed as plain
Python here), settlement with losing wagers collected first and winners paid
by the pit's procedure (g)(2), 5% commission on non-EZ tables (d)(2), marked
commission settled within the shoe, and the cover card (f)(9) followed by
exactly one last hand. A `void` never happens.

Faults: `faults` is the share of rounds that get one planted fault. The fault
kinds are queued in the order below, over and over (``faults * rounds`` in
all), and each is planted at the next round (or shoe) where it can be; when
several queued kinds fit, the one planted least often so far goes first, so a
small run (400 rounds over 4 tables at ``faults=0.1``) holds every kind. A
fault breaks only the rule it names: the rest of its round stays consistent
(a wrong draw keeps the payouts right for the cards dealt). Kinds that need a
rare deal (a dragon 7, a panda 8) rearrange the cards not yet dealt so that
the round holds one, which is just another order of the same shoe.

====== ============================ ================================================================
rule   fault                        what is planted (truth `seq`: the row showing it)
====== ============================ ================================================================
BA101  five_deck_shoe               a shoe of 5 decks (`shuffle` decks=5), cards within 5 decks
                                    (seq: the shuffle; round 0)
BA102  card_over_decks              a dealt card recorded as a rank+suit whose 8 copies already
                                    came out of the shoe: a 9th copy, same point value (seq: card)
BA103  points_misdeclared           `player_points` or `banker_points` declared wrong, the winner
                                    right (seq: result)
BA104  burn_count                   one burn card too many or too few after the face-up card
                                    (seq: the face-up burn; round 0)
BA105  rounds_after_cover           zero or two rounds after the cover card round instead of one
                                    (two: seq the second extra round_start; zero: seq null)
BA106  void_wager_not_returned      the cover card placed so deep that the last hand runs out of
                                    cards: a `void` round ("insufficient cards") with one wager
                                    collected instead of returned (seq: the collect)
BA201  first_four_order             first four cards not P,B,P,B; hands and draws follow the
                                    targets recorded (seq: first card out of order)
BA202  banker_third_first           both hands draw and the banker's third card comes first; the
                                    banker's draw is right for the player's third (seq: banker card)
BA203  draw_after_natural           a natural, then a third card to the player; the banker's stand
                                    agrees with (f)(13) (seq: the third card)
BA204  player_draw                  the player draws on 6-7 or stands on 0-5; the banker's decision
                                    is the same by (f)(12) or (f)(13) (seq: the card, or null)
BA205  banker_draw_player_stood     the player stood and the banker broke (f)(12) (seq: the
                                    banker's third card, or null when it wrongly stood)
BA206  banker_draw_player_third     the player drew and the banker broke (f)(13) (seq as BA205)
BA301  winner_misdeclared           `winner` declared wrong, points right; settled by the cards
                                    (seq: result)
BA401  wager_after_no_more_bets     a wager row moved after `no_more_bets` (seq: that wager)
BA402  wager_not_5_step             a player or tie wager of, e.g., $27; settled at that amount
                                    (seq: the wager)
BA403  ez_wager_on_standard         a dragon7 or panda8 wager on a standard table, settled as at
                                    EZ (seq: the wager)
BA404  wager_settled_twice_or_never a losing wager collected twice (seq: the second collect) or
                                    never (seq: null)
BA501  player_paid_wrong            a winning player wager paid 0.95:1 or $5 off (seq: the pay)
BA502  banker_paid_wrong            a winning banker wager (non-EZ) paid 0.95:1 or $5 off, the
                                    commission right for the 1:1 win (seq: the pay)
BA503  tie_paid_wrong               a tie wager paid 7:1 or 9:1 (seq: the pay)
BA504  tie_not_pushed               a banker or player wager collected on a tie (seq: the collect)
BA505  dragon7_banker_not_pushed    EZ: a banker wager paid or collected on a dragon 7 (seq: row)
BA506  dragon7_insurance_paid_wrong EZ: dragon 7 insurance paid 30, 35 or 45 to 1 (seq: the pay)
BA507  panda8_paid_wrong            EZ: panda 8 paid 20, 24 or 30 to 1 (seq: the pay)
BA508  dragon_bonus_paid_wrong      a winning dragon bonus paid one step off pay table A (seq: pay)
BA601  commission_wrong             commission $0.25-$1 off, or no `vig` row at all (seq: the vig,
                                    or null)
BA602  commission_on_ez             EZ: a 5% `vig` on a winning banker wager (seq: the vig)
BA603  marked_commission_unsettled  a `marked` vig never settled before the next shuffle (seq: vig)
BA604  commission_rate_4_percent    a big standard table takes 4% for a whole shoe, every vig of
                                    it (seq: the shoe's first vig)
BA701  pay_before_collect           the first pay/vig of the procedure moved before the last
                                    collect (seq: the moved row)
BA702  settlement_order             winners settled by another procedure, or from the lowest seat
                                    up (seq: the first row out of place)
BA801  first_offer_wrong_seat       the shoe's first offer made to a later occupied seat
                                    (seq: that offer; round 0)
BA802  curator_kept_after_loss      the curator deals on after the banker hand lost: no offer
                                    (round: the round dealt; seq null)
BA803  offer_after_pass_wrong_seat  after a pass, the first offer not at the next occupied seat
                                    (seq: that offer)
BA804  offer_skipped_seat           an offer sequence skips an occupied seat (seq: the offer after
                                    the skip)
BA901  face_up_card_misused         a card found face up in the shoe before a round, in turn: not
                                    disclosed and dealt as the round's first card; disclosed, set
                                    aside with no discard and the round wagered (seq: the round's
                                    first card); disclosed, a discard of a wrong count (seq: its
                                    first burn)
BA902  excess_card_misused          a card drawn in excess before a round, in turn: not disclosed
                                    and burned (seq: the round's first card); disclosed, a discard
                                    of a wrong count (seq: its first burn)
BA903  misdealt_card_misused        a third card dealt to a standing player's hand: where the banker
                                    draws, burned and the next card the banker's (seq: the banker's
                                    third card); where it stays, not disclosed and burned (seq: the
                                    next round's first card), or disclosed, a wrong discard (seq:
                                    its first burn)
BA904  round_beyond_shoe            the last rounds' cards of a shoe reordered (the same cards) so
                                    that the last hand takes the shoe's last card, and it is
                                    settled, not void (seq: that card)
====== ============================ ================================================================

Right remedies of the irregularities (i) are planted too, only where ``faults > 0`` (a
clean log is the same as without them): each kind once as soon as it fits, then about once
every ``20 / faults`` rounds (a void round five times as seldom), in rounds without a fault,
and the round after a card astray takes no plant either. Each has a truth row with a null
`rule_id`, `fault` the remedy, `round` the round where no rule may find anything, and `seq`
its `card_exposed` row (the void row): ``remedied_face_up_in_shoe`` (in turn: not disclosed
and burned; disclosed and discarded, the card and its value in burns or the card, the next
one and that one's value; disclosed, then a complete hand no one wagers on, the card dealt in
it but not first), ``remedied_excess_card`` (not disclosed, the next round's first card;
disclosed and discarded), ``remedied_misdealt_card`` (the banker's third card where the
banker draws; else not disclosed, the next round's first card, or disclosed, the card and
its value in burns, a 10-value card counting 10 or 0), ``remedied_insufficient_cards`` (a
shoe whose last hand runs out of cards: void, every wager pushed, then the shuffle). Cards
astray are planted from round 2 on, far from the cover card, never in a shoe planned by card
count (BA106, BA904, a void round).

``faults * rounds`` kinds are queued; a kind whose chance is rare (one a
shoe start or a table) may not find room for all its copies in a long run,
so a run can hold somewhat fewer faults than queued. At most one BA603 is
planted a shoe. Omissions (a draw not made, a vig or settlement missing,
no offer, no last hand) have a null `seq`. A shoe whose last hand runs out of cards (BA106,
a right (i)(4)) or takes the very last card (BA904) has its last rounds' cards reordered
where the clean deal would not end so.

Judgement calls: the previous curator is not offered the shoe again in the
sequence that follows his pass; when everyone declines at a shoe's start the
next round starts again from seat 1; a cover card that comes out exactly
between two rounds is written before the next round_start in half the cases
(carrying that round's number, which then counts as the round it came out
in); pushes come right after the collects; `vig_settle` rows come after the
round's own settlement; the cover card lies 14-20 cards from the end (3-10 in
a BA106 shoe, so that the last hand genuinely runs out); timestamps keep the
start's UTC offset throughout.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

import polars as pl

from ..house import BACCARAT_DEFAULTS
from ..ingest import vocabulary as v
from ..rulesets import load_rulesets
from .common import OrderPlants, TableRounds, dealer_on, offset_text, truth_frame

__all__ = [
    "DEFAULT_START",
    "FAULT_KINDS",
    "PROCEDURES",
    "REMEDY_KINDS",
    "Simulation",
    "simulate",
    "table_settings",
]

DEFAULT_START = datetime(2026, 11, 1, 20, 0, 0, tzinfo=timezone(timedelta(hours=-5)))

# (variant, ez, pit) of BAC-01, BAC-02, ... in turn.
TABLE_CYCLE = (
    ("big", False, "PIT-1"),
    ("midi", True, "PIT-1"),
    ("mini", False, "PIT-2"),
    ("big", True, "PIT-2"),
)
PROCEDURES = {"PIT-1": "ii", "PIT-2": "iii"}
COMMISSION_PERCENT = 5
FAULT_COMMISSION_PERCENT = 4  # BA604
TIE_PAYS = 8
DRAGON_TABLE = "A"
DRAGON7_PAYS = 40
SEATS = tuple(BACCARAT_DEFAULTS["seats"])  # counter-clockwise order
SEATS_BY_VARIANT = {"big": SEATS, "midi": SEATS[:9], "mini": SEATS[:7]}
DECKS = 8
FAULT_DECKS = 5  # BA101

# rule id -> fault name, in the order they are queued.
FAULT_KINDS: dict[str, str] = {
    "BA101": "five_deck_shoe",
    "BA102": "card_over_decks",
    "BA103": "points_misdeclared",
    "BA104": "burn_count",
    "BA105": "rounds_after_cover",
    "BA106": "void_wager_not_returned",
    "BA201": "first_four_order",
    "BA202": "banker_third_first",
    "BA203": "draw_after_natural",
    "BA204": "player_draw",
    "BA205": "banker_draw_player_stood",
    "BA206": "banker_draw_player_third",
    "BA301": "winner_misdeclared",
    "BA401": "wager_after_no_more_bets",
    "BA402": "wager_not_5_step",
    "BA403": "ez_wager_on_standard",
    "BA404": "wager_settled_twice_or_never",
    "BA501": "player_paid_wrong",
    "BA502": "banker_paid_wrong",
    "BA503": "tie_paid_wrong",
    "BA504": "tie_not_pushed",
    "BA505": "dragon7_banker_not_pushed",
    "BA506": "dragon7_insurance_paid_wrong",
    "BA507": "panda8_paid_wrong",
    "BA508": "dragon_bonus_paid_wrong",
    "BA601": "commission_wrong",
    "BA602": "commission_on_ez",
    "BA603": "marked_commission_unsettled",
    "BA604": "commission_rate_4_percent",
    "BA701": "pay_before_collect",
    "BA702": "settlement_order",
    "BA801": "first_offer_wrong_seat",
    "BA802": "curator_kept_after_loss",
    "BA803": "offer_after_pass_wrong_seat",
    "BA804": "offer_skipped_seat",
    "BA901": "face_up_card_misused",
    "BA902": "excess_card_misused",
    "BA903": "misdealt_card_misused",
    "BA904": "round_beyond_shoe",
}
_ORDER = {kind: i for i, kind in enumerate(FAULT_KINDS)}
# Shuffles that did not happen, planted only on request (simulate's `order_faults`;
# common.OrderPlants): not queued with the kinds above, so the logs without them are as before
ORDER_KINDS = {"shoe_reused": "BA108", "decks_unshuffled": "BA109"}

SHOE_START_KINDS = ("BA101", "BA104", "BA106", "BA604", "BA904")
# The right remedies of the irregularities (i)(1)-(4), planted only in logs with faults, in
# rounds without one: truth rows with no rule id, in whose rounds no rule finds anything
REMEDY_KINDS = (
    "remedied_face_up_in_shoe",
    "remedied_excess_card",
    "remedied_misdealt_card",
    "remedied_insufficient_cards",
)
# Shoe-start kinds that need a whole shoe dealt within the log: they go first
_WHOLE_SHOE_KINDS = ("BA106", "BA904")
# Kinds whose chance comes seldom (a shoe's start or end, a shoe's first offer,
# a late round): planted whenever they fit, not spread out over the run.
OPPORTUNISTIC = frozenset({*SHOE_START_KINDS, "BA105", "BA603", "BA801"})
# How far ahead of the even pace a kind may be planted: one never planted yet
# (so that a short run holds every kind), one that needs a tie or a late shoe.
_FIRST_SLACK = 4
_RARE_SLACK = {"BA503": 2, "BA504": 2, "BA102": 2}
# Fewer tables can take these: among equally planted kinds they go first.
_SCARCITY = {
    "BA604": 0,
    "BA505": 1,
    "BA506": 1,
    "BA507": 1,
    "BA602": 1,
    "BA801": 2,
    "BA802": 2,
    "BA803": 2,
    "BA804": 2,
    "BA106": 3,
    "BA904": 3,
    "BA105": 3,
    "BA603": 3,
}
# Faults that change how many cards a round uses (not planted in a shoe whose
# void round is planned by card count, BA106).
_CARD_COUNT_KINDS = frozenset({"BA201", "BA202", "BA203", "BA204", "BA205", "BA206"})
_VIG_KINDS = frozenset({"BA601", "BA603"})

RANKS = v.RANKS
CODES = v.CARDS  # card index -> code
BET_ORDER = ("banker", "player", "tie", "dragon_banker", "dragon_player", "dragon7", "panda8")
MAIN_DOLLARS = (
    25,
    25,
    25,
    50,
    50,
    75,
    100,
    100,
    100,
    150,
    200,
    250,
    300,
    500,
    500,
    1000,
    2000,
    5000,
)
SIDE_DOLLARS = (5, 5, 10, 10, 15, 20, 25, 25, 50, 100)

# Seconds each event takes on the table clock.
STEP = {
    "shuffle": 0,
    "burn": 2,
    "shoe_offer": 4,
    "cover_card": 1,
    "round_start": 2,
    "wager": 2,
    "no_more_bets": 3,
    "card": 2,
    "result": 2,
    "collect": 2,
    "pay": 2,
    "push": 1,
    "vig": 2,
    "vig_settle": 3,
    "void": 2,
    "round_end": 1,
    "card_exposed": 3,
}

# A row is a list of the event's fields, in this order.
E, SEAT, TARGET, CARD, BET, AMOUNT, ACCEPTED, MODE, DECKS_, WINNER, PP, BP, REASON = range(13)
EXPOSURE, DISCLOSED = 13, 14
_FIELDS = (
    "event",
    "seat",
    "target",
    "card",
    "bet",
    "amount",
    "accepted",
    "mode",
    "decks",
    "winner",
    "player_points",
    "banker_points",
    "reason",
    "exposure",
    "disclosed",
)


_FIELD_INDEX = {name: i for i, name in enumerate(_FIELDS)}


def _row(event: str, **fields: Any) -> list:
    row = [event, None, None, None, None, None, None, None, None, None, None, None, None, None,
           None]
    for name, value in fields.items():
        row[_FIELD_INDEX[name]] = value
    return row


def _money(event: str, seat: int, bet: str | None, cents: int) -> list:
    return [event, seat, None, None, bet, cents, None, None, None, None, None, None, None, None,
            None]


def _card(target: str, card: int) -> list:
    return ["card", None, target, CODES[card], None, None, None, None, None, None, None, None, None,
            None, None]


# --- the rules, from the ruleset ------------------------------------------------


class _Rules:
    """The regulation's numbers as plain Python, indexed by card (0..51)."""

    def __init__(self, params: dict[str, Any]):
        points = params["card_points"]
        burns = params["burn_values"]
        self.value = tuple(int(points[code[0]]) for code in CODES)
        self.burn = tuple(int(burns[code[0]]) for code in CODES)
        self.natural = frozenset(int(x) for x in params["natural_points"])
        self.player_draws = frozenset(int(x) for x in params["player_draws_on"])
        self.banker_stood = frozenset(int(x) for x in params["banker_draws_when_player_stands"])
        table = params["banker_draws_on_player_third"]
        self.banker_third = tuple(frozenset(int(c) for c in table[str(b)]) for b in range(10))
        pay = params["dragon_bonus_pay_tables"][DRAGON_TABLE]
        self.dragon_natural = int(pay["natural"])
        self.dragon_margin = {
            int(k.removeprefix("by_")): int(x) for k, x in pay.items() if k.startswith("by_")
        }
        self.panda8 = int(params["panda8_pays"])

    def dragon_odds(self, own: int, other: int, own_nat: bool, other_nat: bool) -> int:
        """Dragon bonus as the multiple won: k > 0 pays k:1, 0 pushes, -1 loses ((b)(1)(iv))."""
        if own_nat and other_nat and own == other:
            return 0
        if own_nat and (not other_nat or own > other):
            return self.dragon_natural
        if own_nat:
            return -1
        return self.dragon_margin.get(own - other, -1)


@dataclass(slots=True)
class _Deal:
    cards: list  # (target, card index) in dealing order
    p_two: int
    b_two: int
    pp: int
    bp: int
    p_count: int
    b_count: int
    p_nat: bool
    b_nat: bool
    winner: str
    dragon7: bool
    panda8: bool


def _deal(
    shoe: list[int],
    pos: int,
    rules: _Rules,
    first: str = "PBPB",
    p_force: bool | None = None,
    b_force: bool | None = None,
    banker_first: bool = False,
    out: list | None = None,
) -> _Deal:
    """Deal one coup from `shoe[pos:]`; raises IndexError when the shoe runs out.

    `first` is the targets of the first four cards; `p_force` / `b_force`
    override the tableau's decision for a hand; `banker_first` deals both
    third cards, the banker's first. `out` collects the cards as they come.
    """
    value = rules.value
    cards = [] if out is None else out
    player: list[int] = []
    banker: list[int] = []
    i = pos
    for target in first:
        card = shoe[i]
        i += 1
        if target == "P":
            player.append(card)
            cards.append(("player", card))
        else:
            banker.append(card)
            cards.append(("banker", card))
    p_two = (value[player[0]] + value[player[1]]) % 10
    b_two = (value[banker[0]] + value[banker[1]]) % 10
    p_nat = p_two in rules.natural
    b_nat = b_two in rules.natural
    natural = p_nat or b_nat
    if banker_first:
        b3 = shoe[i]
        cards.append(("banker", b3))
        p3 = shoe[i + 1]
        cards.append(("player", p3))
        banker.append(b3)
        player.append(p3)
    else:
        p_draws = (not natural and p_two in rules.player_draws) if p_force is None else p_force
        p3_value = None
        if p_draws:
            card = shoe[i]
            i += 1
            player.append(card)
            cards.append(("player", card))
            p3_value = value[card]
        if b_force is None:
            if natural:
                b_draws = False
            elif p3_value is None:
                b_draws = b_two in rules.banker_stood
            else:
                b_draws = p3_value in rules.banker_third[b_two]
        else:
            b_draws = b_force
        if b_draws:
            card = shoe[i]
            banker.append(card)
            cards.append(("banker", card))
    pp = sum(value[c] for c in player) % 10
    bp = sum(value[c] for c in banker) % 10
    winner = "player" if pp > bp else "banker" if bp > pp else "tie"
    return _Deal(
        cards,
        p_two,
        b_two,
        pp,
        bp,
        len(player),
        len(banker),
        p_nat,
        b_nat,
        winner,
        winner == "banker" and bp == 7 and len(banker) == 3,
        winner == "player" and pp == 8 and len(player) == 3,
    )


# --- faults: the planner ---------------------------------------------------------


@dataclass
class _Truth:
    table_id: str
    shoe_id: str
    round: int | None
    fault: str
    rule_id: str | None  # None: a right remedy (no rule may find anything in its round)
    note: str
    row: list | None = None  # the row carrying the fault, until its seq is known
    seq: int | None = None


class _Planner:
    """The queue of faults still to plant, and which of them a round may take now."""

    def __init__(self, faults: float, rounds: int):
        total = round(faults * rounds) if faults > 0 else 0
        kinds = list(FAULT_KINDS)
        self.left: Counter[str] = Counter(kinds[i % len(kinds)] for i in range(total))
        self.planted: Counter[str] = Counter()
        self.paced_total = sum(n for k, n in self.left.items() if k not in OPPORTUNISTIC)
        self.paced_done = 0
        self.rounds = max(rounds, 1)
        self.rounds_done = 0

    def _priority(self, kind: str) -> tuple[int, int, int]:
        return (self.planted[kind], _SCARCITY.get(kind, 9), _ORDER[kind])

    def candidates(self, kinds: Iterable[str] | None = None) -> list[str]:
        """Queued kinds a round may take now, the most wanted first."""
        if not self.left:
            return []
        due = self.paced_total * (self.rounds_done + 1) / self.rounds
        pool = self.left if kinds is None else [k for k in kinds if self.left[k]]
        chosen = [
            k
            for k in pool
            if self.left[k] and (k in OPPORTUNISTIC or self.paced_done < due + self._slack(k))
        ]
        return sorted(chosen, key=self._priority)

    def _slack(self, kind: str) -> int:
        # A kind not planted yet, or one whose chance is rare, may run ahead of the pace.
        return (_FIRST_SLACK if not self.planted[kind] else 0) + _RARE_SLACK.get(kind, 0)

    def take(self, kind: str) -> None:
        self.left[kind] -= 1
        if self.left[kind] <= 0:
            del self.left[kind]
        self.planted[kind] += 1
        if kind not in OPPORTUNISTIC:
            self.paced_done += 1

    def give_back(self, kind: str) -> None:
        self.left[kind] += 1
        self.planted[kind] -= 1
        if kind not in OPPORTUNISTIC:
            self.paced_done -= 1


class _Remedies:
    """The right remedies of (i) still to plant: none in a clean log; else each kind once
    as soon as it fits, then about once every `every` rounds (a void round, which takes a
    whole shoe, five times as seldom), in rounds without a fault."""

    def __init__(self, faults: float, planner: _Planner):
        self.every = max(40, round(20 / faults)) if faults > 0 else 0
        self.done: Counter[str] = Counter()
        self.planner = planner  # its rounds_done paces them

    def due(self, kind: str) -> bool:
        if not self.every:
            return False
        every = self.every * (5 if kind == "remedied_insufficient_cards" else 1)
        return self.done[kind] <= self.planner.rounds_done // every

    def planted(self, kind: str) -> None:
        self.done[kind] += 1


@dataclass
class _Plan:
    """How a round's planted fault changes it."""

    kind: str
    deal: dict = field(default_factory=dict)  # arguments to _deal
    need: dict = field(default_factory=dict)  # bet -> seats that must hold it
    seats: int = 2  # fewest occupied seats
    variant: str = ""
    sides: bool = True  # side wagers allowed (not after a draw that makes "natural" unclear)
    data: dict = field(default_factory=dict)


# --- one table ------------------------------------------------------------------


class _Table:
    """One table's state and its log, dealt round by round."""

    def __init__(self, sim: _Simulator, index: int, settings: dict[str, Any], budget: int):
        self.sim = sim
        self.rng = sim.rng
        self.rules = sim.rules
        self.index = index
        self.table_id: str = settings["table_id"]
        self.variant: str = settings["variant"]
        self.big = self.variant == "big"
        self.ez: bool = settings["ez"]
        self.procedure: str = settings["procedure"]
        self.layout = SEATS_BY_VARIANT[self.variant]
        self.budget = budget
        self.done = 0
        self.clock = index * 7 + self.rng.randint(0, 5)
        self.round_began = self.clock
        self.n = 0  # events written so far = the last seq
        self.rows: list[list] = []
        self.frames: list[pl.DataFrame] = []
        self.shoe_no = 0
        self.need_shuffle = True
        self.seated = self.rng.sample(self.layout, self.rng.randint(4, min(8, len(self.layout))))
        self.quiet = False  # the round before held a card astray: this one takes no plant
        self.astray_now = False  # a card astray may be planted in this round
        self.first_card_truth: _Truth | None = None  # a fault shown by the next first card

    # -- bookkeeping

    @property
    def shoe_id(self) -> str:
        return f"{self.table_id}-{self.shoe_no:04d}"

    def _truth(self, kind: str, round_no: int | None, note: str, row: list | None) -> _Truth:
        truth = _Truth(self.table_id, self.shoe_id, round_no, FAULT_KINDS[kind], kind, note, row)
        self.sim.truth.append(truth)
        return truth

    def _emit(self, rows: list[list], round_no: int, truths: Iterable[_Truth] = ()) -> None:
        """Append rows to the log on the table clock; give the truths their seq."""
        base = self.n
        clock = self.clock
        shoe = self.shoe_no
        out = self.rows
        for row in rows:
            clock += STEP[row[E]]
            row.append(clock)
            row.append(round_no)
            row.append(shoe)
            out.append(row)
        self.clock = clock
        self.n += len(rows)
        for truth in truths:
            if truth.row is not None and truth.seq is None:
                for k, row in enumerate(rows):
                    if row is truth.row:
                        truth.seq = base + k + 1
                        break
        if len(out) >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.frames.append(pl.DataFrame(self.rows, schema=_CHUNK_SCHEMA, orient="row"))
            self.rows = []

    # -- shoes

    def _new_shoe(self) -> None:
        rng = self.rng
        if self.shoe_no:
            self.clock += rng.randint(150, 300)  # the shuffle takes a while
        self.shoe_no += 1
        self.need_shuffle = False
        self.round_no = 0
        self.cover_out = False
        self.last_round: int | None = None
        self.void_round: int | None = None
        self.void_remedy = False  # the void round returns every wager: a right (i)(4)
        self.exhaust_round: int | None = None  # BA904: the round that takes the last card
        self.pct = COMMISSION_PERCENT
        self.pct_truth: _Truth | None = None
        self.extra_truth: _Truth | None = None  # BA105 with two rounds after the cover round
        self.card_faults_ok = True
        self.vig_faults_ok = True
        self.unsettled_fault = False  # BA603 planted in this shoe (one a shoe)
        self.unmarked_seats: set[int] = set()  # seats whose commission is not marked again
        self.owed: dict[int, int] = {}
        self.curator: int | None = None
        self.prev_curator: int | None = None
        self.need_offer = self.big
        self.pending_pass: str | None = None
        self.first_offers = self.big

        shoe = [c for c in range(52) for _ in range(DECKS)]
        rng.shuffle(shoe)
        self.decks = DECKS
        kind = None
        ending = self._void_remedy(shoe)  # (cover, last round, the shoe) of a planned end
        void_remedy = ending is not None
        for candidate in [] if void_remedy else self.sim.planner.candidates(SHOE_START_KINDS):
            if candidate == "BA604" and not (self.big and not self.ez):
                continue
            if candidate in _WHOLE_SHOE_KINDS:
                ending = self._planned_end(shoe, exact=candidate == "BA904")
                if ending is None:
                    continue
            kind = candidate
            break
        if ending is not None:
            shoe = ending[2]
        order_kind, order_note = None, ""
        if kind is None and ending is None:
            shoe, order_kind, order_note = self.sim.order.plant(shoe, self.table_id)
        burn_delta = 0
        if kind == "BA101":
            self.decks = FAULT_DECKS
            shoe = [c for c in range(52) for _ in range(FAULT_DECKS)]
            rng.shuffle(shoe)
        elif kind == "BA104":
            burn_delta = rng.choice((-1, 1)) if self.rules.burn[shoe[0]] > 1 else 1
        self.shoe = shoe
        self.seen = [0] * 52

        rows = [_row("shuffle", decks=self.decks)]
        face_up = shoe[0]
        burns = self.rules.burn[face_up] + burn_delta
        for card in shoe[: 1 + burns]:
            rows.append(_row("burn", card=CODES[card]))
            self.seen[card] += 1
        self.pos = 1 + burns
        self.cover = len(shoe) - rng.randint(14, 20)
        truths = []
        if kind is not None:
            self.sim.planner.take(kind)
        if kind == "BA101":
            truths.append(self._truth(kind, 0, f"shoe of {FAULT_DECKS} decks", rows[0]))
        elif kind == "BA104":
            note = (
                f"face-up {CODES[face_up]} calls for {self.rules.burn[face_up]} more burns, "
                f"{burns} burned"
            )
            truths.append(self._truth(kind, 0, note, rows[1]))
        elif kind == "BA604":
            self.pct = FAULT_COMMISSION_PERCENT
            self.vig_faults_ok = False
            self.pct_truth = _Truth(
                self.table_id,
                self.shoe_id,
                None,
                FAULT_KINDS[kind],
                kind,
                f"every commission of the shoe at {self.pct}% where the "
                f"facility takes {COMMISSION_PERCENT}%",
            )
        elif kind == "BA106" or void_remedy:
            self.cover, self.void_round, _ = ending
            self.card_faults_ok = False
            self.void_remedy = void_remedy
        elif kind == "BA904":
            self.cover, self.exhaust_round, _ = ending
            self.card_faults_ok = False
        if order_kind is not None:
            rule = ORDER_KINDS[order_kind]
            self.sim.truth.append(_Truth(self.table_id, self.shoe_id, None, order_kind, rule,
                                         order_note))
        self.round_began = self.clock
        self._emit(rows, 0, truths)
        self.clock += 10

    def _planned_end(self, shoe: list[int], exact: bool) -> tuple[int, int, list[int]] | None:
        """The end of a shoe planned by card count: (cover position, round, the shoe).

        The deal is fixed by the card order, so a clean shoe's rounds are known in
        advance. `exact` (BA904): the last complete round takes the shoe's very last card,
        so that (i)(4) voids it, and the round is that one; else (BA106, a right (i)(4)): the
        round after the last complete one runs out of cards. Where the shoe does not end so,
        its last rounds' cards are put in another order (the same cards) until it does. The
        cover card goes into the round before, so that the round is the last hand, and no
        fault that changes a round's card count is planted in that shoe.
        """
        starts = self._starts(shoe)
        if len(starts) < 4:
            return None
        ends_exactly = self._ends_exactly(shoe, starts)
        if ends_exactly != exact:
            at = starts[-2]
            tail = shoe[at:]
            for _ in range(300):
                self.rng.shuffle(tail)
                trial = shoe[:at] + tail
                starts = self._starts(trial)
                if self._ends_exactly(trial, starts) == exact:
                    shoe = trial
                    break
            else:
                return None
        last = len(starts) if exact else len(starts) + 1
        if last > self.budget - self.done:
            return None
        return starts[-2 if exact else -1] + 1, last, shoe

    def _ends_exactly(self, shoe: list[int], starts: list[int]) -> bool:
        """Whether the last complete round of a clean deal takes the shoe's last card."""
        return starts[-1] + len(_deal(shoe, starts[-1], self.rules).cards) == len(shoe)

    def _void_remedy(self, shoe: list[int]) -> tuple[int, int, list[int]] | None:
        """A right (i)(4), where one is due and this shoe can hold it: its last hand runs out
        of cards, is void and returns every wager. The faults that need a whole shoe go
        first, the first time."""
        planner = self.sim.planner
        if any(planner.left[k] and not planner.planted[k] for k in _WHOLE_SHOE_KINDS):
            return None
        if not self.sim.remedies.due("remedied_insufficient_cards"):
            return None
        ending = self._planned_end(shoe, exact=False)
        if ending is not None:
            self.sim.remedies.planted("remedied_insufficient_cards")
        return ending

    def _starts(self, shoe: list[int]) -> list[int]:
        """Where each complete round of a clean deal of `shoe` starts."""
        pos = 1 + self.rules.burn[shoe[0]]
        starts = []
        while True:
            try:
                dealt = _deal(shoe, pos, self.rules)
            except IndexError:
                return starts
            starts.append(pos)
            pos += len(dealt.cards)

    def _end_shoe(self) -> None:
        self.need_shuffle = True
        if self.pct_truth is not None and self.pct_truth.row is None:
            self.sim.planner.give_back("BA604")  # not one commission in the shoe
        self.pct_truth = None

    # -- seats, wagers, offers

    def _occupied(self, fewest: int, must: int | None) -> list[int]:
        """The seats that wager this round (at least `fewest`, with `must` among them)."""
        rng = self.rng
        seated = self.seated
        if len(seated) > 3 and rng.random() < 0.06:
            seated.pop(rng.randrange(len(seated)))
        if len(seated) < 9 and rng.random() < 0.06:
            free = [s for s in self.layout if s not in seated]
            if free:
                seated.append(rng.choice(free))
        fewest = min(max(fewest, 2), len(self.layout))
        while len(seated) < fewest:
            seated.append(rng.choice([s for s in self.layout if s not in seated]))
        if must is not None and must not in seated:
            seated.append(must)
        count = rng.randint(fewest, max(fewest, min(6, len(seated))))
        chosen = rng.sample(seated, count)
        if must is not None and must not in chosen:
            chosen[0] = must
        return chosen

    def _amount(self, main: bool) -> int:
        return 100 * self.rng.choice(MAIN_DOLLARS if main else SIDE_DOLLARS)

    def _wagers(self, occupied: list[int], need: dict[str, int], sides: bool = True) -> list[list]:
        """[seat, bet, cents] for each wager, in the order they are placed."""
        rng = self.rng
        by_seat: dict[int, dict[str, int]] = {}
        for seat in occupied:
            bets: dict[str, int] = {}
            x = rng.random()
            if x < 0.5:
                bets["banker"] = self._amount(True)
            elif x < 0.92:
                bets["player"] = self._amount(True)
            if not bets or rng.random() < 0.1:
                bets["tie"] = self._amount(False)
            if sides:
                if rng.random() < 0.05:
                    bets["dragon_banker"] = self._amount(False)
                if rng.random() < 0.05:
                    bets["dragon_player"] = self._amount(False)
                if self.ez:
                    if rng.random() < 0.07:
                        bets["dragon7"] = self._amount(False)
                    if rng.random() < 0.06:
                        bets["panda8"] = self._amount(False)
            by_seat[seat] = bets
        for bet, count in need.items():
            holders = [s for s in occupied if bet in by_seat[s]]
            other = {"banker": "player", "player": "banker"}.get(bet)
            spare = [s for s in occupied if bet not in by_seat[s]]
            spare.sort(key=lambda s: other in by_seat[s])  # seats without the opposite first
            while len(holders) < count and spare:
                seat = spare.pop(0)
                by_seat[seat].pop(other, None)
                by_seat[seat][bet] = self._amount(bet in ("banker", "player"))
                holders.append(seat)
        return [
            [seat, bet, by_seat[seat][bet]]
            for seat in occupied
            for bet in BET_ORDER
            if bet in by_seat[seat]
        ]

    def _offers(self, occupied: list[int], kind: str | None) -> tuple[list[list], list | None]:
        """Offer the shoe round the occupied seats (f)(1), (h)(2); the rows and a fault's row.

        At a shoe's start the offers begin at seat 1 (or the first occupied
        seat after it); after a pass, at the seat after the previous curator,
        who is not offered the shoe again in that sequence.
        """
        rng = self.rng
        occ = set(occupied)
        if self.prev_curator is None:
            order = SEATS
        else:
            i = SEATS.index(self.prev_curator)
            order = SEATS[i + 1 :] + SEATS[:i]
        cands = [s for s in order if s in occ]
        forced_decline = False
        if kind in ("BA801", "BA803") and len(cands) >= 2:
            j = rng.randrange(1, len(cands))
            cands = cands[j:] + cands[:j]
        elif kind == "BA804" and len(cands) >= 3:
            cands = [cands[0], *cands[2:]]
            forced_decline = True
        elif kind in ("BA801", "BA803", "BA804"):
            kind = None
        rows = []
        self.curator = None
        for k, seat in enumerate(cands):
            accepted = rng.random() < 0.75 and not (forced_decline and k == 0)
            rows.append(_row("shoe_offer", seat=seat, accepted=accepted))
            if accepted:
                self.curator = self.prev_curator = seat
                break
        self.need_offer = self.curator is None
        self.first_offers = False
        if kind in ("BA801", "BA803") and rows:
            return rows, rows[0]
        if kind == "BA804" and len(rows) >= 2:
            return rows, rows[1]
        return rows, None

    # -- which fault this round takes

    def _round_plan(self, peek: _Deal, cover_here: bool) -> _Plan | None:
        planner = self.sim.planner
        for kind in planner.candidates():
            if kind in SHOE_START_KINDS or kind in ("BA105", "BA901", "BA902"):
                continue
            plan = self._eligible(kind, peek, cover_here)
            if plan is not None:
                planner.take(kind)
                return plan
        return None

    def _eligible(self, kind: str, d: _Deal, cover_here: bool) -> _Plan | None:
        """A plan for planting `kind` in this round, or None when it cannot be planted here."""
        rules, rng = self.rules, self.rng
        shoe, pos = self.shoe, self.pos
        natural = d.p_nat or d.b_nat
        w = d.winner
        if kind in _CARD_COUNT_KINDS and (not self.card_faults_ok or len(shoe) - pos < 6):
            return None
        if kind in _VIG_KINDS and not self.vig_faults_ok:
            return None
        if kind == "BA102":
            if self.decks != DECKS:
                return None
            slots = list(range(len(d.cards)))
            rng.shuffle(slots)
            for k in slots:
                card = d.cards[k][1]
                value = rules.value[card]
                spent = [
                    c
                    for c in range(52)
                    if c != card and rules.value[c] == value and self.seen[c] == self.decks
                ]
                if spent:
                    return _Plan(kind, data={"slot": k, "code": rng.choice(spent)})
            return None
        if kind == "BA103":
            ok = w != "tie" and (max(d.pp, d.bp), min(d.pp, d.bp)) != (9, 8)
            return _Plan(kind) if ok else None
        if kind == "BA201":
            return _Plan(kind, deal={"first": rng.choice(("PPBB", "BPBP", "PBBP"))})
        if kind == "BA202":
            ok = (
                not natural
                and d.p_two in rules.player_draws
                and rules.value[shoe[pos + 5]] in rules.banker_third[d.b_two]
            )
            return _Plan(kind, deal={"banker_first": True}) if ok else None
        if kind == "BA203":
            # the banker's stand must agree with (f)(13) for the card the player took
            ok = natural and rules.value[shoe[pos + 4]] not in rules.banker_third[d.b_two]
            return _Plan(kind, deal={"p_force": True}, sides=False) if ok else None
        if kind == "BA204":
            # the banker's decision must be the same by (f)(12) and by (f)(13)
            p3 = rules.value[shoe[pos + 4]]
            if natural or (d.b_two in rules.banker_stood) != (p3 in rules.banker_third[d.b_two]):
                return None
            if d.p_two in rules.player_draws:
                return _Plan(kind, deal={"p_force": False}, variant="stood")
            return _Plan(kind, deal={"p_force": True}, variant="drew")
        if kind == "BA205":
            if natural or d.p_two in rules.player_draws:
                return None
            return _Plan(kind, deal={"b_force": d.b_two not in rules.banker_stood})
        if kind == "BA206":
            if natural or d.p_two not in rules.player_draws:
                return None
            drawn = rules.value[shoe[pos + 4]] in rules.banker_third[d.b_two]
            return _Plan(kind, deal={"b_force": not drawn})
        if kind in ("BA301", "BA401"):
            return _Plan(kind)
        if kind == "BA402":
            return _Plan(kind, need={"player": 1})
        if kind == "BA403":
            return None if self.ez else _Plan(kind)
        if kind == "BA404":
            return _Plan(kind, need={"tie": 1}) if w != "tie" else None
        if kind == "BA501":
            return _Plan(kind, need={"player": 1}) if w == "player" else None
        if kind in ("BA502", "BA601"):
            return _Plan(kind, need={"banker": 1}) if w == "banker" and not self.ez else None
        if kind == "BA503":
            return _Plan(kind, need={"tie": 1}) if w == "tie" else None
        if kind == "BA504":
            bet = rng.choice(("banker", "player"))
            return _Plan(kind, need={bet: 1}, data={"bet": bet}) if w == "tie" else None
        if kind in ("BA505", "BA506"):
            if not self.ez or not (d.dragon7 or self._rig(lambda x: x.dragon7)):
                return None
            return _Plan(kind, need={"banker" if kind == "BA505" else "dragon7": 1})
        if kind == "BA507":
            if not self.ez or not (d.panda8 or self._rig(lambda x: x.panda8)):
                return None
            return _Plan(kind, need={"panda8": 1})
        if kind == "BA508":
            for bet, own, other, own_nat, other_nat in (
                ("dragon_player", d.pp, d.bp, d.p_nat, d.b_nat),
                ("dragon_banker", d.bp, d.pp, d.b_nat, d.p_nat),
            ):
                if rules.dragon_odds(own, other, own_nat, other_nat) > 0:
                    return _Plan(kind, need={bet: 1}, data={"bet": bet})
            return None
        if kind == "BA602":
            ok = self.ez and w == "banker" and not d.dragon7
            return _Plan(kind, need={"banker": 1}) if ok else None
        if kind == "BA603":
            # marked and never settled: a shuffle must follow within the log
            if self.ez or w != "banker" or self.void_round is not None or self.unsettled_fault:
                return None
            after = self.budget - self.done - 1
            if self.cover_out:
                ok = after >= 1
            elif cover_here:
                ok = after >= 3
            else:
                ok = after >= (self.cover - pos) // 4 + 4
            return _Plan(kind, need={"banker": 1}) if ok else None
        if kind in ("BA701", "BA702"):
            if w == "tie" or (self.ez and d.dragon7):
                return None
            if kind == "BA701":
                return _Plan(kind, need={w: 1, "tie": 1})
            return _Plan(kind, need={w: 2})
        if kind in ("BA801", "BA803", "BA804"):
            if not self.big or not (self.need_offer or self.pending_pass is not None):
                return None
            if kind == "BA801":
                return _Plan(kind, seats=3) if self.first_offers else None
            if kind == "BA803":
                return _Plan(kind, seats=4) if self.pending_pass is not None else None
            return _Plan(kind, seats=5)
        if kind == "BA802":
            return _Plan(kind) if self.big and self.pending_pass == "must" else None
        if kind == "BA903":
            ways = self._misdeal_ways(d, fault=True) if self.astray_now else ()
            if not ways:
                return None
            return _Plan(kind, variant=self.sim.turn(f"BA903:{ways[0]}", ways))
        return None

    def _rig(self, wanted: Callable[[_Deal], bool]) -> bool:
        """Reorder the cards not yet dealt so that this round's coup is `wanted`.

        Another order of the same cards, so the shoe stays a shoe; never in a
        shoe whose rounds are planned by card count (BA106).
        """
        if not self.card_faults_ok:
            return False
        shoe, pos, rng = self.shoe, self.pos, self.rng
        if len(shoe) - pos < 12:
            return False
        for _ in range(400):
            picks = rng.sample(range(pos, len(shoe)), 6)
            trial = _deal([shoe[j] for j in picks], 0, self.rules)
            if wanted(trial):
                chosen = set(picks)
                rest = [shoe[j] for j in range(pos, len(shoe)) if j not in chosen]
                shoe[pos:] = [shoe[j] for j in picks] + rest
                return True
        return False

    # -- settlement

    def _result(self, bet: str, cents: int, d: _Deal) -> tuple[str, int]:
        """What a wager gets: ("pay", winnings), ("push", stake) or ("collect", stake)."""
        w = d.winner
        if bet in ("banker", "player"):
            if w == "tie" or (bet == "banker" and w == "banker" and self.ez and d.dragon7):
                return "push", cents
            return ("pay", cents) if w == bet else ("collect", cents)
        if bet == "tie":
            return ("pay", TIE_PAYS * cents) if w == "tie" else ("collect", cents)
        if bet == "dragon7":
            return ("pay", DRAGON7_PAYS * cents) if d.dragon7 else ("collect", cents)
        if bet == "panda8":
            return ("pay", self.rules.panda8 * cents) if d.panda8 else ("collect", cents)
        if bet == "dragon_player":
            odds = self.rules.dragon_odds(d.pp, d.bp, d.p_nat, d.b_nat)
        else:
            odds = self.rules.dragon_odds(d.bp, d.pp, d.b_nat, d.p_nat)
        if odds > 0:
            return "pay", odds * cents
        return ("push", cents) if odds == 0 else ("collect", cents)

    @staticmethod
    def _order(
        procedure: str, seats: list[int], pays: dict[int, list], vigs: dict[int, list]
    ) -> list[list]:
        """Pays and commission of the winning seats by procedure (g)(2)(i)-(iv)."""
        out: list[list] = []
        if procedure in ("i", "ii"):
            first, second = (pays, vigs) if procedure == "i" else (vigs, pays)
            for seat in seats:
                out += first.get(seat, ())
            for seat in seats:
                out += second.get(seat, ())
        else:
            for seat in seats:
                if procedure == "iii":
                    out += pays.get(seat, []) + vigs.get(seat, [])
                else:
                    out += vigs.get(seat, []) + pays.get(seat, [])
        return out

    # -- one round

    def play_round(self) -> None:
        if self.need_shuffle:
            self._new_shoe()
        else:
            self.clock = max(self.clock + 2, self.round_began + self.rng.randint(44, 56))
        self.round_began = self.clock
        if self.void_round == self.round_no + 1:
            self._play_void_round()
        else:
            self._play_round()

    def _seat_round(self, plan: _Plan | None, sides: bool) -> tuple[list[int], list[list]]:
        """Occupied seats and their wagers, keeping the curator seated."""
        keep = plan is not None and plan.kind == "BA802"
        must = (
            self.curator
            if self.curator is not None and (keep or self.pending_pass is None)
            else None
        )
        need = dict(plan.need) if plan else {}
        fewest = max(plan.seats, sum(need.values())) if plan else 2
        occupied = self._occupied(fewest, must)
        return occupied, self._wagers(occupied, need, sides)

    def _pre_round(
        self, r: int, occupied: list[int], kind: str | None, truths: list[_Truth]
    ) -> list[list]:
        """The shoe offers before round `r` on a big table (and a planted offer fault)."""
        if not self.big:
            return []
        if kind == "BA802":
            self.pending_pass = None
            truths.append(
                self._truth(
                    kind,
                    r,
                    f"seat {self.curator} kept the shoe after the "
                    "banker hand lost the round before",
                    None,
                )
            )
            return []
        if self.pending_pass is None and not self.need_offer:
            return []
        if self.pending_pass is not None:
            self.curator = None
            self.pending_pass = None
        offer_kind = kind if kind in ("BA801", "BA803", "BA804") else None
        rows, marked = self._offers(occupied, offer_kind)
        if offer_kind is not None:
            if marked is None:
                self.sim.planner.give_back(offer_kind)
            else:
                note = {
                    "BA801": "the shoe's first offer made to the wrong seat",
                    "BA803": "offers after the pass start at the wrong seat",
                    "BA804": "the offer sequence skips an occupied seat",
                }[offer_kind]
                truths.append(self._truth(offer_kind, 0 if r == 1 else r, note, marked))
        return rows

    def _play_round(self) -> None:
        rng, rules = self.rng, self.rules
        r = self.round_no + 1
        last_of_table = self.done + 1 >= self.budget
        truths: list[_Truth] = []

        # a card astray (i) before the round, or misdealt in it; none in the round after one
        quiet = self.quiet
        # (a clean log has none: one test, not the conditions, every round)
        self.astray_now = bool(self.sim.remedies.every) and self._astray_ok(r, last_of_table)
        astray_rows, blank, astray_truths = (
            self._between_rounds(r) if self.astray_now else ([], False, [])
        )
        truths += astray_truths
        peek = _deal(self.shoe, self.pos, rules)
        cover_here = self.pos <= self.cover < self.pos + len(peek.cards) and not self.cover_out
        plan = None if quiet or astray_rows else self._round_plan(peek, cover_here)
        kind = plan.kind if plan else None
        d = _deal(self.shoe, self.pos, rules, **plan.deal) if plan else peek
        if kind in ("BA505", "BA506", "BA507"):
            d = _deal(self.shoe, self.pos, rules)  # the cards were rearranged
        misdeal, misdeal_remedy = plan.variant if kind == "BA903" else None, False
        if misdeal is None and plan is None and self.astray_now and not astray_rows:
            misdeal = self._misdeal_remedy(peek)
            misdeal_remedy = misdeal is not None
        after_fourth: list[list] = []
        if misdeal is not None:
            d, after_fourth, used = self._misdeal(misdeal, d)
        else:
            used = len(d.cards)

        # the cover card: this round completes, then one last hand (f)(9)
        cover_here = not self.cover_out and self.pos <= self.cover < self.pos + used
        cover_before = False
        if cover_here:
            self.cover_out = True
            cover_before = self.cover == self.pos and rng.random() < 0.5
            self.last_round = r + 1
            self._maybe_ba105(r, used, truths)
        settle_all = (
            last_of_table
            or self.last_round == r
            or (self.void_round is not None and r >= self.void_round - 1)
            or (self.exhaust_round is not None and r >= self.exhaust_round - 1)
        )

        if blank:  # a hand no one wagers on (i)(1)(ii): no wagers, no offers
            occupied, wagers = [], []
        else:
            occupied, wagers = self._seat_round(plan, sides=plan is None or plan.sides)
        pre = astray_rows + ([_row("cover_card")] if cover_before else [])
        if not blank:
            pre += self._pre_round(r, occupied, kind, truths)
        if kind in ("BA801", "BA802", "BA803", "BA804", "BA903"):
            kind = None  # recorded (or given back) with the offers, or with the cards

        wager_rows = [_money("wager", seat, bet, cents) for seat, bet, cents in wagers]
        results = [list(self._result(bet, cents, d)) for _, bet, cents in wagers]
        vig_pct: dict[int, int] = {}  # seat -> percent, for each seat that owes commission
        if not self.ez:
            for (seat, bet, _), (how, _) in zip(wagers, results, strict=True):
                if bet == "banker" and how == "pay":
                    vig_pct[seat] = self.pct
        note, marked = "", None
        if kind is not None:
            note, marked = self._money_fault(plan, d, wagers, wager_rows, results, vig_pct)
            if plan.data.get("failed"):
                self.sim.planner.give_back(kind)
                plan = kind = None

        rows: list[list] = [_row("round_start")]
        if self.extra_truth is not None and self.extra_truth.round == r:
            self.extra_truth.row = rows[0]
            truths.append(self.extra_truth)
        rows += wager_rows
        no_more_bets = _row("no_more_bets")
        rows.append(no_more_bets)
        card_rows = [_card(target, card) for target, card in d.cards]
        shown = list(card_rows)
        shown[4:4] = after_fourth
        if cover_here and not cover_before:
            shown.insert(self.cover - self.pos, _row("cover_card"))
        rows += shown
        truths += self._astray_truths(r, card_rows, misdeal, misdeal_remedy, after_fourth)
        result = _row("result", winner=d.winner, player_points=d.pp, banker_points=d.bp)
        rows.append(result)

        settlement, new_marks, settle_mark = self._settle(
            plan, wagers, results, vig_pct, settle_all
        )
        marked = marked or settle_mark
        rows += settlement

        if kind == "BA102":
            row = card_rows[plan.data["slot"]]
            old = row[CARD]
            row[CARD] = CODES[plan.data["code"]]
            note = f"{row[CARD]} recorded for {old}: a copy beyond the shoe's {self.decks} decks"
            marked = row
        elif kind == "BA103":
            own, other, col = (d.pp, d.bp, PP) if d.winner == "player" else (d.bp, d.pp, BP)
            result[col] = rng.choice([x for x in range(other + 1, 10) if x != own])
            note = f"{_FIELDS[col]} declared {result[col]}, the cards give {own}"
            marked = result
        elif kind == "BA301":
            result[WINNER] = rng.choice([x for x in ("player", "banker", "tie") if x != d.winner])
            note = f"winner declared {result[WINNER]}, the cards give {d.winner}"
            marked = result
        elif kind in _CARD_COUNT_KINDS:
            note, marked = self._card_fault(plan, d, card_rows)
        elif kind == "BA401":
            seats = Counter(row[SEAT] for row in wager_rows)
            late = next(
                (row for row in reversed(wager_rows) if seats[row[SEAT]] > 1), wager_rows[-1]
            )
            rows.remove(late)
            rows.insert(rows.index(no_more_bets) + 1, late)
            note = f"seat {late[SEAT]} {late[BET]} wager placed after no_more_bets"
            marked = late

        # marked commission of earlier rounds, settled later in the shoe
        for seat in sorted(self.owed, reverse=True):
            if blank:
                break
            if settle_all or rng.random() < 0.35:
                rows.append(_money("vig_settle", seat, None, self.owed.pop(seat)))
        rows.append(_row("round_end"))
        for seat, cents in new_marks.items():
            self.owed[seat] = self.owed.get(seat, 0) + cents

        if kind is not None:
            truths.append(self._truth(kind, r, note, marked))
        if self.pct_truth is not None and self.pct_truth.row is None:
            vig = next((row for row in settlement if row[E] == "vig"), None)
            if vig is not None:
                self.pct_truth.round = r
                self.pct_truth.row = vig
                self.sim.truth.append(self.pct_truth)
                truths.append(self.pct_truth)

        if pre:
            self._emit(pre, 0 if r == 1 else r, truths)
        self._emit(rows, r, truths)

        for row in card_rows:
            self.seen[_CODE_INDEX[row[CARD]]] += 1
        self.pos += used
        self.round_no = r
        self.done += 1
        self.quiet = bool(astray_rows) or misdeal is not None
        if self.big and self.curator is not None and self.pending_pass is None and not blank:
            if d.winner == "player":
                self.pending_pass = "must"  # (h)(1)(i)
            elif rng.random() < 0.1:
                self.pending_pass = "may"
        if self.last_round == r:
            self._end_shoe()

    # -- cards astray (i)(1)-(3): planted wrong (BA901-BA903) or right (remedied_...)

    def _astray_ok(self, r: int, last_of_table: bool) -> bool:
        """Whether a card astray may be planted before or in round r: not in round 1, nor in
        the round after one that held one, nor near the cover card or in a shoe whose
        rounds are planned by card count (BA106, BA904); and a round of the shoe follows."""
        return (
            r >= 2
            and not self.quiet
            and self.card_faults_ok
            and not self.cover_out
            and self.cover - self.pos > 40
            and not last_of_table
        )

    def _exposed(self, card: int, exposure: str, disclosed: bool) -> list:
        row = _row("card_exposed", card=CODES[card], exposure=exposure, disclosed=disclosed)
        if exposure == "misdealt":
            row[TARGET] = "player"
        return row

    def _burns(self, at: int, count: int) -> list[list]:
        """Burn rows of the `count` cards of the shoe from position `at` (counted as seen)."""
        rows = []
        for card in self.shoe[at : at + count]:
            rows.append(_row("burn", card=CODES[card]))
            self.seen[card] += 1
        return rows

    def _value(self, card: int, ten_as_zero: bool) -> int:
        value = self.rules.burn[card]
        return 0 if ten_as_zero and value == 10 else value

    def _discard_passes(self, exposed: int, burned: list[int], tens_zero: bool) -> bool:
        """Whether the burns of a discard pass (hand-history-v1 1.2): one card and its value
        in burns, or the exposed card, one more and that card's value; in (i)(3) a
        ten-value card may count 10 or 0."""
        n = len(burned)
        for zero in (False, True) if tens_zero else (False,):
            if n >= 1 and n == 1 + self._value(burned[0], zero):
                return True
            if n >= 2 and burned[0] == exposed and n == 2 + self._value(burned[1], zero):
                return True
        return False

    def _discard(self, at: int, exposed: int, right: bool, tens_zero: bool) -> list[list]:
        """The burns of a discard from shoe position `at`, whose card is the exposed one:
        `right`, the card and its value in burns (or, in turn, the card, the next one and
        that one's value); else a count off by one or two that no reading allows."""
        shoe = self.shoe
        if right:
            if self.sim.turn("discard", ("own", "next")) == "own":
                count = 1 + self._value(exposed, tens_zero and self.rng.random() < 0.5)
            else:
                count = 2 + self._value(shoe[at + 1], False)
            return self._burns(at, count)
        for delta in self.rng.sample((-2, -1, 1, 2), 4):
            count = 1 + self._value(exposed, False) + delta
            if count >= 1 and not self._discard_passes(exposed, shoe[at : at + count],
                                                       tens_zero):
                return self._burns(at, count)
        return self._burns(at, 1 + self._value(exposed, False) + 3)

    def _between_rounds(self, r: int) -> tuple[list[list], bool, list[_Truth]]:
        """A card found face up in the shoe or drawn in excess before round r, planted wrong
        (BA901, BA902: a queued fault) or right (a remedy due): its rows, carrying round r,
        whether round r is then a hand no one wagers on ((i)(1)(ii)), and the truths whose
        row is among them."""
        for kind in self.sim.planner.candidates(("BA901", "BA902")):
            self.sim.planner.take(kind)
            rows, truths = self._astray_fault(kind, r)
            return rows, False, truths
        remedies = self.sim.remedies
        for name in ("remedied_face_up_in_shoe", "remedied_excess_card"):
            if remedies.due(name):
                remedies.planted(name)
                return self._astray_remedy(name, r)
        return [], False, []

    def _astray_fault(self, kind: str, r: int) -> tuple[list[list], list[_Truth]]:
        x = self.shoe[self.pos]
        code = CODES[x]
        if kind == "BA901":
            how = self.sim.turn(kind, ("used", "no_discard", "wrong_discard"))
            exposed = self._exposed(x, "face_up_in_shoe", how != "used")
        else:
            how = self.sim.turn(kind, ("not_next", "wrong_discard"))
            exposed = self._exposed(x, "excess", how == "wrong_discard")
        rows = [exposed]
        if how == "wrong_discard":
            rows += self._discard(self.pos, x, right=False, tens_zero=False)
            self.pos += len(rows) - 1
            note = f"{code} disclosed, its discard {len(rows) - 1} card(s)"
            return rows, [self._truth(kind, r, note, rows[1])]
        if how == "used":
            note = f"{code} found face up in the shoe and dealt as the next hand's first card"
        elif how == "no_discard":
            self.pos += 1  # set aside without a row
            self.seen[x] += 1
            note = f"{code} found face up and disclosed, the next hand dealt with no discard"
        else:
            rows += self._burns(self.pos, 1)
            self.pos += 1
            note = f"{code} drawn in excess, not disclosed, burned: not the next hand's first card"
        # the row showing it is the next hand's first card, this round's
        self.first_card_truth = self._truth(kind, r, note, None)
        return rows, []

    def _astray_remedy(self, name: str, r: int) -> tuple[list[list], bool, list[_Truth]]:
        x = self.shoe[self.pos]
        blank = False
        if name == "remedied_face_up_in_shoe":
            how = self.sim.turn(name, ("burned", "discard", "blank"))
            if how == "blank":
                # a card deeper in the shoe, dealt in the hand no one wagers on, not first
                # (nor after a copy of it there, which would be read as the card)
                shoe, pos = self.shoe, self.pos
                deeper = [k for k in (1, 2, 3) if shoe[pos + k] not in shoe[pos : pos + k]]
                x = shoe[pos + self.rng.choice(deeper)] if deeper else x
                how = how if deeper else "burned"
            rows = [self._exposed(x, "face_up_in_shoe", how != "burned")]
        else:
            how = self.sim.turn(name, ("next_first", "discard"))
            rows = [self._exposed(x, "excess", how == "discard")]
        if how == "burned":
            rows += self._burns(self.pos, 1)
        elif how == "discard":
            rows += self._discard(self.pos, x, right=True, tens_zero=False)
        elif how == "blank":
            blank = True
        self.pos += len(rows) - 1
        return rows, blank, [self._remedied(name, r, how, rows[0])]

    def _remedied(self, name: str, r: int, how: str, row: list) -> _Truth:
        """The truth row of a right remedy: no rule, its round and its card_exposed row."""
        shown = "disclosed" if row[DISCLOSED] else "not disclosed"
        note = f"{row[CARD]} {row[EXPOSURE]}, {shown}: {how.replace('_', ' ')}"
        truth = _Truth(self.table_id, self.shoe_id, r, name, None, note, row)
        self.sim.truth.append(truth)
        return truth

    def _misdeal_ways(self, d: _Deal, fault: bool) -> tuple[str, ...]:
        """How a third card misdealt to the player may be planted in a round dealt `d`: only
        where the player's hand stands (then no third card is authorized for it)."""
        rules = self.rules
        natural = d.p_nat or d.b_nat
        if not natural and d.p_two in rules.player_draws:
            return ()
        must = not natural and d.b_two in rules.banker_stood
        if fault:
            return ("burned",) if must else ("not_next", "wrong_discard")
        return ("to_banker",) if must else ("next_first", "discard")

    def _misdeal(self, how: str, d: _Deal) -> tuple[_Deal, list[list], int]:
        """The misdealt card (the card after the first four): the round's deal, the rows
        put after its fourth card, and the cards the round takes from the shoe."""
        shoe, pos = self.shoe, self.pos
        x = shoe[pos + 4]
        disclosed = {"to_banker": self.rng.random() < 0.5, "burned": self.rng.random() < 0.5,
                     "discard": True, "wrong_discard": True}.get(how, False)
        rows = [self._exposed(x, "misdealt", disclosed)]
        if how == "to_banker":  # the banker draws: the card is its third card
            return d, rows, len(d.cards)
        if how == "burned":  # the banker draws the card after it
            rows += self._burns(pos + 4, 1)
            dealt = _deal(shoe[pos : pos + 4] + shoe[pos + 5 : pos + 12], 0, self.rules)
            return dealt, rows, len(dealt.cards) + 1
        if how in ("discard", "wrong_discard"):
            rows += self._discard(pos + 4, x, right=how == "discard", tens_zero=True)
            return d, rows, 4 + len(rows) - 1
        if how == "not_next":
            rows += self._burns(pos + 4, 1)
            return d, rows, 5
        return d, rows, 4  # next_first: the next hand begins with it

    def _astray_truths(self, r: int, card_rows: list[list], misdeal: str | None,
                       remedy: bool, after_fourth: list[list]) -> list[_Truth]:
        """The truths whose row is in this round: a fault shown by its first card (planted
        before it, or misdealt in the round before), a misdealt card's, BA904's last card."""
        truths = []
        pending = self.first_card_truth
        if pending is not None:
            pending.round, pending.row = r, card_rows[0]
            truths.append(pending)
            self.first_card_truth = None
        if misdeal is not None:
            code = after_fourth[0][CARD]
            if remedy:
                truths.append(self._remedied("remedied_misdealt_card", r, misdeal,
                                             after_fourth[0]))
            elif misdeal == "burned":
                note = f"{code} misdealt to the player and burned; the banker had to draw it"
                truths.append(self._truth("BA903", r, note, card_rows[4]))
            elif misdeal == "wrong_discard":
                note = f"{code} misdealt to the player, disclosed, a wrong count discarded"
                truths.append(self._truth("BA903", r, note, after_fourth[1]))
            else:  # not_next: shown by the next hand's first card
                note = f"{code} misdealt to the player, not disclosed, burned"
                self.first_card_truth = self._truth("BA903", r + 1, note, None)
        if self.exhaust_round == r:
            note = "the round takes the shoe's last card and is settled, not void"
            truths.append(self._truth("BA904", r, note, card_rows[-1]))
        return truths

    def _misdeal_remedy(self, d: _Deal) -> str | None:
        """A right remedy of a misdealt third card, when one is due and the round fits."""
        name = "remedied_misdealt_card"
        if not self.sim.remedies.due(name):
            return None
        ways = self._misdeal_ways(d, fault=False)
        if not ways:
            return None
        self.sim.remedies.planted(name)
        return self.sim.turn(f"{name}:{ways[0]}", ways)

    def _maybe_ba105(self, r: int, used: int, truths: list[_Truth]) -> None:
        """BA105: zero or two rounds after the cover card round, when the log has room."""
        if (
            self.void_round is not None
            or self.exhaust_round is not None
            or not self.sim.planner.candidates(("BA105",))
        ):
            return
        after = self.budget - self.done - 1
        left = len(self.shoe) - self.pos - used
        variant = self.sim.turn("BA105", ("zero", "two"))
        if variant == "two" and not (after >= 2 and left >= 12):
            variant = "zero"
        if variant == "zero" and after < 1:
            return
        self.sim.planner.take("BA105")
        if variant == "zero":
            self.last_round = r
            truths.append(self._truth("BA105", r, "no last hand after the cover card round", None))
        else:
            self.last_round = r + 2
            self.extra_truth = self._truth(
                "BA105", r + 2, "a second round after the cover card round", None
            )

    def _card_fault(self, plan: _Plan, d: _Deal, cards: list[list]) -> tuple[str, list | None]:
        kind = plan.kind
        if kind == "BA201":
            order = "".join(row[TARGET][0].upper() for row in cards[:4])
            wrong = next(
                row
                for row, want in zip(cards, "PBPB", strict=False)
                if row[TARGET][0].upper() != want
            )
            return f"first four cards dealt {order}", wrong
        if kind == "BA202":
            return "the banker's third card dealt before the player's", cards[4]
        if kind == "BA203":
            natural = "player" if d.p_nat else "banker"
            return f"a third card dealt to the player after a {natural} natural", cards[4]
        if kind == "BA204":
            if plan.variant == "drew":
                return f"the player drew on {d.p_two}", cards[4]
            return f"the player stood on {d.p_two}", None
        rule = "(f)(12)" if kind == "BA205" else "(f)(13)"
        if d.b_count == 3:
            return f"the banker drew on {d.b_two} against {rule}", cards[-1]
        return f"the banker stood on {d.b_two} against {rule}", None

    def _money_fault(
        self,
        plan: _Plan,
        d: _Deal,
        wagers: list[list],
        wager_rows: list[list],
        results: list[list],
        vig_pct: dict[int, int],
    ) -> tuple[str, list | None]:
        """Change what a wager gets, or the commission, for a settlement fault.

        Returns the note and the row carrying the fault when it is a wager row;
        a settlement row is found once it is built (`plan.data["index"]` is the
        wager whose settlement row carries the fault, `plan.data["seat"]` a
        seat whose commission does).
        """
        rng = self.rng
        kind = plan.kind

        def index_of(*bets: str, outcome: str | None = None) -> int:
            return next(
                i
                for i, (_, bet, _) in enumerate(wagers)
                if bet in bets and (outcome is None or results[i][0] == outcome)
            )

        if kind == "BA402":
            i = index_of("player")
            seat, _, cents = wagers[i]
            odd = cents + rng.choice((200, 300, -200, -300) if cents > 500 else (200, 300))
            wagers[i][2] = odd
            wager_rows[i][AMOUNT] = odd
            results[i] = list(self._result("player", odd, d))
            return f"seat {seat} player wager of ${odd / 100:g}, not in $5 steps", wager_rows[i]
        if kind == "BA403":
            seat = rng.choice([w[0] for w in wagers])
            bet = rng.choice(("dragon7", "panda8"))
            cents = self._amount(False)
            at = max(i for i, w in enumerate(wagers) if w[0] == seat) + 1
            wagers.insert(at, [seat, bet, cents])
            row = _money("wager", seat, bet, cents)
            wager_rows.insert(at, row)
            results.insert(at, list(self._result(bet, cents, d)))
            return f"a {bet} wager at seat {seat} on a standard table", row
        if kind == "BA404":
            losers = [i for i, res in enumerate(results) if res[0] == "collect"]
            plan.data["index"] = i = rng.choice(losers)
            plan.variant = self.sim.turn(kind, ("twice", "never"))
            seat, bet, _ = wagers[i]
            how = "collected twice" if plan.variant == "twice" else "never settled"
            return f"seat {seat} losing {bet} wager {how}", None
        if kind in ("BA501", "BA502"):
            bet = "player" if kind == "BA501" else "banker"
            plan.data["index"] = i = index_of(bet)
            cents = wagers[i][2]
            wrong = rng.choice(
                [cents * 95 // 100, cents + 500] + ([cents - 500] if cents > 500 else [])
            )
            results[i] = ["pay", wrong]
            return (
                f"seat {wagers[i][0]} {bet} wager of ${cents / 100:g} paid ${wrong / 100:g}"
            ), None
        if kind == "BA503":
            plan.data["index"] = i = index_of("tie")
            odds = rng.choice((TIE_PAYS - 1, TIE_PAYS + 1))
            results[i] = ["pay", odds * wagers[i][2]]
            return f"seat {wagers[i][0]} tie wager paid {odds}:1", None
        if kind == "BA504":
            plan.data["index"] = i = index_of(plan.data["bet"])
            results[i] = ["collect", wagers[i][2]]
            return f"seat {wagers[i][0]} {wagers[i][1]} wager collected on a tie", None
        if kind == "BA505":
            plan.data["index"] = i = index_of("banker")
            how = self.sim.turn(kind, ("pay", "collect"))
            results[i] = [how, wagers[i][2]]
            verb = "paid" if how == "pay" else "collected"
            return f"seat {wagers[i][0]} banker wager {verb} on a dragon 7", None
        if kind in ("BA506", "BA507"):
            bet = "dragon7" if kind == "BA506" else "panda8"
            plan.data["index"] = i = index_of(bet)
            odds = rng.choice((30, 35, 45) if kind == "BA506" else (20, 24, 30))
            results[i] = ["pay", odds * wagers[i][2]]
            return f"seat {wagers[i][0]} {bet} paid {odds}:1", None
        if kind == "BA508":
            bet = plan.data["bet"]
            plan.data["index"] = i = index_of(bet)
            right = results[i][1] // wagers[i][2]
            odds = right + 1 if right == 1 or rng.random() < 0.5 else right - 1
            results[i] = ["pay", odds * wagers[i][2]]
            return f"seat {wagers[i][0]} {bet} paid {odds}:1, pay table A pays {right}:1", None
        if kind == "BA601":
            plan.data["seat"] = seat = wagers[index_of("banker", outcome="pay")][0]
            plan.variant = self.sim.turn(kind, ("wrong", "missing"))
            how = "amount wrong" if plan.variant == "wrong" else "not taken"
            return f"seat {seat} commission {how}", None
        if kind == "BA602":
            plan.data["seat"] = seat = wagers[index_of("banker", outcome="pay")][0]
            vig_pct[seat] = COMMISSION_PERCENT
            return f"seat {seat} charged commission at an EZ table", None
        if kind == "BA603":
            # a seat that owes nothing now and marks nothing later in the shoe, so that
            # the amount left open is this vig's whichever way settlements are matched
            seats = [
                s for s, b, _ in wagers if b == "banker" and s in vig_pct and not self.owed.get(s)
            ]
            if not seats:
                plan.data["failed"] = True
                return "", None
            self.unsettled_fault = True
            self.unmarked_seats.add(seats[0])
            plan.data["seat"] = seats[0]
            return f"seat {seats[0]} commission marked and never settled", None
        if kind == "BA701":
            return "a pay or commission before the last collect", None
        if kind == "BA702":
            return f"winning wagers not settled by procedure ({self.procedure})", None
        return "", None

    def _settle(
        self,
        plan: _Plan | None,
        wagers: list[list],
        results: list[list],
        vig_pct: dict[int, int],
        settle_all: bool,
    ) -> tuple[list[list], dict[int, int], list | None]:
        """Collects, then pushes, then pays and commission by the pit's procedure (g)(2).

        Returns the rows, the commission marked this round (seat -> cents) and
        the settlement row carrying a planted fault.
        """
        rng = self.rng
        kind = plan.kind if plan else None
        data = plan.data if plan else {}
        collects: list[list] = []
        pushes: list[list] = []
        pays: dict[int, list] = {}
        by_wager: list[list] = [[]] * len(wagers)
        for i in sorted(range(len(wagers)), key=lambda i: -wagers[i][0]):
            seat, bet, _ = wagers[i]
            how, amount = results[i]
            row = _money(how, seat, bet, amount)
            by_wager[i] = row
            if how == "collect":
                collects.append(row)
            elif how == "push":
                pushes.append(row)
            else:
                pays.setdefault(seat, []).append(row)
        marked = by_wager[data["index"]] if "index" in data else None

        # commission: one row per seat, on the sum of its winning banker wagers (d)(2)
        new_marks: dict[int, int] = {}
        vigs: dict[int, list] = {}
        for seat, pct in vig_pct.items():
            # the 1:1 winnings of the seat's banker wager, whatever was (wrongly) paid
            won = sum(c for s, b, c in wagers if s == seat and b == "banker")
            cents = won * pct // 100
            mode = "collected"
            faulty = data.get("seat") == seat and kind in ("BA601", "BA602", "BA603")
            if faulty and kind == "BA601":
                if plan.variant == "missing":
                    continue
                # off by a step or more, and never the amount of the other lawful rate
                other = {won * p // 100 for p in (FAULT_COMMISSION_PERCENT, COMMISSION_PERCENT)}
                cents = rng.choice(
                    [
                        cents + x
                        for x in (-100, -50, -25, 25, 50, 100)
                        if cents + x > 0 and cents + x not in other
                    ]
                )
            elif faulty and kind == "BA603":
                mode = "marked"
            elif (
                not faulty
                and not settle_all
                and seat not in self.unmarked_seats
                and rng.random() < 0.3
            ):
                mode = "marked"
                new_marks[seat] = cents
            row = _row("vig", seat=seat, amount=cents, mode=mode)
            vigs[seat] = [row]
            if faulty:
                marked = row
        seats = sorted(set(pays) | set(vigs), reverse=True)
        ordered = self._order(self.procedure, seats, pays, vigs)

        if kind == "BA404":
            target = marked
            if plan.variant == "twice":
                marked = list(target)
                collects.insert(collects.index(target) + 1, marked)
            else:
                collects.remove(target)
                marked = None
        elif kind == "BA701":
            marked = ordered.pop(0)
            collects.insert(len(collects) - 1, marked)
        elif kind == "BA702":
            alternatives = [
                self._order(p, seats, pays, vigs) for p in PROCEDURE_NAMES if p != self.procedure
            ]
            alternatives.append(self._order(self.procedure, sorted(seats), pays, vigs))
            rightful = [id(row) for row in ordered]
            different = [alt for alt in alternatives if [id(row) for row in alt] != rightful]
            alt = rng.choice(different)
            # the first row where the recorded order departs from the procedure's
            marked = next(a for a, b in zip(alt, ordered, strict=True) if a is not b)
            ordered = alt
        return collects + pushes + ordered, new_marks, marked

    def _play_void_round(self) -> None:
        """BA106: the shoe runs out mid-round (i)(4); the round is void, one wager kept."""
        r = self.round_no + 1
        truths: list[_Truth] = []
        occupied, wagers = self._seat_round(None, sides=True)
        pre = self._pre_round(r, occupied, None, truths)
        rows = [_row("round_start")]
        rows += [_money("wager", seat, bet, cents) for seat, bet, cents in wagers]
        rows.append(_row("no_more_bets"))
        dealt: list = []
        with contextlib.suppress(IndexError):
            _deal(self.shoe, self.pos, self.rules, out=dealt)
        rows += [_card(target, card) for target, card in dealt]
        rows.append(_row("void", reason="insufficient cards"))
        keep = -1 if self.void_remedy else self.rng.randrange(len(wagers))
        order = sorted(range(len(wagers)), key=lambda i: (i != keep, -wagers[i][0]))
        settle = [_money("collect" if i == keep else "push", *wagers[i]) for i in order]
        rows += settle
        rows.append(_row("round_end"))
        if self.void_remedy:
            void = next(row for row in rows if row[E] == "void")
            truth = _Truth(self.table_id, self.shoe_id, r, "remedied_insufficient_cards", None,
                           "void round: every wager returned, then the shuffle", void)
            self.sim.truth.append(truth)
            truths.append(truth)
        else:
            seat, bet, cents = wagers[keep]
            truths.append(
                self._truth(
                    "BA106",
                    r,
                    f"void round: seat {seat} {bet} wager of ${cents / 100:g} collected, not "
                    "returned",
                    settle[0],
                )
            )
        if pre:
            self._emit(pre, r, truths)
        self._emit(rows, r, truths)
        for _, card in dealt:
            self.seen[card] += 1
        self.pos += len(dealt)
        self.round_no = r
        self.done += 1
        self._end_shoe()


# --- the whole simulation -------------------------------------------------------

PROCEDURE_NAMES = ("i", "ii", "iii", "iv")
AMOUNT_DTYPE = pl.Decimal(12, 2)
_CODE_INDEX = {code: i for i, code in enumerate(CODES)}
FLUSH_ROWS = 100_000
# The log as it is gathered: narrow types (widened to Int64 in `Simulation.events`)
# keep millions of rows small.
_CHUNK_SCHEMA = {
    "event": pl.Enum(v.EVENTS),
    "seat": pl.Int8,
    "target": pl.Enum(("player", "banker")),
    "card": pl.Enum(CODES),
    "bet": pl.Enum(v.BACCARAT_BETS),
    "amount_cents": pl.Int64,
    "accepted": pl.Boolean,
    "mode": pl.Enum(v.MODES),
    "decks": pl.Int8,
    "winner": pl.Enum(v.WINNERS),
    "player_points": pl.Int8,
    "banker_points": pl.Int8,
    "reason": pl.String,
    "exposure": pl.Enum(v.BACCARAT_EXPOSURES),
    "disclosed": pl.Boolean,
    "_t": pl.Int64,
    "round": pl.Int16,
    "_shoe": pl.Int32,
}


def table_settings(index: int) -> dict[str, Any]:
    """Settings of the `index`-th simulated table (0-based), as written to the house file."""
    variant, ez, pit = TABLE_CYCLE[index % len(TABLE_CYCLE)]
    return {
        "table_id": f"BAC-{index + 1:02d}",
        "game": "baccarat",
        "pit": pit,
        "variant": variant,
        "ez": ez,
        "procedure": PROCEDURES[pit],
    }


@dataclass
class Simulation:
    """A simulated log: `events` (hand-history-v1 columns), `tables`, and `truth`.

    `events` has the spec's columns in order: strings for ids and `ts`, enums
    for the closed vocabularies (event, target, card, bet, mode, winner, game),
    Int64 integers, a boolean `accepted` and a Decimal(12, 2) `amount`. Rows
    of a table are in seq order; tables are interleaved by time.
    """

    events: pl.DataFrame
    tables: list[dict[str, Any]]
    truth: pl.DataFrame
    seed: int
    start: datetime
    house: dict[str, Any] = field(default_factory=dict)  # the [baccarat] section used


class _Simulator(TableRounds):
    def __init__(self, rounds: int, tables: int, seed: int, faults: float, start: datetime,
                 order_faults: Iterable[str] = ()):
        self.rng = random.Random(seed)
        self.order = OrderPlants(order_faults, seed)
        on: date = start.date()
        self.rules = _Rules(load_rulesets().params("baccarat", on=on))
        self.planner = _Planner(faults, rounds)
        self.remedies = _Remedies(faults, self.planner)
        self.truth: list[_Truth] = []
        TableRounds.__init__(self)
        self.settings = [table_settings(i) for i in range(tables)]
        base, extra = divmod(rounds, tables)
        self.tables = [
            _Table(self, i, s, base + (1 if i < extra else 0)) for i, s in enumerate(self.settings)
        ]

    def events(self, start: datetime) -> pl.DataFrame:
        naive = start.replace(tzinfo=None)
        offset = offset_text(start)
        parts = []
        for index, table in enumerate(self.tables):
            if not table.frames:
                continue
            frame = pl.concat(table.frames, rechunk=False)
            table.frames = []
            parts.append(
                frame.with_columns(
                    pl.lit(table.table_id).alias("table_id"),
                    pl.lit(index, pl.Int32).alias("_table"),
                    pl.int_range(1, frame.height + 1, dtype=pl.Int64).alias("seq"),
                )
            )
        if not parts:
            parts.append(
                pl.DataFrame(schema=_CHUNK_SCHEMA).with_columns(
                    pl.lit(None, pl.String).alias("table_id"),
                    pl.lit(None, pl.Int32).alias("_table"),
                    pl.lit(None, pl.Int64).alias("seq"),
                )
            )
        frame = pl.concat(parts).lazy().sort("_t", "_table", "seq")
        seconds = pl.duration(seconds=pl.col("_t"))
        ts = (pl.lit(naive) + seconds).dt.strftime("%Y-%m-%dT%H:%M:%S") + pl.lit(offset)
        shoe_id = pl.format(
            "{}-{}", pl.col("table_id"), pl.col("_shoe").cast(pl.String).str.zfill(4)
        )
        amount = (pl.col("amount_cents").cast(AMOUNT_DTYPE) / 100).cast(AMOUNT_DTYPE)
        columns = {
            "table_id": pl.col("table_id"),
            "game": pl.lit("baccarat", pl.Enum(v.GAMES)),
            "shoe_id": shoe_id,
            "round": pl.col("round"),
            "seq": pl.col("seq"),
            "ts": ts,
            "event": pl.col("event"),
            "seat": pl.col("seat"),
            "hand": pl.lit(None, pl.Int64),
            "target": pl.col("target"),
            "card": pl.col("card"),
            "bet": pl.col("bet"),
            "amount": amount,
            "action": pl.lit(None, pl.String),
            "player_id": pl.lit(None, pl.String),
        }
        columns.update({c: pl.col(c) for c in v.COLUMNS if c not in columns})
        columns.update({c: pl.col(c).cast(pl.Int64) for c in v.INTEGER_COLUMNS if c != "hand"})
        columns["exposure"] = pl.col("exposure").cast(pl.String)
        columns["dealer_id"] = dealer_on(
            "D-1", len(self.tables), pl.col("_table"), pl.col("_t"), pl.col("event")
        )
        return frame.select(expr.alias(name) for name, expr in columns.items()).collect(
            engine="streaming"
        )

    def truth_frame(self) -> pl.DataFrame:
        # a fault whose row was never written (its seq was never set) cannot be found
        return truth_frame(t for t in self.truth if t.row is None or t.seq is not None)


def simulate(
    rounds: int,
    tables: int = 4,
    seed: int = 0,
    faults: float = 0.0,
    start: datetime = DEFAULT_START,
    order_faults: Iterable[str] = (),
) -> Simulation:
    """Simulate `rounds` rounds of baccarat over `tables` tables (see the module docstring).

    `faults` is the share of rounds that get a planted fault (0 gives a clean
    log); `start` is when the first table opens (its UTC offset is written
    on every timestamp; a naive datetime writes local time without one).
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
    sim = _Simulator(rounds, tables, seed, faults, start, order_faults)
    sim.run()
    house = {
        "commission_percent": COMMISSION_PERCENT,
        "tie_pays": TIE_PAYS,
        "dragon_bonus_pay_table": DRAGON_TABLE,
        "dragon7_pays": DRAGON7_PAYS,
        "seats": list(SEATS),
    }
    return Simulation(
        events=sim.events(start),
        tables=[dict(s) for s in sim.settings],
        truth=sim.truth_frame(),
        seed=seed,
        start=start,
        house=house,
    )
