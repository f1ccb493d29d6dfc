"""Checks of event order: seq, round boundaries and shoes.

These need rows in context (the rows before and after), so they run per table
over the frame sorted by `seq` rather than row by row.
"""

from __future__ import annotations

import polars as pl

from ..series import placed
from . import vocabulary as v
from .problems import PROBLEM_SCHEMA

IN_SEQ_DUPLICATE = "IN010"
IN_SEQ_BACKWARDS = "IN011"
IN_EVENT_AFTER_ROUND_END = "IN012"
IN_ROUND_WITHOUT_SHUFFLE = "IN013"
IN_ROUND_INCOMPLETE = "IN015"
IN_SHOE_BEFORE_LOG = "IN016"
IN_ROUND_BEFORE_LOG = "IN017"
IN_ROUND_AFTER_LOG = "IN018"
IN_SEQ_GAP = "IN019"
# boundary findings that set their round aside (it is not judged, its rows are reported)
# without it having lost a row
BOUNDARY_ROUNDS = (IN_ROUND_BEFORE_LOG, IN_ROUND_AFTER_LOG)
# findings on a row that do not make its round unauditable
NOT_WITHHOLDING = (IN_SHOE_BEFORE_LOG,)

ROUND_KEY = ("table_id", "shoe_id", "round")


def _as_problems(
    frame: pl.DataFrame,
    rule_id: str,
    field: str,
    expected: str,
    message: pl.Expr,
    observed: pl.Expr,
) -> pl.DataFrame:
    return frame.select(
        pl.lit(rule_id).alias("rule_id"),
        pl.col(v.ROW),
        pl.col(v.FILE_ID).cast(pl.Int32),
        pl.col(v.LINE),
        pl.lit(field).alias("field"),
        observed.cast(pl.String).alias("observed"),
        pl.lit(expected).alias("expected"),
        message.alias("message"),
    ).cast(PROBLEM_SCHEMA)


def with_round_ids(ordered: pl.DataFrame) -> pl.DataFrame:
    """Number the rounds of a frame sorted by table and seq: `rid`, one per
    (table_id, shoe_id, round), so later steps group by an integer, not strings.

    A round's rows are normally contiguous; where a row strays into a later
    round's run (an order problem, reported), its runs share one id.
    """
    changed = pl.lit(False)
    for column in ROUND_KEY:
        changed = changed | (pl.col(column) != pl.col(column).shift(1)).fill_null(True)
    # numbered in order, so marked sorted: group-bys by rid (most of the rules') then
    # read runs of rows instead of hashing, several times faster
    rid = changed.cum_sum().cast(pl.Int64).set_sorted()
    ordered = ordered.with_columns(rid.alias("rid"))
    runs = ordered.group_by("rid", maintain_order=True).agg(pl.col(ROUND_KEY).first())
    if runs.select(pl.struct(ROUND_KEY).is_duplicated().any()).item():
        canonical = runs.with_columns(pl.col("rid").min().over(ROUND_KEY).alias("canonical"))
        ordered = (
            ordered.join(canonical.select("rid", "canonical"), on="rid", how="left",
                         maintain_order="left")
            .drop("rid").rename({"canonical": "rid"})
        )
    return ordered


def seq_problems(in_file_order: pl.DataFrame | None, ordered: pl.DataFrame) -> pl.DataFrame:
    """Duplicate `seq` within a table, and `seq` going backwards within a file.

    `ordered` is sorted by table and seq, stably. `in_file_order`: the rows' places in
    file order, or None where no seq goes backwards (each table's seq was seen to rise
    in row order). The row blamed is the one out of place: where a seq falls, the row
    before the fall when it stands above the next two rows while the fallen row is in
    order with the rows around it (a row moved back in the file), else the fallen row;
    of two rows with one seq, the one out of place, else the later in file order.
    """
    if in_file_order is None:
        in_file_order = ordered.select(v.ROW, v.FILE_ID, v.LINE, "table_id", "seq").clear()
    backwards = _out_of_place(in_file_order)
    duplicates = _duplicates(ordered, backwards.get_column(v.ROW))
    return pl.concat(
        [
            _as_problems(
                duplicates, IN_SEQ_DUPLICATE, "seq", "a seq not used before on this table",
                pl.format("seq {} is used twice on table {}.", "seq", "table_id"), pl.col("seq"),
            ),
            _as_problems(
                backwards, IN_SEQ_BACKWARDS, "seq", "a seq in order with the rows around it",
                pl.format("seq {} on table {} {} seq {} in the file: {}.", "seq", "table_id",
                          "where", "other", "why"),
                pl.col("seq"),
            ),
        ]
    )


def _out_of_place(in_file_order: pl.DataFrame) -> pl.DataFrame:
    """The rows (in file order, per file and table) where `seq` goes backwards, each
    with `where`, `other` and `why` for its message."""
    def shifted(column: str, n: int) -> pl.Expr:
        return pl.col(column).shift(n).over(v.FILE_ID, "table_id")

    falls = pl.col("seq") < shifted("seq", 1)
    # a seq the table holds twice (in any file): where a fall is between such a copy and
    # a row of its own, the copy is the one written out of place
    copied = pl.len().over("table_id", "seq") > 1
    # the row before the fall stands above this row and the next (or is the next's
    # seq written early: a duplicate out of place) while this one is in order with the
    # rows around it: that row is out of place (a swap of two rows, or a fall at the
    # file's end, blames the later row, unless only the earlier is a copy)
    above_next = shifted("seq", 1) >= shifted("seq", -1)
    copy_at_end = shifted("_copied", 1) & ~pl.col("_copied") & shifted("seq", -1).is_null()
    spike = (falls & (shifted("seq", 2).is_null() | (shifted("seq", 2) <= pl.col("seq")))
             & (above_next.fill_null(False) | copy_at_end))
    marked = in_file_order.with_columns(copied.alias("_copied")).with_columns(
        falls.fill_null(False).alias("falls"),
        spike.fill_null(False).alias("spike"),
        shifted("seq", 1).alias("before"),
        # the next row's view: does it blame this one, and with which seq
        spike.fill_null(False).shift(-1).over(v.FILE_ID, "table_id").fill_null(False)
        .alias("blamed_by_next"),
        pl.col("seq").shift(-1).over(v.FILE_ID, "table_id").alias("after"),
    )
    dip = marked.filter(pl.col("falls") & ~pl.col("spike")).with_columns(
        pl.lit("follows").alias("where"), pl.col("before").alias("other"),
        pl.lit("it goes backwards").alias("why"))
    moved = marked.filter(pl.col("blamed_by_next")).with_columns(
        pl.lit("comes before").alias("where"), pl.col("after").alias("other"),
        pl.lit("it stands out of order").alias("why"))
    columns = [v.ROW, v.FILE_ID, v.LINE, "table_id", "seq", "where", "other", "why"]
    # one chunk a column: polars' format panics on columns chunked unlike each other
    return pl.concat([dip.select(columns), moved.select(columns)]).sort(v.ROW).rechunk()


def _duplicates(ordered: pl.DataFrame, out_of_place: pl.Series) -> pl.DataFrame:
    """Rows whose table and seq an earlier row holds: of each set, those out of place
    in the file when some but not all are, else all but the first in file order."""
    same = (pl.col("table_id") == pl.col("table_id").shift(1)) & (
        pl.col("seq") == pl.col("seq").shift(1))
    if not ordered.select(same.fill_null(False).any()).item():
        return ordered.clear()
    key = ("table_id", "seq")
    repeated = ordered.filter(pl.len().over(key) > 1)
    misplaced = pl.col(v.ROW).is_in(out_of_place.implode())
    later = pl.int_range(pl.len()).over(key) > 0
    some = misplaced.any().over(key) & ~misplaced.all().over(key)
    return repeated.filter(pl.when(some).then(misplaced).otherwise(later)).rechunk()


def seq_gaps(ordered: pl.DataFrame, gapless: pl.Expr) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Where a table whose system numbers events without gaps (`gapless`, an expression
    over table_id: the house's seq_gapless) skips seq numbers, rows were lost: the rows
    before each gap (their rounds lost rows too: they withhold them, and are not
    reported again), and one problem at the row after each gap.

    `ordered` holds the rows sorted by table and seq."""
    before = pl.col("seq").shift(1)
    same_table = pl.col("table_id") == pl.col("table_id").shift(1)
    after_gap = (same_table & gapless & (pl.col("seq") - before > 1)).fill_null(False)
    marked = ordered.select(v.ROW, after_gap.alias("after"),
                            after_gap.shift(-1).fill_null(False).alias("before"),
                            before.alias("previous"))
    # only the columns the problems read: the frame's others may be one null spread over
    # its rows, which a filter by mask does not take
    rows = ordered.select(v.ROW, v.FILE_ID, v.LINE, "table_id", "seq").with_columns(
        marked.get_column("previous").alias("previous"))
    missing = pl.col("seq") - pl.col("previous") - 1
    # one chunk a column: polars' format panics on columns chunked unlike each other
    after = rows.filter(marked.get_column("after")).rechunk().with_columns(
        missing.cast(pl.String).alias("missing"),
        pl.when(missing == 1).then(pl.lit(" was")).otherwise(pl.lit("s were")).alias("were"),
    )
    problems = _as_problems(
        after, IN_SEQ_GAP, "seq", "the next seq: this table's system numbers without gaps",
        pl.format(
            "Table {} skips from seq {} to seq {}: {} row{} lost (house rules: seq_gapless); "
            "the rounds on either side of the gap are not judged.",
            "table_id", "previous", "seq", "missing", "were",
        ),
        pl.format("seq {} after seq {}", "seq", "previous"),
    )
    lost_before = _as_problems(
        rows.filter(marked.get_column("before")), IN_SEQ_GAP, "seq", "", pl.lit("rows lost "
        "after this row"), pl.col("seq"))
    return lost_before, problems


def _rounds(ordered: pl.DataFrame) -> pl.DataFrame:
    """One row per round id: where it starts, its shoe's shuffle, start/end present."""
    shuffles = (
        ordered.filter(pl.col("event") == "shuffle")
        .group_by("table_id", "shoe_id").agg(pl.col("seq").min().alias("shuffle_seq"))
    )
    return (
        ordered.group_by("rid", maintain_order=True)
        .agg(
            pl.col(ROUND_KEY).first(),
            pl.col("game").first().cast(pl.String),
            pl.col(v.ROW).first(), pl.col(v.FILE_ID).first(), pl.col(v.LINE).first(),
            pl.col("seq").first(),
            (pl.col("event") == "round_start").any().alias("started"),
            # a run of shoe-level rows only (a cover card carrying the round it precedes,
            # where the log ends before that round) is no round in progress
            (~pl.col("event").is_in(v.SHOE_EVENTS)).any().alias("round_level"),
            (pl.col("event") == "round_end").any().alias("ended"),
            pl.col("seq").filter(pl.col("event") == "round_end").min().alias("end_seq"),
        )
        .join(shuffles, on=["table_id", "shoe_id"], how="left", maintain_order="left")
        .with_columns(
            # the table's first and last runs of rows, and the shoe of its first row: where
            # the log was cut (it may begin and end anywhere, hand-history-v1 1.1)
            (pl.col("rid") == pl.col("rid").min().over("table_id")).alias("table_first"),
            (pl.col("rid") == pl.col("rid").max().over("table_id")).alias("table_last"),
            (pl.col("shoe_id") == pl.col("shoe_id").first().over("table_id"))
            .alias("first_shoe"),
        )
    )


def indexed_by_rid(frame: pl.DataFrame, column: str, size: int | None = None) -> pl.Series:
    """`column` of `frame` (at most one row per rid) as a series indexed by the rid itself
    (round ids are small integers), null where `frame` has none; `size` ids (by default
    up to the largest of `frame`). A row then reads its round's value by a gather, not a
    join."""
    frame = frame.filter(pl.col("rid").is_not_null())
    if size is None:
        size = int(frame["rid"].max() or 0) + 1
    return placed(frame[column], frame["rid"], size)


def order_problems(ordered: pl.DataFrame) -> pl.DataFrame:
    """Rows after their round's round_end, rounds with no shuffle, rounds not closed,
    and where the log was cut (boundary_problems).

    `ordered` holds the rows whose keys parsed, sorted by table and seq, with `rid`.
    """
    rounds = _rounds(ordered)
    late = ordered.filter(pl.col("seq") > indexed_by_rid(rounds, "end_seq").gather(ordered["rid"]))
    played = rounds.filter(pl.col("round") > 0)
    # the table's first shoe without a shuffle began before the log, not without one
    unshuffled = played.filter(
        (pl.col("shuffle_seq").is_null() & ~pl.col("first_shoe"))
        | (pl.col("shuffle_seq") > pl.col("seq"))
    )
    before, after = _began_before(), _continues_after()
    incomplete = played.filter(
        (~pl.col("started") | ~pl.col("ended")) & pl.col("round_level") & ~before & ~after
    )
    missing = (
        pl.when(~pl.col("started") & ~pl.col("ended")).then(pl.lit("round_start and round_end"))
        .when(~pl.col("started")).then(pl.lit("round_start"))
        .otherwise(pl.lit("round_end"))
    )
    return pl.concat(
        [
            _as_problems(
                late, IN_EVENT_AFTER_ROUND_END, "seq", "no event of a round after its round_end",
                pl.format("{} event (seq {}) of round {} comes after that round's round_end.",
                          "event", "seq", "round"),
                pl.col("event"),
            ),
            _as_problems(
                unshuffled, IN_ROUND_WITHOUT_SHUFFLE, "shoe_id",
                "a shuffle of the shoe before its rounds",
                pl.format("Round {} of shoe {} has no shuffle before it.", "round", "shoe_id"),
                pl.col("shoe_id"),
            ),
            _as_problems(
                incomplete, IN_ROUND_INCOMPLETE, "event", "a round_start and a round_end",
                pl.format("Round {} of shoe {} lacks its {}.", "round", "shoe_id", missing),
                pl.lit(None, pl.String),
            ),
            boundary_problems(rounds),
        ]
    )


def _began_before() -> pl.Expr:
    """The round in progress where a table's rows begin: its first run of rows, a round
    without its round_start (which was recorded before the log)."""
    return pl.col("table_first") & ~pl.col("started") & pl.col("round_level")


def _continues_after() -> pl.Expr:
    """The round in progress where a table's rows end: its last run, without round_end
    (a cover card or offer, which carries the round it precedes, begins that round's
    rows: the log ends before the rest)."""
    return pl.col("table_last") & ~pl.col("ended")


# What cannot be confirmed of a shoe that began before the log, per game
_SHOE_BEFORE_LOG = {
    "baccarat": "its decks, burn and card count cannot be confirmed, nor what was offered or "
                "marked before its first row; the cover card, curator and marked commission "
                "are judged from what the log records",
    "blackjack": "its decks and card count cannot be confirmed; the cover card is judged "
                 "from what the log records",
}


def boundary_problems(rounds: pl.DataFrame) -> pl.DataFrame:
    """Where a log was cut (hand-history-v1 1.1, "Logs cut at any hour"): one warning
    per shoe that began before the log (at its first row), and one per table for the
    round in progress where its rows begin and where they end (those rounds are set
    aside, not judged). Nothing here is an error: the log cannot show what it lacks."""
    played = rounds.filter(pl.col("round") > 0)
    # the shoe's first run of rows (rounds are numbered in seq order)
    shoes = rounds.filter(pl.col("first_shoe") & pl.col("shuffle_seq").is_null()).unique(
        ["table_id", "shoe_id"], keep="first", maintain_order=True)
    what = pl.col("game").replace_strict(_SHOE_BEFORE_LOG, default="its history cannot be "
                                         "confirmed")
    return pl.concat(
        [
            _as_problems(
                shoes, IN_SHOE_BEFORE_LOG, "shoe_id", "the shoe's shuffle in the log",
                pl.format("Shoe {} of table {} began before this log: {}.",
                          "shoe_id", "table_id", what),
                pl.lit("no shuffle before its first row"),
            ),
            _as_problems(
                played.filter(_began_before()), IN_ROUND_BEFORE_LOG, "event",
                "the round's round_start in the log",
                pl.format("Table {}'s rows begin in round {} of shoe {}, which began before "
                          "this log: the round is not judged.", "table_id", "round", "shoe_id"),
                pl.lit("rows of a round without its round_start"),
            ),
            _as_problems(
                played.filter(_continues_after()), IN_ROUND_AFTER_LOG, "event",
                "the round's round_end in the log",
                pl.format("Table {}'s rows end in round {} of shoe {}, which continues after "
                          "this log: the round is not judged.", "table_id", "round", "shoe_id"),
                pl.lit("rows of a round without its round_end"),
            ),
        ]
    )
