"""Shoe prints: each shoe's order kept in the store, so that tonight's shoes are compared
with every shoe of earlier runs (BA108, BJ106 across nights; docs/checked/shoe-order.md).

A print is bounded (under 1 KB a shoe):

- the shoe's cards, one byte a card (games.shoe_order codes), to verify a candidate
  exactly: a hash never makes a finding;
- its **winnowed** gram hashes: the hash (UInt32) of every run of `G` cards, and of every
  window of `W` consecutive hashes the smallest kept. Two shoes sharing a run of
  W + G - 1 cards share that run's W grams, a whole window in each, so both keep its
  smallest hash: every run of k = 14 cards (G = 7, W = 8) is found. A shoe compared on
  values (a table whose log records cards by value only) is printed on values instead,
  with value grams of `GV` = 14 and windows of `WV` = 15 (28 values).

Tonight's hashes are looked up against the stored ones in memory: the stored hashes
(`shoe_prints.hashes`, sorted UInt32 bytes) are read in one pass, in batches, each batch
one polars column looked up in the set of tonight's; the candidate shoes' cards are then
read and compared with tonight's exactly (shoe_order.repeated_runs).
A shoe of tonight is never compared with itself (same table and shoe) printed by an
earlier run of a log cut during it.
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass
from datetime import datetime

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..games import shoe_order
from .schema import runs, shoe_prints

G, W = 7, 8  # full cards: grams of 7, windows of 8 grams (runs of 14 found)
GV, WV = 14, 15  # values: grams of 14, windows of 15 (runs of 28 found)
_32 = 1 << 32


def hash32(key: pl.Expr) -> pl.Expr:
    """A gram's packed bits (below 2^64) mixed into 32 bits, the same on every machine and
    polars version (no overflow: every product stays below 2^64)."""
    low, high = key % _32, key // _32
    x = (low * 0x9E3779B1 % _32 + high * 0x85EBCA77 % _32) % _32
    for _ in range(2):
        x = (x.xor(x // (1 << 16)) * 0x45D9F3B) % _32
    return x.xor(x // (1 << 16)).cast(pl.UInt32)


def _kept_hashes(cards: pl.DataFrame, by_value: bool) -> pl.DataFrame:
    """(sid, hash): the winnowed gram hashes of each shoe of `cards` (sid, pos, length,
    code; sorted by sid and pos)."""
    g, w, bits = (GV, WV, 4) if by_value else (G, W, 6)
    symbol = shoe_order.value_of(pl.col("code")) if by_value else pl.col("code")
    [key] = shoe_order._packed(cards, symbol, bits, g)
    grams = (
        cards.lazy()
        .with_columns(hash32(key).alias("hash"))
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


def _blob(values: list[int], code: str) -> bytes:
    """Unsigned integers as little-endian bytes (array's `code`: "I" 4 bytes, "B" 1)."""
    packed = array(code, values)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def _unblob(blob: bytes) -> pl.Series:
    """The UInt32 values of a little-endian blob."""
    if not blob:
        return pl.Series([], dtype=pl.UInt32)
    if sys.byteorder == "big":
        swapped = array("I", blob)
        swapped.byteswap()
        blob = swapped.tobytes()
    return (pl.Series([blob], dtype=pl.Binary)
            .bin.reinterpret(dtype=pl.Array(pl.UInt32, len(blob) // 4)).reshape((-1,)))


@dataclass
class Prints:
    """Tonight's shoes: one row each (table_id, shoe_id, game, by_value, cards: bytes,
    hashes: bytes of sorted unique UInt32)."""

    frame: pl.DataFrame


SCHEMA = {"table_id": pl.String, "shoe_id": pl.String, "game": pl.String,
          "by_value": pl.Boolean, "cards": pl.Binary, "hashes": pl.Binary}


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
    rows = []
    for by_value in (False, True):
        mine = numbered.filter(pl.col("by_value") == by_value)
        if mine.is_empty():
            continue
        kept = (_kept_hashes(mine, by_value).group_by("sid", maintain_order=True)
                .agg("hash"))
        part = shoes.filter(pl.col("by_value") == by_value).join(kept, on="sid", how="left")
        for table, shoe, game, codes, hashes in part.select(
                "table_id", "shoe_id", "game", "code", "hash").iter_rows():
            rows.append((table, shoe, game, by_value, _blob(codes, "B"),
                         _blob(hashes or [], "I")))
    return Prints(pl.DataFrame(rows, schema=SCHEMA, orient="row"))


PRINTS_SINCE = 5  # the schema version that made shoe_prints


def kept(conn: Connection) -> bool:
    """Whether the store keeps prints (a store made by this auditor, or upgraded by it)."""
    from .schema import version

    return version(conn) >= PRINTS_SINCE


def _candidates(conn: Connection, tonight: Prints,
                by_value: bool) -> tuple[list[int], pl.Series]:
    """The print ids of stored shoes that share a kept hash with one of tonight's, and the
    hashes shared: every stored hash read in one pass, in batches, and looked up in
    tonight's."""
    mine = tonight.frame.filter(pl.col("by_value") == by_value)
    if mine.is_empty():
        return [], pl.Series([], dtype=pl.UInt32)
    wanted = pl.concat([_unblob(b) for b in mine["hashes"].to_list()]).unique()
    query = sa.select(shoe_prints.c.print_id, shoe_prints.c.hashes).where(
        shoe_prints.c.by_value == by_value)
    result = conn.execute(query)
    found: list[pl.Series] = []
    shared: list[pl.Series] = []
    while batch := result.fetchmany(100_000):
        ids = pl.Series("id", [r[0] for r in batch], dtype=pl.Int64)
        blobs = [r[1] for r in batch]
        counts = pl.Series([len(b) // 4 for b in blobs], dtype=pl.Int64)
        stored = _unblob(b"".join(blobs))
        owner = ids.repeat_by(counts).explode()
        hit = stored.is_in(wanted.implode())
        found.append(owner.filter(hit).unique())
        shared.append(stored.filter(hit))
    if not found:
        return [], pl.Series([], dtype=pl.UInt32)
    return pl.concat(found).unique().sort().to_list(), pl.concat(shared).unique()


def _sharing(tonight: Prints, hashes: pl.Series) -> pl.DataFrame:
    """(table_id, shoe_id) of tonight's shoes holding one of `hashes`."""
    frame = tonight.frame
    counts = frame["hashes"].bin.size() // 4
    held = _unblob(b"".join(frame["hashes"].to_list()))
    owner = pl.int_range(frame.height, eager=True).repeat_by(counts).explode()
    sharing = owner.filter(held.is_in(hashes.implode())).unique()
    return frame.select("table_id", "shoe_id")[sharing.cast(pl.Int64)]


EARLIER = datetime(1900, 1, 1)  # a stored shoe comes before tonight's


def repeats(conn: Connection, tonight: Prints, cards: pl.DataFrame) -> pl.DataFrame:
    """Tonight's shoes that repeat a run of a shoe of an earlier run: repeated_runs's rows
    (the later shoe tonight's, `table_id_b`, `shoe_id_b` the stored one's), with `run_b`
    (the earlier run's id) and `run_began_b` (when it ran, UTC), `seq_b` null."""
    if not kept(conn):
        return pl.DataFrame()
    (full, full_hashes), (values, value_hashes) = (_candidates(conn, tonight, False),
                                                   _candidates(conn, tonight, True))
    ids = full + values
    if not ids:
        return pl.DataFrame()
    # only tonight's shoes that share a hash with a stored one are compared
    cards = cards.join(_sharing(tonight, pl.concat([full_hashes, value_hashes])),
                       on=["table_id", "shoe_id"], how="semi")
    stored = []
    for chunk in range(0, len(ids), 5_000):
        query = (sa.select(shoe_prints.c.print_id, shoe_prints.c.run_id,
                           shoe_prints.c.table_id, shoe_prints.c.shoe_id,
                           shoe_prints.c.by_value, shoe_prints.c.cards, runs.c.started_at)
                 .join(runs, runs.c.run_id == shoe_prints.c.run_id)
                 .where(shoe_prints.c.print_id.in_(ids[chunk:chunk + 5_000])))
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
    """Tonight's prints into the store (in the run's transaction); how many."""
    if not kept(conn):
        return 0
    rows = [dict(r, run_id=run_id) for r in tonight.frame.iter_rows(named=True)]
    for chunk in range(0, len(rows), 10_000):
        conn.execute(shoe_prints.insert(), rows[chunk:chunk + 10_000])
    return len(rows)
