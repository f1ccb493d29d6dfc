"""Dispositions: what reviewers decide each finding is, kept whole in the store and carried
to every later run that finds the finding again; `auditor history` counting them and the
report showing them. Each test on SQLite and on a throwaway PostgreSQL server (postgres.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import polars as pl
import pytest
import sqlalchemy as sa
from casefiles import DEFAULT_HOUSE
from click.testing import CliRunner
from postgres import postgres_server  # noqa: F401 - the session's server, for store_url
from test_store import night

from auditor import report
from auditor.cli import main
from auditor.report import model
from auditor.rulesets import load_rulesets
from auditor.simulate import baccarat as sim_baccarat
from auditor.simulate.writer import write_events, write_house_rules
from auditor.store import TALLIED, StoreError, carried, engine, record, schema
from auditor.store import dispositions as dsp


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A new, empty store: a SQLite file, or a database of its own on the PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'audits.db'}"
    return request.getfixturevalue("postgres_server").new_database()


@pytest.fixture(scope="module")
def faulty_day(tmp_path_factory) -> tuple[Path, Path]:
    """A small simulated baccarat day with planted faults: its log folder and house rules."""
    root = tmp_path_factory.mktemp("faulty-day")
    sim = sim_baccarat.simulate(rounds=100, tables=2, seed=11, faults=0.2)
    write_events(sim.events, root / "logs" / "baccarat.jsonl", "jsonl")
    return root / "logs", write_house_rules(sim.tables, root / "house.toml")


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _audit(out: Path, url: str | None, logs: Path, house: Path | None = None) -> dict:
    args = ["audit", str(logs), "--house", str(house or DEFAULT_HOUSE), "--out", str(out),
            "-q", "--fail-on", "never", "--no-report"]
    args += ["--store", url] if url else []
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def _ids(url: str, run_id: str) -> list[str]:
    """The run's finding ids in the order the store lists them (by table, round, seq)."""
    store = engine.connect(url)
    with store.begin() as conn:
        query = (
            sa.select(schema.findings.c.finding_id)
            .where(schema.findings.c.run_id == run_id)
            .order_by(schema.findings.c.table_id, schema.findings.c.seq,
                      schema.findings.c.finding_id)
        )
        found = list(conn.execute(query).scalars())
    store.close()
    return found


def _decide(url: str, *args, **kw) -> int:
    """dispositions.record in a transaction of its own."""
    store = engine.connect(url)
    try:
        with store.begin() as conn:
            return dsp.record(conn, *args, **kw)
    finally:
        store.close()


def _read(url: str, how, *args):
    store = engine.connect(url, must_exist=True)
    try:
        with store.begin() as conn:
            return how(conn, *args)
    finally:
        store.close()


def _all_rows(url: str) -> list[dict]:
    return _read(url, lambda c: [dict(r) for r in c.execute(
        sa.select(schema.dispositions).order_by(schema.dispositions.c.disposition_id)
    ).mappings()])


def _counts(**nonzero: int) -> dict[str, int]:
    return {**dict.fromkeys(TALLIED, 0), **nonzero}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- the schema -----------------------------------------------------------------------


def test_a_version_1_store_is_upgraded_in_place(store_url, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:  # the auditor before dispositions made the store
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        patch.setattr(dsp, "latest", lambda _conn, _ids: [])  # (it read none)
        first = _audit(tmp_path / "a", store_url, night(tmp_path / "n1.jsonl", {1, 2}))
    raw = sa.create_engine(store_url)
    with raw.connect() as conn:
        assert schema.version(conn) == 1
        assert not sa.inspect(conn).has_table("dispositions")
    # this auditor opens it: upgraded in place, the run and its findings kept
    record.open_for_audit(store_url).store.close()
    with raw.connect() as conn:
        assert schema.version(conn) == schema.latest() == 5
        versions = conn.execute(sa.text("SELECT version FROM schema_version ORDER BY 1"))
        assert list(versions.scalars()) == [1, 2, 3, 4, 5]
        columns = {c["name"] for c in sa.inspect(conn).get_columns("dispositions")}
        indexed = {tuple(i["column_names"]) for i in sa.inspect(conn).get_indexes("dispositions")}
        runs = conn.execute(sa.select(schema.runs.c.run_id)).scalars().all()
    raw.dispose()
    assert columns == {"disposition_id", "finding_id", "state", "note", "reviewer",
                       "decided_at", "run_id", "status", "approved_by", "proposal_id"}
    assert ("finding_id", "disposition_id") in indexed
    assert runs == [first["run_id"]]
    ids = _ids(store_url, first["run_id"])
    assert _decide(store_url, ids, "confirmed", "", "ann") == 2


def test_recording_upgrades_a_version_1_store_itself(store_url, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        patch.setattr(dsp, "latest", lambda _conn, _ids: [])  # (it read none)
        first = _audit(tmp_path / "a", store_url, night(tmp_path / "n1.jsonl", {1}))
    [finding] = _ids(store_url, first["run_id"])
    assert _decide(store_url, [finding], "explained", "late pay entered", "ann") == 1
    assert [r["state"] for r in _all_rows(store_url)] == ["explained"]


# --- append-only, latest, refused -------------------------------------------------------


def test_every_disposition_is_kept_and_the_last_one_stands(store_url, tmp_path):
    run = _audit(tmp_path / "a", store_url, night(tmp_path / "n.jsonl", {1, 2}))
    first, second = _ids(store_url, run["run_id"])
    monday = datetime(2026, 11, 2, 9, 30)  # naive: taken as UTC
    assert _decide(store_url, [first], "confirmed", "short pay", "ann", at=monday,
                   run_id=run["run_id"]) == 1
    eastern = timezone(timedelta(hours=-5))
    assert _decide(store_url, [first, first], "corrected", "patron paid $5", "bob",
                   at=datetime(2026, 11, 2, 8, 0, tzinfo=eastern)) == 1  # each id once
    assert _decide(store_url, [first], "open", "", "  carol  ") == 1
    kept = _read(store_url, dsp.history, first)
    assert [(d["state"], d["reviewer"], d["note"]) for d in kept] == [
        ("confirmed", "ann", "short pay"),
        ("corrected", "bob", "patron paid $5"),
        ("open", "carol", ""),
    ]
    assert [d["decided_at"] for d in kept[:2]] == [monday, datetime(2026, 11, 2, 13, 0)]
    assert kept[2]["decided_at"] > monday  # now
    assert kept[0]["run_id"] == run["run_id"] and kept[1]["run_id"] is None
    ids = [d["disposition_id"] for d in kept]
    assert ids == sorted(ids) and len(set(ids)) == 3

    assert _decide(store_url, [second], "not_an_error", "house practice", "bob") == 1
    latest = _read(store_url, dsp.latest, None)
    assert {d["finding_id"]: (d["state"], d["reviewer"]) for d in latest} == {
        first: ("open", "carol"),
        second: ("not_an_error", "bob"),
    }
    assert set(latest[0]) == {"finding_id", "state", "note", "reviewer", "decided_at", "run_id",
                              "status", "approved_by", "proposal_id"}
    assert [d["state"] for d in _read(store_url, dsp.latest, [second])] == ["not_an_error"]
    assert _read(store_url, dsp.latest, []) == []
    assert _read(store_url, dsp.history, "0" * 32) == []
    # nothing was ever rewritten: the first row reads as it was written
    assert _all_rows(store_url)[0] == {**kept[0]}


def test_a_bad_state_an_unknown_finding_or_run_is_refused(store_url, tmp_path):
    run = _audit(tmp_path / "a", store_url, night(tmp_path / "n.jsonl", {1}))
    [finding] = _ids(store_url, run["run_id"])
    unknown = "f" * 32
    for args, says in [
        (([finding], "fixed", "", "ann"), "'fixed' is not a disposition"),
        (([finding, unknown], "confirmed", "", "ann"), f"found the finding '{unknown}'"),
        (([finding], "confirmed", "", " "), "names its reviewer"),
        (([finding], "confirmed", "", "ann", "20990101T000000Z-0"), "there is no run"),
    ]:
        with pytest.raises(StoreError, match=re.escape(says)):
            _decide(store_url, *args)
    many = [f"{n:032x}" for n in range(5)]
    with pytest.raises(StoreError, match="findings '0{32}', '0{31}1', '0{31}2' and 2 more"):
        _decide(store_url, many, "confirmed", "", "ann")
    assert _all_rows(store_url) == []  # none of them wrote a row
    assert _decide(store_url, [], "confirmed", "", "ann") == 0
    # the database's own constraint stands behind the check
    store = engine.connect(store_url)
    with pytest.raises(StoreError), store.begin() as conn:
        conn.execute(schema.dispositions.insert().values(
            finding_id=finding, state="fixed", reviewer="x", decided_at=datetime(2026, 1, 1)))
    store.close()


def _decide_slowly(url: str, ids: list[str], reviewer: str, barrier: threading.Barrier,
                   done: list) -> None:
    store = engine.connect(url)
    try:
        barrier.wait(timeout=60)
        with store.begin() as conn:
            dsp.record(conn, ids, "confirmed" if reviewer == "ann" else "explained",
                       f"by {reviewer}", reviewer)
            time.sleep(0.3)  # both transactions open at once (SQLite's second one waits)
        done.append(reviewer)
    finally:
        store.close()


def test_two_reviewers_at_once_are_both_kept(store_url, tmp_path):
    run = _audit(tmp_path / "a", store_url, night(tmp_path / "n.jsonl", {1, 2}))
    ids = _ids(store_url, run["run_id"])
    barrier, done = threading.Barrier(2), []
    threads = [
        threading.Thread(target=_decide_slowly, args=(store_url, ids, name, barrier, done))
        for name in ("ann", "bob")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(done) == ["ann", "bob"]
    rows = _all_rows(store_url)
    assert sorted((r["finding_id"], r["reviewer"]) for r in rows) == sorted(
        (i, name) for i in ids for name in ("ann", "bob")
    )
    # the later row is each finding's disposition
    last = {r["finding_id"]: r["reviewer"] for r in rows}  # rows by disposition_id
    assert {d["finding_id"]: d["reviewer"] for d in _read(store_url, dsp.latest, ids)} == last


# --- counts, export, history --------------------------------------------------------------


def _two_nights(store_url: str, tmp_path: Path) -> list[dict]:
    """A night audited twice (the same two findings) and the next night (two more)."""
    log = night(tmp_path / "one.jsonl", {1, 2})
    return [
        _audit(tmp_path / "one", store_url, log),
        _audit(tmp_path / "one-again", store_url, log),
        _audit(tmp_path / "two", store_url, night(tmp_path / "two.jsonl", {1, 2}, days_later=1)),
    ]


def test_counts_per_run(store_url, tmp_path):
    runs = [r["run_id"] for r in _two_nights(store_url, tmp_path)]
    first, second = _ids(store_url, runs[0])
    _decide(store_url, [first], "confirmed", "", "ann")
    _decide(store_url, [first], "corrected", "paid", "ann")
    _decide(store_url, [second], "not_an_error", "", "bob")
    one = _counts(corrected=1, not_an_error=1)
    assert _read(store_url, dsp.counts, runs[0]) == one
    assert _read(store_url, dsp.counts, runs[1]) == one  # found again: the same findings
    assert _read(store_url, dsp.counts, runs[2]) == _counts(open=2)
    assert _read(store_url, dsp.counts, "no-such-run") == _counts()
    by_run = _read(store_url, dsp.counts_by_run, runs)
    assert by_run == {runs[0]: one, runs[1]: one, runs[2]: _counts(open=2)}


def test_export_rows_name_the_finding_and_are_spreadsheet_safe(store_url, tmp_path):
    runs = _two_nights(store_url, tmp_path)
    none = _read(store_url, dsp.export_rows)  # no disposition yet: the columns, no row
    assert none.columns == list(dsp.EXPORT_COLUMNS) and none.height == 0
    first, second = _ids(store_url, runs[0]["run_id"])
    _decide(store_url, [first], "confirmed", '=HYPERLINK("http://x","y")', "ann",
            run_id=runs[1]["run_id"])
    _decide(store_url, [second], "explained", "system fault", "@bob")
    frame = _read(store_url, dsp.export_rows)
    assert frame.columns == list(dsp.EXPORT_COLUMNS) and frame.height == 2
    assert dict(frame.schema) == dsp.EXPORT_COLUMNS
    rows = frame.to_dicts()
    assert rows[0]["note"] == '\'=HYPERLINK("http://x","y")' and rows[1]["reviewer"] == "'@bob"
    assert rows[0]["run_id"] == runs[1]["run_id"] and rows[1]["run_id"] is None
    assert [(r["rule_id"], r["table_id"], r["round"]) for r in rows] == [
        ("BA501", "BAC-01", 1),
        ("BA502", "BAC-01", 2),
    ]
    assert all(r["seq"] > 0 and r["shoe_id"] == "BAC-01-1" and r["message"] for r in rows)
    assert rows[0]["disposition_id"] < rows[1]["disposition_id"]
    frame.write_csv(tmp_path / "dispositions.csv")  # every column writes as CSV
    assert pl.read_csv(tmp_path / "dispositions.csv").height == 2


def test_history_counts_each_run_by_disposition_in_one_query(store_url, tmp_path):
    runs = [r["run_id"] for r in _two_nights(store_url, tmp_path)]
    text = _cli("history", "--store", store_url).output
    assert "No finding of these runs has a disposition yet" in text
    first, _ = _ids(store_url, runs[0])
    _decide(store_url, [first], "explained", "", "ann")

    statements: list[str] = []

    def seen(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", seen)
    try:
        result = _cli("history", "--store", store_url, "--format", "json")
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", seen)
    assert result.exit_code == 0, result.output
    assert len([s for s in statements if "dispositions" in s]) == 1
    doc = json.loads(result.output)
    assert [r["dispositions"] for r in doc["runs"]] == [
        _counts(open=1, explained=1), _counts(open=1, explained=1), _counts(open=2)
    ]
    text = _cli("history", "--store", store_url).output
    assert "Findings by disposition" in text
    assert re.search(rf"{runs[0]}\s+1\s+0\s+1\s+0\s+0", text), text
    assert re.search(rf"{runs[2]}\s+2\s+0\s+0\s+0\s+0", text), text
    since = (datetime.now().date() + timedelta(days=2)).isoformat()
    later = json.loads(_cli("history", "--store", store_url, "--since", since,
                            "--format", "json").output)
    assert later["runs"] == []


# --- carried to a later run, and into the report ----------------------------------------


def test_a_finding_found_again_keeps_its_last_disposition_in_the_report(
    store_url, faulty_day, tmp_path
):
    logs, house = faulty_day
    first = _audit(tmp_path / "first", store_url, logs, house)
    ids = _ids(store_url, first["run_id"])
    assert len(ids) >= 4
    confirmed, changed = ids[0], ids[1]
    _decide(store_url, [confirmed], "confirmed", "<script>alert(1)</script> dealer paid short",
            "ann <admin>", run_id=first["run_id"])
    _decide(store_url, [changed], "explained", "", "bob")
    _decide(store_url, [changed], "corrected", "refunded the patron", "bob")
    # the first audit read no disposition (none was set yet): every finding open
    carried_first = json.loads((tmp_path / "first" / carried.FILE).read_text())
    assert carried_first["counts"] == _counts(open=len(ids))

    again = _audit(tmp_path / "again", store_url, logs, house)
    assert sorted(_ids(store_url, again["run_id"])) == sorted(ids)  # the same findings
    expected = _counts(open=len(ids) - 2, confirmed=1, corrected=1)
    assert _read(store_url, dsp.counts, again["run_id"]) == expected
    doc = json.loads((tmp_path / "again" / carried.FILE).read_text())
    assert doc["run_id"] == again["run_id"] and doc["counts"] == expected
    assert doc["dispositions"][changed]["note"] == "refunded the patron"

    # the report: each exception with its disposition, the counts on the cover
    context = model.build(tmp_path / "again", load_rulesets(), None)
    views = {
        f["finding_id"]: f["disposition"]
        for g in context["exceptions"] for sh in g.shoes
        for f in [*sh.shoe_level, *(f for r in sh.rounds for f in r.findings)]
    }
    assert views[confirmed]["state"] == "confirmed" and views[confirmed]["reviewer"] == "ann <admin>"
    assert views[changed]["state"] == "corrected"
    assert all(v["state"] == "open" and v["reviewer"] is None
               for k, v in views.items() if k not in (confirmed, changed))
    html = report.html(tmp_path / "again")
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "ann &lt;admin&gt;" in html
    text = _text(html)
    cover = text[: text.index("Contents")]
    counts = f"{len(ids) - 2} open · 1 confirmed · 0 explained · 0 not an error · 1 corrected"
    assert "Dispositions, as reviewers last recorded them in the findings store" in cover
    assert counts in cover
    assert re.search(r"Disposition: corrected , by bob on \S+ \S+ UTC: refunded the patron", text)
    assert f"(set from run {first['run_id']})" in text
    assert text.count("(no reviewer has decided yet)") == len(views) - 2
    assert "dispositions.json" in text  # among the files the report was rendered from
    # decided after the audit: the report shows it once re-rendered with the store
    _decide(store_url, [ids[2]], "not_an_error", "house practice", "carol")
    assert "carol" not in report.html(tmp_path / "again")
    now = f"{len(ids) - 3} open · 1 confirmed · 0 explained · 1 not an error · 1 corrected"
    if store_url.startswith("sqlite") and shutil.which("pdftotext"):
        # `auditor report --store` into the PDF (printed once: the PDF does not depend on
        # the store's kind)
        result = _cli("report", str(tmp_path / "again"), "--store", store_url)
        assert result.exit_code == 0, result.output
        pdf = subprocess.run(["pdftotext", str(tmp_path / "again" / "report.pdf"), "-"],
                             capture_output=True, text=True, check=True).stdout
        flat = re.sub(r"\s+", " ", pdf)
        assert now in flat and "Disposition: confirmed, by ann <admin>" in flat
        assert "Disposition: not an error, by carol" in flat
    else:
        record.carry_now(store_url, tmp_path / "again")
        assert now in _text(report.html(tmp_path / "again"))

    # the same folder audited without a store: no dispositions, a report without them
    _audit(tmp_path / "again", None, logs, house)
    assert not (tmp_path / "again" / carried.FILE).exists()
    plain = report.html(tmp_path / "again")
    assert "Disposition" not in plain and "dispositions.json" not in plain
    plain_context = model.build(tmp_path / "again", load_rulesets(), None)
    assert plain_context["dispositions"] is None
    refused = CliRunner().invoke(main, ["report", str(tmp_path / "again"), "--store", store_url])
    assert refused.exit_code == 2 and "was not audited with --store" in refused.output


def test_a_disposition_time_is_kept_in_utc(store_url, tmp_path):
    run = _audit(tmp_path / "a", store_url, night(tmp_path / "n.jsonl", {1}))
    [finding] = _ids(store_url, run["run_id"])
    before = datetime.now(UTC).replace(tzinfo=None)
    _decide(store_url, [finding], "confirmed", "", "ann")
    [row] = _all_rows(store_url)
    assert before - timedelta(seconds=1) <= row["decided_at"] <= before + timedelta(minutes=1)
