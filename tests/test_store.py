"""The findings store: `auditor audit --store`, `auditor history` and the report's comparison
with the previous run, each on SQLite and on a throwaway PostgreSQL server (postgres.py)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
import sqlalchemy as sa
from casefiles import DEFAULT_HOUSE, expand_events
from click.testing import CliRunner
from postgres import postgres_server  # noqa: F401 - the session's server, for store_url

from auditor import report
from auditor.cli import main
from auditor.findings import FINDING_SCHEMA
from auditor.store import StoreError, compare, ids, record, schema
from auditor.store import write as store_write

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
# a shoe and two rounds by the book; a night's log underpays the pays of some rounds
ROUNDS = """
{"macro": "shoe", "burn": "3S", "curator": 1}
{"macro": "round", "player": "9S KD", "banker": "7H QC", "wagers": [[1, "player", 25]]}
{"macro": "round", "player": "5S KD", "banker": "9H 9C", "wagers": [[1, "banker", 25], [2, "tie", 5]], "offers": [[2, true]]}
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A new, empty store: a SQLite file, or a database of its own on the PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'audits.db'}"
    return request.getfixturevalue("postgres_server").new_database()


def night(
    path: Path, underpaid: set[int], table: str = "BAC-01", dealer: str = "D-7", days_later: int = 0
) -> Path:
    """A log of ROUNDS on `table` dealt by `dealer`, whose pays in the rounds `underpaid`
    are $5 short (BA501, BA502); `days_later` moves it to another night."""
    # a night of its own has a shoe of its own (a shuffle starts a new shoe id)
    rows = expand_events(
        ROUNDS, {"table_id": table, "shoe_id": f"{table}-{days_later + 1}", "dealer_id": dealer}
    )
    for row in rows:
        if row["event"] == "pay" and row["round"] in underpaid:
            row["amount"] = f"{float(row['amount']) - 5:.2f}"
        if days_later:
            ts = row["ts"][:19]
            moved = date.fromisoformat(ts[:10]) + timedelta(days=days_later)
            row["ts"] = f"{moved.isoformat()}{ts[10:]}-05:00"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _audit(
    out: Path,
    url: str | None,
    *logs: Path,
    report_too: bool = False,
    context: Path | None = None,
    house: Path = DEFAULT_HOUSE,
):
    args = [
        "audit",
        *map(str, logs),
        "--house",
        str(house),
        "--out",
        str(out),
        "-q",
        "--fail-on",
        "never",
    ]
    args += [] if report_too else ["--no-report"]
    args += ["--store", url] if url else []
    args += ["--context", str(context)] if context else []
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def _rows(url: str, table: str) -> list[dict]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [
                dict(r) for r in conn.execute(sa.select(schema.metadata.tables[table])).mappings()
            ]
    finally:
        engine.dispose()


def _comparison(out: Path) -> dict:
    return json.loads((out / compare.FILE).read_text())


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    """The faulty and damaged sample days audited (no store), each in its folder."""
    root = tmp_path_factory.mktemp("samples")
    outs = {}
    for name in ("faulty", "damaged"):
        outs[name] = root / name
        _audit(outs[name], None, SAMPLES / name, house=SAMPLES / "house.toml")
    return outs


def _store_folder(out: Path, url: str, tmp_path: Path) -> tuple[Path, str]:
    """An audit's folder (a copy) written to the store as `auditor audit --store` does."""
    copy = tmp_path / f"{out.name}-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(out, copy)
    summary = json.loads((copy / "summary.json").read_text())
    recorder = record.open_for_audit(url)
    recorder.prepare(summary, pl.read_parquet(copy / "findings.parquet"), copy)
    (copy / "summary.json").write_text(json.dumps(summary))
    recorder.land()
    return copy, recorder.run_id


# --- the schema ---------------------------------------------------------------------


def test_a_new_store_is_created_at_the_latest_version_with_every_findings_column(store_url):
    record.open_for_audit(store_url).store.close()
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        assert schema.version(conn) == schema.latest()
        tables = set(sa.inspect(conn).get_table_names())
        stored = {c["name"] for c in sa.inspect(conn).get_columns("findings")}
    engine.dispose()
    assert {"schema_version", "runs", "inputs", "run_tables", "run_dealers", "findings"} <= tables
    # every column the findings files have, dealer_id among them, has its place
    assert set(FINDING_SCHEMA) | {"dealer_id", "run_id", "finding_id", "file_sha256"} <= stored
    assert set(schema.FINDING_COLUMNS) >= set(FINDING_SCHEMA)


def test_an_older_store_is_upgraded_and_a_newer_one_refused(store_url, tmp_path, monkeypatch):
    first = _audit(tmp_path / "a", store_url, night(tmp_path / "n1.jsonl", {1}))

    def add_reviewer(conn):
        conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN reviewed_by TEXT")

    later = [*schema.MIGRATIONS, (schema.latest() + 1, "runs.reviewed_by", add_reviewer)]
    monkeypatch.setattr(schema, "MIGRATIONS", later)
    _audit(tmp_path / "b", store_url, night(tmp_path / "n2.jsonl", {2}))
    runs = _rows(store_url, "runs")
    assert [r["run_id"] for r in runs][0] == first["run_id"] and len(runs) == 2
    engine = sa.create_engine(store_url)
    with engine.connect() as conn:
        assert "reviewed_by" in {c["name"] for c in sa.inspect(conn).get_columns("runs")}
        versions = conn.execute(sa.text("SELECT version FROM schema_version ORDER BY 1"))
        assert list(versions.scalars()) == list(range(1, schema.latest() + 1))  # (patched)
    engine.dispose()

    monkeypatch.undo()  # this auditor again, on the store a newer one upgraded
    result = _cli(
        "audit",
        str(tmp_path / "n1.jsonl"),
        "--house",
        str(DEFAULT_HOUSE),
        "--out",
        str(tmp_path / "c"),
        "--store",
        store_url,
    )
    assert result.exit_code == 2
    newer = f"schema is version {schema.latest() + 1}, newer than this auditor's ({schema.latest()})"
    assert newer in result.output
    assert not (tmp_path / "c").exists()  # refused before the audit's work
    assert _cli("history", "--store", store_url).exit_code == 2


# --- a run --------------------------------------------------------------------------


def test_a_run_lands_with_its_inputs_tables_and_findings(store_url, samples, tmp_path):
    out, run_id = _store_folder(samples["faulty"], store_url, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run_id"] == run_id
    [run] = _rows(store_url, "runs")
    assert run["run_id"] == run_id and run["out_dir"] == str(out.resolve())
    assert run["house_rules_sha256"] == summary["house_rules"]["sha256"]
    assert run["started_at"] <= run["finished_at"]
    for key in ("read", "audited", "reported"):
        assert run[f"rows_{key}"] == summary["rows"][key]
        assert run[f"rounds_{key}"] == summary["rounds"][key]
    assert run["findings"] == summary["findings"]["total"] > 50
    assert run["errors"] + run["warnings"] == run["findings"]
    assert run["underpaid"] == summary["money"]["underpaid"]

    stored_inputs = sorted(_rows(store_url, "inputs"), key=lambda r: r["position"])
    assert [(i["role"], i["file"], i["sha256"], i["rows"]) for i in stored_inputs] == [
        ("audited", f["path"], f["sha256"], f["rows"]) for f in summary["inputs"]
    ]
    tables = _rows(store_url, "run_tables")
    assert sorted(t["table_id"] for t in tables) == [t["table_id"] for t in summary["tables"]]
    assert sum(t["rounds_audited"] for t in tables) == summary["rounds"]["audited"]
    named = [d for d in summary.get("dealers", []) if d["dealer_id"] is not None]
    dealers = _rows(store_url, "run_dealers")
    assert sorted((d["dealer_id"], d["rounds_dealt"]) for d in dealers) == sorted(
        (d["dealer_id"], d["rounds_dealt"]) for d in named
    )

    written = pl.read_parquet(out / "findings.parquet")
    stored = pl.DataFrame(_rows(store_url, "findings"), infer_schema_length=None)
    assert stored.height == written.height == stored["finding_id"].n_unique()
    key = ["table_id", "shoe_id", "round", "seq", "rule_id", "file", "line", "field"]
    columns = [c for c in written.columns]  # every column as written, dealer_id where present
    left = written.select(columns).sort(key, nulls_last=True)
    right = stored.select(columns).cast(dict(written.schema)).sort(key, nulls_last=True)
    assert left.equals(right)
    sha = {f["path"]: f["sha256"] for f in summary["inputs"]}
    assert all(sha[r["file"]] == r["file_sha256"] for r in _rows(store_url, "findings"))


def test_auditing_a_log_again_adds_a_run_not_new_findings(store_url, tmp_path):
    log = night(tmp_path / "night.jsonl", {1, 2})
    first = _audit(tmp_path / "first", store_url, log)
    assert _comparison(tmp_path / "first")["previous_run"] is None
    second = _audit(tmp_path / "second", store_url, log)
    runs = _rows(store_url, "runs")
    assert {r["run_id"] for r in runs} == {first["run_id"], second["run_id"]}
    found = _rows(store_url, "findings")
    assert len(found) == 4 and len({f["finding_id"] for f in found}) == 2
    comparison = _comparison(tmp_path / "second")
    assert comparison["previous_run"]["run_id"] == first["run_id"]
    assert comparison["counts"] == {
        "findings": 2,
        "previous_findings": 2,
        "new": 0,
        "still_present": 2,
        "no_longer_present": 0,
        "not_audited_again": 0,
    }
    # each finding counted once, in the two runs that found it
    by_rule = json.loads(
        _cli("history", "--store", store_url, "--by", "rule", "--format", "json").output
    )
    assert [
        (r["rule_id"], r["runs"], r["of_runs"], r["findings"]) for r in by_rule["recurring"]
    ] == [
        ("BA501", 2, 2, 1),
        ("BA502", 2, 2, 1),
    ]


# --- finding_id ------------------------------------------------------------------------


def test_finding_ids_are_unique_in_a_run_and_the_same_in_every_run(samples, tmp_path):
    # the damaged log again, from another path: input findings keep their ids (the file's
    # SHA-256, not its path); the faulty days again into another folder
    moved = tmp_path / "elsewhere"
    shutil.copytree(SAMPLES / "damaged", moved)
    again = {}
    for name, logs in (("faulty", SAMPLES / "faulty"), ("damaged", moved)):
        again[name] = tmp_path / name
        _audit(again[name], None, logs, house=SAMPLES / "house.toml")
    everything = []
    for name in ("faulty", "damaged"):
        runs = []
        for out in (samples[name], again[name]):
            summary = json.loads((out / "summary.json").read_text())
            runs.append(ids.finding_ids(pl.read_parquet(out / "findings.parquet"), summary))
        assert len(runs[0]) == len(set(runs[0])) > 10, name
        assert runs[0] == runs[1], name
        assert all(len(i) == 32 and int(i, 16) >= 0 for i in runs[0])
        everything += runs[0]
    assert len(everything) == len(set(everything)) > 100


def _finding(**values) -> dict:
    base = {c: None for c in FINDING_SCHEMA}
    return {
        **base,
        "table_id": "BAC-01",
        "shoe_id": "S1",
        "round": 3,
        "seq": 40,
        "rule_id": "BA501",
        "severity": "error",
        **values,
    }


def test_findings_on_one_event_get_ids_of_their_own():
    summary = {
        "facility": "F",
        "inputs": [{"path": "/a/log.jsonl", "sha256": "ab" * 32}],
        "context": [],
    }
    frame = pl.DataFrame(
        [
            _finding(observed="paid $20"),
            _finding(observed="paid $15"),
            _finding(observed="paid $15"),  # the same again: still an id of its own
            _finding(rule_id="IN005", line=9, field="amount", file="/a/log.jsonl"),
            _finding(rule_id="IN005", line=9, field="seat", file="/a/log.jsonl"),
        ],
        schema=FINDING_SCHEMA,
    )
    found = ids.finding_ids(frame, summary)
    assert len(set(found)) == len(found)
    # an input finding's id follows its file's bytes, not its path; a game finding's neither
    moved = {**summary, "inputs": [{"path": "/b/copy.jsonl", "sha256": "ab" * 32}]}
    other = {**summary, "inputs": [{"path": "/a/log.jsonl", "sha256": "cd" * 32}]}
    moved_frame = frame.with_columns(pl.col("file").str.replace("/a/log", "/b/copy"))
    assert ids.finding_ids(moved_frame, moved) == found
    changed = ids.finding_ids(frame, other)
    assert changed[:3] == found[:3] and set(changed[3:]).isdisjoint(found)
    # another facility's table of the same name is another table
    assert set(ids.finding_ids(frame, {**summary, "facility": "G"})).isdisjoint(found)


# --- what a failed audit leaves -------------------------------------------------------


def _nothing_stored(url: str) -> None:
    for table in ("runs", "inputs", "run_tables", "run_dealers", "findings", "dispositions"):
        assert _rows(url, table) == [], table


def test_a_failed_audit_writes_nothing(store_url, tmp_path, monkeypatch):
    log = night(tmp_path / "night.jsonl", {1})
    audit = ["audit", str(log), "--house", str(DEFAULT_HOUSE), "--out", str(tmp_path / "o"),
             "--store", store_url]

    def broken(*_args, **_kwargs):
        raise RuntimeError("the report could not be printed")

    with monkeypatch.context() as patch:
        patch.setattr(report, "render", broken)
        result = CliRunner().invoke(main, audit)  # the exception kept, not raised
    assert isinstance(result.exception, RuntimeError)
    _nothing_stored(store_url)

    real = store_write.finding_rows

    def failing(run):  # the run and its inputs are in, then writing the findings fails
        yield from real(run)
        raise StoreError("the disk is full")

    monkeypatch.setattr(store_write, "finding_rows", failing)
    result = _cli(*audit, "--no-report")
    assert result.exit_code == 2
    assert "the disk is full" in result.output and "nothing of the run" in result.output
    _nothing_stored(store_url)
    monkeypatch.undo()
    _audit(tmp_path / "o", store_url, log)
    assert len(_rows(store_url, "runs")) == 1


def test_a_store_that_cannot_be_opened_stops_the_audit_before_its_work(tmp_path):
    log = night(tmp_path / "night.jsonl", {1})
    for url, says in [
        ("not a url", "is not a database URL"),
        ("mysql://host/db", "the store is SQLite or PostgreSQL"),
        ("sqlite://", "keeps nothing"),
        (f"sqlite:///{tmp_path}/missing/audits.db", "does not exist"),
        ("postgresql+psycopg://someone:secret@127.0.0.1:1/audits", "127.0.0.1"),
    ]:
        result = _cli("audit", str(log), "--house", str(DEFAULT_HOUSE), "--out",
                      str(tmp_path / "o"), "--store", url)
        assert result.exit_code == 2, (url, result.output)
        assert says in result.output and "Traceback" not in result.output
        assert "secret" not in result.output
        assert not (tmp_path / "o").exists()


# --- two audits at once -----------------------------------------------------------------


def test_two_audits_at_once_both_land(store_url, tmp_path):
    """Two audits started together on a new store: both create it (once) and land."""
    logs = [night(tmp_path / f"n{n}.jsonl", {n}) for n in (1, 2)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "auditor.cli",
                "audit",
                str(log),
                "--house",
                str(DEFAULT_HOUSE),
                "--out",
                str(tmp_path / f"o{n}"),
                "--no-report",
                "-q",
                "--fail-on",
                "never",
                "--store",
                store_url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        for n, log in enumerate(logs)
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    runs = {r["run_id"] for r in _rows(store_url, "runs")}
    summaries = [json.loads((tmp_path / f"o{n}" / "summary.json").read_text()) for n in (0, 1)]
    assert runs == {s["run_id"] for s in summaries}
    assert len(_rows(store_url, "findings")) == 2


def _land_together(url: str, out: str, barrier) -> str:
    barrier.wait(timeout=120)
    out = Path(out)
    summary = json.loads((out / "summary.json").read_text())
    recorder = record.open_for_audit(url)
    recorder.prepare(summary, pl.read_parquet(out / "findings.parquet"), out)
    recorder.land()
    return recorder.run_id


def test_two_writers_at_the_same_moment_both_land(store_url, samples, tmp_path):
    """Two processes open a new store and write a run of about 100 findings each at the
    same moment: SQLite's write lock and PostgreSQL's transactions let both land whole."""
    folders = []
    for n in range(2):
        folders.append(tmp_path / f"w{n}")
        shutil.copytree(samples["faulty"], folders[-1])
    spawn = multiprocessing.get_context("spawn")
    with spawn.Manager() as manager:
        barrier = manager.Barrier(2)
        with spawn.Pool(2) as pool:
            pending = [
                pool.apply_async(_land_together, (store_url, str(f), barrier)) for f in folders
            ]
            run_ids = [p.get(timeout=300) for p in pending]
    assert len(set(run_ids)) == 2
    assert {r["run_id"] for r in _rows(store_url, "runs")} == set(run_ids)
    total = json.loads((samples["faulty"] / "summary.json").read_text())["findings"]["total"]
    stored = _rows(store_url, "findings")
    assert len(stored) == 2 * total and len({f["finding_id"] for f in stored}) == total


# --- history ------------------------------------------------------------------------------


def _three_nights(store_url: str, tmp_path: Path) -> list[dict]:
    """Night 1 underpays round 1; its re-export underpays round 2 instead (the same tables
    and hours); the next night, on BAC-01 and BAC-02, underpays round 2 on both (with
    a log of BAC-03 read as context)."""
    return [
        _audit(tmp_path / "one", store_url, night(tmp_path / "one.jsonl", {1})),
        _audit(tmp_path / "one-again", store_url, night(tmp_path / "one-again.jsonl", {2})),
        _audit(
            tmp_path / "two",
            store_url,
            night(tmp_path / "logs-two" / "bac-01.jsonl", {2}, days_later=1),
            night(tmp_path / "logs-two" / "bac-02.jsonl", {2}, "BAC-02", "D-8", days_later=1),
            context=night(tmp_path / "bac-03.jsonl", {1}, "BAC-03", "D-9", days_later=1),
        ),
    ]


def test_history_shows_runs_and_what_each_found_new(store_url, tmp_path):
    runs = _three_nights(store_url, tmp_path)
    result = _cli("history", "--store", store_url, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [r["run_id"] for r in doc["runs"]] == [r["run_id"] for r in runs]
    counts = [
        (r["new"], r["still_present"], r["no_longer_present"], r["not_audited_again"])
        for r in doc["runs"]
    ]
    # the re-export: round 2's finding new, round 1's gone; the next night's are all new,
    # and the night before's round 2 is not said to be gone (that night was not audited)
    assert counts == [(1, 0, 0, 0), (1, 0, 1, 0), (2, 0, 0, 1)]
    assert doc["runs"][2]["previous_run_id"] == runs[1]["run_id"]
    assert {f["table_id"] for f in doc["latest_new"]} == {"BAC-01", "BAC-02"}
    assert [f["role"] for f in doc["runs"][2]["inputs"]] == ["audited", "audited", "context"]
    assert doc["runs"][2]["inputs"][2]["file"] == str(tmp_path / "bac-03.jsonl")

    text = _cli("history", "--store", store_url).output
    assert "3 runs in" in text and runs[2]["run_id"] in text
    assert (f"New in the latest run, {runs[2]['run_id']}, compared with run "
            f"{runs[1]['run_id']}, the last to finish before this run began: 2") in text
    tomorrow = (date.today() + timedelta(days=2)).isoformat()
    assert "0 runs in" in _cli("history", "--store", store_url, "--since", tomorrow).output
    today = (date.today() - timedelta(days=1)).isoformat()
    assert "3 runs in" in _cli("history", "--store", store_url, "--since", today).output


def test_history_by_table_rule_and_dealer(store_url, tmp_path):
    _three_nights(store_url, tmp_path)
    by_table = json.loads(
        _cli("history", "--store", store_url, "--by", "table", "--format", "json").output
    )
    rows = {
        (r["table_id"], r["rule_id"]): (r["runs"], r["of_runs"], r["findings"])
        for r in by_table["recurring"]
    }
    # BA502 (round 2) on BAC-01 in 2 of the 3 runs that audited it; on BAC-02 in its one
    assert rows == {
        ("BAC-01", "BA502"): (2, 3, 2),
        ("BAC-01", "BA501"): (1, 3, 1),
        ("BAC-02", "BA502"): (1, 1, 1),
    }
    text = _cli("history", "--store", store_url, "--by", "table").output
    assert "BAC-01  BA502" in text and "2 of 3" in text
    by_rule = json.loads(
        _cli("history", "--store", store_url, "--by", "rule", "--format", "json").output
    )
    assert [(r["rule_id"], r["runs"], r["of_runs"]) for r in by_rule["recurring"]] == [
        ("BA502", 2, 3),
        ("BA501", 1, 3),
    ]
    by_dealer = json.loads(
        _cli("history", "--store", store_url, "--by", "dealer", "--format", "json").output
    )
    # of the runs whose logs name the dealer: D-7 deals BAC-01 every night, D-8 BAC-02 once
    assert {
        (r["dealer_id"], r["rule_id"]): (r["runs"], r["of_runs"]) for r in by_dealer["recurring"]
    } == {
        ("D-7", "BA502"): (2, 3),
        ("D-7", "BA501"): (1, 3),
        ("D-8", "BA502"): (1, 1),
    }
    dealt = {
        (d["run_id"], d["dealer_id"]): d["rounds_dealt"] for d in _rows(store_url, "run_dealers")
    }
    assert sorted(dealt.values()) == [2, 2, 2, 2] and len({d for _, d in dealt}) == 2
    assert "D-8" in _cli("history", "--store", store_url, "--by", "dealer").output


def test_history_of_findings_that_name_no_dealer(tmp_path, samples):
    url = f"sqlite:///{tmp_path / 'audits.db'}"
    out, _ = _store_folder(samples["faulty"], url, tmp_path)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(schema.findings.update().values(dealer_id=None))
    engine.dispose()
    text = _cli("history", "--store", url, "--by", "dealer").output
    assert "names a dealer" in text


def test_history_of_a_store_that_cannot_be_read_is_exit_2(tmp_path):
    for url, says in [
        (f"sqlite:///{tmp_path / 'none.db'}", "no store at"),
        ("nonsense", "is not a database URL"),
        ("postgresql://someone:secret@127.0.0.1:1/audits", "127.0.0.1"),
    ]:
        result = CliRunner().invoke(main, ["history", "--store", url])
        assert result.exit_code == 2 and says in result.output, result.output
        assert "Traceback" not in result.output and "secret" not in result.output
    assert not (tmp_path / "none.db").exists()
    for command in ("history",):
        assert "Usage" in _cli(command, "--help").output


def _opened(folder: Path, url: str, tmp_path: Path, name: str):
    """A copy of an audit's folder and its run opened on the store (its start taken now),
    as `auditor audit --store` opens it before reading the logs."""
    copy = tmp_path / name
    shutil.copytree(folder, copy)
    return copy, record.open_for_audit(url)


def _prepare(copy: Path, recorder) -> None:
    summary = json.loads((copy / "summary.json").read_text())
    recorder.prepare(summary, pl.read_parquet(copy / "findings.parquet"), copy)
    (copy / "summary.json").write_text(json.dumps(summary))


def test_runs_that_overlap_in_time_are_compared_alike_by_the_report_and_history(
    store_url, tmp_path
):
    """Z lands; A and B begin; B compares itself (A has not finished), then A lands, then B;
    D begins after both. Each run is compared with the last run to finish before it began,
    in its report as in `auditor history`: B with Z (A finished after B began), D with B."""
    night_out = tmp_path / "night"
    _audit(night_out, None, night(tmp_path / "night.jsonl", {1}))
    z, z_recorder = _opened(night_out, store_url, tmp_path, "z")
    _prepare(z, z_recorder)
    z_recorder.land()
    a, a_recorder = _opened(night_out, store_url, tmp_path, "a")
    b, b_recorder = _opened(night_out, store_url, tmp_path, "b")
    _prepare(b, b_recorder)  # B is compared before A has finished ...
    _prepare(a, a_recorder)
    a_recorder.land()
    b_recorder.land()  # ... and finishes after it
    d, d_recorder = _opened(night_out, store_url, tmp_path, "d")
    _prepare(d, d_recorder)
    d_recorder.land()
    ids = {name: r.run_id for name, r in
           (("z", z_recorder), ("a", a_recorder), ("b", b_recorder), ("d", d_recorder))}
    wanted = {"z": None, "a": ids["z"], "b": ids["z"], "d": ids["b"]}

    reported = {name: (_comparison(tmp_path / name)["previous_run"] or {}).get("run_id")
                for name in ids}
    assert reported == wanted
    doc = json.loads(_cli("history", "--store", store_url, "--format", "json").output)
    listed = {r["run_id"]: r["previous_run_id"] for r in doc["runs"]}
    assert {name: listed[run_id] for name, run_id in ids.items()} == wanted

    shown = _report_text(b)
    assert f"It is compared with run {ids['z']} , the last to finish before this run began" in shown
    text = _cli("history", "--store", store_url).output
    assert (f"New in the latest run, {ids['d']}, compared with run {ids['b']}, the last to "
            "finish before this run began: 0") in text


# --- the report ---------------------------------------------------------------------------


def _report_text(out: Path) -> str:
    import re

    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", report.html(out)))


def test_the_report_compares_with_the_previous_run(store_url, tmp_path):
    runs = _three_nights(store_url, tmp_path)
    first = _report_text(tmp_path / "one")
    assert "Compared with the previous run" in first
    assert "It is compared with no run" in first and "its 1 finding is new" in first
    again = _comparison(tmp_path / "one-again")
    assert again["previous_run"]["run_id"] == runs[0]["run_id"]
    assert [f["rule_id"] for f in again["new"]] == ["BA502"]
    assert [f["rule_id"] for f in again["no_longer_present"]] == ["BA501"]
    text = _report_text(tmp_path / "one-again")
    assert f"run {runs[0]['run_id']}" in text and runs[1]["run_id"] in text
    assert "1 new" in text and "0 still present" in text and "1 no longer present" in text
    assert "Findings per rule, this run (the previous run): BA501 0 (1) · BA502 1 (0)" in text
    # the next night: the night before's finding is not said to be gone
    two = _comparison(tmp_path / "two")["counts"]
    assert (two["new"], two["no_longer_present"], two["not_audited_again"]) == (2, 0, 1)
    # `auditor report` re-renders the comparison from the folder into the PDF (printed
    # once: the PDF does not depend on the store's kind)
    if store_url.startswith("sqlite") and shutil.which("pdftotext"):
        assert _cli("report", str(tmp_path / "two")).exit_code == 0
        pdf = subprocess.run(
            ["pdftotext", str(tmp_path / "two" / "report.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "Compared with the previous run" in pdf and "no longer present" in pdf
    # the same folder audited again without a store: no comparison left from before
    _audit(tmp_path / "two", None, night(tmp_path / "three.jsonl", {1}))
    assert not (tmp_path / "two" / compare.FILE).exists()
    assert "Compared with the previous run" not in _report_text(tmp_path / "two")
