"""Property-based tests: simulated days of both games, damaged step by step (a field
blanked or corrupted, rows duplicated, swapped, dropped or moved to another table or
shoe, garbage lines, a file cut at any byte), laid out over one or more files (a table
split across files) in any encoding, and audited end to end through the command line.

Invariants (docs/reference: input format, findings; hand-history-v1):

- the audit exits 0 or 1, never with a traceback; 1 exactly when there is an error;
- `rows.read = rows.audited + rows.reported`, and `rows.read` is every record written
  (every non-blank line, every Parquet row) that can still be read;
- every damage the format can detect is named by a finding with its file and line;
- a round that lost a reportable row is not judged (no rule finding on it);
- on a clean day every error is an input finding, or lies in a round that lost or
  changed rows (one damaged here, or one the auditor reports as not auditable: IN014,
  IN017, IN018, IN019), or is a rule across rounds in a shoe whose history changed
  where the log cannot show it (a row dropped, cut off or moved);
- on a faulty day (the simulator's truth) every planted fault whose round (for a fault
  across rounds: whose shoe) was left alone is still found with its citation, and no
  other error appears outside damaged rounds.

Profiles: "ci" (the default run: a few dozen examples a test, no shrinking) and "fuzz"
(many more, shrunk): `pytest -m fuzz` runs the `_long` twins of the tests under it, and
AUDITOR_FUZZ=1 runs these same tests under it (so a failure of the default run, kept in
hypothesis' database in .hypothesis/, is replayed first and shrunk).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import tempfile
import traceback
from pathlib import Path

import damage as dmg
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from planted import reporting

from auditor.cli import main
from auditor.rules.catalog import REGISTRY
from auditor.simulate.writer import write_house_rules

_COMMON = {
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
# ci: no shrinking (a failing example is printed as found, its damage steps as notes, and
# kept in the database); run the same tests with AUDITOR_FUZZ=1 to replay and shrink it.
settings.register_profile("ci", max_examples=40,
                          phases=(Phase.explicit, Phase.reuse, Phase.generate), **_COMMON)
settings.register_profile("fuzz", max_examples=600, **_COMMON)

# AUDITOR_FUZZ=1: these tests under the long profile; `pytest -m fuzz`: their _long twins
CI = settings.get_profile("fuzz" if os.environ.get("AUDITOR_FUZZ") else "ci")
FUZZ = settings.get_profile("fuzz")
long_only = pytest.mark.skipif("'fuzz' not in config.getoption('markexpr')",
                               reason="the long profile: pytest -m fuzz")

# Small simulated days: several tables with two shoes or more each; the faulty days hold
# every kind of planted fault (test_faulty_days_hold_every_fault_kind).
DAYS = {
    ("baccarat", "clean"): {"rounds": 180, "tables": 2, "seed": 21, "faults": 0.0},
    ("baccarat", "faulty"): {"rounds": 260, "tables": 3, "seed": 7, "faults": 0.2},
    ("blackjack", "clean"): {"rounds": 90, "tables": 3, "seed": 21, "faults": 0.0},
    ("blackjack", "faulty"): {"rounds": 150, "tables": 4, "seed": 5, "faults": 0.3},
}
GAMES = ("baccarat", "blackjack")

# Rules that judge a round by what other rounds of its shoe (or the shoe itself)
# recorded: a row lost or changed unseen in one round may make them fire in another.
ACROSS_ROUNDS = frozenset({
    "BA101", "BA102", "BA104", "BA105", "BA603", "BA604", "BA801", "BA802", "BA803", "BA804",
    "BA901", "BA902", "BA903", "BA904",
    "BJ102", "BJ103", "BJ104",
})
# input findings that set a round aside as not auditable
SET_ASIDE = ("IN014", "IN017", "IN018", "IN019")
MAX_STEPS = 5


@functools.cache
def day(game: str, kind: str):
    """(simulation, rows as dicts) of a small simulated day, made once."""
    module = importlib.import_module(f"auditor.simulate.{game}")
    sim = module.simulate(**DAYS[(game, kind)])
    return sim, dmg.day_rows(sim.events)


def house_file(sim, game: str, folder: Path, gapless: bool) -> Path:
    extra = {"blackjack": sim.house} if game == "blackjack" else {}
    path = write_house_rules(sim.tables, folder / "house.toml", **extra)
    if gapless:  # a top-level key: before every section
        path.write_text("seq_gapless = true\n" + path.read_text())
    return path


# --- strategies ------------------------------------------------------------------------


def draw_layout(data, rows: list[dict]) -> dict[str, list[int]]:
    """The rows over files: one file, a file per table (or group of tables), slices of
    the day (each table split across files), or rows dealt at random to 2-3 files (each
    file in seq order); each file in an encoding of its own."""
    n = len(rows)
    mode = data.draw(st.sampled_from(["one", "by_table", "slices", "interleaved"]),
                     label="layout")
    if mode == "one":
        groups = [list(range(n))]
    elif mode == "by_table":
        tables = sorted({r["table_id"] for r in rows})
        count = data.draw(st.integers(1, len(tables)), label="files")
        place = {t: data.draw(st.integers(0, count - 1), label=f"file of {t}") for t in tables}
        groups = [[i for i, r in enumerate(rows) if place[r["table_id"]] == k]
                  for k in range(count)]
    elif mode == "slices":
        bounds = data.draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=2,
                                    unique=True).map(sorted), label="slice bounds")
        edges = [0, *bounds, n]
        groups = [list(range(a, b)) for a, b in zip(edges, edges[1:], strict=False)]
    else:
        count = data.draw(st.integers(2, 3), label="files")
        rnd = data.draw(st.randoms(use_true_random=False), label="dealer")
        groups = [[] for _ in range(count)]
        for i in range(n):
            groups[rnd.randrange(count)].append(i)
    groups = [g for g in groups if g]
    order = data.draw(st.permutations(range(len(groups))), label="file names")
    files = {}
    for k, group in enumerate(groups):
        encoding = data.draw(st.sampled_from(dmg.ENCODINGS), label=f"encoding {k}")
        files[f"{'abcdefgh'[order[k]]}-log.{encoding}"] = group
    return files


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n",
                           exclude_categories=("Cs",)),
    min_size=1, max_size=60,
)


def garbage_line(kind: str) -> st.SearchStrategy[bytes]:
    """A line that holds no event of the format (never blank)."""
    width = len(dmg.COLUMNS)
    row_shaped = (
        b'{"table_id":"BAC-01","event":"garbage"}' if kind == "jsonl"
        else b"BAC-01" + b"," * 6 + b"garbage" + b"," * (width - 7)
    )
    return st.one_of(
        _TEXT.map(lambda s: s.encode()),
        st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b),
        st.sampled_from([b"{}", b"[1, 2]", b'{"table_id": "BAC-01", "seq": 1', b"null",
                         b'"quoted', b"\xff\xfe\x00", row_shaped, b"x\ry", b"\x0b\x0c#"]),
    ).filter(lambda b: b.strip() != b"")


def draw_damage(data, log: dmg.Log) -> None:
    """Up to MAX_STEPS steps of damage, each to rows no earlier step used."""
    steps = data.draw(st.integers(0, MAX_STEPS), label="steps")
    for _ in range(steps):
        kind = data.draw(st.sampled_from(
            ["blank", "corrupt", "duplicate", "swap", "drop", "relabel", "garbage", "cut"]),
            label="damage")
        clean = log.clean_records()
        if kind == "garbage":
            files = log.text_files()
            if not files:
                continue
            name = data.draw(st.sampled_from(files), label="file")
            at = data.draw(st.integers(0, len(log.files[name])), label="line")
            log.garbage(name, at, data.draw(garbage_line(dmg.kind_of(name)), label="text"))
            continue
        if kind == "cut":
            files = [f for f in log.files if f not in log.cuts]
            if not files:
                continue
            name = data.draw(st.sampled_from(files), label="file")
            # from the start (a share of the file), or a few bytes off the end
            at = data.draw(st.one_of(st.integers(0, 999).map(lambda k: ("share", k)),
                                     st.integers(1, 300).map(lambda k: ("end", k))),
                           label="cut at")
            log.cut(name, at)
            continue
        if not clean:
            continue
        record = data.draw(st.sampled_from(clean), label="row")
        cells = record.cells
        if kind == "blank":
            name = data.draw(st.sampled_from(sorted(cells)), label="field")
            empty = dmg.required(cells, name) and data.draw(st.booleans(), label="as ''")
            log.blank(record, name, empty=empty)
        elif kind == "corrupt":
            options = dmg.corrupt_values(cells)
            name = data.draw(st.sampled_from(sorted(options)), label="field")
            values, rules = options[name]
            log.corrupt(record, name, data.draw(st.sampled_from(values), label="value"),
                        rules)
        elif kind == "duplicate":
            file, index = log.where(record)
            other = data.draw(st.sampled_from(sorted(log.files)), label="to file")
            if other == file:
                at = index + 1 + data.draw(st.integers(-3, 3), label="offset")
            else:
                at = data.draw(st.integers(0, len(log.files[other])), label="at")
            log.duplicate(record, other, max(at, 0))
        elif kind == "swap":
            file, index = log.where(record)
            later = [r for r in log.files[file][index + 1:]
                     if r.table == record.table and r.cells is not None][:8]
            later = [r for r in later if not r.damaged]
            if later:
                log.swap(record, data.draw(st.sampled_from(later), label="with"))
        elif kind == "drop":
            log.drop(record)
        elif kind == "relabel":
            name = data.draw(st.sampled_from(["table_id", "shoe_id"]), label="field")
            log.relabel(record, name, f"{cells[name]}X")


# --- running the audit ------------------------------------------------------------------


def run_audit(folder: Path, paths: list[Path], house: Path, by_folder: bool):
    out = folder / "out"
    logs = [str(folder / "logs")] if by_folder else [str(p) for p in paths]
    try:
        result = CliRunner().invoke(
            # a file damaged down to no row is a day without play here (without the flag,
            # exit 2: tests/test_reliability.py)
            main, ["audit", *logs, "--house", str(house), "--out", str(out), "--no-report",
                   "-q", "--allow-empty"],
            catch_exceptions=True,
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is no Exception; shrink it too
        raise AssertionError(f"the audit crashed: {_traceback(exc)}") from exc
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"the audit crashed: {_traceback(result.exception)}")
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    summary = json.loads((out / "summary.json").read_text())
    findings = pl.read_parquet(out / "findings.parquet").with_columns(
        pl.col("file").map_elements(lambda f: Path(f).name, return_dtype=pl.String))
    return result, summary, findings


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)[-12:])


def audited(game: str, kind: str, data, damaged: bool = True):
    """Draw a layout, damage and a house setting; write and audit. Returns the log,
    the findings and the summary, having checked what holds of every audit."""
    sim, rows = day(game, kind)
    log = dmg.Log(rows, draw_layout(data, rows),
                  gapless=data.draw(st.booleans(), label="seq_gapless"))
    if damaged:
        draw_damage(data, log)
    by_folder = data.draw(st.booleans(), label="LOG is the folder")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "logs").mkdir()
        _resolve_cuts(log)
        paths = log.write(folder / "logs")
        for d in log.damages:
            note(d.describe())
        house = house_file(sim, game, folder, log.gapless)
        result, summary, findings = run_audit(folder, paths, house, by_folder)
    note(str(findings.select("rule_id", "severity", "table_id", "shoe_id", "round", "file",
                             "line", "message")))
    check_every_audit(log, result, summary, findings)
    return sim, log, findings


def _resolve_cuts(log: dmg.Log) -> None:
    """Turn the drawn cut positions (a share of the file, or bytes off its end) into a
    byte, now that the files' sizes are known."""
    for name, (how, k) in list(log.cuts.items()):
        size = len(dmg.stored_bytes(name, dmg.file_bytes(name, log.files[name])))
        at = size * k // 1000 if how == "share" else size - k
        log.cuts[name] = max(0, min(at, size - 1))


# --- invariants ----------------------------------------------------------------------


def _key(finding: dict) -> tuple:
    return (finding["table_id"], finding["shoe_id"], finding["round"])


def check_every_audit(log: dmg.Log, result, summary: dict, findings: pl.DataFrame) -> None:
    rows = summary["rows"]
    assert rows["balanced"], rows
    assert rows["read"] == rows["audited"] + rows["reported"], rows
    assert rows["read"] == log.rows_read(), (
        f"rows.read {rows['read']}, but {log.rows_read()} records were written and kept")
    errors = findings.filter(pl.col("severity") == "error")
    assert result.exit_code == (1 if errors.height else 0), result.exit_code
    # every damage the format can detect is named, by file and line
    for damage in log.damages:
        wanted = damage.wanted()
        if wanted and not any(_names(findings, *w) for w in wanted):
            raise AssertionError(f"not named: {damage.describe()}; wanted one of {wanted}")
    # a round that lost a reportable row is not judged
    judged = findings.filter(~pl.col("rule_id").str.starts_with("IN")
                             & ~pl.col("rule_id").str.starts_with("HR"))
    for damage in log.damages:
        if damage.withheld is None or any(r.present != "whole" for r in damage.records):
            continue
        table, shoe, rnd = damage.withheld
        on_it = judged.filter((pl.col("table_id") == table) & (pl.col("shoe_id") == shoe)
                              & (pl.col("round") == rnd))
        assert on_it.is_empty(), (
            f"{damage.describe()}: its round {damage.withheld} was judged:\n"
            f"{on_it.select('rule_id', 'seq', 'message').to_dicts()}")


def _names(findings: pl.DataFrame, file: str, line: int | None, rules) -> bool:
    hit = findings.filter(pl.col("file") == file)
    if line is not None:
        hit = hit.filter(pl.col("line") == line)
    if rules is None:
        hit = hit.filter(pl.col("rule_id").str.starts_with("IN"))
    else:
        hit = hit.filter(pl.col("rule_id").is_in(sorted(rules)))
    return not hit.is_empty()


def unexplained_errors(log: dmg.Log, findings: pl.DataFrame,
                       planted: set[tuple] = frozenset()) -> list[dict]:
    """Errors that are not input findings and lie in no round that lost or changed rows
    (nor, for rules across rounds, in a shoe whose history changed unseen), nor are a
    planted fault (rule, table, shoe)."""
    touched = log.touched_rounds()
    unseen = log.unseen_shoes()
    aside = {_key(f) for f in findings.filter(pl.col("rule_id").is_in(SET_ASIDE))
             .iter_rows(named=True)}
    out = []
    for finding in findings.filter(pl.col("severity") == "error").iter_rows(named=True):
        rule = finding["rule_id"]
        if rule.startswith("IN") or (rule, finding["table_id"], finding["shoe_id"]) in planted:
            continue
        key = _key(finding)
        if key in touched or key in aside:
            continue
        if rule in ACROSS_ROUNDS and key[:2] in unseen:
            continue
        out.append(finding)
    return out


def _summary(rows: list[dict]) -> list[tuple]:
    return [(f["rule_id"], f["table_id"], f["shoe_id"], f["round"], f["seq"], f["message"])
            for f in rows]


def check_clean_day(log: dmg.Log, findings: pl.DataFrame) -> None:
    if not log.damages or all(not d.rounds and not d.wanted() for d in log.damages):
        assert findings.is_empty(), _summary(findings.to_dicts())
    extra = unexplained_errors(log, findings)
    assert not extra, f"errors in rounds no damage touched: {_summary(extra)}"


def check_faulty_day(sim, log: dmg.Log, findings: pl.DataFrame) -> None:
    # a right remedy (no rule id) is no fault (tests/test_simulated_audit.py judges it)
    truth = sim.truth.filter(pl.col("rule_id").is_not_null())
    planted = set(zip(truth["rule_id"], truth["table_id"], truth["shoe_id"], strict=True))
    extra = unexplained_errors(log, findings, planted)
    assert not extra, f"errors neither planted nor in damaged rounds: {_summary(extra)}"
    touched, shoes = log.touched_rounds(), log.touched_shoes()
    for fault in truth.iter_rows(named=True):
        shoe = (fault["table_id"], fault["shoe_id"])
        across = fault["rule_id"] in ACROSS_ROUNDS or fault["round"] in (None, 0)
        if (shoe in shoes) if across else ((*shoe, fault["round"]) in touched):
            continue
        hits = findings.filter(reporting(fault))
        assert not hits.is_empty(), f"planted fault not found: {fault}"
        assert hits["citation"][0] == REGISTRY.get(fault["rule_id"]).citation, fault


# --- the properties ------------------------------------------------------------------


def _clean_property(game: str, data) -> None:
    _, log, findings = audited(game, "clean", data)
    check_clean_day(log, findings)


def _faulty_property(game: str, data) -> None:
    sim, log, findings = audited(game, "faulty", data)
    check_faulty_day(sim, log, findings)


def _undamaged_property(game: str, data) -> None:
    """No damage: any layout over files and encodings audits as the one file does."""
    _, log, findings = audited(game, "clean", data, damaged=False)
    assert findings.is_empty(), _summary(findings.to_dicts())


@pytest.mark.parametrize("game", GAMES)
@CI
@given(data=st.data())
def test_damaged_clean_day(game, data):
    _clean_property(game, data)


@pytest.mark.parametrize("game", GAMES)
@CI
@given(data=st.data())
def test_damaged_faulty_day_still_finds_its_faults(game, data):
    _faulty_property(game, data)


@pytest.mark.parametrize("game", GAMES)
@settings(CI, max_examples=max(4, CI.max_examples // 4))
@given(data=st.data())
def test_clean_day_in_any_layout_has_no_findings(game, data):
    _undamaged_property(game, data)


@pytest.mark.fuzz
@long_only
@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_damaged_clean_day_long(game, data):
    _clean_property(game, data)


@pytest.mark.fuzz
@long_only
@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.data())
def test_damaged_faulty_day_long(game, data):
    _faulty_property(game, data)


@pytest.mark.fuzz
@long_only
@pytest.mark.parametrize("game", GAMES)
@settings(FUZZ, max_examples=FUZZ.max_examples // 4)
@given(data=st.data())
def test_clean_day_in_any_layout_long(game, data):
    _undamaged_property(game, data)


@pytest.mark.parametrize("game", GAMES)
def test_faulty_days_hold_every_fault_kind(game):
    """Else the faulty-day property would prove less than it says."""
    sim, _ = day(game, "faulty")
    module = importlib.import_module(f"auditor.simulate.{game}")
    assert set(sim.truth["rule_id"].drop_nulls()) == set(module.FAULT_KINDS)


# --- examples the properties found, kept as plain tests --------------------------------


def _seqs(kind: str, game: str, table: str, seqs) -> list[int]:
    """Indices of a table's rows of the day, by seq."""
    _, rows = day(game, kind)
    where = {(r["table_id"], r["seq"]): i for i, r in enumerate(rows)}
    return [where[(table, s)] for s in seqs]


def _two_gaps():
    """seq_gapless and two gaps in one table (the audit crashed: a polars panic in
    sequence.seq_gaps, formatting the IN019 message)."""
    def damage(log):
        records = log.files["log.jsonl"]
        log.drop(records[2])
        log.drop(records[5])
    return "clean", {"log.jsonl": _seqs("clean", "baccarat", "BAC-01", range(1, 13))}, True, damage


def _parquet_backwards_twice():
    """A Parquet file where a table's seq goes backwards twice, another table's row
    between (the audit crashed: a polars panic in sequence.seq_problems, formatting the
    IN011 message; the same rows as JSON Lines or CSV audit)."""
    def damage(log):
        records = log.files["log.parquet"]
        log.swap(records[0], records[3])
    rows = (_seqs("clean", "blackjack", "BJ-01", [455]) + _seqs("clean", "blackjack", "BJ-03", [342])
            + _seqs("clean", "blackjack", "BJ-01", [456, 457]))
    return "clean", {"log.parquet": rows}, False, damage


def _jsonl_two_bad_values():
    """A JSON Lines file of 400 rows, two of them with a `ts` that is no timestamp (the
    audit crashed: a polars panic in parse._unparsed, formatting the IN009 message; the
    reader's frame comes in chunks)."""
    def damage(log):
        for record in log.files["log.jsonl"][394:396]:
            log.corrupt(record, "ts", "yesterday", frozenset({"IN009"}))
    return "clean", {"log.jsonl": list(range(400))}, False, damage


def _stray_quote():
    """A CSV line with an unmatched quote (every following line was read as part of one
    bad record: named at the file's last line, the rows after it lost from rows.read)."""
    def damage(log):
        log.garbage("log.csv", 3, b'"quoted')
    return "clean", {"log.csv": _seqs("clean", "baccarat", "BAC-02", range(1, 13))}, False, damage


def _empty_shoe_id():
    """`"shoe_id": ""` on a card row (JSON Lines): filed under a shoe "", while the round it
    left was judged on partial data (false errors in it and in the next round); the same
    row without the field is reported (IN004) and its round set aside."""
    def damage(log):
        records = log.files["log.jsonl"]
        card = next(r for r in records if r.cells["event"] == "card" and r.cells["round"] == 3)
        log.blank(card, "shoe_id", empty=True)
    return "clean", {"log.jsonl": _seqs("clean", "baccarat", "BAC-01", range(1, 90))}, False, damage


def _empty_shoe_id_on_shuffle():
    """`"shoe_id": ""` on a shuffle row (JSON Lines): no finding names its line."""
    def damage(log):
        log.blank(log.files["log.jsonl"][0], "shoe_id", empty=True)
    return "clean", {"log.jsonl": _seqs("clean", "baccarat", "BAC-01", range(1, 90))}, False, damage


def _next_shoe_set_aside():
    """A planted BA105 (no last hand after the cover-card round) in an intact shoe, not
    found when the next shoe's shoe-level rows are set aside (one bad burn card) and the
    log ends in that shoe's first round."""
    sim, rows = day("baccarat", "faulty")
    fault = sim.truth.filter((pl.col("rule_id") == "BA105") & pl.col("seq").is_null()).row(
        0, named=True)
    table = [i for i, r in enumerate(rows) if r["table_id"] == fault["table_id"]]
    after = [i for i in table if rows[i]["shoe_id"] > fault["shoe_id"]]
    upto = next(k for k, i in enumerate(table) if i == after[0]) + 20  # into its round 1
    def damage(log):
        burns = [r for r in log.files["log.jsonl"]
                 if r.cells["shoe_id"] != fault["shoe_id"] and r.cells["event"] == "burn"]
        log.corrupt(burns[-1], "card", "XX", frozenset({"IN006"}))
    return "faulty", {"log.jsonl": table[:upto]}, False, damage


def _misplaced_copy():
    """A copy of a row (BJ-04 seq 348, round 8) written early in another file: the seq
    going backwards was blamed on the next, intact row of that table (seq 36), whose
    round 2 was set aside, so the fault planted there (BJ101) was not reported."""
    _, rows = day("blackjack", "faulty")
    def damage(log):
        copied = next(r for r in log.files["b-log.jsonl"]
                      if r.table == "BJ-04" and r.cells["seq"] == 348)
        log.duplicate(copied, "a-log.jsonl", 176)
    files = {"a-log.jsonl": list(range(544)), "b-log.jsonl": list(range(544, len(rows)))}
    return "faulty", files, False, damage


def _void_without_reason():
    """A `void` row without its `reason`, which hand-history-v1 requires on `void` (Columns:
    `reason` required on `void`; Events: `void` carries `reason`): no finding named it."""
    _, rows = day("baccarat", "faulty")
    def damage(log):
        void = next(r for r in log.files["log.jsonl"] if r.cells["event"] == "void")
        log.blank(void, "reason")
    return "faulty", {"log.jsonl": list(range(len(rows)))}, False, damage


FOUND = {
    "gapless seq, two gaps": _two_gaps,
    "Parquet, seq backwards twice": _parquet_backwards_twice,
    "JSON Lines, two unparseable values": _jsonl_two_bad_values,
    "CSV, a stray quote": _stray_quote,
    "an empty shoe_id": _empty_shoe_id,
    "an empty shoe_id on a shuffle": _empty_shoe_id_on_shuffle,
    "the next shoe set aside": _next_shoe_set_aside,
    "a row copied out of place": _misplaced_copy,
    "a void without its reason": _void_without_reason,
}
_GAME_OF = {"Parquet, seq backwards twice": "blackjack", "a row copied out of place": "blackjack"}


@pytest.mark.parametrize("case", FOUND)
def test_examples_found_by_the_properties(case, tmp_path):
    game = _GAME_OF.get(case, "baccarat")
    kind, files, gapless, damage = FOUND[case]()
    sim, rows = day(game, kind)
    log = dmg.Log(rows, files, gapless=gapless)
    damage(log)
    (tmp_path / "logs").mkdir()
    paths = log.write(tmp_path / "logs")
    house = house_file(sim, game, tmp_path, gapless)
    result, summary, findings = run_audit(tmp_path, paths, house, by_folder=False)
    check_every_audit(log, result, summary, findings)
    if kind == "clean":
        check_clean_day(log, findings)
    else:
        check_faulty_day(sim, log, findings)
