"""Every recorded baccarat round, replayed: one row per round, built once per audit.

The replay takes the cards as they left the shoe and recomputes, with the
tableau's expressions, what the rules required: who had to draw, the point
counts, the winner, dragon 7 and panda 8. Rules compare the log against
these columns; they never loop over rounds.

Columns of `rounds(ctx)` (one row per table_id, shoe_id, round >= 1):
  order            targets of the round's cards in dealing order, e.g. "PBPBP"
  p1 p2 p3 b1 b2 b3  card point values (null where not dealt)
  p_seqs b_seqs    seq of each player / banker card
  seqs             seq of every card of the round, in dealing order (matches `order`)
  n_player n_banker n_cards
  p_two b_two      two-card point counts; p_natural b_natural
  player_must_draw banker_must_draw  what the tableau required, given the cards dealt
  p_points b_points  final point counts (of every card of the hand); winner; dragon7; panda8
  declared_winner declared_player_points declared_banker_points result_seq
  start_seq no_more_bets_seq end_seq void void_seq cover_card
  plus the table's house settings (variant, ez, pit, commission_percent, ...)
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from . import tableau

KEY = ["table_id", "shoe_id", "round"]


def card_values(ctx: GameContext) -> pl.Expr:
    """Point value of the `card` column's rank ((a)(4)(i)), from the ruleset."""
    points = {str(rank): int(value) for rank, value in ctx.params["card_points"].items()}
    return pl.col("card").str.slice(0, 1).replace_strict(points, default=None, return_dtype=pl.Int8)


def _first_seq(event: str) -> pl.Expr:
    return pl.col("seq").filter(pl.col("event") == event).min().alias(f"{event}_seq")


def _round_events(ctx: GameContext) -> pl.DataFrame:
    result = pl.col("event") == "result"
    return (
        ctx.events.filter(pl.col("round") > 0)
        .group_by(KEY, maintain_order=True)
        .agg(
            _first_seq("round_start").alias("start_seq"),
            _first_seq("no_more_bets"),
            _first_seq("round_end").alias("end_seq"),
            _first_seq("result").alias("result_seq"),
            _first_seq("void"),
            (pl.col("event") == "void").any().alias("void"),
            (pl.col("event") == "cover_card").any().alias("cover_card"),
            pl.col("winner").filter(result).first().alias("declared_winner"),
            pl.col("player_points").filter(result).first().alias("declared_player_points"),
            pl.col("banker_points").filter(result).first().alias("declared_banker_points"),
            pl.col("time").min().alias("time"),
        )
    )


def _round_cards(ctx: GameContext) -> pl.DataFrame:
    player = pl.col("target") == "player"
    banker = pl.col("target") == "banker"
    return (
        ctx.events.filter((pl.col("event") == "card") & (pl.col("round") > 0))
        .with_columns(card_values(ctx).alias("value"))
        .group_by(KEY, maintain_order=True)
        .agg(
            pl.col("target").str.slice(0, 1).str.to_uppercase().str.join("").alias("order"),
            pl.col("value").filter(player).alias("p_values"),
            pl.col("value").filter(banker).alias("b_values"),
            pl.col("seq").filter(player).alias("p_seqs"),
            pl.col("seq").filter(banker).alias("b_seqs"),
            pl.col("seq").alias("seqs"),
            pl.len().alias("n_cards"),
        )
    )


def _total(values: str) -> pl.Expr:
    return pl.col(values).list.eval(pl.element().cast(pl.Int32)).list.sum()


def _replayed(frame: pl.DataFrame, ctx: GameContext) -> pl.DataFrame:
    params = ctx.params
    p = [pl.col("p_values").list.get(i, null_on_oob=True).alias(f"p{i + 1}") for i in range(3)]
    b = [pl.col("b_values").list.get(i, null_on_oob=True).alias(f"b{i + 1}") for i in range(3)]
    frame = frame.with_columns(
        *p, *b,
        pl.col("p_values").list.len().alias("n_player"),
        pl.col("b_values").list.len().alias("n_banker"),
    ).with_columns(
        tableau.points(pl.col("p1"), pl.col("p2")).alias("p_two"),
        tableau.points(pl.col("b1"), pl.col("b2")).alias("b_two"),
        # (a)(4)(ii) totals all cards in the hand, a card beyond the third included
        tableau.points(_total("p_values")).alias("p_points"),
        tableau.points(_total("b_values")).alias("b_points"),
    )
    return frame.with_columns(
        tableau.is_natural(pl.col("p_two"), params).alias("p_natural"),
        tableau.is_natural(pl.col("b_two"), params).alias("b_natural"),
        tableau.player_draws(pl.col("p_two"), pl.col("b_two"), params).alias("player_must_draw"),
        # the banker's duty follows the player's third card as actually dealt
        tableau.banker_draws(pl.col("b_two"), pl.col("p_two"), pl.col("p3"), params)
        .alias("banker_must_draw"),
        tableau.winner(pl.col("p_points"), pl.col("b_points")).alias("winner"),
    ).with_columns(
        tableau.is_dragon7(pl.col("b_points"), pl.col("n_banker"), pl.col("winner"))
        .alias("dragon7"),
        tableau.is_panda8(pl.col("p_points"), pl.col("n_player"), pl.col("winner"))
        .alias("panda8"),
    )


def build_rounds(ctx: GameContext) -> pl.DataFrame:
    rounds = _round_events(ctx).join(_round_cards(ctx), on=KEY, how="left")
    rounds = rounds.with_columns(
        pl.col("order").fill_null(""),
        pl.col("p_values").fill_null([]),
        pl.col("b_values").fill_null([]),
        pl.col("p_seqs").fill_null([]),
        pl.col("b_seqs").fill_null([]),
        pl.col("seqs").fill_null([]),
        pl.col("n_cards").fill_null(0),
    )
    rounds = _replayed(rounds, ctx)
    # a hand with fewer than two cards has no point count to judge
    dealt = (pl.col("n_player") >= 2) & (pl.col("n_banker") >= 2)
    rounds = rounds.with_columns(dealt.alias("dealt"))
    return rounds.join(ctx.tables, on="table_id", how="left")


def rounds(ctx: GameContext) -> pl.DataFrame:
    """The replayed rounds (see the module docstring), shared by every baccarat rule."""
    return ctx.derived("baccarat.rounds", build_rounds)
