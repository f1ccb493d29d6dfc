"""Findings by dealer (hand-history-v1 1.1 `dealer_id`): each finding carries the dealer of
its round (a finding on a shoe: who shuffled it) in every findings file, whatever the
encoding and however the log is read; summary.json counts per dealer the rounds dealt,
findings, game-rule errors per 1,000 rounds and money; the report ranks the dealers."""

from __future__ import annotations

import json
from datetime import date, datetime
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor import audit, report, summary
from auditor.cli import main
from auditor.house import load as load_house
from auditor.ingest import chunks, spill
from auditor.ingest.sources import expand
from auditor.rulesets import load_rulesets
from auditor.scope import Window
from auditor.simulate import baccarat, blackjack
from auditor.simulate.writer import ENCODINGS, write_events, write_house_rules

ROUND_KEY = ["table_id", "shoe_id", "round"]


def _seq(events: pl.DataFrame, table: str, round_no: int, event: str) -> int:
    return events.filter(
        (pl.col("table_id") == table) & (pl.col("round") == round_no) & (pl.col("event") == event)
    )["seq"].min()


@cache
def _constructed() -> tuple[pl.DataFrame, list[dict]]:
    """Two baccarat tables of 30 rounds (one shoe each) with dealers named by hand, and
    faults planted on known rounds. BAC-01: ANN shuffles and deals rounds 1-10, BOB
    rounds 11-30; BAC-02: CAT shuffles (and deals nothing), ANN deals every round but
    round 3, whose round_start names no dealer. Planted: a bad card code in BAC-01 round 5
    (IN006, and IN014: the round is not judged), $5 short on a pay in BAC-01 round 12 (BOB)
    and in BAC-02 round 3 (no dealer), and BAC-02's shuffle declaring 5 decks (BA101 on the
    shoe: CAT's; then BA102 in round 25, ANN's, a card seen a sixth time)."""
    sim = baccarat.simulate(rounds=60, tables=2, seed=2)
    e = sim.events
    start, shuffle = pl.col("event") == "round_start", pl.col("event") == "shuffle"
    first = pl.col("table_id") == "BAC-01"
    dealer = (
        pl.when(shuffle & first)
        .then(pl.lit("ANN"))
        .when(shuffle)
        .then(pl.lit("CAT"))
        .when(start & first & (pl.col("round") <= 10))
        .then(pl.lit("ANN"))
        .when(start & first)
        .then(pl.lit("BOB"))
        .when(start & (pl.col("round") == 3))
        .then(None)
        .when(start)
        .then(pl.lit("ANN"))
    )
    short = [("BAC-01", _seq(e, "BAC-01", 12, "pay")), ("BAC-02", _seq(e, "BAC-02", 3, "pay"))]
    bad_card = _seq(e, "BAC-01", 5, "card")

    def at(table: str, seq: int) -> pl.Expr:
        return (pl.col("table_id") == table) & (pl.col("seq") == seq)

    e = e.with_columns(
        dealer.alias("dealer_id"),
        pl.when(at(*short[0]) | at(*short[1]))
        .then(pl.col("amount") - 5)
        .otherwise(pl.col("amount"))
        .alias("amount"),
        pl.when(at("BAC-01", bad_card))
        .then(pl.lit("ZZ"))
        .otherwise(pl.col("card").cast(pl.String))
        .alias("card"),
        pl.when(shuffle & ~first).then(5).otherwise(pl.col("decks")).alias("decks"),
    )
    return e, sim.tables


def _house(tmp: Path, tables: list[dict], **extra):
    rs = load_rulesets()
    return load_house(
        write_house_rules(tables, tmp / "house.toml", **extra), rs, date(2026, 11, 1)
    ), rs


def _audit(events: pl.DataFrame, tmp: Path, encoding: str = "jsonl", **run) -> audit.AuditResult:
    events_tables = _constructed()[1]
    log = write_events(events, tmp / f"log.{encoding}", encoding)
    house, rs = _house(tmp, events_tables)
    return audit.run(expand([str(log)]), house, rs, **run)


def _expected(events: pl.DataFrame, findings: pl.DataFrame) -> list[str | None]:
    """Each finding's dealer read straight from the log: its round's round_start, or for a
    finding without a round (or of round 0) its shoe's shuffle."""
    named = events.filter(pl.col("dealer_id").is_not_null())
    rounds = named.filter(pl.col("event") == "round_start").select(*ROUND_KEY, "dealer_id")
    shoes = named.filter(pl.col("event") == "shuffle").select(
        "table_id", "shoe_id", pl.col("dealer_id").alias("shoe_dealer")
    )
    return (
        findings.select(*ROUND_KEY)
        .join(rounds, on=ROUND_KEY, how="left", maintain_order="left")
        .join(shoes, on=["table_id", "shoe_id"], how="left", maintain_order="left")
        .select(
            pl.when(pl.col("round").is_null() | (pl.col("round") == 0))
            .then("shoe_dealer")
            .otherwise("dealer_id")
        )
        .to_series()
        .to_list()
    )


# --- the findings files ------------------------------------------------------------------


def test_findings_carry_the_dealer_in_all_three_files(tmp_path):
    events, tables = _constructed()
    # a dealer's name is log text: one that a spreadsheet would take for a formula
    events = events.with_columns(pl.col("dealer_id").replace("BOB", "=BOB"))
    log = write_events(events, tmp_path / "logs" / "log.jsonl", "jsonl")
    house = write_house_rules(tables, tmp_path / "house.toml")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["audit", str(log), "--house", str(house), "--out", str(out), "--no-report", "-q"],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.output
    parquet = pl.read_parquet(out / "findings.parquet")
    jsonl = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    csv = pl.read_csv(out / "findings.csv", infer_schema=False)
    dealers = parquet["dealer_id"].to_list()
    assert dealers == [r["dealer_id"] for r in jsonl] == _expected(events, parquet)
    assert csv["dealer_id"].to_list() == [
        None if d is None else ("'" + d if d.startswith("=") else d) for d in dealers
    ]
    assert list(parquet.select("table_id", "round", "rule_id", "dealer_id").iter_rows()) == [
        ("BAC-01", 5, "IN014", "ANN"),  # the round of the bad card: input findings too
        ("BAC-01", 5, "IN006", "ANN"),
        ("BAC-01", 12, "BA502", "=BOB"),
        ("BAC-02", 3, "BA502", None),  # its round_start names no dealer
        ("BAC-02", 25, "BA102", "ANN"),
        ("BAC-02", None, "BA101", "CAT"),  # on the shoe: who shuffled it
    ]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_encoding_carries_the_dealer(encoding, tmp_path):
    events = _constructed()[0]
    found = _audit(events, tmp_path, encoding).findings
    assert found["dealer_id"].drop_nulls().len() == 5
    assert found["dealer_id"].to_list() == _expected(events, found)


def test_a_dealer_number_in_parquet_is_read_as_its_text(tmp_path):
    events, tables = _constructed()
    numbers = {"ANN": "7", "BOB": "12", "CAT": "40"}
    log = write_events(
        events.with_columns(pl.col("dealer_id").replace(numbers)),
        tmp_path / "log.parquet",
        "parquet",
    )
    pl.read_parquet(log).with_columns(pl.col("dealer_id").cast(pl.Int64)).write_parquet(log)
    house, rs = _house(tmp_path, tables)
    found = audit.run(expand([str(log)]), house, rs).findings
    assert found["dealer_id"].to_list() == ["7", "7", "12", None, "7", "40"]


@pytest.mark.parametrize("encoding", ["jsonl", "csv", "csv.gz", "parquet"])
def test_a_log_without_the_column_audits_as_before(encoding, tmp_path):
    events = _constructed()[0]
    named = _audit(events, tmp_path / "named", encoding)
    (tmp_path / "plain").mkdir()
    log = write_events(events, tmp_path / "plain" / f"log.{encoding}", encoding)
    # rewritten without the column at all, as a version 1 table system writes it
    if encoding == "parquet":
        pl.read_parquet(log).drop("dealer_id").write_parquet(log)
    elif encoding.startswith("csv"):
        frame = pl.read_csv(log, infer_schema=False).drop("dealer_id")
        log = log.with_name("log.csv")
        frame.write_csv(log)
    else:
        log.write_text(
            "".join(
                json.dumps({k: v for k, v in json.loads(line).items() if k != "dealer_id"}) + "\n"
                for line in log.read_text().splitlines()
            )
        )
    house, rs = _house(tmp_path / "plain", _constructed()[1])
    plain = audit.run(expand([str(log)]), house, rs)
    assert plain.findings["dealer_id"].null_count() == plain.findings.height
    # the same findings, but for the dealer (and the file's folder)
    assert plain.findings.drop("dealer_id", "file").equals(named.findings.drop("dealer_id", "file"))
    assert "IN003" not in plain.findings["rule_id"].to_list()  # an optional column
    without = summary.build(plain, datetime(2026, 11, 2))
    assert without["dealers"] == []
    assert summary.accounting(plain) == summary.accounting(named)


def test_a_spilled_log_carries_the_dealer(tmp_path, monkeypatch):
    events, tables = _constructed()
    log = write_events(events, tmp_path / "log.csv.gz", "csv.gz")
    house, rs = _house(tmp_path, tables)
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 5_000)  # many chunks
    work = tmp_path / "work"
    work.mkdir()
    spilled = audit.run(expand([str(log)]), house, rs, workdir=work)
    assert spilled.plan.text == "spilled"
    assert spilled.findings.equals(whole.findings)
    assert spilled.findings["dealer_id"].drop_nulls().len() == 5
    at = datetime(2026, 11, 2)
    assert summary.build(spilled, at)["dealers"] == summary.build(whole, at)["dealers"]


def test_dealers_over_parts_and_tables(tmp_path, monkeypatch):
    """A log audited in parts (a table never split, a dealer dealing at every table): the
    same findings and per-dealer counts as read whole, and each dealer's rounds add up."""
    sim = baccarat.simulate(rounds=240, tables=3, seed=5, faults=0.1)
    log = write_events(sim.events, tmp_path / "log.parquet", "parquet")
    house, rs = _house(tmp_path, sim.tables)
    whole = audit.run(expand([str(log)]), house, rs)
    monkeypatch.setattr(audit, "PART_ROWS", 2_000)  # a part per table
    parted = audit.run(expand([str(log)]), house, rs)
    assert parted.findings.equals(whole.findings)
    assert whole.findings["dealer_id"].to_list() == _expected(sim.events, whole.findings)
    assert whole.findings["dealer_id"].null_count() == 0
    at = datetime(2026, 11, 2)
    dealers = summary.build(parted, at)["dealers"]
    assert dealers == summary.build(whole, at)["dealers"]
    starts = sim.events.filter(pl.col("event") == "round_start")
    assert {d["dealer_id"]: d["rounds_dealt"] for d in dealers} == dict(
        starts.group_by("dealer_id").len().iter_rows()
    )
    assert sum(d["rounds_dealt"] for d in dealers) == summary.accounting(parted)["rounds"]["read"]
    assert sum(d["findings"] for d in dealers) == whole.findings.height
    assert all(len(d["tables"]) == 3 for d in dealers)  # the rotation takes each to every table


# --- the summary ----------------------------------------------------------------------------


def test_summary_per_dealer(tmp_path):
    result = _audit(_constructed()[0], tmp_path)
    money = {"underpaid": 0.0, "overcharged": 0.0, "overpaid": 0.0}
    assert summary.build(result, datetime(2026, 11, 2))["dealers"] == [
        # the bad card's round (an input error and warning, not a game-rule error) and the
        # card seen beyond the 5 decks the shuffle declared
        {
            "dealer_id": "ANN",
            "tables": ["BAC-01", "BAC-02"],
            "rounds_dealt": 39,
            "findings": 3,
            "by_severity": {"error": 2, "warning": 1},
            "rule_errors": 1,
            "errors_per_1000_rounds": 25.64,
            "money": money,
        },
        {
            "dealer_id": "BOB",
            "tables": ["BAC-01"],
            "rounds_dealt": 20,
            "findings": 1,
            "by_severity": {"error": 1, "warning": 0},
            "rule_errors": 1,
            "errors_per_1000_rounds": 50.0,
            "money": {**money, "underpaid": 5.0},
        },
        # shuffled BAC-02's shoe (its deck count), dealt no round
        {
            "dealer_id": "CAT",
            "tables": ["BAC-02"],
            "rounds_dealt": 0,
            "findings": 1,
            "by_severity": {"error": 1, "warning": 0},
            "rule_errors": 1,
            "errors_per_1000_rounds": None,
            "money": money,
        },
        # BAC-02's round 3, whose round_start names no dealer
        {
            "dealer_id": None,
            "tables": ["BAC-02"],
            "rounds_dealt": 1,
            "findings": 1,
            "by_severity": {"error": 1, "warning": 0},
            "rule_errors": 1,
            "errors_per_1000_rounds": 1000.0,
            "money": {**money, "underpaid": 5.0},
        },
    ]


def test_only_the_rounds_in_the_window_are_counted(tmp_path):
    """A window (a nightly job's gaming day): a dealer's rounds are those that start in it;
    the rest is context, counted for no one."""
    events = _constructed()[0]
    start, until = datetime(2026, 11, 1, 20, 10), datetime(2026, 11, 1, 20, 40)
    result = _audit(events, tmp_path, window=Window(start, until))
    dealers = summary.build(result, datetime(2026, 11, 2))["dealers"]
    local = pl.col("ts").str.slice(0, 19).str.to_datetime("%Y-%m-%dT%H:%M:%S")
    starts = events.filter((pl.col("event") == "round_start") & (local >= start) & (local < until))
    expected = dict(starts.group_by("dealer_id").len().iter_rows())
    assert 0 < sum(expected.values()) < 60
    assert {d["dealer_id"]: d["rounds_dealt"] for d in dealers if d["rounds_dealt"]} == expected
    assert sum(d["rounds_dealt"] for d in dealers) == summary.accounting(result)["rounds"]["read"]


# --- the report ------------------------------------------------------------------------------


def _out(events: pl.DataFrame, tmp: Path) -> Path:
    log = write_events(events, tmp / "logs" / "log.jsonl", "jsonl")
    house = write_house_rules(_constructed()[1], tmp / "house.toml")
    out = tmp / "out"
    CliRunner().invoke(
        main,
        ["audit", str(log), "--house", str(house), "--out", str(out), "--no-report", "-q"],
        catch_exceptions=False,
    )
    return out


def test_report_ranks_the_dealers(tmp_path):
    events = _constructed()[0].with_columns(pl.col("dealer_id").replace("BOB", "<BOB & co>"))
    out = _out(events, tmp_path)
    html = report.html(out)
    table = html[html.index('<h3 id="by-dealer">By dealer</h3>') :]
    table = table[: table.index("</table>")]
    rows = [r for r in table.split("<tr") if "<td" in r]
    # by game-rule errors per 1,000 rounds dealt: BOB 50.00, ANN 25.64, CAT (no round) last
    # of the named; the rounds without a dealer, then the total
    assert [r.split("</td>")[1].split(">")[-1] for r in rows[:3]] == [
        "&lt;BOB &amp; co&gt;",
        "ANN",
        "CAT",
    ]
    assert "Dealer not recorded" in rows[3] and "Total" in rows[4]
    assert ">50.00<" in rows[0] and ">25.64<" in rows[1] and ">—<" in rows[2]
    assert ">20<" in rows[0] and ">39<" in rows[1] and ">60<" in rows[4]
    assert "<BOB" not in html  # log text is escaped
    # each exception in detail names its dealer
    assert html.count("Dealer: ANN") == 3 and html.count("Dealer: CAT") == 1


def test_report_of_a_log_without_dealers(tmp_path):
    out = _out(_constructed()[0].with_columns(pl.lit(None, pl.String).alias("dealer_id")), tmp_path)
    html = report.html(out)
    assert "By dealer" in html and "The logs name no dealers" in html
    assert "Dealer: " not in html
    # an output folder written before dealers were counted renders without the table
    summary_path = out / "summary.json"
    old = json.loads(summary_path.read_text())
    del old["dealers"]
    summary_path.write_text(json.dumps(old))
    pl.read_parquet(out / "findings.parquet").drop("dealer_id").write_parquet(
        out / "findings.parquet"
    )
    assert "By dealer" not in report.html(out)


# --- the simulators ---------------------------------------------------------------------------


@pytest.mark.parametrize("module", [baccarat, blackjack])
def test_simulated_dealers_rotate_over_the_tables(module):
    events = module.simulate(rounds=400, tables=3, seed=4).events
    named = pl.col("event").is_in(["round_start", "shuffle"])
    assert events.filter(named)["dealer_id"].null_count() == 0
    assert events.filter(~named)["dealer_id"].null_count() == events.filter(~named).height
    starts = events.filter(pl.col("event") == "round_start")
    per_table = starts.group_by("table_id").agg(pl.col("dealer_id").n_unique())
    assert (per_table["dealer_id"] > 1).all()  # dealers change at every table
    # one dealer at one table at a time: in each 20-minute down a dealer deals one table
    down = pl.col("ts").str.slice(0, 19).str.to_datetime().dt.truncate("20m")
    at_once = starts.group_by(down.alias("down"), "dealer_id").agg(pl.col("table_id").n_unique())
    assert (at_once["table_id"] == 1).all()
