"""Deal and draw: the order of the cards and the third-card rules (f)(5)-(13).

Each round is judged by one rule for each thing that went wrong, never twice for one
card: the first four cards by (f)(5); the rest only when the first four held two cards
for each hand, so that the hands are known. A natural ends the deal (f)(10), and the
player's draw (f)(11) is judged only without one. The banker's draw is judged only when
the player's hand followed the tableau: (f)(12) applies when the player stood on 6 or 7,
(f)(13) when the player drew, and a player's wrong draw leaves the banker no rule to
follow.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...games.baccarat import replay
from ..registry import Rule, register

INITIAL = "PBPB"  # (f)(5): player, banker, player, banker

order = pl.col("order")
n_cards, n_player, n_banker = pl.col("n_cards"), pl.col("n_player"), pl.col("n_banker")
natural = pl.col("p_natural") | pl.col("b_natural")
# the row that shows a missing card: the result announced without it, or the round's end
announced = pl.coalesce("result_seq", "end_seq")


def _card_seq(position: pl.Expr | int) -> pl.Expr:
    return pl.col("seqs").list.get(position, null_on_oob=True)


def _build_dealt_rounds(ctx: GameContext) -> pl.DataFrame:
    two_each = order.str.slice(0, 4).str.count_matches("P") == 2
    return replay.rounds(ctx).filter(~pl.col("void") & (n_cards >= 4) & two_each)


def _dealt_rounds(ctx: GameContext) -> pl.DataFrame:
    """Rounds not void whose first four cards are two per hand: the hands are known.
    Found once for the draw rules."""
    return ctx.derived("baccarat.dealt_rounds", _build_dealt_rounds)


def _draw_findings(
    frame: pl.DataFrame, message: pl.Expr, seq: pl.Expr, expected: pl.Expr, observed: pl.Expr
) -> pl.DataFrame:
    return frame.select(
        *replay.KEY,
        seq.alias("seq"),
        message.alias("message"),
        expected.alias("expected"),
        observed.alias("observed"),
    )


def _drew(drew: pl.Expr) -> pl.Expr:
    return pl.when(drew).then(pl.lit("drew")).otherwise(pl.lit("stood"))


# --- BA201 (f)(5): the first four cards


def initial_deal_wrong(ctx: GameContext) -> pl.DataFrame:
    """The first four cards must go player, banker, player, banker; a round that is not
    void with fewer than four cards broke (f)(5) too. Reported at the first card out of
    place, or where the round went on without the missing card."""
    mismatch = [order.str.slice(i, 1) != INITIAL[i] for i in range(len(INITIAL))]
    first_bad = pl.when(mismatch[0]).then(0)
    for i in range(1, len(INITIAL)):
        first_bad = first_bad.when(mismatch[i]).then(i)
    short = n_cards < len(INITIAL)
    rounds = replay.rounds(ctx).with_columns(first_bad.alias("first_bad"))
    seq = (
        pl.when(pl.col("first_bad") < n_cards)
        .then(_card_seq(pl.col("first_bad")))
        .otherwise(announced)
    )
    message = (
        pl.when(short)
        .then(
            pl.format(
                "Round {} is not void but was dealt {}; (f)(5) deals four initial cards, player, "
                "banker, player, banker.",
                "round",
                pl.when(n_cards > 0)
                .then(pl.format("only {} card(s) ({})", n_cards, order))
                .otherwise(pl.lit("no card")),
            )
        )
        .otherwise(
            pl.format(
                "Round {}'s first four cards went {}; (f)(5) deals player, banker, player, banker "
                "(PBPB).",
                "round",
                order.str.slice(0, 4),
            )
        )
    )
    return _draw_findings(
        rounds.filter(~pl.col("void") & pl.col("first_bad").is_not_null()),
        message,
        seq,
        pl.lit(INITIAL),
        pl.when(n_cards > 0).then(order.str.slice(0, 4)).otherwise(pl.lit("no card")),
    )


INITIAL_DEAL_ORDER = register(
    Rule(
        "BA201",
        "initial-deal-order-wrong",
        "First four cards not dealt player, banker, player, banker",
        "9 NYCRR 5324.20(f)(5)",
        "error",
        "baccarat",
        "The first four `card` rows of a round must target player, banker, player, banker. A "
        "round that is not void and has fewer than four cards is reported here too (and judged "
        "by no other deal rule).",
        "cards of round 3 targeted player, player, banker, banker",
        "cards of round 3 targeted player, banker, player, banker",
        check=initial_deal_wrong,
        needs=("deal_order",),
    )
)


# --- BA202 (f)(8): the player's third card first


def third_cards_out_of_order(ctx: GameContext) -> pl.DataFrame:
    """A banker card dealt after the first four and before a player card: the banker's
    third card came first. Reported at that banker card."""
    rest = order.str.slice(4)
    early = rest.str.find("BP")
    return _draw_findings(
        # after a natural no third card is due at all: that is (f)(10)'s finding
        _dealt_rounds(ctx).filter(~natural & rest.str.contains("BP")),
        pl.format(
            "Round {}'s third cards went {} (the banker's before the player's); (f)(8) deals "
            "the player's third card first.",
            "round",
            rest,
        ),
        _card_seq(early + 4),
        pl.lit("the player's third card, then the banker's"),
        pl.format("{} after the first four cards", rest),
    )


THIRD_CARD_ORDER = register(
    Rule(
        "BA202",
        "third-cards-not-player-first",
        "Banker's third card dealt before the player's",
        "9 NYCRR 5324.20(f)(8)",
        "error",
        "baccarat",
        "After the first four cards, a third card for the player's hand is dealt before the "
        "banker's: a banker card followed by a player card is reported at the banker card.",
        "round 9: player, banker, player, banker, then banker, player",
        "round 9: player, banker, player, banker, then player, banker",
        check=third_cards_out_of_order,
        needs=("deal_order",),
    )
)


# --- BA203 (f)(10): nothing after a natural


def card_after_natural(ctx: GameContext) -> pl.DataFrame:
    return _draw_findings(
        _dealt_rounds(ctx).filter(natural & (n_cards > 4)),
        pl.format(
            "Round {} had a natural on the first four cards (player {}, banker {}), yet {} "
            "more card(s) were dealt; (f)(10) deals no more.",
            "round",
            "p_two",
            "b_two",
            n_cards - 4,
        ),
        _card_seq(4),
        pl.lit("no card after the first four"),
        pl.format("{} cards", n_cards),
    )


CARD_AFTER_NATURAL = register(
    Rule(
        "BA203",
        "card-dealt-after-natural",
        "Card dealt after a natural",
        "9 NYCRR 5324.20(f)(10)",
        "error",
        "baccarat",
        "When either hand's two-card count is 8 or 9, no third card is dealt to either hand. "
        "Reported at the fifth card.",
        "player 5S 3H (natural 8), banker 2D 4C, then a card to the player",
        "player 5S 3H (natural 8), banker 2D 4C, and the result",
        check=card_after_natural,
        needs=("cards",),
        also=("9 NYCRR 5324.20(f)(7)",),
    )
)


# --- BA204 (f)(11): the player's hand


def player_draw_wrong(ctx: GameContext) -> pl.DataFrame:
    drew = n_player >= 3
    must = pl.col("player_must_draw")
    seq = (
        pl.when(drew & ~must)
        .then(pl.col("p_seqs").list.get(2, null_on_oob=True))
        .when(~drew & must)
        .then(pl.coalesce(_card_seq(4), announced))
        .otherwise(pl.col("p_seqs").list.get(3, null_on_oob=True))
    )
    extra = n_player > 3
    return _draw_findings(
        _dealt_rounds(ctx).filter(~natural & ((drew != must) | extra)),
        pl.format(
            "Round {}: the player's hand of {} (banker {}) must {} by (f)(11) but {}.",
            "round",
            "p_two",
            "b_two",
            pl.when(must).then(pl.lit("draw one card")).otherwise(pl.lit("stand")),
            pl.when(extra).then(pl.format("took {} cards", n_player)).otherwise(_drew(drew)),
        ),
        seq,
        pl.when(must).then(pl.lit("player draws one card")).otherwise(pl.lit("player stands")),
        pl.format("player has {} cards", n_player),
    )


PLAYER_DRAW_WRONG = register(
    Rule(
        "BA204",
        "player-draw-wrong",
        "Player's hand drew or stood against the tableau",
        "9 NYCRR 5324.20(f)(11)",
        "error",
        "baccarat",
        "Without a natural, the player's hand draws one card on 0-5 and stands on 6-7. Drawing "
        "on 6-7, standing on 0-5, or taking more than one card is reported.",
        "player 3S 3H (6), banker 2D 2C (4), and a third card to the player",
        "player 3S 2H (5), banker 2D 2C (4), and a third card to the player",
        check=player_draw_wrong,
        needs=("cards",),
        also=("9 NYCRR 5324.20(f)(7)",),
    )
)


# --- BA205, BA206 (f)(12), (f)(13): the banker's hand


def _banker_wrong(ctx: GameContext, player_drew: bool, reason: pl.Expr) -> pl.DataFrame:
    drew = n_banker >= 3
    must = pl.col("banker_must_draw")
    extra = n_banker > 3
    seq = (
        pl.when(drew & ~must)
        .then(pl.col("b_seqs").list.get(2, null_on_oob=True))
        .when(~drew & must)
        .then(announced)
        .otherwise(pl.col("b_seqs").list.get(3, null_on_oob=True))
    )
    # the banker's rule exists only once the player's hand did what the tableau says
    player_right = (
        pl.col("player_must_draw") & (n_player >= 3)
        if player_drew
        else (~pl.col("player_must_draw") & (n_player == 2))
    )
    return _draw_findings(
        _dealt_rounds(ctx).filter(~natural & player_right & ((drew != must) | extra)),
        pl.format(
            "Round {}: {}, the banker's hand of {} must {} but {}.",
            "round",
            reason,
            "b_two",
            pl.when(must).then(pl.lit("draw one card")).otherwise(pl.lit("stand")),
            pl.when(extra).then(pl.format("took {} cards", n_banker)).otherwise(_drew(drew)),
        ),
        seq,
        pl.when(must).then(pl.lit("banker draws one card")).otherwise(pl.lit("banker stands")),
        pl.format("banker has {} cards", n_banker),
    )


def banker_wrong_player_stood(ctx: GameContext) -> pl.DataFrame:
    reason = pl.format("with the player standing on {}, by (f)(12)", "p_two")
    return _banker_wrong(ctx, player_drew=False, reason=reason)


def banker_wrong_by_third_card(ctx: GameContext) -> pl.DataFrame:
    reason = pl.format("with the player's third card worth {}, by (f)(13)", "p3")
    return _banker_wrong(ctx, player_drew=True, reason=reason)


BANKER_WRONG_PLAYER_STOOD = register(
    Rule(
        "BA205",
        "banker-draw-wrong-player-stood",
        "Banker's hand drew or stood wrongly when the player stood",
        "9 NYCRR 5324.20(f)(12)",
        "error",
        "baccarat",
        "When the player's hand stood on 6 or 7 (no natural), the banker's hand draws one "
        "card on 0-5 and stands on 6-7. Judged only when the player's hand rightly stood.",
        "player 4S 3H (7) stands, banker 3D 2C (5) stands",
        "player 4S 3H (7) stands, banker 3D 2C (5) draws one card",
        check=banker_wrong_player_stood,
        needs=("cards",),
        also=("9 NYCRR 5324.20(f)(7)",),
    )
)
BANKER_WRONG_BY_THIRD_CARD = register(
    Rule(
        "BA206",
        "banker-draw-wrong-by-player-third-card",
        "Banker's hand drew or stood wrongly for the player's third card",
        "9 NYCRR 5324.20(f)(13)",
        "error",
        "baccarat",
        "When the player's hand drew, the banker's two-card count and the value of the "
        "player's third card decide: 0-2 always draws; 3 draws unless the card is 8; 4 on "
        "2-7; 5 on 4-7; 6 on 6-7; 7 stands. Judged only when the player's hand rightly drew.",
        "banker 3 (AS 2H) draws after the player's third card 8D",
        "banker 3 (AS 2H) stands after the player's third card 8D, draws after 9D",
        check=banker_wrong_by_third_card,
        needs=("cards",),
        also=("9 NYCRR 5324.20(f)(7)",),
    )
)
