"""Typing a raw frame: text (or Parquet's own types) to the canonical dtypes.

A value that is there but does not parse (`seat` = "three", `amount` =
"12.345") becomes null in the typed column and a problem naming the field, so
that the schema never sees a half-typed frame and no value is lost quietly. So
does a number out of the format's range: an integer beyond 64 bits, an amount
whose cents do not fit a 64-bit integer, NaN or an infinity (a Parquet column of
numbers may hold any of them). A column of a type that can hold no value of the
format is refused before any row is read (column_types).
"""

from __future__ import annotations

import polars as pl

from . import vocabulary as v
from .problems import PROBLEM_SCHEMA

IN_AMOUNT_INVALID = "IN007"
IN_VALUE_INVALID = "IN009"

# Decimal dollars with at most two decimals; a leading minus is read so that a
# negative amount is reported as negative, not as unreadable.
AMOUNT_PATTERN = r"^-?\d+(\.\d{1,2})?$"
TIMESTAMP_PATTERN = r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?$"
# The most whole dollars an amount may have: its cents, and 99 more, fit a 64-bit
# integer (beyond it the arithmetic would wrap round to another amount)
MOST_DOLLARS = (2**63 - 1 - 99) // 100

STRING_COLUMNS = tuple(
    c for c in v.COLUMNS if c not in (*v.INTEGER_COLUMNS, *v.BOOLEAN_COLUMNS, "amount", "ts")
)

CANONICAL_SCHEMA: dict[str, pl.DataType] = {
    **{
        c: pl.Categorical() if c in v.CATEGORICAL_COLUMNS else pl.String()
        for c in STRING_COLUMNS
    },
    **{c: pl.Int64() for c in v.INTEGER_COLUMNS},
    "amount_cents": pl.Int64(),
    **{c: pl.Boolean() for c in v.BOOLEAN_COLUMNS},
    "time": pl.Datetime("us"),
    v.LINE: pl.Int64(),
}


def _number_source(name: str, dtype: pl.DataType) -> tuple[pl.Expr, pl.DataType]:
    """A column of numbers as it is parsed: Parquet's Categorical or Enum (text in a code
    book) as its text, read as the format's own text is; any other type as it is (a
    Decimal is read off its unscaled integer: _decimal_units)."""
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return pl.col(name).cast(pl.String), pl.String
    return pl.col(name), dtype


def _decimal_units(name: str, dtype: pl.Decimal, places: int) -> pl.Expr:
    """A Decimal counted in units of 10^-`places` (0: its integer; 2: cents), exactly,
    read off its unscaled integer: null where it has a digit below the unit (3.50 is no
    integer, 25.005 no count of cents, though a cast would cut them to 3 and 25.00) or
    the count passes 64 bits. No text is made and matched: reading each amount as its
    text took most of the time of holding a Parquet log."""
    unscaled, scale = pl.col(name).to_physical(), dtype.scale or 0
    if scale > places:
        below = pl.lit(10 ** (scale - places), pl.Int128)
        return pl.when(unscaled % below == 0).then(
            (unscaled // below).cast(pl.Int64, strict=False))
    up, count = 10 ** (places - scale), unscaled.cast(pl.Int64, strict=False)
    if up == 1:
        return count
    # bounded before it is scaled up, so that the product holds in 64 bits
    return pl.when(unscaled.abs() <= (2**63 - 1) // up).then(count * up)


def _integer(name: str, dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, pl.Decimal):
        return _decimal_units(name, dtype, 0)
    col, dtype = _number_source(name, dtype)
    if dtype == pl.String:
        return col.str.strip_chars().cast(pl.Int64, strict=False)
    if dtype.is_float():
        # 3.0 is the integer 3; 3.5 is not an integer at all (nor NaN, an infinity or a
        # number beyond 64 bits: the cast leaves them null)
        return pl.when(col == col.round()).then(col.cast(pl.Int64, strict=False))
    return col.cast(pl.Int64, strict=False)


def _amount_cents(dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, pl.Decimal):
        whole = pl.col("amount").to_physical().abs() // pl.lit(10 ** (dtype.scale or 0),
                                                                pl.Int128)
        return pl.when(whole <= MOST_DOLLARS).then(_decimal_units("amount", dtype, 2))
    col, dtype = _number_source("amount", dtype)
    if dtype == pl.String:
        text = col.str.strip_chars()
        ok = text.str.contains(AMOUNT_PATTERN)
        whole = text.str.extract(r"^-?(\d+)", 1).cast(pl.Int64, strict=False)
        frac = text.str.extract(r"\.(\d{1,2})$", 1).str.pad_end(2, "0").cast(pl.Int64)
        sign = pl.when(text.str.starts_with("-")).then(-1).otherwise(1)
        fits = whole <= MOST_DOLLARS
        return pl.when(ok & fits).then(sign * (whole * 100 + frac.fill_null(0)))
    if dtype.is_float():
        # NaN and the infinities fail the test of whole cents; cents beyond 64 bits
        # are left null by the cast (both are reported as IN007)
        cents = (col * 100).round()
        whole_cents = (col * 100 - cents).abs() < 1e-6
        return pl.when(whole_cents).then(cents.cast(pl.Int64, strict=False))
    dollars = col.cast(pl.Int64, strict=False)
    fits = (dollars >= -MOST_DOLLARS) & (dollars <= MOST_DOLLARS)
    return pl.when(fits).then(dollars * 100)


def _boolean(name: str, dtype: pl.DataType) -> pl.Expr:
    col = pl.col(name)
    if dtype == pl.Boolean:
        return col
    text = col.cast(pl.String).str.strip_chars().str.to_lowercase()
    return text.replace_strict(
        {"true": True, "false": False, "1": True, "0": False}, default=None, return_dtype=pl.Boolean
    )


def time_of(dtype: pl.DataType, separator: str = "[T ]") -> pl.Expr:
    """Local wall-clock time as written: an offset is kept in `ts`, not applied.
    `separator`: "T" reads only the timestamps with a T between date and time (they
    need no rewriting first: the usual case, read first by `typed`)."""
    col = pl.col("ts")
    if isinstance(dtype, pl.Datetime):
        return col.dt.replace_time_zone(None).cast(pl.Datetime("us"))
    text = col.cast(pl.String)
    clock = text.str.slice(0, 19)
    return (
        pl.when(text.str.contains(TIMESTAMP_PATTERN.replace("[T ]", separator)))
        .then(clock if separator == "T" else clock.str.replace(" ", "T", literal=True))
        .str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=False)
        .cast(pl.Datetime("us"))
    )


def _text_times(ts: pl.Series) -> pl.Series:
    """Text timestamps (`ts` as String) read as `time_of` and `_times` read them, once
    per run of equal values: a log in time order repeats each second's timestamp on
    its run of rows (a floor's export, some twenty rows a second), and matching and
    parsing a timestamp costs several times what finding the runs does."""
    text = pl.col("ts")
    first = ts.to_frame("ts").select(
        text.ne_missing(text.shift(1)) | (pl.int_range(pl.len()) == 0)).to_series()
    raw = ts.filter(first).to_frame("ts")
    read = _times(raw, raw.select(time_of(pl.String, separator="T").alias("time")))
    run = first.cast(pl.get_index_type()).cum_sum() - 1
    return _chunked_as(read.get_column("time").gather(run).alias("time"), ts)


def _chunked_as(column: pl.Series, like: pl.Series) -> pl.Series:
    """`column` in chunks of the lengths of `like`'s (views, not copies): a frame whose
    columns are chunked alike is read as it is, where one chunked otherwise is copied
    whole into one chunk by every select on it."""
    lengths = like.chunk_lengths()
    if len(lengths) < 2:
        return column
    starts = [sum(lengths[:n]) for n in range(len(lengths))]
    return pl.concat([column.slice(start, n) for start, n in zip(starts, lengths, strict=True)],
                     rechunk=False)


def _times(raw: pl.DataFrame, frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with the times of the rows that the T-only reading left empty read
    again in full (a space between date and time; else they stay empty)."""
    missed = raw.get_column("ts").is_not_null() & frame.get_column("time").is_null()
    if not missed.any():
        return frame
    rows = missed.arg_true()
    again = raw[rows].select(time_of(raw.schema["ts"])).to_series()
    return frame.with_columns(frame.get_column("time").scatter(rows, again))


def _present(raw: pl.DataFrame) -> pl.DataFrame:
    """Add every spec column the file lacks, as nulls (a missing column is reported)."""
    missing = [pl.lit(None, pl.String).alias(c) for c in v.COLUMNS if c not in raw.columns]
    return raw.with_columns(missing) if missing else raw


# Text that names where a row belongs: an empty value there is no value (a JSON "" is
# as missing as an empty CSV cell), not a table or shoe of its own
_KEY_TEXT = ("table_id", "shoe_id")


def _text(column: str, dtype: pl.DataType) -> pl.Expr:
    if column in _KEY_TEXT and dtype == pl.String:
        return pl.col(column).replace("", None)
    if dtype.is_numeric() or dtype == pl.Boolean:
        # a Parquet column of numbers (a dealer's employee number) is read as its text
        return pl.col(column).cast(pl.String)
    return pl.col(column)


def typed(raw: pl.DataFrame, file_id: int,
          text: pl.DataType | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The canonical frame and the problems of values that did not parse. `text`: the
    type of every text column instead of its canonical one (String or Categorical)."""
    raw = _present(raw)
    schema = raw.schema
    exprs = [_text(c, raw.schema[c]).cast(text or CANONICAL_SCHEMA[c]).alias(c)
             for c in STRING_COLUMNS]
    exprs += [_integer(c, schema[c]).alias(c) for c in v.INTEGER_COLUMNS]
    text_times = schema["ts"] == pl.String
    exprs += [
        _amount_cents(schema["amount"]).alias("amount_cents"),
        *(_boolean(c, schema[c]).alias(c) for c in v.BOOLEAN_COLUMNS),
        pl.lit(None, pl.Datetime("us")).alias("time") if text_times
        else time_of(schema["ts"], separator="T").alias("time"),
        pl.col(v.LINE),
    ]
    frame = raw.select(exprs)
    if text_times:
        frame = frame.with_columns(_text_times(raw.get_column("ts")))
    else:
        frame = _times(raw, frame)
    problems = _unparsed(raw, frame, file_id)
    return frame, problems


# Parsed column -> the raw column it came from, and what it should have been.
_PARSED = {
    **{c: (c, "an integer (of at most 64 bits)") for c in v.INTEGER_COLUMNS},
    "amount_cents": ("amount", "decimal dollars with at most 2 decimals, e.g. 25 or 1.25 "
                     "(its cents within 64 bits)"),
    **{c: (c, "true or false") for c in v.BOOLEAN_COLUMNS},
    "time": ("ts", "an ISO 8601 timestamp, e.g. 2026-11-01T21:04:05-05:00"),
}


def _unparsed(raw: pl.DataFrame, frame: pl.DataFrame, file_id: int) -> pl.DataFrame:
    """One problem per value present in the raw frame that its parser rejected."""
    parts = []
    for parsed, (source, expected) in _PARSED.items():
        bad = raw[source].is_not_null() & frame[parsed].is_null()
        if not bad.any():
            continue
        rule = IN_AMOUNT_INVALID if source == "amount" else IN_VALUE_INVALID
        parts.append(
            pl.DataFrame({"observed": raw[source].cast(pl.String), v.LINE: frame[v.LINE]})
            .filter(bad)
            # one chunk: pl.format over a filtered frame whose first chunk came out empty
            # panics in polars (a JSON Lines file read in chunks, bad values in a later one)
            .rechunk()
            .select(
                pl.lit(rule).alias("rule_id"),
                pl.lit(None, pl.Int64).alias("row"),
                pl.lit(file_id, pl.Int32).alias("file_id"),
                pl.col(v.LINE),
                pl.lit(source).alias("field"),
                pl.col("observed"),
                pl.lit(expected).alias("expected"),
                pl.format(
                    "`{}` should be {}; the row has '{}'.",
                    pl.lit(source),
                    pl.lit(expected),
                    "observed",
                ).alias("message"),
            )
        )
    if not parts:
        return pl.DataFrame(schema=PROBLEM_SCHEMA)
    return pl.concat(parts).cast(PROBLEM_SCHEMA)
