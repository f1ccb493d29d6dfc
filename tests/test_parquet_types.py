"""Parquet logs whose columns are not of the types the format gives them.

A column of a type that can hold no value of the format (a list, a struct, binary data;
a boolean or a time where a number is wanted) stops the audit before any part is read:
exit 2, one line naming the file and the column. A number out of the format's range (an
amount whose cents do not fit 64 bits, an integer beyond 64 bits, NaN) is a finding at
its row, and the audit completes. Each case is audited in this process and once with its
parts in worker processes (--workers 2).
"""

from __future__ import annotations

from decimal import Context, Decimal, localcontext
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from casefiles import DEFAULT_HOUSE, PAID_ROUND, expand_events
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.cli import main
from auditor.ingest.parse import MOST_DOLLARS, typed

PAY_LINE = 11
PAY = pl.col("event") == "pay"

# column -> the column rewritten in a type that cannot hold the format's values
UNFIT = {
    "card": pl.concat_list("card"),
    "seq": pl.struct(pl.col("seq").alias("n")),
    "table_id": pl.col("table_id").cast(pl.Binary),
    "amount": pl.col("amount") > 0,
    "hand": pl.col("hand").cast(pl.Datetime("us")),
}

# name -> (column, the column rewritten with one value out of range on the pay row, the
# rule that reports it)
OUT_OF_RANGE = {
    "amount 1e20 as a float": (
        "amount", pl.when(PAY).then(1e20).otherwise(pl.col("amount").cast(pl.Float64)), "IN007"),
    # its cents, 100 times it, wrap round 64 bits to 84: read as $0.84 before
    "amount whose cents overflow 64 bits": (
        "amount", pl.when(PAY).then(184467440737095517).otherwise(pl.col("amount")), "IN007"),
    "amount NaN": (
        "amount", pl.when(PAY).then(float("nan")).otherwise(pl.col("amount").cast(pl.Float64)),
        "IN007"),
    "amount of three decimals as a Decimal": (
        "amount", pl.when(PAY).then(pl.lit(Decimal("25.005"))).otherwise(pl.col("amount"))
        .cast(pl.Decimal(20, 3)), "IN007"),
    "seq beyond 64 bits": (
        "seq", pl.when(PAY).then(2**64 - 1).otherwise(pl.col("seq")).cast(pl.UInt64), "IN009"),
    "seq infinite": (
        "seq", pl.when(PAY).then(float("inf")).otherwise(pl.col("seq").cast(pl.Float64)),
        "IN009"),
}


def _log(folder: Path, column: str, rewritten: pl.Expr) -> Path:
    rows = expand_events(PAID_ROUND, {"table_id": "BJ-01", "game": "blackjack"})
    path = folder / "log.parquet"
    pl.DataFrame(rows).with_columns(rewritten.alias(column)).write_parquet(path)
    return path


def _audit(log: Path, out: Path, workers: int):
    return CliRunner().invoke(main, ["audit", str(log), "--house", str(DEFAULT_HOUSE), "--out",
                                     str(out), "--no-report", "-q", "--fail-on", "never",
                                     "--workers", str(workers)])


@pytest.mark.parametrize("workers", [1, 2], ids=["here", "in worker processes"])
@pytest.mark.parametrize("column", list(UNFIT))
def test_a_column_that_cannot_hold_the_formats_values_is_exit_2_naming_it(
    tmp_path, column, workers
):
    log = _log(tmp_path, column, UNFIT[column])
    result = _audit(log, tmp_path / "out", workers)
    # exit 2 of the command's own (a crash is exit 1 with the exception kept)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert str(log) in lines[0] and f"`{column}` is" in lines[0], lines[0]
    assert not (tmp_path / "out" / "findings.parquet").exists()


@pytest.mark.parametrize("workers", [1, 2], ids=["here", "in worker processes"])
@pytest.mark.parametrize("case", list(OUT_OF_RANGE))
def test_a_number_out_of_the_formats_range_is_a_finding_at_its_row(tmp_path, case, workers):
    column, rewritten, rule = OUT_OF_RANGE[case]
    log = _log(tmp_path, column, rewritten)
    result = _audit(log, tmp_path / "out", workers)
    assert result.exit_code == 0, (result.output, result.exception)
    findings = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    found = findings.filter(pl.col("rule_id") == rule).select("line", "field").rows()
    assert found == [(PAY_LINE, column)], findings.select("rule_id", "line", "field", "message")


def test_numbers_written_as_categorical_text_are_read_as_their_text(tmp_path):
    # text in a code book is text: parsed as a JSON string would be, no finding
    log = _log(tmp_path, "seq", pl.col("seq").cast(pl.String).cast(pl.Categorical))
    result = _audit(log, tmp_path / "out", 1)
    assert result.exit_code == 0, (result.output, result.exception)
    assert pl.read_parquet(tmp_path / "out" / "findings.parquet").is_empty()



# Python's decimal arithmetic, exact for 38 digits (its default context rounds to 28)
_EXACT = Context(prec=100)


def _decimal_draws(special) -> st.SearchStrategy:
    """(scale, unscaled values) of a Decimal(38, scale) column: nulls, any 38 digits, and
    the values `special(scale)` draws, each within the 38 digits a Decimal holds."""
    return st.integers(0, 38).flatmap(lambda scale: st.tuples(
        st.just(scale),
        st.lists(st.one_of(
            st.none(),
            st.integers(-(10**38) + 1, 10**38 - 1),
            special(scale).filter(lambda u: abs(u) < 10**38),
        ), min_size=1, max_size=40)))


def _read_exactly(column: str, parsed: str, scale: int, unscaled: list[int | None],
                  exact) -> None:
    """Type a Decimal(38, scale) column built exactly (through Arrow): `parsed` must be
    `exact(value)` (None: not readable) for each value, judged at 100 digits, and each
    value present but not readable a problem at its line."""
    values = [None if u is None else Decimal(u).scaleb(-scale, _EXACT) for u in unscaled]
    raw = pl.DataFrame({column: pl.from_arrow(pa.array(values, type=pa.decimal128(38, scale))),
                        "line": pl.Series(range(1, len(values) + 1), dtype=pl.Int64)})
    frame, problems = typed(raw, 0)
    with localcontext(_EXACT):
        expected = [None if value is None else exact(value) for value in values]
    assert frame.get_column(parsed).to_list() == expected
    bad = [n + 1 for n, (value, read) in enumerate(zip(values, expected, strict=True))
           if value is not None and read is None]
    assert problems.filter(pl.col("field") == column).get_column("line").to_list() == bad


@settings(max_examples=60, deadline=None)
@given(_decimal_draws(lambda scale: st.one_of(
    # whole cents, and amounts near the most whole dollars a cent count holds
    st.integers(-(10**8), 10**8).map(lambda c: c * 10 ** max(scale - 2, 0)),
    st.sampled_from([MOST_DOLLARS, MOST_DOLLARS + 1]).flatmap(
        lambda d: st.integers(-99, 99).map(lambda c: (d * 100 + c) * 10**scale // 100)))))
def test_a_decimal_amount_is_read_as_its_exact_cents(scale_and_unscaled):
    """A Parquet Decimal amount of any scale: its cents exactly where it has no digit
    below the cent and its whole dollars fit 64 bits of cents; else null (IN007)."""

    def cents(value: Decimal) -> int | None:
        if (value * 100) % 1 != 0 or int(abs(value)) > MOST_DOLLARS:
            return None
        return int(value * 100)

    _read_exactly("amount", "amount_cents", *scale_and_unscaled, cents)


@settings(max_examples=60, deadline=None)
@given(_decimal_draws(
    # whole numbers, and numbers about the 64-bit bounds
    lambda scale: st.integers(-(2**63) - 2, 2**63 + 1).map(lambda n: n * 10**scale)))
def test_a_decimal_integer_is_read_exactly(scale_and_unscaled):
    """A Parquet Decimal in an integer column (`seq`): its value where it is whole and
    within 64 bits; else null (IN009)."""

    def whole(value: Decimal) -> int | None:
        if value % 1 != 0 or not -(2**63) <= value < 2**63:
            return None
        return int(value)

    _read_exactly("seq", "seq", *scale_and_unscaled, whole)
