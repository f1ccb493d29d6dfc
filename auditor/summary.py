"""summary.json: what was read, audited and reported, and what was found.

Row accounting is computed from two sides and must balance: every row read is
either in an audited round or reported (bad, unreadable, or in a round that
lost a row).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from . import __version__, dealers
from .audit import AuditResult
from .ingest.partition import InputFile
from .ingest.sources import sha256_of
from .ingest.vocabulary import GAMES
from .rules.catalog import REGISTRY
from .rules.registry import SEVERITIES


def _money(findings: pl.DataFrame, overcharge_rules: set[str]) -> dict[str, float]:
    amounts = findings.filter(pl.col("amount").is_not_null() & (pl.col("amount") != 0))
    over = pl.col("rule_id").is_in(sorted(overcharge_rules))
    sums = amounts.select(
        pl.col("amount").filter((pl.col("amount") > 0) & ~over).sum().alias("underpaid"),
        pl.col("amount").filter((pl.col("amount") > 0) & over).sum().alias("overcharged"),
        (-pl.col("amount").filter(pl.col("amount") < 0)).sum().alias("overpaid"),
    ).row(0, named=True)
    return {k: round(float(v or 0), 2) for k, v in sums.items()}


def accounting(result: AuditResult) -> dict[str, Any]:
    log = result.totals
    lost = log.records_lost
    rows_read = log.rows_read
    rows_audited = log.rows_audited
    # Reported rows counted directly: records lost, rows whose place is unknown,
    # and rows of unauditable rounds.
    rows_reported = lost + log.rows_unplaced + log.rows_withheld
    rounds_read = log.rounds_read
    rounds_reported = log.rounds_withheld
    rows = {
        "read": rows_read,
        "audited": rows_audited,
        "reported": rows_reported,
        "unreadable_records": lost,
        "balanced": rows_read == rows_audited + rows_reported,
    }
    if result.export is not None:
        # exports: `read` counts their rows; audited and reported count the events
        # made from them, which `events` balances
        export = result.export.accounting()
        rows = {**rows, "read": export["read"], "events": rows_read, "export": export,
                "balanced": rows["balanced"] and export["balanced"]}
    return {
        "rows": rows,
        "rounds": {
            "read": rounds_read,
            "audited": rounds_read - rounds_reported,
            "reported": rounds_reported,
        },
    }


def _per_table(result: AuditResult) -> list[dict[str, Any]]:
    log = result.totals
    read = log.tables.drop("rows_audited", "rounds_audited")
    # rows whose round or seq did not parse still count for their table
    unplaced = (
        log.unplaced.filter(pl.col("table_id").is_not_null())
        .select("table_id", pl.col("rows").alias("rows_unplaced"), "game")
    )
    read = (
        read.join(unplaced, on="table_id", how="full", coalesce=True)
        .with_columns(
            pl.coalesce("game", "game_right").alias("game"),
            (pl.col("rows_placed").fill_null(0) + pl.col("rows_unplaced").fill_null(0))
            .alias("rows_read"),
        )
        .drop("game_right", "rows_placed", "rows_unplaced")
    )
    audited = log.tables.select("table_id", "rows_audited", "rounds_audited")
    found = (
        result.findings.filter(pl.col("table_id").is_not_null())
        .group_by("table_id")
        .agg(
            pl.len().alias("findings"),
            (pl.col("severity") == "error").sum().alias("errors"),
            pl.col("amount").filter(pl.col("amount") > 0).sum().alias("amount_against_patrons"),
            (-pl.col("amount").filter(pl.col("amount") < 0)).sum().alias("amount_overpaid"),
        )
    )
    table = (
        read.join(audited, on="table_id", how="left")
        .join(found, on="table_id", how="left")
        .with_columns(
            pl.col(pl.UInt32, pl.Int64).exclude("rows_read").fill_null(0),
            pl.col(pl.Float64).fill_null(0.0),
        )
        .sort("table_id")
    )
    rows = []
    for r in table.iter_rows(named=True):
        settings = result.house.table(r["table_id"], r["game"] or "baccarat")
        rows.append(
            {
                "table_id": r["table_id"],
                "game": r["game"],
                "pit": settings.pit,
                "listed_in_house_rules": settings.listed,
                "rows_read": r["rows_read"],
                "rows_audited": r["rows_audited"],
                "rows_reported": r["rows_read"] - r["rows_audited"],
                "rounds_read": r["rounds_read"],
                "rounds_audited": r["rounds_audited"],
                "first_event": r["first"].isoformat() if r["first"] else None,
                "last_event": r["last"].isoformat() if r["last"] else None,
                "findings": r["findings"],
                "errors": r["errors"],
                "amount_against_patrons": round(float(r["amount_against_patrons"]), 2),
                "amount_overpaid": round(float(r["amount_overpaid"]), 2),
            }
        )
    return rows


def _dealer_row(dealer: str | None, tables: list[str], rounds: int, r: dict) -> dict[str, Any]:
    rule_errors = r.get("rule_errors") or 0
    return {
        "dealer_id": dealer,
        "tables": tables,
        "rounds_dealt": rounds,
        "findings": r.get("findings") or 0,
        "by_severity": {"error": r.get("errors") or 0, "warning": r.get("warnings") or 0},
        "rule_errors": rule_errors,
        "errors_per_1000_rounds": round(rule_errors * 1000 / rounds, 2) if rounds else None,
        "money": {k: round(float(r.get(k) or 0), 2)
                  for k in ("underpaid", "overcharged", "overpaid")},
    }


def _per_dealer(result: AuditResult, overcharge_rules: set[str]) -> list[dict[str, Any]]:
    """Per dealer the logs name (by dealer_id): the tables and rounds dealt (the audit's
    own rounds, by the dealer their round_start names), the findings on them and on the
    shoes the dealer shuffled by severity, the errors of the game rules among them (not
    the input's: a bad row is the table system's) and those per 1,000 rounds dealt, and
    money at stake; then, where some rounds name no dealer, those rounds and their
    findings (`dealer_id` null). Empty where the logs name no dealer."""
    dealt = pl.concat([pl.DataFrame(schema=dealers.DEALT), *result.totals.dealt])
    findings = result.findings
    if dealt.is_empty() and findings.get_column("dealer_id").null_count() == findings.height:
        return []
    amount = pl.col("amount")
    over = pl.col("rule_id").is_in(sorted(overcharge_rules))
    games = sorted(r.id for r in REGISTRY.all() if r.scope in GAMES)
    error = pl.col("severity") == "error"
    counted = [
        pl.len().alias("findings"),
        error.sum().alias("errors"),
        (error & pl.col("rule_id").is_in(games)).sum().alias("rule_errors"),
        (pl.col("severity") == "warning").sum().alias("warnings"),
        amount.filter((amount > 0) & ~over).sum().alias("underpaid"),
        amount.filter((amount > 0) & over).sum().alias("overcharged"),
        (-amount.filter(amount < 0)).sum().alias("overpaid"),
        pl.col("table_id").drop_nulls().unique().alias("tables"),
    ]
    # a finding without a dealer counts as "not recorded" where it is on a known round
    on_round = pl.col("table_id").is_not_null() & pl.col("shoe_id").is_not_null() & (
        pl.col("round") > 0)
    on_rounds = findings.filter(pl.col("dealer_id").is_not_null() | on_round.fill_null(False))
    found = {r["dealer_id"]: r for r in
             on_rounds.group_by("dealer_id").agg(counted).iter_rows(named=True)}
    rounds = {r["dealer_id"]: r for r in dealt.group_by("dealer_id").agg(
        pl.col("rounds").sum(), pl.col("table_id").unique().alias("tables")).iter_rows(named=True)}
    rows = []
    for dealer in sorted((set(rounds) | set(found)) - {None}):
        r, d = found.get(dealer, {}), rounds.get(dealer, {})
        tables = sorted({*(d.get("tables") or []), *(r.get("tables") or [])})
        rows.append(_dealer_row(dealer, tables, d.get("rounds") or 0, r))
    # the rounds whose round_start names no dealer: each table's rounds less those named
    per_table = dealt.group_by("table_id").agg(pl.col("rounds").sum().alias("named"))
    unnamed = (
        result.totals.tables.group_by("table_id").agg(pl.col("rounds_read").sum())
        .join(per_table, on="table_id", how="left")
        .select("table_id", (pl.col("rounds_read") - pl.col("named").fill_null(0))
                .alias("rounds"))
        .filter(pl.col("rounds") > 0)
    )
    r = found.get(None, {})
    if unnamed.height or r:
        tables = sorted({*unnamed["table_id"].to_list(), *(r.get("tables") or [])})
        rows.append(_dealer_row(None, tables, int(unnamed["rounds"].sum()), r))
    return rows


def build(result: AuditResult, run_at: datetime) -> dict[str, Any]:
    ing, findings = result.totals, result.findings
    registry_over = {r for r in result.rule_ids if _is_overcharge(r)}
    times = pl.concat([ing.tables["first"], ing.tables["last"]]).drop_nulls()
    by_rule = findings.group_by("rule_id").agg(pl.len()).sort("rule_id")
    context = set(result.scope.context_files)
    return {
        "auditor_version": __version__,
        "run_at": run_at.isoformat(timespec="seconds"),
        # the folder is put in place only once its report and its store write are done
        # (run_folder): a summary.json read there is of a complete run
        "complete": True,
        "facility": result.house.facility,
        "house_rules": {
            "path": str(result.house.path) if result.house.path else None,
            "sha256": sha256_of(result.house.path) if result.house.path else None,
        },
        "ruleset": {
            game: {
                "section": result.rulesets.section_of(game)[0],
                "effective": result.rulesets.effective_date(game, on=result.on).isoformat(),
                "as_of": result.on.isoformat(),
                # days within the period a value changed: each round is judged by its day's
                "amended": [d.isoformat() for d in result.rulesets.amendments(
                    game, result.on, times.max().date())] if times.len() else [],
            }
            for game in ("baccarat", "blackjack")
        },
        "period": {
            "start": times.min().isoformat() if times.len() else None,
            "end": times.max().isoformat() if times.len() else None,
            # (hand-history-v1 1.3, No clock) the tables whose rows record no times
            **_untimed(result),
        },
        "window": result.scope.window.as_dict() if result.scope.window else None,
        "inputs": [_file(f) for n, f in enumerate(ing.files) if n not in context],
        "context": [_file(f) for n, f in enumerate(ing.files) if n in context],
        **accounting(result),
        "tables": _per_table(result),
        "findings": {
            "total": findings.height,
            "by_severity": _by_severity(findings),
            "by_rule": {r: n for r, n in by_rule.iter_rows()},
        },
        "money": _money(findings, registry_over),
        "dealers": _per_dealer(result, registry_over),
        "rules_applied": result.rule_ids,
        # which rules were judged on which tables, and why not where they were not
        "coverage": result.coverage.as_dict() if result.coverage is not None else None,
        "profile": _profile(result),
        # how the audit ran: its memory budget, its parts and where they ran
        "execution": result.plan.as_dict() if result.plan is not None else None,
    }


def _untimed(result: AuditResult) -> dict[str, Any]:
    """"times": "recorded", "not recorded" (no table's rows have a time) or "partly
    recorded", and the tables whose rows record none."""
    tables = result.coverage.untimed() if result.coverage is not None else []
    every = result.coverage.tables if result.coverage is not None else {}
    state = ("recorded" if not tables else
             "not recorded" if len(tables) == len(every) else "partly recorded")
    return {"times": state, "untimed_tables": tables}


def _by_severity(findings: pl.DataFrame) -> dict[str, int]:
    """The findings per severity that has any, in SEVERITIES' order (error, then warning):
    a group-by returns its groups in no fixed order, and summary.json is the same bytes
    for the same inputs (but for run_at)."""
    counts = dict(findings.group_by("severity").agg(pl.len()).iter_rows())
    return {s: counts[s] for s in sorted(counts, key=_severity_rank)}


def _severity_rank(severity: str) -> tuple[int, str]:
    # a severity outside the registry's (none today) after theirs, by name
    known = severity in SEVERITIES
    return (SEVERITIES.index(severity) if known else len(SEVERITIES), severity)


def _profile(result: AuditResult) -> dict[str, Any] | None:
    """The export profile the logs were read through (None: hand histories)."""
    if result.export is None:
        return None
    profile = result.export.profile
    return {"name": profile.name, "path": str(profile.path), "sha256": profile.sha256,
            "skipped": [str(p) for p in result.export.skipped]}


def _file(f: InputFile) -> dict[str, Any]:
    return {"path": str(f.path), "encoding": f.encoding, "rows": f.rows, "bytes": f.size,
            "sha256": f.sha256}


def _is_overcharge(rule_id: str) -> bool:
    from .rules.catalog import REGISTRY

    return REGISTRY.get(rule_id).overcharge


def write(summary: dict[str, Any], out: Path) -> Path:
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
