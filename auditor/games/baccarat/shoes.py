"""Every recorded baccarat shoe: one row per (table_id, shoe_id), built once per audit.

A shoe runs from its `shuffle` to the next `shuffle` of the table (hand-history-v1),
so order matters here: shoes are numbered per table in seq order, and each knows
where the table's next shoe begins. Rules compare the shoe procedure of (a)(4),
(e) and (f)(9) against these columns.

Columns of `shoes(ctx)` (sorted by table_id, shoe_no):
  shoe_no          1, 2, ... per table, by the shoe's first row
  first_seq last_seq  the shoe's first and last rows in ctx.events
  auditable        its shoe-level rows before round 1 (round 0) are in ctx.events:
                   without them the decks, the burn and the first offer are unknown, and
                   not judged
  began_in_log     the shoe began within the log: it is auditable, or an earlier shoe of
                   its table has rows in ctx.events (so its shuffle came after them). A
                   table's first shoe without its shuffle began before the log (hand-history-v1
                   1.1, "Logs cut at any hour"): what came before its first row (marked
                   commission, the curator) is unknown
  shuffle_seq decks  the shuffle and the decks it declares
  burn_cards burn_seqs  the burns before round 1, in order (e); burns of the irregularities
                   of (i) (a discard, a card found face up burned) are not listed
  burn_required    how many burns must follow the face-up first one: its value by
                   `burn_values` (A=1, 2-9 face, T/J/Q/K=10); null with no burn
  cover_round cover_seq  the round of the shoe's first cover_card, and its row
  last_round       the highest round number of the shoe (0 with no round)
  last_round_void  whether that round is void
  burns_over       the burns before play are over in the log: a later row of the shoe (or
                   the next shoe) follows its last burn (or its shuffle, with no burn); a log
                   that ends during the burn shows only part of it
  next_shoe_seq    the first row of the table's next shoe (its shuffle), also where that
                   shoe's opening rows are set aside; null when the log ends first, so
                   the shoe's end is not recorded
  gap_rounds       the rounds (>= 1) of the shoe set aside (GameContext.gaps: a lost row, a
                   cut), ascending: gaps in the shoe, after which what carries across rounds
                   is not known (games.gaps); empty with none
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...ingest import cards as card_codes
from .. import gaps
from . import irregularities, replay

SHOE_KEY = ["table_id", "shoe_id"]


def _burn_value(ctx: GameContext, card: pl.Expr) -> pl.Expr:
    """How many more cards a face-up burn card calls for, by its rank ((e))."""
    return card_codes.value(card, ctx.params["burn_values"], pl.Int64)


def _shoe_events(ctx: GameContext) -> pl.LazyFrame:
    """Per shoe: its shuffle, the burns before round 1 and the cover card."""
    event = pl.col("event")
    before_play = pl.col("round") == 0
    burn = before_play & (event == "burn")
    shuffle = event == "shuffle"
    cover = event == "cover_card"
    rows = ctx.events.lazy().filter(event.is_in(["shuffle", "burn", "cover_card"]))
    # the burns of a discard (i)(1)-(3), and a card found face up that was burned, are not
    # the (e) burn, even before round 1
    astray = irregularities.not_shoe_burns(ctx)
    if astray.height:
        rows = rows.join(astray.lazy(), on=["table_id", "seq"], how="anti")
    return (
        rows
        .group_by(SHOE_KEY)
        .agg(
            (before_play & shuffle).any().alias("auditable"),
            pl.col("seq").filter(shuffle).min().alias("shuffle_seq"),
            pl.col("decks").filter(shuffle).first().alias("decks"),
            pl.col("card").filter(burn).alias("burn_cards"),
            pl.col("seq").filter(burn).alias("burn_seqs"),
            pl.col("round").filter(cover).min().alias("cover_round"),
            pl.col("seq").filter(cover).min().alias("cover_seq"),
        )
    )


def _gap_rounds(ctx: GameContext) -> pl.LazyFrame:
    """Per shoe with a round set aside: those rounds (>= 1), ascending."""
    return (
        ctx.gaps.lazy()
        .filter(pl.col("round") > 0)
        .sort(*SHOE_KEY, "round")
        .group_by(SHOE_KEY, maintain_order=True)
        .agg(pl.col("round").alias("gap_rounds"))
    )


def build_shoes(ctx: GameContext) -> pl.DataFrame:
    # the last round is found by its round id: one integer to join on, not three columns
    rounds = replay.rounds(ctx)
    last_rounds = rounds.lazy().select(
        pl.col("rid").alias("last_rid"), pl.col("void").alias("last_round_void")
    )
    spans = replay.spans(ctx)
    # a round number of shoe-level rows only is no round (replay): not the last round
    numbered = pl.col("round")
    if spans.height - rounds.height > spans.select((pl.col("round") == 0).sum()).item():
        played = (pl.col("round") == 0) | pl.col("rid").is_in(rounds.get_column("rid").implode())
        numbered = pl.when(played).then(pl.col("round"))
    shoes = (
        spans
        .lazy()
        .group_by(SHOE_KEY)
        .agg(
            pl.col("first_seq").min(),
            pl.col("last_seq").max(),
            numbered.max().fill_null(0).alias("last_round"),
            # a round number has one id: the last round's is the one of the highest
            pl.col("rid").get(numbered.arg_max()).alias("last_rid"),
        )
        .join(_shoe_events(ctx), on=SHOE_KEY, how="left")
        .join(_gap_rounds(ctx), on=SHOE_KEY, how="left")
        .with_columns(
            pl.col("auditable").fill_null(False),
            pl.col("burn_cards").fill_null([]),
            pl.col("burn_seqs").fill_null([]),
            pl.col("gap_rounds").fill_null(pl.lit([], pl.List(pl.Int64))),
        )
        .sort("table_id", "first_seq")
        .with_columns(
            pl.int_range(1, pl.len() + 1).over("table_id").alias("shoe_no"),
            pl.col("first_seq").shift(-1).over("table_id").alias("next_shoe_seq"),
            _burn_value(ctx, pl.col("burn_cards").list.first()).alias("burn_required"),
        )
        .pipe(lambda shoes: gaps.with_later_shuffle(ctx, shoes))
        .with_columns(
            (pl.col("auditable") | (pl.col("shoe_no") > 1)).alias("began_in_log"),
            (
                pl.col("next_shoe_seq").is_not_null()
                | (
                    pl.col("last_seq")
                    > pl.coalesce(pl.col("burn_seqs").list.max(), pl.col("shuffle_seq"))
                )
            )
            .fill_null(False)
            .alias("burns_over"),
        )
    )
    return (
        shoes.join(last_rounds, on="last_rid", how="left", maintain_order="left")
        .drop("last_rid")
        .collect(engine=replay.ENGINE)
    )


def shoes(ctx: GameContext) -> pl.DataFrame:
    """The shoes (see the module docstring), shared by the shoe-level rules."""
    return ctx.derived("baccarat.shoes", build_shoes)
