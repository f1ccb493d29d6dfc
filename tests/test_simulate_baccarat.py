"""The baccarat simulator: clean logs obey the rules, planted faults break only theirs.

The clean-log checks are independent of the simulator's own code: the draws,
points, winners and payouts are replayed with the polars expressions of
`auditor.games.baccarat.tableau`, and `Referee` below is a small scalar
auditor of everything else (shoe, burn, cover card, wagers, settlement order,
commission, curator, cards astray and the shoe's end (i)). On a log with planted
faults the referee must find exactly the faults of the truth file: each at its
place, under its rule id, and nothing else (nothing in the rounds of the right
remedies the truth lists with no rule id).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from auditor.games.baccarat import tableau
from auditor.house import load as load_house
from auditor.ingest import vocabulary
from auditor.ingest.load import ingest
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import (
    ENCODINGS,
    FAULT_KINDS,
    events_frame,
    simulate,
    write_events,
    write_house_rules,
)
from auditor.simulate.baccarat import REMEDY_KINDS

ON = date(2026, 11, 1)
SEATS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15)
PROCEDURE = {"PIT-1": "ii", "PIT-2": "iii"}


@pytest.fixture(scope="module")
def params() -> dict[str, Any]:
    return load_rulesets().params("baccarat", on=ON)


@pytest.fixture(scope="module")
def clean():
    return simulate(rounds=400, tables=4, seed=11)


@pytest.fixture(scope="module")
def faulty():
    return simulate(rounds=400, tables=4, seed=5, faults=0.1)


# --- the referee: a small scalar auditor ---------------------------------------------


class Referee:
    """Checks one log against the rules; `found` holds (rule_id, table_id, shoe_id, round)."""

    def __init__(self, params: dict[str, Any], tables: list[dict[str, Any]]):
        self.points = {rank: int(p) for rank, p in params["card_points"].items()}
        self.burns = {rank: int(b) for rank, b in params["burn_values"].items()}
        self.third = {
            int(b): set(cards) for b, cards in params["banker_draws_on_player_third"].items()
        }
        self.stood = {int(b) for b in params["banker_draws_when_player_stands"]}
        self.pay_table = params["dragon_bonus_pay_tables"]["A"]
        self.tables = {t["table_id"]: t for t in tables}
        self.found: list[tuple[str, str, str, int | None]] = []

    def flag(self, rule: str, where: tuple[str, str], round_no: int | None) -> None:
        self.found.append((rule, where[0], where[1], round_no))

    def value(self, card: str) -> int:
        return self.points[card[0]]

    def run(self, events: pl.DataFrame) -> list[tuple[str, str, str, int | None]]:
        for (table_id,), rows in events.sort("table_id", "seq").group_by(
            "table_id", maintain_order=True
        ):
            rows = rows.to_dicts()
            shoes: list[list[dict]] = []
            for row in rows:
                if row["event"] == "shuffle" or not shoes:
                    shoes.append([])
                shoes[-1].append(row)
            for k, shoe in enumerate(shoes):
                self.shoe(self.tables[table_id], shoe, followed=k + 1 < len(shoes))
        return self.found

    # -- a shoe

    def shoe(self, table: dict[str, Any], rows: list[dict], followed: bool) -> None:
        where = (table["table_id"], rows[0]["shoe_id"])
        decks = rows[0]["decks"]
        if decks != 8:
            self.flag("BA101", where, 0)
        self.count(where, rows, decks)
        # the (e) burn: the burns right after the shuffle (a discard's come after a card
        # exposed in error)
        burns = 0
        while 1 + burns < len(rows) and rows[1 + burns]["event"] == "burn":
            burns += 1
        if burns != 1 + self.burns[rows[1]["card"][0]]:
            self.flag("BA104", where, 0)
        blank = self.astray(where, rows)

        rounds: list[tuple[list[dict], list[dict]]] = []  # (shoe rows before, round rows)
        before: list[dict] = []
        for row in rows[1 + burns :]:
            if row["event"] in ("shoe_offer", "cover_card", "card_exposed", "burn") and (
                not rounds or rounds[-1][1][-1]["event"] == "round_end"
            ):
                before.append(row)
            elif row["event"] == "round_start":
                rounds.append((before, [row]))
                before = []
            else:
                rounds[-1][1].append(row)
        numbers = [body[0]["round"] for _, body in rounds]
        assert numbers == list(range(1, len(rounds) + 1)), where

        cover = [row["round"] for row in rows if row["event"] == "cover_card"]
        assert len(cover) <= 1, where
        if cover:
            # a hand no one wagers on after a card found face up is not the last hand
            after = len(rounds) - cover[0] - len([r for r in blank if r > cover[0]])
            if after > 1 or (followed and after != 1):
                self.flag("BA105", where, None)
        elif followed:
            raise AssertionError(f"{where}: a shoe ended without its cover card")

        self.owed: Counter[int] = Counter()
        curator: dict[str, Any] = {"seat": None, "prev": None, "first": True, "must": False}
        for shoe_rows, body in rounds:
            occupied = {row["seat"] for row in body if row["event"] == "wager"}
            r = body[0]["round"]
            for row in shoe_rows:
                assert row["round"] == (0 if r == 1 else r), (where, row)
            offers = [row for row in shoe_rows if row["event"] == "shoe_offer"]
            if r in blank:  # (i)(1)(ii): its offers are not judged, it obliges no pass
                self.round(table, where, body)
                continue
            if table["variant"] == "big":
                self.offers(where, r, offers, occupied, curator)
            else:
                assert not offers, where
            outcome = self.round(table, where, body)
            if table["variant"] == "big" and curator["seat"] is not None and outcome == "player":
                curator["must"] = True
        if followed and sum(self.owed.values()):
            self.flag("BA603", where, None)

    def count(self, where, rows: list[dict], decks: int) -> None:
        """(a)(4): no card more often than the decks hold; (i)(4): the round whose card is
        the shoe's last is void, and no round follows it. Counted: card and burn rows, and
        a card exposed in error with no later row of its card."""
        seen: Counter[str] = Counter()
        out, last_round = 0, None
        for k, row in enumerate(rows):
            counted = row["event"] in ("burn", "card") or (
                row["event"] == "card_exposed" and self.later(rows, k) is None
            )
            if not counted:
                continue
            seen[row["card"]] += 1
            out += 1
            if seen[row["card"]] == decks + 1:
                self.flag("BA102", where, row["round"])
            if row["event"] == "card" and last_round is not None and row["round"] != last_round:
                self.flag("BA904", where, row["round"])  # dealt after the shoe ran out
                last_round = row["round"]
            if row["event"] == "card" and out >= decks * 52 and last_round is None:
                last_round = row["round"]
                body = [x for x in rows if x["round"] == last_round]
                if not any(x["event"] == "void" for x in body):
                    self.flag("BA904", where, last_round)

    @staticmethod
    def later(rows: list[dict], k: int) -> int | None:
        """The later row of the card exposed at `k`: its next card or burn row."""
        card = rows[k]["card"]
        return next((j for j in range(k + 1, len(rows))
                     if rows[j]["event"] in ("card", "burn") and rows[j]["card"] == card), None)

    def astray(self, where, rows: list[dict]) -> set[int]:
        """Cards astray (i)(1)-(3); returns the hands no one wagers on after a disclosed
        card found face up ((i)(1)(ii))."""
        first_card: dict[int, int] = {}  # round -> the row of its first card
        wagered: set[int] = set()
        for k, row in enumerate(rows):
            if row["event"] == "card":
                first_card.setdefault(row["round"], k)
            elif row["event"] == "wager":
                wagered.add(row["round"])
        blank: set[int] = set()
        for k, row in enumerate(rows):
            if row["event"] != "card_exposed":
                continue
            later = self.later(rows, k)
            nexts = [r for r, at in first_card.items() if at > k]
            if not nexts:
                continue  # the next hand is in another shoe, or not in the log
            nxt = min(nexts, key=lambda r: first_card[r])
            used_first = later == first_card[nxt]
            shown, how = row["disclosed"], row["exposure"]
            burns = []
            for x in rows[k + 1 :]:
                if x["event"] in ("card", "round_start", "card_exposed"):
                    break
                if x["event"] == "burn":
                    burns.append(x["card"])
            if how == "face_up_in_shoe":
                if shown and nxt not in wagered:
                    blank.add(nxt)
                if used_first or (shown and nxt in wagered and not self.discarded(
                        row["card"], burns, False)):
                    self.flag("BA901", where, nxt)
            elif how == "excess":
                if (not shown and not used_first) or (
                        shown and nxt in wagered and not self.discarded(row["card"], burns, False)):
                    self.flag("BA902", where, nxt)
            else:
                self.misdealt(where, rows, k, later, nxt, used_first, burns)
        return blank

    def misdealt(self, where, rows, k, later, nxt, used_first, burns) -> None:
        row = rows[k]
        cards = [x for x in rows if x["round"] == row["round"] and x["event"] == "card"]
        player = [x["card"] for x in cards if x["target"] == "player"]
        banker = [(j, x) for j, x in enumerate(rows)
                  if x["round"] == row["round"] and x["event"] == "card"
                  and x["target"] == "banker"]
        p_two = (self.value(player[0]) + self.value(player[1])) % 10
        b_two = (self.value(banker[0][1]["card"]) + self.value(banker[1][1]["card"])) % 10
        must = p_two < 8 and b_two < 8 and b_two in self.stood
        if must:
            if len(banker) < 3 or later != banker[2][0]:
                self.flag("BA903", where, row["round"])
        elif not row["disclosed"] and not used_first:
            self.flag("BA903", where, nxt)
        elif row["disclosed"] and not self.discarded(row["card"], burns, True):
            self.flag("BA903", where, row["round"])

    def discarded(self, card: str, burns: list[str], tens_zero: bool) -> bool:
        """A discard passes: one card and its value in burns, or the exposed card, one more
        and that card's value (in (i)(3) a 10-value card counts 10 or 0)."""
        for zero in (False, True) if tens_zero else (False,):
            def value(c: str, zero: bool = zero) -> int:
                v = self.burns[c[0]]
                return 0 if zero and v == 10 else v
            n = len(burns)
            if n >= 1 and n == 1 + value(burns[0]):
                return True
            if n >= 2 and burns[0] == card and n == 2 + value(burns[1]):
                return True
        return False

    def offers(self, where, r, offers, occupied, state) -> None:
        if not offers:
            if state["must"]:
                self.flag("BA802", where, r)
                state["must"] = False
            assert state["seat"] is not None or not occupied, (where, r, "no curator, no offer")
            return
        state["must"] = False
        prev = state["prev"]
        if prev is None:
            order = list(SEATS)
        else:
            i = SEATS.index(prev)
            order = list(SEATS[i + 1 :] + SEATS[:i])
        cands = [s for s in order if s in occupied]
        if offers[0]["seat"] != cands[0]:
            self.flag("BA801" if state["first"] else "BA803", where, 0 if r == 1 else r)
        for a, b in zip(offers, offers[1:], strict=False):
            assert not a["accepted"], where
            if a["seat"] in cands and b["seat"] != cands[(cands.index(a["seat"]) + 1) % len(cands)]:
                self.flag("BA804", where, 0 if r == 1 else r)
        state["first"] = False
        state["seat"] = offers[-1]["seat"] if offers[-1]["accepted"] else None
        if state["seat"] is not None:
            state["prev"] = state["seat"]

    # -- a round

    def round(self, table: dict[str, Any], where, body: list[dict]) -> str | None:
        r = body[0]["round"]
        assert body[-1]["event"] == "round_end", (where, r)
        events = [row["event"] for row in body]
        closed = events.index("no_more_bets")
        wagers = [row for row in body if row["event"] == "wager"]
        if any(row["event"] == "wager" for row in body[closed:]):
            self.flag("BA401", where, r)
        for row in wagers:
            if row["amount_cents"] % 500:
                self.flag("BA402", where, r)
            if row["bet"] in ("dragon7", "panda8") and not table["ez"]:
                self.flag("BA403", where, r)
        if "void" in events:
            if any(row["event"] == "collect" for row in body):
                self.flag("BA106", where, r)
            return None

        cards = [row for row in body if row["event"] == "card"]
        if [row["target"] for row in cards[:4]] != ["player", "banker", "player", "banker"]:
            self.flag("BA201", where, r)
        player = [row for row in cards if row["target"] == "player"]
        banker = [row for row in cards if row["target"] == "banker"]
        p_two = (self.value(player[0]["card"]) + self.value(player[1]["card"])) % 10
        b_two = (self.value(banker[0]["card"]) + self.value(banker[1]["card"])) % 10
        p_nat, b_nat = p_two >= 8, b_two >= 8
        if p_nat or b_nat:
            if len(cards) > 4:
                self.flag("BA203", where, r)
        else:
            if (len(player) == 3) != (p_two <= 5):
                self.flag("BA204", where, r)
            if len(player) == 3:
                should = self.value(player[2]["card"]) in self.third[b_two]
                if len(banker) == 3 and cards.index(banker[2]) < cards.index(player[2]):
                    self.flag("BA202", where, r)
            else:
                should = b_two <= 5
            if (len(banker) == 3) != should:
                self.flag("BA205" if len(player) == 2 else "BA206", where, r)
        pp = sum(self.value(row["card"]) for row in player) % 10
        bp = sum(self.value(row["card"]) for row in banker) % 10
        winner = "player" if pp > bp else "banker" if bp > pp else "tie"
        result = next(row for row in body if row["event"] == "result")
        if (result["player_points"], result["banker_points"]) != (pp, bp):
            self.flag("BA103", where, r)
        if result["winner"] != winner:
            self.flag("BA301", where, r)
        dragon7 = winner == "banker" and bp == 7 and len(banker) == 3
        panda8 = winner == "player" and pp == 8 and len(player) == 3

        settled: dict[tuple[int, str], list[dict]] = defaultdict(list)
        for row in body:
            if row["event"] in ("collect", "pay", "push"):
                settled[row["seat"], row["bet"]].append(row)
        banker_won: Counter[int] = Counter()
        for wager in wagers:
            rows = settled.pop((wager["seat"], wager["bet"]), [])
            want = self.expected(table, wager, winner, pp, bp, p_nat, b_nat, dragon7, panda8)
            if wager["bet"] == "banker" and want[0] == "pay":
                banker_won[wager["seat"]] += want[1]
            if len(rows) != 1:
                self.flag("BA404", where, r)
            elif (rows[0]["event"], rows[0]["amount_cents"]) != want:
                self.flag(self.payout_rule(table, wager["bet"], winner, dragon7), where, r)
        assert not settled, (where, r, "settled without a wager")

        vigs = [row for row in body if row["event"] == "vig"]
        if table["ez"]:
            if vigs:
                self.flag("BA602", where, r)
        else:
            by_seat = Counter(row["seat"] for row in vigs)
            for seat, won in banker_won.items():
                rows = [row for row in vigs if row["seat"] == seat]
                if len(rows) != 1:
                    self.flag("BA601", where, r)
                elif rows[0]["amount_cents"] == won * 4 // 100:
                    self.flag("BA604", where, None)  # the shoe's rate
                elif rows[0]["amount_cents"] != won * 5 // 100:
                    self.flag("BA601", where, r)
            if set(by_seat) - set(banker_won):
                self.flag("BA601", where, r)
        for row in body:
            if row["event"] == "vig" and row["mode"] == "marked":
                self.owed[row["seat"]] += row["amount_cents"]
            elif row["event"] == "vig_settle":
                assert row["amount_cents"] <= self.owed[row["seat"]], (where, r)
                self.owed[row["seat"]] -= row["amount_cents"]

        # settlement order: collects first, then the pit's procedure (g)(2)
        collect_at = [k for k, row in enumerate(body) if row["event"] == "collect"]
        paid = [(k, row) for k, row in enumerate(body) if row["event"] in ("pay", "vig")]
        if collect_at and any(k < collect_at[-1] for k, _ in paid):
            self.flag("BA701", where, r)
        actual = [(row["event"], row["seat"]) for _, row in paid]
        if actual != self.procedure(PROCEDURE[table["pit"]], actual):
            self.flag("BA702", where, r)
        return winner

    def expected(self, table, wager, winner, pp, bp, p_nat, b_nat, dragon7, panda8):
        bet, stake = wager["bet"], wager["amount_cents"]
        if bet in ("banker", "player"):
            if winner == "tie" or (bet == "banker" and table["ez"] and dragon7):
                return "push", stake
            return ("pay", stake) if winner == bet else ("collect", stake)
        if bet == "tie":
            return ("pay", 8 * stake) if winner == "tie" else ("collect", stake)
        if bet == "dragon7":
            return ("pay", 40 * stake) if dragon7 else ("collect", stake)
        if bet == "panda8":
            return ("pay", 25 * stake) if panda8 else ("collect", stake)
        own, other, own_nat, other_nat = (
            (pp, bp, p_nat, b_nat) if bet == "dragon_player" else (bp, pp, b_nat, p_nat)
        )
        if own_nat and other_nat and own == other:
            return "push", stake
        if own_nat and (not other_nat or own > other):
            return "pay", self.pay_table["natural"] * stake
        odds = self.pay_table.get(f"by_{own - other}") if not own_nat else None
        return ("pay", odds * stake) if odds else ("collect", stake)

    @staticmethod
    def payout_rule(table, bet, winner, dragon7) -> str:
        if bet in ("banker", "player") and winner == "tie":
            return "BA504"
        if bet == "banker" and table["ez"] and dragon7:
            return "BA505"
        return {
            "player": "BA501",
            "banker": "BA502",
            "tie": "BA503",
            "dragon7": "BA506",
            "panda8": "BA507",
        }.get(bet, "BA508")

    @staticmethod
    def procedure(name: str, rows: list[tuple[str, int]]) -> list[tuple[str, int]]:
        seats = sorted({seat for _, seat in rows}, reverse=True)
        pays = {s: [x for x in rows if x == ("pay", s)] for s in seats}
        vigs = {s: [x for x in rows if x == ("vig", s)] for s in seats}
        if name in ("i", "ii"):
            first, second = (pays, vigs) if name == "i" else (vigs, pays)
            return [x for s in seats for x in first[s]] + [x for s in seats for x in second[s]]
        if name == "iii":
            return [x for s in seats for x in pays[s] + vigs[s]]
        return [x for s in seats for x in vigs[s] + pays[s]]


def audit(sim, params) -> list[tuple[str, str, str, int | None]]:
    events = events_frame(sim.events)
    return Referee(params, sim.tables).run(events)


# --- determinism and shape -------------------------------------------------------


def test_same_seed_same_log():
    a = simulate(rounds=120, tables=3, seed=42, faults=0.1)
    b = simulate(rounds=120, tables=3, seed=42, faults=0.1)
    assert a.events.equals(b.events)
    assert a.truth.equals(b.truth)
    assert a.tables == b.tables
    c = simulate(rounds=120, tables=3, seed=43, faults=0.1)
    assert not a.events.equals(c.events)


def test_columns_tables_and_order(clean):
    events = clean.events
    assert events.columns == list(vocabulary.COLUMNS)  # the spec's columns, in order
    assert events.schema["amount"] == pl.Decimal(12, 2)
    assert events.filter(pl.col("event") == "round_start").height == 400
    assert [t["table_id"] for t in clean.tables] == ["BAC-01", "BAC-02", "BAC-03", "BAC-04"]
    assert [(t["variant"], t["ez"], t["pit"]) for t in clean.tables] == [
        ("big", False, "PIT-1"),
        ("midi", True, "PIT-1"),
        ("mini", False, "PIT-2"),
        ("big", True, "PIT-2"),
    ]
    # seq runs 1, 2, 3 ... per table, in file order; time never goes back
    per_table = (
        events.with_row_index("line")
        .group_by("table_id")
        .agg(pl.col("seq"), pl.col("line"), pl.col("ts"))
    )
    for row in per_table.iter_rows(named=True):
        assert row["seq"] == list(range(1, len(row["seq"]) + 1))
        assert row["line"] == sorted(row["line"])
        assert row["ts"] == sorted(row["ts"])
    assert events["ts"][0].startswith("2026-11-01T20:00:") and events["ts"][0].endswith("-05:00")
    assert events.filter(pl.col("event") == "void").height == 0
    assert clean.truth.height == 0


# --- every encoding round-trips through the ingest with no problem ---------------


@pytest.mark.parametrize("which", ["clean", "faulty"])
def test_every_encoding_ingests_without_problems(which, request, tmp_path: Path):
    sim = request.getfixturevalue(which)
    house_path = write_house_rules(sim.tables, tmp_path / "house.toml")
    house = load_house(house_path, load_rulesets(), ON)
    seats = tuple(house.baccarat["seats"])
    # the auditor keeps the wall-clock time as written (the offset is not applied)
    original = (
        events_frame(sim.events)
        .with_columns(pl.col("ts").str.slice(0, 19).str.to_datetime().alias("time"))
        .select("table_id", "seq", "event", "amount_cents", "card", "accepted", "time")
        .sort("table_id", "seq")
    )
    for encoding in ENCODINGS:
        path = write_events(sim.events, tmp_path / f"log.{encoding}", encoding)
        ingested = ingest(expand([str(path)]), baccarat_seats=seats)
        assert ingested.problems.height == 0, (encoding, ingested.problems.head())
        assert ingested.audited.height == ingested.events.height == sim.events.height
        back = ingested.events.select(original.columns).sort("table_id", "seq")
        assert back.cast({"event": pl.String}).equals(original), encoding


def test_text_encodings_are_exact(tmp_path: Path):
    events = [
        {
            "table_id": "T",
            "game": "baccarat",
            "shoe_id": "T-1",
            "round": 1,
            "seq": 1,
            "ts": "2026-11-01T20:00:00-05:00",
            "event": "wager",
            "seat": 3,
            "bet": "banker",
            "amount": "1.25",
        },
        {
            "table_id": "T",
            "game": "baccarat",
            "shoe_id": "T-1",
            "round": 1,
            "seq": 2,
            "ts": "2026-11-01T20:00:01-05:00",
            "event": "shoe_offer",
            "seat": 3,
            "accepted": False,
        },
        {
            "table_id": "T",
            "game": "baccarat",
            "shoe_id": "T-1",
            "round": 1,
            "seq": 3,
            "ts": "2026-11-01T20:00:02-05:00",
            "event": "void",
            "reason": 'said "no", twice',
        },
    ]
    write_events(events, tmp_path / "a.jsonl", "jsonl")
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    assert lines[0].endswith('"event":"wager","seat":3,"bet":"banker","amount":1.25}')
    assert lines[1].endswith('"seat":3,"accepted":false}')
    assert lines[2].endswith('"reason":"said \\"no\\", twice"}')
    write_events(events, tmp_path / "a.csv", "csv")
    rows = (tmp_path / "a.csv").read_text().splitlines()
    assert rows[1].split(",")[12] == "1.25"
    write_events(events, tmp_path / "a.parquet", "parquet")
    back = pl.read_parquet(tmp_path / "a.parquet")
    assert back.schema["amount"] == pl.Decimal(12, 2)
    assert back.schema["seq"] == pl.Int64 and back.schema["table_id"] == pl.String
    assert str(back["amount"][0]) == "1.25"


def test_house_rules_file_matches_the_tables(clean, tmp_path: Path):
    house = load_house(write_house_rules(clean.tables, tmp_path / "h.toml"), load_rulesets(), ON)
    assert house.collection_procedure == PROCEDURE
    assert house.baccarat["commission_percent"] == 5
    assert house.baccarat["tie_pays"] == 8
    assert house.baccarat["dragon_bonus_pay_table"] == "A"
    assert house.baccarat["dragon7_pays"] == 40
    assert tuple(house.baccarat["seats"]) == SEATS
    for table in clean.tables:
        rules = house.table(table["table_id"], "baccarat")
        assert rules.listed and rules.pit == table["pit"]
        assert (rules["variant"], rules["ez"]) == (table["variant"], table["ez"])


# --- clean logs obey the rules ----------------------------------------------------


def test_clean_log_passes_the_referee(clean, params):
    assert audit(clean, params) == []


def test_clean_logs_of_other_sizes(params):
    for rounds, tables, seed in ((250, 1, 1), (300, 6, 2), (90, 10, 3)):
        sim = simulate(rounds=rounds, tables=tables, seed=seed)
        assert audit(sim, params) == [], (rounds, tables, seed)
        assert sim.events.filter(pl.col("event") == "round_start").height == rounds


def test_cards_per_shoe_within_eight_decks(clean):
    counts = (
        clean.events.filter(pl.col("event").is_in(["burn", "card"]))
        .group_by("table_id", "shoe_id", "card")
        .len()
    )
    assert counts["len"].max() <= 8
    assert set(clean.events.filter(pl.col("event") == "shuffle")["decks"]) == {8}


def _coups(events: pl.DataFrame, params: dict[str, Any]) -> pl.DataFrame:
    """One row per round: card values in dealing order per hand, and the declared result."""
    points = {rank: int(p) for rank, p in params["card_points"].items()}
    key = ["table_id", "shoe_id", "round"]
    cards = (
        events.filter(pl.col("event") == "card")
        .sort("table_id", "seq")
        .with_columns(
            value=pl.col("card")
            .cast(pl.String)
            .str.slice(0, 1)
            .replace_strict(points, return_dtype=pl.Int8),
            slot=pl.col("target").cast(pl.String).str.slice(0, 1)
            + (pl.int_range(pl.len()).over(*key, "target") + 1).cast(pl.String),
        )
        .pivot("slot", index=key, values="value")
    )
    for slot in ("p3", "b3"):
        if slot not in cards.columns:
            cards = cards.with_columns(pl.lit(None, pl.Int8).alias(slot))
    declared = events.filter(pl.col("event") == "result").select(
        *key, "winner", "player_points", "banker_points"
    )
    return cards.rename(
        {s.upper(): s for s in ("p1", "p2", "p3", "b1", "b2", "b3")}, strict=False
    ).join(declared, on=key)


def test_draws_points_and_winner_agree_with_the_tableau(clean, params):
    coups = _coups(clean.events, params)
    assert coups.height == 400
    p_two = tableau.points(pl.col("p1"), pl.col("p2"))
    b_two = tableau.points(pl.col("b1"), pl.col("b2"))
    replay = coups.with_columns(
        p_draws=tableau.player_draws(p_two, b_two, params),
        b_draws=tableau.banker_draws(b_two, p_two, pl.col("p3"), params),
        pp=tableau.points(pl.col("p1"), pl.col("p2"), pl.col("p3")),
        bp=tableau.points(pl.col("b1"), pl.col("b2"), pl.col("b3")),
    ).with_columns(won=tableau.winner(pl.col("pp"), pl.col("bp")))
    bad = replay.filter(
        (pl.col("p_draws") != pl.col("p3").is_not_null())
        | (pl.col("b_draws") != pl.col("b3").is_not_null())
        | (pl.col("pp") != pl.col("player_points"))
        | (pl.col("bp") != pl.col("banker_points"))
        | (pl.col("won") != pl.col("winner").cast(pl.String))
    )
    assert bad.height == 0, bad
    # every kind of coup shows up
    assert replay["p_draws"].any() and not replay["p_draws"].all()
    assert set(replay["won"]) == {"player", "banker", "tie"}


def test_payouts_and_commission_arithmetic(clean, params):
    """Each wager's settlement and each commission, recomputed with the tableau expressions."""
    events = events_frame(clean.events)
    key = ["table_id", "shoe_id", "round"]
    ez = pl.DataFrame(
        {"table_id": [t["table_id"] for t in clean.tables], "ez": [t["ez"] for t in clean.tables]}
    )
    coups = _coups(clean.events, params).with_columns(
        pp=tableau.points(pl.col("p1"), pl.col("p2"), pl.col("p3")),
        bp=tableau.points(pl.col("b1"), pl.col("b2"), pl.col("b3")),
        p_nat=tableau.is_natural(tableau.points(pl.col("p1"), pl.col("p2")), params),
        b_nat=tableau.is_natural(tableau.points(pl.col("b1"), pl.col("b2")), params),
        b_count=2 + pl.col("b3").is_not_null().cast(pl.Int8),
        p_count=2 + pl.col("p3").is_not_null().cast(pl.Int8),
    )
    table_a = params["dragon_bonus_pay_tables"]["A"]
    won = pl.col("winner").cast(pl.String)
    coups = coups.with_columns(
        dragon7=tableau.is_dragon7(pl.col("bp"), pl.col("b_count"), won),
        panda8=tableau.is_panda8(pl.col("pp"), pl.col("p_count"), won),
        odds_dragon_player=tableau.dragon_bonus_odds(
            "player", pl.col("pp"), pl.col("bp"), pl.col("p_nat"), pl.col("b_nat"), table_a
        ),
        odds_dragon_banker=tableau.dragon_bonus_odds(
            "banker", pl.col("pp"), pl.col("bp"), pl.col("p_nat"), pl.col("b_nat"), table_a
        ),
    ).join(ez, on="table_id")
    wagers = events.filter(pl.col("event") == "wager").select(*key, "seat", "bet", "amount_cents")
    stake = pl.col("amount_cents")
    bet = pl.col("bet")
    multiple = (  # the patron's net result in stakes: k pays k:1, 0 pushes, -1 loses
        pl.when(bet.is_in(["banker", "player"]) & (won == "tie"))
        .then(0)
        .when((bet == "banker") & pl.col("ez") & pl.col("dragon7"))
        .then(0)
        .when(bet.is_in(["banker", "player"]))
        .then(pl.when(won == bet).then(1).otherwise(-1))
        .when(bet == "tie")
        .then(pl.when(won == "tie").then(8).otherwise(-1))
        .when(bet == "dragon7")
        .then(pl.when(pl.col("dragon7")).then(40).otherwise(-1))
        .when(bet == "panda8")
        .then(pl.when(pl.col("panda8")).then(int(params["panda8_pays"])).otherwise(-1))
        .when(bet == "dragon_player")
        .then(pl.col("odds_dragon_player"))
        .otherwise(pl.col("odds_dragon_banker"))
    )
    expected = (
        wagers.join(coups, on=key)
        .with_columns(multiple=multiple)
        .with_columns(
            want_event=pl.when(pl.col("multiple") > 0)
            .then(pl.lit("pay"))
            .when(pl.col("multiple") == 0)
            .then(pl.lit("push"))
            .otherwise(pl.lit("collect")),
            want_amount=pl.when(pl.col("multiple") > 0)
            .then(pl.col("multiple") * stake)
            .otherwise(stake),
        )
    )
    settled = events.filter(pl.col("event").is_in(["collect", "pay", "push"])).select(
        *key, "seat", "bet", "event", pl.col("amount_cents").alias("got")
    )
    assert settled.height == wagers.height
    joined = expected.join(settled, on=[*key, "seat", "bet"], how="full", coalesce=True)
    bad = joined.filter(
        (pl.col("event") != pl.col("want_event"))
        | (pl.col("got") != pl.col("want_amount"))
        | pl.col("event").is_null()
        | pl.col("want_event").is_null()
    )
    assert bad.height == 0, bad
    assert set(expected["bet"]) == {
        "banker",
        "player",
        "tie",
        "dragon_banker",
        "dragon_player",
        "dragon7",
        "panda8",
    }

    owed = (
        expected.filter(
            (pl.col("bet") == "banker") & (pl.col("want_event") == "pay") & ~pl.col("ez")
        )
        .group_by(*key, "seat")
        .agg(pl.col("want_amount").sum())
        .with_columns(vig=pl.col("want_amount") * 5 // 100)
    )
    vigs = events.filter(pl.col("event") == "vig").select(*key, "seat", "amount_cents", "mode")
    both = owed.join(vigs, on=[*key, "seat"], how="full", coalesce=True)
    assert both.filter(pl.col("vig") != pl.col("amount_cents")).height == 0
    assert both.filter(pl.col("vig").is_null() | pl.col("amount_cents").is_null()).height == 0
    assert set(vigs["mode"]) == {"collected", "marked"}
    assert (vigs["amount_cents"] % 25 == 0).all()
    settles = events.filter(pl.col("event") == "vig_settle")
    marked = vigs.filter(pl.col("mode") == "marked")
    assert settles["amount_cents"].sum() == marked["amount_cents"].sum()


def test_cover_card_and_last_hand(clean):
    events = clean.events.filter(
        pl.col("event").is_in(["burn", "card", "cover_card", "round_start"])
    )
    shoes = (
        events.group_by("table_id", "shoe_id", maintain_order=True)
        .agg(
            before=(
                pl.col("event").is_in(["burn", "card"])
                & (pl.col("seq") < pl.col("seq").filter(pl.col("event") == "cover_card").first())
            ).sum(),
            dealt=pl.col("event").is_in(["burn", "card"]).sum(),
            cover_round=pl.col("round").filter(pl.col("event") == "cover_card").first(),
            last=pl.col("round").max(),
        )
        .filter(pl.col("cover_round").is_not_null())
    )
    assert shoes.height >= 4
    # the cover card lies 14-20 cards from the end of the 416 and comes out in time
    assert shoes["before"].is_between(416 - 20, 416 - 14).all()
    assert (shoes["dealt"] <= 416).all()
    # exactly one last hand after the cover card round, unless the log ends first
    ended_early = shoes.filter(pl.col("last") != pl.col("cover_round") + 1)
    assert ended_early.height <= len(clean.tables)
    last_shoes = clean.events.group_by("table_id").agg(pl.col("shoe_id").max())
    assert ended_early.join(last_shoes, on=["table_id", "shoe_id"], how="anti").height == 0


def test_curator_offers_on_big_tables_only(clean):
    offers = clean.events.filter(pl.col("event") == "shoe_offer")
    assert set(offers["table_id"]) == {"BAC-01", "BAC-04"}
    assert offers["accepted"].any() and not offers["accepted"].all()


# --- planted faults --------------------------------------------------------------


def _faults(truth: pl.DataFrame) -> pl.DataFrame:
    """The planted faults: the truth without the right remedies (no rule id)."""
    return truth.filter(pl.col("rule_id").is_not_null())


def test_every_fault_kind_is_planted_in_a_small_run(faulty):
    faults = _faults(faulty.truth)
    assert set(faults["rule_id"]) == set(FAULT_KINDS)
    assert faults.height >= len(FAULT_KINDS)
    names = dict(zip(faults["rule_id"], faults["fault"], strict=True))
    assert names == FAULT_KINDS


def test_every_right_remedy_is_planted_in_a_small_run(faulty):
    remedied = faulty.truth.filter(pl.col("rule_id").is_null())
    assert set(remedied["fault"]) == set(REMEDY_KINDS)
    # a card astray is shown by its card_exposed row; a void round by its void row
    rows = remedied.join(faulty.events.select("table_id", "seq", "event"),
                         on=["table_id", "seq"])
    assert rows.height == remedied.height
    assert set(rows["event"].cast(pl.String)) == {"card_exposed", "void"}


def test_truth_points_at_existing_rows(faulty):
    events = faulty.events
    rounds = events.select("table_id", "shoe_id", "round").unique()
    truth = faulty.truth
    assert truth.join(rounds, on=["table_id", "shoe_id", "round"], how="anti").height == 0
    with_seq = truth.filter(pl.col("seq").is_not_null())
    hit = with_seq.join(
        events.select("table_id", "seq", "shoe_id", "round"), on=["table_id", "seq"], suffix="_row"
    )
    assert hit.height == with_seq.height
    assert (hit["shoe_id"] == hit["shoe_id_row"]).all()
    assert (hit["round"] == hit["round_row"]).all()


def test_faults_break_exactly_their_rule(faulty, params):
    """The referee finds each fault, and nothing else: not in a right remedy's round."""
    found = set(audit(faulty, params))
    truth = set(_faults(faulty.truth).select("rule_id", "table_id", "shoe_id", "round")
                .iter_rows())

    def same(a, b) -> bool:
        return a[:3] == b[:3] and (a[3] is None or b[3] is None or a[3] == b[3])

    missed = [t for t in truth if not any(same(t, f) for f in found)]
    extra = [f for f in found if not any(same(t, f) for t in truth)]
    assert not missed, missed
    assert not extra, extra


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_faults_break_exactly_their_rule_other_seeds(seed, params):
    sim = simulate(rounds=300, tables=5, seed=seed, faults=0.15)
    found = set(audit(sim, params))
    truth = set(_faults(sim.truth).select("rule_id", "table_id", "shoe_id", "round").iter_rows())
    for t in truth:
        assert any(f[:3] == t[:3] and (None in (f[3], t[3]) or f[3] == t[3]) for f in found), t
    for f in found:
        assert any(f[:3] == t[:3] and (None in (f[3], t[3]) or f[3] == t[3]) for t in truth), f


def test_fault_share_and_empty_runs():
    sim = simulate(rounds=1000, tables=4, seed=9, faults=0.05)
    assert 40 <= _faults(sim.truth).height <= 50
    empty = simulate(rounds=0, tables=2, seed=1)
    assert empty.events.height == 0 and empty.truth.height == 0
    with pytest.raises(ValueError):
        simulate(rounds=10, tables=0, seed=1)
