"""Auditing one part of the log (the rows of a few whole tables): read, check,
run every game rule, and keep what the whole audit needs of it.

A part is audited on its own, in this process or in a worker process: what it
gives back (`PartResult`) is small (findings, counts, the rows of the shoes
with findings, and the evidence of the rules judged across parts).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from functools import partial

import polars as pl

from . import dealers, eras
from . import findings as fnd
from .audit_context import GameContext, gaps_of, table_settings
from .games.blackjack import final_hands as blackjack_hands
from .house import HouseRules
from .ingest.load import ROUND_KEY, Ingested, ingest_part
from .ingest.partition import Log
from .ingest.rows import rows_with_keys
from .ingest.totals import PartTotals, part_totals
from .ingest.vocabulary import GAMES
from .rules import catalog
from .rules.input_quality import ROUND_NOT_AUDITABLE, TABLE_NOT_IN_HOUSE_RULES
from .rules.registry import Rule
from .rulesets import Rulesets
from .scope import findings_in_scope, rows_in_scope


def game_rules() -> dict[str, list[Rule]]:
    return {
        game: [r for r in catalog.REGISTRY.for_scope(game) if r.check is not None]
        for game in GAMES
    }


@dataclass
class Setting:
    """What every part is audited under."""

    log: Log
    house: HouseRules
    rulesets: Rulesets
    on: date  # the day whose ruleset applies


@dataclass
class PartResult:
    found: pl.DataFrame  # located findings of the rules judged within the part
    totals: PartTotals
    orphans: pl.DataFrame  # rows whose round is not known (see ingest_part)
    evidence: dict[str, pl.DataFrame]  # per rule judged across parts
    places: pl.DataFrame  # (table_id, seq, file_id, line) of the rows the evidence names
    contexts: dict[str, GameContext] = field(default_factory=dict)  # kept in-process only


def _not_auditable(ingested: Ingested) -> pl.DataFrame:
    """One warning per round that lost a row, at its first row (a round set aside where
    the log was cut, or for a column its file lacks, is said once, not per round)."""
    lost = ingested.unauditable.join(ingested.said_once, on=ROUND_KEY, how="anti",
                                     nulls_equal=True)
    firsts = (
        rows_with_keys(ingested.events, lost, ROUND_KEY)
        .group_by(ROUND_KEY)
        .agg(pl.col("game").first(), pl.col("seq").min())
    )
    rounds = lost.join(firsts, on=ROUND_KEY, how="left")
    shoe_level = pl.col("round") == 0
    return rounds.select(
        *ROUND_KEY,
        "seq",
        "game",
        pl.lit(ROUND_NOT_AUDITABLE.id).alias("rule_id"),
        pl.when(shoe_level)
        .then(
            pl.format(
                "The shoe-level events of shoe {} before round 1 lost a row; its shoe "
                "procedure is not judged.",
                "shoe_id",
            )
        )
        .otherwise(
            pl.format(
                "Round {} of shoe {} lost a row and is reported, not judged on partial data.",
                "round",
                "shoe_id",
            )
        )
        .alias("message"),
        pl.lit("every row of the round readable and valid").alias("expected"),
        pl.lit("a bad or unreadable row").alias("observed"),
    )


def _games_of_tables(events: pl.DataFrame) -> pl.DataFrame:
    """(table_id, game, seq): each table's games and the first seq of each. A table
    has one game but in a faulty log: then grouping by the table alone (its rows in
    runs, the events being sorted by table) says it all, without hashing pairs."""
    known = pl.col("game").is_in(GAMES)
    per_table = (
        events.group_by("table_id")
        .agg(
            pl.col("game").filter(known).n_unique().alias("games"),
            pl.col("game").filter(known).first(),
            pl.col("seq").filter(known).min(),
        )
        .filter(pl.col("table_id").is_not_null() & (pl.col("games") > 0))
    )
    if per_table.select((pl.col("games") > 1).any()).item():
        per_table = (
            events.filter(pl.col("table_id").is_not_null() & known)
            .group_by("table_id", "game")
            .agg(pl.col("seq").min())
        )
    return per_table.select("table_id", "game", "seq").sort("table_id", "game")


def _unlisted_tables(events: pl.DataFrame, house: HouseRules) -> pl.DataFrame:
    tables = _games_of_tables(events)
    unlisted = [
        row
        for row in tables.iter_rows(named=True)
        if not house.table(row["table_id"], row["game"]).listed
    ]
    return pl.DataFrame(
        [
            {
                "table_id": r["table_id"],
                "seq": r["seq"],
                "game": r["game"],
                "rule_id": TABLE_NOT_IN_HOUSE_RULES.id,
                "message": f"Table {r['table_id']} ({r['game']}) is not listed in the house "
                "rules; it is audited under the section defaults.",
                "expected": f'a [[tables]] entry for {r["table_id"]} with game = "{r["game"]}"',
                "observed": "no entry"
                if r["table_id"] not in house.tables
                else f"listed as {house.tables[r['table_id']].game}",
            }
            for r in unlisted
        ],
        schema={
            "table_id": pl.String,
            "seq": pl.Int64,
            "game": pl.String,
            "rule_id": pl.String,
            "message": pl.String,
            "expected": pl.String,
            "observed": pl.String,
        },
    )


# Rules checked at once over a part: a rule is many short polars steps, each leaving
# a core idle at times; two at a time fill them (their results are taken in order)
RULES_AT_ONCE = 2

# The frames a game's rules share that are built with the part's reading, in the
# worker's thread that reads the next part while the rules check this one: blackjack's
# rules take longer than its reading, so its replay's first frames are built on the
# reading's side, and the two stages take about as long (docs/guides/large-logs.md)
BUILT_AHEAD: dict[str, Callable[[GameContext], object]] = {
    "blackjack": blackjack_hands.build_ahead,
}


@dataclass
class Prepared:
    """A part read and checked, with each game's context (None: no row of the game),
    its shared frames built ahead where the game has some (BUILT_AHEAD)."""

    ingested: Ingested
    contexts: dict[str, GameContext | None]


def prepare_part(setting: Setting, tables: list[str] | None, first: bool, row_offset: int,
                 orphans: pl.DataFrame | None) -> Prepared:
    """The part read and checked (ingest_of) and its games' contexts, ready for the
    rules."""
    part = ingest_of(setting, tables, first, row_offset, orphans)
    contexts = {game: _context(game, part, setting) for game in GAMES}
    for game, ctx in contexts.items():
        if ctx is not None and game in BUILT_AHEAD:
            BUILT_AHEAD[game](ctx)
    return Prepared(part, contexts)


def _context(game: str, part: Ingested, setting: Setting) -> GameContext | None:
    """What the game's rules check: the part's auditable rows of the game."""
    events = part.audited
    if events.select((pl.col("game") != game).any()).item():
        events = events.filter(pl.col("game") == game)  # copy only when games are mixed
    if events.is_empty():
        return None
    house, on = setting.house, setting.on
    params = setting.rulesets.params(game, on=on)
    table_ids = events["table_id"].unique().sort()
    tables = table_settings(house, game, table_ids.to_list())
    return GameContext(game, events, house, params, on, tables,
                       gaps_of(part.unauditable, table_ids, part.events))


def _game_checks(
    game: str, rules: list[Rule], ctx: GameContext | None, tick: Callable[[str], None],
) -> tuple[list[pl.DataFrame], dict[str, pl.DataFrame]]:
    """The check rows of the rules judged within the part, and the evidence of those
    judged across parts."""
    if ctx is None or not rules:
        return [], {}
    checks, evidence = [], {}
    with ThreadPoolExecutor(RULES_AT_ONCE) as pool:
        results = [pool.submit(rule.check, ctx) for rule in rules]
        for rule, result in zip(rules, results, strict=True):
            tick(f"checking {game}: {rule.id}")
            if rule.across is not None:
                evidence[rule.id] = result.result()
            else:
                checks.append(fnd.from_check(rule, result.result(), game))
    return checks, evidence


def _places(evidence: dict[str, pl.DataFrame], events: pl.DataFrame) -> pl.DataFrame:
    """Where each row the evidence names is (its findings are located at the end); the
    evidence of every shoe's cards carries its rows' places itself."""
    named = [e.select("table_id", "seq") for e in _naming_shoes(evidence)]
    wanted = pl.concat(named) if named else events.select("table_id", "seq").clear()
    return fnd.places(events, wanted)


def _finding_shoes(located: pl.DataFrame, part: Ingested,
                   evidence: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The shoes the report may show: of the findings and problems, and those the
    evidence of rules judged across parts names."""
    keys = ["table_id", "shoe_id"]
    shoes = [located.select(keys), part.problems.select(keys)]
    shoes += [e.select(keys) for e in _naming_shoes(evidence)]
    return pl.concat(shoes, how="vertical_relaxed").drop_nulls().unique()


def _naming_shoes(evidence: dict[str, pl.DataFrame]) -> list[pl.DataFrame]:
    """The evidence of the rules whose evidence names the shoes of their findings
    (Rule.evidence_names_shoes: not that of every shoe's cards)."""
    return [e for rule, e in evidence.items() if catalog.REGISTRY.get(rule).evidence_names_shoes]


def run_part(setting: Setting, step: tuple) -> PartResult:
    """One part audited where an executor runs it (a local process, a Dask worker): a
    function of the part (tables, first, row offset, orphans) and the setting only."""
    return audit_part(setting, *step)


def ingest_of(setting: Setting, tables: list[str] | None, first: bool, row_offset: int,
              orphans: pl.DataFrame | None) -> Ingested:
    """A part's rows read and checked, before the rules (see ingest_part)."""
    seats = tuple(setting.house.baccarat["seats"])
    return ingest_part(setting.log, tables, seats, first, row_offset, orphans,
                       _gapless(setting.house))


def _gapless(house: HouseRules) -> pl.Expr | None:
    """Which tables' systems number events without gaps (house seq_gapless); None: none."""
    on, off = house.gapless_tables()
    if house.seq_gapless:
        return ~pl.col("table_id").is_in(off)
    return pl.col("table_id").is_in(on) if on else None


def audit_part(
    setting: Setting,
    tables: list[str] | None,
    first: bool,
    row_offset: int,
    orphans: pl.DataFrame | None,
    tick: Callable[[str], None] = lambda _: None,
    keep_contexts: bool = False,
    prepared: Prepared | None = None,
    after_ingest: Callable[[], None] = lambda: None,
) -> PartResult:
    """`prepared`: the part already read and checked (prepare_part), else it is read
    here; `after_ingest` is called once it is, before the rules run."""
    prepared = prepared or prepare_part(setting, tables, first, row_offset, orphans)
    part = prepared.ingested
    after_ingest()
    checks = [
        fnd.as_check_rows(_not_auditable(part)),
        fnd.as_check_rows(_unlisted_tables(rows_in_scope(part.events), setting.house)),
    ]
    evidence: dict[str, pl.DataFrame] = {}
    contexts = {}
    for game, rules in game_rules().items():
        ctx = prepared.contexts[game]
        game_checks, game_evidence = [], {}
        if ctx is not None and rules:
            game_checks, game_evidence = eras.checks_in_force(
                ctx, setting.rulesets, partial(_game_checks, game, rules, tick=tick))
        checks += game_checks
        evidence.update(game_evidence)
        if ctx is not None and rules and keep_contexts:
            contexts[game] = ctx  # its frames are built already: the report reuses them
    located = findings_in_scope(
        fnd.located(pl.concat(checks), part.events, setting.log.files), part.events)
    # each finding and input problem with the dealer of its round or shoe
    named = dealers.named(part.events)
    located = dealers.on_findings(located, named)
    part.problems = dealers.on_findings(part.problems, named)
    totals = part_totals(part, _finding_shoes(located, part, evidence), setting.log.scope,
                         named.dealt() if named is not None else None)
    return PartResult(located, totals, part.orphans, evidence, _places(evidence, part.events),
                      contexts)
