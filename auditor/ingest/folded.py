"""Input problems of one kind in one file, past the first FOLD_AFTER, said once.

A file where every row has the same fault (a vendor's card notation the format does not
know, a field every row lacks, a file of `{}` lines) would otherwise give a finding per
row: millions of findings held in memory, written, and no use to a reader, who needs
the first few and the count. So the problems of one rule and field in one file are
listed one by one up to FOLD_AFTER (the first by line); the rest are counted, with
their first and last line, and said in one more finding of the same rule. Every such
row is still reported: its round is withheld as before, and it is counted in the
summary's reported rows.

Folding keeps the first FOLD_AFTER of each kind by line whatever the order the parts
of a log come in: each part keeps its own first FOLD_AFTER (the log's first are
among them), and the log keeps the first of those.
"""

from __future__ import annotations

import polars as pl

from . import vocabulary as v
from .problems import PROBLEM_SCHEMA

FOLD_AFTER = 1_000

_KIND = [v.FILE_ID, "rule_id", "field"]
TALLY = {v.FILE_ID: pl.Int32, "rule_id": pl.String, "field": pl.String,
         "expected": pl.String, "rows": pl.Int64, "first_line": pl.Int64,
         "last_line": pl.Int64}


def fold(problems: pl.DataFrame,
         tally: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The problems with at most FOLD_AFTER of each kind (file, rule, field), the first
    by line, in their order; and `tally` (TALLY) with the rest counted into it."""
    tally = pl.DataFrame(schema=TALLY) if tally is None else tally
    if problems.is_empty() or problems.group_by(_KIND).len()["len"].max() <= FOLD_AFTER:
        return problems, _merged(tally)
    # by line (a problem without one last), then in the order found
    line = pl.col(v.LINE).fill_null(pl.lit(1 << 62, pl.Int64))
    ranked = problems.with_columns(line.rank("ordinal").over(_KIND).alias("_place"))
    kept = ranked.filter(pl.col("_place") <= FOLD_AFTER).drop("_place")
    rest = (ranked.filter(pl.col("_place") > FOLD_AFTER)
            .group_by(_KIND, maintain_order=True)
            .agg(pl.col("expected").first(), pl.len().alias("rows"),
                 pl.col(v.LINE).min().alias("first_line"),
                 pl.col(v.LINE).max().alias("last_line")))
    return kept, _merged(pl.concat([tally, rest.cast(TALLY).select(list(TALLY))]))


def _merged(tally: pl.DataFrame) -> pl.DataFrame:
    """One row per kind."""
    return (tally.group_by(_KIND, maintain_order=True)
            .agg(pl.col("expected").first(), pl.col("rows").sum(),
                 pl.col("first_line").min(), pl.col("last_line").max())
            .select(list(TALLY)))


def said(tally: pl.DataFrame) -> pl.DataFrame:
    """One problem for each kind counted: at its first line, with the count."""
    field = pl.when(pl.col("field").is_not_null()).then(
        pl.format(", `{}`", "field")).otherwise(pl.lit(""))
    lines = pl.when(pl.col("first_line").is_null()).then(pl.lit("")).otherwise(
        pl.format(" (lines {} to {})", "first_line", "last_line"))
    message = pl.format(
        "{} more rows of this file{} break the same rule ({}{}; the format requires {}); "
        "they are reported together, not one by one.", "rows", lines, "rule_id", field,
        "expected")
    return tally.select(
        "rule_id", pl.lit(None, pl.Int64).alias(v.ROW), v.FILE_ID,
        pl.col("first_line").alias(v.LINE), "field", pl.lit(None, pl.String).alias("observed"),
        "expected", message.alias("message"),
    ).cast(PROBLEM_SCHEMA)
