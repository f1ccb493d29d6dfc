"""What the summary and the report keep of the whole log, gathered part by part.

The events themselves are not kept (a day's log is large): only counts per
table, the reported rows and problems, and the rows of the shoes that have a
finding, which the report replays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ..scope import IN_SCOPE, ROUND_IN_SCOPE, Scope, rounds_in_scope, rows_in_scope
from . import cards, folded
from . import vocabulary as v
from .load import IN_COLUMN_MISSING, MISSING_ROWS, ROUND_KEY, Ingested
from .partition import InputFile
from .rows import rows_with_keys
from .schema import IN_FIELD_MISSING

TABLE_STATS = {
    "table_id": pl.String,
    "game": pl.String,
    "rows_placed": pl.Int64,  # rows with their whole place (table, shoe, round, seq, event)
    "rounds_read": pl.Int64,
    "first": pl.Datetime("us"),
    "last": pl.Datetime("us"),
    "rows_audited": pl.Int64,
    "rounds_audited": pl.Int64,
    "wager_rows": pl.Int64,  # wager rows read (none: the table's log records no wagers)
    # rows of the 1.2 irregularity words (none: the log records no irregularities)
    "irregularity_rows": pl.Int64,
    # (1.3) boxes (a round's seat) of audited rounds settled by their net result
    "net_boxes": pl.Int64,
    # (1.3) rows of cards known by value only (some: the log records not every suit), and
    # of those `X*` (some: not every rank)
    "value_only_cards": pl.Int64,
    "rankless_cards": pl.Int64,
}


def _played() -> pl.Expr:
    """Rows that make a round: of round 1 or later, and round-level (a cover card or
    offer carrying the round it precedes is not one by itself)."""
    return (pl.col("round") > 0) & ~pl.col("event").is_in(v.SHOE_EVENTS)


def evidence_rows() -> list[pl.Expr]:
    """Per table (aggregations), the rows that decide evidence its log records
    (coverage.of_log): wagers, the 1.2 irregularity words, cards known by value only and
    of those `X*`. The same over an export's events before any audit (`profile check`)."""
    return [
        (pl.col("event") == "wager").sum().alias("wager_rows"),
        (pl.col("event").is_in(v.EVENTS_1_2) | pl.col("action").is_in(v.ACTIONS_1_2))
        .sum().alias("irregularity_rows"),
        cards.value_only(pl.col("card")).sum().alias("value_only_cards"),
        cards.rank_unknown(pl.col("card")).sum().alias("rankless_cards"),
    ]


def _table_stats(part: Ingested) -> pl.DataFrame:
    """Per table, its audited rows and rounds (not context: a table of the context only
    has none)."""
    scoped = IN_SCOPE in part.events.columns
    row = pl.col(IN_SCOPE) if scoped else pl.lit(True)
    played = pl.col("rid").filter(_played() & (pl.col(ROUND_IN_SCOPE) if scoped else True))
    played = played.n_unique()
    read = part.events.group_by("table_id").agg(
        pl.col("game").drop_nulls().first().cast(pl.String),
        row.sum().alias("rows_placed") if scoped else pl.len().alias("rows_placed"),
        played.alias("rounds_read"),
        pl.col("time").filter(row).min().alias("first"),
        pl.col("time").filter(row).max().alias("last"),
        *evidence_rows(),
    )
    net = (pl.col("event") == v.NET_EVENT) & (pl.col("round") > 0)
    if scoped:
        net = net & pl.col(ROUND_IN_SCOPE)
    audited = part.audited.group_by("table_id").agg(
        row.sum().alias("rows_audited") if scoped else pl.len().alias("rows_audited"),
        played.alias("rounds_audited"),
        # filtered first: a log without nets builds no pairs
        pl.struct(pl.col("rid").filter(net), pl.col("seat").filter(net)).n_unique()
        .alias("net_boxes"),
    )
    if scoped:
        read = read.filter((pl.col("rows_placed") > 0) | (pl.col("rounds_read") > 0))
    return (
        read.join(audited, on="table_id", how="left")
        .with_columns(pl.col("rows_audited", "rounds_audited", "net_boxes").fill_null(0))
        .select(list(TABLE_STATS))
        .cast(TABLE_STATS)
    )


@dataclass
class PartTotals:
    """What is kept of one part."""

    tables: pl.DataFrame  # TABLE_STATS
    unplaced: pl.DataFrame  # UNPLACED: rows without their whole place, counted per table
    problems: pl.DataFrame
    tally: pl.DataFrame  # folded.TALLY: the problems past the first of their kind, counted
    unauditable: pl.DataFrame
    kept: pl.DataFrame  # every row of the shoes with a finding
    rows_withheld: int  # audited rows (not context) of rounds not judged
    rounds_withheld: int  # audited rounds not judged
    rids: int  # round ids the part used (it numbers them from 1)
    file_rows: pl.DataFrame  # (file_id, rows): rows of each file placed or not
    missing_rows: pl.DataFrame  # per file and missing column, the rows that lacked it
    dealt: pl.DataFrame | None = None  # (dealer_id, table_id, rounds): dealers.DEALT


def part_totals(part: Ingested, finding_shoes: pl.DataFrame, scope: Scope,
                dealt: pl.DataFrame | None = None) -> PartTotals:
    """One part's totals, keeping the rows of `finding_shoes` (table_id, shoe_id). Only
    what the audit reports on is counted: context rows and their problems are not.
    `dealt`: the rounds each dealer dealt (None: the part's rows name no dealer)."""
    withheld = rows_with_keys(part.events, part.unauditable, ROUND_KEY)
    both = [f.select(v.FILE_ID) for f in (part.events, part.unplaced)]
    cut = part.cut.filter(scope.file_audited(pl.col(v.FILE_ID)))
    problems, tally = folded.fold(_problems_in_scope(part, scope), _cut_tally(cut))
    return PartTotals(
        tables=_table_stats(part),
        unplaced=_unplaced_counts(rows_in_scope(part.unplaced), cut),
        problems=problems,
        tally=tally,
        unauditable=part.unauditable,
        kept=rows_with_keys(part.events, finding_shoes, ["table_id", "shoe_id"]),
        rows_withheld=rows_in_scope(withheld).height,
        rounds_withheld=rounds_in_scope(withheld).filter(_played())
        .select(ROUND_KEY).n_unique() if withheld.height else 0,
        rids=int(part.events["rid"].max() or 0) + 1,
        file_rows=pl.concat([
            pl.concat(both).group_by(v.FILE_ID).len("rows"),
            part.cut.select(v.FILE_ID, pl.col("rows").cast(pl.get_index_type()))]),
        missing_rows=part.missing_rows,
        dealt=dealt,
    )


# Rows without their whole place, counted per table (null: rows without a table): the
# rows themselves are reported by their problems, and need not be held
UNPLACED = {"table_id": pl.String, "game": pl.String, "rows": pl.Int64}


def _unplaced_counts(rows: pl.DataFrame, cut: pl.DataFrame) -> pl.DataFrame:
    """Per table, the rows without their whole place; the rows without a table counted
    and not held (`cut`) among those without one."""
    counted = (rows.group_by("table_id", maintain_order=True)
               .agg(pl.col("game").first().cast(pl.String), pl.len().alias("rows"))
               .cast(UNPLACED).select(list(UNPLACED)))
    if cut.is_empty():
        return counted
    without = pl.DataFrame({"table_id": [None], "game": [None], "rows": [cut["rows"].sum()]},
                           schema=UNPLACED)
    return (pl.concat([counted, without]).group_by("table_id", maintain_order=True)
            .agg(pl.col("game").first(), pl.col("rows").sum()))


def _cut_tally(cut: pl.DataFrame) -> pl.DataFrame:
    """The rows without a table counted and not held, as problems counted (folded): said
    once per file."""
    return cut.select(
        pl.col(v.FILE_ID), pl.lit(IN_FIELD_MISSING).alias("rule_id"),
        pl.lit("table_id").alias("field"),
        pl.lit("a `table_id` value on every row").alias("expected"),
        "rows", "first_line", "last_line",
    ).cast(folded.TALLY)


def _problems_in_scope(part: Ingested, scope: Scope) -> pl.DataFrame:
    """The problems of audited rows (a problem of a record that could not be placed goes
    by its file)."""
    if scope.whole:
        return part.problems
    named = part.problems.get_column(v.ROW).drop_nulls().implode()
    member = pl.concat(
        [f.select(v.ROW, IN_SCOPE).filter(pl.col(v.ROW).is_in(named))
         for f in (part.events, part.unplaced)]
    ).unique(v.ROW)
    return (
        part.problems.join(member, on=v.ROW, how="left", maintain_order="left")
        .filter(pl.coalesce(IN_SCOPE, scope.file_audited(pl.col(v.FILE_ID))))
        .drop(IN_SCOPE)
    )


@dataclass
class LogTotals:
    files: list[InputFile]
    tables: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TABLE_STATS))
    # rows without their whole place, counted per table (UNPLACED); each is reported
    unplaced: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=UNPLACED))
    problems: pl.DataFrame | None = None  # located problems of the input
    # the problems past the first of their kind in a file, counted (folded.TALLY)
    tally: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=folded.TALLY))
    unauditable: pl.DataFrame | None = None  # (table_id, shoe_id, round) that lost a row
    kept: pl.DataFrame | None = None  # every row of the shoes with a finding
    rows_withheld: int = 0  # audited rows of rounds not judged
    rounds_withheld: int = 0  # audited rounds not judged
    scope: Scope = field(default_factory=Scope)
    missing_rows: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=MISSING_ROWS))
    # rounds dealt per dealer and table (dealer_id, table_id, rounds), of the parts whose
    # rows name dealers
    dealt: list[pl.DataFrame] = field(default_factory=list)
    _rids: int = 0  # round ids used by the parts so far
    _file_rows: dict[int, int] = field(default_factory=dict)  # rows placed or not, per file

    def add(self, piece: PartTotals) -> None:
        self.rows_withheld += piece.rows_withheld
        self.rounds_withheld += piece.rounds_withheld
        self.missing_rows = pl.concat([self.missing_rows, piece.missing_rows])
        if piece.dealt is not None:
            self.dealt.append(piece.dealt)
        for file_id, rows in piece.file_rows.iter_rows():
            self._file_rows[file_id] = self._file_rows.get(file_id, 0) + rows
        self.tables = pl.concat([self.tables, piece.tables])
        self.unplaced = (pl.concat([self.unplaced, piece.unplaced])
                         .group_by("table_id", maintain_order=True)
                         .agg(pl.col("game").first(), pl.col("rows").sum()))
        self.problems, self.tally = folded.fold(_stack(self.problems, piece.problems),
                                                pl.concat([self.tally, piece.tally]))
        self.unauditable = _stack(self.unauditable, piece.unauditable)
        # round ids stay unique over the parts: the replays group by them
        kept = piece.kept.with_columns(pl.col("rid") + self._rids)
        self._rids += piece.rids
        self.kept = _stack(self.kept, kept)

    @property
    def records_lost(self) -> int:
        """Records of the audited files that could not be read into a row."""
        context = set(self.scope.context_files)
        return sum(f.rows - self._file_rows.get(n, 0)
                   for n, f in enumerate(self.files) if n not in context)

    @property
    def rows_read(self) -> int:
        """Rows the audit reports on: of the audited files (and window), not context."""
        return self.rows_placed + self.rows_unplaced + self.records_lost

    @property
    def rows_unplaced(self) -> int:
        return int(self.unplaced["rows"].sum())

    @property
    def rows_placed(self) -> int:
        return int(self.tables["rows_placed"].sum())

    @property
    def rows_audited(self) -> int:
        return int(self.tables["rows_audited"].sum())

    @property
    def rounds_read(self) -> int:
        return int(self.tables["rounds_read"].sum())

    @property
    def kept_audited(self) -> pl.DataFrame:
        """The kept rows of rounds that can be judged."""
        return self.kept.join(self.unauditable, on=ROUND_KEY, how="anti", maintain_order="left")


def _stack(held: pl.DataFrame | None, more: pl.DataFrame) -> pl.DataFrame:
    if held is None:
        return more
    return pl.concat([held, more], how="diagonal_relaxed")


def problems_deduplicated(problems: pl.DataFrame, missing_rows: pl.DataFrame) -> pl.DataFrame:
    """A missing column is reported by every part that reads its file: once is enough,
    with the rows of every part that lacked it counted (`missing_rows`)."""
    column = pl.col("rule_id") == IN_COLUMN_MISSING
    once = problems.filter(column).unique([v.FILE_ID, "field"], keep="first", maintain_order=True)
    counted = missing_rows.group_by(v.FILE_ID, "field").agg(
        pl.col("rows").sum(), pl.col("first_line").min(), pl.col("last_line").max())
    once = (
        once.join(counted, on=[v.FILE_ID, "field"], how="left", maintain_order="left")
        .with_columns(pl.coalesce(_counted_message(), "message").alias("message"))
        .drop("rows", "first_line", "last_line")
    )
    return pl.concat([problems.filter(~column), once])


def _counted_message() -> pl.Expr:
    """"The file has no `ts` column: 3998 rows (lines 2 to 3999) lack it; ..." where
    rows lacked it (null otherwise)."""
    one = pl.col("rows") == 1
    unneeded = pl.col("field").is_in(v.NOT_NEEDED_FOR_REPLAY)
    where = pl.when(one).then(pl.format("1 row (line {})", "first_line")).otherwise(
        pl.format("{} rows (lines {} to {})", "rows", "first_line", "last_line"))
    verb = pl.when(unneeded).then(pl.lit("lack")).otherwise(pl.lit("need"))
    verb = pl.when(one).then(verb + pl.lit("s")).otherwise(verb)
    rounds = pl.when(one).then(pl.lit("its round")).otherwise(pl.lit("their rounds"))
    outcome = (pl.when(unneeded & (pl.col("field") == "ts")).then(pl.lit(" judged, with no time"))
               .when(unneeded).then(pl.lit(" judged")).otherwise(pl.lit(" not judged")))
    return pl.format("The file has no `{}` column: {} {} it; {} {}.", "field", where, verb,
                     rounds, pl.when(one).then(pl.lit("is")).otherwise(pl.lit("are"))
                     + outcome)
