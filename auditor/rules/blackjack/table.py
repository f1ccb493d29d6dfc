"""Table and shoe: boxes, deck minimum, card counts, cover card (a)(2)(ii), (b)(1), (j).

Shoe-level findings (the deck minimum) carry no round; the others are reported at
the row that shows them. Each rule owns one question: BJ101 the boxes wagered on,
BJ102 the decks a shoe declares, BJ103 the cards that come out of it (BJ105 by value,
where the log records cards by value only), BJ104 the rounds dealt from it after the
cover card.

Where the log was cut (hand-history-v1 1.1, "Logs cut at any hour"), each judges from
the first fact the log records, and only what the log proves: a shoe that began before
the log (no shuffle of it here; IN016 says so once per shoe) declares no decks, so BJ102
and BJ103 pass it by, and BJ104 takes up from its first recorded cover card (one that
came out before the log cannot be seen; the rounds after a recorded one are after the
cover-card round either way). A shoe whose end is not in the log is never judged as
ended: none of these asks for a shuffle, only BJ104 for no round after the cover-card
round, and a log that ends first shows none. The rounds set aside where a table's rows
begin and end (IN017, IN018) are not in ctx.events, so nothing of theirs is counted or
read, a cover card among their rows included. Rows given as context (yesterday's file)
are in ctx.events: with the shoe's shuffle among them the shoe is judged in full.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games import common
from ...games.blackjack import irregularities, replay
from ...games.blackjack.shoes import SHOE_KEY, deck_minimum, round_shoes, shoes
from ..registry import Rule, register

GAME = "blackjack"


# --- BJ101 (a)(2)(ii): at most seven betting areas


def boxes_above_seven(ctx: GameContext) -> pl.DataFrame:
    """A wager on a box numbered above `max_boxes`: the layout has no such betting area.
    Boxes are numbered from 1 (seat >= 1 is a format check), so more than seven boxes in
    a round always include one above seven: each such box is reported once a round, at
    its first wager row."""
    most = int(ctx.params["max_boxes"])
    wagers = replay.wagers(ctx).with_columns(pl.col("seat").n_unique().over("rid").alias("boxes"))
    above = (
        wagers.filter(pl.col("seat") > most)
        .sort("seq")
        .group_by("rid", "seat", maintain_order=True)
        .agg(pl.all().first())
    )
    return above.select(
        "table_id",
        "shoe_id",
        "round",
        "seq",
        pl.format(
            "Round {} took a wager on box {} ({} boxes wagered on in all); (a)(2)(ii) allows at "
            "most {} betting areas, boxes 1 to {}.",
            "round",
            "seat",
            "boxes",
            pl.lit(most),
            pl.lit(most),
        ).alias("message"),
        pl.lit(f"wagers on boxes 1 to {most} only").alias("expected"),
        pl.format("a wager on box {}", "seat").alias("observed"),
    )


BOX_ABOVE_SEVEN = register(
    Rule(
        "BJ101",
        "box-above-seven",
        "A wager on a box above seven, or more than seven boxes",
        "9 NYCRR 5324.10(a)(2)(ii)",
        "error",
        GAME,
        "A `wager` row (any bet) on a box numbered above 7 (`max_boxes`); as boxes are numbered "
        "from 1, this also covers a round with more than seven boxes. One finding per box and "
        "round, at the box's first wager row. Everything else about that box (its cards, "
        "decisions and settlement) is judged by the other rules as for any box.",
        'a round with {"event":"wager","seat":8,"bet":"main","amount":25}',
        "a round with wagers on boxes 1, 3 and 7",
        check=boxes_above_seven,
        needs=("wagers",),
    )
)


# --- BJ102 (b)(1): the deck minimum by dealing method and optional wagers


def table_minimums(ctx: GameContext) -> pl.DataFrame:
    """Per table of the log: the fewest decks (b)(1) allows and the paragraph that sets it.

    One row per table (not per round): the optional wagers are a list-valued house
    setting, read from the house rules rather than the `ctx.tables` columns.
    """
    rows = []
    for table_id in ctx.tables["table_id"].to_list():
        settings = ctx.house.table(table_id, GAME).settings
        least, why = deck_minimum(settings, ctx.params)
        rows.append({"table_id": table_id, "least": least, "why": why})
    return pl.DataFrame(rows, schema={"table_id": pl.String, "least": pl.Int64, "why": pl.String})


def short_shoes(ctx: GameContext) -> pl.DataFrame:
    judged = shoes(ctx).filter(pl.col("decks").is_not_null())
    short = judged.join(table_minimums(ctx), on="table_id", how="inner").filter(
        pl.col("decks") < pl.col("least")
    )
    return short.select(
        *SHOE_KEY,
        pl.lit(None, pl.Int64).alias("round"),
        pl.col("shuffle_seq").alias("seq"),
        pl.format(
            "Shoe {} was shuffled with {}; table {} needs at least {}: {}.",
            "shoe_id",
            common.decks_text(pl.col("decks")),
            "table_id",
            common.decks_text(pl.col("least")),
            "why",
        ).alias("message"),
        pl.format("at least {}", common.decks_text(pl.col("least"))).alias("expected"),
        common.decks_text(pl.col("decks")).alias("observed"),
    )


SHOE_BELOW_MINIMUM = register(
    Rule(
        "BJ102",
        "shoe-below-blackjack-deck-minimum",
        "Shoe below the deck minimum for the game's dealing and optional wagers",
        "9 NYCRR 5324.10(b)(1)",
        "error",
        GAME,
        "A `shuffle` whose `decks` is below the table's minimum: one deck (`min_decks`; "
        "`min_decks_hand_dealt` where the house says the game is dealt from the hand), two "
        "where the 20-point bonus or in-between wager is offered, six where any other optional "
        "wager is offered (house `optional_wagers`), the highest that applies. Reported once "
        "per shoe at its shuffle, with no round. A shoe whose shuffle is not in the log (the "
        "row was lost, or the shoe began before the log: IN016) declares no decks and is not "
        "judged; a shuffle the log records is, wherever the log ends. The house `decks` "
        "setting is not compared: the regulation sets a minimum.",
        "a 5-deck shuffle on a table whose house rules offer `other_bonus`",
        "a 6-deck shuffle there; a 2-deck shuffle on a hand-dealt table with no optional wager",
        check=short_shoes,
        needs=("shuffles",),
        also=(
            "9 NYCRR 5324.10(b)(1)(i)", "9 NYCRR 5324.10(b)(1)(ii)", "9 NYCRR 5324.10(b)(1)(iii)",
        ),
    )
)


# --- BJ103 (b)(1): no card more often than the decks hold


def excess_cards(ctx: GameContext) -> pl.DataFrame:
    """`common.excess_cards` over the rows of the cards that come out of a shoe more often
    than its decks hold: counting each card first is cheap, numbering every copy is not,
    and those few cards are the only ones it can report. Only shoes whose shuffle is in
    ctx.events have decks (`shoes`): a shoe that began before the log is not counted, as
    what came out of it before the log is unknown; a shoe shuffled in the log is counted
    from its shuffle, the copies the log holds being a floor where the log ends first."""
    # card and burn rows, and a card exposed in error that has no later row (1.2)
    dealt = irregularities.takes_a_card(ctx) & pl.col("card").is_not_null()
    columns = [*SHOE_KEY, "round", "seq", "event", "card"]
    rows = ctx.events.lazy().with_row_index("at").filter(dealt)
    counted = _counted_cards(ctx, rows.select("at", "rid", "card").collect(engine="in-memory"))
    if counted is None:  # counted by the three strings
        rows = rows.select("at", *columns).collect(engine="in-memory")
        decks = shoes(ctx).filter(pl.col("decks").is_not_null()).select(*SHOE_KEY, "decks")
        too_many = (
            rows.group_by(*SHOE_KEY, "card")
            .len()
            .join(decks, on=SHOE_KEY)
            .filter(pl.col("len") > pl.col("decks"))
        )
        counted = rows.join(too_many, on=[*SHOE_KEY, "card"], how="semi", maintain_order="left")
    suspect = ctx.events[counted["at"]].select(columns)
    return common.excess_cards(suspect, shoes(ctx))


def _counted_cards(ctx: GameContext, rows: pl.DataFrame) -> pl.DataFrame | None:
    """The rows (`at`: their place in ctx.events) of `rows` (at, rid, card) whose card
    comes out of its shoe more often than the shoe's decks: counted by one integer per
    shoe and card, the shoe's number in `shoes` and the card code's two bytes read as a
    number. None where a row has no round id or a code is not two bytes long."""
    code = pl.col("card").cast(pl.Binary).bin.reinterpret(dtype=pl.UInt16)
    if rows["rid"].null_count():
        return None
    shoe = replay.by_rid(ctx, round_shoes(ctx), "shoe").cast(pl.Int64)
    keyed = rows.select("at", (shoe * 2**16 + code).alias("key"))
    if keyed["key"].null_count():
        return None
    # counted as runs of the sorted keys: a sort of integers costs less than hashing them
    counts = keyed["key"].sort().rle().struct.unnest()
    decks = pl.lit(shoes(ctx)["decks"]).gather(pl.col("value") // 2**16)
    too_many = counts.filter(pl.col("len") > decks)["value"]
    return keyed.filter(pl.col("key").is_in(too_many.implode()))


CARD_OVER_DECKS = register(
    Rule(
        "BJ103",
        "card-more-often-than-shoe-decks",
        "A card appears in a shoe more often than its decks allow",
        "9 NYCRR 5324.10(b)(1)",
        "error",
        GAME,
        "Counts each rank and suit over the shoe's `burn` and `card` rows, and its "
        "`card_exposed` rows with no later card or burn row of their card (1.2): a shoe of n "
        "standard decks holds n of each card, so copy n+1 is reported at its row (one "
        "finding per card, however many copies follow). Shoes whose shuffle is not in the "
        "log (the row was lost, or the shoe began before the log: IN016) have no known "
        "decks and are not "
        "judged; a shoe shuffled in the log is counted from its shuffle even where the log "
        "ends first (copies beyond its decks are a breach however the shoe goes on). Rounds "
        "not judged (IN014, IN017, IN018) are not counted. Not judged on a table whose log "
        "records a card by value only (format 1.3: `8*`, `X*`), whose suits and ranks are "
        "not all known: BJ105 counts its cards by value.",
        "a 6-deck shoe in which the seven of hearts comes out a 7th time",
        "a 6-deck shoe in which no card comes out more than 6 times",
        check=excess_cards,
        needs=("cards", "suits", "ranks", "shuffles"),
    )
)


# --- BJ105 (b)(1): no more cards of one value than the decks hold, where only values are
# known (format 1.3)


def excess_values(ctx: GameContext) -> pl.DataFrame:
    """BJ103's count by value, on the tables whose log records a card by value only."""
    columns = [*SHOE_KEY, "round", "seq", "event", "card"]
    tables = common.tables_by_value(ctx.events)
    rows = (
        ctx.events.lazy()
        .filter(irregularities.takes_a_card(ctx) & pl.col("card").is_not_null()
                & pl.col("table_id").cast(pl.String).is_in(tables.implode()))
        .select(columns)
        .collect(engine="in-memory")
    ) if not tables.is_empty() else ctx.events.clear().select(columns)
    return common.excess_values(rows, shoes(ctx), ctx.params["card_values"])


VALUE_OVER_DECKS = register(
    Rule(
        "BJ105",
        "value-more-often-than-shoe-decks",
        "More cards of one value in a shoe than its decks hold",
        "9 NYCRR 5324.10(b)(1)",
        "error",
        GAME,
        "On a table whose log records some cards by value only (format 1.3: `8*`, `X*`), "
        "counts the cards of each value over the shoe's `burn` and `card` rows (and its "
        "`card_exposed` rows with no later card or burn row of the same code), full cards by "
        "their value too: a standard deck holds 4 aces, 4 of each value 2-9 and 16 "
        "ten-value cards (10, J, Q, K), so a shoe of n decks holds n x 4 aces, n x 4 of "
        "each of 2-9 and n x 16 ten-value cards (6 decks: 24 and 96). The first card past "
        "that count is reported at its row (one finding per value). Shoes whose shuffle is "
        "not in the log are not judged, as for BJ103. Elsewhere BJ103 counts each rank and "
        "suit, which this count cannot exceed without one of them exceeding its own: BJ103 "
        "reports it there.",
        "a 6-deck shoe whose log records cards by value only, in which a 97th ten-value "
        "card (`X*`) comes out",
        "a 6-deck shoe whose log records cards by value only, in which 96 ten-value cards "
        "come out",
        check=excess_values,
        needs=("cards", "shuffles"),
    )
)


# --- BJ104 (j): no round after the cover-card round


def rounds_after_cover(ctx: GameContext) -> pl.DataFrame:
    """Every round of a shoe numbered above the round in which its cover card came out:
    (j) completes that round, then reshuffles. Reported at each such round's start.

    `cover_round` is the first cover card in ctx.events: in a shoe that began before the
    log the real one may have come out earlier, unseen, so it bounds the cover-card round
    from above, and every round reported here is after it either way. Only rounds the log
    holds are compared, so a shoe whose end is not in the log is not judged as ended."""
    covered = shoes(ctx).filter(pl.col("cover_round").is_not_null())
    late = (
        replay.rounds(ctx)
        .select(*SHOE_KEY, "round", "start_seq")
        .join(covered.select(*SHOE_KEY, "cover_round", "cover_seq"), on=SHOE_KEY, how="inner")
        .filter(pl.col("round") > pl.col("cover_round"))
    )
    return late.select(
        *SHOE_KEY,
        "round",
        pl.col("start_seq").alias("seq"),
        pl.format(
            "The cover card of shoe {} came out in round {} (seq {}), yet round {} was dealt "
            "before a shuffle; (j) completes the cover-card round, then reshuffles.",
            "shoe_id",
            "cover_round",
            "cover_seq",
            "round",
        ).alias("message"),
        pl.format("a shuffle after round {}", "cover_round").alias("expected"),
        pl.format("round {} dealt from the same shoe", "round").alias("observed"),
    )


ROUND_AFTER_COVER = register(
    Rule(
        "BJ104",
        "round-after-cover-card-round",
        "A round dealt after the cover-card round, before the shuffle",
        "9 NYCRR 5324.10(j)",
        "error",
        GAME,
        "The cover card came out in round r (the `round` of the shoe's first `cover_card` row; "
        "one recorded before round 1 counts as round 1): round r is completed and the cards are "
        "reshuffled, so every later round of the same shoe is reported at its `round_start`. "
        "A shoe without a recorded cover card is not judged. A shoe that began before the log "
        "(IN016) is judged from the first cover card the log records: one that came out "
        "before the log cannot be seen, and the rounds after a recorded one are reported "
        "either way. A log that ends after the cover-card round, before the shuffle, holds no "
        "finding: the shoe's end is not in it.",
        "cover_card in round 52, then round 53 dealt from the same shoe",
        "cover_card in round 52, round 52 completed, then a shuffle and round 1 of a new shoe",
        check=rounds_after_cover,
        needs=("shoe_procedure",),
    )
)
