"""Shuffles that did not happen (BA108, BA109, BJ106, BJ107; docs/checked/shoe-order.md):
the runs found within a log, and the store's prints finding a shoe repeated on a later
night. The stress runs (planted shoes found, a million rounds of clean shoes with no run)
are in test_simulated_audit.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from auditor.cli import main
from auditor.games import shoe_order
from auditor.simulate import baccarat
from auditor.simulate.writer import write_events, write_house_rules
from auditor.store import prints, schema

RUNS = {"repeated": 14, "repeated_by_value": 28, "new_deck": 11}


def _cards(shoes: dict[tuple[str, str], list[int]], by_value: bool = False) -> pl.DataFrame:
    """shoe_cards's rows for shoes given as lists of codes, in order, seq by place."""
    rows = [(table, shoe, i + 1, code) for (table, shoe), codes in shoes.items()
            for i, code in enumerate(codes)]
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                       "seq": pl.Int64, "code": pl.UInt8}, orient="row")
    return frame.with_columns(
        pl.lit(None, pl.Datetime("us")).alias("time"), pl.lit(True).alias("audited"),
        pl.lit(0, pl.Int32).alias("file_id"), pl.col("seq").alias("line"),
        pl.lit(by_value).alias("by_value"), pl.lit(14, pl.UInt16).alias("k"),
        pl.lit(28, pl.UInt16).alias("kv"), pl.lit("baccarat").alias("game"))


def _shuffled(seed: int, decks: int = 8) -> list[int]:
    frame = pl.DataFrame({"c": [c for c in range(52) for _ in range(decks)]})
    return frame.select(pl.col("c").shuffle(seed)).to_series().to_list()


# --- within a log -----------------------------------------------------------------------


def test_a_shoe_cut_and_dealt_again_is_one_run_from_its_cut():
    first = _shuffled(1)
    again = first[100:] + first[:100]
    runs = shoe_order.repeated_runs(_cards({("T1", "A"): first[:400], ("T2", "B"): again}))
    [run] = runs.to_dicts()
    assert (run["table_id"], run["shoe_id"], run["card"]) == ("T2", "B", 1)
    assert (run["table_id_b"], run["shoe_id_b"], run["card_b"]) == ("T1", "A", 101)
    assert run["cards"] == 300  # from card 101 of A to its last dealt card, 400


def test_a_shared_run_one_card_short_is_no_repeat_and_a_run_in_one_shoe_is_none():
    first, other = _shuffled(2), _shuffled(3)
    # 13 cards of `first` within `other`, and a run repeated within `first` itself
    other[50:63] = first[200:213]
    first[300:320] = first[10:30]
    assert shoe_order.repeated_runs(_cards({("T", "A"): first, ("T", "B"): other})).is_empty()
    other[63] = first[213]
    assert shoe_order.repeated_runs(
        _cards({("T", "A"): first, ("T", "B"): other}))["cards"].to_list() == [14]


def test_new_deck_order_runs_up_down_and_across_a_change_of_suit():
    # codes: suit x 13 + rank (A..K); spades 0-12, hearts 13-25
    shoe = _shuffled(4)
    shoe[20:31] = [4, 5, 6, 7, 8, 9, 10, 11, 12, 25, 24]  # 5S..KS, then KH QH down
    shoe[200:210] = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]  # 10 cards: one short
    runs = shoe_order.new_deck_runs(_cards({("T", "A"): shoe}), 11)
    assert runs.select("card", "cards").rows() == [(21, 11)]


# --- across two runs of a store --------------------------------------------------------


def _audit(out: Path, log: Path, house: Path, url: str | None) -> list[dict]:
    args = ["audit", str(log), "--house", str(house), "--out", str(out), "-q", "--no-report",
            "--fail-on", "never"] + (["--store", url] if url else [])
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return pl.read_parquet(out / "findings.parquet").to_dicts()


@pytest.fixture
def nights(tmp_path) -> tuple[Path, Path, Path, Path]:
    """A clean night of two tables; the next night, its first shoe dealt again on BAC-02
    with a new shoe id (a pack delivered twice), among a clean night's shoes; a third clean
    night; a house."""
    sim = baccarat.simulate(rounds=400, tables=2, seed=7)
    house = write_house_rules(sim.tables, tmp_path / "house.toml")
    first = write_events(sim.events, tmp_path / "n1.jsonl", "jsonl")
    later = baccarat.simulate(rounds=200, tables=2, seed=8,
                              start=datetime.fromisoformat("2026-11-02T20:00:00-05:00"))
    shoe = sim.events.filter(pl.col("shoe_id") == "BAC-01-0001")
    moved = (
        shoe.with_columns(
            pl.lit("BAC-02").alias("table_id"), pl.lit("BAC-02-9001").alias("shoe_id"),
            (pl.col("seq") + 100_000).alias("seq"),
            (pl.col("ts").str.slice(0, 19).str.to_datetime() + timedelta(days=1, hours=6))
            .dt.strftime("%Y-%m-%dT%H:%M:%S-05:00").alias("ts"))
    )
    second = write_events(pl.concat([later.events, moved.select(later.events.columns)],
                                    how="vertical_relaxed"), tmp_path / "n2.jsonl", "jsonl")
    third = baccarat.simulate(rounds=200, tables=2, seed=9,
                              start=datetime.fromisoformat("2026-11-03T20:00:00-05:00"))
    clean = write_events(third.events, tmp_path / "n3.jsonl", "jsonl")
    return first, second, clean, house


def test_a_shoe_repeated_on_a_later_night_is_found_through_the_store(nights, tmp_path):
    first, second, clean, house = nights
    url = f"sqlite:///{tmp_path / 'audits.db'}"
    assert not [f for f in _audit(tmp_path / "o1", first, house, url)
                if f["rule_id"] == "BA108"]
    # without the store the second night shows nothing: its repeat is of another night
    assert not [f for f in _audit(tmp_path / "o0", second, house, None)
                if f["rule_id"] == "BA108"]
    found = [f for f in _audit(tmp_path / "o2", second, house, url) if f["rule_id"] == "BA108"]
    run_1 = json.loads((tmp_path / "o1" / "summary.json").read_text())["run_id"]
    [finding] = found
    assert (finding["table_id"], finding["shoe_id"]) == ("BAC-02", "BAC-02-9001")
    assert finding["citation"] == "9 NYCRR 5324.20(f)(9)" and finding["line"] is not None
    assert f"shoe BAC-01-0001 (table BAC-01 of run {run_1}) from its card 1" \
        == finding["observed"].split("cards in the order of ")[1]
    assert run_1 in finding["message"]
    # a clean night against both runs' prints: nothing
    assert not [f for f in _audit(tmp_path / "o3", clean, house, url)
                if f["rule_id"] == "BA108"]
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        assert schema.version(conn) == 5
        cards = conn.execute(sa.select(schema.shoe_prints.c.cards)).scalars().all()
        index = conn.execute(sa.select(schema.print_index.c.hashes)).scalars().all()
    engine.dispose()
    # prints under 1 KB a shoe: a byte a card, 4 bytes a kept hash (about 2 / (W + 1) of
    # the grams) and its place
    assert cards and (sum(map(len, cards)) + sum(map(len, index))) / len(cards) < 1024


def test_winnowing_keeps_a_hash_of_every_run_of_14_cards():
    first = _shuffled(5)
    others = {}
    for i, start in enumerate((0, 37, 150, 385)):
        other = _shuffled(10 + i)
        other[100:114] = first[start:start + 14]  # exactly 14 cards shared
        others[("T", f"B{i}")] = other
    made = prints.prints_of(_cards({("T", "A"): first[:400], **others})).frame
    hashes = {row["shoe_id"]: set(row["hashes"]) for row in made.iter_rows(named=True)}
    for name in ("B0", "B1", "B2", "B3"):
        assert hashes["A"] & hashes[name], name
