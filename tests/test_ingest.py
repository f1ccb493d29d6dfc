"""Reading: every encoding gives the same rows, and every row is accounted for."""

from __future__ import annotations

import gzip
import json
import tomllib
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, expand_events, write_file
from summaries import audited

from auditor import audit
from auditor.details import round_details
from auditor.house import load as load_house
from auditor.house import parse as parse_house
from auditor.ingest import readers
from auditor.ingest.load import ingest
from auditor.ingest.parse import typed
from auditor.ingest.partition import open_log
from auditor.ingest.sources import SourceError, expand
from auditor.rulesets import load_rulesets
from auditor.simulate.baccarat import simulate
from auditor.summary import accounting

EVENTS = """
{"event": "shuffle", "decks": 8}
{"event": "burn", "card": "2S"}
{"event": "burn", "card": "TH"}
{"event": "burn", "card": "QC"}
{"event": "shoe_offer", "seat": 1, "accepted": true}
{"event": "round_start"}
{"event": "wager", "seat": 1, "bet": "banker", "amount": 25}
{"event": "wager", "seat": 2, "bet": "player", "amount": "12.5"}
{"event": "no_more_bets"}
{"event": "card", "target": "player", "card": "9S"}
{"event": "result", "winner": "player", "player_points": 9, "banker_points": 0}
{"event": "vig", "seat": 1, "amount": 1.25, "mode": "marked"}
{"event": "round_end"}
"""
ENCODINGS = ["log.jsonl", "log.ndjson", "log.jsonl.gz", "log.csv", "log.csv.gz", "log.parquet"]


def _house():
    return parse_house(tomllib.loads(DEFAULT_HOUSE.read_text()), load_rulesets(), date(2026, 11, 1))


def _read(path: Path):
    return ingest(expand([str(path)]), baccarat_seats=(1, 2, 3))


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_encoding_reads_the_same_rows(tmp_path, name):
    reference = _read(write_file(tmp_path, {"name": "ref.jsonl", "events": EVENTS}))
    other = _read(write_file(tmp_path, {"name": name, "events": EVENTS}))
    assert other.problems.height == 0, other.problems
    # the same rows, up to where they sit in the file (a CSV header is line 1)
    columns = [c for c in reference.events.columns if c not in ("file_id", "line")]
    assert other.events.select(columns).equals(reference.events.select(columns))
    assert other.events["amount_cents"].drop_nulls().to_list() == [2500, 1250, 125]
    assert other.events["accepted"].drop_nulls().to_list() == [True]


def test_parquet_with_native_types_reads_the_same(tmp_path):
    rows = expand_events(EVENTS)
    frame = pl.DataFrame(rows).with_columns(
        pl.col("amount").cast(pl.Float64), pl.col("ts").str.slice(0, 19).str.to_datetime()
    )
    frame.write_parquet(tmp_path / "typed.parquet")
    typed = _read(tmp_path / "typed.parquet")
    reference = _read(write_file(tmp_path, {"name": "ref.jsonl", "events": EVENTS}))
    assert typed.problems.height == 0, typed.problems
    for column in ("seq", "round", "amount_cents", "accepted", "card", "time"):
        assert typed.events[column].to_list() == reference.events[column].to_list(), column


def test_folders_globs_and_files_each_once(tmp_path):
    (tmp_path / "d").mkdir()
    for name in ("a.jsonl", "b.csv.gz", "notes.txt"):
        (tmp_path / "d" / name).write_text("")
    found = expand(
        [str(tmp_path / "d"), str(tmp_path / "d" / "*.jsonl"), str(tmp_path / "d/a.jsonl")]
    )
    assert [s.path.name for s in found] == ["a.jsonl", "b.csv.gz"]
    with pytest.raises(SourceError, match="no such file"):
        expand([str(tmp_path / "missing.jsonl")])
    with pytest.raises(SourceError, match="not a log file"):
        expand([str(tmp_path / "d" / "notes.txt")])


DAMAGED = [
    ('{"event": "wager", "seat": 1, "bet": "banker", "amount": 25}', None),
    ('{"event": "teleport"}', "IN005"),
    ('{"event": "card", "target": "player", "card": "1S"}', "IN006"),
    ('{"event": "wager", "seat": 1, "bet": "banker", "amount": -5}', "IN007"),
    ('{"event": "wager", "seat": 1, "bet": "banker", "amount": "five"}', "IN007"),
    ('{"event": "wager", "seat": 1, "bet": "banker"}', "IN004"),
    ('{"event": "wager", "seat": 0, "bet": "banker", "amount": 5}', "IN008"),
]


def _damaged_log(tmp_path: Path) -> tuple[Path, list[tuple[int, str]]]:
    """Ten rounds; rounds 2..7 each get one kind of row damage, 8..10 damage of order."""
    lines, expected, seq = [], [], 0

    def add(event: dict, rnd: int) -> None:
        nonlocal seq
        seq += 1
        row = {
            "table_id": "BAC-01",
            "game": "baccarat",
            "shoe_id": "S1",
            "round": rnd,
            "seq": seq,
            "ts": f"2026-11-01T20:{seq // 60:02d}:{seq % 60:02d}",
            **event,
        }
        lines.append(json.dumps(row))

    add({"event": "shuffle", "decks": 8}, 0)
    for rnd in range(1, 11):
        add({"event": "round_start"}, rnd)
        row, rule = DAMAGED[rnd - 1] if rnd <= len(DAMAGED) else DAMAGED[0]
        add(json.loads(row), rnd)
        if rule:
            expected.append((len(lines), rule))
        if rnd == 8:
            lines.append('{"table_id": "BAC-01", "game": "bacc')  # truncated
            expected.append((len(lines), "IN002"))
            seq += 1
        if rnd == 9:  # duplicate seq, and a row after round_end below
            add({"event": "no_more_bets", "seq": seq}, rnd)
            expected.append((len(lines), "IN010"))
        add({"event": "round_end"}, rnd)
    add({"event": "pay", "seat": 1, "bet": "banker", "amount": 5}, 10)
    expected.append((len(lines), "IN012"))
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return path, expected


def test_damaged_log_reports_each_bad_row_and_audits_the_rest(tmp_path):
    path, expected = _damaged_log(tmp_path)
    result = audit.run(expand([str(path)]), _house(), load_rulesets())
    findings = result.findings
    for line, rule in expected:
        hit = findings.filter((pl.col("line") == line) & (pl.col("rule_id") == rule))
        assert hit.height == 1, (line, rule, findings.select("rule_id", "line", "message"))
        assert hit["file"][0] == str(path.resolve())
    bad_rounds = set(findings.filter(pl.col("rule_id") == "IN014")["round"].to_list())
    # rounds 2-7 have a bad row; 8 and 9 sit either side of the unreadable line; 9 has
    # the duplicate seq and 10 the row after its round_end
    assert bad_rounds == {2, 3, 4, 5, 6, 7, 8, 9, 10}
    audited_rounds = set(result.totals.kept_audited.filter(pl.col("round") > 0)["round"].to_list())
    assert audited_rounds == {1}
    counts = accounting(result)
    assert counts["rows"]["balanced"]
    with gzip.open(path) as lines:
        assert counts["rows"]["read"] == sum(1 for _ in lines)
    assert counts["rounds"] == {"read": 10, "audited": 1, "reported": 9}


@pytest.mark.parametrize(("sample", "part_rows"), [("damaged", 150), ("faulty", 4_000)])
def test_sample_read_in_parts_reports_the_same(sample, part_rows, monkeypatch):
    """Parts give what one pass gives: a row whose round is unknown (an unreadable
    line, read in the first part) still withholds the rounds around it in tables a
    later part reads; both games' findings, summary and replays are the same."""
    root = Path(__file__).resolve().parent.parent / "sample_logs"
    rs = load_rulesets()
    house = load_house(root / "house.toml", rs, date(2026, 11, 1))
    sources = expand([str(root / sample)])
    whole = audit.run(sources, house, rs)
    monkeypatch.setattr(audit, "PART_ROWS", part_rows)
    # three parts at least: the worker reads a later part while it checks one
    assert len(audit._parts(open_log(sources))) >= 3
    parted = audit.run(sources, house, rs)
    assert whole.findings.height > 0
    assert parted.findings.equals(whole.findings)
    run_at = datetime(2026, 11, 2, tzinfo=UTC)
    assert audited(parted, run_at) == audited(whole, run_at)
    assert round_details(parted).equals(round_details(whole))
    assert set(parted.contexts) == set(whole.contexts)


def test_parquet_slice_that_cannot_be_read_loses_its_rows_only(tmp_path, monkeypatch):
    path = tmp_path / "log.parquet"
    simulate(rounds=200, tables=2, seed=1).events.write_parquet(
        path, row_group_size=500, compression="uncompressed"
    )
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 3000] = b"\xab" * 3000  # garble a row group in the middle
    path.write_bytes(bytes(data))
    monkeypatch.setattr(readers, "PARQUET_CHUNK_ROWS", 500)
    result = audit.run(expand([str(path)]), _house(), load_rulesets())
    unreadable = result.findings.filter(pl.col("rule_id") == "IN001")
    assert unreadable["line"].to_list() == [2001]
    counts = accounting(result)
    assert counts["rows"]["balanced"]
    assert counts["rows"]["unreadable_records"] == 500
    assert counts["rows"]["audited"] > 0


def test_card_codes_are_exactly_the_formats_rank_then_suit():
    """The card check compares with the list of codes; the list is the language of the
    format's pattern, rank A23456789TJQK then suit SHDC, or (1.3) a rank then `*` (its
    suit not recorded) and `X*` (a ten-value card, its rank not recorded): every string of
    up to three characters from a wide alphabet is in the list exactly when the pattern
    matches."""
    import itertools
    import re

    from auditor.ingest import vocabulary as v

    pattern = re.compile(r"[A2-9TJQK][SHDC]|[A2-9TJQKX]\*")
    alphabet = "".join(sorted(set(v.RANKS + v.SUITS + "01aAsStTxX*\u2217 \n-+٣")))
    for size in (0, 1, 2, 3):
        for letters in itertools.product(alphabet, repeat=size):
            text = "".join(letters)
            assert (text in v.CARD_CODES) == bool(pattern.fullmatch(text)), text
    assert len(v.CARDS) == 52 and len(v.CARD_CODES) == 52 + 14


def test_events_come_sorted_by_table_and_flagged_so(tmp_path):
    """Group-bys and joins by table trust the sorted flag the ingest sets: the rows
    must be in the tables' text order whatever order the file interleaves them in."""
    tables = ["b", "A", "ä", "B-10", "B-9"]
    rows = [
        {"table_id": t, "game": "baccarat", "shoe_id": "S1", "round": 0, "seq": seq,
         "ts": f"2026-11-01T20:00:{seq:02d}",
         **({"event": "shuffle", "decks": 8} if seq == 1 else {"event": "burn", "card": "TD"})}
        for seq in (1, 2, 3) for t in tables
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    part = ingest(expand([str(log)]))
    for frame in (part.events, part.audited):
        table = frame.get_column("table_id")
        assert table.flags["SORTED_ASC"]
        assert table.to_list() == sorted(t for _ in (1, 2, 3) for t in tables)
        assert frame.get_column("seq").to_list() == [1, 2, 3] * len(tables)


@pytest.mark.parametrize(
    ("stamps", "first"),
    [
        (["2026-11-02T01:00:00", "2026-11-01T23:59:59-05:00"], date(2026, 11, 1)),
        (["2026-11-01T00:00:00", "2026-10-31 23:00:00"], date(2026, 10, 31)),
        # the smallest texts are not timestamps: the first day is of the valid ones
        (["0000-00-00T00:00:00", "2026-10-31T25:00:00", "2026-11-02T01:00:00",
          "2026-11-01T09:00:00.5Z", "  2026-01-01T00:00:00", ""], date(2026, 11, 1)),
        (["garbage", "never"], None),
    ],
)
def test_first_day_is_that_of_the_earliest_valid_timestamp(tmp_path, stamps, first):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(
        json.dumps({"table_id": "BAC-01", "event": "burn", "ts": ts}) + "\n" for ts in stamps
    ))
    assert open_log(expand([str(log)])).first_day == first
    parquet = tmp_path / "log.parquet"
    pl.DataFrame({"table_id": ["BAC-01"] * len(stamps), "ts": stamps}).write_parquet(parquet)
    assert open_log(expand([str(parquet)])).first_day == first


def test_timestamps_with_a_t_a_space_or_no_time_at_all():
    """Timestamps are read with a T between date and time first; those left empty are
    read again allowing a space: a space is read, and what is no time stays a problem."""
    texts = ["2026-11-01T20:01:09-05:00", "2026-11-01 20:01:09", "2026-11-01 20:01:09.25Z",
             "2026-02-30T20:01:09", "2026-11-01T20:01", "bad", None]
    raw = pl.DataFrame({"ts": texts, "line": list(range(1, 8))})
    frame, problems = typed(raw, 0)
    at = datetime(2026, 11, 1, 20, 1, 9)
    assert frame["time"].to_list() == [at, at, at, None, None, None, None]
    assert problems.filter(pl.col("field") == "ts")["line"].to_list() == [4, 5, 6]


def test_timestamps_repeated_in_runs_read_as_each_row_alone():
    """Text timestamps are read once per run of equal values (a log in time order
    repeats each second's): every row gets what reading it alone gives, runs of
    missing and bad values included, and the column comes back chunked as its frame."""
    texts = ["2026-11-01T20:01:09-05:00", "2026-11-01 20:01:10", "2026-02-30T20:01:09",
             "2026-11-01T20:01:11.5Z", "bad", None]
    rows = [None, None, *(t for n, t in enumerate(texts) for _ in range(n % 3 + 1)), *texts, None]
    raw = pl.DataFrame({"ts": rows, "line": list(range(1, len(rows) + 1))})
    chunked = pl.concat([raw[:7], raw[7:15], raw[15:]], rechunk=False)
    frame, problems = typed(chunked, 0)
    alone = [typed(raw[n:n + 1], 0)[0]["time"].item() for n in range(raw.height)]
    assert frame["time"].to_list() == alone
    assert frame["time"].chunk_lengths() == frame["line"].chunk_lengths() == [7, 8, raw.height - 15]
    bad = [n + 1 for n, t in enumerate(rows) if t in ("2026-02-30T20:01:09", "bad")]
    assert problems.filter(pl.col("field") == "ts")["line"].to_list() == bad


def test_a_line_cut_inside_its_round_withholds_no_other_round(tmp_path):
    """A log cut in the middle of `"round":28`: the line's table is read back to withhold
    the rounds around it, but not round 2, whose number its cut text happens to start."""
    from auditor.simulate import baccarat
    from auditor.simulate.writer import write_events, write_house_rules

    sim = baccarat.simulate(rounds=40, tables=1, seed=4)
    log = write_events(sim.events, tmp_path / "log.jsonl", "jsonl")
    lines = log.read_bytes().split(b"\n")
    cut = next(n for n, line in enumerate(lines) if b'"round":28,' in line)
    kept = lines[cut][: lines[cut].index(b'"round":28,') + len(b'"round":2')]
    log.write_bytes(b"\n".join([*lines[:cut], kept]))
    rs = load_rulesets()
    house = load_house(write_house_rules(sim.tables, tmp_path / "house.toml"), rs,
                       date(2026, 11, 1))
    withheld = audit.run(expand([str(log)]), house, rs).totals.unauditable
    rounds = set(withheld["round"].to_list())
    assert 2 not in rounds
    assert 27 in rounds or 28 in rounds  # the round in progress where the log stops
