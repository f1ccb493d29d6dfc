"""Findings: one row per exception, in the columns the spec names, and their files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from .ingest.partition import InputFile
from .ingest.rows import rows_with_keys
from .rules.registry import CHECK_COLUMNS, PART, REGISTRY, Rule
from .scope import IN_SCOPE

FINDING_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "round": pl.Int64(),
    "seq": pl.Int64(),
    "rule_id": pl.String(),
    "citation": pl.String(),
    "severity": pl.String(),
    "message": pl.String(),
    "expected": pl.String(),
    "observed": pl.String(),
    "amount": pl.Float64(),
    "file": pl.String(),
    "line": pl.Int64(),
    "game": pl.String(),
    "field": pl.String(),
    "dealer_id": pl.String(),  # the dealer of the finding's round or shoe (dealers.py)
}
# The findings as the audit gathers them: each with the rule part that gave it (check
# column `part`), which Coverage.keep reads; the audit drops the column before the
# findings leave it (audit.AuditResult.parts keeps it beside them)
GATHERED_SCHEMA: dict[str, pl.DataType] = {**FINDING_SCHEMA, PART: pl.String()}


def _with_metadata(frame: pl.DataFrame) -> pl.DataFrame:
    """Citation and severity come from the registry, never from the check; but a rule
    whose findings each name their paragraph (Rule.citation_per_finding) cites the
    check's, where it gives one."""
    meta = REGISTRY.metadata_frame().select("rule_id", "citation", "severity",
                                            "citation_per_finding")
    cited = "citation" in frame.columns
    frame = frame.rename({"citation": "_cited"}) if cited else frame
    frame = frame.drop("severity", strict=False).join(
        meta, on="rule_id", how="left", maintain_order="left"
    )
    if cited:
        own = pl.col("citation_per_finding").fill_null(False) & pl.col("_cited").is_not_null()
        frame = frame.with_columns(
            pl.when(own).then(pl.col("_cited")).otherwise(pl.col("citation")).alias("citation"))
    return frame.drop("_cited", "citation_per_finding", strict=False)


TAGGED_CHECK_COLUMNS = {**CHECK_COLUMNS, "rule_id": pl.String(), "game": pl.String()}


def as_check_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """Check rows (already tagged with rule_id and game) in the one shape `located` takes."""
    missing = [
        pl.lit(None, dtype).alias(c)
        for c, dtype in TAGGED_CHECK_COLUMNS.items()
        if c not in frame.columns
    ]
    return (
        frame.with_columns(missing)
        .select(list(TAGGED_CHECK_COLUMNS))
        .cast(TAGGED_CHECK_COLUMNS)
    )


def from_check(rule: Rule, raw: pl.DataFrame, game: str) -> pl.DataFrame:
    """A game rule's exceptions in the check columns, tagged with the rule and game."""
    if PART in raw.columns:
        _parts_known(rule, raw[PART])
    tagged = raw.with_columns(pl.lit(rule.id).alias("rule_id"), pl.lit(game).alias("game"))
    return as_check_rows(tagged)


def _parts_known(rule: Rule, parts: pl.Series) -> None:
    """A check row names one of its rule's parts, or none: a misspelt part would be kept
    where its evidence is lacking. The rows are few; their parts fewer."""
    unknown = set(parts.drop_nulls().unique()) - {p.name for p in rule.parts}
    if unknown:
        raise ValueError(f"rule {rule.id}: check rows name part(s) {sorted(unknown)} the "
                         "rule does not have")


def places(events: pl.DataFrame, wanted: pl.DataFrame) -> pl.DataFrame:
    """(table_id, seq, file_id, line) of the rows of `events` that `wanted` names by
    table_id and seq, with whether each is audited where the audit has a scope."""
    keys = wanted.drop_nulls().unique()
    scope = [IN_SCOPE] if IN_SCOPE in events.columns else []
    where = events.select("table_id", "seq", "file_id", "line", *scope)
    return rows_with_keys(where, keys, ["table_id", "seq"])


def located(checks: pl.DataFrame, events: pl.DataFrame, files: list[InputFile]) -> pl.DataFrame:
    """Findings from check rows, each at the file and line of the row its `seq` names.

    One join for all rules: the event frame is large, the findings are few.
    """
    where = places(events, checks.select("table_id", "seq"))
    frame = checks.join(where, on=["table_id", "seq"], how="left", maintain_order="left")
    return _finish(
        frame.with_columns(
            (pl.col("amount_cents") / 100).alias("amount"),
            pl.lit(None, pl.String).alias("field"),
        ),
        files,
    )


def from_problems(problems: pl.DataFrame, files: list[InputFile]) -> pl.DataFrame:
    return _finish(problems.with_columns(pl.lit(None, pl.Float64).alias("amount")), files)


def _finish(frame: pl.DataFrame, files: list[InputFile]) -> pl.DataFrame:
    names = pl.Series("file", [str(f.path) for f in files], dtype=pl.String)
    file_expr = (
        pl.col("file_id")
        .cast(pl.Int64)
        .replace_strict(list(range(len(files))), names, default=None, return_dtype=pl.String)
        if files
        else pl.lit(None, pl.String)
    )
    frame = frame.with_columns(file_expr.alias("file"))
    frame = _with_metadata(frame)
    missing = [
        pl.lit(None, t).alias(c) for c, t in GATHERED_SCHEMA.items() if c not in frame.columns
    ]
    return frame.with_columns(missing).select(list(GATHERED_SCHEMA)).cast(GATHERED_SCHEMA)


def order(findings: pl.DataFrame) -> pl.DataFrame:
    return findings.sort(
        ["table_id", "shoe_id", "round", "seq", "rule_id", "file", "line"],
        nulls_last=True,
        maintain_order=True,
    )


# A text cell a spreadsheet would read as a formula (OWASP, "CSV injection"): one that
# begins with = + - @, a tab or a carriage return
_FORMULA_START = r"^[=+\-@\t\r]"


def spreadsheet_safe(findings: pl.DataFrame) -> pl.DataFrame:
    """The findings with every text cell that a spreadsheet would take for a formula
    prefixed with an apostrophe, so that it shows as the text it is; numbers stay
    numbers. Log text (table, shoe and player ids, messages) reaches these cells."""
    text = [name for name, dtype in findings.schema.items() if dtype == pl.String]
    return findings.with_columns(
        pl.when(pl.col(name).str.contains(_FORMULA_START))
        .then(pl.lit("'") + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name in text
    )


def write(findings: pl.DataFrame, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": out / "findings.csv",
        "jsonl": out / "findings.jsonl",
        "parquet": out / "findings.parquet",
    }
    spreadsheet_safe(findings).write_csv(paths["csv"])
    findings.write_parquet(paths["parquet"])
    # JSON Lines keeps every column on every line (null where empty), so a job
    # reading it sees the same columns as the CSV and Parquet files.
    with paths["jsonl"].open("w", encoding="utf-8") as handle:
        for record in findings.iter_rows(named=True):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return paths
