"""A source's cells as the format's text: each canonical column from its export column,
constant or SQL expression, through its value map, every row at once (export-profiles-v1,
"Cells, columns and values").

An empty cell (no text, only spaces, JSON null, a key a JSON Lines row lacks) is null. A
value the map does not list is null too, and noted: one finding per file, column and
value says it (Errors), not one per row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from . import ProfileError
from .model import Mapping, Source

# Amounts: a float within a tenth of a cent of whole cents is those cents (a float's
# representation error is no extra decimal: 0.1 + 0.2 is 0.3); past that its digits are
# kept, so that 12.345 stays an amount with three decimals
_MONEY_COLUMNS = {"amount", "pay", "collect", "push", "vig", "net"}
_MONEY_ERROR = 0.1  # in cents
# Any other number (an integer column's 3.0 is 3, its 3.5 a bad value): only a float's
# own representation error is forgiven
_FLOAT_ERROR = 1e-6  # in hundredths


# (line, field, value) of each cell whose value no map covers
STRAYS = {"line": pl.Int64, "field": pl.String, "value": pl.String}


@dataclass(frozen=True)
class Unmapped:
    """The rows of one file whose `column` held `value`, which its map does not list."""

    column: str
    value: str
    rows: int
    first: int
    last: int


def text(expr: pl.Expr) -> pl.Expr:
    """A cell as text, spaces around it removed; empty is null."""
    cell = expr.cast(pl.String).str.strip_chars()
    return pl.when(cell != "").then(cell)


def constant_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def by_value(expr: pl.Expr, dtype: pl.DataType, column: str) -> pl.Expr:
    """A value of `dtype` (an SQL result, a Parquet column) as the text of its value, for
    the canonical `column`: a Decimal without the zeros its scale writes (200.000000 is
    200), a float as the shortest text of its value (3.0 is 3; an amount within a tenth
    of a cent of whole cents is those cents), never a fixed count of decimals; any other
    type as its text."""
    if isinstance(dtype, pl.Decimal):
        written = expr.cast(pl.String).str.strip_chars()
        written = written.str.replace(r"\.0*$", "").str.replace(r"(\.\d*?[1-9])0+$", "${1}")
        return pl.when(written == "-0").then(pl.lit("0")).otherwise(written)
    if not dtype.is_float():
        return text(expr)
    error = _MONEY_ERROR if column in _MONEY_COLUMNS else _FLOAT_ERROR
    hundredths = (expr * 100).round()
    near = expr.is_finite() & ((expr * 100 - hundredths).abs() < error)
    whole = hundredths.cast(pl.Int64, strict=False)  # null beyond 64 bits: as written
    size = whole.abs()
    part = size % 100
    written = pl.concat_str(
        pl.when(whole < 0).then(pl.lit("-")).otherwise(pl.lit("")),
        (size // 100).cast(pl.String),
        pl.when(part == 0).then(pl.lit("")).otherwise(
            pl.lit(".") + part.cast(pl.String).str.zfill(2).str.strip_chars_end("0")))
    # an infinite or NaN result (x / 0) stays its text ("inf"): a bad value at its line
    return pl.when(near & whole.is_not_null()).then(written).otherwise(expr.cast(pl.String))


def raw_cells(frame: pl.DataFrame, source: Source, typed: pl.DataFrame | None = None,
              skip: tuple[str, ...] = ()) -> pl.DataFrame:
    """Each mapped canonical column as text, before value maps: an export column's text,
    a constant, or an SQL expression's value over the file's typed columns (`typed`:
    the columns the SQL reads, typed as polars infers them; else `frame`'s). `skip`:
    columns read otherwise (a blackjack coup's lists)."""
    direct = [by_value(pl.col(m.column), frame.schema[m.column], name).alias(name)
              if m.column is not None and isinstance(frame.schema.get(m.column), pl.Decimal)
              else text(pl.col(m.column)).alias(name) if m.column is not None
              else pl.lit(constant_text(m.value), pl.String).alias(name)
              for name, m in source.columns.items() if m.sql is None and name not in skip]
    cells = frame.select(direct) if direct else pl.DataFrame(height=frame.height)
    computed = sql_cells(frame if typed is None else typed, source, skip)
    if computed:
        cells = cells.with_columns(computed)
    return cells.select([c for c in source.columns if c not in skip])


def sql_cells(frame: pl.DataFrame, source: Source,
              skip: tuple[str, ...] = ()) -> list[pl.Series]:
    """Each SQL mapping's value on every row of `frame` (the columns it reads), as its
    canonical column's text; a SqlFailed where polars cannot evaluate one. `skip`:
    columns read otherwise."""
    return [_sql_cell(frame, source, name, m) for name, m in source.columns.items()
            if m.sql is not None and name not in skip]


def sql_values(frame: pl.DataFrame, source: Source, name: str, sql: str) -> pl.Series:
    """An SQL mapping's values as polars gives them (a list column's lists, say); a
    SqlFailed where polars cannot evaluate it."""
    try:
        return frame.select(pl.sql_expr(sql).alias(name)).to_series()
    except _EVALUATION_ERRORS as exc:
        raise _failed(source, name, exc) from None


def _failed(source: Source, name: str, exc: Exception) -> SqlFailed:
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    hint = (" (TRY_CAST makes a value that does not convert an empty cell)"
            if "conversion from" in why else "")
    return SqlFailed(f"source {source.name!r}.columns.{name}: its SQL fails on this "
                     f"file: {why}{hint}")


def table_cells(frame: pl.DataFrame, source: Source,
                typed: pl.DataFrame | None = None) -> pl.Series:
    """Each row's table as the source gives it (null where it gives none)."""
    mapping = source.columns.get("table_id")
    if mapping is None:
        return pl.Series("table_id", [None] * frame.height, dtype=pl.String)
    only = replace(source, columns={"table_id": mapping}, values={})
    return raw_cells(frame, only, typed).get_column("table_id")


class SqlFailed(ProfileError):
    """A mapping's SQL that polars could not evaluate over one file's columns (a strict
    CAST of a value that is not a number, a function given a column of another type):
    the message names the source and the key; the reader adds the file."""


# What polars raises while it evaluates an expression (a panic is no Exception)
_EVALUATION_ERRORS = (pl.exceptions.PolarsError, pl.exceptions.PanicException)


def _sql_cell(frame: pl.DataFrame, source: Source, name: str, mapping: Mapping) -> pl.Series:
    """The SQL's value on every row, as the canonical column's text."""
    try:
        values = frame.select(pl.sql_expr(mapping.sql).alias(name))
        dtype = values.schema[name] if frame.height else pl.String()
        cell = by_value(pl.col(name), dtype, name)
        return values.select(cell.alias(name)).to_series()
    except _EVALUATION_ERRORS as exc:
        raise _failed(source, name, exc) from None


def mapped(cells: pl.DataFrame, source: Source, lines: pl.Series,
           except_columns: tuple[str, ...] = ()) -> tuple[pl.DataFrame, list[Unmapped],
                                                          pl.DataFrame]:
    """The cells through their value maps, the values no map covers (each with its rows'
    count and first and last line), and (line, field, value) of every cell made null
    so."""
    unmapped: list[Unmapped] = []
    stray_cells = []
    replaced = []
    for column, table in source.values.items():
        if column in except_columns or column not in cells.columns:
            continue
        keys = list(table)
        targets = ["" if t == "" else constant_text(t) for t in table.values()]
        cell = pl.col(column)
        stray = cell.is_not_null() & ~cell.is_in(keys)
        found = (cells.select(cell.alias("value"), stray.alias("stray"), lines.alias("line"))
                 .filter("stray")
                 .group_by("value", maintain_order=True)
                 .agg(pl.len().alias("rows"), pl.col("line").min().alias("first"),
                      pl.col("line").max().alias("last")))
        unmapped += [Unmapped(column, value, rows, first, last)
                     for value, rows, first, last in found.iter_rows()]
        if found.height:
            stray_cells.append(cells.select(lines.alias("line"), stray.alias("s"),
                                            cell.alias("value"))
                               .filter("s").select("line", pl.lit(column).alias("field"),
                                                   "value"))
        into = cell.replace_strict(keys, targets, default=None, return_dtype=pl.String)
        replaced.append(pl.when(into != "").then(into).alias(column))
    strays = pl.concat([pl.DataFrame(schema=STRAYS),
                        *[s.cast({"line": pl.Int64}) for s in stray_cells]])
    return cells.with_columns(replaced), unmapped, strays

