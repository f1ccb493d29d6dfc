"""The types of a Parquet log's columns: whether each can hold the format's values at all.

A Parquet file types its columns itself. Most types can hold the format's values and are
read as parse.typed reads them, a value at a time: a number where text is wanted is read
as its text, text where a number is wanted is parsed, and a value that does not parse,
or a number out of the format's range, is a finding at its row. Some types cannot hold
any value of the format, whatever the rows say: a list, a struct, a map or binary data
anywhere; a boolean, a date or a time where the format wants a number (read as one, its
1, 0 or count of days would pass for a seat or an amount); a date or a time where it wants
true or false. Such a column is the file's fault, not a row's: the audit stops before any
part is read, naming the file and the columns (exit 2), instead of reporting every row or
failing halfway with a traceback.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from . import sourced
from . import vocabulary as v


class ColumnTypeError(Exception):
    """A Parquet log has a column of a type that cannot hold the format's values."""


# What each column holds, as the format's table of columns says: its kind, and the
# words that name it
NUMBER, BOOLEAN, TEXT = "number", "boolean", "text"
_KINDS = {
    **{c: (TEXT, "text") for c in v.COLUMNS},
    "ts": (TEXT, "an ISO 8601 timestamp"),
    **{c: (NUMBER, "an integer") for c in v.INTEGER_COLUMNS},
    "amount": (NUMBER, "decimal dollars"),
    **{c: (BOOLEAN, "true or false") for c in v.BOOLEAN_COLUMNS},
    sourced.SOURCE_FILE: (TEXT, "text"),
    sourced.SOURCE_LINE: (NUMBER, "an integer"),
}

_TEMPORAL = (pl.Date, pl.Datetime, pl.Duration, pl.Time)


def _holds(kind: str, dtype: pl.DataType) -> bool:
    """Whether a column of `dtype` can hold a value of the format's `kind`."""
    if dtype.is_nested() or dtype in (pl.Binary, pl.Object, pl.Unknown):
        return False
    if kind == NUMBER:
        return dtype != pl.Boolean and not isinstance(dtype, _TEMPORAL)
    if kind == BOOLEAN:
        return not isinstance(dtype, _TEMPORAL)
    return True  # text: any scalar has a text, and a text that is no value is a row's


def unfit(schema: pl.Schema) -> list[str]:
    """The format's columns of `schema` whose type cannot hold the format's values, each
    as "`card` is List(String) where the format has text"."""
    return [
        f"`{name}` is {dtype} where the format has {_KINDS[name][1]}"
        for name, dtype in schema.items()
        if name in _KINDS and not _holds(_KINDS[name][0], dtype)
    ]


def refuse_unfit(path: Path, schema: pl.Schema) -> None:
    """Raise a ColumnTypeError, naming the file and every such column, where a Parquet
    file has a column that cannot hold the format's values."""
    found = unfit(schema)
    if found:
        raise ColumnTypeError(
            f"{path}: a Parquet column of a type that cannot hold the values of "
            f"hand-history-v1 (nothing was audited): {'; '.join(found)}"
        )
