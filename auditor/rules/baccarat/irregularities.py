"""Irregularities (i)(1)-(4): a card found face up in the shoe, a card drawn in excess, a
third card misdealt to the player, and a round the shoe cannot complete.

(i)(1)-(3) are judged from the `card_exposed` rows of hand-history-v1 1.2 and what came
of each card (`auditor.games.baccarat.irregularities`: its later row, the next hand, the
discard). The spec lists the breaches judged; where a log cannot prove one (the next hand
is not in the log, or is in a new shoe) there is no finding. (i)(4) is judged from the
count of cards out of the shoe, so it needs no 1.2 row; its void round's wagers are
BA106's.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import irregularities as astray
from ...games.baccarat import replay
from ...games.baccarat.shoes import SHOE_KEY, shoes
from ...ingest import cards as card_codes
from ..registry import Rule, register

# Which row is an exposed card's later row (the same card), and whether it is the next
# hand's first card, needs its rank and suit: an `8*` may be another eight (format 1.3)
_NEEDS = ("irregularities", "cards", "deal_order", "suits", "ranks")
# the two remedies of a disclosed card (i)(1), which (i)(2) applies too
_DISCARD = "9 NYCRR 5324.20(i)(1)(i)"
_UNWAGERED_HAND = "9 NYCRR 5324.20(i)(1)(ii)"


def _round(column: str) -> pl.Expr:
    """A round number to report: none for a row before a shoe's first round."""
    return pl.when(pl.col(column) > 0).then(pl.col(column)).alias("round")


def _finding(frame: pl.DataFrame, round_: pl.Expr, seq: pl.Expr, message: pl.Expr,
             expected: pl.Expr, observed: pl.Expr) -> pl.DataFrame:
    return frame.select(
        "table_id", "shoe_id", round_.alias("round"), seq.alias("seq"),
        message.alias("message"), expected.alias("expected"), observed.alias("observed"),
    )


def _shown() -> pl.Expr:
    return pl.col("disclosed").fill_null(False)


def _burns_text() -> pl.Expr:
    return card_codes.shown_list(pl.col("discard_cards"))


def _card() -> pl.Expr:
    return card_codes.shown(pl.col("card"))


def _first_of_next() -> pl.Expr:
    """The card's later row is the next hand's first card."""
    return pl.col("later_seq").eq_missing(pl.col("next_first_seq"))


def _later_text() -> pl.Expr:
    """Where the card went: "burned at seq 40", "dealt to the banker at seq 40"."""
    return (
        pl.when(pl.col("later_seq").is_null())
        .then(pl.lit("not seen again in the log"))
        .when(pl.col("later_event") == "burn")
        .then(pl.format("burned at seq {}", "later_seq"))
        .otherwise(pl.format("dealt to the {} at seq {}", "later_target", "later_seq"))
    )


def _not_first_of_next(rows: pl.DataFrame, lead: str) -> pl.DataFrame:
    """An undisclosed card (of `rows`, whose next hand is known) that was not the next
    hand's first card, as (i)(2) and (i)(3) require. `lead` opens the message: its two
    {} are the card and its seq."""
    return _finding(
        rows.filter(~_shown() & ~_first_of_next()),
        pl.col("next_round"),
        pl.col("next_first_seq"),
        pl.format(
            lead + "round {} began with another card (the card was {}).",
            _card(), "seq", "next_round", _later_text(),
        ),
        pl.format("{} as the first card of round {}", _card(), "next_round"),
        _later_text(),
    )


def _missing_discard(frame: pl.DataFrame, how: str, paragraph: str, remedy: str,
                     unwagered_remedies: bool = True) -> pl.DataFrame:
    """A disclosed card not followed by a discard of the right count, reported at the
    discard's first burn, or (no burn) at the next hand's first card. `how` tells how the
    card went astray; `unwagered_remedies`: a hand no one wagers on would have done too."""
    none = pl.col("discard_cards").list.len() == 0
    dealt = " with wagers" if unwagered_remedies else ""
    message = (
        pl.when(none)
        .then(pl.format(
            "Card {}, {}, was disclosed (seq {}), and round {} was dealt{} with no discard "
            "before it; {} requires {}.",
            _card(), pl.lit(how), "seq", "next_round", pl.lit(dealt), pl.lit(paragraph),
            pl.lit(remedy),
        ))
        .otherwise(pl.format(
            "Card {}, {}, was disclosed (seq {}); its discard burned {} card(s) ({}), a "
            "count {} does not allow: {}.",
            _card(), pl.lit(how), "seq", pl.col("discard_cards").list.len(), _burns_text(),
            pl.lit(paragraph), pl.lit(remedy),
        ))
    )
    observed = (
        pl.when(none)
        .then(pl.format("no discard; round {} dealt{}", "next_round", pl.lit(dealt)))
        .otherwise(pl.format("discard: {}", _burns_text()))
    )
    return _finding(
        frame,
        pl.when(none).then(pl.col("next_round")).otherwise(_round("round")),
        pl.coalesce(pl.col("discard_seqs").list.first(), pl.col("next_first_seq")),
        message,
        pl.lit(remedy),
        observed,
    )


# --- BA901 (i)(1): a card found face up in the shoe

_FACE_UP_REMEDY = ("the first card face up and as many more burned as its value (A 1, 2-9 "
                   "face, 10 J Q K 10), or a complete hand no one wagers on")


def face_up_card_misused(ctx: GameContext) -> pl.DataFrame:
    rows = astray.exposed(ctx).filter(
        (pl.col("exposure") == "face_up_in_shoe") & pl.col("next_known")
    )
    used = _first_of_next()
    first = _finding(
        rows.filter(used),
        pl.col("next_round"),
        pl.col("next_first_seq"),
        pl.format(
            "Card {} was found face up in the shoe (seq {}) and then dealt as the first card "
            "of round {}, the next hand; (i)(1) forbids it.",
            _card(), "seq", "next_round",
        ),
        pl.lit("the card found face up not the next hand's first card"),
        pl.format("{} first card of round {}", _card(), "next_round"),
    )
    unremedied = rows.filter(
        _shown() & ~used & pl.col("next_wagered") & ~astray.discard_ok(ctx)
    )
    return pl.concat([
        first,
        _missing_discard(unremedied, "found face up in the shoe", "(i)(1)", _FACE_UP_REMEDY),
    ])


FACE_UP_CARD = register(
    Rule(
        "BA901",
        "face-up-card-in-shoe-misused",
        "Card found face up in the shoe used, or not discarded once disclosed",
        "9 NYCRR 5324.20(i)(1)",
        "error",
        "baccarat",
        "A `card_exposed` row of a `face_up_in_shoe` card: the card (its later row) must not "
        "be the first card of the next hand (the first round whose first card comes after "
        "it); once disclosed, it must be followed by a discard (the first card face up and "
        "its value in burns, A 1, 2-9 face, 10 J Q K 10; the exposed card first, or the "
        "exposed card, one more and that card's value) or by a next hand no one wagers on. "
        "A discard of another count is the breach. A next hand in a new shoe, or not in the "
        "log, is not judged.",
        "9H found face up and disclosed; round 12 is dealt with wagers and no burn before it",
        "9H found face up and disclosed; 9H and nine more burned, then round 12",
        check=face_up_card_misused,
        needs=_NEEDS,
        also=(_DISCARD, _UNWAGERED_HAND),
    )
)


# --- BA902 (i)(2): a card drawn in excess


def excess_card_misused(ctx: GameContext) -> pl.DataFrame:
    rows = astray.exposed(ctx).filter((pl.col("exposure") == "excess") & pl.col("next_known"))
    unused = _not_first_of_next(
        rows,
        "Card {}, drawn in excess (seq {}), was not disclosed, so (i)(2) makes it the "
        "first card of the next hand; ",
    )
    unremedied = rows.filter(_shown() & pl.col("next_wagered") & ~astray.discard_ok(ctx))
    return pl.concat([
        unused,
        _missing_discard(unremedied, "drawn in excess", "(i)(2), by the procedure of (i)(1),",
                         _FACE_UP_REMEDY),
    ])


EXCESS_CARD = register(
    Rule(
        "BA902",
        "excess-card-misused",
        "Card drawn in excess not used as the next hand's first card, or not discarded",
        "9 NYCRR 5324.20(i)(2)",
        "error",
        "baccarat",
        "A `card_exposed` row of an `excess` card: not disclosed, its later row must be the "
        "first card of the next hand; disclosed, it must be followed by a discard as in (i)(1) "
        "(or by a next hand no one wagers on). A discard of another count is the breach. A "
        "next hand in a new shoe, or not in the log, is not judged.",
        "7C drawn in excess, not disclosed, burned; round 5 begins with 2D",
        "7C drawn in excess, not disclosed; round 5 begins with 7C to the player",
        check=excess_card_misused,
        needs=_NEEDS,
        also=(_DISCARD, _UNWAGERED_HAND),
    )
)


# --- BA903 (i)(3): a third card misdealt to the player

_MISDEALT_REMEDY = ("the card and as many more as its value (10 J Q K count 10 or 0) drawn "
                    "face up into the discard rack")


def misdealt_card_misused(ctx: GameContext) -> pl.DataFrame:
    rows = astray.exposed(ctx).filter(pl.col("exposure") == "misdealt")
    must = pl.col("banker_must_draw")
    to_banker = pl.col("later_seq").eq_missing(pl.col("banker_third_seq"))
    not_banker_third = _finding(
        rows.filter(must.fill_null(False) & ~to_banker),
        _round("round"),
        pl.coalesce("banker_third_seq", "announced_seq", "seq"),
        pl.format(
            "Card {} was dealt to the player's hand with no third card authorized (seq {}); "
            "the banker's hand had to draw, so (i)(3) makes it the banker's third card, but "
            "it was {}.",
            _card(), "seq", _later_text(),
        ),
        pl.format("{} as the banker's third card", _card()),
        _later_text(),
    )
    stays = rows.filter((must == False) & pl.col("next_known"))  # noqa: E712 - not null
    unused = _not_first_of_next(
        stays,
        "Card {} was dealt to the player's hand with no third card authorized (seq {}) "
        "and the banker's hand stood; not disclosed, (i)(3) makes it the first card of "
        "the next hand, but ",
    )
    no_discard = stays.filter(_shown() & ~astray.discard_ok(ctx, ten_as_zero=True))
    discard = _missing_discard(no_discard, "dealt to the player's hand with the banker "
                               "standing", "(i)(3)", _MISDEALT_REMEDY, unwagered_remedies=False)
    return pl.concat([not_banker_third, unused, discard])


MISDEALT_CARD = register(
    Rule(
        "BA903",
        "misdealt-third-card-misused",
        "Third card misdealt to the player not given to the banker, the next hand or the "
        "discard rack",
        "9 NYCRR 5324.20(i)(3)",
        "error",
        "baccarat",
        "A `card_exposed` row of a `misdealt` card (a third card to the player's hand with "
        "none authorized). Where (f)(12) obliged the banker's hand to draw (its two-card "
        "count, the player standing on two cards; no natural), the card must be the banker's "
        "third card. Where the banker stood: not disclosed, the card must be the first card "
        "of the next hand; disclosed, a discard must follow (the card and its value in "
        "burns, or as (i)(1) allows; a 10 J Q K may count 10 or 0). A next hand in a new "
        "shoe, or not in the log, is not judged.",
        "player 4S 3D (7) stands, banker 2C 3H (5) must draw; the misdealt 6H is burned",
        "player 4S 3D (7) stands, banker 2C 3H (5) must draw; the misdealt 6H goes to the "
        "banker as its third card",
        check=misdealt_card_misused,
        needs=_NEEDS,
    )
)


# --- BA904 (i)(4): a round the shoe cannot complete


def _counted(ctx: GameContext) -> pl.LazyFrame:
    """The rows that take a card out of the shoe (hand-history-v1 1.2, Recording)."""
    return ctx.events.lazy().filter(astray.takes_a_card(ctx))


def _full_shoes(ctx: GameContext) -> pl.DataFrame:
    """The shoes judged whose cards out reach their decks x 52: shuffled within the log,
    with no round set aside (what they held is then all in the log)."""
    judged = shoes(ctx).filter(
        pl.col("auditable") & (pl.col("gap_rounds").list.len() == 0) & pl.col("decks").is_not_null()
    ).select(*SHOE_KEY, (pl.col("decks") * 52).alias("limit"), "decks")
    # the cards of the replayed rounds, and the few other rows that take a card (burns, a
    # card exposed with no later row): the card rows are not read again
    dealt = replay.rounds(ctx).group_by(SHOE_KEY).agg(pl.col("n_cards").sum().cast(pl.Int64))
    others = (
        _counted(ctx).filter(pl.col("event") != "card").select("rid")
        .collect(engine=replay.ENGINE)
        .join(replay.spans(ctx).select("rid", *SHOE_KEY), on="rid")
        .group_by(SHOE_KEY).len()
    )
    per_shoe = dealt.join(others, on=SHOE_KEY, how="full", coalesce=True).select(
        *SHOE_KEY, (pl.col("n_cards").fill_null(0) + pl.col("len").fill_null(0)).alias("out")
    )
    return judged.join(per_shoe, on=SHOE_KEY).filter(pl.col("out") >= pl.col("limit"))


def _ran_out(ctx: GameContext, full: pl.DataFrame) -> pl.DataFrame:
    """Per full shoe: the round of the first card row at which the cards out reach the
    limit (the round that could not be completed), with the count there."""
    rids = replay.spans(ctx).join(full.select(SHOE_KEY), on=SHOE_KEY, how="semi")
    rows = (
        _counted(ctx)
        .filter(pl.col("rid").is_in(rids.get_column("rid").implode()))
        .select("rid", *SHOE_KEY, "round", "seq", "event")
        .collect(engine=replay.ENGINE)
        .join(full, on=SHOE_KEY)
        .with_columns(pl.int_range(1, pl.len() + 1).over(SHOE_KEY, order_by="seq").alias("out"))
    )
    return (
        rows.filter((pl.col("event") == "card") & (pl.col("out") >= pl.col("limit")))
        .sort("seq")
        .group_by(SHOE_KEY, maintain_order=True)
        .agg(pl.all().first())
    )


def round_beyond_shoe(ctx: GameContext) -> pl.DataFrame:
    full = _full_shoes(ctx)
    if full.is_empty():
        return pl.DataFrame(schema={c: pl.String for c in ("table_id", "shoe_id")})
    out = _ran_out(ctx, full)
    rounds = replay.rounds(ctx).select("rid", "void", "seqs", pl.col("round").alias("r"))
    last = out.join(rounds, on="rid", how="left")
    not_void = _finding(
        last.filter(~pl.col("void")),
        pl.col("round"),
        pl.col("seq"),
        pl.format(
            "Round {} of shoe {} reached the end of the shoe: its card at seq {} is card {} "
            "out of the {} that {} decks hold, so the round could not be completed and "
            "(i)(4) voids it; it is not void.",
            "round", "shoe_id", "seq", "out", "limit", "decks",
        ),
        pl.lit("the round void, its wagers returned, then a new shuffle"),
        pl.lit("the round not void"),
    )
    later = (
        rounds.join(replay.spans(ctx).select("rid", *SHOE_KEY), on="rid")
        .join(last.select(*SHOE_KEY, pl.col("rid").alias("ran_out"), pl.col("round")
                          .alias("out_round"), pl.col("seq").alias("out_seq")), on=SHOE_KEY)
        .filter((pl.col("rid") != pl.col("ran_out"))
                & (pl.col("seqs").list.first() > pl.col("out_seq")))
    )
    dealt_after = _finding(
        later,
        pl.col("r"),
        pl.col("seqs").list.first(),
        pl.format(
            "Round {} of shoe {} was dealt after round {} used up the shoe's cards; (i)(4) "
            "requires a new shuffle before the next round.",
            "r", "shoe_id", "out_round",
        ),
        pl.lit("a new shuffle before the next round"),
        pl.format("round {} dealt from the same shoe", "r"),
    )
    return pl.concat([not_void, dealt_after])


ROUND_BEYOND_SHOE = register(
    Rule(
        "BA904",
        "round-beyond-shoe-not-void",
        "Round the shoe could not complete not void, or a round dealt after it",
        "9 NYCRR 5324.20(i)(4)",
        "error",
        "baccarat",
        "Counts the cards out of each shoe in seq order (card and burn rows, and a "
        "`card_exposed` row with no later row). The round whose card brings the count to "
        "the shoe's decks x 52 must be void (its wagers returned: BA106), and no later round "
        "of that shoe may be dealt. A shoe that began before the log, or with a round set "
        "aside, is not judged (its count is not known).",
        "an 8-deck shoe whose 416th card is round 61's third card, and round 61 is settled",
        "round 61 takes the 416th card and is void; a shuffle follows",
        check=round_beyond_shoe,
        needs=("cards", "shuffles", "deal_order"),
    )
)
