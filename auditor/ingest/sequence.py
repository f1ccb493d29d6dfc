"""Checks of event order: seq, round boundaries and shoes.

These need rows in context (the rows before and after), so they run per table
over the frame sorted by `seq` rather than row by row.
"""

from __future__ import annotations

import polars as pl

from . import vocabulary as v
from .problems import PROBLEM_SCHEMA

IN_SEQ_DUPLICATE = "IN010"
IN_SEQ_BACKWARDS = "IN011"
IN_EVENT_AFTER_ROUND_END = "IN012"
IN_ROUND_WITHOUT_SHUFFLE = "IN013"
IN_ROUND_INCOMPLETE = "IN015"

ROUND_KEY = ("table_id", "shoe_id", "round")


def _as_problems(
    frame: pl.DataFrame,
    rule_id: str,
    field: str,
    expected: str,
    message: pl.Expr,
    observed: pl.Expr,
) -> pl.DataFrame:
    return frame.select(
        pl.lit(rule_id).alias("rule_id"),
        pl.col(v.ROW),
        pl.col(v.FILE_ID).cast(pl.Int32),
        pl.col(v.LINE),
        pl.lit(field).alias("field"),
        observed.cast(pl.String).alias("observed"),
        pl.lit(expected).alias("expected"),
        message.alias("message"),
    ).cast(PROBLEM_SCHEMA)


def seq_problems(keyed: pl.DataFrame) -> pl.DataFrame:
    """Duplicate `seq` within a table, and `seq` going backwards within a file."""
    in_file_order = keyed.sort(v.FILE_ID, v.LINE)
    first_seen = pl.int_range(pl.len()).over("table_id", "seq") > 0
    duplicates = in_file_order.filter(first_seen)
    previous = pl.col("seq").shift(1).over(v.FILE_ID, "table_id")
    backwards = in_file_order.with_columns(previous.alias("previous")).filter(
        pl.col("seq") < pl.col("previous")
    )
    return pl.concat(
        [
            _as_problems(
                duplicates,
                IN_SEQ_DUPLICATE,
                "seq",
                "a seq not used before on this table",
                pl.format("seq {} is used twice on table {}.", "seq", "table_id"),
                pl.col("seq"),
            ),
            _as_problems(
                backwards,
                IN_SEQ_BACKWARDS,
                "seq",
                "a seq above the one before it",
                pl.format(
                    "seq {} on table {} follows seq {} in the file: it goes backwards.",
                    "seq",
                    "table_id",
                    "previous",
                ),
                pl.col("seq"),
            ),
        ]
    )


def order_problems(ordered: pl.DataFrame) -> pl.DataFrame:
    """Rows after their round's round_end, rounds with no shuffle, rounds not closed.

    `ordered` holds the rows whose keys parsed, sorted by table and seq.
    """
    round_end = pl.col("seq").filter(pl.col("event") == "round_end").min().over(ROUND_KEY)
    late = ordered.filter(pl.col("seq") > round_end)
    shuffle_seq = (
        pl.col("seq").filter(pl.col("event") == "shuffle").min().over("table_id", "shoe_id")
    )
    rounds = (
        ordered.with_columns(shuffle_seq.alias("shuffle_seq"))
        .filter(pl.col("round") > 0)
        .group_by(ROUND_KEY, maintain_order=True)
        .agg(
            pl.col(v.ROW).first(),
            pl.col(v.FILE_ID).first(),
            pl.col(v.LINE).first(),
            pl.col("seq").first(),
            pl.col("shuffle_seq").first(),
            (pl.col("event") == "round_start").any().alias("started"),
            (pl.col("event") == "round_end").any().alias("ended"),
        )
    )
    unshuffled = rounds.filter(
        pl.col("shuffle_seq").is_null() | (pl.col("shuffle_seq") > pl.col("seq"))
    )
    incomplete = rounds.filter(~pl.col("started") | ~pl.col("ended"))
    return pl.concat(
        [
            _as_problems(
                late,
                IN_EVENT_AFTER_ROUND_END,
                "seq",
                "no event of a round after its round_end",
                pl.format(
                    "{} event (seq {}) of round {} comes after that round's round_end.",
                    "event",
                    "seq",
                    "round",
                ),
                pl.col("event"),
            ),
            _as_problems(
                unshuffled,
                IN_ROUND_WITHOUT_SHUFFLE,
                "shoe_id",
                "a shuffle of the shoe before its rounds",
                pl.format("Round {} of shoe {} has no shuffle before it.", "round", "shoe_id"),
                pl.col("shoe_id"),
            ),
            _as_problems(
                incomplete,
                IN_ROUND_INCOMPLETE,
                "event",
                "a round_start and a round_end",
                pl.format(
                    "Round {} of shoe {} lacks its {}.",
                    "round",
                    "shoe_id",
                    pl.when(~pl.col("started") & ~pl.col("ended"))
                    .then(pl.lit("round_start and round_end"))
                    .when(~pl.col("started"))
                    .then(pl.lit("round_start"))
                    .otherwise(pl.lit("round_end")),
                ),
                pl.lit(None, pl.String),
            ),
        ]
    )
