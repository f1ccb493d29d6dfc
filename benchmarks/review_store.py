"""A findings store of 100,000 findings over 30 runs, for the review benchmark.

    .venv/bin/python benchmarks/review_store.py --out DIR

Simulates one faulty day of baccarat and blackjack (about 3,400 findings), audits it
once into an SQLite store (`auditor audit --store`), then copies that run 29 times in
SQL under new run ids, one a night, each keeping a different nine tenths of the
findings: recurring findings with their stable ids, some gone one night and back the
next, as a nightly job's store holds them. Prints the store's URL and its counts.
"""

from __future__ import annotations

import argparse
import subprocess
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import write_events, write_house_rules
from auditor.store.schema import findings, inputs, run_dealers, run_tables, runs

ROOT = Path(__file__).resolve().parent.parent
AUDITOR = ROOT / ".venv/bin/auditor"
RUNS = 30


def _audit_once(folder: Path, url: str) -> None:
    bac = baccarat.simulate(rounds=8_800, tables=20, seed=3, faults=0.25)
    bj = blackjack.simulate(rounds=6_600, tables=12, seed=3, faults=0.25)
    logs = folder / "logs"
    write_events(bac.events, logs / "baccarat.parquet", "parquet")
    write_events(bj.events, logs / "blackjack.parquet", "parquet")
    house = write_house_rules([*bac.tables, *bj.tables], folder / "house.toml",
                              blackjack=bj.house)
    done = subprocess.run([str(AUDITOR), "audit", str(logs), "--house", str(house), "--out",
                           str(folder / "out"), "--store", url, "--no-report", "-q"],
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)


def _copy_run(conn, first: dict, night: int) -> None:
    """The first run again `night` nights later, under a new id, with the findings whose
    id does not fall in this night's tenth."""
    run_id = f"{first['run_id']}-n{night:02d}"
    later = timedelta(days=night)
    conn.execute(runs.insert().values({**first, "run_id": run_id,
                                       "started_at": first["started_at"] + later,
                                       "finished_at": first["finished_at"] + later}))
    for table in (inputs, run_tables, run_dealers):
        columns = [c for c in table.c if c.name != "run_id"]
        chosen = sa.select(sa.literal(run_id), *columns).where(
            table.c.run_id == first["run_id"])
        conn.execute(table.insert().from_select(["run_id", *[c.name for c in columns]],
                                                chosen))
    columns = [c for c in findings.c if c.name != "run_id"]
    # a finding id's last hex digit picks the nights it is missing on
    kept = sa.func.substr(findings.c.finding_id, 32, 1) != f"{night % 16:x}"
    chosen = sa.select(sa.literal(run_id), *columns).where(
        (findings.c.run_id == first["run_id"]) & kept)
    conn.execute(findings.insert().from_select(["run_id", *[c.name for c in columns]],
                                               chosen))


def build(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "store.sqlite"
    url = f"sqlite:///{database}"
    if database.exists():
        return url
    _audit_once(folder, url)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        first = dict(conn.execute(sa.select(runs)).mappings().one())
        for night in range(1, RUNS):
            _copy_run(conn, first, night)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    url = build(parser.parse_args().out)
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(findings)).scalar()
        nights = conn.execute(sa.select(sa.func.count()).select_from(runs)).scalar()
    print(f"{url}: {count:,} findings over {nights} runs")


if __name__ == "__main__":
    main()
