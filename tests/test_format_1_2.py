"""Format 1.2 read in every encoding: the irregularity events, the action `refuse`, the
columns `exposure` and `disclosed` (hand-history-v1, Irregularities). A log without them
reads as before; a row breaking their contract is an input finding at its line."""

from __future__ import annotations

import json

import polars as pl
import pytest
from casefiles import DEFAULT_HOUSE, expand_events
from click.testing import CliRunner

from auditor.cli import main
from auditor.ingest.load import ingest
from auditor.ingest.sources import expand
from auditor.profiles.load import load as load_profile
from auditor.profiles.read import translate
from auditor.report import replays
from auditor.simulate import exports
from auditor.simulate.writer import events_frame, write_events

_PLACE = {"table_id": "BAC-01", "game": "baccarat", "shoe_id": "S1"}


def _rows(*events: dict) -> list[dict]:
    """Events with their place, seq and ts filled in."""
    return [{**_PLACE, "round": 1, "seq": n, "ts": f"2026-11-01T20:00:{n:02d}", **e}
            for n, e in enumerate(events, start=1)]


_IRREGULAR = _rows(
    {"event": "shuffle", "round": 0, "decks": 8},
    {"event": "card_exposed", "card": "7H", "exposure": "face_up_in_shoe", "disclosed": True},
    {"event": "burn", "card": "7H"},
    {"event": "card_exposed", "card": "2S", "exposure": "excess", "disclosed": False},
    {"event": "card_exposed", "card": "3S", "exposure": "misdealt", "disclosed": False,
     "target": "player"},
    {"event": "card_exposed", "game": "blackjack", "table_id": "BJ-01", "card": "9D",
     "exposure": "exposed"},
    {"event": "dead_hand", "game": "blackjack", "table_id": "BJ-01", "seat": 2, "hand": 1,
     "reason": "no card dealt"},
    {"event": "hole_card_check", "game": "blackjack", "table_id": "BJ-01"},
    {"event": "action", "game": "blackjack", "table_id": "BJ-01", "seat": 2, "hand": 1,
     "action": "refuse", "player_id": "P-7"},
)


@pytest.mark.parametrize("encoding", ["jsonl", "csv", "parquet"])
def test_the_irregularity_words_are_read_in_every_encoding(tmp_path, encoding):
    log = write_events(_IRREGULAR, tmp_path / f"log.{encoding}", encoding)
    read = ingest(expand([str(log)]))
    assert read.problems.filter(pl.col("rule_id").is_in(["IN003", "IN004", "IN005", "IN009"])
                                ).is_empty(), read.problems
    rows = read.events.sort("seq").select(
        pl.col("event").cast(pl.String), pl.col("exposure").cast(pl.String), "disclosed",
        pl.col("action").cast(pl.String), "player_id")
    assert rows["event"].to_list()[1:4] == ["card_exposed", "burn", "card_exposed"]
    assert rows["exposure"].to_list()[1:6] == [
        "face_up_in_shoe", None, "excess", "misdealt", "exposed"]
    assert rows["disclosed"].to_list()[1:5] == [True, None, False, False]
    assert rows.row(8) == ("action", None, None, "refuse", "P-7")


def test_a_log_without_the_1_2_columns_reads_as_before(tmp_path):
    plain = [r for r in _IRREGULAR if r["event"] in ("shuffle", "burn")]
    log = write_events(plain, tmp_path / "log.csv", "csv")
    assert "exposure" not in log.read_text().splitlines()[0]
    read = ingest(expand([str(log)]))
    # the rows end mid-shoe (a warning of the cut, IN018): nothing said of 1.2 columns
    assert read.problems["rule_id"].to_list() == ["IN018"], read.problems


@pytest.mark.parametrize(("change", "rule", "field"), [
    ({"exposure": "sideways"}, "IN009", "exposure"),
    ({"exposure": "exposed"}, "IN009", "exposure"),  # a blackjack word in baccarat
    ({"disclosed": None}, "IN004", "disclosed"),
    ({"exposure": "misdealt"}, "IN004", "target"),  # a misdealt card names its hand
    ({"exposure": None}, "IN004", "exposure"),
    ({"card": None}, "IN004", "card"),
])
def test_a_card_exposed_row_breaking_the_contract_is_reported_at_its_line(
        tmp_path, change, rule, field):
    rows = _rows({"event": "shuffle", "round": 0, "decks": 8},
                 {"event": "card_exposed", "card": "7H", "exposure": "excess",
                  "disclosed": True, **change})
    log = write_events(rows, tmp_path / "log.jsonl", "jsonl")
    read = ingest(expand([str(log)]))
    found = read.problems.select("rule_id", "line", "field").rows()
    assert (rule, 2, field) in found, found


def test_a_disclosed_value_that_is_not_a_boolean_is_reported(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(
        "table_id,game,shoe_id,round,seq,ts,event,card,exposure,disclosed\n"
        "BAC-01,baccarat,S1,0,1,2026-11-01T20:00:00,shuffle,,,\n"
        "BAC-01,baccarat,S1,1,2,2026-11-01T20:00:01,card_exposed,7H,excess,perhaps\n")
    found = ingest(expand([str(log)])).problems.select("rule_id", "line", "field").rows()
    assert ("IN009", 3, "disclosed") in found, found


def test_a_device_feed_carries_the_irregularity_words_through_its_profile(tmp_path):
    """The same rows as a feed in its own words (exports.FEED_WORDS) read back through
    the profile give the hand history's 1.2 rows."""
    frame = events_frame(_IRREGULAR).with_columns(
        pl.col("amount_cents").alias("amount"))
    exports.write(frame, tmp_path / "x", "events", "day")
    read = translate(load_profile(tmp_path / "x" / "profile.toml"), [str(tmp_path / "x")])
    fed = pl.concat(read.events, how="diagonal_relaxed")
    direct = ingest(expand([str(write_events(_IRREGULAR, tmp_path / "log.jsonl", "jsonl"))]))
    columns = ["table_id", "event", "exposure", "disclosed", "action", "card", "target"]
    assert (fed.select(pl.col(columns).cast(pl.String)).sort("table_id", "event", "card").rows()
            == direct.events.select(pl.col(columns).cast(pl.String))
            .sort("table_id", "event", "card").rows())


def test_a_replayed_round_lists_its_irregularities(tmp_path):
    """The report's replay of a round with a finding shows its 1.2 rows in words."""
    events = expand_events("\n".join([
        '{"macro": "shoe", "decks": 8, "burn": "AS", "curator": 1}',
        '{"event": "card_exposed", "card": "5H", "exposure": "excess", "disclosed": false, '
        '"round": "next"}',
        '{"macro": "round", "player": "5H 4S", "banker": "8C TS", '
        '"wagers": [[1, "player", 25]]}',
    ]))
    for row in events:  # the result declared wrong: a finding in that round (BA301)
        if row["event"] == "result":
            row["winner"] = "banker"
    log = write_events(events, tmp_path / "logs" / "log.jsonl", "jsonl")
    out = tmp_path / "out"
    CliRunner().invoke(main, ["audit", str(log.parent), "--house", str(DEFAULT_HOUSE), "--out",
                              str(out), "--no-report", "-q"])
    details = pl.read_parquet(out / "round_details.parquet").filter(pl.col("round") == 1)
    text = "\n".join(line.text for block in
                     replays.baccarat(json.loads(details["detail"][0])).blocks for line in block)
    assert "5♥ drawn in excess, not disclosed" in text, text
