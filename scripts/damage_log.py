"""Write sample_logs/damaged/: a copy of the first shoe of a clean log with one
row of every kind of input damage the auditor reports, for demonstration.

    .venv/bin/python scripts/damage_log.py sample_logs/clean/baccarat.jsonl sample_logs/damaged
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# line (1-based, in the copy) -> how that line is damaged
DAMAGE = {
    40: lambda r: {**r, "card": "1S"} if r.get("card") else {**r, "event": "teleport"},
    60: lambda r: {**r, "event": "teleport"},
    80: lambda r: {**r, "amount": -25} if "amount" in r else {**r, "seat": 0},
    100: lambda r: {k: v for k, v in r.items() if k != "shoe_id"},
    120: lambda r: {**r, "seq": "12a"},
    140: None,  # truncated
    160: lambda r: {**r, "seat": 13} if "seat" in r else {**r, "ts": "yesterday"},
}


def main(source: Path, out: Path, rows: int = 400) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()[:rows]
    damaged = []
    for number, line in enumerate(lines, start=1):
        if number in DAMAGE:
            change = DAMAGE[number]
            row = json.loads(line)
            line = line[: len(line) // 2] if change is None else json.dumps(change(row))
        damaged.append(line)
    damaged.insert(200, damaged[198])  # a duplicate row: its seq is used twice
    out.mkdir(parents=True, exist_ok=True)
    (out / "baccarat-damaged.jsonl").write_text("\n".join(damaged) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
