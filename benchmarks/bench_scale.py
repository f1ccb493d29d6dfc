"""How an audit's time and memory grow with the log: 1, 3 and 10 million rounds, Parquet
and JSON Lines, on 1 and 2 worker processes.

    .venv/bin/python benchmarks/bench_scale.py --keep /tmp/scale [--millions 1 3 10]
        [--encodings parquet jsonl] [--workers 1 2]

A million simulated baccarat rounds on 40 tables (benchmarks/bench_audit.py's log, made
once and kept) is the unit; a larger log is that many copies of its tables under new
ids (`BAC-01-c2`, ...), as a floor or a state's export would hold more tables, with a
house rules file listing every copy. Each log is audited end to end in a child process
(no report), and the time and the peak memory of the audit and its workers (sampled ten
times a second) are printed as a table. JSON Lines is written with every column on every
row (null where unused), the largest form a table system exports: 6.8 GB a million
rounds, so 10 million need about 70 GB of disk.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import polars as pl
from bench_audit import ROOT, _generate, _machine_reference, timed_audit


def _copies(unit: Path, house: Path, copies: int, encoding: str, folder: Path) -> tuple[Path, Path]:
    """The unit log's tables `copies` times under new ids, and a house file for them."""
    log = folder / f"baccarat-{copies}m.{encoding}"
    scaled_house = folder / f"house-{copies}m.toml"
    if not log.exists():
        scan = pl.scan_parquet(unit)
        frames = [scan.with_columns(pl.col("table_id") + f"-c{n}") if n else scan
                  for n in range(copies)]
        whole = pl.concat(frames)
        if encoding == "parquet":
            whole.sink_parquet(log)
        else:
            whole.sink_ndjson(log)
    text = house.read_text(encoding="utf-8")
    head, _, tables = text.partition("[[tables]]")
    blocks = "[[tables]]" + tables
    copied = [blocks] + [re.sub(r'(table_id = "[^"]+)"', rf'\1-c{n}"', blocks)
                         for n in range(1, copies)]
    scaled_house.write_text(head + "\n".join(copied), encoding="utf-8")
    return log, scaled_house


def _audit(log: Path, house: Path, workers: int, out: Path) -> tuple[float, int]:
    return timed_audit(ROOT / ".venv/bin/auditor", log, house, out,
                       "--workers", str(workers), "--workdir", str(out.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True,
                        help="folder for the logs (made once, reused)")
    parser.add_argument("--millions", type=int, nargs="+", default=[1, 3, 10])
    parser.add_argument("--encodings", nargs="+", default=["parquet", "jsonl"],
                        choices=["parquet", "jsonl"])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    unit, house = args.keep / "baccarat.parquet", args.keep / "house.toml"
    if not (unit.exists() and house.exists()):
        unit, house = _generate("baccarat", 1_000_000, 40, 7, args.keep)
    _machine_reference()
    print("| rounds | encoding | workers | seconds | s per million rounds | peak memory |")
    print("| --- | --- | --- | --- | --- | --- |")
    for millions in args.millions:
        for encoding in args.encodings:
            log, scaled = _copies(unit, house, millions, encoding, args.keep)
            for workers in args.workers:
                elapsed, peak = _audit(log, scaled, workers, args.keep / "out")
                print(f"| {millions:,},000,000 | {encoding} | {workers} | {elapsed:.1f} | "
                      f"{elapsed / millions:.1f} | {peak / 1024**3:.2f} GB |", flush=True)


if __name__ == "__main__":
    main()
