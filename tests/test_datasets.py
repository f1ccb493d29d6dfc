"""A folder of Parquet files in hive layout (`facility=.../gaming_day=.../table_id=...`)
is read as one log: the columns its folders name come from the path, and a part reads
only the partitions of its tables."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from auditor import audit, summary
from auditor.house import load as load_house
from auditor.ingest import partition
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat
from auditor.simulate.writer import write_events, write_house_rules

WHERE = ["table_id", "shoe_id", "round", "seq", "rule_id", "message"]


def _dataset(events: pl.DataFrame, root: Path) -> Path:
    """The log as a hive dataset, the partition columns in the path only."""
    days = events.with_columns(pl.col("ts").cast(pl.String).str.slice(0, 10).alias("day"))
    for (table, day), rows in days.partition_by("table_id", "day", as_dict=True).items():
        folder = root / "facility=Sample" / f"gaming_day={day}" / f"table_id={table}"
        folder.mkdir(parents=True)
        write_events(rows.drop("table_id", "day"), folder / "part-0.parquet", "parquet")
    return root


@pytest.mark.parametrize("part_rows", [10**9, 2_000], ids=["one part", "parts"])
def test_a_hive_dataset_audits_as_its_single_file(tmp_path, monkeypatch, part_rows):
    sim = baccarat.simulate(rounds=200, tables=3, seed=9, faults=0.1)
    single = write_events(sim.events, tmp_path / "log.parquet", "parquet")
    dataset = _dataset(sim.events, tmp_path / "dataset")
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml"), rs,
                       date(2026, 11, 1))
    whole = audit.run(expand([str(single)]), house, rs)
    monkeypatch.setattr(audit, "PART_ROWS", part_rows)
    parted = audit.run(expand([str(dataset)]), house, rs)
    assert whole.findings.height > 0
    assert parted.findings.select(WHERE).equals(whole.findings.select(WHERE))
    assert summary.accounting(parted) == summary.accounting(whole)


def test_the_path_names_the_partition_and_a_part_skips_the_others():
    path = Path("/logs/facility=Sample/gaming_day=2026-11-01/table_id=BAC%2F01/part-0.parquet")
    assert partition.hive_values(path) == {"table_id": "BAC/01"}
    assert partition._may_hold(path, ["BAC/01"]) and partition._may_hold(path, None)
    assert not partition._may_hold(path, ["BAC-02"])
