"""A Parquet file read once and held typed for all the parts of a log (ingest.compact):
every part gets exactly what scanning the file for it gives."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE

from auditor import audit
from auditor.audit_part import Setting, ingest_of
from auditor.house import load as load_house
from auditor.ingest import compact
from auditor.ingest.partition import open_log
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat, blackjack

INGESTED = ("events", "unplaced", "problems", "unauditable", "audited", "orphans")


def _write(events: pl.DataFrame, path: Path) -> Path:
    events.write_parquet(path, row_group_size=400)
    return path


def _text_log(tmp_path: Path) -> Path:
    """Every column as text, with values that do not parse and rows without a table."""
    events = baccarat.simulate(rounds=120, tables=3, seed=4, faults=0.1).events
    text = events.select(pl.all().cast(pl.String))
    row = pl.int_range(pl.len())
    text = text.with_columns(
        pl.when(row == 30).then(pl.lit("not a time")).otherwise("ts").alias("ts"),
        pl.when(row == 61).then(pl.lit("12.345")).otherwise("amount").alias("amount"),
        pl.when(row == 95).then(pl.lit("three")).otherwise("seat").alias("seat"),
        pl.when(row.is_in([7, 800])).then(None).otherwise("table_id").alias("table_id"),
    )
    return _write(text, tmp_path / "text.parquet")


def _logs(tmp_path: Path) -> dict[str, list[Path]]:
    bj = blackjack.simulate(rounds=150, tables=4, seed=2, faults=0.1).events
    half = bj.height // 2
    return {
        "baccarat": [_write(baccarat.simulate(rounds=150, tables=4, seed=3, faults=0.1).events,
                            tmp_path / "baccarat.parquet")],
        "blackjack in two files": [_write(bj[:half], tmp_path / "a.parquet"),
                                   _write(bj[half:], tmp_path / "b.parquet")],
        "text with bad values": [_text_log(tmp_path)],
    }


def _parts(paths: list[Path], read_once: bool) -> tuple[list, object]:
    rs = load_rulesets()
    log = open_log(expand([str(p) for p in paths]))
    log.read_once = read_once
    setting = Setting(log, load_house(DEFAULT_HOUSE, rs, date(2026, 11, 1)), rs, log.first_day)
    parts = audit._parts(log)
    offsets = audit._row_offsets(log, parts)
    out, orphans = [], None
    for number, tables in enumerate(parts):
        ingested = ingest_of(setting, tables, number == 0, offsets[number], orphans)
        orphans = ingested.orphans if number == 0 else orphans
        out.append(ingested)
    return out, log


@pytest.mark.parametrize("name", ["baccarat", "blackjack in two files", "text with bad values"])
def test_parts_of_a_held_file_are_those_its_scans_give(name, tmp_path, monkeypatch):
    monkeypatch.setattr(audit, "PART_ROWS", 800)  # a part per table or two
    monkeypatch.setattr(compact, "SLICE_ROWS", 700)  # several slices, across row groups
    paths = _logs(tmp_path)[name]
    scanned, _ = _parts(paths, read_once=False)
    held, log = _parts(paths, read_once=True)
    assert len(held) >= 3
    assert all(h.typed is not None for h in log.held)  # the held copy was read, once each
    for one, other in zip(scanned, held, strict=True):
        for field in INGESTED:
            assert getattr(other, field).equals(getattr(one, field)), field
    problems = pl.concat([p.problems for p in held])
    if name == "text with bad values":
        assert {"IN007", "IN009"} <= set(problems["rule_id"])


def test_text_codes_widen_when_the_values_outgrow_them(tmp_path, monkeypatch):
    """A column of more distinct values than a byte codes (shoe ids) is coded again in
    two bytes, its earlier slices too; every value comes back."""
    monkeypatch.setattr(compact, "SLICE_ROWS", 300)
    rows = 2_000
    frame = pl.DataFrame({
        "table_id": ["T1"] * rows,
        "shoe_id": [f"shoe-{n // 3}" for n in range(rows)],  # 667 shoes
        "card": [("A23456789TJQK"[n % 13] + "SHDC"[n % 4]) for n in range(rows)],
        "event": ["card"] * rows,
        "seq": list(range(rows)),
        "ts": ["2026-11-01T20:00:00"] * rows,
    })
    path = _write(frame, tmp_path / "wide.parquet")
    for _ in range(2):  # the code books of one reading do not trouble the next
        held = compact.read(pl.scan_parquet(path), frame.columns, ["T1"], rows, 0)
        assert held.frame["shoe_id"].to_physical().dtype == pl.UInt16
        assert held.frame["card"].to_physical().dtype == pl.UInt8
        part, problems = held.part(["T1"], first=True)
        for name in ("shoe_id", "card", "seq"):
            assert part[name].to_list() == frame[name].to_list()
        assert part["event"].dtype == pl.Categorical
        assert part["event"].cast(pl.String).to_list() == ["card"] * rows
        assert problems.is_empty()


def test_times_come_back_exactly_in_seconds_or_microseconds(tmp_path):
    start = datetime(2026, 11, 1, 20, 0, 0)
    whole = [start + timedelta(seconds=n) for n in range(50)]
    fine = [start + timedelta(microseconds=n * 1_234_567) for n in range(50)]
    for times, in_seconds in ((whole, True), (fine, False)):
        frame = pl.DataFrame({"table_id": ["T1"] * 50, "seq": list(range(50)), "ts": times})
        path = _write(frame, tmp_path / f"times-{in_seconds}.parquet")
        held = compact.read(pl.scan_parquet(path), frame.columns, ["T1"], 50, 0)
        assert held.time_in_seconds is in_seconds
        part, _ = held.part(["T1"], first=True)
        assert part["time"].to_list() == times


def test_a_column_without_values_is_not_held_but_comes_back_empty(tmp_path):
    events = baccarat.simulate(rounds=20, tables=1, seed=1).events
    path = _write(events, tmp_path / "log.parquet")
    assert events["hand"].null_count() == events.height  # baccarat has no hands
    held = compact.read(pl.scan_parquet(path), events.columns,
                        events["table_id"].unique().to_list(), events.height, 0)
    assert "hand" not in held.frame.columns
    part, _ = held.part(None, first=True)
    assert part["hand"].dtype == pl.Int64
    assert part["hand"].null_count() == part.height == events.height


def test_a_file_that_cannot_be_held_is_scanned_for_each_part(tmp_path, monkeypatch):
    monkeypatch.setattr(audit, "PART_ROWS", 800)
    paths = _logs(tmp_path)["baccarat"]
    scanned, _ = _parts(paths, read_once=False)

    def fails(*_args):
        raise OSError("the file went away")

    monkeypatch.setattr(compact, "read", fails)
    fallen_back, log = _parts(paths, read_once=True)
    assert log.held[0].typed is None and log.held[0].scanned
    for one, other in zip(scanned, fallen_back, strict=True):
        assert other.events.equals(one.events)


def test_a_log_beyond_what_may_be_held_is_scanned_for_each_part(tmp_path, monkeypatch):
    """Files are held while the rows held stay within ROWS_AT_MOST; a file beyond it is
    scanned for each part, so that memory follows the part, with the same result."""
    monkeypatch.setattr(audit, "PART_ROWS", 800)
    paths = _logs(tmp_path)["blackjack in two files"]
    scanned, _ = _parts(paths, read_once=False)
    first_rows = pl.scan_parquet(paths[0]).select(pl.len()).collect().item()
    monkeypatch.setattr(compact, "ROWS_AT_MOST", first_rows)  # room for the first file only
    partly, log = _parts(paths, read_once=True)
    assert log.held[0].typed is not None
    assert log.held[1].typed is None and log.held[1].scanned
    for one, other in zip(scanned, partly, strict=True):
        for field in INGESTED:
            assert getattr(other, field).equals(getattr(one, field)), field
