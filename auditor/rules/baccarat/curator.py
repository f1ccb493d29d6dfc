"""Curator: offering and passing the shoe on big tables (f)(1), (h).

Midi and mini tables have no curator (the dealer deals) and are not judged
here. The offer sequences, the seat each offer had to go to and the curator of
every round come from `auditor.games.baccarat.curator`.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import curator as shoe_holder
from ...games.baccarat import irregularities as astray
from ..registry import Rule, register

# an offer finding sits where its row is: the round the row carries (0 before round 1)
_AT_OFFER = ["table_id", "shoe_id", pl.col("row_round").alias("round"), "seq"]


def _misdirected(ctx: GameContext, judged_by: str) -> pl.DataFrame:
    """Offers of one kind that went to another seat than the one they had to go to."""
    return shoe_holder.offers(ctx).filter(
        (pl.col("judged_by") == judged_by)
        & pl.col("expected_seat").is_not_null()
        & (pl.col("seat") != pl.col("expected_seat"))
        & pl.col("seat").ne_missing(pl.col("or_seat"))
    )


def _where(offered: str) -> pl.Expr:
    """How the observed offer reads: a seat that wagers, or an empty one."""
    return (
        pl.when(pl.col("offered_occupied"))
        .then(pl.format(offered, "seat"))
        .otherwise(pl.format(offered + " (no wager in that round)", "seat"))
    )


def first_offer_not_at_seat_one(ctx: GameContext) -> pl.DataFrame:
    # (f)(1): at the start of every shoe, seat 1 first, else the next occupied seat in turn
    return _misdirected(ctx, "first").select(
        *_AT_OFFER,
        pl.format(
            "The shoe was first offered to seat {} before round {} of shoe {}; (f)(1) "
            "requires seat 1, or the first occupied seat after it counter-clockwise: seat {}.",
            "seat",
            "round",
            "shoe_id",
            "expected_seat",
        ).alias("message"),
        pl.format("first offer to seat {}", "expected_seat").alias("expected"),
        _where("first offer to seat {}").alias("observed"),
    )


def curator_kept_shoe_after_banker_loss(ctx: GameContext) -> pl.DataFrame:
    # (h)(1)(i): after a banker loss the next round must begin with a pass (an offer sequence)
    rounds = shoe_holder.curators(ctx)
    # a hand no one wagers on after a card found face up (i)(1)(ii) obliges no pass
    blank = astray.blank_hands(ctx)
    if blank.height:
        rounds = rounds.join(blank.select(*shoe_holder.KEY, pl.lit(True).alias("blank")),
                             on=shoe_holder.KEY, how="left", maintain_order="left")
    else:
        rounds = rounds.with_columns(pl.lit(None, pl.Boolean).alias("blank"))
    blank_hand = pl.col("blank").fill_null(False)
    # each round a curator dealt and the banker lost, as the round before the next one
    lost = rounds.filter(
        pl.col("banker_lost") & pl.col("curator").is_not_null() & ~blank_hand
    ).select(
        *shoe_holder.SHOE,
        (pl.col("round") + 1).alias("round"),
        pl.col("round", "curator", "p_points", "b_points", "panda8").name.prefix("prev_"),
    )
    kept = rounds.filter(~pl.col("has_offers")).join(
        lost, on=shoe_holder.KEY, how="inner", maintain_order="left"
    )
    if blank.height:
        kept = _past_blank_hand(rounds, kept, blank_hand)
    loss = pl.when(pl.col("prev_panda8")).then(pl.lit("a panda 8, ")).otherwise(pl.lit(""))
    return kept.select(
        "table_id",
        "shoe_id",
        "round",
        pl.col("start_seq").alias("seq"),
        pl.format(
            "The banker hand lost round {} of shoe {} ({}player {} to banker {}), yet seat {} "
            "kept the shoe: round {} began without the shoe being offered on.",
            "prev_round",
            "shoe_id",
            loss,
            "prev_p_points",
            "prev_b_points",
            "prev_curator",
            "round",
        ).alias("message"),
        pl.format("the shoe passed (offered on) before round {}", "round").alias("expected"),
        pl.format(
            "no shoe_offer before round {}; seat {} kept the shoe", "round", "prev_curator"
        ).alias("observed"),
    )


def _past_blank_hand(rounds: pl.DataFrame, kept: pl.DataFrame,
                     blank_hand: pl.Expr) -> pl.DataFrame:
    """Where the round after the banker's loss is a hand no one wagers on, the pass may
    come before it or before the round after it: a loss is kept only where neither
    began with an offer (the dealer may deal the blank hand either way)."""
    through = kept.filter(blank_hand).select(
        *shoe_holder.SHOE,
        (pl.col("round") + 1).alias("round"),
        pl.col("^prev_.*$"),
    )
    later = rounds.filter(~pl.col("has_offers")).join(
        through, on=shoe_holder.KEY, how="inner", maintain_order="left"
    )
    return pl.concat([kept.filter(~blank_hand), later.select(kept.columns)])


def pass_not_to_next_seat(ctx: GameContext) -> pl.DataFrame:
    # (h)(2): after a pass, the player immediately to the right of the previous curator first
    return _misdirected(ctx, "pass").select(
        *_AT_OFFER,
        pl.format(
            "After seat {} passed the shoe, it was first offered to seat {} before round {} of "
            "shoe {}; (h)(2) requires the next occupied seat counter-clockwise: seat {}.",
            "prev_curator",
            "seat",
            "round",
            "shoe_id",
            "expected_seat",
        ).alias("message"),
        pl.format("first offer to seat {}", "expected_seat").alias("expected"),
        _where("first offer to seat {}").alias("observed"),
    )


def offer_skipped_seat(ctx: GameContext) -> pl.DataFrame:
    # (h)(2): each of the other players in turn, counter-clockwise, until one accepts
    due = pl.coalesce("or_seat", "expected_seat")
    how = (
        pl.when(pl.col("offered_occupied"))
        .then(pl.format(", skipping seat {}, the next occupied seat counter-clockwise.", due))
        .otherwise(
            pl.format(
                ", which has no wager; the next occupied seat counter-clockwise is seat {}.", due
            )
        )
    )
    # where the next seat is the curator who has just passed, either he or the one after him
    # (where the shoe began before the log, or after a round set aside, the next seat may
    # have been its holder)
    curator_too = (
        pl.when(pl.col("or_seat").is_null())
        .then(pl.lit(""))
        .when(pl.col("holder_known"))
        .then(pl.format(" (or seat {}, the previous curator)", "expected_seat"))
        .when(pl.col("shoe_first") & ~pl.col("shoe_known"))
        .then(pl.format(" (or seat {}, had it held the shoe before this log)",
                        "expected_seat"))
        .otherwise(pl.format(" (or seat {}, had it held the shoe in a round set aside)",
                             "expected_seat"))
    )
    return _misdirected(ctx, "order").select(
        *_AT_OFFER,
        pl.format(
            "After seat {} declined the shoe before round {} of shoe {}, it was offered to "
            "seat {}{}",
            "prev_seat",
            "round",
            "shoe_id",
            "seat",
            how,
        ).alias("message"),
        pl.format("offer to seat {}{} after seat {}", due, curator_too, "prev_seat").alias(
            "expected"
        ),
        _where("offer to seat {}").alias("observed"),
    )


FIRST_OFFER = register(
    Rule(
        "BA801",
        "first-offer-not-seat-one",
        "Shoe first offered to a seat other than seat 1 (or the next occupied seat)",
        "9 NYCRR 5324.20(f)(1)",
        "error",
        "baccarat",
        "On a big table, the first offer of every shoe must go to seat 1 or, when seat 1 has no "
        "wager in the round the offer precedes, to the first occupied seat after it in the "
        "house's counter-clockwise seat order. The shoe's first offer sequence is judged, "
        "whichever round it precedes. A shoe whose rows before round 1 are not in the log "
        "(it began before the log, or they were lost) is not judged: its first offer may "
        "have come before the log; nor is a first offer the log records after a round of "
        "the shoe set aside (a lost row: its offers may have come first).",
        "Seats 1, 3 and 5 wager in round 1; the shoe is first offered to seat 3.",
        "Seat 1 has no wager, seats 2 and 5 do; the shoe is first offered to seat 2.",
        check=first_offer_not_at_seat_one,
        needs=("offers", "wagers"),
    )
)
KEPT_AFTER_LOSS = register(
    Rule(
        "BA802",
        "curator-kept-shoe-after-banker-loss",
        "Curator kept the shoe after the banker hand lost",
        "9 NYCRR 5324.20(h)(1)(i)",
        "error",
        "baccarat",
        "On a big table, after a round the banker hand loses (the player hand wins, a panda 8 "
        "included; a tie or a dragon 7 is not a loss), the next round of the shoe must begin "
        "with the shoe being offered on. A next round with no shoe_offer is reported at its "
        "round_start. Rounds the dealer dealt (every seat declined) are not judged, nor are "
        "rounds whose curator is unknown: before the first offer the log records in a shoe "
        "that began before it, or after a round set aside (a lost row: it may have held "
        "offers), until the next offer the log records. A hand no one wagers on after a card "
        "found face up ((i)(1)(ii)) obliges no pass, and a loss before it may be answered by "
        "a pass before it or before the round after it.",
        "Seat 4 deals round 6, player 7 beats banker 5; round 7 starts with no shoe_offer.",
        "Round 6 is a player win; before round 7 the shoe is offered to seat 5, who accepts.",
        check=curator_kept_shoe_after_banker_loss,
        needs=("offers", "cards"),
    )
)
PASS_START = register(
    Rule(
        "BA803",
        "pass-not-to-next-seat",
        "Shoe passed to a seat other than the one after the previous curator",
        "9 NYCRR 5324.20(h)(2)",
        "error",
        "baccarat",
        "On a big table, when the curator passes the shoe (voluntarily or after a banker loss), "
        "the first offer must go to the first occupied seat after the previous curator in the "
        "house's counter-clockwise seat order, wrapping round the table. A sequence that "
        "follows one in which every seat declined has no previous curator and is not judged, "
        "nor is the first offer in the log of a shoe that began before it, or the first "
        "after a round of the shoe set aside (a lost row: it may have held offers), since "
        "the previous sequence the log records (the holder before it is unknown).",
        "Seat 4 passes the shoe, seats 5 and 7 wager; the shoe is first offered to seat 7.",
        "Seat 4 passes the shoe, seat 5 has no wager, seat 7 does; it is offered to seat 7.",
        check=pass_not_to_next_seat,
        needs=("offers", "wagers"),
    )
)
OFFER_ORDER = register(
    Rule(
        "BA804",
        "offer-skipped-seat",
        "Shoe offer skipped an occupied seat",
        "9 NYCRR 5324.20(h)(2)",
        "error",
        "baccarat",
        "On a big table, within an offer sequence (up to the first acceptance) each offer after "
        "a decline must go to the next occupied seat counter-clockwise after the seat that "
        "declined. The offer that skips a seat (or goes to a seat without a wager) is "
        "reported. In the sequence after a pass the previous curator, when next, may be passed "
        'over or offered the shoe again ("each of the other players"); in the first sequence in '
        "the log of a shoe that began before it, or the first after a round set aside (a "
        "lost row), where that curator is unknown, so may any one seat next in turn.",
        "Seats 1, 2 and 3 wager; seat 1 declines and the shoe is offered to seat 3.",
        "Seats 1, 2 and 3 wager; seat 1 declines, seat 2 declines, seat 3 accepts.",
        check=offer_skipped_seat,
        needs=("offers", "wagers"),
    )
)
