"""Writing hand-history-v1 logs and a matching house rules file.

`write_events` writes events in any encoding the format allows (JSON Lines,
CSV, Parquet; the text ones optionally gzipped) with exactly the spec's
columns in the spec's order. Money is carried as integer cents from end to
end and only turned into decimal dollars as text (or as a Parquet
``Decimal(12, 2)``), so no amount is ever written as a float such as
``1.2500000001``.

- JSON Lines: a column an event does not use is absent from its object;
  amounts are JSON numbers (``25``, ``1.25``), `accepted` a JSON boolean.
- CSV: a header row, every column on every row, unused ones empty.
- Parquet: strings, ``Int64`` integers, a boolean `accepted` and a
  ``Decimal(12, 2)`` amount; unused values are null.

Frames are written in slices so that a log of millions of rows never has to
exist as one big text in memory.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import IO, Any

import polars as pl

from ..house import BACCARAT_DEFAULTS, BLACKJACK_DEFAULTS
from ..ingest import vocabulary as v

__all__ = ["ENCODINGS", "events_frame", "write_events", "write_house_rules"]

ENCODINGS = ("jsonl", "jsonl.gz", "csv", "csv.gz", "parquet")

COLUMNS = v.COLUMNS
CENTS = "amount_cents"  # the internal integer-cents column
AMOUNT_DTYPE = pl.Decimal(12, 2)
SLICE_ROWS = 500_000
GZIP_LEVEL = 6

_INTEGERS = frozenset(v.INTEGER_COLUMNS)
# Characters that a JSON string must escape; text without them is written as is.
_JSON_UNSAFE = r'["\\\x00-\x1f]'


# --- normalising the input ------------------------------------------------------


def _cents(value: Any) -> int | None:
    """Decimal dollars (int, float, str or Decimal) as integer cents; exact or an error."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"amount {value!r} is not a number")
    try:
        dollars = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"amount {value!r} is not decimal dollars") from None
    cents = dollars * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"amount {value!r} has more than two decimals")
    return int(cents)


def _frame_from_dicts(events: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    data: dict[str, pl.Series] = {}
    for column in COLUMNS:
        values = [event.get(column) for event in events]
        if column == "amount":
            data[CENTS] = pl.Series(CENTS, [_cents(x) for x in values], dtype=pl.Int64)
        elif column in _INTEGERS:
            data[column] = pl.Series(column, values, dtype=pl.Int64)
        elif column in v.BOOLEAN_COLUMNS:
            data[column] = pl.Series(column, values, dtype=pl.Boolean)
        else:
            data[column] = pl.Series(
                column, [None if x is None else str(x) for x in values], dtype=pl.String
            )
    return pl.DataFrame(data)


def _cents_expr(dtype: pl.DataType) -> pl.Expr:
    col = pl.col("amount")
    if isinstance(dtype, pl.Decimal):
        return (col * 100).cast(pl.Int64)
    if dtype.is_integer():
        return col.cast(pl.Int64) * 100
    if dtype.is_float():
        return (col * 100).round().cast(pl.Int64)
    if dtype == pl.Null:
        return pl.lit(None, pl.Int64)
    return col.cast(pl.String).str.strip_chars().cast(pl.Decimal(18, 2)).mul(100).cast(pl.Int64)


def _ts_expr(dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, pl.Datetime):
        fmt = "%Y-%m-%dT%H:%M:%S%:z" if dtype.time_zone else "%Y-%m-%dT%H:%M:%S"
        return pl.col("ts").dt.strftime(fmt)
    return pl.col("ts").cast(pl.String)


def events_frame(events: Iterable[Mapping[str, Any]] | pl.DataFrame) -> pl.DataFrame:
    """The events as a frame of the spec's columns, in order, with `amount_cents` for `amount`.

    Accepts the simulator's frame (any string-like dtypes, a Decimal, integer,
    float or text `amount`, or an `amount_cents` column) or a list of event
    dicts holding only the fields each event uses.
    """
    if not isinstance(events, pl.DataFrame):
        return _frame_from_dicts(list(events))
    frame = events
    schema = frame.schema
    exprs: list[pl.Expr] = []
    for column in COLUMNS:
        if column == "amount":
            if "amount" in schema:
                exprs.append(_cents_expr(schema["amount"]).alias(CENTS))
            elif CENTS in schema:
                exprs.append(pl.col(CENTS).cast(pl.Int64))
            else:
                exprs.append(pl.lit(None, pl.Int64).alias(CENTS))
        elif column not in schema:
            dtype = (
                pl.Int64
                if column in _INTEGERS
                else pl.Boolean
                if column in v.BOOLEAN_COLUMNS
                else pl.String
            )
            exprs.append(pl.lit(None, dtype).alias(column))
        elif column in _INTEGERS:
            exprs.append(pl.col(column).cast(pl.Int64))
        elif column in v.BOOLEAN_COLUMNS:
            exprs.append(pl.col(column).cast(pl.Boolean))
        elif column == "ts":
            exprs.append(_ts_expr(schema["ts"]).alias("ts"))
        else:
            exprs.append(pl.col(column).cast(pl.String))
    return frame.select(exprs)


# --- text forms -----------------------------------------------------------------


def _amount_text(cents: pl.Expr) -> pl.Expr:
    """Integer cents as decimal dollars: 2500 -> "25", 125 -> "1.25", 150 -> "1.50"."""
    magnitude = cents.abs()
    whole = (magnitude // 100).cast(pl.String)
    frac = (magnitude % 100).cast(pl.String).str.zfill(2)
    text = pl.when(magnitude % 100 == 0).then(whole).otherwise(pl.format("{}.{}", whole, frac))
    return pl.when(cents < 0).then(pl.lit("-") + text).otherwise(text)


def _json_fragment(frame: pl.DataFrame, column: str) -> pl.Expr:
    key = json.dumps(column) + ":"
    if column == "amount":
        return pl.lit(key) + _amount_text(pl.col(CENTS))
    dtype = frame.schema[column]
    if column in _INTEGERS or dtype == pl.Boolean:
        return pl.lit(key) + pl.col(column).cast(pl.String)
    unsafe = frame.select(pl.col(column).str.contains(_JSON_UNSAFE).any()).item()
    if unsafe:
        encoded = pl.struct(pl.col(column).alias(column)).struct.json_encode()
        return pl.when(pl.col(column).is_not_null()).then(
            encoded.str.strip_prefix("{").str.strip_suffix("}")
        )
    return pl.lit(key + '"') + pl.col(column) + pl.lit('"')


def _json_lines(frame: pl.DataFrame) -> pl.DataFrame:
    fragments = [_json_fragment(frame, c) for c in COLUMNS]
    body = pl.concat_str(fragments, separator=",", ignore_nulls=True)
    return frame.select((pl.lit("{") + body + pl.lit("}")).alias("line"))


def _written(frame: pl.DataFrame) -> list[str]:
    """The columns a file holds: the 1.2 columns only where some row uses them, so that
    a log without irregularities is written as a 1.1 log is."""
    return [c for c in COLUMNS
            if c not in v.COLUMNS_1_2 or frame.get_column(c).null_count() < frame.height]


def _csv_text(frame: pl.DataFrame) -> pl.DataFrame:
    exprs = []
    for column in _written(frame):
        if column == "amount":
            exprs.append(_amount_text(pl.col(CENTS)).alias("amount"))
        else:
            exprs.append(pl.col(column).cast(pl.String))
    return frame.select(exprs)


def _parquet_frame(frame: pl.DataFrame) -> pl.DataFrame:
    exprs = []
    for column in _written(frame):
        if column == "amount":
            dollars = pl.col(CENTS).cast(AMOUNT_DTYPE) / 100
            exprs.append(dollars.cast(AMOUNT_DTYPE).alias("amount"))
        else:
            exprs.append(pl.col(column))
    return frame.select(exprs)


# --- writing --------------------------------------------------------------------


def _slices(frame: pl.DataFrame) -> Iterable[pl.DataFrame]:
    if frame.height == 0:
        yield frame
        return
    for offset in range(0, frame.height, SLICE_ROWS):
        yield frame.slice(offset, SLICE_ROWS)


def _write_text(frame: pl.DataFrame, handle: IO[bytes], kind: str) -> None:
    for index, part in enumerate(_slices(frame)):
        buffer = io.BytesIO()  # one write per slice: cheap for gzip, whatever polars' chunking
        if kind == "jsonl":
            if part.height:
                _json_lines(part).write_csv(buffer, include_header=False, quote_style="never")
        else:
            _csv_text(part).write_csv(buffer, include_header=index == 0, null_value="")
        handle.write(buffer.getbuffer())


def write_events(
    events: Iterable[Mapping[str, Any]] | pl.DataFrame, path: Path | str, encoding: str
) -> Path:
    """Write events to `path` as `encoding` (one of `ENCODINGS`); returns the path."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r} (one of {', '.join(ENCODINGS)})")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = events_frame(events)
    if encoding == "parquet":
        _parquet_frame(frame).write_parquet(path)
        return path
    kind = encoding.removesuffix(".gz")
    if encoding.endswith(".gz"):
        with gzip.open(path, "wb", compresslevel=GZIP_LEVEL) as handle:
            _write_text(frame, handle, kind)
    else:
        with path.open("wb") as handle:
            _write_text(frame, handle, kind)
    return path


# --- house rules ----------------------------------------------------------------

# Keys a [[tables]] entry may hold, by game (see auditor.house).
_TABLE_KEYS = {
    "baccarat": ("table_id", "game", "pit", "variant", "ez", "decks", "commission_percent"),
    "blackjack": (
        "table_id",
        "game",
        "pit",
        "decks",
        "dealer_hits_soft_17",
        "blackjack_pays",
        "insurance_pays",
        "surrender",
        "payout_limit",
        "dealt_from",
        "optional_wagers",
    ),
}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in value) + "]"
    raise TypeError(f"cannot write {value!r} to TOML")


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def write_house_rules(
    tables: Iterable[Mapping[str, Any]],
    path: Path | str,
    *,
    facility: str = "Simulated Casino",
    baccarat: Mapping[str, Any] | None = None,
    blackjack: Mapping[str, Any] | None = None,
    procedures: Mapping[str, str] | None = None,
) -> Path:
    """A house rules TOML for `tables` (dicts as in `Simulation.tables`).

    Every [baccarat] and [blackjack] key is written (defaults of
    `auditor.house` unless given). The collection procedure of each pit comes
    from `procedures` or else from the tables' `procedure` key; keys a
    [[tables]] entry may not hold (such as `procedure`) are left out.
    """
    tables = [dict(t) for t in tables]
    section = {**BACCARAT_DEFAULTS, **(baccarat or {})}
    bj = {**BLACKJACK_DEFAULTS, **(blackjack or {})}
    pits: dict[str, str] = {}
    for table in tables:
        if table.get("game", "baccarat") == "baccarat" and table.get("procedure"):
            pits.setdefault(str(table["pit"]), str(table["procedure"]))
    pits.update(procedures or {})

    lines = [f"facility = {_toml_value(facility)}", "", "[baccarat]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in section.items()]
    lines += ["", "[baccarat.collection_procedure]"]
    lines += [f"{json.dumps(pit)} = {_toml_value(proc)}" for pit, proc in sorted(pits.items())]
    lines += ["", "[blackjack]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in bj.items()]
    for table in tables:
        game = table.get("game", "baccarat")
        lines += ["", "[[tables]]"]
        for key in _TABLE_KEYS.get(game, _TABLE_KEYS["baccarat"]):
            if key == "game":
                lines.append(f"game = {_toml_value(game)}")
            elif table.get(key) is not None:
                lines.append(f"{_toml_key(key)} = {_toml_value(table[key])}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
