"""Every recorded blackjack round, replayed into frames the rules share.

Built once per audit (through `ctx.derived`), over all rounds of all tables
at once. Keys: `rid` is the integer round id from ingest (one per table_id,
shoe_id, round); group and join on it rather than on the string columns.

cards(ctx)   one row per card dealt in a round (round >= 1), in dealing order:
             rid, table_id, shoe_id, round, seq, target, seat, hand, card, value
             (1-10, ace 1 (b)(2)), k (0-based position of the card in its round)
dealer_rows(ctx) the rows of `cards` dealt to the dealer (target "dealer")
dealer(ctx)  one row per round with dealer cards: rid, dealer_values, dealer_seqs,
             up (the first card's value), hole (the second's), dealer_total,
             dealer_soft, dealer_blackjack, dealer_busted, dealer_n_cards
rounds(ctx)  one row per round: rid, table_id, shoe_id, round, start_seq,
             no_more_bets_seq, end_seq, void, cover_card, time, plus the dealer
             columns and the table's house settings (dealer_hits_soft_17,
             blackjack_pays, insurance_pays, surrender, payout_limit, decks, ...)
actions(ctx) the action rows of rounds (rid, table_id, shoe_id, round, seq, seat, hand, action)
wagers(ctx)  the wager rows of rounds (rid, seat, hand, bet, player_id, amount_cents, seq)
settlements(ctx) the collect / pay / push rows, same columns plus `event`

The hands as they ended (`hands`, `hand_facts`) are built on these and on the
decisions' holdings: .final_hands.
"""

from __future__ import annotations

import polars as pl

from ...audit_context import GameContext
from ...ingest import cards as card_codes
from ...ingest.sequence import indexed_by_rid
from ...series import placed
from .. import common, runs
from ..sorted_keys import marked_sorted, sorted_by
from . import engine

ROUND_COLUMNS = ["rid", "table_id", "shoe_id", "round"]
HAND = ["rid", "seat", "hand"]
MONEY_COLUMNS = ["rid", "table_id", "shoe_id", "round", "seq", "seat", "hand", "bet",
                 "player_id", "amount_cents"]


def in_rounds(ctx: GameContext, where: pl.Expr, *columns: str | pl.Expr) -> pl.DataFrame:
    """`columns` of the rows of rounds (round >= 1) that match `where`. Lazy, so that the
    event frame is filtered first and only the rows kept are gathered, column by column."""
    kept = ctx.events.lazy().filter((pl.col("round") > 0) & where)
    frame = kept.select(*columns).collect(engine="in-memory")
    return marked_sorted(frame, "rid") if "rid" in frame.columns else frame


def live(ctx: GameContext, frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of `frame` (with `rid`) of rounds that are not void."""
    # void rounds are few: a lookup in their ids costs less than an anti-join
    void = rounds(ctx).filter(pl.col("void"))["rid"]
    if void.is_empty():
        return frame
    return frame.filter(~pl.col("rid").is_in(void.implode()))


def hand_in(ctx: GameContext, hands: pl.DataFrame) -> pl.Expr:
    """Whether a row's hand (rid, seat, hand) is one of `hands` (a few, e.g. the hands
    declared dead): by the hand id, false where `hands` is empty (no lookup made) or the
    row has no seat or hand."""
    if hands.is_empty():
        return pl.lit(False)
    ids = hands.select(hand_id(ctx))["hid"]
    return hand_id(ctx).is_in(ids.implode()).fill_null(False)


def least_by_rid(frame: pl.DataFrame, column: str = "seq") -> pl.DataFrame:
    """rid and the least `column` of each round of `frame`. Where each round is one run of
    rows with `column` ascending (as frames cut from the events come), that is the run's
    first row, and no group-by is needed."""
    if runs.rising_within(frame, "rid", column):
        return frame.filter(runs.starts(["rid"])).select("rid", column)
    return frame.group_by("rid").agg(pl.col(column).min())


def next_seq(ctx: GameContext, frame: pl.DataFrame, asked: pl.DataFrame) -> pl.Series | None:
    """For each row of `asked` (rid, seq): the least seq above it among the rows of `frame`
    (rid, seq) of the same round, null where there is none. Read by one as-of join on
    (rid, seq) as one integer where `frame` is in that order, as frames cut from the
    events come, rather than every row of those rounds compared; None where it is not
    (or a key is null, or too wide)."""
    key = order(ctx, pl.concat([frame.select("rid", "seq"), asked.select("rid", "seq")]),
                "rid", "seq")
    if len(key) > 1:
        return None
    rows = frame.select(key[0].alias("key"), pl.col("rid").alias("of"), pl.col("seq").alias("next"))
    if not rows["key"].is_sorted():
        return None
    asks = asked.select(key[0].alias("key"), "rid").with_row_index("row").sort("key")
    found = asks.join_asof(
        rows.with_columns(pl.col("key").set_sorted()),
        on="key",
        strategy="forward",
        allow_exact_matches=False,
    )
    # the first row above may be of a later round: then the round has none
    seqs = found.select(pl.when(pl.col("of") == pl.col("rid")).then(pl.col("next")).alias("seq"))
    return placed(seqs.to_series(), found["row"], asked.height)


def by_rid(ctx: GameContext, frame: pl.DataFrame, column: str) -> pl.Expr:
    """`column` of `frame` (at most one row per rid) for each row's `rid`, null where
    `frame` has none: a lookup by position in an array indexed by rid, not a join."""
    table = indexed_by_rid(frame, column, int(ctx.events["rid"].max() or 0) + 1)
    return pl.lit(table).gather(pl.col("rid"))


INTEGER_KEYS = ("rid", "seat", "hand", "seq")
FITS = 2**62  # combined keys stay clear of the Int64 limit


def build_key_ranges(ctx: GameContext) -> pl.DataFrame:
    """The lowest value and the number of values of the integer key columns of the events."""
    return ctx.events.select(
        *(pl.col(c).min().fill_null(0).alias(f"{c}_low") for c in INTEGER_KEYS),
        *(
            (pl.col(c).max() - pl.col(c).min() + 1).fill_null(1).alias(f"{c}_size")
            for c in INTEGER_KEYS
        ),
    )


def _key_ranges(ctx: GameContext) -> dict[str, int]:
    return ctx.derived("blackjack.key_ranges", build_key_ranges).row(0, named=True)


def hand_id(ctx: GameContext) -> pl.Expr:
    """`hid`: one integer per (rid, seat, hand), the same in every frame of the audit
    (null where seat or hand is), so that hand-level joins and group-bys match one key,
    not three. An id space past 62 bits (absurd seat or hand numbers) falls back to the
    three keys as one struct."""
    ranges = _key_ranges(ctx)
    rid, seat, hand = pl.col("rid"), pl.col("seat"), pl.col("hand")
    if ranges["rid_size"] * ranges["seat_size"] * ranges["hand_size"] >= FITS:
        return pl.when(seat.is_not_null() & hand.is_not_null()).then(pl.struct(HAND)).alias("hid")
    hid = rid - ranges["rid_low"]
    for column, part in (("seat", seat), ("hand", hand)):
        hid = hid * ranges[f"{column}_size"] + (part - ranges[f"{column}_low"])
    return hid.alias("hid")


def order(
    ctx: GameContext, frame: pl.DataFrame, *parts: str | tuple[pl.Expr, int]
) -> list[pl.Expr]:
    """Sort-by expressions that order the rows of `frame` as sorting by `parts` in turn
    would: one integer where the parts fit in 62 bits together (a sort by one integer
    costs a fraction of one by several keys), else the parts themselves. A part is an
    integer column of the events (rid, seat, hand, seq), or (expression, number of
    values) for values 0, 1, ... that are never null. Columns with nulls (which sort
    first) are sorted as they are."""
    ranges = _key_ranges(ctx)
    named = [
        (pl.col(p) - ranges[f"{p}_low"], ranges[f"{p}_size"]) if isinstance(p, str) else p
        for p in parts
    ]
    size = 1
    for _, n in named:
        size *= n
    nulls = any(frame[p].null_count() for p in parts if isinstance(p, str))
    if nulls or size >= FITS:
        return [value for value, _ in named]
    key = named[0][0]
    for value, n in named[1:]:
        key = key * n + value
    return [key]


def in_order(
    ctx: GameContext, frame: pl.DataFrame, *parts: str | tuple[pl.Expr, int]
) -> pl.DataFrame:
    """`frame` sorted by `parts` (stably, as `order` has them), not copied where it already
    is: frames cut from the events often come in the order sought."""
    by = order(ctx, frame, *parts)
    if len(by) == 1 and frame.select(by[0]).to_series().is_sorted():
        return frame
    return frame.sort(by, maintain_order=True)


def per_box(ctx: GameContext, frame: pl.DataFrame, value: pl.Expr) -> pl.Expr:
    """`value` (an aggregation) over each box (rid, seat) of `frame`, on every row. Where
    the frame's hand ids (`hid`) are sorted, each box is a run of rows, numbered by one
    integer marked sorted: the window reads the runs instead of hashing two keys."""
    hid = frame["hid"] if "hid" in frame.columns else None
    if hid is None or hid.dtype != pl.Int64 or hid.null_count() or not hid.is_sorted():
        return value.over("rid", "seat")
    box = (pl.col("hid") // _key_ranges(ctx)["hand_size"]).set_sorted()
    return value.over(box)


def group_by_hand(
    ctx: GameContext, frame: pl.DataFrame, keys: list[str], *aggs: pl.Expr
) -> pl.DataFrame:
    """`frame.group_by(*HAND, *keys).agg(*aggs)`, grouped by the hand id and `keys`: one
    integer in place of three keys. By the hand id alone, the rows are sorted by it first
    and the groups read as runs of rows (in hand order), not hashed. Rows without a seat
    or hand have no id and are grouped by the three keys."""
    rows = frame.with_columns(hand_id(ctx))
    identified = pl.col("hid").is_not_null()
    by_id = rows.filter(identified)
    if not keys and by_id.schema["hid"] == pl.Int64:
        by_id = sorted_by(by_id, "hid")
    by_id = by_id.group_by("hid", *keys).agg(pl.col(HAND).first(), *aggs)
    rest = rows.filter(~identified)
    groups = [by_id.select(*HAND, *keys, pl.exclude(*HAND, *keys, "hid"))]
    if not rest.is_empty():
        groups.append(rest.group_by(*HAND, *keys).agg(*aggs))
    return pl.concat(groups)


def _position_in_round(frame: pl.DataFrame) -> pl.Expr:
    """0, 1, ... over each round's rows in frame order."""
    if frame["rid"].is_sorted():  # each round one run of rows: no window needed
        return runs.position(["rid"]) - 1
    return pl.int_range(pl.len()).over("rid")


def _card_value(ctx: GameContext, cards: pl.Series) -> pl.Expr:
    """`engine.card_value` of `cards`, read off the rank's byte where every code is two
    bytes long (as the format writes them)."""
    values = card_codes.by_rank(ctx.params["card_values"])
    fast = common.rank_byte_values(cards, values)
    return engine.card_value(pl.col(cards.name), ctx.params) if fast is None else fast


def build_cards(ctx: GameContext) -> pl.DataFrame:
    cards = in_rounds(
        ctx, pl.col("event") == "card", *ROUND_COLUMNS, "seq", "target", "seat", "hand", "card"
    )
    return cards.with_columns(
        _card_value(ctx, cards["card"]).alias("value"),
        _position_in_round(cards).alias("k"),
    )


def cards(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.cards", build_cards)


def dealer_rows(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived(
        "blackjack.dealer_rows", lambda c: cards(c).filter(pl.col("target") == "dealer")
    )


def build_dealer(ctx: GameContext) -> pl.DataFrame:
    dealt = dealer_rows(ctx)
    dealer = dealt.group_by("rid", maintain_order=True).agg(
        pl.col("value").alias("dealer_values"),
        pl.col("seq").alias("dealer_seqs"),
    )
    values = pl.col("dealer_values")
    return dealer.with_columns(
        values.list.get(0, null_on_oob=True).alias("up"),
        values.list.get(1, null_on_oob=True).alias("hole"),
        values.list.len().alias("dealer_n_cards"),
        engine.total(values).alias("dealer_total"),
        engine.is_soft(values).alias("dealer_soft"),
        engine.is_blackjack(values).alias("dealer_blackjack"),
    ).with_columns((pl.col("dealer_total") > engine.TWENTY_ONE).alias("dealer_busted"))


def dealer(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.dealer", build_dealer)


def _first_seq(event: str) -> pl.Expr:
    return pl.col("seq").filter(pl.col("event") == event).min()


# the rows whose first seq or presence `rounds` records
MARKS = ["round_start", "no_more_bets", "round_end", "void", "cover_card"]


def _marked() -> list[pl.Expr]:
    """The columns of `rounds` read from the MARKS rows of a round."""
    event = pl.col("event")
    return [
        _first_seq("round_start").alias("start_seq"),
        _first_seq("no_more_bets").alias("no_more_bets_seq"),
        _first_seq("round_end").alias("end_seq"),
        (event == "void").any().alias("void"),
        (event == "cover_card").any().alias("cover_card"),
    ]


def _round_places(ctx: GameContext) -> pl.DataFrame | None:
    """Per round id (in the order of the rounds' first rows): its place and earliest time,
    read off the first row of its run of rows. That holds where each round is one run
    with its times ascending, as the events come; None where not (or a time is missing).
    A round id names one round: its rows are all of a round or none."""
    in_round = pl.col("round") > 0
    if not runs.rising_within(ctx.events, "rid", "time", where=in_round):
        return None
    first = runs.starts(["rid"])
    places = ctx.events.lazy().filter(first & in_round).select(*ROUND_COLUMNS, "time")
    return places.collect(engine="in-memory")


def _per_round(ctx: GameContext) -> pl.DataFrame:
    """One row per round of the events: place, MARKS columns, earliest time. Grouping
    every row of every round costs a pass per column; where the rounds are runs of rows,
    only the few MARKS rows are grouped."""
    places = _round_places(ctx)
    if places is None:
        rows = in_rounds(ctx, pl.lit(True), *ROUND_COLUMNS, "seq", "event", "time")
        return rows.group_by("rid", maintain_order=True).agg(
            pl.col("table_id", "shoe_id", "round").first(), *_marked(), pl.col("time").min()
        )
    marks = in_rounds(ctx, pl.col("event").is_in(MARKS), "rid", "seq", "event")
    marked = marks.group_by("rid").agg(*_marked())
    return places.join(marked, on="rid", how="left", maintain_order="left").select(
        *ROUND_COLUMNS,
        "start_seq",
        "no_more_bets_seq",
        "end_seq",
        pl.col("void", "cover_card").fill_null(False),
        "time",
    )


def build_rounds(ctx: GameContext) -> pl.DataFrame:
    rounds = _per_round(ctx)
    return (
        rounds.join(dealer(ctx), on="rid", how="left")
        .join(ctx.tables, on="table_id", how="left")
    )


def rounds(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.rounds", build_rounds)


def build_actions(ctx: GameContext) -> pl.DataFrame:
    columns = [*ROUND_COLUMNS, "seq", "seat", "hand", "action"]
    return in_rounds(ctx, pl.col("event") == "action", *columns)


def actions(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.actions", build_actions)


def build_wagers(ctx: GameContext) -> pl.DataFrame:
    return in_rounds(ctx, pl.col("event") == "wager", *MONEY_COLUMNS)


def wagers(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.wagers", build_wagers)


def build_settlements(ctx: GameContext) -> pl.DataFrame:
    settled = pl.col("event").is_in(["collect", "pay", "push"])
    return in_rounds(ctx, settled, *MONEY_COLUMNS, "event")


def settlements(ctx: GameContext) -> pl.DataFrame:
    return ctx.derived("blackjack.settlements", build_settlements)
