"""The law in force on each round's own day.

The rulesets keep every parameter with the dates its values took effect. A part
whose rounds all fall before the next amendment is judged once, under the values in
force on the audit's first day. A part that spans an amendment is judged once per
era (from one amendment to the next) with that era's values, and each era keeps the
findings of its own rows only: a round by the day it started, a shoe-level row by
its own day.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import polars as pl

from .audit_context import GameContext
from .ingest.rows import rows_with_keys
from .rulesets import Rulesets
from .scope import as_round_starts

DAY = "_day"
Checks = tuple[list[pl.DataFrame], dict[str, pl.DataFrame]]


def eras(ctx: GameContext, rs: Rulesets) -> list[tuple[date, date | None]]:
    """(first day, day after the last) of each era of the part's rounds; one era, from
    ctx.on, where no amendment falls within them."""
    last = ctx.events.select(pl.col("time").max()).item()
    changes = rs.amendments(ctx.game, ctx.on, last.date()) if last is not None else []
    starts = [ctx.on, *changes]
    return list(zip(starts, [*changes, None], strict=True))


def _round_days(ctx: GameContext) -> pl.DataFrame:
    """(table_id, seq, day) of every row: the day of its round's start."""
    day = ctx.events.select(pl.col("time").dt.date().alias(DAY))[DAY]
    return ctx.events.select("table_id", "seq").with_columns(as_round_starts(ctx.events, day))


def _in_era(found: pl.DataFrame, days: pl.DataFrame, start: date, end: date | None,
            first: bool) -> pl.DataFrame:
    """The rows of `found` (check rows or evidence, by table_id and seq) on days from
    `start` until `end`; a row without a day belongs to the first era."""
    keys = ["table_id", "seq"]
    # packed shoes (games.shoe_order.packed) hold their cards' seqs as a list: a shoe
    # belongs to the era of its first card's round
    packed = isinstance(found.schema.get("seq"), pl.List)
    key = found.select(pl.col("table_id").cast(days.schema["table_id"]),
                       pl.col("seq").list.first() if packed else pl.col("seq"))
    named = rows_with_keys(days, key.drop_nulls(), keys).unique(keys)
    dated = key.join(named, on=keys, how="left", maintain_order="left")
    inside = pl.col(DAY) >= start
    if end is not None:
        inside = inside & (pl.col(DAY) < end)
    # (named is unique on the keys: `dated` has a row for each row of `found`, in order)
    return found.filter(dated.select(inside.fill_null(first)).to_series())


def checks_in_force(ctx: GameContext, rs: Rulesets,
                    run: Callable[[GameContext], Checks]) -> Checks:
    """`run`'s check rows and evidence, each era's under the values then in force."""
    periods = eras(ctx, rs)
    if len(periods) == 1:
        return run(ctx)
    days = _round_days(ctx)
    checks, evidence = [], {}
    for number, (start, end) in enumerate(periods):
        era = ctx if number == 0 else GameContext(
            ctx.game, ctx.events, ctx.house, rs.params(ctx.game, on=start), start, ctx.tables,
            ctx.gaps)
        era_checks, era_evidence = run(era)
        checks += [_in_era(c, days, start, end, number == 0) for c in era_checks]
        for rule_id, frame in era_evidence.items():
            kept = _in_era(frame, days, start, end, number == 0)
            evidence[rule_id] = pl.concat([evidence[rule_id], kept]) if rule_id in evidence \
                else kept
    return checks, evidence
