"""Throughput and peak memory of a whole audit, end to end, from Parquet.

    .venv/bin/python benchmarks/bench_audit.py --game baccarat --rounds 1000000

Generates N simulated rounds (not timed), writes them as one Parquet file,
then times (1) polars alone reading the file and (2) `auditor audit` on it in
a child process (no report), and prints rounds/s and the peak memory: the
largest sum of the resident memory of the audit and its worker processes,
sampled ten times a second. It first times a fixed polars workload on this
machine (`machine reference`): machines of the same kind differ in speed, and
the reference says how figures taken on two of them compare. Run it on an
otherwise idle machine; figures go in the README and docs/guides/large-logs.md.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from auditor.simulate.writer import write_events, write_house_rules

ROOT = Path(__file__).resolve().parent.parent


def _generate(game: str, rounds: int, tables: int, seed: int, folder: Path) -> tuple[Path, Path]:
    module = importlib.import_module(f"auditor.simulate.{game}")
    started = time.perf_counter()
    sim = module.simulate(rounds=rounds, tables=tables, seed=seed)
    log = folder / f"{game}.parquet"
    write_events(sim.events, log, "parquet")
    house = folder / "house.toml"
    write_house_rules(sim.tables, house)
    print(f"generated {rounds:,} rounds, {sim.events.height:,} events "
          f"in {time.perf_counter() - started:.1f} s ({log.stat().st_size / 1e6:.0f} MB)")
    return log, house


def _machine_reference() -> float:
    """Seconds, best of three, of a fixed polars workload (a sort and a group-by of ten
    million rows made from a formula, no randomness): the machine's speed at the time,
    to compare figures taken on different machines or at different hours."""
    n = pl.int_range(0, 10_000_000, eager=True)
    frame = pl.DataFrame({"key": n * 7919 % 100_003, "value": n % 1_000})
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        frame.sort("key", "value")
        frame.group_by("key").agg(pl.col("value").sum(), pl.len())
        best = min(best, time.perf_counter() - started)
    print(f"machine reference (fixed polars sort and group-by, best of 3): {best:.2f} s")
    return best


def _polars_scan(log: Path) -> float:
    started = time.perf_counter()
    frame = pl.read_parquet(log)
    elapsed = time.perf_counter() - started
    print(f"polars read_parquet alone: {elapsed:.2f} s for {frame.height:,} rows")
    return elapsed


def _tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError):  # it may have ended meanwhile
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        stack += children.get(pid, [])
    return total


PAGE = os.sysconf("SC_PAGE_SIZE")


def timed_audit(auditor: Path, log: Path, house: Path, out: Path,
                *options: str) -> tuple[float, int]:
    """`auditor audit LOG` (no report) in a child process: its seconds and the peak
    resident bytes of it and its workers, sampled ten times a second. Exits on failure."""
    command = [str(auditor), "audit", str(log), "--house", str(house), "--out", str(out),
               "--no-report", "--quiet", "--fail-on", "never", *options]
    elapsed, peak, _ = timed_process(command, f"{auditor} audit")
    return elapsed, peak


def timed_process(command: list[str], what: str,
                  **popen) -> tuple[float, int, subprocess.Popen]:
    """COMMAND in a child process: its seconds, the peak resident bytes of it and its
    descendants, sampled ten times a second, and the ended child (its pipes unread).
    Exits, naming WHAT, on failure."""
    started = time.perf_counter()
    child = subprocess.Popen(command, **popen)
    peak = 0
    while child.poll() is None:
        peak = max(peak, _tree_rss(child.pid))
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    if child.returncode != 0:
        sys.exit(f"{what} failed with exit status {child.returncode}")
    return elapsed, peak, child


def _audit(log: Path, house: Path, out: Path, rounds: int) -> None:
    elapsed, peak = timed_audit(ROOT / ".venv/bin/auditor", log, house, out)
    print(f"auditor audit end to end: {elapsed:.2f} s = {rounds / elapsed:,.0f} rounds/s, "
          f"peak memory {peak / 1024**3:.2f} GB (audit and workers together)")
    findings = pl.read_parquet(out / "findings.parquet")
    print(f"findings: {findings.height} (a clean simulated log should have none)")


@contextlib.contextmanager
def work_folder(keep: Path | None):
    """The folder a benchmark keeps its log in (`--keep`), else a temporary one."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        yield folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="baccarat", choices=["baccarat", "blackjack"])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path,
                        help="folder to keep the generated log in (reused when it is there)")
    args = parser.parse_args()
    with work_folder(args.keep) as folder:
        log, house = folder / f"{args.game}.parquet", folder / "house.toml"
        if not (args.keep and log.exists() and house.exists()):
            log, house = _generate(args.game, args.rounds, args.tables, args.seed, folder)
        else:
            print(f"reusing {log} (delete it to generate the log again)")
        _machine_reference()
        _polars_scan(log)
        _audit(log, house, folder / "out", args.rounds)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
