"""One audit: read the logs, check every rule, gather findings and the summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from . import findings as fnd
from .audit_context import GameContext, table_settings
from .house import HouseRules
from .ingest.load import ROUND_KEY, Ingested, ingest_part
from .ingest.partition import Log, open_log
from .ingest.sources import Source
from .ingest.totals import LogTotals, problems_deduplicated
from .rules import catalog
from .rules.input_quality import ROUND_NOT_AUDITABLE, TABLE_NOT_IN_HOUSE_RULES
from .rules.registry import Rule
from .rulesets import Rulesets

GAMES = ("baccarat", "blackjack")

# progress(stage, done, total): what is being done and, where countable, how far along
Progress = Callable[..., None]


@dataclass
class AuditResult:
    ingested: LogTotals
    findings: pl.DataFrame
    house: HouseRules
    rulesets: Rulesets
    on: date  # the day whose ruleset applies: the first day of the logs
    rule_ids: list[str]  # rules applied
    contexts: dict[str, GameContext] = field(default_factory=dict)  # per game, with its frames


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


# Rows of one part of the log: the log is read, checked and audited a part of whole
# tables at a time, so the memory an audit takes follows the part, not the log.
PART_ROWS = 3_000_000


def _parts(log: Log, house: HouseRules) -> list[list[str] | None]:
    """Tables in parts of about PART_ROWS rows, a pit never split (the (g)(3) rule
    compares the tables of a pit); a table without a pit is a group of its own. A
    log of one part is read whole (None: every table)."""
    sizes = log.table_rows.filter(pl.col("table_id").is_not_null())
    if log.table_rows["rows"].sum() <= PART_ROWS:
        return [None]
    pits = {t: rules.pit for t, rules in house.tables.items()}
    groups = (
        sizes.with_columns(
            pl.col("table_id").replace_strict(pits, default=None, return_dtype=pl.String)
            .fill_null(pl.format("table:{}", "table_id")).alias("group")
        )
        .group_by("group", maintain_order=True)
        .agg(pl.col("table_id"), pl.col("rows").sum())
        .sort("group")
    )
    parts: list[list[str]] = [[]]
    rows = 0
    for table_ids, length in groups.select("table_id", "rows").iter_rows():
        if parts[-1] and rows + length > PART_ROWS:
            parts.append([])
            rows = 0
        parts[-1].extend(table_ids)
        rows += length
    return parts


def _game_findings(
    game: str,
    rules: list[Rule],
    part: Ingested,
    house: HouseRules,
    rs: Rulesets,
    on: date,
    tick: Callable[[str], None],
) -> tuple[list[pl.DataFrame], GameContext | None]:
    events = part.audited
    if events.select((pl.col("game") != game).any()).item():
        events = events.filter(pl.col("game") == game)  # copy only when games are mixed
    if events.is_empty() or not rules:
        return [], None
    params = rs.params(game, on=on)
    tables = table_settings(house, game, events["table_id"].unique().sort().to_list())
    ctx = GameContext(game, events, house, params, on, tables)
    out = []
    for rule in rules:
        tick(f"checking {game}: {rule.id}")
        out.append(fnd.from_check(rule, rule.check(ctx), game))
    return out, ctx


def _context_of_findings(game: str, kept: pl.DataFrame, house: HouseRules, rs: Rulesets,
                         on: date) -> GameContext:
    """A context over the shoes that have findings only, for the report's replays (its
    frames are per round and per shoe, so they come out as over the whole log)."""
    events = kept.filter(pl.col("game") == game)
    tables = table_settings(house, game, events["table_id"].unique().sort().to_list())
    return GameContext(game, events, house, rs.params(game, on=on), on, tables)


def _finding_shoes(located: pl.DataFrame, problems: pl.DataFrame) -> pl.DataFrame:
    keys = ["table_id", "shoe_id"]
    both = pl.concat([located.select(keys), problems.select(keys)], how="vertical_relaxed")
    return both.drop_nulls().unique()


def run(
    sources: list[Source], house: HouseRules, rs: Rulesets,
    progress: Progress = lambda *_: None,
) -> AuditResult:
    seats = tuple(house.baccarat["seats"])
    log = open_log(sources)
    on = log.first_day or date.today()
    parts = _parts(log, house)
    rules = {
        game: [r for r in catalog.REGISTRY.for_scope(game) if r.check is not None]
        for game in GAMES
    }
    applied = [r.id for r in catalog.REGISTRY.all() if r.scope in ("input", "house")]
    applied += [r.id for game in GAMES for r in rules[game]]
    steps = len(parts) * (1 + sum(len(r) for r in rules.values()))
    done = [0]

    def tick(stage: str) -> None:
        progress(stage, done[0], steps)
        done[0] += 1

    totals = LogTotals(log.files)
    contexts: dict[str, GameContext] = {}
    found: list[pl.DataFrame] = []
    orphans, offset = None, 0
    for number, tables in enumerate(parts):
        tick(f"reading part {number + 1} of {len(parts)}")
        part = ingest_part(log, tables, seats, number == 0, offset, orphans)
        offset += part.events.height + part.unplaced.height
        orphans = part.orphans if number == 0 else orphans
        checks = [
            fnd.as_check_rows(_not_auditable(part)),
            fnd.as_check_rows(_unlisted_tables(part.events, house)),
        ]
        for game in GAMES:
            game_checks, ctx = _game_findings(game, rules[game], part, house, rs, on, tick)
            checks += game_checks
            if ctx is not None and len(parts) == 1:
                contexts[game] = ctx  # its frames are built already: the report reuses them
        located = fnd.located(pl.concat(checks), part.events, log.files)
        found.append(located)
        totals.add(part, _finding_shoes(located, part.problems))
        del part, checks
    if len(parts) > 1:
        for game in GAMES:
            kept = totals.kept_audited
            if kept.select((pl.col("game") == game).any()).item():
                contexts[game] = _context_of_findings(game, kept, house, rs, on)
    totals.problems = problems_deduplicated(totals.problems)
    findings = fnd.order(pl.concat([fnd.from_problems(totals.problems, log.files), *found]))
    return AuditResult(totals, findings, house, rs, on, applied, contexts)
