"""A replayed round (a `detail` of round_details.parquet) as the report prints it.

The replay is set as fixed-width lines, column under column: cards, points and
draws per hand; then every wager with the settlement the rules require and the
one recorded, a line per wager. A line that disagrees is marked (``≠``, and set
in bold red). Fixed-width lines keep a thousand replays quick to typeset and
easy to check against the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ingest import cards as card_codes
from ..ingest import vocabulary as v

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
MISMATCH = "≠"


@dataclass(frozen=True)
class Line:
    text: str
    style: str = ""  # "" plain, "head" a column heading, "bad" disagrees with the rules


@dataclass
class Replay:
    game: str
    blocks: list[list[Line]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def card(code: str) -> str:
    """A card code of the log ("TD") as printed (10♦); a card known by value only (format
    1.3) without a suit: "8*" as 8, "X*" as X (a ten-value card, `value_only_notes`)."""
    rank, suit = code[:1], code[1:2]
    if card_codes.is_value_only(code):
        suit = ""
    return ("10" if rank == "T" else rank) + SUITS.get(suit, suit)


def cards(codes: list[str] | None) -> str:
    return " ".join(card(c) for c in codes or []) or "none"


def value_only_notes(codes: list[str]) -> list[str]:
    """What a replay says once where it shows cards known by value only (format 1.3): that
    a card without a suit had none recorded, and what an X is."""
    shown = [c for c in codes if card_codes.is_value_only(c)]
    if not shown:
        return []
    ten = f"; {card_codes.TEN_VALUE_NOTE}" if any(c.startswith(v.TEN_VALUE) for c in shown) else ""
    return [f"{card_codes.VALUE_ONLY_NOTE}{ten}."]


def cents(c: int | None) -> str:
    if c is None:
        return ""
    sign = "−" if c < 0 else ""
    return f"{sign}${abs(c) / 100:,.2f}"


def _dash(v: Any) -> str:
    return "—" if v is None else str(v)


def _yn(v: bool | None) -> str:
    return "—" if v is None else ("yes" if v else "no")


def settled(kind: str | None, amount: int | None, n: int = 1) -> str:
    if kind is None or n == 0:
        return "not settled"
    text = f"{kind} {cents(amount)}"
    return text if n == 1 else f"{text} (1st of {n})"


# --- baccarat ---------------------------------------------------------------------


def _baccarat_hands(d: dict) -> list[Line]:
    lines = []
    for name, s in (("player", "p"), ("banker", "b")):
        must, drew = d.get(f"{name}_must_draw"), d.get(f"{name}_drew")
        ok = must is None or must == drew
        natural = " natural" if d.get(f"{s}_natural") else ""
        text = (
            f"{name.capitalize():<8}{cards(d.get(f'{name}_cards')):<17}"
            f"two-card {_dash(d.get(f'{s}_two')) + natural:<11} "
            f"final {_dash(d.get(f'{s}_points')):<4}"
            f"third card required {_yn(must):<4} drawn {_yn(drew)}"
            + ("" if ok else f"  {MISMATCH}")
        )
        lines.append(Line(text, "" if ok else "bad"))
    winner, declared = d.get("winner"), d.get("declared_winner")
    p, b = d.get("p_points"), d.get("b_points")
    dp, db = d.get("declared_player_points"), d.get("declared_banker_points")
    ok = (
        (declared is None or declared == winner)
        and (dp is None or dp == p)
        and (db is None or db == b)
    )
    scores = f" {p}-{b}" if p is not None else ""
    declared_scores = f" {dp}-{db}" if dp is not None else ""
    text = (
        f"{'Outcome':<8}replayed {_dash(winner)}{scores} (player-banker), declared "
        f"{_dash(declared)}{declared_scores}{'' if ok else '  ' + MISMATCH}"
        f"; dragon 7 {_yn(d.get('dragon7'))}, panda 8 {_yn(d.get('panda8'))}"
    )
    lines.append(Line(text, "" if ok else "bad"))
    table = d.get("variant")
    setting = ""
    if table:
        setting = f"; {table} table" + (", EZ" if d.get("ez") else "")
        if d.get("commission_percent") and not d.get("ez"):
            setting += f", {d['commission_percent']}% commission"
    void = "; VOID round" if d.get("void") else ""
    lines.append(Line(f"{'Dealt':<8}{' '.join(d.get('order') or '') or '—'}{setting}{void}"))
    return lines


WAGER_HEAD = (
    f"{'Seat':>4}  {'Bet':<14}{'Stake':>11}  {'Settlement required':<25} {'Recorded':<24}"
    f"{'Difference':>11}  {'Seq wager/settled'}"
)


def _baccarat_wagers(d: dict) -> list[Line]:
    wagers = d.get("wagers") or []
    if not wagers:
        return [Line("No wager was placed on this round.")]
    lines = [Line(WAGER_HEAD, "head")]
    for w in wagers:
        kind = w["expected_kind"]
        if w.get("net_sid") is not None:  # format 1.3: judged with its seat's net below
            required = settled(kind, w["expected_cents"]) if kind else "not judged"
            text = (
                f"{w['seat']:>4}  {w['bet']:<14}{cents(w['staked_cents']):>11}  {required:<25} "
                f"{'in the net':<24}{'':>11}  {w['wager_seq']}/"
            )
            lines.append(Line(text))
            continue
        if kind is None:
            required, ok = "not judged", True
        else:
            required = settled(kind, w["expected_cents"])
            if kind == "pay" and w["odds"]:
                required += f" at {w['odds']}:1"
            ok = (
                w["n_settled"] == 1
                and w["settled_kind"] == kind
                and w["settled_cents"] == w["expected_cents"]
            )
        recorded = settled(w["settled_kind"], w["settled_cents"], w["n_settled"])
        diff = ""
        if not ok and w["expected_net"] is not None and w["settled_net"] is not None:
            diff = cents(w["expected_net"] - w["settled_net"])
        seqs = f"{w['wager_seq']}/{_dash(w['settled_seq'])}"
        text = (
            f"{w['seat']:>4}  {w['bet']:<14}{cents(w['staked_cents']):>11}  {required:<25} "
            f"{recorded:<24}{diff:>11}  {seqs}" + ("" if ok else f" {MISMATCH}")
        )
        lines.append(Line(text, "" if ok else "bad"))
    return lines


def _baccarat_commission(d: dict) -> list[Line]:
    rows = d.get("commission") or []
    if not rows:
        return []
    lines = [
        Line(
            f"{'Seat':>4}  {'Commission on banker winnings of':<39}{'Required':>11}  "
            f"{'Recorded':>11}",
            "head",
        )
    ]
    for c in rows:
        ok = c["expected_vig_cents"] == c["vig_cents"]
        text = (
            f"{c['seat']:>4}  {cents(c['won_cents']):<39}{cents(c['expected_vig_cents']):>11}"
            f"  {cents(c['vig_cents']):>11}" + ("" if ok else f" {MISMATCH}")
        )
        lines.append(Line(text, "" if ok else "bad"))
    return lines


_EXPOSURES = {"face_up_in_shoe": "found face up in the shoe", "excess": "drawn in excess",
              "misdealt": "misdealt", "exposed": "exposed in error"}


def _irregular_line(r: dict) -> str:
    """One 1.2 row (or a discard's burn) in words."""
    box = f"box {r['seat']} hand {r['hand']}" if r.get("seat") is not None else ""
    event = r["event"]
    if event == "card_exposed":
        what = f"{card(r['card'])} {_EXPOSURES.get(r.get('exposure'), r.get('exposure'))}"
        if r.get("target"):
            what += f" to the {r['target']}"
        if r.get("disclosed") is not None:
            what += ", disclosed" if r["disclosed"] else ", not disclosed"
    elif event == "burn":
        what = f"burned {card(r['card'])}"
    elif event == "dead_hand":
        what = f"{box} declared dead" + (f" ({r['reason']})" if r.get("reason") else "")
    elif event == "hole_card_check":
        what = "hole card checked"
    else:  # a refuse action
        what = f"{box} refused the card" + (f" ({r['player_id']})" if r.get("player_id") else "")
    return f"{'/' + str(r['seq']):>6}  {what}"


def _irregular(d: dict) -> list[Line]:
    rows = d.get("irregular") or []
    if not rows:
        return []
    return [Line("Irregularities and discards (hand-history-v1 1.2)", "head"),
            *(Line(_irregular_line(r)) for r in rows)]


def _nets(d: dict, noun: str) -> list[Line]:
    """Format 1.3: each net result recorded, against what its wagers were owed."""
    rows = d.get("nets") or []
    if not rows:
        return []
    lines = [Line(f"{'Net result (settle_net)':<36}{'Owed':>24}  {'Recorded':>11}"
                  f"{'Difference':>12}  Seq", "head")]
    for n in rows:
        scope = f"{noun} {n['seat']}" + "".join(
            f" {label}{n[key]}" for key, label in (("hand", "hand "), ("bet", ""),
                                                  ("player_id", "patron "))
            if n.get(key) is not None)
        low, high = n.get("owed_low"), n.get("owed_high")
        owed = ("not judged" if low is None else cents(low) if low == high
                else f"{cents(low)} to {cents(high)}")
        ok = not n.get("amount_cents")
        diff = "" if ok else cents(n["amount_cents"])
        lines.append(Line(f"{scope:<36}{owed:>24}  {cents(n['net_cents']):>11}{diff:>12}  "
                          f"{n['seq']}" + ("" if ok else f" {MISMATCH}"), "" if ok else "bad"))
    return lines


def baccarat(d: dict) -> Replay:
    blocks = [_baccarat_hands(d), _baccarat_wagers(d)]
    if netted := _nets(d, "Seat"):
        blocks.append(netted)
    commission = _baccarat_commission(d)
    if commission:
        blocks.append(commission)
    if irregular := _irregular(d):
        blocks.append(irregular)
    codes = [*(d.get("player_cards") or []), *(d.get("banker_cards") or []),
             *(r["card"] for r in d.get("irregular") or [] if r.get("card"))]
    return Replay("baccarat", blocks, value_only_notes(codes))


# --- blackjack ---------------------------------------------------------------------


def _hand_state(h: dict) -> str:
    if not h.get("cards"):
        return "—"
    total = str(h.get("total"))
    if h.get("natural"):
        return total + " blackjack"
    if h.get("busted"):
        return total + " bust"
    if h.get("soft"):
        return total + " soft"
    return total


def _house(d: dict) -> str:
    parts = []
    if "dealer_hits_soft_17" in d:
        parts.append("hits soft 17" if d["dealer_hits_soft_17"] else "stands on soft 17")
    if d.get("blackjack_pays"):
        parts.append(f"blackjack pays {d['blackjack_pays']}")
    if d.get("insurance_pays"):
        parts.append(f"insurance {d['insurance_pays']}")
    if "surrender" in d:
        parts.append("surrender offered" if d["surrender"] else "no surrender")
    if d.get("decks"):
        parts.append(f"{d['decks']} decks")
    return ", ".join(parts)


BJ_MONEY_HEAD = (
    f"{'Box':>3} {'Hand':>4}  {'Bet':<10}{'Stake':>9}  {'Outcome':<12}{'Settlement required':<31} "
    f"{'Recorded':<31}  Seq wager/settled"
)


def _bj_money(box: dict, expected_known: bool) -> list[Line]:
    """One line per wager of the box: its outcome, the settlement owed and the one recorded;
    then any recorded row that settles no wager. Without the money frame: the wagers and the
    recorded rows as they are."""
    lines = []
    keys = set()
    seat = box["seat"]
    for w in box.get("wagers") or []:
        keys.add((w["hand"], w["bet"], w["player_id"]))
        who = f" ({w['player_id']})" if w.get("player_id") else ""
        head = f"{seat:>3} {_dash(w['hand']):>4}  {w['bet']:<10}{cents(w['staked_cents']):>9}  "
        if not expected_known:
            lines.append(Line(f"{head}{'':<12}{'':<31} {'':<31}  {w['wager_seq']}/{who}"))
            continue
        netted = w.get("net_sid") is not None  # format 1.3: judged with its net below
        ok = bool(w.get("settled_right")) or w.get("expected_text") is None or netted
        required = w.get("expected_text") or "not judged"
        if netted:
            lines.append(Line(f"{head}{_dash(w.get('outcome')):<12}{required:<31} "
                              f"{'in the net':<31}  {w['wager_seq']}/{who}"))
            continue
        seqs = f"{w['wager_seq']}/{_dash(w.get('settled_seq'))}"
        diff = f" {MISMATCH} {cents(w['amount_cents'])}" if not ok and w.get("amount_cents") else ""
        lines.append(
            Line(
                f"{head}{_dash(w.get('outcome')):<12}{required:<31} "
                f"{w.get('observed_text') or '':<31}  {seqs}{who}"
                + (diff or ("" if ok else f" {MISMATCH}")),
                "" if ok else "bad",
            )
        )
    for r in box.get("settlements") or []:
        key = (r["hand"], r["bet"], r["player_id"])
        if expected_known and key in keys:
            continue  # in its wager's line above
        who = f" ({r['player_id']})" if r.get("player_id") else ""
        stray = expected_known  # with the money frame, only rows that settle no wager get here
        lines.append(
            Line(
                f"{seat:>3} {_dash(r['hand']):>4}  {r['bet'] or '':<10}{'':>9}  "
                f"{'no wager' if stray else 'recorded':<12}{'':<31} "
                f"{r['event'] + ' ' + cents(r['amount_cents']):<31}  /{r['seq']}{who}"
                + (f" {MISMATCH}" if stray else ""),
                "bad" if stray else "",
            )
        )
    return lines


def blackjack(d: dict) -> Replay:
    dealer = (
        f"{'Dealer':<8}{cards(d.get('dealer_cards')):<28}total {_dash(d.get('dealer_total'))}"
        + (" soft" if d.get("dealer_soft") else "")
        + (" blackjack" if d.get("dealer_blackjack") else "")
        + (" bust" if d.get("dealer_busted") else "")
        + ("; VOID round" if d.get("void") else "")
    )
    house = _house(d)
    lines = [Line(dealer)] + ([Line(f"{'House':<8}{house}")] if house else [])
    expected_known = bool(d.get("expected_known"))
    play = [Line(f"{'Box':>3} {'Hand':>4}  {'Cards':<28}{'Decisions':<36}{'Total'}", "head")]
    money = [Line(BJ_MONEY_HEAD, "head")]
    for box in d.get("boxes") or []:
        for n, h in enumerate(box.get("hands") or []):
            seat = str(box["seat"]) if n == 0 else ""
            play.append(
                Line(
                    f"{seat:>3} {_dash(h['hand']):>4}  {cards(h.get('cards')):<28}"
                    f"{', '.join(h.get('actions') or []) or '—':<36}{_hand_state(h)}"
                )
            )
        money += _bj_money(box, expected_known)
    replay = Replay("blackjack", [lines, play])
    if len(money) > 1:
        replay.blocks.append(money)
    if netted := _nets(d, "Box"):
        replay.blocks.append(netted)
    if irregular := _irregular(d):
        replay.blocks.append(irregular)
    if not expected_known:
        replay.notes.append(
            "Settlements are as recorded; the finding states the settlement the rules require "
            "for the wager it concerns."
        )
    codes = [*(d.get("dealer_cards") or []),
             *(c for box in d.get("boxes") or [] for h in box.get("hands") or []
               for c in h.get("cards") or []),
             *(r["card"] for r in d.get("irregular") or [] if r.get("card"))]
    replay.notes += value_only_notes(codes)
    return replay


VIEWS = {"baccarat": baccarat, "blackjack": blackjack}
