"""Case-file shorthands for whole baccarat shoes and rounds, done by the book.

A line `{"macro": "shoe", ...}` or `{"macro": "round", ...}` in a case's
`events` expands into the events a correct table would record, so a case only
spells out the events it is about. This is a second, scalar implementation of
the procedure (written from the regulation, independent of the columnar
rules), which is what makes a passing case evidence.

shoe:  {"macro": "shoe", "decks": 8, "burn": "3S", "curator": 1}
       shuffle, the face-up burn card and as many more burns as its value (e),
       then, with "curator", an accepted shoe_offer to that seat (f)(1).
round: {"macro": "round", "player": "2S KS 5S", "banker": "3S 4S",
        "wagers": [[1, "banker", 25], [2, "player", 10]],
        "vig": "collected", "offers": [[2, false], [3, true]]}
       offers (shoe_offer rows) before round_start; wagers; no_more_bets; the
       cards as given (player list first, third cards after the first four, the
       player's before the banker's) in the order (f)(5), (f)(8) deal them; the
       result; collects of losing wagers; pushes; then pays and commission in the
       table's pit procedure (g)(2); round_end. Draw decisions are the case's:
       give the cards the tableau calls for, or the round breaks (f)(10)-(13).
burns: {"macro": "burns", "decks": 6, "except": "AS 2C 2S"}
       burn rows (carrying the next round) of every card of the decks but one copy of
       each card listed: the rest of a shoe, for a round that runs out of cards (i)(4).
       {"macro": "burns", "card": "X*", "count": 16}: that many burn rows of one card,
       in the current round.
"""

from __future__ import annotations

from auditor.house import HouseRules

# X: a ten-value card known by value only (format 1.3: `X*`); `8*` reads as its rank
BURN_VALUE = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10, "X": 10}
POINTS = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0, "X": 0}
DRAGON_A = {"natural": 1, 4: 1, 5: 2, 6: 4, 7: 6, 8: 10, 9: 30}
DRAGON = {
    "A": DRAGON_A,
    "B": {"natural": 1, 4: 1, 5: 3, 6: 4, 7: 7, 8: 8, 9: 20},
    "C": {"natural": 1, 4: 2, 5: 2, 6: 4, 7: 4, 8: 10, 9: 30},
}


def _value(card: str) -> int:
    return POINTS.get(card[0], int(card[0]) if card[0].isdigit() else 0)


def _points(cards: list[str]) -> int:
    return sum(_value(c) for c in cards) % 10


def shoe(spec: dict) -> list[dict]:
    first = spec.get("burn", "3S")
    count = BURN_VALUE.get(first[0], int(first[0]) if first[0].isdigit() else 0)
    events = [{"event": "shuffle", "decks": spec.get("decks", 8)}, {"event": "burn", "card": first}]
    # varied filler, so that no burn card exceeds the shoe's count of it (a)(4)
    filler = [rank + suit for suit in "CD" for rank in "23456789"]
    events += [{"event": "burn", "card": filler[i % len(filler)]} for i in range(count)]
    if "curator" in spec:
        # before the first round: round 0 (hand-history-v1 Events)
        events.append({"event": "shoe_offer", "seat": spec["curator"], "accepted": True})
    return events


def _dragon_odds(mine: list[str], other: list[str], table: str) -> int | None:
    """Odds paid on a dragon bonus on the hand `mine`; 0 a push; None a loss (b)(1)(iv)."""
    a, b = _points(mine[:2]), _points(other[:2])
    mine_nat, other_nat = a >= 8, b >= 8
    final_a, final_b = _points(mine), _points(other)
    if mine_nat and other_nat:
        return 0 if a == b else (DRAGON[table]["natural"] if a > b else None)
    if mine_nat:
        return DRAGON[table]["natural"]
    if other_nat:
        return None
    margin = final_a - final_b
    return DRAGON[table][margin] if margin >= 4 else None


def outcome(player: list[str], banker: list[str]) -> dict:
    p, b = _points(player), _points(banker)
    winner = "player" if p > b else "banker" if b > p else "tie"
    return {
        "p": p, "b": b, "winner": winner,
        "dragon7": winner == "banker" and len(banker) == 3 and b == 7,
        "panda8": winner == "player" and len(player) == 3 and p == 8,
    }


def settle(bet: str, cents: int, o: dict, table: dict, player: list[str],
           banker: list[str]) -> tuple[str, int]:
    """('pay', winnings) / ('push', stake) / ('collect', stake) for one wager."""
    w, ez = o["winner"], table["ez"]
    if bet in ("banker", "player"):
        if w == "tie" or (bet == "banker" and ez and o["dragon7"]):
            return "push", cents
        return ("pay", cents) if w == bet else ("collect", cents)
    if bet == "tie":
        return ("pay", cents * table["tie_pays"]) if w == "tie" else ("collect", cents)
    if bet in ("dragon_banker", "dragon_player"):
        mine, other = (banker, player) if bet == "dragon_banker" else (player, banker)
        odds = _dragon_odds(mine, other, table["dragon_bonus_pay_table"])
        if odds is None:
            return "collect", cents
        return ("push", cents) if odds == 0 else ("pay", cents * odds)
    if bet == "dragon7":
        return ("pay", cents * table["dragon7_pays"]) if o["dragon7"] else ("collect", cents)
    if bet == "panda8":
        return ("pay", cents * 25) if o["panda8"] else ("collect", cents)
    raise ValueError(bet)


def burns(spec: dict) -> list[dict]:
    """The rest of a shoe burned between rounds, to bring its count near the end (i)(4):
    every card of `decks` decks, less one copy of each card listed in `except` (those out
    of the shoe elsewhere in the case, and those left for the rounds to come); or, with
    `card`, `count` burn rows of that card."""
    if "card" in spec:
        return [{"event": "burn", "card": spec["card"]} for _ in range(spec["count"])]
    left: dict[str, int] = {}
    for card in spec.get("except", "").split():
        left[card] = left.get(card, 0) + 1
    events = []
    for copy in range(spec["decks"]):
        for suit in "SHDC":
            for rank in "A23456789TJQK":
                card = rank + suit
                if copy < left.get(card, 0):
                    continue
                events.append({"event": "burn", "card": card, "round": "next"})
    return events


def _dollars(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def round_(spec: dict, house: HouseRules, table_id: str) -> list[dict]:
    table_rules = house.table(table_id, "baccarat")
    table = table_rules.settings
    procedure = house.collection_procedure.get(table_rules.pit or "", "i")
    player, banker = spec["player"].split(), spec["banker"].split()
    wagers = [(seat, bet, round(amount * 100)) for seat, bet, amount in spec.get("wagers", [])]
    events = [{"event": "shoe_offer", "seat": s, "accepted": a, "round": "next"}
              for s, a in spec.get("offers", [])]
    events.append({"event": "round_start"})
    events += [{"event": "wager", "seat": s, "bet": b, "amount": _dollars(c)} for s, b, c in wagers]
    events.append({"event": "no_more_bets"})
    first_four = [("player", player[0]), ("banker", banker[0]), ("player", player[1]),
                  ("banker", banker[1])]
    thirds = [("player", c) for c in player[2:]] + [("banker", c) for c in banker[2:]]
    events += [{"event": "card", "target": t, "card": c} for t, c in first_four + thirds]
    o = outcome(player, banker)
    events.append({"event": "result", "winner": o["winner"], "player_points": o["p"],
                   "banker_points": o["b"]})
    # chips added to a seat's bet are one wager, settled once
    staked: dict[tuple[int, str], int] = {}
    for seat, bet, cents in wagers:
        staked[seat, bet] = staked.get((seat, bet), 0) + cents
    settled = [(seat, bet, *settle(bet, cents, o, table, player, banker))
               for (seat, bet), cents in staked.items()]
    events += [{"event": "collect", "seat": s, "bet": b, "amount": _dollars(c)}
               for s, b, kind, c in settled if kind == "collect"]
    events += [{"event": "push", "seat": s, "bet": b, "amount": _dollars(c)}
               for s, b, kind, c in settled if kind == "push"]
    events += _payments(settled, table, procedure, spec.get("vig", "collected"))
    events.append({"event": "round_end"})
    return events


def _payments(settled: list, table: dict, procedure: str, mode: str) -> list[dict]:
    seats = sorted({s for s, _, kind, _ in settled if kind == "pay"}, reverse=True)
    pays = {s: [{"event": "pay", "seat": s, "bet": b, "amount": _dollars(c)}
                for s2, b, kind, c in settled if s2 == s and kind == "pay"] for s in seats}
    vigs: dict[int, list[dict]] = {s: [] for s in seats}
    if not table["ez"]:
        for s in seats:
            won = sum(c for s2, b, kind, c in settled if s2 == s and kind == "pay" and b == "banker")
            if won:
                vig = won * table["commission_percent"] // 100
                vigs[s] = [{"event": "vig", "seat": s, "amount": _dollars(vig), "mode": mode}]
    if procedure == "i":
        return [e for s in seats for e in pays[s]] + [e for s in seats for e in vigs[s]]
    if procedure == "ii":
        return [e for s in seats for e in vigs[s]] + [e for s in seats for e in pays[s]]
    if procedure == "iii":
        return [e for s in seats for e in pays[s] + vigs[s]]
    return [e for s in seats for e in vigs[s] + pays[s]]
