"""Exit codes that mean one thing: every fault a nightly job meets ends in 0, 1 or 2 and,
where the audit could not complete, one line naming the cause; never a traceback.

Each case is run as the `auditor` command itself (its entry point, in this process:
what a user's shell runs), and the manual's exit-codes page lists it
(docs/reference/exit-codes.md, "What a fault gives")."""

from __future__ import annotations

import gzip
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from auditor.cli import entry

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
HOUSE = SAMPLES / "house.toml"
CLEAN = SAMPLES / "clean" / "baccarat.jsonl"
EXIT_CODES_PAGE = ROOT / "docs" / "reference" / "exit-codes.md"


@dataclass(frozen=True)
class Case:
    name: str  # as the manual's table names it
    status: int
    make: Callable[[Path], list[str]]  # the arguments, made in a folder of the case's
    says: str = ""  # what the one line (exit 2) holds
    # where it runs: "here" (this process), "unprivileged" (a process that may not read
    # what the permission bits forbid, root's power taken), "small disk" (a process
    # whose folder `small` is a file system of 64 kB: a full disk)
    runner: str = "here"


def _audit(*logs: Path | str, out: Path, extra: tuple[str, ...] = (),
           house: Path = HOUSE) -> list[str]:
    return ["audit", *map(str, logs), "--house", str(house), "--out", str(out),
            "--no-report", "-q", *extra]


def _two_members(folder: Path) -> list[str]:
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    path = folder / "day.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(lines[:3908])) + gzip.compress(b"".join(lines[3908:])))
    return _audit(path, out=folder / "out")


def _written(name: str, data: bytes) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        (folder / name).write_bytes(data)
        return _audit(folder / name, out=folder / "out")
    return make


def _empty_allowed(folder: Path) -> list[str]:
    (folder / "empty.jsonl").write_bytes(b"")
    return _audit(folder / "empty.jsonl", out=folder / "out", extra=("--allow-empty",))


def _dangling(folder: Path) -> list[str]:
    logs = folder / "logs"
    logs.mkdir()
    shutil.copy(CLEAN, logs / "day.jsonl")
    (logs / "gone.jsonl").symlink_to(folder / "nowhere.jsonl")
    return _audit(logs, out=folder / "out")


def _long_line(folder: Path) -> list[str]:
    lines = CLEAN.read_bytes().splitlines(keepends=True)
    path = folder / "day.jsonl"
    path.write_bytes(b"".join([*lines[:10], b"x" * (2 << 20) + b"\n", *lines[10:]]))
    return _audit(path, out=folder / "out")


def _bare_cr(folder: Path) -> list[str]:
    (folder / "day.csv").write_bytes(b"table_id,game\rBAC-01,baccarat\r")
    return _audit(folder / "day.csv", out=folder / "out")


def _parquet(folder: Path, column: str, value: pl.Expr) -> list[str]:
    events = pl.read_ndjson(CLEAN, infer_schema_length=None).head(300)
    path = folder / "day.parquet"
    events.with_columns(value.alias(column)).write_parquet(path)
    return _audit(path, out=folder / "out")


def _house(text: str) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        house = folder / "house.toml"
        house.write_text(HOUSE.read_text().replace("payout_limit = 100000", text))
        return _audit(CLEAN, out=folder / "out", house=house)
    return make


def _foreign_files_in_out(folder: Path) -> list[str]:
    (folder / "out").mkdir()
    (folder / "out" / "notes.txt").write_text("mine")
    return _audit(CLEAN, out=folder / "out")


COUPS = SAMPLES / "exports" / "baccarat-coups"
AMOUNT = 'amount = { sql = "CAST(stake_cents AS DOUBLE) / 100" }'


def _profiled(amount: str) -> Callable[[Path], list[str]]:
    """The sample coups and wagers export, its wagers' amount mapped as given."""
    def make(folder: Path) -> list[str]:
        profile = folder / "profile.toml"
        profile.write_text((COUPS / "profile.toml").read_text().replace(AMOUNT, amount))
        return _audit(COUPS, out=folder / "out", extra=("--profile", str(profile)))
    return make


def _todo_left(folder: Path) -> list[str]:
    """A drafted profile with a TODO still in it (`auditor profile draft`)."""
    profile = folder / "profile.toml"
    profile.write_text((COUPS / "profile.toml").read_text().replace(
        'timestamp_format = "%d/%m/%Y %H:%M:%S"',
        'timestamp_format = "TODO: which of \\"%d/%m/%Y %H:%M:%S\\", \\"%m/%d/%Y %H:%M:%S\\""'))
    return _audit(COUPS, out=folder / "out", extra=("--profile", str(profile)))


def _unreadable_file(folder: Path) -> list[str]:
    logs = folder / "logs"
    logs.mkdir()
    shutil.copy(CLEAN, logs / "day.jsonl")
    (logs / "day.jsonl").chmod(0o000)
    return _audit(logs, out=folder / "out")


def _unreadable_folder(folder: Path) -> list[str]:
    logs = folder / "logs"
    (logs / "night").mkdir(parents=True)
    shutil.copy(CLEAN, logs / "day.jsonl")
    (logs / "night").chmod(0o000)
    return _audit(logs, out=folder / "out")


def _read_only_out(folder: Path) -> list[str]:
    (folder / "reports").mkdir()
    (folder / "reports").chmod(0o555)
    return _audit(CLEAN, out=folder / "reports" / "out")


def _full_out(folder: Path) -> list[str]:
    return _audit(SAMPLES / "faulty", out=folder / "small" / "out")


def _full_work_folder(folder: Path) -> list[str]:
    return _audit(SAMPLES / "faulty", out=folder / "out",
                  extra=("--workdir", str(folder / "small"), "--workers", "2"))


def _missing(folder: Path) -> list[str]:
    return _audit(folder / "no-such.jsonl", out=folder / "out")


CASES = [
    Case("a clean log", 0, lambda f: _audit(CLEAN, out=f / "out")),
    Case("a gzip file of several members (files concatenated)", 0, _two_members),
    Case("a log with findings", 1, lambda f: _audit(SAMPLES / "faulty", out=f / "out")),
    Case("a log file with no rows (empty, blank lines, an empty gzip, a CSV header only)", 2,
         _written("empty.jsonl.gz", gzip.compress(b"")), "holds no rows"),
    Case("an empty log with --allow-empty", 0, _empty_allowed),
    Case("a link in a log folder that leads nowhere", 1, _dangling),
    Case("a line longer than --max-line", 1, _long_line),
    Case("a CSV whose lines end in a bare carriage return", 1, _bare_cr),
    Case("a log argument that names nothing", 2, _missing, "no such file or folder"),
    Case("a Parquet amount out of range (1e20)", 1,
         lambda f: _parquet(f, "amount", pl.col("amount").cast(pl.Float64) * 1e18)),
    Case("a Parquet column of a type the format does not allow (a list of cards)", 2,
         lambda f: _parquet(f, "card", pl.concat_list("card")), "cannot hold the values"),
    Case("a house-rules number out of reach (payout_limit = 1e400)", 2,
         _house("payout_limit = 1e400"), "payout_limit"),
    Case("--out holding files an audit does not write", 2, _foreign_files_in_out,
         "holds files an audit does not write"),
    Case("profile SQL with an aggregate", 2, _profiled('amount = { sql = "SUM(stake_cents)" }'),
         "an aggregate"),
    Case("profile SQL with a window", 2,
         _profiled('amount = { sql = "stake_cents - LAG(stake_cents) OVER ()" }'),
         "a window function"),
    Case("profile SQL with a subquery", 2,
         _profiled('amount = { sql = "(SELECT 1)" }'), "SELECT"),
    Case("profile SQL that reads a file", 2,
         _profiled("amount = { sql = \"read_parquet('/etc/passwd')\" }"), "which reads a file"),
    Case("profile SQL of more than 256 tokens or 32 nested parentheses", 2,
         _profiled('amount = { sql = "' + " + ".join(["stake_cents"] * 6000) + '" }'),
         "256"),
    Case("profile SQL with a CAST that fails on the file", 2,
         _profiled('amount = { sql = "CAST(spot AS INTEGER)" }'), "its SQL fails on this file"),
    Case("profile SQL dividing by zero", 1,
         _profiled('amount = { sql = "stake_cents / 0" }')),
    Case("a JSON Lines key no row has, mapped to a column the layout needs", 2,
         _profiled('amount = "stake"'), "no row has the key 'stake'"),
    Case("a profile with a TODO the draft left", 2, _todo_left,
         "line 10: source 'coups'.timestamp_format: is a TODO"),
    Case("a log file the auditor may not read", 2, _unreadable_file,
         "the file cannot be read", "unprivileged"),
    Case("a folder below a log folder that the auditor may not read", 2, _unreadable_folder,
         "the folder cannot be read", "unprivileged"),
    Case("--out in a folder the auditor may not write", 2, _read_only_out,
         "cannot be written", "unprivileged"),
    Case("a full disk under --out", 2, _full_out, "No space left on device", "small disk"),
    Case("a full disk under the work folder (the spill)", 2, _full_work_folder,
         "the work folder", "small disk"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_fault_gives_its_exit_status_and_at_most_one_line(case, tmp_path, capsys):
    args = case.make(tmp_path)
    if case.runner == "here":
        status, err = run(args, capsys)
    else:
        status, err = _run_apart(case.runner, args, tmp_path)
    assert status == case.status, err
    assert "Traceback" not in err
    if case.status == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and case.says in lines[0], err
        assert not (tmp_path / "out").is_dir() or case.name.startswith("--out holding")


def run(args: list[str], capsys) -> tuple[int, str]:
    """The `auditor` command as a shell runs it (its entry point), in this process."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    argv, sys.argv = sys.argv, ["auditor", *args]
    try:
        entry()
        status = 0
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.argv = argv
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    return status, capsys.readouterr().err


def _run_apart(runner: str, args: list[str], folder: Path) -> tuple[int, str]:
    """The command in a process of its own: unprivileged, or with a full disk."""
    command = [sys.executable, "-m", "auditor.cli", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if os.getuid() != 0:
        if runner == "small disk":
            pytest.skip("a file system of its own needs root (mount in a namespace)")
    elif runner == "unprivileged":
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    if runner == "small disk":
        (folder / "small").mkdir()
        script = (f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(folder / 'small'))} "
                  f"&& exec {shlex.join(command)}")
        command = ["unshare", "-m", "sh", "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    for path in folder.rglob("*"):  # the case's folder removable again
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    return done.returncode, done.stderr


def test_the_manual_lists_every_case():
    page = EXIT_CODES_PAGE.read_text()
    for case in CASES:
        assert f"| {case.name} | {case.status} |" in page, case.name


def test_a_failure_of_the_auditor_itself_is_one_line_and_exit_2(tmp_path, capsys,
                                                                monkeypatch):
    """An error no check foresaw: one line that says it is the auditor's fault."""
    from auditor import findings

    def broken(*_):
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr(findings, "write", broken)
    status, err = run(_audit(CLEAN, out=tmp_path / "out"), capsys)
    assert status == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "auditor: the command failed (RuntimeError: a bug); this is a fault of the auditor: "
        "please report it with the command that gave it"]
    assert not (tmp_path / "out").exists()
