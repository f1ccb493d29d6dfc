"""From LOG arguments to the events to audit and the problems of the input.

Every row read ends in exactly one of two places: a round that is audited, or
the report (a bad row, or a row of a round that lost a row and so cannot be
judged on partial data).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ..scope import IN_SCOPE
from ..series import stable_order_by_code
from . import compact, nets, schema, sequence, untabled
from . import vocabulary as v
from .parse import CANONICAL_SCHEMA, typed
from .partition import InputFile, Log, open_log
from .problems import PROBLEM_SCHEMA, problems_frame
from .sources import Source

__all__ = ["Ingested", "ingest", "ingest_part"]

ROUND_KEY = list(sequence.ROUND_KEY)
KEY_COLUMNS = ["table_id", "shoe_id", "round", "seq", "event"]


@dataclass
class Ingested:
    """One part of the log (or all of it), read and checked."""

    files: list[InputFile]
    events: pl.DataFrame  # every row whose place parsed, typed, sorted by table and seq, with rid
    unplaced: pl.DataFrame  # rows without a table, shoe, round, seq or event (each reported)
    problems: pl.DataFrame  # one per bad field of a row, located (table/shoe/round/seq)
    unauditable: pl.DataFrame  # (table_id, shoe_id, round) of rounds that lost a row
    audited: pl.DataFrame  # the rows of auditable rounds, sorted by table and seq
    orphans: pl.DataFrame  # rows whose round is not known, where they are (ingest_part)
    # per file and missing column, the rows that lacked it: (file_id, field, rows,
    # first_line, last_line); one finding for them all (IN003), not one a row
    missing_rows: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema=MISSING_ROWS))
    # (table_id, shoe_id, round) of rounds withheld for a reason said once already (the
    # log's cut, a missing column): they get no warning of their own (IN014)
    said_once: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema={"table_id": pl.String, "shoe_id": pl.String, "round": pl.Int64}))
    # per file, its rows without a table counted and not held (untabled): (file_id, rows,
    # first_line, last_line); the first part's
    cut: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=CUT))

    @property
    def rows_read(self) -> int:
        """Records of every file (a part's files are the log's)."""
        return sum(f.rows for f in self.files)


IN_COLUMN_MISSING = "IN003"
# The prefix of the rules of exports read through a profile (auditor.rules.exports)
EXPORT_RULES = "EX"
CUT = {v.FILE_ID: pl.Int32, "rows": pl.Int64, "first_line": pl.Int64, "last_line": pl.Int64}
MISSING_ROWS = {v.FILE_ID: pl.Int32, "field": pl.String, "rows": pl.Int64,
                "first_line": pl.Int64, "last_line": pl.Int64}


@dataclass(frozen=True)
class MissingColumn:
    file_id: int
    column: str
    line: int | None  # the header line, where the file has one


def _read_part(
    log: Log, tables: list[str] | None, first: bool, row_offset: int
) -> tuple[list[pl.DataFrame], list[pl.DataFrame], list[MissingColumn]]:
    """Every file's rows of the part, typed, each numbered (ROW) from `row_offset` on
    in file order, file after file."""
    frames, problems, missing = [], [], []
    for file_id, raw in log.parts(tables, first):
        missing += [MissingColumn(file_id, c, raw.header_line) for c in raw.missing]
        frame, unparsed = raw.typed or typed(raw.frame, file_id)
        del raw.frame, raw.typed  # the untyped copy is not kept
        frames.append(_numbered(frame, row_offset).with_columns(
            pl.lit(file_id, pl.Int32).alias(v.FILE_ID)))
        row_offset += frame.height
        problems += [problems_frame(raw.problems, file_id), unparsed]
    return frames, problems, missing


def _numbered(frame: pl.DataFrame, offset: int) -> pl.DataFrame:
    """ROW for each row: `offset` on, in file order (a held file's rows come in table
    order, each with its place in file order)."""
    if compact.RANK not in frame.columns:
        return frame.with_row_index(v.ROW, offset=offset).with_columns(
            pl.col(v.ROW).cast(pl.Int64))
    row = (pl.col(compact.RANK) + offset).alias(v.ROW)
    return frame.select(row, pl.exclude(compact.RANK))


def _fold_missing_columns(missing: list[MissingColumn],
                          problems: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The row problems split in two: the rows that lack a field because their file has
    no such column (one finding says it for them all: IN003), and the others."""
    if not missing:
        return problems.clear(), problems
    absent = pl.DataFrame([(m.file_id, m.column) for m in missing], orient="row",
                          schema={v.FILE_ID: pl.Int32, "field": pl.String})
    is_absent = (pl.col("rule_id") == schema.IN_FIELD_MISSING) & pl.struct(
        pl.col(v.FILE_ID).cast(pl.Int32), "field").is_in(absent.to_struct().implode())
    return problems.filter(is_absent), problems.filter(~is_absent)


def _untimed(events: pl.DataFrame, read: list[pl.DataFrame]) -> bool:
    """Whether no row of the part has a time, nor a ts that is not one (`read`: the
    problems of typing the rows): every table of it is read without times, and
    _clockless would drop every missing ts (a part of exports with no clock)."""
    if not events.height or events.get_column("time").null_count() < events.height:
        return False
    return not any(f.height and f.filter(pl.col("field") == "ts").height for f in read)


def _clockless(events: pl.DataFrame, row_problems: pl.DataFrame,
               read: list[pl.DataFrame]) -> pl.DataFrame:
    """(1.3, No clock) The row problems without a missing ts on the rows of a table whose
    rows all lack ts (none has a time, nor a ts that is not one: `read`, the problems of
    typing them): such a table is read without times. A table with some rows timed and
    others not is judged as before."""
    lacking = (pl.col("rule_id") == schema.IN_FIELD_MISSING) & (pl.col("field") == "ts")
    if not row_problems.select(lacking.any()).item():
        return row_problems
    bad = pl.concat(read, how="diagonal_relaxed").filter(pl.col("field") == "ts").select(
        pl.col(v.FILE_ID).cast(pl.Int32), pl.col(v.LINE).cast(pl.Int64))
    timed = pl.concat([
        events.filter(pl.col("time").is_not_null()).select("table_id"),
        events.join(bad, on=[v.FILE_ID, v.LINE], how="semi").select("table_id")]).unique()
    untimed = events.select(v.ROW, "table_id").join(timed, on="table_id", how="anti",
                                                     nulls_equal=True)
    return row_problems.filter(~(lacking & pl.col(v.ROW).is_in(untimed[v.ROW].implode())))


def _missing_column_problems(missing: list[MissingColumn], folded: pl.DataFrame) -> pl.DataFrame:
    """A missing column is reported when it is one every row needs, or when some row
    of the file needed it (`folded`: those rows); a column no row uses loses nothing."""
    needed = set(folded.select(v.FILE_ID, "field").unique().iter_rows())
    rows = [
        {
            "rule_id": IN_COLUMN_MISSING,
            "row": None,
            "file_id": m.file_id,
            "line": m.line,
            "field": m.column,
            "observed": None,
            "expected": f"a `{m.column}` column",
            "message": f"The file has no `{m.column}` column; rows that need it cannot be "
                       "audited.",
        }
        for m in missing
        if m.column in v.REQUIRED_COLUMNS or (m.file_id, m.column) in needed
    ]
    return pl.DataFrame(rows, schema=PROBLEM_SCHEMA)


PLACE = [v.ROW, v.FILE_ID, v.LINE, "table_id", "game", "shoe_id", "round", "seq"]
# findings on a row that do not make its round unauditable
NOT_WITHHOLDING = (*sequence.NOT_WITHHOLDING, *nets.NOT_WITHHOLDING)


def ingest(sources: list[Source], baccarat_seats: tuple[int, ...] | None = None) -> Ingested:
    """The whole log in one part."""
    return ingest_part(open_log(sources), None, baccarat_seats)


def ingest_part(
    log: Log,
    tables: list[str] | None,
    baccarat_seats: tuple[int, ...] | None = None,
    first: bool = True,
    row_offset: int = 0,
    orphans_elsewhere: pl.DataFrame | None = None,
    gapless: pl.Expr | None = None,
) -> Ingested:
    """The rows of `tables` (None: all) from every file, typed, validated, sorted and
    checked for order. Row numbers start at `row_offset` (unique over the parts).
    `orphans_elsewhere`: the first part's rows whose round is not known (they withhold
    rounds around them, which may be in this part's tables). `gapless`: which tables'
    systems number events without gaps (an expression over table_id)."""
    frames, problems, missing = _read_part(log, tables, first, row_offset)
    empty = pl.DataFrame(schema={v.ROW: pl.Int64, **CANONICAL_SCHEMA, v.FILE_ID: pl.Int32})
    events = pl.concat([empty, *frames], how="diagonal_relaxed")
    del frames
    # the tables' codes, where the rows came with them (a held file's), for the sort
    codes = events.get_column(compact.TABLE_CODE) if compact.TABLE_CODE in events else None
    events = events.drop(compact.TABLE_CODE, strict=False)
    checks = schema.row_checks(baccarat_seats)
    if _untimed(events, problems):  # (1.3) every ts it lacks would be dropped: not checked
        checks = [c for c in checks
                  if not (c.rule_id == schema.IN_FIELD_MISSING and c.field == "ts")]
    row_problems = schema.validate(events, checks)
    row_problems = _clockless(events, row_problems, problems)
    folded, row_problems = _fold_missing_columns(missing, row_problems)
    # (1.3) a file's missing ts column is said where a row of a timed table lacks it
    missing = [m for m in missing if m.column != "ts" or folded.filter(
        (pl.col(v.FILE_ID) == m.file_id) & (pl.col("field") == "ts")).height]
    problems += [_missing_column_problems(missing, folded), row_problems]
    keyed = pl.all_horizontal(pl.col(KEY_COLUMNS).is_not_null())
    unplaced = events.filter(~keyed)
    if unplaced.height:
        events = events.filter(keyed)
        codes = None
    order, rising = _table_seq_order(events, codes)
    # where each table's seq rises in row order, no seq goes backwards in any file
    in_file_order = None if rising else events.select(v.ROW, v.FILE_ID, v.LINE, "table_id", "seq")
    # one stable sort by table and seq: every order check and every game rule reads it;
    # the sort takes the only reference to the unsorted frame, so it can release it
    holder = [events]
    del events
    # sorted by table (by code, in the tables' text order): flagged, so that group-bys
    # and joins by table read runs of rows instead of hashing text
    ordered = _sorted_releasing(holder, order).with_columns(pl.col("table_id").set_sorted())
    ordered = sequence.with_round_ids(ordered)
    if not log.scope.whole:
        ordered = ordered.with_columns(*log.scope.rows(ordered))
        unplaced = unplaced.with_columns(log.scope.own().alias(IN_SCOPE))
    problems.append(sequence.seq_problems(in_file_order, ordered))
    problems.append(sequence.order_problems(ordered))
    problems.append(nets.net_problems(ordered))
    before_gaps = folded.clear()
    if gapless is not None:
        before_gaps, gaps = sequence.seq_gaps(ordered, gapless)
        problems.append(gaps)
    places = pl.concat([f.select(PLACE) for f in (ordered, unplaced)])
    located = _locate(pl.concat(problems), places)
    if log.shoes_unrecorded:
        located = located.filter(~((pl.col("rule_id") == sequence.IN_ROUND_WITHOUT_SHUFFLE)
                                   & pl.col("table_id").is_in(list(log.shoes_unrecorded))))
    # withheld as a bad row's, not reported again: rows lacking a column their file does
    # not have (reported once per column), the rows before a gap in gapless seq, the
    # rows without a table counted and not held (reported once per file)
    cuts = log.cuts() if first else []
    lacking, before_gaps, cut_lines = (
        _locate(f, places) if f.height else located.clear()
        for f in (folded, before_gaps, _cut_lines(cuts)))
    withheld = [located, lacking, before_gaps, cut_lines]
    others = [] if tables is None else _tables_of_other_parts(log, tables)
    unauditable, orphans = _unauditable_rounds(pl.concat(withheld), places,
                                               orphans_elsewhere, others)
    audited = ordered
    if unauditable.height:
        audited = ordered.join(unauditable, on=ROUND_KEY, how="anti", maintain_order="left")
        # rows kept in order: still sorted
        audited = audited.with_columns(pl.col("table_id").set_sorted())
        if ordered["rid"].flags["SORTED_ASC"]:
            audited = audited.with_columns(pl.col("rid").set_sorted())
    return Ingested(log.files, ordered, unplaced, located, unauditable, audited, orphans,
                    _missing_rows(lacking), _said_once(located, lacking), _cut_counts(cuts))


def _cut_lines(cuts: list[tuple[int, untabled.Cut]]) -> pl.DataFrame:
    """The rows without a table that were counted and not held, as lost rows for the
    rounds around them: the first and last line of each run of them withhold what every
    line of it would (untabled)."""
    ends = [cut.runs.select(pl.lit(file_id, pl.Int32).alias(v.FILE_ID),
                            pl.concat_list(v.LINE, "last").alias(v.LINE))
            for file_id, cut in cuts]
    if not ends:
        return pl.DataFrame(schema=PROBLEM_SCHEMA)
    return pl.concat(ends).explode(v.LINE).unique(maintain_order=True).select(
        pl.lit(schema.IN_FIELD_MISSING).alias("rule_id"), pl.lit(None, pl.Int64).alias(v.ROW),
        v.FILE_ID, v.LINE, pl.lit("table_id").alias("field"),
        pl.lit(None, pl.String).alias("observed"), pl.lit(None, pl.String).alias("expected"),
        pl.lit(None, pl.String).alias("message"),
    ).cast(PROBLEM_SCHEMA)


def _cut_counts(cuts: list[tuple[int, untabled.Cut]]) -> pl.DataFrame:
    return pl.DataFrame([(n, c.rows, c.first_line, c.last_line) for n, c in cuts],
                        schema=CUT, orient="row")


def _said_once(located: pl.DataFrame, lacking: pl.DataFrame) -> pl.DataFrame:
    """Rounds set aside where the log was cut, rounds whose only lost rows lack a column
    their file does not have, and rounds withheld only because a wager was settled both
    by a net and otherwise (IN020 says so)."""
    cut = pl.col("rule_id").is_in(sequence.BOUNDARY_ROUNDS)
    other = located.filter(~cut).select(ROUND_KEY).drop_nulls()
    by_column = lacking.select(ROUND_KEY).drop_nulls().unique().join(
        other, on=ROUND_KEY, how="anti")
    parts = [located.filter(cut).select(ROUND_KEY), by_column]
    both = pl.col("rule_id") == nets.IN_SETTLED_BOTH_WAYS
    if located.select(both.any()).item():
        withholding = ~cut & ~both & ~pl.col("rule_id").is_in(NOT_WITHHOLDING) & ~pl.col(
            "field").is_in(v.NOT_NEEDED_FOR_REPLAY).fill_null(False)
        others = pl.concat([located.filter(withholding).select(ROUND_KEY),
                            lacking.select(ROUND_KEY)]).drop_nulls()
        parts.append(located.filter(both).select(ROUND_KEY).drop_nulls().unique().join(
            others, on=ROUND_KEY, how="anti"))
    return pl.concat(parts).unique(
        maintain_order=True).cast({"table_id": pl.String, "shoe_id": pl.String,
                                   "round": pl.Int64})


def _missing_rows(lacking: pl.DataFrame) -> pl.DataFrame:
    return lacking.group_by(v.FILE_ID, "field").agg(
        pl.len().alias("rows"), pl.col(v.LINE).min().alias("first_line"),
        pl.col(v.LINE).max().alias("last_line"),
    ).cast(MISSING_ROWS).select(list(MISSING_ROWS))


def _tables_of_other_parts(log: Log, tables: list[str]) -> list[str]:
    every = log.table_rows["table_id"].drop_nulls()
    return every.filter(~every.is_in(tables)).to_list()


_SEQ_BITS = 40  # seq below 2**40 shares one integer sort key with the table's code


def _table_seq_order(events: pl.DataFrame,
                     codes: pl.Series | None = None) -> tuple[pl.Series | None, bool]:
    """The stable order by table and seq (None where the rows are in that order
    already: a log written table by table), and whether each table's seq rises in
    row order. The sort key is the table's code (in the tables' text order) joined
    with seq into one integer where seq allows, which sorts several times faster
    than text, or two columns.

    A log is written as play goes on: its tables interleave, but each table's rows
    are usually in seq order already. Then the stable order by table code alone
    (a counting sort: a few codes, one pass) is the order by table and seq; that is
    checked on the key, and a full sort runs only where it does not hold.

    `codes`: each row's table as a code in the tables' text order, where the rows
    came with one (none missing); else the codes are made here."""
    if codes is None or codes.null_count():
        names = events.get_column("table_id").unique().drop_nulls().sort().to_list()
        codes = events.get_column("table_id").cast(pl.Enum(names)).to_physical()
    keys = pl.DataFrame([codes.cast(pl.Int64).alias("code"), events.get_column("seq")]
                        ).rechunk()  # one chunk: the sort reads the keys directly
    low, high = keys["seq"].min(), keys["seq"].max()
    if low is None or low < 0 or high >= 1 << _SEQ_BITS:
        order = keys.select(pl.arg_sort_by("code", "seq", maintain_order=True)).to_series()
        return order, False
    key = keys.select(pl.col("code") * (1 << _SEQ_BITS) + pl.col("seq")).to_series()
    if _ascending(key):
        return None, True
    by_table = stable_order_by_code(keys.get_column("code"))
    if _ascending(key.gather(by_table)):
        return by_table, True
    return key.to_frame().select(pl.arg_sort_by(key.name, maintain_order=True)).to_series(), False


def _ascending(key: pl.Series) -> bool:
    smallest = key.diff().min()
    return smallest is None or smallest >= 0


# Columns moved together by the sort: a frame's gather runs its columns in parallel
# (about twice as fast as one column at a time on two cores), while a few at a time
# keep the memory of the sort about that of the log, not twice it.
_SORT_BATCH = 4


def _sorted_releasing(holder: list[pl.DataFrame], order: pl.Series | None) -> pl.DataFrame:
    """The frame in `holder` (taken out of it) in `order` (None: as it is), built a
    few columns at a time while the unsorted columns are dropped, so that the log is
    held about once, not twice."""
    events = holder.pop()
    names = events.columns
    # a column without any value (another game's) is not moved: it comes back as one
    # null that polars spreads over the rows without storing them
    empty = [pl.lit(None, events.schema[name]).alias(name)
             for name in names
             if events.height and events.get_column(name).null_count() == events.height]
    events = events.drop(e.meta.output_name() for e in empty)
    if order is None:
        return events.rechunk().with_columns(empty).select(names)
    moved = []
    while events.width:
        batch = events.columns[:_SORT_BATCH]
        moved.append(events.select(batch).rechunk()[order])  # one chunk: a gather is direct
        events = events.drop(batch)
    return pl.concat(moved, how="horizontal").with_columns(empty).select(names)


# more lines than any file has: file and line as one integer (file * this + line)
_LINES_PER_FILE = 1 << 40


def _locate(problems: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Give each problem its row (by file and line) and that row's place in the game.

    A value that failed to parse and a later check on the same field of the
    same row are one problem: the first reported is kept.
    """
    exported = pl.col("rule_id").str.starts_with(EXPORT_RULES)
    # only the rows that have problems are looked up (the event frame is large), by
    # file and line as one integer: a lookup of one key costs a fraction of a join on two
    line_key = pl.col(v.FILE_ID).cast(pl.Int64) * _LINES_PER_FILE + pl.col(v.LINE)
    lines = problems.select(line_key).drop_nulls().to_series()
    where = (
        events.select(PLACE).filter(line_key.is_in(lines.implode()))
        .cast({"game": pl.String})  # as problems name it (the few rows with one)
    )
    problems = (
        problems.cast(PROBLEM_SCHEMA)
        .join(
            where.select(v.FILE_ID, v.LINE, pl.col(v.ROW).alias("_row")),
            on=[v.FILE_ID, v.LINE],
            how="left",
            maintain_order="left",
        )
        .with_columns(pl.coalesce(v.ROW, "_row").alias(v.ROW),
                      pl.when(exported).then("observed").alias("_value"))
        .drop("_row")
        .unique([v.FILE_ID, v.LINE, "field", "rule_id", "_value"], keep="first",
                maintain_order=True)
        .drop("_value")
    )
    # one finding per row and field: a parse failure explains the missing value (an
    # export's own findings are each said as found: two values of one column no map
    # covers, first seen on one line, are two). A gap in gapless seq is said whatever
    # else its row breaks: it alone says that rows were lost (the row after the gap may
    # also be out of order in the file)
    field_known = (pl.col("field").is_not_null() & pl.col(v.ROW).is_not_null() & ~exported
                   & (pl.col("rule_id") != sequence.IN_SEQ_GAP))
    problems = pl.concat(
        [
            problems.filter(field_known).unique(
                [v.ROW, "field"], keep="first", maintain_order=True
            ),
            problems.filter(~field_known),
        ]
    )
    return problems.join(where.drop(v.FILE_ID, v.LINE), on=v.ROW, how="left", maintain_order="left")


# A value is read only where it ends (a closing quote, a comma or a brace after it): in
# a line cut short, or in the excerpt of a long one, the last value may be cut too, and
# `"round":2` cut from `"round":28` would withhold another round
_JSON_FIELD = r'"{}"\s*:\s*"?([^",}}]*)"?\s*[,}}]'


def _recovered(column: str) -> pl.Expr:
    """A key read back out of the text of a record that did not parse (a truncated JSON
    line usually still holds its table, shoe and round), where its value is whole."""
    return pl.col("observed").str.extract(_JSON_FIELD.format(column), 1)


def _unauditable_rounds(
    problems: pl.DataFrame,
    places: pl.DataFrame,
    orphans_elsewhere: pl.DataFrame | None,
    others: list[str],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rounds that lost a row: the problem's own round; for a row whose round is not
    known, the rounds in progress around it in its file: those of its own table if
    that much can be read, else of every table in the file (the lost row may belong
    to any of them), nearest before and after it.

    The rows of the first part whose round is not known (`orphans`, returned) are
    given to every later part as `orphans_elsewhere`: their rounds may be in the
    tables that part holds. Rounds of `others` (tables of other parts) are theirs."""
    known = pl.all_horizontal(pl.col(ROUND_KEY).is_not_null())
    # a round is withheld for what its replay needs: not for a boundary warning, nor for
    # a field no rule reads (a row's time, its patron's id)
    withholding = ~pl.col("rule_id").is_in(NOT_WITHHOLDING) & ~pl.col("field").is_in(
        v.NOT_NEEDED_FOR_REPLAY).fill_null(False)
    own = problems.filter(known & withholding).select(ROUND_KEY)
    orphans = (
        # a row's problem; a missing column's (its header line) is the file's, not a row's
        problems.filter(~known & pl.col(v.LINE).is_not_null()
                        & (pl.col("rule_id") != IN_COLUMN_MISSING))
        .with_columns(
            pl.coalesce("table_id", _recovered("table_id")).alias("table_id"),
            pl.coalesce("shoe_id", _recovered("shoe_id")).alias("shoe_id"),
            pl.coalesce("round", _recovered("round").cast(pl.Int64, strict=False)).alias("round"),
        )
        .select(pl.col(v.FILE_ID).cast(pl.Int32), pl.col(v.LINE).cast(pl.Int64), *ROUND_KEY)
        .unique()
        .sort(v.FILE_ID, v.LINE, *ROUND_KEY, nulls_last=True)  # in file order, whatever read
    )
    every = orphans if orphans_elsewhere is None else pl.concat([orphans, orphans_elsewhere])
    if every.is_empty():
        return own.unique(maintain_order=True), orphans
    recovered = every.filter(known).select(ROUND_KEY)
    anchors = (
        places.filter(pl.all_horizontal(pl.col(ROUND_KEY).is_not_null()))
        .select(v.FILE_ID, v.LINE, *ROUND_KEY)
        .sort(v.FILE_ID, "table_id", v.LINE)
    )
    tables_in_file = anchors.select(v.FILE_ID, "table_id").unique()
    lost = every.filter(~known)
    candidates = pl.concat(
        [
            lost.filter(pl.col("table_id").is_not_null()).select(v.FILE_ID, v.LINE, "table_id"),
            lost.filter(pl.col("table_id").is_null())
            .select(v.FILE_ID, v.LINE)
            .join(tables_in_file, on=v.FILE_ID, how="inner"),
        ]
    ).sort(v.FILE_ID, "table_id", v.LINE)
    neighbours = [
        candidates.join_asof(
            anchors, on=v.LINE, by=[v.FILE_ID, "table_id"], strategy=strategy,
            allow_exact_matches=False, check_sortedness=False,
        ).select(ROUND_KEY)
        for strategy in ("backward", "forward")
    ]
    around = pl.concat([recovered, *neighbours]).filter(~pl.col("table_id").is_in(others))
    rounds = pl.concat([own, around]).drop_nulls().unique(maintain_order=True)
    return rounds, orphans
