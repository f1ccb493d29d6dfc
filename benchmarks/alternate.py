"""Two checkouts of auditor timed on one log in alternation: is a change slower beyond
the machine's spread?

    .venv/bin/python benchmarks/alternate.py --base /tmp/base --head . \\
        --log /tmp/b1m/baccarat.parquet --house /tmp/b1m/house.toml [--runs 4]

Each checkout's own `.venv/bin/auditor audit LOG --no-report` runs in turn (base, head,
base, head, ...), so that a slow minute of the machine falls on both; the time and the
peak memory of every run are printed, then each side's range. A difference is real only
where the two ranges do not overlap.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_audit import _machine_reference, timed_audit


def _run(checkout: Path, log: Path, house: Path) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        return timed_audit(checkout / ".venv/bin/auditor", log, house, Path(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--head", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--house", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    _machine_reference()
    times: dict[str, list[float]] = {"base": [], "head": []}
    for n in range(args.runs):
        for side in ("base", "head"):
            elapsed, peak = _run(getattr(args, side), args.log, args.house)
            times[side].append(elapsed)
            print(f"run {n + 1} {side}: {elapsed:.1f} s, peak {peak / 2**30:.2f} GiB", flush=True)
    for side, found in times.items():
        print(f"{side}: {min(found):.1f}-{max(found):.1f} s over {len(found)} runs")
    _machine_reference()


if __name__ == "__main__":
    main()
