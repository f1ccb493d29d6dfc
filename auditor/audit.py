"""One audit: read the logs, check every rule, gather findings and the summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from . import findings as fnd
from .audit_context import GameContext, table_settings
from .house import HouseRules
from .ingest.load import ROUND_KEY, Ingested, ingest
from .ingest.sources import Source
from .rules import catalog
from .rules.input_quality import ROUND_NOT_AUDITABLE, TABLE_NOT_IN_HOUSE_RULES
from .rules.registry import Rule
from .rulesets import Rulesets

GAMES = ("baccarat", "blackjack")

# progress(stage, done, total): what is being done and, where countable, how far along
Progress = Callable[..., None]


@dataclass
class AuditResult:
    ingested: Ingested
    findings: pl.DataFrame
    house: HouseRules
    rulesets: Rulesets
    on: date  # the day whose ruleset applies: the first day of the logs
    rule_ids: list[str]  # rules applied
    contexts: dict[str, GameContext] = field(default_factory=dict)  # per game, with its frames


def _audit_date(events: pl.DataFrame) -> date:
    first = events["time"].min() if events.height else None
    return first.date() if first is not None else date.today()


def _not_auditable(ingested: Ingested) -> pl.DataFrame:
    """One warning per round that lost a row, at its first row."""
    firsts = (
        ingested.events.join(ingested.unauditable, on=ROUND_KEY, how="semi")
        .group_by(ROUND_KEY)
        .agg(pl.col("game").first(), pl.col("seq").min())
    )
    rounds = ingested.unauditable.join(firsts, on=ROUND_KEY, how="left")
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


def _unlisted_tables(events: pl.DataFrame, house: HouseRules) -> pl.DataFrame:
    tables = (
        events.filter(pl.col("table_id").is_not_null() & pl.col("game").is_in(GAMES))
        .group_by("table_id", "game")
        .agg(pl.col("seq").min())
        .sort("table_id")
    )
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


# Rows of one batch of tables: the rules' shared frames are built per batch, so the
# memory they take follows the batch, not the whole log.
BATCH_ROWS = 3_000_000


def _batches(events: pl.DataFrame, tables: pl.DataFrame) -> list[list[str]]:
    """Tables in batches of about BATCH_ROWS rows, a pit never split (the (g)(3) rule
    compares the tables of a pit); a table without a pit is a group of its own."""
    sizes = events.group_by("table_id").len().join(
        tables.select("table_id", "pit"), on="table_id", how="left"
    )
    groups = (
        sizes.with_columns(pl.coalesce("pit", pl.format("table:{}", "table_id")).alias("group"))
        .group_by("group", maintain_order=True)
        .agg(pl.col("table_id"), pl.col("len").sum())
        .sort("group")
    )
    batches: list[list[str]] = [[]]
    rows = 0
    for table_ids, length in groups.select("table_id", "len").iter_rows():
        if batches[-1] and rows + length > BATCH_ROWS:
            batches.append([])
            rows = 0
        batches[-1].extend(table_ids)
        rows += length
    return batches


def _game_findings(
    game: str,
    rules: list[Rule],
    ingested: Ingested,
    house: HouseRules,
    rs: Rulesets,
    on: date,
    progress: Progress,
    contexts: dict[str, GameContext],
) -> list[pl.DataFrame]:
    events = ingested.audited
    if events.select((pl.col("game") != game).any()).item():
        events = events.filter(pl.col("game") == game)  # copy only when games are mixed
    if events.is_empty() or not rules:
        return []
    params = rs.params(game, on=on)
    tables = table_settings(house, game, events["table_id"].unique().sort().to_list())
    batches = _batches(events, tables)
    out = []
    for number, batch in enumerate(batches, start=1):
        part = events if len(batches) == 1 else events.filter(pl.col("table_id").is_in(batch))
        ctx = GameContext(game, part, house, params, on, tables)
        for index, rule in enumerate(rules, start=1):
            done = (number - 1) * len(rules) + index - 1
            progress(f"checking {game}: {rule.id}", done, len(rules) * len(batches))
            out.append(fnd.from_check(rule, rule.check(ctx), game))
        if len(batches) == 1:
            contexts[game] = ctx
    if len(batches) > 1:
        contexts[game] = _context_of_findings(game, events, out, house, params, on, tables)
    return out


def _context_of_findings(game: str, events: pl.DataFrame, checks: list[pl.DataFrame],
                         house: HouseRules, params: dict, on: date,
                         tables: pl.DataFrame) -> GameContext:
    """A context over the shoes that have findings only, for the report's replays (its
    frames are per round and per shoe, so they come out as over the whole log)."""
    shoes = pl.concat(checks).select("table_id", "shoe_id").drop_nulls().unique()
    part = events.join(shoes, on=["table_id", "shoe_id"], how="semi")
    return GameContext(game, part, house, params, on, tables)


def run(
    sources: list[Source], house: HouseRules, rs: Rulesets,
    progress: Progress = lambda *_: None,
) -> AuditResult:
    seats = tuple(house.baccarat["seats"])
    ingested = ingest(sources, baccarat_seats=seats)
    on = _audit_date(ingested.events)
    checks = [
        fnd.as_check_rows(_not_auditable(ingested)),
        fnd.as_check_rows(_unlisted_tables(ingested.events, house)),
    ]
    applied = [r.id for r in catalog.REGISTRY.all() if r.scope in ("input", "house")]
    contexts: dict[str, GameContext] = {}
    for game in GAMES:
        rules = [r for r in catalog.REGISTRY.for_scope(game) if r.check is not None]
        checks += _game_findings(game, rules, ingested, house, rs, on, progress, contexts)
        applied += [r.id for r in rules]
    parts = [
        fnd.from_problems(ingested.problems, ingested.files),
        fnd.located(pl.concat(checks), ingested.events, ingested.files),
    ]
    findings = fnd.order(pl.concat(parts))
    return AuditResult(ingested, findings, house, rs, on, applied, contexts)
