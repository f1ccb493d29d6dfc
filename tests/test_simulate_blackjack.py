"""The blackjack simulator: clean logs obey 9 NYCRR 5324.10, planted faults break only theirs.

`Referee` below is a small scalar auditor written from the project's blackjack
conventions, independent of the simulator's code: it replays every round
(hand totals, decisions, split order, the dealer's draw, insurance,
surrender, settlement with the payout limit) and names the rules broken. A
clean log must give it nothing; a log with planted faults must give exactly
the (rule, table, shoe, round) of the truth file.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import date
from typing import Any

import polars as pl
import pytest

from auditor.house import load as load_house
from auditor.ingest.load import ingest
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import ENCODINGS, write_events, write_house_rules
from auditor.simulate.blackjack import (
    EXPOSURE_REMEDIES,
    FAULT_KINDS,
    MISSED_CARD_REMEDIES,
    simulate,
    table_settings,
)

ON = date(2026, 11, 1)
VALUES = {**{str(n): n for n in range(2, 10)}, "A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}


@pytest.fixture(scope="module")
def clean():
    return simulate(rounds=600, tables=5, seed=11)


@pytest.fixture(scope="module")
def faulty():
    return simulate(rounds=600, tables=4, seed=5, faults=0.1)


def _value(card: str) -> int:
    return VALUES[card[0]]


def _total(cards: list[str]) -> tuple[int, bool]:
    hard = sum(_value(c) for c in cards)
    if any(c[0] == "A" for c in cards) and hard <= 11:
        return hard + 10, True
    return hard, False


def _odds(text: str) -> tuple[int, int]:
    num, den = text.split(":")
    return int(num), int(den)


# --- the referee: a small scalar auditor ---------------------------------------------


class _Hand:
    def __init__(self) -> None:
        self.cards: list[str] = []
        self.actions: list[str] = []
        self.doubled = False
        self.after_double = 0
        self.split_ace = False
        self.complete = False
        self.surrendered = False
        self.refused = False  # refused a card exposed in error (i)(1)
        self.dead = False  # declared dead (i)(3), (i)(4)(ii)
        self.wagers: dict[tuple[str, str | None], int] = {}


class Referee:
    """Checks one log; `found` holds (rule_id, table_id, shoe_id, round or None)."""

    def __init__(self, params: dict[str, Any], tables: list[dict[str, Any]]):
        self.params = params
        self.tables = {t["table_id"]: t for t in tables}
        self.found: set[tuple[str, str, str, int | None]] = set()

    def run(self, events: pl.DataFrame) -> set[tuple[str, str, str, int | None]]:
        for (table_id,), rows in events.sort("table_id", "seq").group_by(
            "table_id", maintain_order=True
        ):
            shoes: list[list[dict]] = []
            for row in rows.to_dicts():
                if row["event"] == "shuffle" or not shoes:
                    shoes.append([])
                shoes[-1].append(row)
            for shoe in shoes:
                self.shoe(self.tables[table_id], shoe)
        return self.found

    def min_decks(self, table: dict[str, Any]) -> int:
        p = self.params
        least = p["min_decks_hand_dealt"] if table["dealt_from"] == "hand" else p["min_decks"]
        if table["optional_wagers"]:
            least = max(least, p["min_decks_other_optional"])
        return least

    def shoe(self, table: dict[str, Any], rows: list[dict]) -> None:
        table_id, shoe_id = table["table_id"], rows[0]["shoe_id"]
        assert rows[0]["event"] == "shuffle" and rows[0]["round"] == 0
        decks = rows[0]["decks"]
        if decks < self.min_decks(table):
            self.found.add(("BJ102", table_id, shoe_id, None))
        seen: Counter[str] = Counter()
        for row in rows:
            if row["event"] in ("burn", "card"):
                seen[row["card"]] += 1
                if seen[row["card"]] == decks + 1:
                    self.found.add(("BJ103", table_id, shoe_id, row["round"]))
        rounds: dict[int, list[dict]] = defaultdict(list)
        for row in rows[1:]:
            if row["event"] == "burn" and row["round"] == 0:
                continue  # the shoe's burn; a round's burns are its exposed cards' (i)(1)
            rounds[row["round"]].append(row)
        numbers = sorted(rounds)
        assert numbers == list(range(1, len(numbers) + 1)), (shoe_id, numbers)
        cover = [row["round"] for row in rows if row["event"] == "cover_card"]
        assert len(cover) <= 1
        if cover and numbers[-1] > cover[0]:
            self.found.add(("BJ104", table_id, shoe_id, cover[0] + 1))
        for r in numbers:
            body = [row for row in rounds[r] if row["event"] != "cover_card"]
            assert body[0]["event"] == "round_start" and body[-1]["event"] == "round_end"
            Round(self, table, shoe_id, r).replay(body[1:-1])


class Round:
    def __init__(self, ref: Referee, table: dict[str, Any], shoe_id: str, number: int):
        self.ref = ref
        self.table = table
        self.where = (table["table_id"], shoe_id, number)
        self.hands: dict[tuple[int, int], _Hand] = {}
        self.mains: dict[int, dict[str | None, int]] = defaultdict(dict)
        self.splits: Counter[int] = Counter()
        self.aces_split: set[int] = set()
        self.dealer: list[str] = []
        self.dealt = False
        self.insurance: dict[tuple[int, str | None], int] = {}
        self.ins_rows: dict[tuple[int, str | None], list[dict]] = defaultdict(list)
        self.settles: dict[tuple[int, int, str, str | None], list[dict]] = defaultdict(list)
        self.surrender_rows: dict[tuple[int, int], list[dict]] = defaultdict(list)
        # (i)(1): a card exposed and not yet dealt or burned, the boxes that refused, and the
        # dealer's cards and whether a box took a card after an exposed card's burn
        self.exposed: str | None = None
        self.refused_boxes: set[int] = set()
        self.burned_at: list[str] | None = None
        self.checked = False  # the hole card was checked (hole_card_check)
        # (i)(4): the hands that asked for a card not dealt yet, and whether a later box has
        # had a card or action since; whether the settlement after play began; (f)(2): the
        # patrons whose insurance and surrender were settled together
        self.asked: dict[tuple[int, int], bool] = {}
        self.settling = False
        self.netted: set[tuple[int, str | None]] = set()

    def flag(self, rule: str) -> None:
        self.ref.found.add((rule, *self.where))

    def natural(self, seat: int, number: int) -> bool:
        hand = self.hands[seat, number]
        return (
            number == 1
            and not self.splits[seat]
            and len(hand.cards) == 2
            and _total(hand.cards)[0] == 21
        )

    def replay(self, rows: list[dict]) -> None:
        wagers = [r for r in rows if r["event"] == "wager" and r["bet"] == "main"]
        seats = sorted({r["seat"] for r in wagers})
        if max(seats) > 7 or len(seats) > 7:
            self.flag("BJ101")
        for row in wagers:
            self.mains[row["seat"]][row["player_id"]] = int(row["amount_cents"])
            hand = self.hands.setdefault((row["seat"], 1), _Hand())
            hand.wagers["main", row["player_id"]] = int(row["amount_cents"])
        if any(len(p) > 3 for p in self.mains.values()):
            self.flag("BJ601")
        # a box passed over in the deal (i)(3) is dealt no card
        seats = sorted({r["seat"] for r in rows if r["event"] == "card" and r["seat"]})
        first = [r["seat"] for r in rows if r["event"] == "card"][: 2 * len(seats) + 2]
        targets = [r["target"] for r in rows if r["event"] == "card"][: 2 * len(seats) + 2]
        n = len(seats)
        if targets.index("dealer") > n:  # (i)(2): the dealer missed the up card
            assert first[:n] == seats, self.where
            if targets[2 * n :] != ["dealer", "dealer"]:
                self.flag("BJ803")
        else:
            assert first[:n] == seats and first[n + 1 : 2 * n + 1] == seats, self.where
            assert targets[n] == "dealer" and targets[2 * n + 1] == "dealer", self.where
        for row in rows:
            getattr(self, "on_" + row["event"])(row)
        self.finish()

    # -- rows

    def on_no_more_bets(self, row: dict) -> None:
        pass

    def on_card_exposed(self, row: dict) -> None:
        assert row["exposure"] == "exposed" and self.dealt, self.where
        self.exposed = row["card"]

    def on_burn(self, row: dict) -> None:
        if row["card"] == self.exposed:  # burned before any other card: judged at the end
            self.burned_at = list(self.dealer)
        self.exposed = None

    def on_dead_hand(self, row: dict) -> None:
        hand = self.hands[row["seat"], row["hand"]]
        hand.dead = hand.complete = True

    def late(self, seat: int, number: int | None, answer: bool) -> None:
        """(i)(4): a card or action of box `seat`; `answer`, a card to hand `number`. A hand's
        card asked for and dealt after a later box's card or action, once the dealer drew a
        third card or the settlement began, is late."""
        if answer and (seat, number) in self.asked:
            later = self.asked.pop((seat, number))
            if later and (len(self.dealer) >= 3 or self.settling):
                self.flag("BJ808")
        for key in self.asked:
            if key[0] < seat:
                self.asked[key] = True

    def called(self, row: dict) -> None:
        """(h)(2): on a box several patrons wager on, the seated player (no player_id) calls
        the decisions, or with no one seated the highest main wager."""
        pid, patrons = row["player_id"], self.mains[row["seat"]]
        if pid is None or len(patrons) < 2:
            return
        if None in patrons or patrons.get(pid) != max(patrons.values()):
            self.flag("BJ604")

    def on_hole_card_check(self, row: dict) -> None:
        if _value(self.dealer[0]) not in (1, 10):
            self.flag("BJ806")
        self.checked = True

    def exposure(self, row: dict) -> None:
        """(i)(1): the first card after an exposed card is that card; after its burn, no
        box that had not refused takes a card; a hand that refused takes none."""
        if self.exposed is not None and row["card"] != self.exposed:
            self.flag("BJ801")
        self.exposed = None
        if row["target"] == "seat":
            if self.burned_at is not None and row["seat"] not in self.refused_boxes:
                self.flag("BJ801")
            if self.hands[row["seat"], row["hand"]].refused:
                self.flag("BJ802")

    def on_wager(self, row: dict) -> None:
        seat, pid, bet = row["seat"], row["player_id"], row["bet"]
        cents = int(row["amount_cents"])
        if bet == "main":
            return
        if bet == "insurance":
            if self.checked:
                self.flag("BJ807")
            if _value(self.dealer[0]) != 1:
                self.flag("BJ301")
            if cents > math.ceil(self.mains[seat][pid] / 100 / 2) * 100:
                self.flag("BJ302")
            self.insurance[seat, pid] = cents
            return
        hand = self.hands.setdefault((seat, row["hand"]), _Hand())
        if bet == "split" and cents != self.mains[seat][pid]:
            self.flag("BJ204")
        if bet == "double" and pid is not None and not hand.doubled:
            self.flag("BJ603")
        hand.wagers[bet, pid] = cents

    def on_card(self, row: dict) -> None:
        self.exposure(row)
        if row["target"] == "seat":
            self.late(row["seat"], row["hand"], answer=True)
        if row["target"] == "dealer":
            self.dealer.append(row["card"])
            if len(self.dealer) == 2:
                self.dealt = True
            return
        seat, number = row["seat"], row["hand"]
        hand = self.hands[seat, number]
        if self.dealt:
            for (s, h), other in self.hands.items():
                if other.complete or (s, h) >= (seat, number) or not self.splits[s]:
                    continue
                self.flag("BJ205")
            if hand.split_ace and len(hand.cards) >= 2:
                self.flag("BJ207")
            if hand.doubled:
                hand.after_double += 1
        hand.cards.append(row["card"])
        total = _total(hand.cards)[0]
        if self.dealt and (
            total >= 21 or hand.doubled or (hand.split_ace and len(hand.cards) == 2)
        ):
            hand.complete = True
        if self.dealt and self.natural(seat, number):
            hand.complete = True

    def on_action(self, row: dict) -> None:
        seat, number, action = row["seat"], row["hand"], row["action"]
        hand = self.hands[seat, number]
        self.called(row)
        self.late(seat, number, answer=False)
        if action in ("hit", "double"):
            self.asked[seat, number] = False
        if action == "refuse":  # the hand keeps what it holds; no first decision of (f)(1)
            hand.refused = hand.complete = True
            self.refused_boxes.add(seat)
            return
        total = _total(hand.cards)[0]
        aces_again = (
            action == "split" and hand.split_ace and all(_value(c) == 1 for c in hand.cards)
        )
        if hand.split_ace and not aces_again:
            self.flag("BJ207")
        if action == "hit" and total >= 21:
            self.flag("BJ201")
        elif action == "stand":
            hand.complete = True
        elif action == "double":
            if len(hand.cards) != 2 or self.natural(seat, number):
                self.flag("BJ202")
            hand.doubled = True
            hand.complete = True
        elif action == "split":
            self.split(seat, number, hand)
        elif action == "surrender":
            if not self.table["surrender"]:
                self.flag("BJ401")
            if len(hand.cards) != 2 or hand.actions or number != 1 or self.splits[seat]:
                self.flag("BJ402")
            hand.surrendered = True
            hand.complete = True
        hand.actions.append(action)

    def split(self, seat: int, number: int, hand: _Hand) -> None:
        values = [_value(c) for c in hand.cards]
        if len(values) != 2 or values[0] != values[1]:
            self.flag("BJ204")
        if self.splits[seat] >= self.ref.params["max_splits"] or hand.doubled:
            self.flag("BJ206")
        aces = values[0] == 1
        if aces and seat in self.aces_split:
            self.flag("BJ208")
        self.splits[seat] += 1
        new = _Hand()
        new.cards = [hand.cards.pop()]
        self.hands[seat, max(h for s, h in self.hands if s == seat) + 1] = new
        hand.actions = []
        hand.complete = False
        if aces:
            self.aces_split.add(seat)
            hand.split_ace = new.split_ace = True

    def on_collect(self, row: dict) -> None:
        self.settle(row)

    on_pay = on_push = on_collect

    def settle(self, row: dict) -> None:
        seat, pid, bet = row["seat"], row["player_id"], row["bet"]
        if bet == "insurance":
            self.ins_rows[seat, pid].append(row)
            return
        key = (seat, row["hand"], bet, pid)
        hand = self.hands.get((seat, row["hand"]))
        if hand is not None and not (hand.surrendered or hand.dead):
            self.settling = True  # the settlement after play
        if hand is not None and hand.surrendered and (bet, pid) in hand.wagers:
            self.surrender_rows[seat, row["hand"]].append(row)
            return
        self.settles[key].append(row)

    # -- the end of the round

    def finish(self) -> None:
        params, table = self.ref.params, self.table
        up, hole = (_value(c) for c in self.dealer[:2])
        dealer_bj = _total(self.dealer[:2])[0] == 21
        odds = _odds(table["insurance_pays"])
        self.settled_together(dealer_bj, odds)
        for key, cents in self.insurance.items():
            got = self.ins_rows.pop(key, [])
            if len(got) != 1:
                self.flag("BJ706")
                continue
            event, amount = got[0]["event"], int(got[0]["amount_cents"])
            if dealer_bj:
                low = max(odds[0] / odds[1], params["insurance_min_odds"])
                if event != "pay" or amount < cents * low:
                    self.flag("BJ303")
            elif event != "collect" or amount != cents:
                self.flag("BJ304")
        if self.ins_rows:
            self.flag("BJ706")
        if dealer_bj:
            assert all(not h.actions for h in self.hands.values()), self.where
            assert len(self.dealer) == 2, self.where
        else:
            self.dealer_play(up)
            self.burned_for_dealer()
        self.surrenders(up)
        self.outcomes(dealer_bj)

    def settled_together(self, dealer_bj: bool, odds: tuple[int, int]) -> None:
        """(f)(2): a patron's insurance and surrender not each settled as owed, but together
        moving what the two were owed together (the pays and pushes of both less both
        stakes; nothing where no row): netted, BJ405's and no other rule's."""
        for (seat, pid), insured in list(self.insurance.items()):
            hand = self.hands.get((seat, 1))
            if hand is None or not hand.surrendered or ("main", pid) not in hand.wagers:
                continue
            main = hand.wagers["main", pid]
            half = main // 2
            ins_rows = self.ins_rows.get((seat, pid), [])
            surr_rows = [r for r in self.surrender_rows.get((seat, 1), []) if r["player_id"] == pid]
            got = sorted((r["event"], int(r["amount_cents"])) for r in ins_rows)
            surr_got = sorted((r["event"], int(r["amount_cents"])) for r in surr_rows)
            if dealer_bj:
                owed, surr_owed = [("pay", insured * odds[0] // odds[1])], [("collect", main)]
                net = insured * odds[0] // odds[1] - main
            else:
                owed, surr_owed = [("collect", insured)], [("collect", half), ("push", main - half)]
                net = -insured - half
            if got == owed and surr_got == sorted(surr_owed):
                continue
            moved = [int(r["amount_cents"]) for r in ins_rows + surr_rows if r["event"] != "collect"]
            pot = sum(moved) - insured - main if ins_rows or surr_rows else 0
            if pot == net:
                self.flag("BJ405")
                del self.insurance[seat, pid]
                self.ins_rows.pop((seat, pid), None)
                self.netted.add((seat, pid))

    def dealer_play(self, up: int) -> None:
        live = [
            h
            for (s, n), h in self.hands.items()
            if not (h.surrendered or h.dead or _total(h.cards)[0] > 21 or self.natural(s, n))
        ]
        cards = self.dealer
        if not live:
            if len(cards) > 2:
                self.flag("BJ502")
            return
        for k in range(2, len(cards) + 1):
            total, soft = _total(cards[:k])
            must = total < 17 or (total == 17 and soft and self.table["dealer_hits_soft_17"])
            drew = k < len(cards)
            if must != drew:
                self.flag("BJ501")
                return

    def burned_for_dealer(self) -> None:
        """(i)(1): an exposed card burned while the dealer had to draw (on the cards held
        then) and some player hand was live."""
        if self.burned_at is None or len(self.burned_at) < 2:
            return
        live = [
            h
            for (s, n), h in self.hands.items()
            if not (h.surrendered or h.dead or _total(h.cards)[0] > 21 or self.natural(s, n))
        ]
        total, soft = _total(self.burned_at)
        if live and (total < 17 or (total == 17 and soft and self.table["dealer_hits_soft_17"])):
            self.flag("BJ801")

    def surrenders(self, up: int) -> None:
        rule = "BJ404" if up in (1, 10) else "BJ403"
        for (seat, number), rows in self.surrender_rows.items():
            hand = self.hands[seat, number]
            for (bet, pid), cents in hand.wagers.items():
                if (seat, pid) in self.netted:
                    continue
                mine = sorted(
                    (r["event"], int(r["amount_cents"]))
                    for r in rows
                    if r["player_id"] == pid and r["bet"] == bet
                )
                half = cents // 2
                if mine != sorted([("collect", half), ("push", cents - half)]):
                    self.flag(rule)

    def outcomes(self, dealer_bj: bool) -> None:
        table = self.table
        dealer_total = _total(self.dealer)[0]
        bj = _odds(table["blackjack_pays"])
        limit = table["payout_limit"] * 100
        wagers = {
            (s, n, bet, pid): cents
            for (s, n), h in self.hands.items()
            if not h.surrendered
            for (bet, pid), cents in h.wagers.items()
        }
        self.dead_hands(wagers)
        for key in self.settles:
            if key not in wagers:
                seat, number, bet, pid = key
                self.flag("BJ602" if pid is not None and bet == "split" else "BJ706")
        paid: Counter[tuple[int, int, str | None]] = Counter()
        for key, cents in wagers.items():
            seat, number, bet, pid = key
            hand = self.hands[seat, number]
            got = self.settles.get(key, [])
            if len(got) != 1:
                self.flag("BJ706")
                continue
            event, amount = got[0]["event"], int(got[0]["amount_cents"])
            total = _total(hand.cards)[0]
            natural = self.natural(seat, number)
            if hand.doubled and hand.after_double != 1 and not (
                hand.refused and hand.after_double == 0
            ):
                self.flag("BJ203")
            if dealer_bj:
                want = ("push", cents) if natural else ("collect", cents)
                if (event, amount) != want:
                    self.flag("BJ703" if natural else "BJ701")
                continue
            if total > 21:
                if (event, amount) != ("collect", cents):
                    self.flag("BJ704")
                continue
            room = limit - paid[seat, number, pid]
            if natural:
                due = cents * bj[0] // bj[1]
                if event == "pay" and amount > room:
                    self.flag("BJ705")
                elif (event, amount) != ("pay", min(due, room)):
                    self.flag("BJ702")
            elif dealer_total > 21 or total > dealer_total:
                if event == "pay" and amount > room:
                    self.flag("BJ705")
                elif (event, amount) != ("pay", min(cents, room)):
                    self.flag("BJ701")
            elif total == dealer_total:
                if (event, amount) != ("push", cents):
                    self.flag("BJ703")
            elif (event, amount) != ("collect", cents):
                self.flag("BJ701")
            if event == "pay":
                paid[seat, number, pid] += amount

    def dead_hands(self, wagers: dict[tuple[int, int, str, str | None], int]) -> None:
        """(i)(3), (i)(4)(ii): a dead hand's wagers (taken out of `wagers`) are each owed a
        push; one dealt no card may stay unsettled for the next round. A collect or pay is
        BJ804's (no card) or BJ805's, a wager of a hand with cards never settled BJ706's."""
        for key in [k for k in wagers if self.hands[k[0], k[1]].dead]:
            cents = wagers.pop(key)
            got = self.settles.pop(key, [])
            carded = bool(self.hands[key[0], key[1]].cards)
            if any(r["event"] in ("collect", "pay") for r in got):
                self.flag("BJ805" if carded else "BJ804")
            elif (got or carded) and [
                (r["event"], int(r["amount_cents"])) for r in got
            ] != [("push", cents)]:
                self.flag("BJ706")


def _referee(sim) -> set[tuple[str, str, str, int | None]]:
    params = load_rulesets().params("blackjack", on=ON)
    return Referee(params, sim.tables).run(
        sim.events.with_columns(
            (pl.col("amount") * 100).cast(pl.Int64).alias("amount_cents"),
            pl.col("event", "target", "card", "bet", "action").cast(pl.String),
        )
    )


def _truth_keys(sim) -> set[tuple[str, str, str, int | None]]:
    """The planted faults; a right remedy (no rule) is found by nothing."""
    return {
        (t["rule_id"], t["table_id"], t["shoe_id"], t["round"])
        for t in sim.truth.iter_rows(named=True)
        if t["rule_id"] is not None
    }


# --- the tests -----------------------------------------------------------------------


def test_clean_log_obeys_the_rules(clean):
    assert _referee(clean) == set()
    assert clean.truth.height == 0


def test_faults_are_exactly_the_truth(faulty):
    assert _referee(faulty) == _truth_keys(faulty)


def test_same_seed_same_log_other_seed_other_log():
    one = simulate(rounds=150, tables=3, seed=7, faults=0.2)
    two = simulate(rounds=150, tables=3, seed=7, faults=0.2)
    assert one.events.equals(two.events)
    assert one.truth.equals(two.truth)
    other = simulate(rounds=150, tables=3, seed=8, faults=0.2)
    assert not other.events.equals(one.events)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_encoding_ingests_without_problems(tmp_path, faulty, encoding):
    path = write_events(faulty.events, tmp_path / f"log.{encoding}", encoding)
    result = ingest(expand([str(path)]))
    assert result.problems.height == 0, result.problems
    assert result.unauditable.height == 0
    assert result.rows_read == faulty.events.height
    assert result.audited.height == faulty.events.height


def test_house_rules_file_parses(tmp_path, clean):
    path = write_house_rules(clean.tables, tmp_path / "house.toml", blackjack=clean.house)
    house = load_house(path, load_rulesets(), ON)
    assert sorted(house.tables) == [f"BJ-0{i}" for i in range(1, 6)]
    for settings in clean.tables:
        table = house.table(settings["table_id"], "blackjack")
        assert table.listed and table.pit == settings["pit"]
        for key, value in settings.items():
            if key not in ("table_id", "game", "pit"):
                assert table[key] == value, (settings["table_id"], key)
    assert house.table("BJ-03", "blackjack")["dealt_from"] == "hand"
    assert house.table("BJ-02", "blackjack")["payout_limit"] == 500
    assert table_settings(5) == {**table_settings(0), "table_id": "BJ-06"}


def test_card_counts_within_the_decks_and_cover_card_ends_the_shoe(clean):
    events = clean.events
    decks = events.filter(pl.col("event") == "shuffle").select("shoe_id", "decks")
    counts = (
        events.filter(pl.col("event").is_in(["burn", "card"]))
        .group_by("shoe_id", "card")
        .len()
        .join(decks, on="shoe_id")
    )
    assert counts.height and (counts["len"] <= counts["decks"]).all()
    assert set(decks["decks"]) == {2, 6}
    shoes = (
        events.group_by("table_id", "shoe_id")
        .agg(
            pl.col("round").max().alias("last"),
            pl.col("round").filter(pl.col("event") == "cover_card").alias("cover"),
        )
        .sort("table_id", "shoe_id")
    )
    for table_id, group in shoes.group_by("table_id", maintain_order=True):
        for row in group.head(group.height - 1).iter_rows(named=True):
            assert row["cover"] == [row["last"]], (table_id, row)


def _round_rows(events: pl.DataFrame) -> pl.DataFrame:
    return events.with_columns(
        (pl.col("amount") * 100).cast(pl.Int64).alias("cents"),
        pl.col("card")
        .cast(pl.String)
        .str.slice(0, 1)
        .replace_strict({k: v for k, v in VALUES.items()}, default=None, return_dtype=pl.Int64)
        .alias("value"),
    )


def test_natural_pays_the_posted_odds(clean):
    rows = _round_rows(clean.events)
    key = ["table_id", "shoe_id", "round", "seat"]
    hand1 = rows.filter(
        (pl.col("event") == "card") & (pl.col("target") == "seat") & (pl.col("hand") == 1)
    )
    cards = hand1.group_by(key).agg(pl.col("value"))
    splits = rows.filter(pl.col("action") == "split").select(key).unique()
    naturals = cards.filter(
        (pl.col("value").list.len() == 2)
        & (pl.col("value").list.sum() == 11)
        & pl.col("value").list.contains(1)
    ).join(splits, on=key, how="anti")
    money = rows.filter(pl.col("bet") == "main").select(*key, "event", "cents", "player_id")
    wagers = money.filter(pl.col("event") == "wager").drop("event").rename({"cents": "stake"})
    pays = money.filter(pl.col("event") == "pay").drop("event")
    odds = pl.DataFrame(clean.tables).select("table_id", "blackjack_pays", "payout_limit")
    paid = (
        naturals.join(wagers, on=key)
        .join(pays, on=[*key, "player_id"], nulls_equal=True)
        .join(odds, on="table_id")
    )
    assert paid.height > 20
    for row in paid.iter_rows(named=True):
        num, den = _odds(row["blackjack_pays"])
        assert row["cents"] == min(row["stake"] * num // den, row["payout_limit"] * 100), row
    three_two = paid.filter(
        (pl.col("blackjack_pays") == "3:2")
        & (pl.col("stake") * 3 // 2 <= pl.col("payout_limit") * 100)
    )
    six_five = paid.filter(pl.col("blackjack_pays") == "6:5")
    assert three_two.height and six_five.height
    assert (three_two["cents"] * 2 == three_two["stake"] * 3).all()  # $25 pays $37.50
    assert (six_five["cents"] * 5 == six_five["stake"] * 6).all()
    capped = paid.filter(
        (pl.col("blackjack_pays") == "3:2") & (pl.col("cents") < pl.col("stake") * 3 // 2)
    )
    assert capped.height and (capped["table_id"] == "BJ-02").all()


def test_doubles_settle_on_the_double_wager_too(clean):
    rows = _round_rows(clean.events)
    key = ["table_id", "shoe_id", "round", "seat", "hand", "player_id"]
    money = rows.filter(pl.col("event").is_in(["wager", "pay", "push", "collect"]))
    doubles = money.filter((pl.col("bet") == "double") & (pl.col("event") == "wager"))
    settled = money.filter((pl.col("bet") == "double") & (pl.col("event") != "wager"))
    stake = money.filter(pl.col("bet").is_in(["main", "split"]) & (pl.col("event") != "wager"))
    both = (
        doubles.select(*key, pl.col("cents").alias("doubled"))
        .join(settled.select(*key, "event", "cents"), on=key, how="left", nulls_equal=True)
        .join(
            stake.select(*key, pl.col("event").alias("stake_event")),
            on=key,
            how="left",
            nulls_equal=True,
        )
    )
    assert both.height > 50
    assert both["event"].null_count() == 0
    assert (both["event"] == both["stake_event"]).all()  # one outcome for the hand
    assert (both["cents"] == both["doubled"]).all()  # wins pay 1:1 on the double too
    assert set(both["event"]) == {"pay", "push", "collect"}


def test_truth_points_at_rounds_and_holds_every_rule(faulty):
    events = faulty.events
    # the right remedies (no rule, a "remedied_" kind) are in rounds of their own
    remedied = faulty.truth.filter(pl.col("rule_id").is_null())
    assert set(EXPOSURE_REMEDIES) <= set(remedied["fault"])
    assert set(MISSED_CARD_REMEDIES) <= set(remedied["fault"])
    assert remedied["fault"].str.starts_with("remedied_").all()
    assert remedied["round"].null_count() == 0
    truth = faulty.truth.filter(pl.col("rule_id").is_not_null())
    rounds_of = ["table_id", "shoe_id", "round"]
    assert remedied.select(rounds_of).join(truth.select(rounds_of), on=rounds_of).is_empty()
    assert remedied.select(rounds_of).is_duplicated().sum() == 0
    assert set(truth["rule_id"]) == set(FAULT_KINDS)
    assert truth.height == round(0.1 * 600)
    assert (truth["fault"] == truth["rule_id"].replace_strict(FAULT_KINDS)).all()
    rounds = events.select("table_id", "shoe_id", "round").unique()
    played = truth.filter(pl.col("round").is_not_null())
    assert played.join(rounds, on=["table_id", "shoe_id", "round"], how="anti").height == 0
    assert played.select("table_id", "shoe_id", "round").is_duplicated().sum() == 0
    rows = truth.filter(pl.col("seq").is_not_null()).join(
        events.select(
            "table_id",
            "seq",
            pl.col("shoe_id").alias("at_shoe"),
            pl.col("round").alias("at_round"),
            "event",
        ),
        on=["table_id", "seq"],
        how="left",
    )
    assert rows["event"].null_count() == 0
    assert (rows["at_shoe"] == rows["shoe_id"]).all()
    in_round = rows.filter(pl.col("round").is_not_null())
    assert (in_round["at_round"] == in_round["round"]).all()
    shoe_level = rows.filter(pl.col("round").is_null())
    assert set(shoe_level["rule_id"]) == {"BJ102"}
    assert (shoe_level["event"] == "shuffle").all()


def test_a_round_takes_about_a_minute(clean):
    starts = (
        clean.events.filter(pl.col("event") == "round_start")
        .with_columns(pl.col("ts").str.to_datetime("%Y-%m-%dT%H:%M:%S%:z"))
        .sort("table_id", "seq")
        .select(pl.col("ts").diff().over("table_id").dt.total_seconds().alias("gap"))
    )
    assert 45 <= starts["gap"].mean() <= 80
    assert clean.events["ts"][0].endswith("-05:00")
