"""Reading exports through a profile against reading the same rows as hand history.

    .venv/bin/python benchmarks/bench_exports.py [--rounds 20000] [--runs 3]
        [--keep DIR] [--layout events,coups | boxes]

Layouts `events` and `coups` (the default): one simulated baccarat day (four tables) is
written as a hand history (JSON Lines) and as a table system exports it (a device feed,
JSON Lines, and shoe coups as CSV with RFID wagers as JSON Lines). Layout `boxes` (export
profiles 1.1, issue 37 item 11): one simulated blackjack day (four tables, one patron a
box) as a hand history settled by nets (format 1.3 settle_net, JSON Lines) and as a
simulator's box rows (CSV: bracketed lists, cards by value, each box's main wager and net
result, no round, no clock), the same rounds. Each with its house rules and profile.
The audits (`auditor audit`, no report, in a child process) run in turn, alternating,
`--runs` times; the figure is each export audit's time over the hand history's, the
median of the runs, with the spread of the hand history's own runs beside it.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from pathlib import Path

from bench_audit import ROOT, timed_audit

from auditor.simulate import baccarat, blackjack, exports
from auditor.simulate.nets import as_nets
from auditor.simulate.writer import write_events, write_house_rules

AUDITOR = ROOT / ".venv/bin/auditor"


def _write(folder: Path, rounds: int) -> dict[str, tuple[Path, list[str]]]:
    """The baccarat day in each form: what to audit and the options that read it."""
    sim = baccarat.simulate(rounds=rounds, tables=4, seed=11)
    write_house_rules(sim.tables, folder / "house.toml")
    write_events(sim.events, folder / "hh" / "baccarat.jsonl", "jsonl")
    forms = {"hand history": (folder / "hh", [])}
    for layout in ("events", "coups"):
        place = folder / layout
        exports.write(sim.events, place, layout, "day")
        for gz in place.glob("*.gz"):  # plain text, as the hand history is
            gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
            gz.unlink()
        forms[layout] = (place, ["--profile", str(place / "profile.toml")])
    return forms


def _write_boxes(folder: Path, rounds: int) -> dict[str, tuple[Path, list[str]]]:
    """The blackjack day as a hand history settled by nets and as box rows."""
    started = time.perf_counter()
    sim = blackjack.simulate(rounds=rounds, tables=4, seed=11, co_patrons=False)
    write_house_rules(sim.tables, folder / "house.toml", blackjack=sim.house)
    log = write_events(as_nets(sim.events), folder / "hh" / "blackjack.jsonl", "jsonl")
    place = folder / "boxes"
    exports.write(sim.events, place, "boxes", "day")
    box_rows = (place / "boxes-day.csv").read_bytes().count(b"\n") - 1
    print(f"written in {time.perf_counter() - started:.0f} s: hand history "
          f"{log.stat().st_size / 1e6:.0f} MB, box rows {box_rows:,} rows "
          f"{(place / 'boxes-day.csv').stat().st_size / 1e6:.0f} MB")
    return {"hand history": (folder / "hh", []),
            "boxes": (place, ["--profile", str(place / "profile.toml")])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--layout", choices=["events,coups", "boxes"], default="events,coups")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-exports-"))
    folder.mkdir(parents=True, exist_ok=True)
    write = _write_boxes if args.layout == "boxes" else _write
    forms = write(folder, args.rounds)
    times: dict[str, list[float]] = {name: [] for name in forms}
    for run in range(args.runs):
        for name, (log, options) in forms.items():
            elapsed, peak = timed_audit(AUDITOR, log, folder / "house.toml",
                                        folder / f"out-{name.replace(' ', '-')}", *options)
            times[name].append(elapsed)
            print(f"run {run + 1} {name}: {elapsed:.2f} s, peak {peak / 1024**3:.2f} GB",
                  flush=True)
    base = statistics.median(times["hand history"])
    spread = max(times["hand history"]) - min(times["hand history"])
    print(f"hand history: median {base:.2f} s (spread {spread:.2f} s)")
    for name in [n for n in forms if n != "hand history"]:
        median = statistics.median(times[name])
        print(f"{name}: median {median:.2f} s ({min(times[name]):.2f}-{max(times[name]):.2f}), "
              f"{median / base:.2f}x the hand history")


if __name__ == "__main__":
    main()
