"""Shoe prints: each shoe's order kept in the store, so that tonight's shoes are compared
with every shoe of earlier runs (BA108, BJ106 across nights; docs/checked/shoe-order.md).

A print is bounded (under 1 KB a shoe):

- the shoe's cards, one byte a card (games.shoe_order codes), to verify a candidate
  exactly: a hash never makes a finding;
- its **winnowed** gram hashes: the hash (40 bits) of every run of `G` cards, and of every
  window of `W` consecutive hashes the smallest kept. Two shoes sharing a run of
  W + G - 1 cards share that run's W grams, a whole window in each, so both keep its
  smallest hash: every run of k = 14 cards (G = 7, W = 8) is found. A shoe compared on
  values (a table whose log records cards by value only) is printed on values instead,
  with value grams of `GV` = 14 and windows of `WV` = 15 (28 values).

The hashes are 40 bits. Each run keeps its shoes' hashes in one row a kind
(`print_index`: Parquet of hash and place), so a night reads a year's hashes in a few
hundred rows and joins them with tonight's at once; the candidate shoes' cards are then
read and compared with tonight's exactly (shoe_order.repeated_runs).
A shoe of tonight is never compared with itself (same table and shoe) printed by an
earlier run of a log cut during it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..games import shoe_order
from .schema import print_index, runs, shoe_prints

G, W = 7, 8  # full cards: grams of 7, windows of 8 grams (runs of 14 found)
GV, WV = 14, 15  # values: grams of 14, windows of 15 (runs of 28 found)
_32 = 1 << 32


def _mixed(key: pl.Expr, a: int, b: int) -> pl.Expr:
    """A gram's packed bits (below 2^64) mixed into 32 bits, the same on every machine and
    polars version (no overflow: every product stays below 2^64)."""
    low, high = key % _32, key // _32
    x = (low * a % _32 + high * b % _32) % _32
    for _ in range(2):
        x = (x.xor(x // (1 << 16)) * 0x45D9F3B) % _32
    return x.xor(x // (1 << 16))


def hash40(key: pl.Expr) -> pl.Expr:
    """A gram's 40-bit hash (UInt64): two mixes of its bits, 32 and 8 bits. Forty bits
    keep chance matches against a year of stored hashes (some 76 million) to a few a
    night, where 32 would give thousands to verify."""
    return (_mixed(key, 0x9E3779B1, 0x85EBCA77) * 256
            + _mixed(key, 0x85EBCA6B, 0xC2B2AE35) % 256).cast(pl.UInt64)


def _kept_hashes(cards: pl.DataFrame, by_value: bool) -> pl.DataFrame:
    """(sid, hash): the winnowed gram hashes of each shoe of `cards` (sid, pos, length,
    code; sorted by sid and pos)."""
    g, w, bits = (GV, WV, 4) if by_value else (G, W, 6)
    symbol = shoe_order.value_of(pl.col("code")) if by_value else pl.col("code")
    [key] = shoe_order._packed(cards, symbol, bits, g)
    grams = (
        cards.lazy()
        .with_columns(hash40(key).alias("hash"))
        .filter(pl.col("pos") + g <= pl.col("length"))
        .select("sid", "hash")
        .with_columns(pl.len().over("sid").alias("grams"))
        # the smallest hash of the window of w grams ending at each gram
        .with_columns(pl.col("hash").rolling_min(w).over("sid").alias("least"))
    )
    # a gram is kept when it is the smallest of a window holding it: of the windows ending
    # at it and at the w - 1 grams after it
    held = pl.any_horizontal(
        (pl.col("least").shift(-j).over("sid") == pl.col("hash")).fill_null(False)
        for j in range(w)
    )
    # a shoe shorter than a window keeps every gram (it shares no run long enough anyway)
    return (grams.filter(held | (pl.col("grams") < w)).select("sid", "hash")
            .unique().sort("sid", "hash").collect())


def _blob(values: list[int]) -> bytes:
    """A shoe's card codes, one byte each."""
    return bytes(values)


@dataclass
class Prints:
    """Tonight's shoes, one row each: table_id, shoe_id, game, by_value, `cards` (bytes),
    `hashes` (its kept gram hashes, 40 bits in a UInt64) and `position` (its place in the run's
    prints)."""

    frame: pl.DataFrame


SCHEMA = {"table_id": pl.String, "shoe_id": pl.String, "game": pl.String,
          "by_value": pl.Boolean, "cards": pl.Binary, "hashes": pl.List(pl.UInt64)}


def prints_of(cards: pl.DataFrame) -> Prints:
    """The print of each shoe audited (a shoe with an audited card) of `cards`
    (AuditResult.shoe_cards)."""
    numbered = shoe_order._numbered(cards)
    shoes = (
        numbered.group_by("sid", maintain_order=True)
        .agg(pl.col("table_id", "shoe_id", "game", "by_value").first(),
             pl.col("audited").any(), pl.col("code"))
        .filter(pl.col("audited"))
    )
    numbered = numbered.filter(pl.col("sid").is_in(shoes["sid"].implode()))
    parts = []
    for by_value in (False, True):
        mine = numbered.filter(pl.col("by_value") == by_value)
        if mine.is_empty():
            continue
        kept = (_kept_hashes(mine, by_value).group_by("sid", maintain_order=True)
                .agg(pl.col("hash").alias("hashes")))
        parts.append(shoes.filter(pl.col("by_value") == by_value)
                     .join(kept, on="sid", how="left"))
    if not parts:
        return Prints(pl.DataFrame(schema={**SCHEMA, "position": pl.Int64}))
    frame = pl.concat(parts)
    codes = [_blob(c) for c in frame["code"].to_list()]
    return Prints(frame.select(
        "table_id", "shoe_id", "game", "by_value",
        pl.Series("cards", codes, dtype=pl.Binary),
        pl.col("hashes").fill_null([]).cast(pl.List(pl.UInt64)),
        pl.int_range(pl.len()).alias("position")))


PRINTS_SINCE = 5  # the schema version that made shoe_prints


def kept(conn: Connection) -> bool:
    """Whether the store keeps prints (a store made by this auditor, or upgraded by it)."""
    from .schema import version

    return version(conn) >= PRINTS_SINCE


def _index_bytes(frame: pl.DataFrame) -> bytes:
    """A run's index of one kind: every kept hash and its shoe's place, as Parquet: the
    hash in two columns, 32 and 8 bits (5 bytes, which random bits take however
    compressed), the places in order compress to almost nothing."""
    out = io.BytesIO()
    (frame.select(pl.col("hashes").alias("hash"), pl.col("position").cast(pl.UInt32))
     .explode("hash").drop_nulls("hash")
     .select((pl.col("hash") // 256).cast(pl.UInt32).alias("high"),
             (pl.col("hash") % 256).cast(pl.UInt8).alias("low"), "position")
     .write_parquet(out, compression="zstd", statistics=False))
    return out.getvalue()


def _index_of(blob: bytes) -> pl.DataFrame:
    """(hash, position) of a run's index (_index_bytes)."""
    return pl.read_parquet(io.BytesIO(blob)).select(
        (pl.col("high").cast(pl.UInt64) * 256 + pl.col("low")).alias("hash"), "position")


def _candidates(conn: Connection, tonight: Prints, by_value: bool) -> pl.DataFrame:
    """(run_id, position, hash) of the stored shoes that share a kept hash with one of
    tonight's: every run's index of the kind read in one pass and joined on tonight's
    hashes."""
    mine = tonight.frame.filter(pl.col("by_value") == by_value)
    empty = pl.DataFrame(schema={"run_id": pl.String, "position": pl.UInt32,
                                 "hash": pl.UInt64})
    if mine.is_empty():
        return empty
    wanted = mine.select(pl.col("hashes").explode().alias("hash")).drop_nulls().unique()
    query = sa.select(print_index.c.run_id, print_index.c.hashes).where(
        print_index.c.by_value == by_value)
    result = conn.execute(query)
    names, frames = [], []
    while batch := result.fetchmany(50):
        for run, blob in batch:
            frames.append(_index_of(blob).with_columns(
                pl.lit(len(names), pl.UInt32).alias("run")))
            names.append(run)
    if not frames:
        return empty
    # one join of every stored hash with tonight's (a join a run builds tonight's table
    # each time)
    hits = pl.concat(frames, rechunk=False).join(wanted, on="hash", how="semi")
    return hits.select(
        pl.col("run").replace_strict(list(range(len(names))), names, return_dtype=pl.String)
        .alias("run_id"), "position", "hash")


EARLIER = datetime(1900, 1, 1)  # a stored shoe comes before tonight's


def repeats(conn: Connection, tonight: Prints, cards: pl.DataFrame) -> pl.DataFrame:
    """Tonight's shoes that repeat a run of a shoe of an earlier run: repeated_runs's rows
    (the later shoe tonight's, `table_id_b`, `shoe_id_b` the stored one's), with `run_b`
    (the earlier run's id) and `run_began_b` (when it ran, UTC), `seq_b` null."""
    if not kept(conn):
        return pl.DataFrame()
    hits = pl.concat([_candidates(conn, tonight, False), _candidates(conn, tonight, True)])
    if hits.is_empty():
        return pl.DataFrame()
    # only tonight's shoes that share a hash with a stored one are compared
    sharing = (tonight.frame.select("table_id", "shoe_id", pl.col("hashes").alias("hash"))
               .explode("hash").join(hits.select("hash").unique(), on="hash", how="semi")
               .select("table_id", "shoe_id").unique())
    cards = cards.join(sharing, on=["table_id", "shoe_id"], how="semi")
    wanted = hits.select("run_id", "position").unique().rows()
    stored = []
    for chunk in range(0, len(wanted), 2_000):
        query = (sa.select(shoe_prints.c.print_id, shoe_prints.c.run_id,
                           shoe_prints.c.table_id, shoe_prints.c.shoe_id,
                           shoe_prints.c.by_value, shoe_prints.c.cards, runs.c.started_at)
                 .join(runs, runs.c.run_id == shoe_prints.c.run_id)
                 .where(sa.tuple_(shoe_prints.c.run_id, shoe_prints.c.position)
                        .in_(wanted[chunk:chunk + 2_000])))
        stored += conn.execute(query).all()
    earlier = pl.DataFrame(
        [(f"\x00{r[0]}", r[2], r[3], r[1], r[6], r[4], list(r[5])) for r in stored],
        schema={"shoe_id": pl.String, "orig_table": pl.String, "orig_shoe": pl.String,
                "run_id": pl.String, "run_began": pl.Datetime, "by_value": pl.Boolean,
                "code": pl.List(pl.UInt8)}, orient="row")
    # a stored shoe is compared with tonight's shoes of its game: on one table key of its
    # own (its print id), its cards at seq 1, 2, ...
    k, kv = int(cards["k"][0]), int(cards["kv"][0])
    old_rows = (
        earlier.explode("code")
        .with_columns(
            pl.col("shoe_id").alias("table_id"),
            (pl.int_range(pl.len()).over("shoe_id") + 1).alias("seq"),
            pl.lit(EARLIER).alias("time"),
            pl.lit(False).alias("audited"),
            pl.lit(k, pl.UInt16).alias("k"), pl.lit(kv, pl.UInt16).alias("kv"),
        )
    )
    mine = cards.select("table_id", "shoe_id", "seq", "time", "code", "by_value", "k", "kv")
    both = pl.concat([mine.with_columns(pl.col("time").cast(pl.Datetime("us"))),
                      old_rows.select(mine.columns)
                      .with_columns(pl.col("time").cast(pl.Datetime("us")))])
    runs_found = shoe_order.repeated_runs(both)
    # tonight's shoe against a stored one only; never a shoe against its own earlier print
    names = earlier.select(pl.col("shoe_id").alias("table_id_b"),
                           pl.col("orig_table"), pl.col("orig_shoe"), "run_id", "run_began")
    return (
        runs_found.filter(~pl.col("table_id").str.starts_with("\x00")
                          & pl.col("table_id_b").str.starts_with("\x00"))
        .join(names, on="table_id_b")
        .filter((pl.col("orig_table") != pl.col("table_id"))
                | (pl.col("orig_shoe") != pl.col("shoe_id")))
        .with_columns(pl.col("orig_table").alias("table_id_b"),
                      pl.col("orig_shoe").alias("shoe_id_b"),
                      pl.col("run_id").alias("run_b"), pl.col("run_began").alias("run_began_b"),
                      pl.lit(None, pl.Int64).alias("seq_b"))
        .drop("orig_table", "orig_shoe", "run_id", "run_began")
    )


def write(conn: Connection, run_id: str, tonight: Prints) -> int:
    """Tonight's prints into the store (in the run's transaction), and the run's index of
    their hashes, one per kind; how many shoes."""
    if not kept(conn) or tonight.frame.is_empty():
        return 0
    frame = tonight.frame
    rows = [dict(r, run_id=run_id) for r in frame.drop("hashes").iter_rows(named=True)]
    for chunk in range(0, len(rows), 10_000):
        conn.execute(shoe_prints.insert(), rows[chunk:chunk + 10_000])
    for (by_value,), part in frame.group_by("by_value"):
        conn.execute(print_index.insert(), [{"run_id": run_id, "by_value": by_value,
                                             "hashes": _index_bytes(part)}])
    return len(rows)
