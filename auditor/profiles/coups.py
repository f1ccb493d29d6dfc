"""Coups and wagers exports (export-profiles-v1, Layouts): a shoe reader's rows per
coup made into the round's events, and the wagers rows joined to their rounds, by round or
by time, made into wagers and settlements where the game puts them."""

from __future__ import annotations

import polars as pl

from ..ingest import vocabulary as v
from ..ingest.problems import Problem
from . import blackjack as bj
from . import layouts
from .layouts import FILE, INSTANT, ROW, SLOT, TABLE_ORDER
from .model import Source
from .translated import TEXT, Export, Translated, lines_text, note_table

# The problems found here, by rule id (their titles and docs: auditor.rules.exports)
EX_COUP_WITHOUT_KEY = "EX003"
EX_COUP_GIVEN_TWICE = "EX004"
EX_WAGER_WITHOUT_ROUND = "EX005"
EX_DEALER_CARDS_DIFFER = "EX006"


def coup_events(out: Translated, by_layout: dict, paths: list[str]) -> pl.DataFrame:
    coups = pl.concat(by_layout["coups"], how="diagonal_relaxed")
    for c in ("table_id", "shoe_id", "round", "ts"):
        if c not in coups.columns:
            coups = coups.with_columns(pl.lit(None, pl.String).alias(c))
    keyed = pl.all_horizontal(pl.col("table_id", "shoe_id", "round").is_not_null())
    for row in coups.filter(~keyed).select(FILE, v.LINE).iter_rows():
        out.exports[row[0]].problems.append(Problem(
            EX_COUP_WITHOUT_KEY, row[1], None, None, "a table_id, shoe_id and round",
            "The coup row has no table_id, shoe_id or round; it makes no events."))
        out.exports[row[0]].unread += 1
    coups = layouts.file_order(coups.filter(keyed), paths).sort("table_id", TABLE_ORDER)
    coups = coups.with_columns(_round_number())
    # a baccarat round given twice: the second row is reported and the round withheld
    baccarat = [n for n, e in enumerate(out.exports) if e.source.game == "baccarat"]
    again = (pl.int_range(pl.len()).over("table_id", "shoe_id", "round") > 0) & pl.col(
        FILE).is_in(baccarat)
    # a blackjack round is its rows wherever they lie: in the place of its first
    first = pl.col(TABLE_ORDER).min().over("table_id", "shoe_id", "round")
    coups = coups.with_columns(again.alias("_again"), first.alias(TABLE_ORDER))
    made, anchors = [], []
    for number, export in enumerate(out.exports):
        source = export.source
        mine = coups.filter(pl.col(FILE) == number)
        if source.layout != "coups" or not mine.height:
            continue
        for line in mine.filter("_again")[v.LINE].to_list():
            export.problems.append(Problem(
                EX_COUP_GIVEN_TWICE, line, "round", None, "one row per round",
                "The round is given by an earlier coup row too; it is withheld."))
        if source.shoe_starts:
            mine = mine.with_columns(layouts.new_shoes(mine).alias("_new_shoe"),
                                     _decks(out, mine, source).alias("_decks"))
        if source.game == "blackjack":
            _dealer_cards_differ(export, mine)
            events, marks = _blackjack_coups(mine, source)
            anchors.append(marks)
            made.append(events)
            note_table(out, mine, "coups", source.cards)
            note_table(out, mine, "decisions", None)
            _mark_shoe_starts(out, mine, source)
            continue
        mine = mine.with_columns(pl.col(f"_card:{c}").alias(c) for c in
                                 (*source.cards.player, *source.cards.banker))
        events = layouts.coup_events(mine, list(source.cards.player), list(source.cards.banker),
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
        events = pl.concat([events, _joined_wagers(out, wagers, coups.filter(~pl.col("_again")),
                                                   marks)], how="diagonal_relaxed")
    return layouts.numbered_made(events)


def _dealer_cards_differ(export: Export, mine: pl.DataFrame) -> None:
    """Rows of a blackjack round whose dealer_cards differ from its first row's: each
    reported at its line, which withholds the round."""
    first = pl.col("_dealer").sort_by(FILE, ROW).first().over("table_id", "shoe_id", "round")
    differ = mine.filter(pl.col("_dealer") != first)
    for line, round_ in differ.select(v.LINE, "round").iter_rows():
        export.problems.append(Problem(
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


def _blackjack_coups(mine: pl.DataFrame, source: Source) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A blackjack coups source's rows as events (and where its wagers go)."""
    mine = mine.with_columns(
        pl.col("seat").cast(pl.Int64, strict=False),
        (pl.col("hand") if "hand" in mine.columns else pl.lit("1")).cast(
            pl.Int64, strict=False).fill_null(1).alias("hand"))
    events, marks = bj.coup_events(mine)
    if source.shoe_starts:
        shuffles = mine.filter("_new_shoe").select(
            "table_id", "game", "shoe_id", v.LINE, FILE, ROW, TABLE_ORDER, "ts",
            pl.col("_decks").alias("decks")).with_columns(
            pl.lit("shuffle").alias("event"), pl.lit("0").alias("round"),
            pl.lit(layouts.SHUFFLE).alias(layouts.SLOT))
        events = pl.concat([events, shuffles], how="diagonal_relaxed")
    events = events.with_columns(pl.col("seat", "hand").cast(pl.String))
    return events, marks


def _joined_wagers(out: Translated, wagers: pl.DataFrame, coups: pl.DataFrame,
                   anchors: pl.DataFrame | None) -> pl.DataFrame:
    """Each wagers row with its round (by round or by time), as events where the game
    puts them; a row that finds none is reported at its line. `anchors`: where a
    blackjack round's decisions place its wagers."""
    for c in ("table_id", "shoe_id", "round", "ts", "settle_order", "vig_order", "vig_mode"):
        if c not in wagers.columns:
            wagers = wagers.with_columns(pl.lit(None, pl.String).alias(c))
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
        mine = wagers.filter(pl.col(FILE) == number)
        if export.source.layout != "wagers" or not mine.height:
            continue
        if export.source.join == "round":
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
        if found.schema["ts"] != found.schema["_round_ts"]:
            found = found.with_columns(pl.col("ts", "_round_ts").cast(pl.String))
        found = found.with_columns(pl.coalesce("ts", "_round_ts").alias("ts"))
        joined.append(found)
        for table in found["table_id"].unique().to_list():
            out.tables.setdefault(table, set()).add("wagers")
            if "settle_order" in export.source.columns:
                out.tables[table].add("settle_order")
            if "vig_order" in export.source.columns or "vig" not in export.source.columns:
                out.tables[table].add("vig_order")
    if not joined:
        return pl.DataFrame()
    frame = pl.concat(joined, how="diagonal_relaxed")
    has_vig_order = any("vig_order" in e.source.columns for e in out.exports)
    blackjack = pl.col("game") == "blackjack"
    events = [layouts.wager_events(frame.filter(~blackjack), has_vig_order)]
    if anchors is not None and frame.filter(blackjack).height:
        events.append(bj.wager_events(frame.filter(blackjack), anchors))
    return _order_not_recorded(out, pl.concat(events, how="diagonal_relaxed"))


def _order_not_recorded(out: Translated, events: pl.DataFrame) -> pl.DataFrame:
    """Rounds where a settlement has no settle_order (or a vig no vig_order): their order
    of settlement is not evidenced (noted per table and round)."""
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



