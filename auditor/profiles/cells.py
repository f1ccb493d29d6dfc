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

from ..ingest import vocabulary as v
from . import ProfileError
from .model import Mapping, Source

# A cell of the format with a value that is a number: read by value from SQL (25.000000
# is 25), never as the float's own text
_NUMBER_COLUMNS = set(v.INTEGER_COLUMNS) | {"amount", "pay", "collect", "push", "vig",
                                            "settle_order", "vig_order"}
# Numbers written in their shortest form that still holds every cent: past the second
# decimal a float's digits are kept, so that 12.345 stays an amount with three decimals
_CENT = 1e-6


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


def _constant(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """An SQL result read by value: a whole float as an integer, a float of whole cents
    with two decimals at most, any other float with all its digits."""
    if not dtype.is_float():
        return text(expr)
    # an infinite or NaN result (x / 0) stays its text ("inf"): a bad value at its line
    whole = expr.is_finite() & (expr == expr.round())
    cents = expr.is_finite() & (((expr * 100) - (expr * 100).round()).abs() < _CENT)
    return (
        pl.when(whole).then(expr.round().cast(pl.Int64).cast(pl.String))
        .when(cents).then(expr.round(2).cast(pl.String))
        .otherwise(expr.cast(pl.String))
    )


def raw_cells(frame: pl.DataFrame, source: Source, typed: pl.DataFrame | None = None,
              skip: tuple[str, ...] = ()) -> pl.DataFrame:
    """Each mapped canonical column as text, before value maps: an export column's text,
    a constant, or an SQL expression's value over the file's typed columns (`typed`:
    the columns the SQL reads, typed as polars infers them; else `frame`'s). `skip`:
    columns read otherwise (a blackjack coup's lists)."""
    direct = [text(pl.col(m.column)).alias(name) if m.column is not None
              else pl.lit(_constant(m.value), pl.String).alias(name)
              for name, m in source.columns.items() if m.sql is None and name not in skip]
    cells = frame.select(direct) if direct else pl.DataFrame(height=frame.height)
    computed = sql_cells(frame if typed is None else typed, source)
    if computed:
        cells = cells.with_columns(computed)
    return cells.select([c for c in source.columns if c not in skip])


def sql_cells(frame: pl.DataFrame, source: Source) -> list[pl.Series]:
    """Each SQL mapping's value on every row of `frame` (the columns it reads), as its
    canonical column's text; a SqlFailed where polars cannot evaluate one."""
    return [_sql_cell(frame, source, name, m) for name, m in source.columns.items()
            if m.sql is not None]


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
        cell = _number(pl.col(name), dtype) if name in _NUMBER_COLUMNS else text(pl.col(name))
        return values.select(cell.alias(name)).to_series()
    except _EVALUATION_ERRORS as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = (" (TRY_CAST makes a value that does not convert an empty cell)"
                if "conversion from" in why else "")
        raise SqlFailed(f"source {source.name!r}.columns.{name}: its SQL fails on this "
                        f"file: {why}{hint}") from None


def mapped(cells: pl.DataFrame, source: Source, lines: pl.Series,
           except_columns: tuple[str, ...] = ()) -> tuple[pl.DataFrame, list[Unmapped],
                                                          pl.DataFrame]:
    """The cells through their value maps, the values no map covers (each with its rows'
    count and first and last line), and (line, field) of every cell made null so."""
    unmapped: list[Unmapped] = []
    stray_cells = []
    replaced = []
    for column, table in source.values.items():
        if column in except_columns or column not in cells.columns:
            continue
        keys = list(table)
        targets = ["" if t == "" else _constant(t) for t in table.values()]
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
            stray_cells.append(cells.select(lines.alias("line"), stray.alias("s"))
                               .filter("s").select("line", pl.lit(column).alias("field")))
        into = cell.replace_strict(keys, targets, default=None, return_dtype=pl.String)
        replaced.append(pl.when(into != "").then(into).alias(column))
    strays = pl.concat([pl.DataFrame(schema={"line": pl.Int64, "field": pl.String}),
                        *[s.cast({"line": pl.Int64}) for s in stray_cells]])
    return cells.with_columns(replaced), unmapped, strays

