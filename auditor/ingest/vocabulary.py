"""The words of hand-history-v1: its columns, events and allowed values.

Everything the readers, the parser and the schema know about the format is
here, so the contract is written down once.
"""

from __future__ import annotations

# Column name -> the dtype it has once parsed. Money is held in integer cents
# (`amount_cents`) so that no sum is ever off by a rounding error.
COLUMNS: tuple[str, ...] = (
    "table_id",
    "game",
    "shoe_id",
    "round",
    "seq",
    "ts",
    "event",
    "seat",
    "hand",
    "target",
    "card",
    "bet",
    "amount",
    "action",
    "player_id",
    "accepted",
    "mode",
    "decks",
    "winner",
    "player_points",
    "banker_points",
    "reason",
    # (1.1, optional) on round_start the round's dealer, on shuffle who shuffled
    "dealer_id",
    # (1.2, Irregularities) on card_exposed: how the card left the deal, and (baccarat)
    # whether its face was shown
    "exposure",
    "disclosed",
)

REQUIRED_COLUMNS: tuple[str, ...] = ("table_id", "game", "shoe_id", "round", "seq", "ts", "event")
# Fields no rule reads to replay a round: a row without them is reported, its round judged
NOT_NEEDED_FOR_REPLAY: tuple[str, ...] = ("ts", "player_id", "reason")

INTEGER_COLUMNS: tuple[str, ...] = (
    "round",
    "seq",
    "seat",
    "hand",
    "decks",
    "player_points",
    "banker_points",
)

GAMES = ("baccarat", "blackjack")

# (1.2) A card exposed in error is a shoe-level row: between rounds it makes no round
SHOE_EVENTS = ("shuffle", "burn", "cover_card", "shoe_offer", "card_exposed")
ROUND_EVENTS = (
    "round_start",
    "wager",
    "no_more_bets",
    "card",
    "action",
    "result",
    "collect",
    "pay",
    "push",
    "vig",
    "vig_settle",
    "void",
    "round_end",
    # (1.2, Irregularities)
    "dead_hand",
    "hole_card_check",
    # (1.3) a box's net result where no single settlement was recorded
    "settle_net",
)
EVENTS = SHOE_EVENTS + ROUND_EVENTS
MONEY_EVENTS = ("wager", "collect", "pay", "push")

TARGETS = ("player", "banker", "dealer", "seat")
BACCARAT_BETS = ("banker", "player", "tie", "dragon_banker", "dragon_player", "dragon7", "panda8")
BLACKJACK_BETS = ("main", "double", "split", "insurance")
BETS = BACCARAT_BETS + BLACKJACK_BETS
ACTIONS = ("hit", "stand", "double", "split", "surrender", "refuse")  # refuse: 1.2
MODES = ("collected", "marked")
WINNERS = ("player", "banker", "tie")

RANKS = "A23456789TJQK"
SUITS = "SHDC"
# Every card code, rank then suit (e.g. TD)
CARDS = tuple(rank + suit for rank in RANKS for suit in SUITS)
# (1.3, Cards known by value) the suit `*` where it was not recorded (`8*`), and the rank
# `X` of a ten-value card whose rank was not recorded (`X*`): `X` only with `*`
NOT_RECORDED = "*"
TEN_VALUE = "X"
TEN_VALUE_RANKS = "TJQK"
VALUE_ONLY_CARDS = tuple(rank + NOT_RECORDED for rank in RANKS + TEN_VALUE)
# A card is valid when it is one of these
CARD_CODES = CARDS + VALUE_ONLY_CARDS

# Which fields each event must carry (the "fields" columns of the Events
# tables). `hand` is required on blackjack money and action rows only, and
# `seat` on blackjack cards dealt to a seat; those are game-conditional and
# handled in the schema.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "shuffle": ("decks",),
    "burn": ("card",),
    "cover_card": (),
    "shoe_offer": ("seat", "accepted"),
    "round_start": (),
    "wager": ("seat", "bet", "amount"),
    "no_more_bets": (),
    "card": ("target", "card"),
    "action": ("seat", "hand", "action"),
    "result": ("winner", "player_points", "banker_points"),
    "collect": ("seat", "bet", "amount"),
    "pay": ("seat", "bet", "amount"),
    "push": ("seat", "bet", "amount"),
    "vig": ("seat", "amount", "mode"),
    "vig_settle": ("seat", "amount"),
    "void": ("reason",),
    "round_end": (),
    # (1.2) `disclosed` (baccarat) and `target` (misdealt) are required by game and
    # exposure: the schema says so
    "card_exposed": ("card", "exposure"),
    "dead_hand": ("seat", "hand"),
    "hole_card_check": (),
    # (1.3) optional `hand`, `bet`, `player_id` narrow its scope; `amount` is signed
    "settle_net": ("seat", "amount"),
}

# Bookkeeping columns added by the reader: which file, which 1-based line, and
# a global row number that ties every finding back to its row.
FILE_ID = "file_id"
LINE = "line"
ROW = "row"

# Columns of a few distinct words, held as categoricals from typing on (memory, and
# comparisons of 4-byte codes); compare them with strings as usual, cast to String
# before string operations.
CATEGORICAL_COLUMNS = ("game", "event", "bet", "action", "mode", "winner", "dealer_id",
                       "exposure")
BOOLEAN_COLUMNS = ("accepted", "disclosed")

# Version 1.2 (Irregularities): the words the format adds (also in the lists above)
EVENTS_1_2 = ("card_exposed", "dead_hand", "hole_card_check")
ACTIONS_1_2 = ("refuse",)
BACCARAT_EXPOSURES = ("face_up_in_shoe", "excess", "misdealt")
BLACKJACK_EXPOSURES = ("exposed",)
EXPOSURES = BACCARAT_EXPOSURES + BLACKJACK_EXPOSURES
COLUMNS_1_2 = ("exposure", "disclosed")

# Version 1.3: a box's net result (`settle_net`), in place of the single settlements
# (collect, pay, push, vig) of the wagers in its scope: the finest of seat, hand, bet and
# player_id its row gives. Its `amount` is the one that may be negative (a loss).
NET_EVENT = "settle_net"
SINGLE_SETTLEMENTS = ("collect", "pay", "push", "vig")
SCOPE_COLUMNS = ("seat", "hand", "bet", "player_id")
# A `wager` row whose `reason` is PRESUMED has an amount an export's reading presumed, not
# one a table system recorded (export-profiles-v1 1.1, "A net result against presumed
# amounts": a double or split at the main wager, insurance at half). The rules on its
# amount do not judge it, and a net passes where any amount the rules allow for it gives
# the net. A hand history records its amounts: a table system writes no such mark; it is
# the profiles' reading (and `auditor import`, which keeps it) that sets it, here and
# nowhere else.
PRESUMED = "presumed"
