"""Rules about the input itself: rows and files that break hand-history-v1.

The checks live in `auditor.ingest` (readers, parser, pandera schema, order
checks); these are their ids, titles and docs. They cite the section of the
format they enforce.
"""

from __future__ import annotations

from .registry import Rule, register

FILES = "hand-history-v1 Files"
COLUMNS = "hand-history-v1 Columns"
EVENTS = "hand-history-v1 Events"
HOUSE = "hand-history-v1 House rules"
CUT = "hand-history-v1 Logs cut at any hour"
NETS = "hand-history-v1 Cards known by value, and net results"

FILE_UNREADABLE = register(
    Rule(
        "IN001",
        "file-unreadable",
        "Log file cannot be read",
        FILES,
        "error",
        "input",
        "A log file that cannot be opened or decoded at all, or a gzip stream that ends early "
        "(what was read before the cut is still audited).",
        "day.jsonl.gz cut off in the middle of the compressed stream.",
        "day.jsonl.gz whose gzip stream ends cleanly.",
    )
)
RECORD_MALFORMED = register(
    Rule(
        "IN002",
        "record-malformed",
        "Record cannot be parsed",
        FILES,
        "error",
        "input",
        "A JSON line that is not one complete JSON object (e.g. truncated), or a CSV row whose "
        "number of fields differs from the header's.",
        '{"table_id":"BAC-01","game":"baccarat","shoe_id":"S1","round":3,"se',
        '{"table_id":"BAC-01","game":"baccarat","shoe_id":"S1","round":3,"seq":41,...}',
    )
)
COLUMN_MISSING = register(
    Rule(
        "IN003",
        "column-missing",
        "Column missing from a CSV or Parquet file",
        COLUMNS,
        "error",
        "input",
        "A CSV header or Parquet schema that lacks one of the format's columns. Rows that need "
        "the column are reported as missing the field.",
        "table_id,game,shoe_id,round,seq,ts,event,seat,bet (no `amount` column)",
        "A header with every column of the format, empty where an event does not use it.",
    )
)
FIELD_MISSING = register(
    Rule(
        "IN004",
        "field-missing",
        "Required field missing",
        EVENTS,
        "error",
        "input",
        "A row without a field its event requires: every row needs table_id, game, shoe_id, "
        "round, seq, ts and event; a wager needs seat, bet and amount; a card needs target and "
        "card; and so on per the Events tables.",
        '{"event":"wager","seat":3,"bet":"banker"} (no amount)',
        '{"event":"wager","seat":3,"bet":"banker","amount":25}',
    )
)
EVENT_UNKNOWN = register(
    Rule(
        "IN005",
        "event-unknown",
        "Unknown event",
        EVENTS,
        "error",
        "input",
        "An `event` value the format does not define.",
        '{"event":"payout", ...}',
        '{"event":"pay", ...}',
    )
)
CARD_INVALID = register(
    Rule(
        "IN006",
        "card-code-invalid",
        "Card code not rank then suit",
        COLUMNS,
        "error",
        "input",
        "A `card` that is not a rank from A23456789TJQK followed by a suit from SHDC, nor "
        "(format 1.3) a card known by value only: a rank followed by `*` (`8*`, its suit not "
        "recorded) or `X*` (a ten-value card, its rank not recorded). `X` is only written "
        "with `*`: `XS` or `X` alone is a bad card.",
        '{"event":"card","target":"player","card":"1S"}',
        '{"event":"card","target":"player","card":"TS"}',
    )
)
AMOUNT_INVALID = register(
    Rule(
        "IN007",
        "amount-invalid",
        "Amount negative or not decimal dollars",
        COLUMNS,
        "error",
        "input",
        "An `amount` that is negative (but a `settle_net`'s, which is signed: format 1.3), "
        "not a number (NaN and the infinities of a Parquet "
        "column included), has more than two decimals, or is too large for its cents to "
        "fit a 64-bit integer (above 92,233,720,368,547,757.99 dollars).",
        '{"event":"wager","amount":"-25"} or {"amount":"12.345"} or {"amount":"ten"}',
        '{"event":"wager","amount":25} or {"amount":"1.25"}',
    )
)
SEAT_OUT_OF_RANGE = register(
    Rule(
        "IN008",
        "seat-out-of-range",
        "Seat number out of range",
        COLUMNS,
        "error",
        "input",
        "A `seat` below 1, or at baccarat a seat that is not on the house's layout (`seats` in "
        "the house rules; many layouts skip seat 13). An eighth blackjack box is a rule finding, "
        "not an input error.",
        '{"game":"baccarat","event":"wager","seat":13,...} with seats = [1,...,12,14,15]',
        '{"game":"baccarat","event":"wager","seat":14,...}',
    )
)
VALUE_INVALID = register(
    Rule(
        "IN009",
        "field-value-invalid",
        "Field value not allowed by the format",
        COLUMNS,
        "error",
        "input",
        "Any other value the format does not allow: a game, target, bet, action, mode or winner "
        "outside its list (or of the other game), a non-integer seat, round, seq, hand or decks "
        "(NaN, an infinity or an integer beyond 64 bits included), points outside 0-9, a "
        "non-boolean `accepted`, a timestamp that is not ISO 8601.",
        '{"event":"card","target":"dealer"} on a baccarat table; {"seq":"12a"}',
        '{"event":"card","target":"banker"} on a baccarat table; {"seq":12}',
    )
)
SEQ_DUPLICATE = register(
    Rule(
        "IN010",
        "seq-duplicate",
        "Sequence number used twice on a table",
        COLUMNS,
        "error",
        "input",
        "Two rows of one table with the same `seq`: the order of events cannot be known. The "
        "second occurrence (in file order) is reported.",
        "BAC-01 rows with seq 41, 42, 42, 43",
        "BAC-01 rows with seq 41, 42, 43, 44 (gaps are allowed)",
        needs=("seq",),
    )
)
SEQ_BACKWARDS = register(
    Rule(
        "IN011",
        "seq-backwards",
        "Sequence number goes backwards",
        FILES,
        "error",
        "input",
        "Within a file, a row whose `seq` is lower than the previous row of the same table: "
        "rows of one table are recorded in `seq` order.",
        "BAC-01 rows in a file with seq 41, 45, 43",
        "BAC-01 rows in a file with seq 41, 43, 45",
        needs=("seq",),
    )
)
EVENT_AFTER_ROUND_END = register(
    Rule(
        "IN012",
        "event-after-round-end",
        "Event of a round after its round_end",
        EVENTS,
        "error",
        "input",
        "A row carrying a round's number whose `seq` comes after that round's `round_end`.",
        "round 7: ..., round_end (seq 90), pay (seq 91, round 7)",
        "round 7: ..., pay (seq 89), round_end (seq 90)",
    )
)
ROUND_WITHOUT_SHUFFLE = register(
    Rule(
        "IN013",
        "round-without-shuffle",
        "Round with no shuffle before it",
        EVENTS,
        "error",
        "input",
        "A round whose shoe has no `shuffle` event before it: the shoe's composition and "
        "procedure cannot be checked.",
        "shoe S9 begins with round_start (round 1) and has no shuffle",
        "shoe S9 begins with shuffle (round 0), then round_start (round 1)",
        needs=("shuffles",),
    )
)
ROUND_NOT_AUDITABLE = register(
    Rule(
        "IN014",
        "round-not-auditable",
        "Round not fully auditable: it lost a row",
        EVENTS,
        "warning",
        "input",
        "A round with at least one bad or unreadable row. It is reported rather than judged on "
        "partial data; its rows count as reported, not audited. A row whose round cannot be "
        "read makes the rounds on either side of it in its file unauditable.",
        "round 12 of shoe S3 has a wager row with a negative amount",
        "every row of round 12 of shoe S3 is valid",
    )
)
ROUND_INCOMPLETE = register(
    Rule(
        "IN015",
        "round-incomplete",
        "Round without round_start or round_end",
        EVENTS,
        "error",
        "input",
        "A round (round 1 or later) that lacks its `round_start` or its `round_end`.",
        "round 5: round_start, wager, ..., pay and no round_end",
        "round 5: round_start, ..., round_end",
    )
)
SHOE_BEGAN_BEFORE_LOG = register(
    Rule(
        "IN016",
        "shoe-began-before-log",
        "Shoe began before the log",
        CUT,
        "warning",
        "input",
        "A table's first shoe in the log has no shuffle: it began before the log (or before "
        "the context given with --context). Its rounds are judged; what needs the shoe's "
        "beginning (its decks, burn and card count) cannot be confirmed, and what carries "
        "across rounds (cover card, curator, marked commission) is judged from the first "
        "fact the log records. One warning per shoe.",
        "a nightly log that begins at round 31 of shoe BAC-01-0007",
        "the same log given the night before as context: the shoe's shuffle is in it",
        needs=("shuffles",),
    )
)
ROUND_BEGAN_BEFORE_LOG = register(
    Rule(
        "IN017",
        "round-began-before-log",
        "Round in progress where the log begins",
        CUT,
        "warning",
        "input",
        "A table's rows begin in the middle of a round (its round_start is not in the log): "
        "the round is not judged and its rows are reported. One warning per table.",
        "the log's first rows of BAC-01 are the cards and payouts of round 30, then round 31",
        "the log of BAC-01 begins with round 31's round_start",
    )
)
ROUND_CONTINUES_AFTER_LOG = register(
    Rule(
        "IN018",
        "round-continues-after-log",
        "Round in progress where the log ends",
        CUT,
        "warning",
        "input",
        "A table's rows end in the middle of a round (its round_end is not in the log): the "
        "round is not judged and its rows are reported. One warning per table.",
        "the log's last rows of BAC-01 are round 44's round_start and wagers",
        "the log of BAC-01 ends with round 44's round_end",
    )
)
SEQ_GAP = register(
    Rule(
        "IN019",
        "seq-gap",
        "Rows lost: a gap in gapless sequence numbers",
        COLUMNS,
        "warning",
        "input",
        "Where the house rules say a table's system numbers events without gaps "
        "(`seq_gapless`, for the facility or the table), a seq that skips numbers means rows "
        "were lost, not that the dealer skipped a step: reported once per gap, at the row "
        "after it, and the rounds on either side of it are not judged (nor is anything the "
        "lost rows may have held).",
        "seq_gapless = true; BAC-01 rows with seq 41, 42, 45",
        "seq_gapless = true; BAC-01 rows with seq 41, 42, 43 (or seq_gapless = false: gaps "
        "are allowed)",
        needs=("seq",),
    )
)
SETTLED_BOTH_WAYS = register(
    Rule(
        "IN020",
        "settled-by-net-and-singly",
        "Wager settled both by a net result and by a single settlement",
        NETS,
        "error",
        "input",
        "A `settle_net` (format 1.3) replaces the single settlements (collect, pay, push, vig) "
        "of the wagers in its scope, the finest of seat, hand, bet and player_id its row gives "
        "(a vig is its seat's banker wager's). A round with both for one wager, or with two "
        "nets of different scopes that share a wager, is reported at the later of the two "
        "rows and withheld: this finding says why (no IN014 for it). A net on one hand and a "
        "pay on another hand of the box is not both.",
        "box 2's settle_net of -25 at seq 40 and a collect of its main wager at seq 41",
        "box 2's settle_net of -25 at seq 40 alone; or its collect at seq 41 alone",
    )
)
NET_BEFORE_PLAY = register(
    Rule(
        "IN021",
        "net-before-play-ended",
        "Net result recorded before the round's play ended",
        NETS,
        "warning",
        "input",
        "A `settle_net` stands after the dealer's play (blackjack) or the result (baccarat): "
        "one followed by a card, action or result row of its round was recorded before the "
        "outcome it settles was known. A warning at the net: the log cannot show when the box "
        "was settled. The round is judged, the net against the outcome as replayed (the net "
        "rules, BJ707 and BA509).",
        "blackjack: box 1's settle_net at seq 12, the dealer's third card at seq 13",
        "blackjack: the dealer's last card at seq 12, box 1's settle_net at seq 13",
    )
)
TABLE_NOT_IN_HOUSE_RULES = register(
    Rule(
        "HR001",
        "table-not-in-house-rules",
        "Table not listed in the house rules",
        HOUSE,
        "warning",
        "house",
        "A table in the log that the house rules file does not list (or lists for the other "
        "game). Its rounds are audited under the section defaults.",
        "the log has BAC-07; the house rules list BAC-01 to BAC-06",
        "every table in the log has a [[tables]] entry",
    )
)
