"""A folder of text exports, one table a file: peak memory and time of the audit beside
polars reading the same files.

    .venv/bin/python benchmarks/bench_files.py --keep /tmp/files [--files 4 8 40]
        [--rounds 50000] [--encoding jsonl|csv|jsonl.gz] [--memory GB]

One baccarat table of N simulated rounds (50,000 by default: about a million rows) is
written once as a text file; the log of F files is F copies of it under new table ids
(`BAC-0001`, ...), as a table system writes a file per table or per hour, with a house
rules file listing every table. For each count it times polars reading the files
(`pl.read_ndjson`/`pl.read_csv` over the list, every column as text) and `auditor audit`
on the folder in a child process (no report), with the peak resident memory of the audit
and its workers, sampled ten times a second. `--reading RUNS` times instead polars' read
and the audit's own reading of the files (looked over and spilled to Parquet by table),
in turn. `--million` times instead one JSON Lines
file of a million rounds on 40 tables (bench_audit's log, every column written on every
row as bench_scale writes it: 6.8 GB).
"""

from __future__ import annotations

import argparse
import gzip
import re
import tempfile
import time
from pathlib import Path

import polars as pl
from bench_audit import ROOT, _generate, _machine_reference, timed_audit

from auditor.ingest.partition import open_log
from auditor.ingest.readers import TEXT_SCHEMA
from auditor.ingest.sources import expand
from auditor.simulate import baccarat
from auditor.simulate.writer import write_events, write_house_rules

UNIT_TABLE = "BAC-01"


def _unit(folder: Path, rounds: int, encoding: str) -> tuple[Path, Path]:
    """One table's simulated rounds as a text file, and its house rules (made once)."""
    log, house = folder / f"unit-{rounds}.{encoding}", folder / f"unit-{rounds}.toml"
    if not (log.exists() and house.exists()):
        sim = baccarat.simulate(rounds=rounds, tables=1, seed=11)
        write_events(sim.events, log, encoding)
        write_house_rules(sim.tables, house)
    return log, house


def _table(n: int) -> str:
    return f"BAC-{n:04d}"


def _copies(unit: Path, house: Path, files: int, encoding: str, folder: Path) -> tuple[Path, Path]:
    """A folder of `files` copies of the unit table, each under an id of its own, and a
    house rules file listing them."""
    name = unit.name.replace(".", "-")
    log = folder / f"files-{files}-{name}"
    scaled = folder / f"house-{files}-{name}.toml"
    log.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if encoding.endswith(".gz") else open
    with opener(unit, "rb") as handle:
        data = handle.read()
    for n in range(1, files + 1):
        target = log / f"table-{n:04d}.{encoding}"
        if not target.exists():
            renamed = data.replace(UNIT_TABLE.encode(), _table(n).encode())
            with opener(target, "wb") as handle:
                handle.write(renamed)
    text = house.read_text(encoding="utf-8")
    head, _, block = text.partition("[[tables]]")
    blocks = [re.sub(r'table_id = "[^"]+"', f'table_id = "{_table(n)}"', "[[tables]]" + block)
              for n in range(1, files + 1)]
    scaled.write_text(head + "\n".join(blocks), encoding="utf-8")
    return log, scaled


def polars_read(files: list[Path], encoding: str) -> float:
    """Seconds polars takes to read the files, every column as text (what the audit
    reads them as before typing)."""
    started = time.perf_counter()
    if encoding.startswith("jsonl"):
        rows = sum(pl.read_ndjson(f, schema=TEXT_SCHEMA).height for f in files)
    else:
        rows = sum(pl.read_csv(f, infer_schema=False).height for f in files)
    elapsed = time.perf_counter() - started
    size = sum(f.stat().st_size for f in files)
    print(f"polars reads {len(files)} files ({size / 1e6:,.0f} MB, {rows:,} rows) in "
          f"{elapsed:.2f} s ({size / 1e6 / elapsed:,.0f} MB/s)", flush=True)
    return elapsed


def spilled(files: list[Path], work: Path) -> float:
    """Seconds the audit's reading takes: every file looked over and spilled to Parquet
    by table (ingest.partition.open_log, as an audit of a large log reads it)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=work) as folder:
        log = open_log(expand([str(f) for f in files]), Path(folder), spill_text=True)
        rows = sum(f.rows for f in log.files)
    elapsed = time.perf_counter() - started
    print(f"read and spilled by the audit: {elapsed:.2f} s ({rows:,} rows)", flush=True)
    return elapsed


def audit(log: Path, house: Path, out: Path, *options: str) -> tuple[float, int]:
    elapsed, peak = timed_audit(ROOT / ".venv/bin/auditor", log, house, out,
                                "--workdir", str(out.parent), *options)
    print(f"auditor audit: {elapsed:.2f} s, peak memory {peak / 1024**3:.2f} GB", flush=True)
    found = pl.read_parquet(out / "findings.parquet")
    # the files are copies of one table's play: each shoe of a copy repeats the first's
    # order (BA108); a clean simulated log has no other finding
    other = found.filter(pl.col("rule_id") != "BA108").height
    print(f"findings: {found.height}, {other} of them not BA108 (the copies' shoes repeat "
          "the first file's order; a clean simulated log has no other)", flush=True)
    return elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True,
                        help="folder for the logs (made once, reused)")
    parser.add_argument("--files", type=int, nargs="+", default=[4, 8, 40])
    parser.add_argument("--rounds", type=int, default=50_000, help="rounds a file")
    parser.add_argument("--encoding", default="jsonl", choices=["jsonl", "csv", "jsonl.gz",
                                                                "csv.gz"])
    parser.add_argument("--million", action="store_true",
                        help="one JSON Lines file of a million rounds on 40 tables instead")
    parser.add_argument("--memory", help="--memory GB for the audit")
    parser.add_argument("--reading", type=int, metavar="RUNS",
                        help="time instead polars' read and the audit's reading and spill "
                        "of the files, in turn, RUNS times each")
    args = parser.parse_args()
    args.keep.mkdir(parents=True, exist_ok=True)
    options = ["--memory", args.memory] if args.memory else []
    _machine_reference()
    print("| log | size | polars read | `auditor audit` | ratio | peak memory |")
    rows = []
    if args.million:
        unit, house = args.keep / "baccarat.parquet", args.keep / "house.toml"
        if not (unit.exists() and house.exists()):
            unit, house = _generate("baccarat", 1_000_000, 40, 7, args.keep)
        log = args.keep / "baccarat-1m.jsonl"
        if not log.exists():  # every column on every row, as bench_scale writes it
            pl.scan_parquet(unit).sink_ndjson(log)
        logs = [("1,000,000 rounds, one file", log, house, [log])]
    else:
        unit, house = _unit(args.keep, args.rounds, args.encoding)
        logs = []
        for files in args.files:
            folder, scaled = _copies(unit, house, files, args.encoding, args.keep)
            logs.append((f"{files} files, {files * args.rounds:,} rounds", folder, scaled,
                         sorted(folder.iterdir())))
    if args.reading:
        _reading(logs, args.encoding, args.reading, args.keep)
        return
    for name, log, house, files in logs:
        read = polars_read(files, args.encoding)
        elapsed, peak = audit(log, house, args.keep / "out", *options)
        size = sum(f.stat().st_size for f in files)
        rows.append(f"| {name} | {size / 1e9:.2f} GB | {read:.1f} s | {elapsed:.1f} s | "
                    f"{elapsed / read:.1f}x | {peak / 1024**3:.2f} GB |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


def _reading(logs: list, encoding: str, runs: int, work: Path) -> None:
    """Polars' read and the audit's read and spill of each log, in turn (so that a slow
    minute of the machine falls on both), and their ratio."""
    print("| log | polars read | read and spilled | ratio |")
    print("| --- | --- | --- | --- |")
    for name, _, _, files in logs:
        polars, ours = [], []
        for _ in range(runs):
            polars.append(polars_read(files, encoding))
            ours.append(spilled(files, work))
        print(f"| {name}, {encoding} | {min(polars):.2f}-{max(polars):.2f} s | "
              f"{min(ours):.2f}-{max(ours):.2f} s | {min(ours) / min(polars):.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
