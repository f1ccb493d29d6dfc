"""From a layout's rows to the format's events (export-profiles-v1, "Layouts").

Every frame here holds the format's columns as text, the export row's `line`, `_file`
(the file it came from), `_row` (its place in that file) and `_instant` (its time, for
ordering files and joining wagers). Events made from a coups or wagers row get a place
in the round, `_slot` and `_sub`: a table's events are numbered in the order of its
rows, then of those places.
"""

from __future__ import annotations

import polars as pl

from ..ingest import vocabulary as v

# The order of a round's events made from coups and wagers rows
SHUFFLE, ROUND_START, WAGER, CARD, RESULT, SETTLEMENT, ROUND_END = 0, 1, 2, 3, 4, 5, 6
SETTLEMENTS = ("collect", "pay", "push")  # a row with several: collect, then pay, then push
FILE, ROW, INSTANT, SLOT, SUB = "_file", "_row", "_instant", "_slot", "_sub"
TABLE_ORDER = "_order"  # a table's rows in order: its files, then the rows of each


def _text(value) -> pl.Expr:
    return pl.lit(value, pl.String)


def file_order(rows: pl.DataFrame, paths: list[str]) -> pl.DataFrame:
    """`_order` for each row: a table's files in the order of the earliest valid time of
    its rows in each (then their paths, byte order; files without one last), and each
    file's rows in its own order."""
    names = pl.DataFrame({FILE: list(range(len(paths))), "_path": paths},
                         schema={FILE: pl.Int32, "_path": pl.String})
    first = (rows.group_by("table_id", FILE).agg(pl.col(INSTANT).min().alias("_first"))
             .join(names, on=FILE, how="left")
             .with_columns(pl.col("_path").cast(pl.Binary))
             .sort("table_id", "_first", "_path", nulls_last=True)
             .with_columns(pl.int_range(pl.len()).over("table_id").alias("_rank"))
             .select("table_id", FILE, "_rank"))
    return (rows.join(first, on=["table_id", FILE], how="left", nulls_equal=True)
            .with_columns((pl.col("_rank").cast(pl.Int64) * (1 << 40) + pl.col(ROW))
                          .alias(TABLE_ORDER))
            .drop("_rank"))


# --- events: one row per event


def same_key(key: tuple[str, ...]) -> pl.Expr:
    """Rows whose non-empty `repeat_key` equals the row's before them, of the same file
    and table (a frame sent again, where every mapped cell is equal too)."""
    return pl.all_horizontal(
        [pl.col(k).is_not_null() & (pl.col(k) == pl.col(k).shift(1).over(FILE, "table_id"))
         for k in key]).fill_null(False)


def numbered_events(rows: pl.DataFrame) -> pl.DataFrame:
    """An events source's rows (in table order) numbered 1, 2, ... per table."""
    return rows.with_columns(
        (pl.int_range(pl.len()).over("table_id") + 1).cast(pl.String).alias("seq"))


def clock(rows: pl.DataFrame) -> pl.Expr:
    """`ts` as a wall-clock time: the times themselves, or text read as the format reads
    it (null where it is not a time)."""
    if rows.schema.get("ts") == pl.String or "ts" not in rows.columns:
        text = pl.col("ts") if "ts" in rows.columns else pl.lit(None, pl.String)
        return text.str.slice(0, 19).str.replace(" ", "T", literal=True).str.to_datetime(
            "%Y-%m-%dT%H:%M:%S", strict=False)
    return pl.col("ts").cast(pl.Datetime("us"))


def derived_shoes(rows: pl.DataFrame) -> pl.DataFrame:
    """`shoe_id` where not mapped (rows in table order): a shoe begins at each shuffle
    (the rows before a table's first shuffle are a shoe begun before the log), named by
    the table and the shuffle's time, `-2`, `-3`, ... where two would be equal; (1.1) a
    shuffle without a time by the table's count of shuffles, from 1."""
    shuffle = (pl.col("event") == "shuffle").fill_null(False)
    number = shuffle.cast(pl.Int64).cum_sum().over("table_id")
    stamp = clock(rows).dt.strftime("%Y%m%dT%H%M%S")
    named = pl.when(number == 0).then(_text("start")).otherwise(
        pl.coalesce(stamp, number.cast(pl.String)))
    rows = rows.with_columns(number.alias("_shoe"), named.alias("_name"))
    shoes = (rows.group_by("table_id", "_shoe").agg(pl.col("_name").first())
             .sort("table_id", "_shoe")
             .with_columns(pl.int_range(pl.len()).over("table_id", "_name").alias("_again"))
             .with_columns(pl.format("{}@{}", "table_id", "_name").alias("_id"))
             .with_columns(pl.when(pl.col("_again") > 0)
                           .then(pl.format("{}-{}", "_id", pl.col("_again") + 1))
                           .otherwise("_id").alias("shoe_id"))
             .select("table_id", "_shoe", "shoe_id"))
    return (rows.drop("shoe_id").join(shoes, on=["table_id", "_shoe"], how="left",
                                      maintain_order="left", nulls_equal=True)
            .drop("_shoe", "_name"))


def derived_rounds(rows: pl.DataFrame) -> pl.DataFrame:
    """`round` where not mapped (rows in table order): numbered from each shoe's
    round_start events, from 1. A row from a round's round_start to its round_end
    (without one: to the next round_start) carries its number; any other row the
    number of the next round_start in its shoe (0 before the first round)."""
    group = ["table_id", "shoe_id"]
    start = (pl.col("event") == "round_start").fill_null(False)
    end = (pl.col("event") == "round_end").fill_null(False)
    started = start.cast(pl.Int64).cum_sum().over(group)
    boundary = pl.when(start).then(_text("start")).when(end).then(_text("end"))
    last = boundary.shift(1).forward_fill().over(group)
    inside = start | ((started > 0) & (last == "start").fill_null(False))
    number = pl.when(inside).then(started).when(started == 0).then(0).otherwise(started + 1)
    return rows.with_columns(number.cast(pl.String).alias("round"))


# --- coups: one row per round


def coup_events(coups: pl.DataFrame, player: list[str], banker: list[str],
                has_result: bool, shoe_starts: bool) -> pl.DataFrame:
    """A baccarat coups source's rows (in table order, with `_decks` where shoe_starts
    says so) as events: the shuffle a new shoe begins with, round_start, the cards in
    the order of (f)(5) and (f)(8), the result, round_end."""
    keep = ["table_id", "game", "shoe_id", "round", v.LINE, FILE, ROW, INSTANT,
            TABLE_ORDER]
    base = coups.select(*keep, "ts")
    made = [base.with_columns(_text("round_start").alias("event"), pl.lit(ROUND_START).alias(SLOT),
                              coups["dealer_id"] if "dealer_id" in coups.columns
                              else _text(None).alias("dealer_id"))]
    if shoe_starts:
        made.append(coups.filter("_new_shoe").select(*keep, "ts", "_decks").with_columns(
            _text("shuffle").alias("event"), _text("0").alias("round"),
            pl.col("_decks").alias("decks"), pl.lit(SHUFFLE).alias(SLOT)).drop("_decks"))
    # player 1, banker 1, player 2, banker 2, then the player's third, then the banker's
    dealt = [(h, n) for n in range(2) for h in ("player", "banker")]
    dealt += [("player", n) for n in range(2, len(player))]
    dealt += [("banker", n) for n in range(2, len(banker))]
    for place, (hand, n) in enumerate(dealt):
        column = (player if hand == "player" else banker)[n] if n < len(
            player if hand == "player" else banker) else None
        if column is None:
            continue
        made.append(coups.filter(pl.col(column).is_not_null()).select(
            *keep, "ts", _text("card").alias("event"), _text(hand).alias("target"),
            pl.col(column).alias("card"), pl.lit(CARD).alias(SLOT),
            pl.lit(place).alias(SUB)))
    if has_result:
        # a coup whose result cells are all empty records no result (a void coup)
        result = [pl.col(c) if c in coups.columns else _text(None).alias(c)
                  for c in ("winner", "player_points", "banker_points")]
        made.append(coups.filter(pl.any_horizontal(r.is_not_null() for r in result)).select(
            *keep, "ts", _text("result").alias("event"), *result,
            pl.lit(RESULT).alias(SLOT)))
    end = pl.coalesce("end_ts", "ts") if "end_ts" in coups.columns else pl.col("ts")
    made.append(coups.select(*keep, end.alias("ts"), _text("round_end").alias("event"),
                             pl.lit(ROUND_END).alias(SLOT)))
    return pl.concat(made, how="diagonal_relaxed")


def new_shoes(coups: pl.DataFrame, derived: bool = False) -> pl.Expr:
    """A coups row that begins a shoe: its shoe_id differs from the table's previous
    row; the table's first row where its round is 1 (`derived`: the rounds are numbered
    from the rows, and a derived round 1 is no evidence that the shoe began in the log)."""
    before = pl.col("shoe_id").shift(1).over("table_id")
    first = before.is_null() & (pl.col(TABLE_ORDER) == pl.col(TABLE_ORDER).min().over(
        "table_id"))
    began = pl.lit(False) if derived else pl.col("round").str.strip_chars("0 ") == "1"
    return pl.when(first).then(began).otherwise(pl.col("shoe_id") != before).fill_null(False)


# --- wagers: one row per wager and its settlement


def order_values(cell: pl.Expr) -> pl.Expr:
    """A `settle_order` or `vig_order` cell as a number to order by: the number, or a
    timestamp's microseconds."""
    number = cell.cast(pl.Float64, strict=False)
    stamp = (cell.str.replace(r"^(\d{4}-\d\d-\d\d) ", "${1}T")
             .str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False)
             .dt.epoch("us").cast(pl.Float64))
    return pl.coalesce(number, stamp)


def wager_events(wagers: pl.DataFrame, has_vig_order: bool) -> pl.DataFrame:
    """Joined wagers rows (each with its round's table_id, shoe_id, round, game and
    `_order`) as events: the wager before the cards; after the result each settlement,
    in `settle_order`, commission in `vig_order` (or after the row's settlement); (1.1)
    a net result (`net`) as one settle_net after the result."""
    keep = ["table_id", "game", "shoe_id", "round", v.LINE, FILE, ROW, TABLE_ORDER, "ts"]
    wagers = wagers.with_columns(
        order_values(pl.col("settle_order")).alias("_settle"),
        order_values(pl.col("vig_order")).alias("_vig_at") if has_vig_order
        else pl.lit(None, pl.Float64).alias("_vig_at"))
    player = ["player_id"] if "player_id" in wagers.columns else []
    hand = ["hand"] if "hand" in wagers.columns else []
    # a row without a stake records settlements only (no wager was placed)
    made = [wagers.filter(pl.col("amount").is_not_null()).select(
        *keep, _text("wager").alias("event"), "seat", "bet", "amount", *hand, *player,
        pl.lit(WAGER).alias(SLOT), pl.col(ROW).cast(pl.Float64).alias(SUB))]
    for kind, name in enumerate(SETTLEMENTS):
        if name not in wagers.columns:
            continue
        made.append(wagers.filter(settled_cell(name)).select(
            *keep, _text(name).alias("event"), "seat", "bet", pl.col(name).alias("amount"),
            *hand, *player, pl.lit(SETTLEMENT).alias(SLOT), pl.col("_settle").alias(SUB),
            pl.lit(kind).alias("_kind")))
    if "vig" in wagers.columns:
        made.append(wagers.filter(settled_cell("vig")).select(
            *keep, _text("vig").alias("event"), "seat", pl.col("vig").alias("amount"),
            pl.col("vig_mode").alias("mode"), *player, pl.lit(SETTLEMENT).alias(SLOT),
            pl.coalesce("_vig_at", "_settle").alias(SUB), pl.lit(len(SETTLEMENTS)).alias(
                "_kind")))
    if "net" in wagers.columns:  # (1.1) the wager's net result: one settle_net (1.3)
        made.append(wagers.filter(pl.col("net").is_not_null()).select(
            *keep, _text(v.NET_EVENT).alias("event"), "seat", "bet",
            pl.col("net").alias("amount"), *hand, *player, pl.lit(SETTLEMENT).alias(SLOT),
            pl.col("_settle").alias(SUB)))
    return pl.concat(made, how="diagonal_relaxed")


def settled_cell(column: str) -> pl.Expr:
    """A settlement cell: an amount other than 0 (0 is no settlement, as an empty cell)."""
    cell = pl.col(column)
    return cell.is_not_null() & (cell.cast(pl.Float64, strict=False) != 0).fill_null(True)


def numbered_made(events: pl.DataFrame) -> pl.DataFrame:
    """Events made from coups and wagers rows, numbered per table: by the row's order,
    its place in the round, then the place within it (settle_order, the export row)."""
    for name, dtype in ((SUB, pl.Float64), ("_kind", pl.Int64)):
        if name not in events.columns:
            events = events.with_columns(pl.lit(None, dtype).alias(name))
    events = events.sort("table_id", TABLE_ORDER, SLOT, SUB, ROW, "_kind", nulls_last=True)
    return events.with_columns(
        (pl.int_range(pl.len()).over("table_id") + 1).cast(pl.String).alias("seq"))
