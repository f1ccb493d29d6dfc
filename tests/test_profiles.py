"""Export profiles (export-profiles-v1): every key of a profile checked, each mistake
named by the profile and the key (exit 2); the five card notations as the spec's table
reads them; `auditor profile check` on a profile and its exports."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.profiles import ProfileError
from auditor.profiles.cards import parts
from auditor.profiles.files import base_name, named_columns, sources_of
from auditor.profiles.load import load
from auditor.profiles.model import Cards

EXAMPLE = Path(__file__).parent / "profiles" / "coups_and_wagers.toml"


def test_the_spec_example_loads_with_every_source_as_written():
    profile = load(EXAMPLE)
    assert profile.name == "Example Casino: shoe coups and RFID wagers"
    coups, rfid, feed = profile.sources
    assert (coups.layout, rfid.layout, feed.layout) == ("coups", "wagers", "events")
    assert coups.delimiter == ";" and coups.timezone == "America/New_York"
    assert coups.game == "baccarat" and coups.columns["decks"].value == 8
    assert [m.column for m in coups.cards.player] == ["P1", "P2", "P3"]
    assert coups.cards.none == ("", "-")
    assert rfid.join == "time" and rfid.columns["amount"].sql.startswith("CAST(")
    assert feed.repeat_key == ("FrameNo",) and feed.values["event"]["HEARTBEAT"] == ""
    assert feed.cards.index_base == 0 and feed.cards.index_suits == "CDHS"
    assert len(profile.sha256) == 64


def _broken(tmp_path, old: str, new: str) -> Path:
    text = EXAMPLE.read_text()
    assert old in text, old
    path = tmp_path / "profile.toml"
    path.write_text(text.replace(old, new, 1))
    return path


MISTAKES = [
    # (what is changed, into what, the key the error must name, a word of its reason)
    ("version = 1", "version = 2", "profile.version", "must be 1"),
    ("version = 1", "version = 1\nowner = 'x'", "profile.owner", "not a key"),
    ('layout = "coups"', 'layout = "rows"', "source 'coups'.layout", "must be one of"),
    ('layout = "coups"\n', "", "source 'coups'.layout", "missing"),
    ('files = ["*_wagers_*.jsonl"]\n', "", "source 'rfid'.files", "missing"),
    ('files = ["*_wagers_*.jsonl"]', 'files = ["logs/*_wagers_*.jsonl"]',
     "source 'rfid'.files", "without '/'"),
    ('files = ["*_wagers_*.jsonl"]', 'files = ["*_wagers_*"]', "source 'rfid'.format",
     "is needed"),
    ('join = "time"', 'join = "time"\ndelimiter = ","', "source 'rfid'.delimiter",
     "CSV only"),
    ('join = "time"', 'join = "seat"', "source 'rfid'.join", "must be one of"),
    ('repeat_key = ["FrameNo"]', 'shoe_starts = "new_shoe_id"', "source 'feed'.shoe_starts",
     "not a key"),
    ('end_ts = "EndTime"', 'end_ts = "EndTime"\ncolour = "C"', "source 'coups'.columns.colour",
     "not a key"),
    ('action = "Decision"', 'action = "Decision"\npay = "Paid"', "source 'feed'.columns.pay",
     "not a key"),
    ('shoe_id = "ShoeBarcode"\n', "", "source 'coups'.columns.shoe_id", "needed by the coups"),
    ('game = { value = "baccarat" }', 'game = "Game"', "source 'coups'.columns.game",
     "constant"),
    ('game = { value = "baccarat" }', 'game = { value = "poker" }',
     "source 'coups'.columns.game", "must be one of"),
    ('amount = { sql = "CAST(stake_cents AS DOUBLE) / 100" }', 'amount = { sql = "CAST(( / 100" }',
     "source 'rfid'.columns.amount", "does not parse"),
    ('seat = "position"', 'seat = { column = "position" }', "source 'rfid'.columns.seat",
     "must be an export column"),
    ('B = "banker"', 'B = "bank"', "source 'coups'.values.winner.\"B\"", "must be one of"),
    ('DEAL = "card"', 'DEAL = "deal"', "source 'feed'.values.event.\"DEAL\"", "must be one of"),
    ("[source.values.bet]", "[source.values.mode]", "source 'rfid'.values.mode",
     "does not map"),
    ('notation = "rank_suit"', 'notation = "braille"', "source 'coups'.cards.notation",
     "must be one of"),
    ('notation = "rank_suit"', 'notation = "rank_suit"\nindex_base = 0',
     "source 'coups'.cards.index_base", "not a key"),
    ('banker = ["B1", "B2", "B3"]\n', "", "source 'coups'.cards.banker", "missing"),
    ('none = ["-1"]', 'none = ["-1", "0"]', "source 'feed'.cards.none", "'0' is read as a card"),
    ('index_suits = "CDHS"', 'index_suits = "CDHX"', "source 'feed'.cards.index_suits",
     "order of the four suits"),
    ('timezone = "America/New_York"', 'timezone = "America/Gotham"',
     "source 'coups'.timezone", "not a time zone"),
    ('name = "feed"', 'name = "rfid"', "source 'rfid'.name", "two sources"),
]


@pytest.mark.parametrize(("old", "new", "key", "why"), MISTAKES,
                         ids=[m[2] + ": " + m[3] for m in MISTAKES])
def test_each_mistake_is_named_by_its_key(tmp_path, old, new, key, why):
    path = _broken(tmp_path, old, new)
    with pytest.raises(ProfileError) as raised:
        load(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: {key}:"), message
    assert why in message
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    assert result.exit_code == 2 and key in result.output


def test_a_file_that_is_not_toml_is_a_profile_error(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text("[profile\nname = 1")
    with pytest.raises(ProfileError, match="not a TOML file"):
        load(path)


def test_a_blackjack_coups_source_maps_its_lists_and_their_actions(tmp_path):
    path = tmp_path / "bj.toml"
    path.write_text("""
[profile]
name = "shoe"
version = 1
[[source]]
name = "hands"
files = ["*.parquet"]
layout = "coups"
[source.columns]
table_id = "t"
shoe_id = "s"
round = "r"
seat = "box"
cards = "cards"
actions = "moves"
dealer_cards = "dealer"
game = { value = "blackjack" }
[source.values.action]
D = "double"
[source.cards]
notation = "suit_rank"
separator = ","
""")
    source = load(path).sources[0]
    assert source.values["action"] == {"D": "double"} and source.cards.separator == ","
    path.write_text(path.read_text().replace('"blackjack"', '"baccarat"'))
    with pytest.raises(ProfileError, match=r"columns\.cards: is not a key"):
        load(path)


NOTATION_CASES = [
    # the spec's table: what each notation reads (rank, suit), and what it does not
    (Cards("rank_suit"), {"AS": ("A", "S"), "TS": ("T", "S"), "10S": ("T", "S"),
                         "qh": ("Q", "H"), "SA": None, "1S": None, "AX": None}),
    (Cards("suit_rank"), {"SA": ("A", "S"), "ST": ("T", "S"), "S10": ("T", "S"),
                         "hq": ("Q", "H"), "AS": None}),
    (Cards("index"), {"1": ("A", "S"), "13": ("K", "S"), "14": ("A", "H"), "52": ("K", "C"),
                     "27.0": ("A", "D"), "0": None, "53": None, "2.5": None, "x": None}),
    (Cards("index", index_base=0, index_suits="CDHS"), {"0": ("A", "C"), "9": ("T", "C"),
                                                        "51": ("K", "S"), "52": None}),
    # (1.1) one token table for both games: 0 and 10 a ten-value card, its rank not
    # recorded (X); 1, 11 and A an ace
    (Cards("points"), {"0": ("X", None), "1": ("A", None), "9": ("9", None), "10": ("X", None),
                       "11": ("A", None), "A": ("A", None), "a": ("A", None), "12": None,
                       "J": None, "01": None}),
    (Cards("points", ranks={"T": "10", "ace": "A"}), {"T": ("X", None), "ace": ("A", None),
                                                      "7": ("7", None), "K": None}),
    (Cards("pattern", pattern=r"(?P<suit>[A-Z]+)-(?P<rank>\d+)",
          ranks={"1": "A", "11": "J", "12": "Q", "13": "K"},
          suits={"SPADE": "S", "HEART": "H"}), {
        "SPADE-1": ("A", "S"), "HEART-10": ("T", "H"), "HEART-13": ("K", "H"),
        "S-5": ("5", "S"), "CLUB-5": None, "SPADE-14": None, "SPADE-1x": None}),
    (Cards("pattern", pattern=r"(?P<rank>\d+)"), {"7": ("7", None), "10": ("T", None)}),
]


@pytest.mark.parametrize(("cards", "cases"), NOTATION_CASES,
                         ids=[c.notation for c, _ in NOTATION_CASES])
def test_each_notation_reads_the_cards_the_spec_says(cards, cases):
    frame = pl.DataFrame({"cell": list(cases)})
    read = frame.select(parts(cards, pl.col("cell")).alias("card")).unnest("card")
    for cell, (rank, suit) in zip(cases, read.iter_rows(), strict=True):
        expected = cases[cell]
        assert ((rank, suit) if rank is not None else None) == expected, cell


def test_files_match_by_base_name_in_profile_order():
    profile = load(EXAMPLE)
    assert [s.name for s in sources_of(profile, Path("/x/y/T1_coups_2026.csv"))] == ["coups"]
    assert sources_of(profile, Path("T1_COUPS_2026.csv")) == []  # case-sensitive
    assert base_name("s3://bucket/day/feed-01.ndjson?version=3") == "feed-01.ndjson"
    assert base_name("gs://b/a%20b_coups_1.csv") == "a b_coups_1.csv"
    assert [s.name for s in sources_of(profile, "s3://b/feed-01.ndjson?x=1")] == ["feed"]


def _exports(root: Path) -> None:
    root.mkdir()
    coups = ("TableNo;ShoeBarcode;CoupNo;StartTime;EndTime;Dealer;Result;PTotal;BTotal;"
             "P1;P2;P3;B1;B2;B3\n"
             "BAC-1;S1;1;01/11/2026 20:00:00;01/11/2026 20:00:40;D1;P;8;7;4S;4H;-;3D;4C;-\n"
             "BAC-1;S1;2;01/11/2026 20:01:00;01/11/2026 20:01:40;D1;X;6;6;3S;3H;-;2D;4C;-\n"
             "BAC-1;S1;3;01/11/2026 20:02:00;01/11/2026 20:02:40;D1;X;6;6;3S;3H;-;2D;4C;-\n")
    with gzip.open(root / "BAC1_coups_1101.csv.gz", "wt") as handle:
        handle.write(coups)
    wagers = [{"table": "BAC-1", "placed": "2026-11-01T20:00:05", "position": 1,
               "spot": "BNK", "stake_cents": 2500, "won": None, "lost": 25},
              {"table": "BAC-1", "placed": "2026-11-01T20:01:05", "position": 1,
               "spot": "DRG", "stake_cents": 500, "won": 5}]
    # a blank line before the second record: it is line 3
    (root / "BAC1_wagers_1101.jsonl").write_text("\n\n".join(map(json.dumps, wagers)) + "\n")
    (root / "notes.txt").write_text("not an export\n")


def test_profile_check_names_each_file_its_source_and_what_it_cannot_read(tmp_path):
    _exports(tmp_path / "exports")
    result = CliRunner().invoke(main, ["profile", "check", str(EXAMPLE),
                                       str(tmp_path / "exports")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"BAC1_coups_1101\.csv\.gz: source coups; 3 row\(s\)", out)
    assert re.search(r"coups_1101\.csv\.gz: winner: 'X' is in no value map \(2 row\(s\), "
                     r"first at line 3\)", out)
    assert re.search(r"BAC1_wagers_1101\.jsonl: source rfid; 2 row\(s\)", out)
    assert "bet: 'DRG' is in no value map (1 row(s), first at line 3)" in out
    # a JSON Lines key absent from every row is named, not an error
    assert "BAC1_wagers_1101.jsonl: lacks the mapped column 'commission'" in out
    assert "notes.txt: skipped" in out
    assert out.strip().endswith("the profile is valid; 2 file(s) read, 1 skipped")


def test_profile_check_exits_2_where_an_audit_could_not_run(tmp_path):
    _exports(tmp_path / "exports")
    named = CliRunner().invoke(main, ["profile", "check", str(EXAMPLE),
                                      str(tmp_path / "exports" / "notes.txt")])
    assert named.exit_code == 2
    assert "notes.txt is named on the command line, and no source reads it" in named.output
    path = tmp_path / "exports" / "BAC1_coups_1101.csv.gz"
    text = gzip.decompress(path.read_bytes()).decode().replace("Dealer;", "Croupier;", 1)
    path.write_bytes(gzip.compress(text.encode()))
    lacking = CliRunner().invoke(main, ["profile", "check", str(EXAMPLE), str(path)])
    assert lacking.exit_code == 2
    assert f"{path} has no column 'Dealer'" in lacking.output


def test_the_columns_a_source_names_include_those_in_its_sql_cards_and_repeat_key():
    coups, rfid, feed = load(EXAMPLE).sources
    assert "stake_cents" in named_columns(rfid) and "placed" in named_columns(rfid)
    assert named_columns(coups)[-6:] == ["P1", "P2", "P3", "B1", "B2", "B3"]
    assert named_columns(feed)[-1] == "FrameNo"


def test_a_column_named_in_sql_that_a_parquet_file_lacks_is_exit_2(tmp_path):
    path = tmp_path / "BAC1_wagers_1101.parquet"
    pl.DataFrame({"table": ["BAC-1"], "placed": ["2026-11-01T20:00:05"], "position": [1],
                  "spot": ["BNK"], "won": [None], "lost": [25], "commission": [None],
                  "settled_at": [1]}).write_parquet(path)
    profile = tmp_path / "p.toml"
    profile.write_text(EXAMPLE.read_text().replace('files = ["*_wagers_*.jsonl"]',
                                                   'files = ["*_wagers_*.parquet"]'))
    result = CliRunner().invoke(main, ["profile", "check", str(profile), str(path)])
    assert result.exit_code == 2
    assert f"{path} has no column 'stake_cents'" in result.output


def test_profile_check_takes_globs_and_refuses_a_path_that_names_nothing(tmp_path):
    _exports(tmp_path / "exports")
    globbed = CliRunner().invoke(main, ["profile", "check", str(EXAMPLE),
                                        str(tmp_path / "exports" / "*_wagers_*")])
    assert globbed.exit_code == 0, globbed.output
    assert globbed.output.strip().endswith("1 file(s) read, 0 skipped")
    missing = CliRunner().invoke(main, ["profile", "check", str(EXAMPLE),
                                        str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output


# --- profile SQL: checked as text at load, before polars parses it or any file is read

_AMOUNT = 'amount = { sql = "CAST(stake_cents AS DOUBLE) / 100" }'
REFUSED_SQL = [
    # (the SQL, a word of the reason)
    ("SUM(stake_cents)", "an aggregate"),
    ("COUNT(*) OVER (PARTITION BY position)", "an aggregate"),
    ("ROW_NUMBER() OVER ()", "a window function"),
    ("UPPER(spot) OVER (PARTITION BY position)", "OVER after a call: a window"),
    ("CAST(LocalTime AS VARCHAR)", "LocalTime, the time the audit runs"),
    ("stake_cents + (SELECT 1)", "SELECT, a word of a query"),
    ("read_csv('/etc/hostname')", "reads a file"),
    ("stake_cents -- a comment", "a comment"),
    ("LPAD(spot, 1000000000, 'x')", "not a function profile SQL may call"),
    ("CURRENT_DATE", "CURRENT_DATE, the time the audit runs"),
    ("(" * 33 + "stake_cents" + ")" * 33, "more than 32 deep"),
    (" || ".join(["spot"] * 200), "longer than 256 tokens"),
]


@pytest.mark.parametrize(("sql", "why"), REFUSED_SQL, ids=[r[1] for r in REFUSED_SQL])
def test_profile_sql_that_is_not_row_wise_is_refused_naming_the_key(tmp_path, sql, why):
    path = _broken(tmp_path, _AMOUNT, f"amount = {{ sql = {json.dumps(sql)} }}")
    with pytest.raises(ProfileError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}: source 'rfid'.columns.amount: the SQL ")
    assert why in str(raised.value)
    result = CliRunner().invoke(main, ["profile", "check", str(path)])
    assert result.exit_code == 2 and why in result.output


def test_a_column_named_like_a_word_only_a_query_uses_may_be_named_unquoted(tmp_path):
    sql = "CAST(Table AS VARCHAR) || Partition || Window || Join || Over"
    path = _broken(tmp_path, _AMOUNT, f'amount = {{ sql = "{sql}" }}')
    _, rfid, _ = load(path).sources
    assert pl.sql_expr(rfid.columns["amount"].sql).meta.root_names() == [
        "Table", "Partition", "Window", "Join", "Over"]


def test_profile_sql_never_reads_a_file_nor_says_whether_one_exists(tmp_path):
    secret = tmp_path / "secret.parquet"
    pl.DataFrame({"pin": [1234]}).write_parquet(secret)
    said = []
    for target in (secret, tmp_path / "absent.parquet"):
        sql = f"stake_cents IN (FROM read_parquet('{target}'))"
        path = _broken(tmp_path, _AMOUNT, f"amount = {{ sql = {json.dumps(sql)} }}")
        with pytest.raises(ProfileError) as raised:
            load(path)
        said.append(str(raised.value))
    assert "FROM, a word of a query" in said[0]
    assert said[0] == said[1].replace("absent.parquet", "secret.parquet")


def test_an_expression_too_long_for_polars_is_exit_2_not_a_crash(tmp_path):
    # ~6,000 operands crash polars' SQL parser (a segfault) in the process that reads it
    sql = " + ".join(["stake_cents"] * 6000)
    path = _broken(tmp_path, _AMOUNT, f'amount = {{ sql = "{sql}" }}')
    root = Path(__file__).parent.parent
    ran = subprocess.run([sys.executable, "-m", "auditor.cli", "profile", "check", str(path)],
                         capture_output=True, text=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert ran.returncode == 2, ran.stderr[-300:]
    assert ran.stderr.strip().count("\n") == 0 and "Traceback" not in ran.stderr
    assert "source 'rfid'.columns.amount: the SQL is longer than 256 tokens" in ran.stderr


# an example of each function profile SQL may call, as the manual lists them
_FUNCTION_EXAMPLES = {
    "CAST": "CAST(n AS VARCHAR)", "TRY_CAST": "TRY_CAST(s AS INTEGER)",
    "COALESCE": "COALESCE(n, 0)", "NULLIF": "NULLIF(n, 1)", "IFNULL": "IFNULL(n, 0)",
    "IF": "IF(n > 0, 'p', 'n')", "UPPER": "UPPER(s)", "LOWER": "LOWER(s)",
    "TRIM": "TRIM(BOTH ' ' FROM s)", "LTRIM": "LTRIM(s)", "RTRIM": "RTRIM(s)",
    "SUBSTR": "SUBSTR(s, 1, 2)", "SUBSTRING": "SUBSTRING(s FROM 1 FOR 2)",
    "LENGTH": "LENGTH(s)", "CHAR_LENGTH": "CHAR_LENGTH(s)", "CONCAT": "CONCAT(s, 'x')",
    "CONCAT_WS": "CONCAT_WS('-', s, 'x')", "REPLACE": "REPLACE(s, 'a', 'b')",
    "LEFT": "LEFT(s, 1)", "RIGHT": "RIGHT(s, 1)", "STRPOS": "STRPOS(s, 'b')",
    "POSITION": "POSITION('b' IN s)", "STARTS_WITH": "STARTS_WITH(s, 'a')",
    "ENDS_WITH": "ENDS_WITH(s, 'b')", "SPLIT_PART": "SPLIT_PART(s, '_', 1)",
    "REGEXP_LIKE": "REGEXP_LIKE(s, '^a')", "REGEXP_REPLACE": "REGEXP_REPLACE(s, 'a', 'b')",
    "REVERSE": "REVERSE(s)", "INITCAP": "INITCAP(s)", "ABS": "ABS(n)",
    "ROUND": "ROUND(f, 1)", "FLOOR": "FLOOR(f)", "CEIL": "CEIL(f)", "CEILING": "CEILING(f)",
    "TRUNC": "TRUNC(f)", "SIGN": "SIGN(n)", "MOD": "MOD(n, 2)", "DIV": "DIV(n, 2)",
    "GREATEST": "GREATEST(n, 0)", "LEAST": "LEAST(n, 0)",
    "STRPTIME": "STRPTIME(t, '%Y-%m-%d %H:%M')",
    "STRFTIME": "STRFTIME(STRPTIME(t, '%Y-%m-%d %H:%M'), '%H')",
    "DATE": "DATE(t, '%Y-%m-%d %H:%M')",
    "DATE_PART": "DATE_PART('hour', STRPTIME(t, '%Y-%m-%d %H:%M'))",
    "EXTRACT": "EXTRACT(YEAR FROM STRPTIME(t, '%Y-%m-%d %H:%M'))",
}


def test_each_function_profile_sql_may_call_works_and_is_in_the_manual():
    from auditor.profiles import sql

    assert set(_FUNCTION_EXAMPLES) == sql.FUNCTIONS
    frame = pl.DataFrame({"n": [3, -2], "f": [1.25, 2.5], "s": ["a_b", "ab"],
                          "t": ["2026-11-01 20:05", "2026-11-02 01:00"]})
    for name, example in _FUNCTION_EXAMPLES.items():
        sql.check(example)
        assert frame.select(pl.sql_expr(example).alias(name)).height == 2, name
    manual = (Path(__file__).parent.parent / "docs" / "reference"
              / "export-profiles.md").read_text()
    listed = set(re.findall(r"`([A-Z_]+)`", manual))
    assert not sql.FUNCTIONS - listed, sorted(sql.FUNCTIONS - listed)
    assert f"{sql.MAX_TOKENS} tokens" in manual and f"{sql.MAX_DEPTH} " in manual


def test_a_gzip_export_is_read_through_every_member_and_the_zeros_padding_it(tmp_path):
    from auditor.profiles.files import text_of

    texts = [b"a,b\n" * 50_000, b"", b"c,d\n" * 3]
    path = tmp_path / "x.csv.gz"
    path.write_bytes(b"".join(gzip.compress(t) for t in texts) + b"\0" * 8)
    assert text_of(path) == b"".join(texts) == gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(texts[0]) + b"junk")
    with pytest.raises(gzip.BadGzipFile, match="corrupt"):
        text_of(path)
