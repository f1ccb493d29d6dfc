"""How long `auditor profile draft` takes on a 1 GB export, with and without the check.

    .venv/bin/python benchmarks/bench_profile_draft.py [--gb 1] [--runs 3] [--sample NAME]

Builds a CSV export of about --gb GB (not timed) by repeating the rows of a sample export
(`sample_logs/exports/blackjack-coups/bj-coups-blackjack.csv` by default: its header
once, its rows again and again), then times the command in a child process, as a user runs it:
`--no-check` (the sample alone: the first MB and random blocks of the rest) and with the
check (`profile check` on the file's first 16 MB). Prints each run and the median; the
figures go in NOTES and the README. The draft of that export leaves no TODO, so the
check runs (a draft with TODOs is not checked: the loader refuses it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "exports" / "blackjack-coups" / "bj-coups-blackjack.csv"


def build(target: Path, size: int, sample: Path) -> None:
    header, _, body = sample.read_bytes().partition(b"\n")
    block = body * max(1, (8 << 20) // len(body))  # ~8 MB written at a time
    with target.open("wb") as out:
        out.write(header + b"\n")
        written = 0
        while written < size:
            out.write(block)
            written += len(block)


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "auditor.cli", *args], cwd=ROOT,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"profile draft failed ({done.returncode}): {done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-draft-") as folder:
        work = Path(folder)
        export = work / options.sample.name
        started = time.perf_counter()
        build(export, int(options.gb * (1 << 30)), options.sample)
        size = export.stat().st_size
        print(f"export: {export.name}, {size / (1 << 30):.2f} GB "
              f"(built in {time.perf_counter() - started:.1f} s)")
        for label, extra in (("--no-check", ["--no-check"]), ("with the check", [])):
            runs = []
            for n in range(options.runs):
                out = work / f"draft-{label[2:4]}-{n}.toml"
                runs.append(timed(["profile", "draft", str(export), "--out", str(out),
                                   *extra]))
            print(f"profile draft {label}: median {statistics.median(runs):.2f} s "
                  f"(runs: {', '.join(f'{r:.2f}' for r in runs)})")


if __name__ == "__main__":
    main()
