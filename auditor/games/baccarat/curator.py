"""Who holds the shoe on big tables: offer sequences and the curator of each round.

Only big tables have a curator ((f)(1)-(2)); midi and mini tables are left out.
A `shoe_offer` row carries the round it precedes (an offer recorded with round
0, before the first round, precedes round 1). The offers of one round, in seq
order, form an offer sequence that ends at its first acceptance; offers after
an acceptance in the same round start a new sequence (a pass from the seat that
has just accepted). The curator of a round is the seat that accepted in the
latest sequence at or before it; when every offered seat of that sequence
declined, the dealer deals ((h)(2), last sentence) and no curator rule applies.

Seats are compared by their position in the house's counter-clockwise seat
order (`house.baccarat["seats"]`); the seats occupied in a round are those with
a wager in it. "The next occupied seat after position p" is the occupied
position with the smallest (position - p - 1) mod n, so the order wraps.

`offers(ctx)`: one row per shoe_offer of a big table, with
  round (the round it precedes, >= 1), row_round (the round the row carries: 0 or round),
  seq, seat, accepted, rid (the id of the round it precedes; null when that round is not
  in the log), pos (house position)
  k          which sequence of its round (0 unless an earlier offer of the round was accepted)
  sequence   its sequence's number, in shoe order
  index      place within its sequence (0 = the sequence's first offer)
  shoe_first whether its sequence is the shoe's first in the log
  shoe_known whether the shoe's rows before round 1 are in the log (the shoes' `auditable`):
             where they are not (a shoe that began before the log), its first sequence in
             the log may not be its first, nor start at its first offer, and who held the
             shoe before it is unknown
  gaps_before  how many rounds of the shoe before the round it precedes were set aside
             (GameContext.gaps: a lost row); after_gap: its sequence follows such a round
             that the shoe's previous sequence in the log does not (or, for the shoe's
             first sequence in the log, any): the gap may have held offers, a pass or the
             shoe's first sequence, so who held the shoe before it is unknown, as at the
             start of a shoe that began before the log
  holder_known  who held the shoe before its sequence is known: not after a gap, nor in the
             first sequence of a shoe whose rows before round 1 are not in the log
  prev_seat  the seat offered just before it in the sequence (index > 0)
  prev_curator  the seat that accepted the shoe's previous sequence (null: none, or all declined)
  occupied   house positions with a wager in the round, sorted; offered_occupied
  judged_by  "first" (first offer of the shoe's first sequence, (f)(1)), "pass" (first offer
             after a curator passed, (h)(2)), "order" (a later offer of a sequence, (h)(2)),
             null when no rule can judge it (e.g. the previous sequence was all declined, or
             the first offer of a sequence whose holder before it is not known)
  expected_seat  the seat the offer had to go to (null when no seat is occupied or no rule
             judges it)
  or_seat    where expected_seat is the previous curator, in the sequence after his pass: the
             next seat after him, which the offer may go to instead ("each of the other
             players", (h)(2)); in a sequence whose holder before it is unknown
             (holder_known false), the next seat after expected_seat, which may have been
             that holder; null otherwise

`curators(ctx)`: one row per round of a big table, with
  start_seq has_offers
  curator       the seat dealing the round; null when the dealer deals (dealer_deals) or when
                no offer has been made yet in the shoe, or since its last gap (a round set
                aside: unknown, dealer_deals false)
  dealer_deals  the latest sequence at or before the round was declined by every seat offered
  winner p_points b_points dragon7 panda8 void dealt (from the replay)
  banker_lost   a dealt, non-void round the player hand won (a panda 8 included)
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from .. import runs
from ..gaps import segment_of
from ..sorted_keys import sorted_by
from . import replay, settlement
from .shoes import shoes

SHOE = ["table_id", "shoe_id"]
KEY = [*SHOE, "round"]
SEQUENCE = [*KEY, "k"]


def _big_tables(ctx: GameContext) -> pl.DataFrame:
    if "variant" not in ctx.tables.columns:
        return ctx.tables.select("table_id").clear()
    return ctx.tables.filter(pl.col("variant") == "big").select("table_id")


def _position(ctx: GameContext, seat: pl.Expr) -> pl.Expr:
    """The seat's place in the house's counter-clockwise order (null: not on the layout)."""
    seats = list(ctx.house.baccarat["seats"])
    return seat.replace_strict(seats, list(range(len(seats))), default=None, return_dtype=pl.Int64)


def _seat_at(ctx: GameContext, position: pl.Expr) -> pl.Expr:
    seats = list(ctx.house.baccarat["seats"])
    return position.replace_strict(
        list(range(len(seats))), seats, default=None, return_dtype=pl.Int64
    )


def _occupied(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """Per round of `rids` with a wager (rid, the rounds offers precede): the positions
    with a wager in it, the seats the shoe may be offered to."""
    # each round's positions sorted and once each before they are gathered into lists:
    # the round and position as one integer, to sort and compare one column
    n = len(ctx.house.baccarat["seats"])
    place = pl.col("rid") * n + _position(ctx, pl.col("seat"))
    return (
        settlement.wager_rows(ctx)
        .filter(pl.col("rid").is_in(rids.implode()))
        .select(place.alias("place"))
        .drop_nulls()
        .sort("place")
        .filter(runs.starts(["place"]))
        # sorted places give sorted rounds: the group-by reads runs
        .group_by((pl.col("place") // n).set_sorted().alias("rid"))
        .agg((pl.col("place") % n).alias("occupied"))
    )


def _since(start: pl.Expr, value: pl.Expr) -> pl.Expr:
    """`value` less its value at the last row where `start` holds."""
    return value - pl.when(start).then(value).forward_fill()


def _preceded(ctx: GameContext, rows: pl.DataFrame) -> pl.Expr:
    """The id of the round each offer of `rows` precedes: its row's own, or for an
    offer before round 1, round 1's of its shoe (null when round 1 is not in the log).
    Only the shoes' first rounds are looked up by their keys: few rows."""
    round_one = (
        replay.spans(ctx)
        .filter(pl.col("round") == 1)
        .select(*SHOE, pl.col("rid").alias("round_one"))
    )
    # a round key has one id: one row of round 1 per shoe at most
    early = rows.select(*SHOE).join(round_one, on=SHOE, how="left", maintain_order="left")
    return (
        pl.when(pl.col("row_round") >= 1)
        .then(pl.col("rid"))
        .otherwise(pl.lit(early.get_column("round_one")))
    )


def _gaps_before(ctx: GameContext, rows: pl.DataFrame) -> pl.Series:
    """Per offer of `rows`: the rounds of its shoe set aside before the round it precedes
    (that round's segment, games.gaps). An offer before round 1 whose round 1 is not in
    the log has none before it: a gap is a round >= 1."""
    return (
        segment_of(ctx, rows)
        .alias("gaps_before")
    )


def _offer_rows(ctx: GameContext, big: pl.DataFrame) -> pl.DataFrame:
    """The offers sorted by the round they precede, then seq, with their sequence."""
    accepted = pl.col("accepted").fill_null(False)
    # the offers first, then the big tables among them: few table names to compare
    offered = (
        ctx.events.lazy()
        .filter(pl.col("event") == "shoe_offer")
        .select("rid", *KEY, "seq", "seat", "accepted")
        .collect(engine=replay.ENGINE)
    )
    rows = offered.filter(pl.col("table_id").is_in(big.get_column("table_id").to_list()))
    rows = rows.select(
        *SHOE,
        # an offer recorded before the first round (round 0) precedes round 1
        pl.max_horizontal(pl.col("round"), pl.lit(1)).cast(pl.Int64).alias("round"),
        pl.col("round").cast(pl.Int64).alias("row_round"),
        "seq",
        pl.col("seat").cast(pl.Int64),
        accepted.alias("accepted"),
        "rid",
    )
    # the offers come in log order, which is mostly the order of their rounds already
    rows = replay.sorted_on(rows.with_columns(_preceded(ctx, rows).alias("rid")), [*KEY, "seq"])
    rows = rows.with_columns(_gaps_before(ctx, rows))
    # a sequence ends at its first acceptance: later offers of the round start a new one
    taken = pl.col("accepted").cast(pl.Int64)
    rows = rows.with_columns(
        _since(runs.starts(KEY), taken.cum_sum() - taken).alias("k"),
        _position(ctx, pl.col("seat")).alias("pos"),
    )
    first = runs.starts(SEQUENCE)
    return rows.with_columns(
        first.cum_sum().alias("sequence"),  # numbers the sequences in shoe order
        _since(first, pl.int_range(pl.len())).alias("index"),
        pl.when(~first).then(pl.col("seat").shift(1)).alias("prev_seat"),
    )


def _sequences(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per offer sequence of `rows` (sorted by `sequence`), in shoe order, with
    the seat that accepted it.

    A sequence ends at its first acceptance, so only its last offer can be accepted:
    the sequences are read off the first and last rows of their runs, not grouped.
    """
    first = runs.starts(SHOE)
    starts = rows.filter(runs.starts(["sequence"])).select(
        "sequence", "rid", *SEQUENCE, "gaps_before"
    )
    ends = rows.filter(runs.ends(["sequence"])).select(
        pl.when(pl.col("accepted")).then(pl.col("seat")).alias("acceptor")
    )
    gaps = pl.col("gaps_before")
    return pl.concat([starts, ends], how="horizontal").with_columns(
        first.alias("shoe_first"),
        pl.when(~first).then(pl.col("acceptor").shift(1)).alias("prev_curator"),
        # a round set aside since the shoe's previous sequence in the log (or before its
        # first): the gap may have held offers
        pl.when(first).then(gaps > 0).otherwise(gaps != gaps.shift(1)).alias("after_gap"),
    )


def _next_occupied(ctx: GameContext, ref: pl.Expr) -> pl.Expr:
    """The seat at the first occupied position after position `ref`, wrapping round.

    The occupied positions are sorted, so it is the one after those up to `ref`
    (counted as (n + ref - position) // n, 1 for a position up to `ref`), or the
    first when none is after: a count and a lookup, where the distance to every
    position and its smallest cost several times more.
    """
    n = len(ctx.house.baccarat["seats"])
    occupied = pl.col("occupied")
    up_to_ref = ((n + ref - occupied) // n).list.sum()
    position = occupied.list.get(up_to_ref % occupied.list.len(), null_on_oob=True)
    return _seat_at(ctx, pl.when(ref.is_not_null()).then(position))


def _or_seat(ctx: GameContext) -> pl.Expr:
    """In a sequence after a pass, the seat after the previous curator when he is next.

    (h)(2) offers the shoe to "each of the other players": the curator who
    relinquished it may be passed over, or offered it again; both are accepted. Where the
    holder before the sequence is unknown (the first sequence in the log of a shoe that
    began before it, or the first after a round set aside), any seat next in turn may be
    him, and the seat after it is accepted too.
    """
    order = pl.col("judged_by") == "order"
    known = pl.col("holder_known")
    back_to_curator = (
        order & ~pl.col("shoe_first") & known
        & (pl.col("expected_seat") == pl.col("prev_curator"))
    )
    holder_unknown = order & ~known
    return pl.when(back_to_curator | holder_unknown).then(
        _next_occupied(ctx, _position(ctx, pl.col("expected_seat")))
    )


def _shoes_known(ctx: GameContext, rows: pl.DataFrame) -> pl.Series:
    """Per offer of `rows`, whether its shoe's rows before round 1 are in the log."""
    known = shoes(ctx).select(*SHOE, pl.col("auditable").alias("shoe_known"))
    return (
        rows.select(*SHOE)
        .join(known, on=SHOE, how="left", maintain_order="left")
        .get_column("shoe_known")
        .fill_null(False)
    )


def build_offers(ctx: GameContext) -> pl.DataFrame:
    big = _big_tables(ctx)
    rows = _offer_rows(ctx, big)
    # the sequences are numbered 1, 2, ... in order: each offer's is found by its number
    sequences = _sequences(rows).select("shoe_first", "prev_curator", "after_gap")
    occupied = _occupied(ctx, rows.get_column("rid"))
    seat_one = _position(ctx, pl.lit(1, pl.Int64)).fill_null(0)
    first, later = pl.col("index") == 0, pl.col("index") > 0
    known = pl.col("holder_known")
    # the shoe's first offer is known only where its rows before round 1 are in the log,
    # and no round before it was set aside; a pass only where no round set aside since the
    # previous sequence may have held another
    shoe_first = first & pl.col("shoe_first") & known
    after_pass = first & ~pl.col("shoe_first") & known & pl.col("prev_curator").is_not_null()
    judged_by = (
        pl.when(shoe_first)
        .then(pl.lit("first"))
        .when(after_pass)
        .then(pl.lit("pass"))
        .when(later)
        .then(pl.lit("order"))
    )
    # (f)(1) starts at seat 1 itself; (h)(2) at the seat after the curator or previous offer
    ref = (
        pl.when(shoe_first)
        .then(seat_one - 1)
        .when(after_pass)
        .then(_position(ctx, pl.col("prev_curator")))
        .when(later)
        .then(_position(ctx, pl.col("prev_seat")))
    )
    offered = pl.concat(
        [rows, sequences[rows.get_column("sequence") - 1],
         _shoes_known(ctx, rows).to_frame()],
        how="horizontal",
    ).join(occupied, on="rid", how="left", maintain_order="left")
    return replay.sorted_on(
        offered.with_columns(
            pl.col("occupied").fill_null(pl.lit([], pl.List(pl.Int64))),
            (~pl.col("after_gap") & (~pl.col("shoe_first") | pl.col("shoe_known")))
            .alias("holder_known"),
        )
        .with_columns(
            judged_by.alias("judged_by"),
            ref.alias("ref"),
        )
        .with_columns(
            pl.col("occupied")
            .list.contains(pl.col("pos"))
            .fill_null(False)
            .alias("offered_occupied"),
            _next_occupied(ctx, pl.col("ref")).alias("expected_seat"),
        )
        .with_columns(_or_seat(ctx).alias("or_seat"))
        .drop("ref"),
        ["table_id", "seq"],
    )


def offers(ctx: GameContext) -> pl.DataFrame:
    """Every shoe_offer of a big table with the seat it had to go to (see module docstring)."""
    return ctx.derived("baccarat.offers", build_offers)


def build_curators(ctx: GameContext) -> pl.DataFrame:
    big = _big_tables(ctx)
    # the offers back in the order of their sequences
    sequences = _sequences(sorted_by(offers(ctx), "sequence"))
    # the last sequence of a round decides who deals it; a round key has one id
    holder = (
        sequences.filter(runs.ends(KEY) & pl.col("rid").is_not_null())
        .select("rid", "acceptor", pl.lit(True).alias("has_offers"))
    )
    # the columns first, then the rows: the rounds' lists are not copied
    rounds = (
        replay.rounds(ctx)
        .select(
            "rid",
            *KEY,
            "start_seq",
            "winner",
            "p_points",
            "b_points",
            "dragon7",
            "panda8",
            "void",
            "dealt",
        )
        .filter(pl.col("table_id").is_in(big.get_column("table_id").to_list()))
    )
    state = pl.when(pl.col("has_offers")).then(
        pl.struct(
            pl.col("acceptor").alias("curator"),
            pl.col("acceptor").is_null().alias("dealer_deals"),
        )
    )
    # the rounds in shoe order: a state carries forward to the shoe's later rounds only,
    # and not across a round set aside (it may have held offers): up to the next sequence
    # after it, who deals is unknown
    span = runs.starts([*SHOE, "segment"]).cum_sum()
    same_span = pl.when(pl.col("has_offers")).then(span).forward_fill() == span
    rounds = replay.with_columns_of(rounds, holder, "rid")
    rounds = rounds.with_columns(segment_of(ctx, rounds))
    rounds = replay.sorted_on(rounds, KEY)
    return (
        rounds.drop("rid")
        .with_columns(pl.col("has_offers").fill_null(False))
        .with_columns(pl.when(same_span).then(state.forward_fill()).alias("state"))
        .unnest("state")
        .drop("acceptor", "segment")
        .with_columns(
            pl.col("dealer_deals").fill_null(False),
            # a panda 8 is a player win, so a banker loss; a tie or a dragon 7 is not
            (pl.col("dealt") & ~pl.col("void").fill_null(False) & (pl.col("winner") == "player"))
            .fill_null(False)
            .alias("banker_lost"),
        )
    )


def curators(ctx: GameContext) -> pl.DataFrame:
    """Every round of a big table with its curator (see module docstring)."""
    return ctx.derived("baccarat.curators", build_curators)
