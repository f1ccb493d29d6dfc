"""Every byte read, or said why not; a run all or nothing (issue: faults found by a
reliability pass). Each case is one a nightly job meets: concatenated gzip members, a
line of hundreds of megabytes, an empty export, a folder it may not read, a link to a
file that is gone, a rerun into the same folder."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.ingest import chunks, readers, text
from auditor.ingest.sources import Source, SourceError, expand

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
HOUSE = SAMPLES / "house.toml"
CLEAN = SAMPLES / "clean" / "baccarat.jsonl"


def _audit(*args: str, out: Path):
    return CliRunner().invoke(
        main, ["audit", *args, "--house", str(HOUSE), "--out", str(out), "--no-report",
               "-q"])


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def _two_members(folder: Path, lines: list[bytes], encoding: str = "jsonl") -> Path:
    """The lines as two gzip files written one after the other: one valid gzip file."""
    half = len(lines) // 2
    path = folder / f"day.{encoding}.gz"
    path.write_bytes(gzip.compress(b"".join(lines[:half]))
                     + gzip.compress(b"".join(lines[half:])))
    return path


# --- gzip: every member --------------------------------------------------------------


def test_a_gzip_file_of_two_members_is_read_to_its_end(tmp_path):
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    path = _two_members(tmp_path, lines)
    source = Source(path, "jsonl", True)
    data, problems = readers.read_bytes(source)
    assert problems == [] and data == b"".join(lines)
    # a chunk at a time (the spill), in chunks smaller than a member
    pieces = list(chunks.numbered(source, 50_000))
    assert b"".join(c.text for c in pieces) == data
    assert sum(c.newlines for c in pieces) == len(lines)


@pytest.mark.parametrize("how", [[], ["--workers", "2"], ["--memory", "0.9"]])
def test_an_audit_of_a_two_member_gzip_reads_every_row(tmp_path, how):
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    path = _two_members(tmp_path, lines)
    result = _audit(str(path), *how, out=tmp_path / "out")
    assert result.exit_code == 0, result.output
    rows = _summary(tmp_path / "out")["rows"]
    assert rows["read"] == len(lines) == rows["audited"]


def test_zeros_after_the_last_member_are_padding_and_other_bytes_are_reported(tmp_path):
    lines = CLEAN.read_bytes().splitlines(keepends=True)[:50]
    padded = tmp_path / "padded.jsonl.gz"
    padded.write_bytes(gzip.compress(b"".join(lines)) + b"\0" * 512)
    data, problems = readers.read_bytes(Source(padded, "jsonl", True))
    assert data == b"".join(lines) and problems == []
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(b"".join(lines)) + gzip.compress(b"".join(lines))[:40])
    data, problems = readers.read_bytes(Source(cut, "jsonl", True))
    assert data.startswith(b"".join(lines))
    assert [p.rule_id for p in problems] == ["IN001"]
    assert "ends early" in problems[0].message


def test_a_small_gzip_that_expands_past_what_may_be_held_is_too_large(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"{}\n" * 2_000_000))  # 6 MB of text in a few KB
    with pytest.raises(text.TextTooLarge):
        readers.read(Source(bomb, "jsonl", True), cap=1 << 20)


# --- lines longer than the limit -----------------------------------------------------


def _with_long_line(folder: Path, size: int) -> tuple[Path, int]:
    """The clean day with one line of `size` bytes put in after its 100th line."""
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    long = b'{"note": "' + b"x" * size + b'"}\n'
    path = folder / "long.jsonl"
    path.write_bytes(b"".join([*lines[:100], long, *lines[100:]]))
    return path, 101


@pytest.mark.parametrize("chunk", [None, 4096, 1 << 20])
def test_a_line_longer_than_the_limit_is_cut_out_and_reported_at_its_line(tmp_path, chunk):
    path, line = _with_long_line(tmp_path, 3 << 20)
    source = Source(path, "jsonl", False)
    if chunk is None:
        raw = readers.read(source)
        problems, lines = raw.problems, raw.frame["line"].to_list()
    else:
        parsed = [chunks.parse(c, "jsonl") for c in chunks.numbered(source, chunk)]
        problems = [p for c in parsed for p in c.problems]
        lines = [n for c in parsed for n in c.frame["line"].to_list()]
    assert [(p.rule_id, p.line) for p in problems] == [("IN002", line)]
    assert "longer than 1,048,576 bytes" in problems[0].message
    # every other line is read, at its own number
    assert line not in lines and len(lines) == 7816 and lines[-1] == 7817


def test_the_line_limit_is_an_option(tmp_path):
    path, line = _with_long_line(tmp_path, 2 << 20)
    _audit(str(path), out=tmp_path / "cut")
    found = pl.read_parquet(tmp_path / "cut" / "findings.parquet")
    assert ("IN002", line) in found.select("rule_id", "line").rows()
    # read whole under a higher limit: a row (without the format's fields)
    _audit(str(path), "--max-line", "3", out=tmp_path / "whole")
    found = pl.read_parquet(tmp_path / "whole" / "findings.parquet")
    at_line = found.filter(pl.col("line") == line)["rule_id"].unique().to_list()
    assert at_line == ["IN004"]


def test_one_line_of_many_megabytes_is_never_held(tmp_path):
    """A file that is one line of 200 MB (no line break anywhere) is read a block at a
    time: reading it costs about what reading a line of 2 MB does (each read in a
    process of its own, whose peak is measured)."""
    peaks = {}
    for megabytes in (2, 200):
        path = tmp_path / f"one-{megabytes}.jsonl"
        with path.open("wb") as handle:
            for _ in range(megabytes):
                handle.write(b"x" * (1 << 20))
        probe = (
            "import resource, sys\n"
            "from pathlib import Path\n"
            "from auditor.ingest import chunks\n"
            "from auditor.ingest.sources import Source\n"
            f"parsed = [chunks.parse(c, 'jsonl') for c in chunks.numbered("
            f"Source(Path({str(path)!r}), 'jsonl', False), 8 << 20)]\n"
            "print([p.line for c in parsed for p in c.problems])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True)
        problems, peak_kb = done.stdout.split("\n")[:2]
        assert problems == "[1]"
        peaks[megabytes] = int(peak_kb)
    assert peaks[200] - peaks[2] < 64_000, peaks  # kB: a block or two, not the line


# --- empty logs ----------------------------------------------------------------------


EMPTY = {
    "empty.jsonl": b"",
    "blank.jsonl": b"\n\n  \n",
    "empty.jsonl.gz": gzip.compress(b""),
    "header.csv": b"table_id,game,shoe_id,round,seq,ts,event\n",
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_a_log_with_no_rows_is_exit_2_naming_it(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(EMPTY[name])
    result = _audit(str(path), out=tmp_path / "out")
    assert result.exit_code == 2
    assert str(path) in result.output and "--allow-empty" in result.output
    assert not (tmp_path / "out").exists()


def test_an_empty_file_beside_others_is_exit_2_too(tmp_path):
    shutil.copy(CLEAN, tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"")
    result = _audit(str(tmp_path), out=tmp_path / "out")
    assert result.exit_code == 2 and "b.jsonl holds no rows" in result.output


def test_allow_empty_audits_no_rows_as_a_day_without_play(tmp_path):
    path = tmp_path / "empty.jsonl.gz"
    path.write_bytes(gzip.compress(b""))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["audit", str(path), "--house", str(HOUSE), "--out",
                                       str(out), "--allow-empty", "-q"])
    assert result.exit_code == 0, result.output
    summary = _summary(out)
    assert summary["rows"]["read"] == 0 and summary["inputs"][0]["rows"] == 0
    cover = (out / "report.html").read_text()
    assert "the logs hold no rows, audited as a day without play" in cover


# --- what a folder names -------------------------------------------------------------


def test_a_link_to_a_file_that_is_gone_is_an_input_finding(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(CLEAN, logs / "day.jsonl")
    (logs / "gone.jsonl").symlink_to(tmp_path / "rotated-away.jsonl")
    result = _audit(str(logs), out=tmp_path / "out")
    assert result.exit_code == 1, result.output
    found = pl.read_parquet(tmp_path / "out" / "findings.parquet")
    assert found.select("rule_id", "file").rows() == [("IN001", str(logs / "gone.jsonl"))]
    assert "symbolic link to" in found["message"][0]
    assert _summary(tmp_path / "out")["rows"]["audited"] == 7816


def test_a_folder_that_links_back_up_is_walked_once(tmp_path):
    shutil.copy(CLEAN, tmp_path / "day.jsonl")
    (tmp_path / "loop").symlink_to(tmp_path)
    assert [s.path.name for s in expand([str(tmp_path)])] == ["day.jsonl"]


def _unprivileged(*args: str) -> subprocess.CompletedProcess:
    """The auditor run without the power to read any file (root's is taken from it: the
    permission bits then hold for it too)."""
    drop = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
            if os.getuid() == 0 else [])
    return subprocess.run([*drop, sys.executable, "-m", "auditor.cli", *args],
                          capture_output=True, text=True)


def test_a_folder_the_auditor_may_not_read_is_exit_2_naming_it(tmp_path):
    logs = tmp_path / "logs"
    (logs / "secret").mkdir(parents=True)
    shutil.copy(CLEAN, logs / "day.jsonl")
    shutil.copy(CLEAN, logs / "secret" / "night.jsonl")
    (logs / "secret").chmod(0o000)
    out = tmp_path / "out"
    done = _unprivileged("audit", str(logs), "--house", str(HOUSE), "--out", str(out),
                      "--no-report", "-q")
    assert done.returncode == 2, done.stderr
    assert f"{logs / 'secret'}: the folder cannot be read" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    (logs / "secret").chmod(0o700)


def test_a_file_the_auditor_may_not_read_is_exit_2_naming_it(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(CLEAN, logs / "day.jsonl")
    (logs / "day.jsonl").chmod(0o000)
    done = _unprivileged("audit", str(logs), "--house", str(HOUSE), "--out",
                         str(tmp_path / "out"), "--no-report", "-q")
    assert done.returncode == 2, done.stderr
    assert f"{logs / 'day.jsonl'}: the file cannot be read" in done.stderr
    assert "Traceback" not in done.stderr
    with pytest.raises(SourceError):
        expand([str(logs / "missing.jsonl")])


# --- hostile input within the memory budget ------------------------------------------


def _objects(path: Path) -> None:
    """6,000,000 lines of `{}`: 18 MB of text in a gzip of 18 kB."""
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(6):
            handle.write(b"{}\n" * 1_000_000)


def _one_line(path: Path) -> None:
    """One line of 300 MB, no line break: a gzip of 300 kB."""
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(300):
            handle.write(b"x" * (1 << 20))


def _same_line(path: Path) -> None:
    """One valid row, 2,000,000 times: one table past what a part can hold."""
    row = CLEAN.read_bytes().splitlines(keepends=True)[5]
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(4):
            handle.write(row * 500_000)


def _wide(path: Path) -> None:
    """500 rows of the clean day with 20,000 columns the format does not have."""
    rows = [json.loads(line) for line in CLEAN.read_text().splitlines()[:500]]
    columns = ["table_id", "game", "shoe_id", "round", "seq", "ts", "event", "seat", "target",
               "card", "bet", "amount", "winner", "player_points", "banker_points", "decks",
               "accepted", "mode"]
    extra = "," * 20_000
    with path.open("w") as handle:
        handle.write(",".join(columns) + "".join(f",x{n}" for n in range(20_000)) + "\n")
        for row in rows:
            cells = ["" if row.get(c) is None else str(row[c]).lower()
                     if isinstance(row[c], bool) else str(row[c]) for c in columns]
            handle.write(",".join(cells) + extra + "\n")


HOSTILE = {"objects.jsonl.gz": (_objects, 1), "line.jsonl.gz": (_one_line, 1),
           "same.jsonl.gz": (_same_line, 2), "wide.csv": (_wide, 0)}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_audited_within_the_memory_budget(tmp_path, name):
    """Each at a small scale of the faults found (a 10 MB gzip of 10 GB, 1 GB of `{}`
    lines, 1 GB of one valid line, one line of 500 MB, a CSV of 100,000 more columns):
    the audit completes (or refuses a table too large, at once) with one line at most,
    and its peak memory (the largest of its processes) stays within --memory 1.5."""
    make, status = HOSTILE[name]
    make(tmp_path / name)
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stderr, file=sys.stderr)\n")
    done = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "auditor.cli", "audit",
         str(tmp_path / name), "--house", str(HOUSE), "--out", str(tmp_path / "out"),
         "--no-report", "-q", "--memory", "1.5"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    code, peak_kb = map(int, done.stdout.split())
    assert code == status, done.stderr
    assert "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) <= 1
    assert peak_kb < 1.5 * (1 << 20), f"{peak_kb:,} kB"
