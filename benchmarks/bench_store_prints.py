"""The store's shoe prints over a year of a large facility: their size, and how long one
night's shoes take to compare with every print of the year.

    .venv/bin/python benchmarks/bench_store_prints.py [--store-dir DIR] [--shoes 876000]
        [--nights 3]

The facility of docs/checked/shoe-order.md: 200 tables dealing 12 shoes a day, 876,000
shoes a year, 8-deck baccarat shoes dealt to the cover card (about 400 cards). The year
is built once into a SQLite store (DIR/year-N.db, kept for later runs): a run a night of
2,400 prints, each with 400 random cards and as many random hashes as a real print of
such a shoe keeps (the mean of real prints, measured first), the first of them the real
print of a real shoe. A night is then 2,400 real shoes (prints.prints_of over shuffled 8-deck
shoes), one of them that real shoe cut and dealt again: the comparison
(prints.repeats: every stored hash read, tonight's looked up, candidates verified on
their cards) is timed, and must find that one shoe and nothing else. Prints the bytes a
print holds, the store's bytes per shoe and per year, and each night's time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import sqlalchemy as sa

from auditor.store import prints, schema

NIGHT_SHOES = 200 * 12


def _shoe(rng: random.Random) -> list[int]:
    shoe = [c for c in range(52) for _ in range(8)]
    rng.shuffle(shoe)
    return shoe[: 416 - rng.randint(14, 20)]


def _cards(shoes: dict[str, list[int]], day: int) -> pl.DataFrame:
    rows = [(f"BAC-{i % 200:03d}", name, j + 1, code)
            for i, (name, codes) in enumerate(shoes.items()) for j, code in enumerate(codes)]
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                       "seq": pl.Int64, "code": pl.UInt8}, orient="row")
    return frame.with_columns(
        pl.lit(datetime(2027, 1, 1 + day)).alias("time"), pl.lit(True).alias("audited"),
        pl.lit(0, pl.Int32).alias("file_id"), pl.col("seq").alias("line"),
        pl.lit(False).alias("by_value"), pl.lit(14, pl.UInt16).alias("k"),
        pl.lit(28, pl.UInt16).alias("kv"), pl.lit("baccarat").alias("game"))


_MOD52 = bytes(b % 52 for b in range(256))


def build_year(path: Path, shoes: int, planted: dict, mean_hashes: int) -> float:
    """The year's store, a run a night of 2,400 shoes; seconds it took."""
    began = time.perf_counter()
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        schema.migrate(conn)
    nights = -(-shoes // NIGHT_SHOES)
    for night in range(nights):
        count = min(NIGHT_SHOES, shoes - night * NIGHT_SHOES)
        run_id = f"night-{night}"
        at = datetime(2026, 1, 1) + timedelta(days=night)
        rows = [{"run_id": run_id, "table_id": f"BAC-{i % 200:03d}", "shoe_id": f"Y{night}-{i}",
                 "game": "baccarat", "by_value": False, "position": i,
                 "cards": os.urandom(400).translate(_MOD52)} for i in range(count)]
        hashes = _random40(count * mean_hashes).reshape((count, mean_hashes)).to_list()
        if night == 0:  # the real print of a real shoe, first of the year
            rows[0].update(cards=planted["cards"], shoe_id="PLANTED")
            hashes[0] = planted["hashes"]
        frame = pl.DataFrame({"hashes": hashes, "position": range(count)},
                             schema={"hashes": pl.List(pl.UInt64), "position": pl.Int64})
        with engine.begin() as conn:
            conn.execute(schema.runs.insert(), [{
                "run_id": run_id, "started_at": at, "finished_at": at,
                "auditor_version": "x", "inputs": 1, "context_inputs": 0, "tables": 200,
                "rows_read": 0, "rows_audited": 0, "rows_reported": 0, "rounds_read": 0,
                "rounds_audited": 0, "rounds_reported": 0, "findings": 0, "errors": 0,
                "warnings": 0, "underpaid": 0, "overcharged": 0, "overpaid": 0, "out_dir": "-",
                "report_id": "-"}])
            conn.execute(schema.shoe_prints.insert(), rows)
            conn.execute(schema.print_index.insert(), [{
                "run_id": run_id, "by_value": False, "hashes": prints._index_bytes(frame)}])
    engine.dispose()
    return time.perf_counter() - began


def _random40(n: int) -> pl.Series:
    """n random 40-bit hashes."""
    blob = os.urandom(8 * n)
    return (pl.Series([blob], dtype=pl.Binary)
            .bin.reinterpret(dtype=pl.Array(pl.UInt64, n)).reshape((-1,)) % (1 << 40))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/bench_store_prints"))
    parser.add_argument("--shoes", type=int, default=876_000)
    parser.add_argument("--nights", type=int, default=3)
    args = parser.parse_args()
    args.store_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(40)
    planted_shoe = _shoe(rng)
    sample = {f"S-{i}": _shoe(rng) for i in range(2_000)}
    sample["PLANTED"] = planted_shoe
    made = prints.prints_of(_cards(sample, 0)).frame
    sizes = made.select(pl.col("hashes").list.len(), pl.col("cards").bin.size())
    mean_hashes = round(sizes["hashes"].mean())
    planted_row = made.filter(pl.col("shoe_id") == "PLANTED").row(0, named=True)
    print(f"a print: {sizes['cards'].mean():.0f} bytes of cards, {mean_hashes} hashes of "
          f"40 bits ({sizes['hashes'].min()}-{sizes['hashes'].max()})")
    path = args.store_dir / f"year-{args.shoes}.db"
    if not path.exists():
        took = build_year(path, args.shoes, planted_row, mean_hashes)
        print(f"built the year ({args.shoes:,} prints) in {took:.0f} s")
    size = path.stat().st_size
    print(f"store: {size / 1e9:.2f} GB, {size / args.shoes:.0f} bytes a shoe "
          f"({size / args.shoes * 876_000 / 1e9:.2f} GB for 876,000 shoes)")
    engine = sa.create_engine(f"sqlite:///{path}")
    times = []
    for night in range(args.nights):
        shoes = {f"N{night}-{i}": _shoe(rng) for i in range(NIGHT_SHOES - 1)}
        cut = rng.randrange(0, 150)
        shoes[f"N{night}-AGAIN"] = planted_shoe[cut:] + planted_shoe[:cut]
        cards = _cards(shoes, 1 + night)
        began = time.perf_counter()
        tonight = prints.prints_of(cards)
        printed = time.perf_counter() - began
        with engine.connect() as conn:
            found = prints.repeats(conn, tonight, cards)
        took = time.perf_counter() - began
        times.append(took)
        names = sorted(found["shoe_id"].to_list()) if found.height else []
        assert names == [f"N{night}-AGAIN"], names
        print(f"night {night + 1}: {NIGHT_SHOES:,} shoes printed in {printed:.2f} s, "
              f"compared with the year in {took:.2f} s in all; found {names} "
              f"({found['cards'][0]} cards)")
    engine.dispose()
    print(f"comparison: median {statistics.median(times):.2f} s, slowest {max(times):.2f} s")


if __name__ == "__main__":
    main()
