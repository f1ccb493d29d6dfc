"""Every recorded baccarat round, replayed: one row per round, built once per audit.

The replay takes the cards as they left the shoe and recomputes, with the
tableau's expressions, what the rules required: who had to draw, the point
counts, the winner, dragon 7 and panda 8. Rules compare the log against
these columns; they never loop over rounds.

Columns of `rounds(ctx)` (one row per table_id, shoe_id, round >= 1, in log order):
  rid              the round's id in the event frame: rules join on it, not on the key
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

from collections.abc import Sequence

import polars as pl

from ...audit_context import GameContext
from . import tableau

KEY = ["table_id", "shoe_id", "round"]

# Lazy queries here run on the in-memory engine: their frames fit in memory, and its
# group-bys and order-keeping joins run them about twice as fast as the streaming one.
ENGINE = "in-memory"


def card_values(ctx: GameContext) -> pl.Expr:
    """Point value of the `card` column's rank ((a)(4)(i)), from the ruleset."""
    points = {str(rank): int(value) for rank, value in ctx.params["card_points"].items()}
    return pl.col("card").str.slice(0, 1).replace_strict(points, default=None, return_dtype=pl.Int8)


def _played(ctx: GameContext) -> pl.LazyFrame:
    """The rows of rounds >= 1, lazily: each step below reads only the columns it needs."""
    return ctx.events.lazy().filter(pl.col("round") > 0)


def rows_of(ctx: GameContext, events: Sequence[str], *columns: str) -> pl.DataFrame:
    """The rows of rounds >= 1 of the given kinds, in log order, with `rid` and `columns`.

    Filtering and projecting first copies a small part of the event frame, not every
    column of every row.
    """
    return (
        _played(ctx)
        .filter(pl.col("event").is_in(list(events)))
        .select("rid", *columns)
        .collect(engine=ENGINE)
    )


def _first_seq(event: str) -> pl.Expr:
    return pl.col("seq").filter(pl.col("event") == event).min().alias(f"{event}_seq")


# the events whose place (or, for the result, values) a round records
MARKS = ("round_start", "no_more_bets", "round_end", "result", "void", "cover_card")


def _spans(ctx: GameContext) -> pl.DataFrame:
    # The rows are in log order, so the rows of a round come in runs (one, unless the
    # round was interleaved with another): the first and last rows of the runs bound it.
    rid = pl.col("rid")
    starts = ctx.events.lazy().filter(rid.ne_missing(rid.shift(1)))
    ends = ctx.events.lazy().filter(rid.ne_missing(rid.shift(-1)))
    runs = pl.concat(
        [
            starts.select("rid", *KEY, pl.col("seq").alias("first_seq")),
            ends.select(pl.col("seq").alias("last_seq")),
        ],
        how="horizontal",
    )
    return (
        runs.group_by("rid")
        .agg(pl.col(KEY).first(), pl.col("first_seq").min(), pl.col("last_seq").max())
        .sort("rid")
        .collect(engine=ENGINE)
    )


def spans(ctx: GameContext) -> pl.DataFrame:
    """Every round id of the log in log order, round 0 (a shoe's rows before play) too:
    rid, table_id, shoe_id, round, first_seq and last_seq."""
    return ctx.derived("baccarat.spans", _spans)


def _round_events(ctx: GameContext) -> pl.LazyFrame:
    """One row per round (by `rid`, in log order): its key and marks."""
    result = pl.col("event") == "result"
    played = spans(ctx).lazy().filter(pl.col("round") > 0).select("rid", *KEY)
    marks = (
        _played(ctx)
        .filter(pl.col("event").is_in(MARKS))
        .group_by("rid")
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
        )
    )
    return played.join(marks, on="rid", how="left", maintain_order="left").with_columns(
        pl.col("void", "cover_card").fill_null(False)
    )


def _of_hand(player: bool, field: str) -> pl.Expr:
    """The `field` of the round's cards dealt to the player's (or the banker's) hand, in
    dealing order."""
    card = pl.element().struct
    to_hand = card.field("player") if player else ~card.field("player")
    return pl.col("cards").list.eval(card.field(field).filter(to_hand))


def _round_cards(ctx: GameContext) -> pl.LazyFrame:
    # each round's cards gathered once, as one list, then split by hand: one list to
    # build per round rather than one per column. A card's target is player or banker
    # (ingest makes any other a problem): `player` true or false.
    target = pl.col("target")
    player = pl.when(target == "player").then(True).when(target == "banker").then(False)
    card = pl.struct(card_values(ctx).alias("value"), "seq", player.alias("player"))
    cards = pl.col("cards")
    to_player = pl.element().struct.field("player")
    initial = pl.when(to_player).then(pl.lit("P")).when(~to_player).then(pl.lit("B"))
    return (
        _played(ctx)
        .filter(pl.col("event") == "card")
        .group_by("rid")
        .agg(card.alias("cards"))
        .select(
            "rid",
            cards.list.eval(initial).list.join("", ignore_nulls=True).alias("order"),
            _of_hand(True, "value").alias("p_values"),
            _of_hand(False, "value").alias("b_values"),
            _of_hand(True, "seq").alias("p_seqs"),
            _of_hand(False, "seq").alias("b_seqs"),
            cards.list.eval(pl.element().struct.field("seq")).alias("seqs"),
            cards.list.len().alias("n_cards"),
        )
    )


def _total(values: str) -> pl.Expr:
    return pl.col(values).list.eval(pl.element().cast(pl.Int32)).list.sum()


def _replayed(frame: pl.LazyFrame, ctx: GameContext) -> pl.LazyFrame:
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
    rounds = _round_events(ctx).join(
        _round_cards(ctx), on="rid", how="left", maintain_order="left"
    )
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
    rounds = rounds.join(ctx.tables.lazy(), on="table_id", how="left", maintain_order="left")
    return rounds.collect(engine=ENGINE)


def rounds(ctx: GameContext) -> pl.DataFrame:
    """The replayed rounds (see the module docstring), shared by every baccarat rule."""
    return ctx.derived("baccarat.rounds", build_rounds)
