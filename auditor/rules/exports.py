"""Rules about exports read through a profile (export-profiles-v1): what a table
system's rows hold that the profile cannot map onto the format.

The checks live in `auditor.profiles` (read and coups, which name them by id as the
ingest does the input rules'); these are their ids, titles and docs.
"""

from __future__ import annotations

from .registry import Rule, register

ERRORS = "export-profiles-v1 Errors"
LAYOUTS = "export-profiles-v1 Layouts"


def _input(rule_id: str, name: str, title: str, citation: str, what: str, fail: str,
           passing: str, severity: str = "error") -> Rule:
    return register(Rule(rule_id, name, title, citation, severity, "input", what, fail,
                         passing))


VALUE_NOT_MAPPED = _input(
    "EX001", "value-not-mapped", "Export value no map covers", ERRORS,
    "A cell (or a list element: a decision) whose value the source's value map for its "
    "column does not list: one finding per file, column and value, with the count of "
    "rows, at the first (the message names the last, and the count of rounds withheld). "
    "Every round holding such a value is withheld, never audited with the value read as "
    "nothing; the rounds it withholds get no finding of their own.",
    'winner "X" in coups.csv where [source.values.winner] lists P, B and T.',
    'winner "B", mapped to banker.')
REPEAT_KEY_DIFFERS = _input(
    "EX002", "repeat-key-differs", "Repeated frame key with other cells", LAYOUTS,
    "Rows of an events source whose repeat_key equals the row's before them (same file and "
    "table) while another mapped cell differs: each is read as a record of its own; one "
    "finding per file counts them.",
    "FrameNo 812 twice in a row, the second with another card.",
    "FrameNo 812 twice in a row, identical: a repeat, counted apart.", "warning")
COUP_WITHOUT_KEY = _input(
    "EX003", "coup-without-key", "Coup row without its table, shoe or round", LAYOUTS,
    "A coups row with an empty table_id, shoe_id or round: it makes no events.",
    "A coup row whose CoupNo cell is empty.", "Every coup row names its table, shoe and round.")
COUP_GIVEN_TWICE = _input(
    "EX004", "coup-given-twice", "Baccarat round given by two coup rows", LAYOUTS,
    "A second coups row for a baccarat round (table, shoe and round) already given: the "
    "round is withheld, reported rather than judged.",
    "Two rows for round 41 of shoe 8812 at BAC-01.", "One row per round.")
WAGER_WITHOUT_ROUND = _input(
    "EX005", "wager-without-round", "Wager row that finds no round", LAYOUTS,
    "A wagers row that joins no round of its table (join = round: no coup with its "
    "table, shoe and round; join = time: no round under way at its time), reported at "
    "its line; rows of a table no coups source gives are one finding per file and table.",
    "A wager at 14:02:11 at BAC-01 where the last round ended at 14:01:50.",
    "A wager at 14:01:40, within a round that began at 14:01:20.")
DEALER_CARDS_DIFFER = _input(
    "EX006", "dealer-cards-differ", "Blackjack coup rows disagree on the dealer's cards",
    LAYOUTS,
    "Rows of one blackjack round (its boxes and hands) whose dealer_cards differ from the "
    "round's first row: reported at each such row; the round is withheld, reported "
    "rather than judged.",
    "Box 1 lists the dealer's cards as TS 7H, box 3 as TS 8H.",
    "Every row of the round lists the dealer's cards as TS 7H.")
LIST_UNREADABLE = _input(
    "EX007", "list-cell-unreadable", "Blackjack coup list cell that does not parse",
    LAYOUTS,
    "A blackjack coups row whose cards, actions or dealer_cards cell is not a list as the "
    'source reads one (with lists = "bracketed": a bracketed list, as JSON or Python '
    "writes it; nested for every hand of a box), or whose lists do not align (a list of "
    "lists of cards beside a flat list of decisions, the dealer's cards as several "
    "hands): reported at its line; the round is withheld, reported rather than judged.",
    "Cards \"[[6, 10], [6, 4\" (a bracket not closed).",
    "Cards \"[[6, 10], [6, 4, 11]]\" and actions \"[['P', 'H', 'S'], ['D']]\".")
INSURANCE_NOT_IN_WAGERS = _input(
    "EX008", "insurance-not-in-wagers", "Insured box with no insurance wager row", LAYOUTS,
    "A blackjack coups row whose decisions say the box took insurance (an element "
    "[source.values.action] maps to insurance), where a wagers source gives the table's "
    "wagers and has no row of bet insurance for that box: reported at the coup's line; "
    "the round is withheld, its insurance wager unknown.",
    "Box 3's actions list \"I\" (mapped to insurance), and the wagers export has main and "
    "double rows for box 3 only.",
    "Box 3's actions list \"I\", and the wagers export has an insurance row for box 3.")
NET_AND_SETTLEMENT = _input(
    "EX009", "net-and-single-settlement", "Wager row with a net and a single settlement",
    LAYOUTS,
    "(1.1) A wagers row whose `net` (the wager's net result) is not empty while one of its "
    "pay, collect, push or vig is (a settlement of 0 is none): a wager is settled by its "
    "net or by single settlements, not both. Reported at its line; the row makes its "
    "wager and its net, not its single settlements, and its round is withheld, reported "
    "rather than judged. A profile may map `net` beside pay, collect, push and vig: it is "
    "each row that holds one or the other.",
    "A row with Net -25 and Lost 25.",
    "A row with Net -25 and Lost empty; another row, of another wager, with Lost 25 and "
    "Net empty.")
