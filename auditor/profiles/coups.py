"""Coups and wagers exports (export-profiles-v1, Layouts): a shoe reader's rows per
coup made into the round's events, and the wagers rows joined to their rounds, by round or
by time, made into wagers and settlements where the game puts them."""

from __future__ import annotations

import polars as pl

from ..ingest import vocabulary as v
from ..ingest.problems import Problem
from . import ProfileError, layouts
from . import blackjack as bj
from .layouts import FILE, INSTANT, ROW, SLOT, TABLE_ORDER
from .model import Source
from .translated import TEXT, Translated, lines_text, note_table

# The problems found here, by rule id (their titles and docs: auditor.rules.exports)
EX_COUP_WITHOUT_KEY = "EX003"
EX_COUP_GIVEN_TWICE = "EX004"
EX_WAGER_WITHOUT_ROUND = "EX005"
EX_DEALER_CARDS_DIFFER = "EX006"
EX_INSURANCE_NOT_IN_WAGERS = "EX008"
EX_NET_AND_SETTLEMENT = "EX009"
# (1.1) a blackjack coups source's net results (`amount` and `net`): the marks of its
# tables (coverage: wagers recorded, no single settlement; the amounts of doubles, splits
# and insurance presumed where such wagers were made)
NET = "net"
NETS_MARK = "coups:net"
STAKES_PRESUMED = "stakes:presumed"


def coup_events(out: Translated, by_layout: dict, paths: list[str]) -> pl.DataFrame:
    coups = pl.concat(by_layout["coups"], how="diagonal_relaxed")
    _nets_and_wagers(out, coups, by_layout["wagers"])
    for c in ("table_id", "shoe_id", "round", "ts"):
        if c not in coups.columns:
            coups = coups.with_columns(pl.lit(None, pl.String).alias(c))
    # (1.1) the files of sources that leave round unmapped: their rows are numbered
    derived = [n for n, e in enumerate(out.exports)
               if e.source.layout == "coups" and "round" not in e.source.columns]
    keyed = pl.all_horizontal(pl.col("table_id", "shoe_id").is_not_null()) & (
        pl.col("round").is_not_null() | pl.col(FILE).is_in(derived))
    for row in coups.filter(~keyed).select(FILE, v.LINE).iter_rows():
        out.exports[row[0]].problems.append(Problem(
            EX_COUP_WITHOUT_KEY, row[1], None, None, "a table_id, shoe_id and round",
            "The coup row has no table_id, shoe_id or round; it makes no events."))
        out.exports[row[0]].unread += 1
    coups = layouts.file_order(coups.filter(keyed), paths).sort("table_id", TABLE_ORDER)
    if derived:
        coups = _derived_rounds(out, coups, derived)
    coups = coups.with_columns(_round_number())
    out.row_rounds.append(coups.select(FILE, v.LINE, *bj.ROUND_KEY))
    # a baccarat round given twice: the second row is reported and the round withheld
    baccarat = [n for n, e in enumerate(out.exports) if e.source.game == "baccarat"]
    again = (pl.int_range(pl.len()).over("table_id", "shoe_id", "round") > 0) & pl.col(
        FILE).is_in(baccarat)
    # a blackjack round is its rows wherever they lie (in any file of its source): in
    # the place of its first
    first = pl.col(TABLE_ORDER).min().over("table_id", "shoe_id", "round")
    coups = coups.with_columns(again.alias("_again"), pl.col(TABLE_ORDER).alias("_at"),
                               first.alias(TABLE_ORDER))
    made, anchors, insured = [], [], []
    sources = {id(e.source): e.source for e in out.exports if e.source.layout == "coups"}
    for source in sources.values():
        files = [n for n, e in enumerate(out.exports) if e.source is source]
        mine = coups.filter(pl.col(FILE).is_in(files))
        if not mine.height:
            continue
        for number, line in mine.filter("_again").select(FILE, v.LINE).iter_rows():
            out.exports[number].problems.append(Problem(
                EX_COUP_GIVEN_TWICE, line, "round", None, "one row per round",
                "The round is given by an earlier coup row too; it is withheld."))
        if source.shoe_starts:
            mine = mine.with_columns(layouts.new_shoes(mine, files[0] in derived).alias(
                "_new_shoe"), _decks(out, mine, source).alias("_decks"))
        if source.game == "blackjack":
            _dealer_cards_differ(out, mine)
            events, marks = _blackjack_coups(out, mine, source)
            anchors.append(marks)
            made.append(events)
            insured.append(mine.filter("_insured").select(
                *bj.ROUND_KEY, pl.col("seat").cast(pl.Int64, strict=False), FILE, v.LINE))
            note_table(out, mine, "coups", source.cards)
            note_table(out, mine, "decisions", None)
            _mark_shoe_starts(out, mine, source)
            continue
        names = list(source.card_columns)
        events = layouts.coup_events(mine, [n for n in names if n.startswith("_card:player")],
                                     [n for n in names if n.startswith("_card:banker")],
                                     "winner" in source.columns, bool(source.shoe_starts))
        # the second row of a round given twice keeps only its round_start, which
        # carries its finding and withholds the round
        again = mine.filter("_again").select(FILE, ROW)
        events = events.join(again.with_columns(pl.lit(True).alias("_dup")), on=[FILE, ROW],
                             how="left").filter(
            pl.col("_dup").is_null() | (pl.col("event") == "round_start")).drop("_dup")
        made.append(events)
        note_table(out, mine, "coups", source.cards)
        _mark_shoe_starts(out, mine, source)
    # no coup row at all (files of no rows, or that cannot be read): no events of its own
    events = pl.concat(made, how="diagonal_relaxed") if made else pl.DataFrame(
        schema={**TEXT, v.LINE: pl.Int64, FILE: pl.Int32, ROW: pl.Int64,
                TABLE_ORDER: pl.Int64, SLOT: pl.Int64})
    if by_layout["wagers"]:
        wagers = pl.concat(by_layout["wagers"], how="diagonal_relaxed")
        marks = pl.concat(anchors, how="diagonal_relaxed") if anchors else None
        joined, placed = _joined_wagers(out, wagers, coups.filter(~pl.col("_again")), marks)
        events = pl.concat([events, joined], how="diagonal_relaxed")
        if insured:
            _insurance_without_wager(out, pl.concat(insured), placed)
    return layouts.numbered_made(events)


def _nets_and_wagers(out: Translated, coups: pl.DataFrame, wagers: list[pl.DataFrame]
                     ) -> None:
    """(1.1) A table given by a blackjack coups source with net results and by a wagers
    source: a ProfileError (exit 2) naming the table and both sources."""
    netted = {n: e.source for n, e in enumerate(out.exports)
              if e.source.layout == "coups" and NET in e.source.columns}
    if not netted or not wagers or "table_id" not in coups.columns:
        return
    given = coups.filter(pl.col(FILE).is_in(list(netted))).select(
        "table_id", FILE).drop_nulls().unique("table_id", keep="first", maintain_order=True)
    for frame in wagers:
        if "table_id" not in frame.columns:
            continue
        both = frame.select("table_id", FILE).join(given, on="table_id", how="inner",
                                                   suffix="_coups")
        if both.height:
            table, number, coup_file = both.sort("table_id").row(0)
            export = out.exports[number]
            wager_source = export.also if export.also is not None else export.source
            raise ProfileError(
                f"{out.profile.path}: table {table} is given by the coups source "
                f"{netted[coup_file].name!r}, which maps net results (amount and net), and "
                f"by the wagers source {wager_source.name!r}: a table's wagers come from "
                "one of them")


def _insurance_without_wager(out: Translated, insured: pl.DataFrame,
                             placed: pl.DataFrame) -> None:
    """(1.1) A box whose decisions say it took insurance, at a table whose wagers a
    wagers source gives, with no wagers row of bet insurance for it: an input finding at
    the coup's line (its round withheld: its insurance wager is not known)."""
    tables = placed.get_column("table_id").unique()
    rows = placed.filter(pl.col("bet") == "insurance").select(
        *bj.ROUND_KEY, pl.col("seat").cast(pl.Int64, strict=False)).unique()
    missing = insured.filter(pl.col("table_id").is_in(tables.implode())).join(
        rows, on=[*bj.ROUND_KEY, "seat"], how="anti", nulls_equal=True).unique(
        [FILE, v.LINE], maintain_order=True)
    for number, line, seat in missing.select(FILE, v.LINE, "seat").iter_rows():
        out.exports[number].problems.append(Problem(
            EX_INSURANCE_NOT_IN_WAGERS, line, "actions", "insurance",
            "a wagers row of bet insurance for the box",
            f"Box {seat} took insurance, and no wagers row of the round has its insurance "
            "wager; the round is withheld."))


def _derived_rounds(out: Translated, coups: pl.DataFrame, derived: list[int]) -> pl.DataFrame:
    """(1.1) `round` for the rows of `derived` files (coups sources that do not map it), in
    table order: numbered within each shoe from 1. A shoe_id that comes back after
    another shoe under shoe_starts is a new shoe (`-2`, `-3`, ... appended). A blackjack
    row continues the round of the row before it when both have the same ts (or neither
    has one), the same dealer_cards, and a box the round does not have yet (without a
    ts: a box later in the dealing order than that row's)."""
    mine = pl.col(FILE).is_in(derived)
    restarts = [n for n in derived if out.exports[n].source.shoe_starts]
    if restarts:
        run = (pl.col("shoe_id") != pl.col("shoe_id").shift(1).over("table_id")).fill_null(
            True).cum_sum().over("table_id")
        coups = coups.with_columns(run.alias("_run"))
        again = pl.col("_run").rank("dense").over("table_id", "shoe_id").cast(pl.Int64)
        coups = coups.with_columns(
            pl.when(pl.col(FILE).is_in(restarts) & (again > 1))
            .then(pl.format("{}-{}", "shoe_id", again)).otherwise("shoe_id")
            .alias("shoe_id")).drop("_run")
    blackjack = [n for n in derived if out.exports[n].source.game == "blackjack"]
    begins = pl.lit(True)
    if blackjack:
        coups = coups.with_columns(_blackjack_begins(coups, blackjack))
        begins = pl.col("_begins")
    number = (begins & mine).cast(pl.Int64).cum_sum().over("table_id", "shoe_id")
    return coups.with_columns(pl.when(mine).then(number.cast(pl.String))
                              .otherwise(pl.col("round")).alias("round")).drop(
        "_begins", strict=False)


def _blackjack_begins(coups: pl.DataFrame, blackjack: list[int]) -> pl.Series:
    """Whether each row (in table order) begins a round: a blackjack row of `blackjack`
    files continues the round of the row before it (same table, shoe and dealer cards;
    the same ts and a box the round lacks, or neither timed and a later box). Decided by
    expressions against the row before; only rows of one time after a row of that time
    (a box the round lacks: it depends on the round's rows so far) are taken in turn."""
    hand = pl.col("hand").cast(pl.Int64, strict=False).fill_null(1) if "hand" in (
        coups.columns) else pl.lit(1, pl.Int64)
    dealer = (pl.col("_dealer") if "_dealer" in coups.columns
              else pl.lit(None, pl.List(pl.String))).fill_null(pl.lit([], pl.List(pl.String)))
    rows = coups.select(
        pl.col(FILE).is_in(blackjack).alias("bj"), "table_id", "shoe_id", pl.col(INSTANT),
        dealer.alias("_dealer"),
        pl.col("seat").cast(pl.Int64, strict=False).fill_null(-1).alias("seat"),
        hand.alias("hand"))
    before = {c: pl.col(c).shift(1) for c in ("table_id", "shoe_id", INSTANT, "_dealer",
                                              "seat", "hand")}
    same_key = (pl.col("bj") & (pl.col("table_id") == before["table_id"])
                & (pl.col("shoe_id") == before["shoe_id"])
                & (pl.col("_dealer") == before["_dealer"])).fill_null(False)
    untimed = pl.col(INSTANT).is_null() & before[INSTANT].is_null()
    later = (pl.col("seat") > before["seat"]) | (
        (pl.col("seat") == before["seat"]) & (pl.col("hand") > before["hand"]))
    # the same time as the row before: continues unless its box is in the round already
    timed = (same_key & (pl.col(INSTANT) == before[INSTANT])).fill_null(False)
    decided = rows.select(
        (~(same_key & untimed & later.fill_null(False)) & ~timed).alias("begins"),
        timed.alias("timed"), "seat", "hand")
    if not decided.get_column("timed").any():
        return decided.get_column("begins").alias("_begins")
    # runs of rows of one time: each begins with a row that begins a round
    runs = decided.with_row_index("_i").with_columns(
        (~pl.col("timed")).cum_sum().alias("_run")).filter(
        pl.col("timed").any().over("_run"))
    begins = decided.get_column("begins").to_list()
    boxes: set[tuple] = set()
    for at, is_timed, seat, number in runs.select("_i", "timed", "seat", "hand").iter_rows():
        box = (seat, number)
        if is_timed and box in boxes:
            begins[at], boxes = True, {box}
        elif is_timed:
            boxes.add(box)
        else:
            boxes = {box}
    return pl.Series("_begins", begins, dtype=pl.Boolean)


def _dealer_cards_differ(out: Translated, mine: pl.DataFrame) -> None:
    """Rows of a blackjack round whose dealer_cards differ from its first row's: each
    reported at its line, which withholds the round."""
    # a row whose list cell does not parse is reported for it (EX007), not for this
    first = pl.col("_dealer").sort_by("_at").first().over("table_id", "shoe_id", "round")
    differ = mine.filter(~pl.col("_bad")).with_columns(first.alias("_first")).filter(
        pl.col("_dealer") != pl.col("_first"))
    for number, line, round_ in differ.select(FILE, v.LINE, "round").iter_rows():
        out.exports[number].problems.append(Problem(
            EX_DEALER_CARDS_DIFFER, line, "dealer_cards", None,
            "the dealer's cards of the round's first row",
            f"The row's dealer_cards differ from those of round {round_}'s first row; the "
            "round is withheld."))


def _decks(out: Translated, mine: pl.DataFrame, source: Source) -> pl.Expr:
    """The decks of a shoe a coups row begins: the mapped column, else for blackjack the
    house rules' table decks."""
    if "decks" in mine.columns:
        return pl.col("decks")
    if source.game != "blackjack" or out.decks_of is None:
        return pl.lit(None, pl.String)
    tables = mine["table_id"].unique().to_list()
    decks = {t: None if out.decks_of(t) is None else str(out.decks_of(t)) for t in tables}
    return pl.col("table_id").replace_strict(decks, default=None, return_dtype=pl.String)


def _round_number() -> pl.Expr:
    """A round's cell by value where it is a whole number (`07` is round 7, in a coup and
    in the wager that joins it), else as written (for its finding)."""
    text = pl.col("round").str.strip_chars()
    return pl.coalesce(text.cast(pl.Int64, strict=False).cast(pl.String), text).alias("round")


def _mark_shoe_starts(out: Translated, mine: pl.DataFrame, source: Source) -> None:
    if source.shoe_starts:
        for table in mine["table_id"].unique().to_list():
            out.tables[table].add("shoe_starts")


def _blackjack_coups(out: Translated, mine: pl.DataFrame, source: Source
                     ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A blackjack coups source's rows as events (and where its wagers go); (1.1) with
    net results, their wagers and nets too (the tables where a wager's amount was
    presumed noted `stakes:presumed`)."""
    mine = _hands(mine.with_columns(pl.col("seat").cast(pl.Int64, strict=False)))
    events, marks = bj.coup_events(mine)
    if NET in source.columns:
        wagers = bj.net_wagers(mine, marks, "hand" in source.columns)
        events = pl.concat([events, bj.wager_events(wagers, marks)], how="diagonal_relaxed")
        for table in mine.get_column("table_id").unique().to_list():
            out.tables.setdefault(table, set()).add(NETS_MARK)
        presumed = wagers.filter(pl.col("reason") == v.PRESUMED).get_column("table_id")
        for table in presumed.unique().to_list():
            out.tables[table].add(STAKES_PRESUMED)
    if source.shoe_starts:
        shuffles = mine.unique([FILE, ROW], keep="first", maintain_order=True).filter(
            "_new_shoe").select(
            "table_id", "game", "shoe_id", v.LINE, FILE, ROW, TABLE_ORDER, "ts",
            pl.col("_decks").alias("decks")).with_columns(
            pl.lit("shuffle").alias("event"), pl.lit("0").alias("round"),
            pl.lit(layouts.SHUFFLE).alias(layouts.SLOT))
        events = pl.concat([events, shuffles], how="diagonal_relaxed")
    events = events.with_columns(pl.col("seat", "hand").cast(pl.String))
    return events, marks


def _hands(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per hand: a row of one hand (`hand`, default 1) as it is; (1.1) a row
    that holds every hand of its box, one row per hand, numbered from 1 in the order
    listed, each with its cards and the decisions aligned with them."""
    for name, dtype in (("_nested", pl.Boolean), ("_bad", pl.Boolean)):
        if name not in rows.columns:
            rows = rows.with_columns(pl.lit(False, dtype).alias(name))
    count = pl.max_horizontal(pl.col("_cards").list.len(), pl.col("_actions").list.len(),
                              pl.lit(1, pl.UInt32))
    rows = rows.with_columns(pl.when("_nested").then(pl.int_ranges(0, count))
                             .otherwise(pl.lit([0], pl.List(pl.Int64))).alias("_k"))
    given = (pl.col("hand") if "hand" in rows.columns else pl.lit("1")).cast(
        pl.Int64, strict=False).fill_null(1)
    return rows.explode("_k").with_columns(
        pl.col("_cards").list.get(pl.col("_k"), null_on_oob=True).fill_null([]),
        pl.col("_actions").list.get(pl.col("_k"), null_on_oob=True).fill_null([]),
        pl.when("_nested").then(pl.col("_k") + 1).otherwise(given).alias("hand"))


def _joined_wagers(out: Translated, wagers: pl.DataFrame, coups: pl.DataFrame,
                   anchors: pl.DataFrame | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each wagers row with its round (by round, by time, or (1.1) the coup of its own
    record), as events where the game puts them; a row that finds none is reported at
    its line. `anchors`: where a blackjack round's decisions place its wagers. Also the
    rows joined: (round key, seat, bet)."""
    for c in ("table_id", "shoe_id", "round", "ts", "settle_order", "vig_order", "vig_mode"):
        if c not in wagers.columns:
            wagers = wagers.with_columns(pl.lit(None, pl.String).alias(c))
    # (1.1) a record read as both a coup and a wager: the wager joins the coup made from
    # that record (a record whose coup has no key is reported by it, once)
    shared = [n for n, e in enumerate(out.exports) if e.also is not None]
    records = wagers.filter(pl.col(FILE).is_in(shared))
    wagers = wagers.filter(~pl.col(FILE).is_in(shared))
    given = coups["table_id"].unique()
    elsewhere = wagers.filter(~pl.col("table_id").is_in(given.implode()))
    _report_tables_without_coups(out, elsewhere)
    wagers = wagers.filter(pl.col("table_id").is_in(given.implode())).with_columns(
        _round_number())
    rounds = coups.select("table_id", "shoe_id", "round", "game", TABLE_ORDER, INSTANT,
                          pl.col("ts").alias("_round_ts"),
                          *(["_end"] if "_end" in coups.columns else [])).sort(
        TABLE_ORDER, INSTANT, nulls_last=True).unique(["table_id", "shoe_id", "round"],
                                                      keep="first", maintain_order=True)
    joined = []
    for number, export in enumerate(out.exports):
        source = export.also if export.also is not None else export.source
        mine = (records if export.also is not None else wagers).filter(pl.col(FILE) == number)
        if source.layout != "wagers" or not mine.height:
            continue
        if export.also is not None:
            found = mine.drop("table_id", "shoe_id", "round", "game", strict=False).join(
                coups.unique([FILE, ROW]).select(
                    FILE, ROW, "table_id", "shoe_id", "round", "game", TABLE_ORDER,
                    pl.col("ts").alias("_round_ts")), on=[FILE, ROW], how="inner")
        elif export.source.join == "round":
            found = mine.drop("game", strict=False).join(
                rounds.drop(INSTANT, "_end", strict=False).with_columns(
                    pl.col("round").alias("_round")),
                on=["table_id", "shoe_id", "round"], how="left")
        else:
            found = _by_time(mine, rounds)
        lost = found.filter(pl.col(TABLE_ORDER).is_null())
        for line in lost[v.LINE].to_list():
            export.problems.append(Problem(
                EX_WAGER_WITHOUT_ROUND, line, None, None, "a round of the table",
                "The wager row finds no round of its table"
                + (" with its shoe and round." if export.source.join == "round"
                   else " under way at its time.")))
        export.unread += lost.height
        # a row without a time of its own takes its round's (the timing is presumed)
        found = found.filter(pl.col(TABLE_ORDER).is_not_null())
        out.row_rounds.append(found.select(FILE, v.LINE, "table_id", "shoe_id", "round"))
        if found.schema["ts"] != found.schema["_round_ts"]:
            found = found.with_columns(pl.col("ts", "_round_ts").cast(pl.String))
        found = found.with_columns(pl.coalesce("ts", "_round_ts").alias("ts"))
        joined.append(found)
        for table in found["table_id"].unique().to_list():
            out.tables.setdefault(table, set()).add("wagers")
            if "settle_order" in source.columns:
                out.tables[table].add("settle_order")
            if "vig_order" in source.columns or "vig" not in source.columns:
                out.tables[table].add("vig_order")
    if not joined:
        return pl.DataFrame(), pl.DataFrame(schema={**{k: pl.String for k in bj.ROUND_KEY},
                                                    "seat": pl.String, "bet": pl.String})
    frame = _net_or_settlements(out, pl.concat(joined, how="diagonal_relaxed"))
    has_vig_order = any("vig_order" in e.source.columns for e in out.exports)
    blackjack = pl.col("game") == "blackjack"
    events = [layouts.wager_events(frame.filter(~blackjack), has_vig_order)]
    if anchors is not None and frame.filter(blackjack).height:
        events.append(bj.wager_events(frame.filter(blackjack), anchors))
    placed = frame.select(*bj.ROUND_KEY, pl.col("seat").cast(pl.String), "bet")
    return _order_not_recorded(out, pl.concat(events, how="diagonal_relaxed")), placed


_SINGLE = ("pay", "collect", "push", "vig")


def _net_or_settlements(out: Translated, frame: pl.DataFrame) -> pl.DataFrame:
    """(1.1) A wagers row with a `net` and any of pay, collect, push and vig: an input
    finding at its line (EX009), which withholds its round; the row makes its wager and
    its net (at its line, in its round), not its single settlements."""
    singles = [c for c in _SINGLE if c in frame.columns]
    if NET not in frame.columns or not singles:
        return frame
    both = pl.col(NET).is_not_null() & pl.any_horizontal(
        layouts.settled_cell(c) for c in singles)
    found = frame.filter(both)
    if not found.height:
        return frame
    written = pl.concat_str([pl.format("net {}", NET), *[
        pl.when(layouts.settled_cell(c)).then(pl.format(f"{c} {{}}", c)) for c in singles]],
        separator=", ", ignore_nulls=True)
    for number, line, said in found.select(FILE, v.LINE, written.alias("w")).iter_rows():
        out.exports[number].problems.append(Problem(
            EX_NET_AND_SETTLEMENT, line, NET, said,
            "a net, or pay, collect, push and vig, not both",
            f"The wager row records a net result and a single settlement ({said}): a "
            "wager is settled by its net or by its single settlements; its round is "
            "withheld."))
    return frame.with_columns(pl.when(both).then(None).otherwise(pl.col(c)).alias(c)
                              for c in singles)


def _order_not_recorded(out: Translated, events: pl.DataFrame) -> pl.DataFrame:
    """Rounds where a settlement has no settle_order (or a vig no vig_order): their order
    of settlement is not evidenced (noted per table and round)."""
    if "_kind" not in events.columns:  # (1.1) net results only: no single settlement
        return events
    ordered = events.filter(pl.col("_kind").is_not_null())
    # a settlement without its place, or two in one place: laid in row order, the
    # order is not evidenced for the round
    shared = pl.len().over("table_id", "shoe_id", "round", layouts.SUB) > 1
    blank = ordered.filter(pl.col(layouts.SUB).is_null() | shared)
    out.unordered = pl.concat([out.unordered, blank.select(
        "table_id", "shoe_id", pl.col("round").cast(pl.Int64, strict=False)).unique()]
    ).unique()
    return events


def _by_time(wagers: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """join = "time": the latest round of the table begun at or before the row's time (to
    the second), if the row is not after that round's end (its end_ts, else the next
    round's start)."""
    second = pl.col(INSTANT).dt.truncate("1s")
    ends = rounds.sort("table_id", INSTANT).with_columns(
        pl.col(INSTANT).shift(-1).over("table_id").alias("_next"))
    end = pl.coalesce("_end", "_next") if "_end" in ends.columns else pl.col("_next")
    ends = ends.with_columns(end.dt.truncate("1s").alias("_until"),
                             second.alias("_from")).drop_nulls("_from").sort("_from")
    keyed = wagers.drop("shoe_id", "round", "game", strict=False).with_columns(
        second.alias("_at"))
    timed = keyed.filter(pl.col("_at").is_not_null()).sort("_at")
    found = timed.join_asof(ends.select("table_id", "shoe_id", "round", "game", TABLE_ORDER,
                                        "_round_ts",
                                        "_from", "_until"),
                            left_on="_at", right_on="_from", by="table_id",
                            strategy="backward", check_sortedness=False)
    late = pl.col("_until").is_not_null() & (pl.col("_at") > pl.col("_until"))
    found = found.with_columns(pl.when(late).then(None).otherwise(pl.col(TABLE_ORDER))
                               .alias(TABLE_ORDER))
    untimed = keyed.filter(pl.col("_at").is_null())
    return pl.concat([found, untimed], how="diagonal_relaxed").sort(FILE, ROW).drop(
        "_at", "_from", "_until", strict=False)


def _report_tables_without_coups(out: Translated, rows: pl.DataFrame) -> None:
    """Wagers rows of a table no coups source gives: one finding per file and table."""
    if not rows.height:
        return
    summary = rows.group_by(FILE, "table_id").agg(
        pl.len().alias("rows"), pl.col(v.LINE).min().alias("first"),
        pl.col(v.LINE).max().alias("last"))
    for number, table, count, first, last in summary.iter_rows():
        out.exports[number].unread += count
        out.exports[number].problems.append(Problem(
            EX_WAGER_WITHOUT_ROUND, first, "table_id", table,
            "a table a coups source gives",
            f"{count} wager row{'s' if count > 1 else ''} of table {table} "
            f"({lines_text(first, last)}) find{'' if count > 1 else 's'} no round: no coups "
            "source gives that table."))


def wagers_without_coups(out: Translated, wagers: pl.DataFrame) -> None:
    if "table_id" not in wagers.columns:
        wagers = wagers.with_columns(pl.lit(None, pl.String).alias("table_id"))
    _report_tables_without_coups(out, wagers)



