"""Every recorded baccarat round, replayed: one row per round, built once per audit.

A round number holding only shoe-level rows (hand-history-v1 1.2: a card found face up
and its discard before a reshuffle) is no round, and has no row here.

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
from ...ingest import cards as card_codes
from ...ingest import vocabulary
from .. import common, runs
from ..sorted_keys import marked_sorted
from . import tableau

KEY = ["table_id", "shoe_id", "round"]

# Lazy queries here run on the in-memory engine: their frames fit in memory, and its
# group-bys and order-keeping joins run them about twice as fast as the streaming one.
ENGINE = "in-memory"


def with_columns_of(
    left: pl.DataFrame, right: pl.DataFrame, on: str, how: str = "left"
) -> pl.DataFrame:
    """`left` with the other columns of `right`'s row of the same `on`, in `left`'s order:
    a left join (null without a row) or, `how="inner"`, an inner join of a frame with one
    row per `on` value.

    Joining the key alone and gathering the columns at the rows found costs a fraction
    of an order-keeping join of the whole of `right`; the join merges where the keys
    are sorted, and gathering from one chunk per column is several times faster than
    from several.
    """
    at = (
        marked_sorted(left.select(on), on)
        .join(
            marked_sorted(right.select(on), on).with_row_index("_at"),
            on=on, how="left", maintain_order="left",
        )
        .get_column("_at")
    )
    if len(at) != left.height:  # some `on` value has several rows in `right`
        return left.join(right, on=on, how=how, maintain_order="left")  # type: ignore[arg-type]
    if how == "inner" and at.null_count():
        left, at = left.filter(at.is_not_null()), at.drop_nulls()
    return pl.concat([left, right.drop(on).rechunk()[at]], how="horizontal")


def sorted_on(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """`frame.sort(keys)`, copying nothing where the rows are in that order already.

    Frames taken from the event frame (in table and seq order) mostly are: one pass
    comparing each row with the one before costs a fraction of a sort on string
    keys. Only rows strictly in order (no two alike, no nulls) are kept as they are:
    the order of equal rows is the sort's to decide.
    """
    after = pl.lit(False)
    for key in reversed(keys):
        now, before = pl.col(key), pl.col(key).shift(1)
        after = (now > before) | ((now == before) & after)
    in_order = frame.select(after.fill_null(False).slice(1).all()).item()
    if in_order and not any(frame.get_column(key).null_count() for key in keys):
        return frame
    return frame.sort(keys)


def card_values(ctx: GameContext) -> pl.Expr:
    """Point value of the `card` column's rank ((a)(4)(i)), from the ruleset (a card known
    by value only, 1.3, by the value of its rank: `X*` 0)."""
    return card_codes.value(pl.col("card"), ctx.params["card_points"])


def _card_points(ctx: GameContext, cards: pl.Series) -> pl.Series:
    """`card_values` of the `cards`, read off the rank's byte where every code is two
    bytes long (as the format writes them, `8*` and `X*` too)."""
    points = card_codes.by_rank(ctx.params["card_points"])
    fast = common.rank_byte_values(cards, points)
    return cards.to_frame("card").select(card_values(ctx) if fast is None else fast).to_series()


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


# the events whose place (or, for the result, values) a round records
MARKS = ("round_start", "no_more_bets", "round_end", "result", "void", "cover_card")


def _spans(ctx: GameContext) -> pl.DataFrame:
    # The rows are in log order, so the rows of a round come in runs (one, unless the
    # round was interleaved with another): the first and last rows of the runs bound it.
    events = ctx.events.lazy()
    bounds = pl.concat(
        [
            events.filter(runs.starts(["rid"]))
            .select("rid", *KEY, pl.col("seq").alias("first_seq")),
            events.filter(runs.ends(["rid"])).select(pl.col("seq").alias("last_seq")),
        ],
        how="horizontal",
    )
    if ctx.events.get_column("rid").is_sorted():  # one run per round: its bounds
        return bounds.collect(engine=ENGINE)
    return (
        bounds.group_by("rid")
        .agg(pl.col(KEY).first(), pl.col("first_seq").min(), pl.col("last_seq").max())
        .sort("rid")
        .collect(engine=ENGINE)
    )


def spans(ctx: GameContext) -> pl.DataFrame:
    """Every round id of the log in log order, round 0 (a shoe's rows before play) too:
    rid, table_id, shoe_id, round, first_seq and last_seq."""
    return ctx.derived("baccarat.spans", _spans)


def _firsts(rows: pl.DataFrame, event: str, **columns: str) -> pl.DataFrame:
    """Per round with an `event` row: `columns` (new name: column) of its first one.

    A round belongs to one table and the rows are in seq order within a table, so a
    round's first row of a kind has its lowest seq. A group-by per kind over that
    kind's rows reads `first` off each run, where filtering inside one group-by of
    every kind would filter each group once per column.
    """
    return (
        rows.filter(pl.col("event") == event)
        .group_by("rid", maintain_order=True)
        .agg(pl.col(column).first().alias(name) for name, column in columns.items())
    )


def _onto(rounds: pl.DataFrame, per_round: pl.DataFrame) -> pl.DataFrame:
    """`rounds` with the columns of `per_round` (one row per rid of some rounds), null
    for a round without one. Where `per_round` holds every round in order (a mark every
    round has), its columns are put alongside as they are: nothing to join."""
    if per_round.get_column("rid").equals(rounds.get_column("rid")):
        return pl.concat([rounds, per_round.drop("rid")], how="horizontal")
    return rounds.join(per_round, on="rid", how="left", maintain_order="left")


def _round_events(ctx: GameContext) -> pl.DataFrame:
    """One row per round (by `rid`, in log order): its key and marks."""
    played = spans(ctx).filter(pl.col("round") > 0).select("rid", *KEY)
    marks = (
        _played(ctx)
        .filter(pl.col("event").is_in(MARKS))
        .select("rid", "event", "seq", "winner", "player_points", "banker_points")
        .collect(engine=ENGINE)
    )
    kinds = [
        _firsts(marks, "round_start", start_seq="seq"),
        _firsts(marks, "no_more_bets", no_more_bets_seq="seq"),
        _firsts(marks, "round_end", end_seq="seq"),
        _firsts(
            marks, "result", result_seq="seq", declared_winner="winner",
            declared_player_points="player_points", declared_banker_points="banker_points",
        ),
        _firsts(marks, "void", void_seq="seq"),
    ]
    rounds = played
    for firsts in kinds:
        rounds = _onto(rounds, firsts)
    covered = marks.filter(pl.col("event") == "cover_card").get_column("rid")
    return rounds.select(
        "rid", *KEY, "start_seq", "no_more_bets_seq", "end_seq", "result_seq", "void_seq",
        pl.col("void_seq").is_not_null().alias("void"),
        pl.col("rid").is_in(covered.implode()).alias("cover_card"),
        "declared_winner", "declared_player_points", "declared_banker_points",
    )


def _lists_per_round(rids: pl.Series, rows: pl.DataFrame, **columns: str) -> pl.DataFrame:
    """One row per round of `rids` (sorted, unique), in that order: the values of `columns`
    (new name: column) of its `rows`, in order, as lists; empty lists for a round without
    rows. Every rid of `rows` is one of `rids`.

    The lists come straight from a group-by in the rounds' order: gathering list columns
    (as a join onto the rounds would) costs several times more than building them.
    """
    lists = [pl.col(column).alias(name) for name, column in columns.items()]
    grouped = rows.group_by("rid", maintain_order=True).agg(lists)
    if grouped.get_column("rid").equals(rids):
        return grouped
    # some round has no rows (or a round's rows are not in one run): a placeholder row
    # leads each round's group and is left out of its lists
    placeholders = rows.select(columns.values()).clear(len(rids)).with_columns(rids)
    merged = pl.concat([placeholders, rows.select("rid", *columns.values())], how="diagonal")
    lists = [pl.col(column).slice(1).alias(name) for name, column in columns.items()]
    return merged.sort("rid", maintain_order=True).group_by("rid", maintain_order=True).agg(lists)


def _initials(every_card_targeted: bool) -> tuple[pl.Expr, pl.Expr]:
    """A card's initial ("P" or "B", null for another target), and the `order` of a
    round's `initials`: the initials of its cards, those of another target left out.

    Where every card goes to the player or the banker, the initials are bytes and a
    round's list of them reads as its string: joining lists of strings costs several
    times more.
    """
    player = pl.col("player")
    if every_card_targeted:
        initial = pl.when(player).then(ord("P")).otherwise(ord("B")).cast(pl.UInt8)
        return initial, pl.col("initials").cast(pl.Binary).cast(pl.String)
    initial = pl.when(player).then(pl.lit("P")).when(~player).then(pl.lit("B"))
    return initial, pl.col("initials").list.join("", ignore_nulls=True)


def _round_cards(ctx: GameContext, rids: pl.Series) -> pl.DataFrame:
    """The cards of each round of `rids` (the played rounds, in order), one row each."""
    # a card's target is player or banker (ingest makes any other a problem): `player`
    # true or false, null for another
    target = pl.col("target")
    player = pl.when(target == "player").then(True).when(target == "banker").then(False)
    cards = rows_of(ctx, ["card"], "seq", "card", "target")
    cards = cards.select(
        "rid", "seq", _card_points(ctx, cards.get_column("card")).alias("value"),
        player.alias("player"),
    )
    initials, order = _initials(cards.get_column("player").null_count() == 0)
    to_player = pl.col("player")
    every = _lists_per_round(
        rids, cards.with_columns(initials.alias("initial")), initials="initial", seqs="seq"
    )
    p_hand = _lists_per_round(rids, cards.filter(to_player), p_values="value", p_seqs="seq")
    b_hand = _lists_per_round(rids, cards.filter(~to_player), b_values="value", b_seqs="seq")
    return pl.concat([every, p_hand.drop("rid"), b_hand.drop("rid")], how="horizontal").select(
        "rid",
        order.alias("order"),
        "p_values",
        "b_values",
        "p_seqs",
        "b_seqs",
        "seqs",
        pl.col("seqs").list.len().alias("n_cards"),
    )


def _total(values: str) -> pl.Expr:
    return pl.col(values).cast(pl.List(pl.Int32)).list.sum()


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


def _shoe_level_only(ctx: GameContext, events: pl.DataFrame) -> pl.Series:
    """The round ids (>= 1) holding only shoe-level rows: no round (hand-history-v1 1.2),
    e.g. a card found face up and its discard, carrying the next round's number, before
    the cards were reshuffled. Only rounds with no mark are looked at: most logs, none."""
    marks = ["start_seq", "no_more_bets_seq", "end_seq", "result_seq", "void_seq"]
    bare = events.filter(pl.all_horizontal(pl.col(marks).is_null())).get_column("rid")
    if bare.is_empty():
        return bare
    busy = (
        _played(ctx)
        .filter(pl.col("rid").is_in(bare.implode())
                & ~pl.col("event").is_in(vocabulary.SHOE_EVENTS))
        .select("rid")
        .collect(engine=ENGINE)
        .get_column("rid")
    )
    return bare.filter(~bare.is_in(busy.implode()))


def build_rounds(ctx: GameContext) -> pl.DataFrame:
    events = _round_events(ctx)
    no_round = _shoe_level_only(ctx, events)
    if no_round.len():
        events = events.filter(~pl.col("rid").is_in(no_round.implode()))
    cards = _round_cards(ctx, events.get_column("rid"))
    rounds = pl.concat([events, cards.drop("rid")], how="horizontal").lazy()
    rounds = _replayed(rounds, ctx)
    # a hand with fewer than two cards has no point count to judge
    dealt = (pl.col("n_player") >= 2) & (pl.col("n_banker") >= 2)
    rounds = rounds.with_columns(dealt.alias("dealt"))
    rounds = rounds.join(ctx.tables.lazy(), on="table_id", how="left", maintain_order="left")
    return rounds.collect(engine=ENGINE)


def rounds(ctx: GameContext) -> pl.DataFrame:
    """The replayed rounds (see the module docstring), shared by every baccarat rule."""
    return ctx.derived("baccarat.rounds", build_rounds)
