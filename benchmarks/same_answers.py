"""Do two checkouts of the auditor give the same answers? Audit every sample log with
each and compare the outputs byte for byte.

    python benchmarks/same_answers.py BEFORE AFTER

BEFORE and AFTER are checkouts (e.g. `git worktree add --detach /tmp/before main`).
Each sample of scripts/sample-audit is audited with `--no-report` by each checkout's
code (the checkout is the working directory and the first entry of PYTHONPATH), into
folders of the same name, and `findings.parquet` and `summary.json` are compared byte for
byte, but for the summary's `run_at` line: the clock of the run. Exit 0 when every
sample agrees, 1 when one does not (the differing files are named).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
COMPARED = ("findings.parquet", "summary.json")


def _samples(logs: Path) -> dict[str, list[str]]:
    """The audits of scripts/sample-audit, by name: their arguments but --out."""
    house = ["--house", str(logs / "house.toml")]
    day = "2026-11-02"
    runs = {name: [str(logs / name), *house] for name in ("clean", "faulty", "damaged")}
    nightly = sorted(str(p) for p in (logs / "nightly").glob(f"{day}-*"))
    runs["nightly"] = [*nightly, "--context", str(logs / "nightly" / "2026-11-01-*"),
                       "--gaming-day", day, *house]
    for export in ("feed", "baccarat-coups", "blackjack-coups", "blackjack-boxes"):
        folder = logs / "exports" / export
        runs[f"exports-{export}"] = [str(folder), "--profile", str(folder / "profile.toml"),
                                     *house]
    return runs


def _audit(tree: Path, args: list[str], out: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([str(PYTHON), "-m", "auditor.cli", "audit", *args, "--no-report",
                           "--out", str(out)], cwd=tree, env=env, capture_output=True,
                          text=True)
    if done.returncode > 1:
        sys.exit(f"{tree}: audit {' '.join(args)} failed: {done.stderr.strip()}")
    return done.returncode


def _content(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name == "summary.json":
        data = b"\n".join(line for line in data.split(b"\n")
                          if not line.startswith(b'  "run_at": '))
    return data


def main(before: Path, after: Path) -> int:
    logs = ROOT / "sample_logs"
    differ = []
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "out"
        for name, args in _samples(logs).items():
            kept = {}
            for tree in (before, after):
                status = _audit(tree, args, out)
                kept[tree] = (status, {f: _content(out / f) for f in COMPARED})
                shutil.rmtree(out)
            (s1, a), (s2, b) = kept[before], kept[after]
            bad = [f for f in COMPARED if a[f] != b[f]] + (["exit status"] if s1 != s2 else [])
            print(f"{name:<24} {'same' if not bad else 'DIFFERENT: ' + ', '.join(bad)}")
            differ += bad
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
