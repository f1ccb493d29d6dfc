"""Cards astray in baccarat, 9 NYCRR 5324.20(i)(1)-(4): each `card_exposed` row with
what came of it (hand-history-v1 1.2, "Irregularities").

The spec's words, as the rules read them:
- a card's **later row** is the first `card` or `burn` row of the same card on the table
  after its `card_exposed` row (where it was used or discarded);
- the **next hand** is the first round whose first `card` row comes after the
  `card_exposed` row; where it is in another shoe (the cards were reshuffled), or a
  round of the shoe between them was set aside (it may have been the next hand), the
  card's use is not judged;
- a **discard** is the run of `burn` rows after a disclosed `card_exposed` row, up to the
  next `card`, `round_start`, `card_exposed` or `shuffle` row of the table (a
  `cover_card` inside it does not end it);
- a **hand no one wagers on** is a round with no `wager` row.

Irregularities are rare: every frame here starts from the few `card_exposed` rows and
looks up only the rows of their tables (and, for the later row, of their cards).

`exposed(ctx)`: one row per baccarat `card_exposed` row, in log order:
  rid table_id shoe_id round seq card exposure disclosed
  later_seq later_event later_target  the card's later row (null: none in the log)
  next_rid next_round next_first_seq  the next hand and its first card row (null: none in
                 the log, or `next_known` false)
  next_known     the next hand is in the log, in the card's shoe, with no round of the
                 shoe set aside from the card's round up to it
  next_wagered   the next hand has a wager row
  discard_cards discard_seqs  the burns of its discard, in order (empty: none, or not
                 disclosed)
  discard_closed a row that ends the discard follows it (the log does not end in it)
  banker_must_draw  (misdealt) by (f)(12), the banker's hand of the card's round had to
                 draw: its two-card count, the player standing on two cards, no natural;
                 null where either hand's first two cards are not in the round
  banker_third_seq  the banker's third card row of the card's round (null: none)
  announced_seq  (misdealt) the result of the card's round (or its end, with none)

`discard_ok(ten_as_zero)`: an expression over `exposed` rows: the discard passes
(`disclosed` rows only).

`blank_hands(ctx)`: the hands no one wagers on that are the next hand of a disclosed
`face_up_in_shoe` card ((i)(1)(ii)): rid, table_id, shoe_id, round.

`not_shoe_burns(ctx)`: (table_id, seq) of the burn rows that are not a shoe's (e) burn:
a discard's burns, and a burn that is an exposed card's later row.

`takes_a_card(ctx)`: an expression over the event rows: the row takes a card out of the
shoe (card and burn rows, and a card_exposed row with no later row), for the counts of
(a)(4) and (i)(4).
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...ingest import cards as card_codes
from .. import gaps
from . import replay, settlement, tableau

SHOE_KEY = ["table_id", "shoe_id"]
# the rows that end a discard's run of burns (hand-history-v1 1.2, Recording)
DISCARD_ENDS = ("card", "round_start", "card_exposed", "shuffle")

_SCHEMA = {
    "rid": pl.Int64,
    "table_id": pl.String,
    "shoe_id": pl.String,
    "round": pl.Int64,
    "seq": pl.Int64,
    "card": pl.String,
    "exposure": pl.String,
    "disclosed": pl.Boolean,
    "later_seq": pl.Int64,
    "later_event": pl.String,
    "later_target": pl.String,
    "next_rid": pl.Int64,
    "next_round": pl.Int64,
    "next_first_seq": pl.Int64,
    "next_known": pl.Boolean,
    "next_wagered": pl.Boolean,
    "discard_cards": pl.List(pl.String),
    "discard_seqs": pl.List(pl.Int64),
    "discard_closed": pl.Boolean,
    "banker_must_draw": pl.Boolean,
    "banker_third_seq": pl.Int64,
    "announced_seq": pl.Int64,
}


def _exposure_rows(ctx: GameContext) -> pl.DataFrame:
    return (
        ctx.events.lazy()
        .filter(pl.col("event") == "card_exposed")
        .select(
            pl.col("rid").cast(pl.Int64),
            pl.col("table_id", "shoe_id", "card").cast(pl.String),
            pl.col("round", "seq").cast(pl.Int64),
            pl.col("exposure").cast(pl.String),
            "disclosed",
        )
        .collect(engine=replay.ENGINE)
    )


def _rows_of_tables(ctx: GameContext, rows: pl.DataFrame) -> pl.DataFrame:
    """The rows the later rows and the discards are found among (card, burn and the rows
    ending a discard) on the tables of the exposed `rows`, read once, sorted by seq (each
    table's rows are in seq order; across tables the as-of joins below go by table)."""
    tables = rows.get_column("table_id").unique().implode()
    return (
        ctx.events.lazy()
        .filter(pl.col("event").is_in(("burn", *DISCARD_ENDS))
                & pl.col("table_id").is_in(tables))
        .select(pl.col("table_id").cast(pl.String), pl.col("seq").cast(pl.Int64),
                pl.col("event").cast(pl.String), pl.col("card").cast(pl.String),
                pl.col("target").cast(pl.String))
        .collect(engine=replay.ENGINE)
        .sort("seq")
    )


def _later_rows(rows: pl.DataFrame, table_rows: pl.DataFrame) -> pl.DataFrame:
    """Per exposed card (by its seq): the first card or burn row of the same card on its
    table after it."""
    cards = (
        table_rows.filter(pl.col("event").is_in(("card", "burn")))
        .join(rows.select("table_id", "card").unique(), on=["table_id", "card"], how="semi")
        .select("table_id", "card", pl.col("seq").alias("later_seq"),
                pl.col("event").alias("later_event"), pl.col("target").alias("later_target"))
    )
    return rows.sort("seq").join_asof(
        cards, left_on="seq", right_on="later_seq", by=["table_id", "card"],
        strategy="forward", allow_exact_matches=False, check_sortedness=False,
    ).select("table_id", "seq", "later_seq", "later_event", "later_target")


def _next_hands(ctx: GameContext, rows: pl.DataFrame) -> pl.DataFrame:
    """Per exposed card: the first round of its table whose first card row comes after
    it, with that round's shoe and whether it has a wager."""
    tables = rows.get_column("table_id").unique().implode()
    firsts = (
        replay.rounds(ctx)
        .lazy()
        .filter(pl.col("table_id").cast(pl.String).is_in(tables) & (pl.col("n_cards") > 0))
        .select(
            pl.col("table_id").cast(pl.String),
            pl.col("rid").cast(pl.Int64).alias("next_rid"),
            pl.col("shoe_id").cast(pl.String).alias("next_shoe_id"),
            pl.col("round").cast(pl.Int64).alias("next_round"),
            pl.col("seqs").list.first().cast(pl.Int64).alias("next_first_seq"),
        )
        .collect(engine=replay.ENGINE)
        .sort("next_first_seq")
    )
    wagered = settlement.wager_rows(ctx).get_column("rid").unique().implode()
    return rows.sort("seq").join_asof(
        firsts, left_on="seq", right_on="next_first_seq", by="table_id",
        strategy="forward", check_sortedness=False,
    ).select(
        "table_id", "seq", "next_rid", "next_shoe_id", "next_round", "next_first_seq",
        pl.col("next_rid").is_in(wagered).alias("next_wagered"),
    )


def _gap_between(ctx: GameContext, rows: pl.DataFrame) -> pl.Series:
    """Per row of `rows` (with its shoe, round and next_round): whether a round of its
    shoe from its round up to the next hand was set aside."""
    if not gaps.has_gaps(ctx):
        return pl.repeat(False, rows.height, eager=True)
    set_aside = ctx.gaps.select(
        pl.col("table_id", "shoe_id").cast(pl.String), pl.col("round").cast(pl.Int64)
        .alias("gap")
    )
    hit = (
        rows.select("table_id", "shoe_id", "seq", "round", "next_round")
        .join(set_aside, on=SHOE_KEY, how="inner")
        .filter(pl.col("gap").is_between(pl.col("round"), pl.col("next_round")))
        .select("table_id", "seq")
        .unique()
        .with_columns(pl.lit(True).alias("hit"))
    )
    return (
        rows.select("table_id", "seq")
        .join(hit, on=["table_id", "seq"], how="left", maintain_order="left")
        .get_column("hit")
        .fill_null(False)
    )


def _discards(rows: pl.DataFrame, table_rows: pl.DataFrame) -> pl.DataFrame:
    """Per disclosed exposed card: the burns of its discard, in order, and whether a row
    ending the discard follows (the log does not end during it)."""
    shown = rows.filter(pl.col("disclosed").fill_null(False)).select("table_id", "seq").sort("seq")
    empty = rows.select(
        "table_id", "seq",
        pl.lit([], pl.List(pl.String)).alias("discard_cards"),
        pl.lit([], pl.List(pl.Int64)).alias("discard_seqs"),
        pl.lit(False).alias("discard_closed"),
    ).clear()
    if shown.is_empty():
        return empty
    # the rows of tables with no disclosed card find no owner below
    ends = table_rows.filter(pl.col("event").is_in(DISCARD_ENDS)).select(
        "table_id", pl.col("seq").alias("end_seq")
    )
    bounds = shown.join_asof(
        ends, left_on="seq", right_on="end_seq", by="table_id", strategy="forward",
        allow_exact_matches=False, check_sortedness=False,
    )
    burns = table_rows.filter(pl.col("event") == "burn").select(
        "table_id", pl.col("seq").alias("burn_seq"), "card"
    )
    # each burn goes with the last disclosed card before it, while that card's run lasts
    owned = burns.join_asof(
        bounds, left_on="burn_seq", right_on="seq", by="table_id", strategy="backward",
        check_sortedness=False,
    ).filter(
        pl.col("seq").is_not_null()
        & (pl.col("end_seq").is_null() | (pl.col("burn_seq") < pl.col("end_seq")))
    )
    lists = owned.group_by("table_id", "seq", maintain_order=True).agg(
        pl.col("card").alias("discard_cards"), pl.col("burn_seq").alias("discard_seqs")
    )
    return (
        bounds.join(lists, on=["table_id", "seq"], how="left")
        .select(
            "table_id", "seq",
            pl.col("discard_cards").fill_null(pl.lit([], pl.List(pl.String))),
            pl.col("discard_seqs").fill_null(pl.lit([], pl.List(pl.Int64))),
            pl.col("end_seq").is_not_null().alias("discard_closed"),
        )
    )


def _banker_duty(ctx: GameContext, rows: pl.DataFrame) -> pl.DataFrame:
    """Per misdealt card: whether (f)(12) obliged the banker of its round to draw (the
    player standing on the two cards of the hand), and the banker's third card row."""
    misdealt = rows.filter(pl.col("exposure") == "misdealt").select("table_id", "seq", "rid")
    params = ctx.params
    rounds = replay.rounds(ctx).filter(
        pl.col("rid").is_in(misdealt.get_column("rid").implode())
    ).select(
        pl.col("rid").cast(pl.Int64),
        pl.when((pl.col("n_player") >= 2) & (pl.col("n_banker") >= 2))
        .then(tableau.banker_draws(pl.col("b_two"), pl.col("p_two"), pl.lit(None, pl.Int8),
                                   params))
        .alias("banker_must_draw"),
        pl.col("b_seqs").list.get(2, null_on_oob=True).cast(pl.Int64).alias("banker_third_seq"),
        pl.coalesce("result_seq", "end_seq").cast(pl.Int64).alias("announced_seq"),
    )
    return misdealt.join(rounds, on="rid", how="left").drop("rid")


def _build_exposed(ctx: GameContext) -> pl.DataFrame:
    rows = _exposure_rows(ctx)
    if rows.is_empty():
        return pl.DataFrame(schema=_SCHEMA)
    on = ["table_id", "seq"]
    table_rows = _rows_of_tables(ctx, rows)
    later = _later_rows(rows, table_rows)
    nexts = _next_hands(ctx, rows)
    frame = (
        rows.join(later, on=on, how="left", maintain_order="left")
        .join(nexts, on=on, how="left", maintain_order="left")
    )
    same_shoe = pl.col("next_shoe_id") == pl.col("shoe_id")
    frame = frame.with_columns(
        (same_shoe.fill_null(False) & ~_gap_between(ctx, frame)).alias("next_known")
    )
    frame = frame.with_columns(
        pl.when(pl.col("next_known")).then(pl.col(c)).alias(c)
        for c in ("next_rid", "next_round", "next_first_seq", "next_wagered")
    )
    frame = (
        frame.join(_discards(rows, table_rows), on=on, how="left", maintain_order="left")
        .join(_banker_duty(ctx, rows), on=on, how="left", maintain_order="left")
        .with_columns(
            pl.col("discard_cards").fill_null(pl.lit([], pl.List(pl.String))),
            pl.col("discard_seqs").fill_null(pl.lit([], pl.List(pl.Int64))),
            pl.col("discard_closed").fill_null(False),
        )
    )
    return frame.select(list(_SCHEMA)).cast(_SCHEMA).sort("table_id", "seq")


def exposed(ctx: GameContext) -> pl.DataFrame:
    """Every baccarat card_exposed row with what came of it (see the module docstring)."""
    return ctx.derived("baccarat.exposed", _build_exposed)


def takes_a_card(ctx: GameContext) -> pl.Expr:
    """Whether an event row takes a card out of the shoe (hand-history-v1 1.2, Recording):
    a card or burn row, or a card_exposed row with no later row (one with a later row is
    counted there)."""
    event = pl.col("event")
    counted = event.is_in(["card", "burn"])
    alone = exposed(ctx).filter(pl.col("later_seq").is_null())
    if alone.is_empty():
        return counted
    keys = alone.select(pl.struct("table_id", "seq")).to_series().implode()
    return counted | ((event == "card_exposed") & pl.struct("table_id", "seq").is_in(keys))


def _value(ctx: GameContext, card: pl.Expr, ten_as_zero: bool) -> pl.Expr:
    """How many cards a discard's face-up card calls for: (i)(1)(i) counts face cards
    and 10s as 10 and aces as 1, as the (e) burn does (`burn_values`); in (i)(3), where
    "the value of such card" is its point value, a ten-value card may count 0 too."""
    values = card_codes.by_rank(ctx.params["burn_values"])
    if ten_as_zero:
        values = {rank: 0 if value == 10 else value for rank, value in values.items()}
    return card_codes.value(card, values, pl.Int64)


def discard_ok(ctx: GameContext, ten_as_zero: bool = False) -> pl.Expr:
    """Whether the discard of an `exposed` row passes: the exposed card and then its
    value in burns; the exposed card, one more card and that card's value in burns; or
    one card and its value in burns (the first is the last with the exposed card first).
    With `ten_as_zero` ((i)(3)), a ten-value card may count 10 or 0."""
    burns = pl.col("discard_cards")
    n = burns.list.len().cast(pl.Int64)
    first, second = burns.list.get(0, null_on_oob=True), burns.list.get(1, null_on_oob=True)
    counts = [False, True] if ten_as_zero else [False]
    ok = pl.lit(False)
    for zero in counts:
        one_card = (n >= 1) & (n == 1 + _value(ctx, first, zero))
        exposed_then_one = (n >= 2) & (first == pl.col("card")) & (n == 2 + _value(ctx, second,
                                                                                    zero))
        ok = ok | one_card.fill_null(False) | exposed_then_one.fill_null(False)
    return ok


def _build_blank_hands(ctx: GameContext) -> pl.DataFrame:
    blank = exposed(ctx).filter(
        (pl.col("exposure") == "face_up_in_shoe")
        & pl.col("disclosed").fill_null(False)
        & pl.col("next_known")
        & ~pl.col("next_wagered")
    ).select(pl.col("next_rid").alias("rid")).unique()
    return (
        replay.rounds(ctx)
        .filter(pl.col("rid").is_in(blank.get_column("rid").implode()))
        .select("rid", "table_id", "shoe_id", "round")
    )


def blank_hands(ctx: GameContext) -> pl.DataFrame:
    """The hands no one wagers on dealt after a disclosed face_up_in_shoe card
    ((i)(1)(ii)): rid, table_id, shoe_id, round. Most logs: none."""
    return ctx.derived("baccarat.blank_hands", _build_blank_hands)


def not_shoe_burns(ctx: GameContext) -> pl.DataFrame:
    """(table_id, seq) of the burns that are not a shoe's (e) burn: the burns of a
    discard, and a burn that is an exposed card's later row."""
    rows = exposed(ctx)
    discards = rows.select("table_id", pl.col("discard_seqs").alias("seq")).explode("seq")
    later = rows.filter(pl.col("later_event") == "burn").select(
        "table_id", pl.col("later_seq").alias("seq")
    )
    return pl.concat([discards, later]).drop_nulls().unique()
