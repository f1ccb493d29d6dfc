"""Render time and peak memory of the exception report of about 1,000 findings.

    .venv/bin/python benchmarks/bench_report.py [--runs 3] [--keep DIR]

Simulates the report case of docs/guides/report-record.md (baccarat, 12,000 rounds on
6 tables, faults at 8.5%, seed 1: 1,020 findings, 364 A4 pages), audits it without a
report (not timed), then renders the report in a child process RUNS times and prints,
for each run, the seconds of `render` (the HTML built, printed as a tagged PDF/A-3 with its evidence
embedded, the HTML twin written), the seconds of the whole process (with Python's start
and imports, as `auditor report` has them) and its peak resident memory. The render is
one Python thread: besides the machine reference of `bench_audit` (a polars workload on
every core) it prints a single-core reference, a fixed pure-Python workload, to compare
runs taken at two hours or on two machines. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from bench_audit import _machine_reference, timed_audit, timed_process, work_folder

from auditor.simulate import baccarat
from auditor.simulate.writer import write_events, write_house_rules

ROOT = Path(__file__).resolve().parent.parent
AUDITOR = ROOT / ".venv/bin/auditor"
PYTHON = ROOT / ".venv/bin/python"

# The child times `render` itself, then exits: the parent adds Python's start.
CHILD = """
import json, sys, time
from pathlib import Path
started = time.perf_counter()
from auditor.report import render
imported = time.perf_counter()
render(Path(sys.argv[1]))
print(json.dumps({"imports": imported - started, "render": time.perf_counter() - imported}))
"""


def _python_reference() -> float:
    """Seconds, best of three, of a fixed pure-Python workload (dictionary and string
    work, one thread): the speed of one core at the time, which is what the render uses."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        counts: dict[str, int] = {}
        for n in range(2_000_000):
            key = f"k{n * 7919 % 10_007}"
            counts[key] = counts.get(key, 0) + len(key)
        best = min(best, time.perf_counter() - started)
    print(f"single-core reference (fixed pure-Python workload, best of 3): {best:.2f} s")
    return best


def _prepare(folder: Path) -> Path:
    """The simulated log audited without a report: the output folder to render."""
    out = folder / "out"
    if (out / "findings.parquet").exists():
        print(f"reusing {out} (delete {folder} to simulate and audit again)")
        return out
    sim = baccarat.simulate(rounds=12_000, tables=6, seed=1, faults=0.085)
    log, house = folder / "baccarat.parquet", folder / "house.toml"
    write_events(sim.events, log, "parquet")
    write_house_rules(sim.tables, house)
    timed_audit(AUDITOR, log, house, out)
    return out


def _timed_report(out: Path) -> tuple[float, float, int]:
    """One `render` in a child process: its seconds, the child's, and its peak bytes."""
    elapsed, peak, child = timed_process([str(PYTHON), "-c", CHILD, str(out)], "the report",
                                         stdout=subprocess.PIPE, text=True)
    inside = json.loads(child.stdout.read())
    return inside["render"], elapsed, peak


def _pages(pdf: Path) -> str:
    try:
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
    except OSError:  # poppler not installed: the count is only informative
        return "?"
    return next((line.split()[-1] for line in info.splitlines()
                 if line.startswith("Pages:")), "?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path,
                        help="folder to keep the log and its audit in (reused when there)")
    args = parser.parse_args()
    with work_folder(args.keep) as folder:
        out = _prepare(folder)
        findings = json.loads((out / "summary.json").read_text())["findings"]["total"]
        _machine_reference()
        _python_reference()
        renders = []
        for n in range(args.runs):
            render, whole, peak = _timed_report(out)
            renders.append(render)
            print(f"run {n + 1}: render {render:.1f} s, whole process {whole:.1f} s, "
                  f"peak memory {peak / 1024**3:.2f} GB", flush=True)
        print(f"{findings:,} findings, {_pages(out / 'report.pdf')} pages: render "
              f"{min(renders):.1f}-{max(renders):.1f} s over {len(renders)} runs")
        _python_reference()


if __name__ == "__main__":
    main()
