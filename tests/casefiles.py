"""Rule cases as data: loading a case file and running its logs through the audit.

A case file (`tests/cases/<scope>/<RULE>.toml`) holds `[[case]]` entries:

    [[case]]
    name = "a truncated JSON line is reported with its line"   # a sentence
    expect = "fail"            # fail: the rule must fire as listed; pass: it must not fire
    findings = [{ line = 3, field = "amount" }]   # fail only: each must match a finding
    house = '''...'''          # optional house rules TOML (default: cases/house.toml)
    house_top = "seq_gapless = true"   # optional: top-level keys put before the default's
    [[case.files]]
    name = "log.jsonl"         # the extension picks the encoding, as on the command line
    text = '''...'''           # the exact file content, or:
    events = '''...'''         # one partial JSON object a line; defaults are filled in
    drop_columns = ["amount"]  # CSV/Parquet written from `events` without these columns
    truncate = 40              # keep only this many bytes (e.g. a cut gzip stream)
    context = ["before.jsonl"] # optional: files read as context only (--context)
    profile = '''...'''        # optional: an export profile; the files (each `text`) are
                               # then a table system's exports, read through it

`{"macro": ...}` lines expand to whole shoes and rounds (tests/baccarat_macros.py).
`events` lines get table_id BAC-01, game baccarat, shoe_id S1, a ts, a seq
one above the last, and the current round (a `round_start` opens the next
one) unless they say otherwise; `text` is written exactly as given.
"""

from __future__ import annotations

import gzip
import json
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path

import baccarat_macros
import polars as pl

from auditor import audit
from auditor.house import HouseRules
from auditor.house import parse as parse_house
from auditor.ingest import vocabulary as v
from auditor.ingest.sources import expand
from auditor.profiles.load import load as load_profile
from auditor.profiles.read import translate
from auditor.rulesets import load_rulesets

CASES = Path(__file__).resolve().parent / "cases"
DEFAULT_HOUSE = CASES / "house.toml"
START = datetime(2026, 11, 1, 20, 0, 0)


# a blackjack round by the book, with a pay (line 11 of its file): a log with money in it
PAID_ROUND = """
{"event": "shuffle", "decks": 6}
{"event": "burn", "card": "2C"}
{"event": "round_start"}
{"event": "wager", "seat": 1, "hand": 1, "bet": "main", "amount": 25}
{"event": "no_more_bets"}
{"event": "card", "target": "seat", "seat": 1, "hand": 1, "card": "TS"}
{"event": "card", "target": "dealer", "card": "9D"}
{"event": "card", "target": "seat", "seat": 1, "hand": 1, "card": "9H"}
{"event": "card", "target": "dealer", "card": "8C"}
{"event": "action", "seat": 1, "hand": 1, "action": "stand"}
{"event": "pay", "seat": 1, "hand": 1, "bet": "main", "amount": 25}
{"event": "round_end"}
"""


def case_files() -> list[Path]:
    return sorted(CASES.glob("*/*.toml"))


def load_cases(path: Path) -> list[dict]:
    cases = tomllib.loads(path.read_text(encoding="utf-8")).get("case", [])
    for case in cases:
        case["rule"] = path.stem
    return cases


def _events(text: str, base: dict, house: HouseRules | None) -> list[dict]:
    """The case's event lines, with macro lines expanded (see baccarat_macros)."""
    events = []
    for line in text.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        event = json.loads(line)
        macro = event.pop("macro", None)
        if macro == "shoe":
            events += baccarat_macros.shoe(event)
        elif macro == "round":
            events += baccarat_macros.round_(event, house or default_house(), base["table_id"])
        elif macro == "burns":
            events += baccarat_macros.burns(event)
        else:
            events.append(event)
    return events


def default_house() -> HouseRules:
    return parse_house(tomllib.loads(DEFAULT_HOUSE.read_text(encoding="utf-8")), load_rulesets(),
                       on=date(2026, 11, 1))


def expand_events(text: str, defaults: dict | None = None,
                  house: HouseRules | None = None) -> list[dict]:
    """Fill in the fields a case leaves out (see the module docstring)."""
    rows, seq, rnd = [], 0, 0
    base = {"table_id": "BAC-01", "game": "baccarat", "shoe_id": "S1", **(defaults or {})}
    for event in _events(text, base, house):
        # "next": a shoe-level event carrying the round it precedes
        if event.get("round") == "next":
            event["round"] = rnd + 1
        elif event.get("event") == "round_start" and "round" not in event:
            rnd += 1
        elif event.get("event") == "shuffle" and "round" not in event:
            rnd = 0
        elif "round" in event:
            rnd = event["round"]
        seq = event.get("seq", seq + 1)
        row = {
            **base,
            "round": rnd,
            "seq": seq,
            "ts": (START + timedelta(seconds=seq)).isoformat() + "-05:00",
            **event,
        }
        rows.append(row)
    return rows


def _frame(rows: list[dict], drop: list[str]) -> pl.DataFrame:
    columns = [c for c in v.COLUMNS if c not in drop]
    data = {c: [None if r.get(c) is None else str(r.get(c)) for r in rows] for c in columns}
    for c in columns:
        if any(isinstance(r.get(c), bool) for r in rows):
            data[c] = [None if r.get(c) is None else str(r[c]).lower() for r in rows]
    return pl.DataFrame(data, schema={c: pl.String for c in columns})


def write_file(folder: Path, spec: dict, house: HouseRules | None = None) -> Path:
    path = folder / spec["name"]
    if "text" in spec:
        content = spec["text"].lstrip("\n").encode()
    else:
        rows = expand_events(spec["events"], spec.get("defaults"), house)
        drop = spec.get("drop_columns", [])
        name = spec["name"].removesuffix(".gz")
        if name.endswith(".parquet"):
            _typed_for_parquet(_frame(rows, drop)).write_parquet(path)
            return path
        if name.endswith(".csv"):
            content = _frame(rows, drop).write_csv().encode()
        else:
            content = "".join(
                json.dumps({k: val for k, val in r.items() if k not in drop}) + "\n" for r in rows
            ).encode()
    if spec["name"].endswith(".gz"):
        content = gzip.compress(content)
    if "truncate" in spec:
        content = content[: spec["truncate"]]
    path.write_bytes(content)
    return path


def _typed_for_parquet(frame: pl.DataFrame) -> pl.DataFrame:
    ints = [c for c in v.INTEGER_COLUMNS if c in frame.columns]
    return frame.with_columns(pl.col(ints).cast(pl.Int64, strict=False))


def run_case(case: dict, folder: Path) -> pl.DataFrame:
    """Write the case's files and audit them; returns the findings."""
    return audit_case(case, folder).findings


def audit_case(case: dict, folder: Path) -> audit.AuditResult:
    """Write the case's files and audit them."""
    rs = load_rulesets()
    house_text = case.get("house") or (
        case.get("house_top", "") + "\n" + DEFAULT_HOUSE.read_text(encoding="utf-8"))
    house = parse_house(tomllib.loads(house_text), rs, on=date(2026, 11, 1))
    for spec in case["files"]:
        write_file(folder, spec, house)
    context = case.get("context", [])
    named = [spec["name"] for spec in case["files"] if spec["name"] not in context]
    if "profile" in case:
        (folder / "profile.toml").write_text(case["profile"], encoding="utf-8")
        export = translate(load_profile(folder / "profile.toml"),
                           [str(folder / name) for name in named],
                           [str(folder / name) for name in context])
        return audit.run(export.sources, house, rs, context=export.context, export=export)
    sources = expand([str(folder / name) for name in named])
    around = expand([str(folder / name) for name in context]) if context else []
    return audit.run(sources, house, rs, context=around)


def matches(finding: dict, wanted: dict) -> bool:
    return all(finding.get(key) == value for key, value in wanted.items())
