"""A simulated day written as a table system would export it, with the profile that
reads it back (export-profiles-v1): a device feed (events, both games), baccarat shoe
coups, and RFID wagers joined to them by time.

Each export uses names, words and card notations of its own, none of the format's, so
that reading it back exercises the profile: the audit of an export must find what the
audit of the hand history finds, on every rule the export evidences.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

LAYOUTS = ("events", "coups", "wagers", "boxes")

# --- the device feed: one row per signal, in its own words

_SIGNALS = {"shuffle": "SHUF", "burn": "BURN", "cover_card": "CUT", "shoe_offer": "OFFER",
            "round_start": "START", "wager": "BET", "no_more_bets": "NMB", "card": "DEAL",
            "action": "ACT", "result": "RES", "collect": "LOSE", "pay": "WIN",
            "push": "RET", "vig": "COMM", "vig_settle": "COMMPAID", "void": "VOID",
            "round_end": "END", "card_exposed": "ASTRAY", "dead_hand": "DEAD",
            "hole_card_check": "PEEK"}
_GAMES = {"baccarat": "BAC", "blackjack": "BJ"}
_TARGETS = {"player": "P", "banker": "B", "dealer": "D", "seat": "S"}
_BETS = {"banker": "BNK", "player": "PLR", "tie": "TIE", "dragon_banker": "DB",
         "dragon_player": "DP", "dragon7": "D7", "panda8": "P8", "main": "M",
         "double": "DBL", "split": "SPL", "insurance": "INS"}
_ACTIONS = {"hit": "H", "stand": "S", "double": "D", "split": "P", "surrender": "R",
            "refuse": "X"}
_EXPOSURES = {"face_up_in_shoe": "FACEUP", "excess": "EXCESS", "misdealt": "MISDEAL",
              "exposed": "EXPOSED"}
_WINNERS = {"player": "P", "banker": "B", "tie": "T"}
_MODES = {"collected": "C", "marked": "M"}
_ACCEPTED = {"true": "Y", "false": "N"}
_FEED_TIME = "%Y/%m/%d %H:%M:%S"
_RANKS = "A23456789TJQK"
HEARTBEAT_EVERY = 97  # a heartbeat row after every this many rows
REPEAT_EVERY = 41  # a frame sent twice after every this many rows
# the format's columns a feed carries, and the export's name for each
FEED_COLUMNS = {"table_id": "Tbl", "game": "Game", "shoe_id": "Shoe", "round": "Coup",
                "ts": "Time", "event": "Signal", "seat": "Box", "hand": "Hand",
                "target": "To", "card": "Card", "bet": "Spot", "amount": "Amt",
                "action": "Move", "player_id": "Patron", "accepted": "Took", "mode": "Mode",
                "decks": "Decks", "winner": "Won", "player_points": "PPts",
                "banker_points": "BPts", "reason": "Why", "dealer_id": "Dealer",
                "exposure": "Exposure", "disclosed": "Shown"}
FEED_WORDS = {"game": _GAMES, "event": _SIGNALS, "target": _TARGETS, "bet": _BETS,
              "action": _ACTIONS, "winner": _WINNERS, "mode": _MODES, "accepted": _ACCEPTED,
              "exposure": _EXPOSURES, "disclosed": _ACCEPTED}
_BOOLEANS = ("accepted", "disclosed")


@dataclass(frozen=True)
class CardStyle:
    """How an export writes a card, and the [source.cards] table that reads it."""

    notation: str = "index"  # index, rank_suit, suit_rank or pattern
    index_base: int = 0
    index_suits: str = "CDHS"
    ten: str = "10"  # rank_suit, suit_rank: how the ten is written
    lower: bool = False
    # pattern: each rank and suit token, and the text between them
    rank_tokens: dict[str, str] = field(default_factory=dict)
    suit_tokens: dict[str, str] = field(default_factory=dict)
    joiner: str = "-of-"

    def write(self, card: pl.Expr) -> pl.Expr:
        text = card.cast(pl.String)
        rank, suit = text.str.slice(0, 1), text.str.slice(1, 1)
        if self.notation == "index":
            at = pl.lit(_RANKS).str.find(rank, literal=True)
            number = pl.lit(self.index_suits).str.find(suit, literal=True) * 13 + at
            return (number + self.index_base).cast(pl.String)
        if self.notation == "pattern":
            ranks = rank.replace_strict({r: self.rank_tokens.get(r, r) for r in _RANKS})
            suits = suit.replace_strict({x: self.suit_tokens.get(x, x) for x in "SHDC"})
            return ranks + pl.lit(self.joiner) + suits
        written = rank.str.replace("T", self.ten, literal=True)
        both = written + suit if self.notation == "rank_suit" else suit + written
        return both.str.to_lowercase() if self.lower else both

    def profile(self) -> str:
        lines = ["\n[source.cards]", f'notation = "{self.notation}"']
        if self.notation == "index":
            lines += [f"index_base = {self.index_base}", f'index_suits = "{self.index_suits}"']
        if self.notation == "pattern":
            lines.append("pattern = " + json.dumps(
                f"(?P<rank>[^-]+){re.escape(self.joiner)}(?P<suit>.+)"))
            for name, tokens in (("ranks", self.rank_tokens), ("suits", self.suit_tokens)):
                if tokens:
                    inline = ", ".join(f"{json.dumps(t)} = {json.dumps(r)}"
                                       for r, t in tokens.items())
                    lines.append(f"{name} = {{ {inline} }}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class FeedStyle:
    """A device feed's own names: its columns, its words for the format's values, its
    card notation."""

    columns: dict[str, str] = field(default_factory=lambda: dict(FEED_COLUMNS))
    words: dict[str, dict[str, str]] = field(default_factory=lambda: dict(FEED_WORDS))
    cards: CardStyle = field(default_factory=CardStyle)
    name: str = "Simulated casino: table device feed"
    files: tuple[str, ...] = ("feed-*.jsonl", "feed-*.jsonl.gz")


def _wall_clock(ts: pl.Expr, fmt: str) -> pl.Expr:
    """The wall-clock time as written (the format reads it so), in `fmt`."""
    return ts.str.slice(0, 19).str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=False).dt.strftime(fmt)


def _coded(column: str, words: dict[str, str]) -> pl.Expr:
    return pl.col(column).cast(pl.String).str.to_lowercase().replace_strict(
        words, default=None) if column in _BOOLEANS else pl.col(column).cast(
        pl.String).replace_strict(words, default=None)


def _feed_cell(column: str, style: FeedStyle) -> pl.Expr:
    if column == "ts":
        return _wall_clock(pl.col("ts"), _FEED_TIME)
    if column == "card":
        return style.cards.write(pl.col("card"))
    if column in style.words:
        return _coded(column, style.words[column])
    return pl.col(column).cast(pl.String)


def feed(events: pl.DataFrame, style: FeedStyle | None = None) -> pl.DataFrame:
    """The hand history as a device feed: its own column names and words, its card
    notation, times as `YYYY/MM/DD hh:mm:ss`, no event numbers (the feed's order is the
    table's), a heartbeat now and then and some frames sent twice."""
    style = style or FeedStyle()
    table, signal = style.columns["table_id"], style.columns["event"]
    rows = events.sort("table_id", "seq").select(
        _feed_cell(c, style).alias(name) for c, name in style.columns.items()
    ).with_row_index("FrameNo", offset=1).with_columns(pl.col("FrameNo").cast(pl.String))
    # a frame sent again right after itself, and a heartbeat between frames
    number = pl.col("FrameNo").cast(pl.Int64)
    again = rows.filter(number % REPEAT_EVERY == 0)
    beats = rows.filter(number % HEARTBEAT_EVERY == 0).select(
        table, *[style.columns[c] for c in ("game", "ts") if c in style.columns],
        pl.lit("HEARTBEAT").alias(signal), pl.col("FrameNo"))
    order = pl.concat([rows.with_columns(pl.lit(0).alias("_k")),
                       again.with_columns(pl.lit(1).alias("_k")),
                       beats.with_columns(pl.lit(2).alias("_k"))], how="diagonal")
    return order.sort(number, "_k").drop("_k")


def write_sparse(frame: pl.DataFrame, handle) -> None:
    """JSON Lines with each row's present fields only, as a feed sends a signal."""
    for row in frame.iter_rows(named=True):
        present = {k: value for k, value in row.items() if value is not None}
        handle.write((json.dumps(present, separators=(",", ":")) + "\n").encode())


def _table(name: str, words: dict[str, str]) -> str:
    lines = [f"\n[source.values.{name}]"]
    for word, code in words.items():
        target = {"true": "true", "false": "false"}.get(word) if name in _BOOLEANS else None
        lines.append(f"{json.dumps(code)} = {target or json.dumps(word)}")
    return "\n".join(lines) + "\n"


def feed_profile(style: FeedStyle | None = None) -> str:
    """The profile that reads `feed(..., style)` back."""
    style = style or FeedStyle()
    text = (f"[profile]\nname = {json.dumps(style.name)}\nversion = 1\n\n"
            f'[[source]]\nname = "feed"\nfiles = {json.dumps(list(style.files))}\n'
            f'layout = "events"\ntimestamp_format = "{_FEED_TIME}"\n'
            'repeat_key = ["FrameNo"]\n\n[source.columns]\n')
    text += "".join(f"{c} = {json.dumps(name)}\n" for c, name in style.columns.items())
    for column, words in style.words.items():
        text += _table(column, words)
        if column == "event":
            text += '"HEARTBEAT" = ""\n'
    return text + style.cards.profile()


# --- baccarat shoe coups and RFID wagers

_COUP_TIME = "%d/%m/%Y %H:%M:%S"
_WAGER_TIME = "%Y-%m-%d %H:%M:%S"


def coups(events: pl.DataFrame) -> pl.DataFrame:
    """One row per baccarat round: its table, shoe, number, times, dealer, result and
    cards (rank then suit, ten as 10, lower case), `-` where a hand has no third card."""
    rounds = events.filter(pl.col("round") > 0)
    key = ["table_id", "shoe_id", "round"]
    start = rounds.filter(pl.col("event") == "round_start").select(
        *key, pl.col("ts").alias("_start"), pl.col("dealer_id").alias("Dealer"),
        pl.col("seq").alias("_seq"))
    end = rounds.filter(pl.col("event") == "round_end").group_by(key).agg(
        pl.col("ts").first().alias("_end"))
    result = rounds.filter(pl.col("event") == "result").group_by(key).agg(
        pl.col("winner").first().cast(pl.String).replace_strict(_WINNERS).alias("Result"),
        pl.col("player_points").first().cast(pl.String).alias("PTotal"),
        pl.col("banker_points").first().cast(pl.String).alias("BTotal"))
    dealt = rounds.filter(pl.col("event") == "card").with_columns(
        pl.int_range(pl.len()).over(*key, "target").alias("_n"))
    cards = dealt.with_columns(
        (pl.when(pl.col("target") == "player").then(pl.lit("P")).otherwise(pl.lit("B"))
         + (pl.col("_n") + 1).cast(pl.String)).alias("_slot"),
        pl.col("card").cast(pl.String).str.replace("^T", "10").str.to_lowercase().alias("_c"),
    ).pivot("_slot", index=key, values="_c", aggregate_function="first")
    decks = events.filter(pl.col("event") == "shuffle").group_by("table_id", "shoe_id").agg(
        pl.col("decks").last().cast(pl.String).alias("Decks"))
    table = (start.join(end, on=key, how="left").join(result, on=key, how="left")
             .join(cards, on=key, how="left").join(decks, on=["table_id", "shoe_id"],
                                                   how="left")
             .sort("table_id", "_seq"))
    slots = [f"{h}{n}" for h in "PB" for n in (1, 2, 3)]
    return table.select(
        pl.col("table_id").alias("TableNo"), pl.col("shoe_id").alias("ShoeBarcode"),
        pl.col("round").cast(pl.String).alias("CoupNo"),
        _wall_clock(pl.col("_start"), _COUP_TIME).alias("StartTime"),
        _wall_clock(pl.col("_end"), _COUP_TIME).alias("EndTime"),
        "Dealer", "Decks", "Result", "PTotal", "BTotal",
        *[(pl.col(s) if s in table.columns else pl.lit(None, pl.String)).fill_null("-")
          .alias(s) for s in slots])


def wagers(events: pl.DataFrame) -> pl.DataFrame:
    """One row per round, seat and bet: the stake in cents, its settlement, the seat's
    commission on its banker row, and where each was settled (the event's number)."""
    key = ["table_id", "shoe_id", "round", "seat"]
    money = events.filter(pl.col("event").is_in(["wager", "collect", "pay", "push"]))
    cents = (pl.col("amount").cast(pl.Float64) * 100).round().cast(pl.Int64)
    rows = money.group_by(*key, "bet").agg(
        pl.col("ts").filter(pl.col("event") == "wager").min().alias("_placed"),
        pl.col("ts").min().alias("_any"),
        cents.filter(pl.col("event") == "wager").sum().alias("stake_cents"),
        *[pl.col("amount").cast(pl.Float64).filter(pl.col("event") == e).sum().alias(e)
          for e in ("collect", "pay", "push")],
        pl.col("seq").filter(pl.col("event") != "wager").min().alias("settled_at"),
        pl.col("seq").min().alias("_first"),
    )
    vig = events.filter(pl.col("event") == "vig").group_by(key).agg(
        pl.col("amount").cast(pl.Float64).sum().alias("commission"),
        pl.col("mode").first().cast(pl.String).replace_strict(_MODES).alias("commission_mode"),
        pl.col("seq").min().alias("commission_at"))
    # the commission goes on the seat's banker row, else its first row of the round
    pick = rows.with_columns(
        pl.int_range(pl.len()).sort_by(pl.col("bet").cast(pl.String) != "banker", "_first")
        .over(key).alias("_pick"))
    rows = pl.concat([
        pick.filter(pl.col("_pick") == 0).join(vig, on=key, how="full", coalesce=True),
        pick.filter(pl.col("_pick") > 0)], how="diagonal_relaxed")
    rows = rows.with_columns(pl.col("bet").cast(pl.String).fill_null("banker"))
    return rows.sort("table_id", "_first", nulls_last=True).select(
        pl.col("table_id").alias("table"),
        _wall_clock(pl.coalesce("_placed", "_any"), _WAGER_TIME).alias("placed"),
        pl.col("seat").alias("position"),
        pl.col("bet").replace_strict(_BETS, default=None).alias("spot"),
        "stake_cents",
        *[pl.when(pl.col(e) > 0).then(pl.col(e)).alias(name) for e, name in
          (("pay", "won"), ("collect", "lost"), ("push", "returned"))],
        "commission", "commission_mode", "settled_at", "commission_at")


COUPS_PROFILE = """\
[profile]
name = "Simulated casino: baccarat shoe coups and RFID wagers"
version = 1

[[source]]
name = "coups"
files = ["coups-*.csv"]
layout = "coups"
delimiter = ";"
timestamp_format = "%d/%m/%Y %H:%M:%S"
shoe_starts = "new_shoe_id"

[source.columns]
table_id = "TableNo"
game = { value = "baccarat" }
shoe_id = "ShoeBarcode"
round = "CoupNo"
ts = "StartTime"
end_ts = "EndTime"
dealer_id = "Dealer"
decks = "Decks"
winner = "Result"
player_points = "PTotal"
banker_points = "BTotal"

[source.values.winner]
P = "player"
B = "banker"
T = "tie"

[source.cards]
notation = "rank_suit"
none = ["", "-"]
player = ["P1", "P2", "P3"]
banker = ["B1", "B2", "B3"]

[[source]]
name = "rfid"
files = ["wagers-*.jsonl"]
layout = "wagers"
join = "time"
timestamp_format = "%Y-%m-%d %H:%M:%S"

[source.columns]
table_id = "table"
ts = "placed"
seat = "position"
bet = "spot"
amount = { sql = "CAST(stake_cents AS DOUBLE) / 100" }
pay = "won"
collect = "lost"
push = "returned"
vig = "commission"
vig_mode = "commission_mode"
settle_order = "settled_at"
vig_order = "commission_at"
"""


def coups_profile() -> str:
    return (COUPS_PROFILE + _table("bet", {k: v for k, v in _BETS.items()
                                          if k not in ("main", "double", "split",
                                                       "insurance")})
            + _table("vig_mode", _MODES))


# --- blackjack shoe coups and table-management wagers, joined by round

def blackjack_coups(events: pl.DataFrame) -> pl.DataFrame:
    """One row per blackjack round, box and hand: its cards as the contract lists them (a
    hand made by a split: the card it took from the pair, then its own; a hand that
    split: its first card, then those after its last split), its decisions, and the
    dealer's cards, each a space-separated cell; rank then suit, ten as T."""
    rounds = events.filter(pl.col("round") > 0).sort("table_id", "seq")
    rows = []
    for key, played in rounds.group_by("table_id", "shoe_id", "round", maintain_order=True):
        rows += _blackjack_round(key, played)
    columns = {"Table": pl.String, "Shoe": pl.String, "Round": pl.String,
               "Start": pl.String, "End": pl.String, "Dealer": pl.String, "Decks": pl.String,
               "Box": pl.String, "Hand": pl.String, "Cards": pl.String,
               "Decisions": pl.String, "DealerCards": pl.String}
    decks = events.filter(pl.col("event") == "shuffle").group_by("table_id", "shoe_id").agg(
        pl.col("decks").last().cast(pl.String).alias("_decks"))
    frame = pl.DataFrame(rows, schema=columns, orient="row")
    return frame.join(decks.rename({"table_id": "Table", "shoe_id": "Shoe"}),
                      on=["Table", "Shoe"], how="left", maintain_order="left").with_columns(
        pl.coalesce("Decks", "_decks").alias("Decks")).drop("_decks")


def _blackjack_round(key: tuple, played: pl.DataFrame) -> list[tuple]:
    """The rows of one round: each hand's cards as listed, its decisions, the dealer's."""
    table, shoe, number = key
    start = played.filter(pl.col("event") == "round_start").row(0, named=True) \
        if played.filter(pl.col("event") == "round_start").height else None
    end = played.filter(pl.col("event") == "round_end")
    when = start["ts"] if start else played["ts"][0]
    finish = end["ts"][0] if end.height else when
    held: dict[tuple[int, int], list[str]] = {}
    listed: dict[tuple[int, int], list[str]] = {}
    decisions: dict[tuple[int, int], list[str]] = {}
    dealer: list[str] = []
    made = {}
    for row in played.iter_rows(named=True):
        event = row["event"]
        if event == "card" and row["target"] == "dealer":
            dealer.append(row["card"])
        elif event == "card" and row["seat"] is not None:
            hand = (row["seat"], row["hand"] or 1)
            held.setdefault(hand, []).append(row["card"])
            listed.setdefault(hand, []).append(row["card"])
        elif event == "action" and row["seat"] is not None:
            hand = (row["seat"], row["hand"] or 1)
            decisions.setdefault(hand, []).append(row["action"])
            if row["action"] == "split":
                seat = row["seat"]
                made[seat] = made.get(seat, max(
                    [h for s, h in listed if s == seat] + [1])) + 1
                new = (seat, made[seat])
                pair = held.get(hand, [])
                moved = pair.pop() if len(pair) > 1 else None
                held[new] = [moved] if moved else []
                listed[new] = [moved] if moved else []
                listed[hand] = listed.get(hand, [])[:1]
                held[hand] = pair
    hands = sorted(set(listed) | set(decisions))
    return [(table, shoe, str(number), _wall_clock_value(when), _wall_clock_value(finish),
             start["dealer_id"] if start else None, None, str(seat), str(hand),
             " ".join(listed.get((seat, hand), [])),
             # a refuse (1.2) has no word in a shoe reader's coups: left out
             " ".join(_ACTION_WORDS[a] for a in decisions.get((seat, hand), [])
                      if a in _ACTION_WORDS),
             " ".join(dealer))
            for seat, hand in hands]


_ACTION_WORDS = {"hit": "HIT", "stand": "STAND", "double": "DOUBLE", "split": "SPLIT",
                 "surrender": "SURRENDER"}


def _wall_clock_value(ts: str | None) -> str | None:
    return None if ts is None else ts[:19].replace("T", " ")


def blackjack_wagers(events: pl.DataFrame) -> pl.DataFrame:
    """One row per round, box, hand, bet and patron: the wager and its settlement, and
    where it was settled (the event's number)."""
    key = ["table_id", "shoe_id", "round", "seat", "hand", "bet", "player_id"]
    money = events.filter(pl.col("event").is_in(["wager", "collect", "pay", "push"]))
    rows = money.with_columns(pl.col("player_id").fill_null("")).group_by(key).agg(
        pl.when((pl.col("event") == "wager").any()).then(
            pl.col("amount").cast(pl.Float64).filter(pl.col("event") == "wager").sum())
        .alias("Amount"),
        *[pl.col("amount").cast(pl.Float64).filter(pl.col("event") == e).sum().alias(e)
          for e in ("collect", "pay", "push")],
        pl.col("seq").filter(pl.col("event") != "wager").min().alias("SettledAt"),
        pl.col("seq").min().alias("_first"))
    return rows.sort("table_id", "_first").select(
        pl.col("table_id").alias("Table"), pl.col("shoe_id").alias("Shoe"),
        pl.col("round").cast(pl.String).alias("Round"), pl.col("seat").cast(pl.String)
        .alias("Box"), pl.col("hand").cast(pl.String).alias("Hand"),
        pl.col("bet").cast(pl.String).alias("Bet"),
        pl.when(pl.col("player_id") != "").then(pl.col("player_id")).alias("Patron"),
        pl.col("Amount"),
        *[pl.when(pl.col(e) > 0).then(pl.col(e)).alias(name) for e, name in
          (("pay", "Paid"), ("collect", "Taken"), ("push", "Returned"))],
        pl.col("SettledAt"))


BLACKJACK_PROFILE = """\
[profile]
name = "Simulated casino: blackjack shoe coups and table-management wagers"
version = 1

[[source]]
name = "coups"
files = ["bj-coups-*.csv"]
layout = "coups"
timestamp_format = "%Y-%m-%d %H:%M:%S"
shoe_starts = "new_shoe_id"

[source.columns]
table_id = "Table"
game = { value = "blackjack" }
shoe_id = "Shoe"
round = "Round"
ts = "Start"
end_ts = "End"
dealer_id = "Dealer"
decks = "Decks"
seat = "Box"
hand = "Hand"
cards = "Cards"
actions = "Decisions"
dealer_cards = "DealerCards"

[source.values.action]
HIT = "hit"
STAND = "stand"
DOUBLE = "double"
SPLIT = "split"
SURRENDER = "surrender"

[source.cards]
notation = "rank_suit"

[[source]]
name = "wagers"
files = ["bj-wagers-*.csv"]
layout = "wagers"
join = "round"

[source.columns]
table_id = "Table"
shoe_id = "Shoe"
round = "Round"
seat = "Box"
hand = "Hand"
bet = "Bet"
player_id = "Patron"
amount = "Amount"
pay = "Paid"
collect = "Taken"
push = "Returned"
settle_order = "SettledAt"
"""


# --- (1.1) blackjack boxes: one row per round and box, every hand of the box in one row,
# as a simulator writes them: bracketed lists (Python's literals), a hit recorded for the
# second card of a hand made or left by a split

_BOX_WORDS = {"hit": "H", "stand": "S", "double": "D", "split": "P", "surrender": "R"}
INSURED = "I"  # (nets) the box took insurance: an action element, no decision
# (points) a card by its value, as a simulator writes it: a ten-value card 10, an ace 11
_POINTS = {r: (11 if r == "A" else 10 if r in "TJQK" else int(r)) for r in _RANKS}


@dataclass(frozen=True)
class BoxStyle:
    """What a box-rows export records: its round numbers and times, or neither; (nets)
    the box's main wager and net result (`Bet`, `Net`: no wagers export beside it, an
    `I` first among hand 1's actions where the box took insurance); (points) its cards
    by value only, an ace as 11."""

    rounds: bool = True
    clock: bool = True
    json: bool = False  # the lists as JSON writes them (else as Python's literals)
    spaced: bool = True  # a space after each comma
    nets: bool = False
    points: bool = False

    def written(self, value: list) -> str:
        text = json.dumps(value) if self.json else str(value)
        return text if self.spaced else text.replace(", ", ",")

    def card(self, code: str) -> str | int:
        return _POINTS[code[0]] if self.points else code


# a simulator's export: one row per round and box, no round number, no clock, cards by
# value, the box's main wager and net result (`auditor simulate blackjack --layout boxes`)
SIMULATOR_STYLE = BoxStyle(rounds=False, clock=False, nets=True, points=True)


def blackjack_boxes(events: pl.DataFrame, style: BoxStyle | None = None) -> pl.DataFrame:
    """One row per blackjack round and box: `Cards` the box's hands as a list of lists
    (each hand's cards as the contract lists them), `Actions` the decisions aligned with
    them, `Dealer` the dealer's cards, each Python's literal of a list; with `nets`, `Bet`
    (the box's main wagers, in dollars) and `Net` (what the box's wagers won or lost, as
    the single settlements recorded it: simulate.nets). Read in one pass over the rows."""
    style = style or BoxStyle()
    rounds = events.filter(pl.col("round") > 0).sort("table_id", "seq").select(
        "table_id", "shoe_id", "round", "ts", pl.col("event").cast(pl.String), "seat",
        "hand", pl.col("target").cast(pl.String), pl.col("card").cast(pl.String),
        pl.col("action").cast(pl.String), pl.col("bet").cast(pl.String),
        (pl.col("amount").cast(pl.Float64) * 100).round().cast(pl.Int64).alias("cents"))
    rows: list[tuple] = []
    key, played = None, []
    for row in rounds.iter_rows():
        if row[:3] != key:
            if played:
                rows += _box_rows(key, played, style)
            key, played = row[:3], []
        played.append(row)
    if played:
        rows += _box_rows(key, played, style)
    frame = pl.DataFrame(rows, schema={
        "Table": pl.String, "Shoe": pl.String, "Round": pl.String, "Start": pl.String,
        "Box": pl.String, "Cards": pl.String, "Actions": pl.String, "Dealer": pl.String,
        "_main": pl.Int64}, orient="row")
    if style.nets:
        from .nets import _nets

        nets = _nets(events).select(
            pl.col("table_id").alias("Table"), pl.col("shoe_id").alias("Shoe"),
            pl.col("round").cast(pl.String).alias("Round"),
            pl.col("seat").cast(pl.String).alias("Box"), "net_cents")
        frame = frame.join(nets, on=["Table", "Shoe", "Round", "Box"], how="left",
                           maintain_order="left").with_columns(
            (pl.col("_main") / 100).alias("Bet"), (pl.col("net_cents") / 100).alias("Net"))
    frame = frame.select(
        "Table", "Shoe", *(["Round"] if style.rounds else []),
        *(["Start"] if style.clock else []), "Box", "Cards", "Actions", "Dealer",
        *(["Bet", "Net"] if style.nets else []))
    return frame


def _box_rows(key: tuple, played: list[tuple], style: BoxStyle) -> list[tuple]:
    """The rows of one round (`played`: its events as blackjack_boxes selects them)."""
    table, shoe, number = key
    starts = [r[3] for r in played if r[4] == "round_start"]
    when = _wall_clock_value(starts[0] if starts else played[0][3])
    listed: dict[tuple[int, int], list] = {}
    held: dict[tuple[int, int], list] = {}
    decisions: dict[tuple[int, int], list[str]] = {}
    waiting: set[tuple[int, int]] = set()  # one-card hands made or left by a split
    dealer: list = []
    made: dict[int, int] = {}
    mains: dict[int, int] = {}
    insured: set[int] = set()
    for _, _, _, _, event, seat, hand_no, target, card, action, bet, cents in played:
        hand = (seat, hand_no or 1)
        if event == "card" and target == "dealer":
            dealer.append(style.card(card))
        elif event == "card" and seat is not None:
            if hand in waiting:  # the request for its second card, recorded as a hit
                decisions.setdefault(hand, []).append("H")
                waiting.discard(hand)
            held.setdefault(hand, []).append(style.card(card))
            listed.setdefault(hand, []).append(style.card(card))
        elif event == "action" and seat is not None and action in _BOX_WORDS:
            decisions.setdefault(hand, []).append(_BOX_WORDS[action])
            if action == "split":
                made[seat] = made.get(seat, max([h for s, h in listed if s == seat] + [1])) + 1
                new = (seat, made[seat])
                pair = held.get(hand, [])
                moved = pair.pop() if len(pair) > 1 else None
                held[new] = [moved] if moved is not None else []
                listed[new] = [moved] if moved is not None else []
                listed[hand] = listed.get(hand, [])[:1]
                held[hand] = pair
                waiting |= {hand, new}
        elif event == "wager" and seat is not None:
            if bet == "main" and hand[1] == 1:
                mains[seat] = mains.get(seat, 0) + (cents or 0)
            elif bet == "insurance":
                insured.add(seat)
    seats = sorted({s for s, _ in listed} | {s for s, _ in decisions})
    out = []
    for seat in seats:
        hands = sorted({h for s, h in [*listed, *decisions] if s == seat})
        actions = [decisions.get((seat, h), []) for h in hands]
        if style.nets and seat in insured:
            actions[0] = [INSURED, *actions[0]]
        out.append((table, shoe, str(number), when, str(seat),
                    style.written([listed.get((seat, h), []) for h in hands]),
                    style.written(actions), style.written(dealer), mains.get(seat)))
    return out


BOXES_PROFILE = """\
[profile]
name = "Simulated casino: blackjack boxes, every hand of a box in one row"
version = 1

[[source]]
name = "boxes"
files = ["bj-boxes-*.csv"]
layout = "coups"
lists = "bracketed"
{clock}
[source.columns]
table_id = "Table"
game = {{ value = "blackjack" }}
shoe_id = "Shoe"
{columns}seat = "Box"
cards = "Cards"
actions = "Actions"
dealer_cards = "Dealer"
{nets}
[source.values.action]
H = "hit"
S = "stand"
D = "double"
P = "split"
R = "surrender"
{insured}
[source.cards]
notation = "{notation}"
"""


def boxes_profile(style: BoxStyle | None = None, wagers: bool = True) -> str:
    """The profile that reads `blackjack_boxes(..., style)` back, with the table-management
    wagers (joined by round, where the boxes have round numbers and no net results)."""
    style = style or BoxStyle()
    columns = ('round = "Round"\n' if style.rounds else "") + (
        'ts = "Start"\n' if style.clock else "")
    clock = 'timestamp_format = "%Y-%m-%d %H:%M:%S"\n' if style.clock else ""
    text = BOXES_PROFILE.format(
        clock=clock, columns=columns,
        nets='amount = "Bet"\nnet = "Net"\n' if style.nets else "",
        insured=f'{INSURED} = "insurance"\n' if style.nets else "",
        notation="points" if style.points else "rank_suit")
    if wagers and style.rounds and not style.nets:
        text += BLACKJACK_PROFILE[BLACKJACK_PROFILE.index('[[source]]\nname = "wagers"'):]
    return text


# The profile written beside a simulator's export (SIMULATOR_STYLE, `auditor simulate
# blackjack --layout boxes`): it reads what `blackjack_boxes(events, SIMULATOR_STYLE)` writes
SIMULATOR_PROFILE = """\
[profile]
name = "Simulator: blackjack boxes with net results"
version = 1

[[source]]
name = "boxes"
files = ["boxes-*.csv"]
layout = "coups"
lists = "bracketed"                 # [[6, 10], [6, 4, 11]]: Python's list literals

[source.columns]
table_id = "Table"
game = { value = "blackjack" }
shoe_id = "Shoe"                    # no round: numbered within each shoe from the rows
seat = "Box"                        # no ts: the rows have no time
cards = "Cards"                     # every hand of the box, in hand-number order
actions = "Actions"                 # aligned with the hands
dealer_cards = "Dealer"
amount = "Bet"                      # the box's main wager
net = "Net"                         # the box's net result over the round

[source.values.action]
H = "hit"                           # on a one-card split hand: the request for its card
S = "stand"
D = "double"                        # its wager presumed at the main wager
P = "split"                         # its wager presumed at the main wager
R = "surrender"
I = "insurance"                     # its wager presumed at half the main wager

[source.cards]
notation = "points"                 # values: 2-10 (10 any ten-value card), an ace 11
"""


def write(events: pl.DataFrame, out: Path, layout: str, stem: str,
          style: FeedStyle | None = None) -> list[Path]:
    """The day in `layout` (events: a feed of both games; coups and wagers: the baccarat
    tables as coups and their wagers; (1.1) boxes: the blackjack tables as a simulator's
    export, SIMULATOR_STYLE), and its profile, in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    if layout == "boxes":
        path = out / f"boxes-{stem}.csv"
        blackjack_boxes(events.filter(pl.col("game") == "blackjack"),
                        SIMULATOR_STYLE).write_csv(path)
        profile = out / "profile.toml"
        profile.write_text(SIMULATOR_PROFILE, encoding="utf-8")
        return [path, profile]
    if layout == "events":
        # a feed writes only the fields each signal has; kept gzipped, as feeds are
        path = out / f"feed-{stem}.jsonl.gz"
        with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as handle:
            write_sparse(feed(events, style), handle)
        profile = out / "profile.toml"
        profile.write_text(feed_profile(style), encoding="utf-8")
        return [path, profile]
    baccarat = events.filter(pl.col("game") == "baccarat")
    if baccarat.is_empty():
        played = events.filter(pl.col("game") == "blackjack")
        coup_path = out / f"bj-coups-{stem}.csv"
        wager_path = out / f"bj-wagers-{stem}.csv"
        blackjack_coups(played).write_csv(coup_path)
        blackjack_wagers(played).write_csv(wager_path)
        profile = out / "profile.toml"
        profile.write_text(BLACKJACK_PROFILE, encoding="utf-8")
        return [coup_path, wager_path, profile]
    coup_path, wager_path = out / f"coups-{stem}.csv", out / f"wagers-{stem}.jsonl"
    coups(baccarat).write_csv(coup_path, separator=";")
    wagers(baccarat).write_ndjson(wager_path)
    profile = out / "profile.toml"
    profile.write_text(coups_profile(), encoding="utf-8")
    return [coup_path, wager_path, profile]
