"""Outcome: the declared result against the replay (g)(1)."""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import replay
from ..registry import Rule, register


def wrong_winner(ctx: GameContext) -> pl.DataFrame:
    """The declared winner against the winner of the cards as dealt. A round that is not
    void and was dealt but records no result announced nothing: reported at its end.
    Void rounds and rounds with fewer than two cards in a hand are not judged."""
    declared = pl.col("declared_winner")
    judged = ~pl.col("void") & pl.col("dealt")
    wrong = declared.is_null() | (declared != pl.col("winner"))
    announced = pl.format("{}", declared).fill_null("no result")
    # one filter: only the few wrong rounds are copied
    return replay.rounds(ctx).filter(judged & wrong).select(
        *replay.KEY,
        pl.coalesce("result_seq", "end_seq").alias("seq"),
        pl.when(declared.is_null())
        .then(
            pl.format(
                "Round {} records no result; the cards (player {}, banker {}) give {}, to be "
                "announced by (g)(1).",
                "round",
                "p_points",
                "b_points",
                pl.col("winner"),
            )
        )
        .otherwise(
            pl.format(
                "Round {} was declared winner {}; the cards (player {}, banker {}) give {}.",
                "round",
                declared,
                "p_points",
                "b_points",
                pl.col("winner"),
            )
        )
        .alias("message"),
        pl.col("winner").alias("expected"),
        announced.alias("observed"),
    )


WINNER_DECLARED_WRONG = register(
    Rule(
        "BA301",
        "declared-winner-differs",
        "Declared winner differs from the cards",
        "9 NYCRR 5324.20(g)(1)",
        "error",
        "baccarat",
        "The `winner` of a round's result against the winner the replay of its cards gives "
        "(the higher point count; equal counts a tie). A dealt round with no result is "
        "reported too. Void rounds and rounds with fewer than two cards in a hand are not "
        "judged.",
        "player 9, banker 7, result winner banker",
        "player 9, banker 7, result winner player",
        check=wrong_winner,
        needs=("cards",),
    )
)
