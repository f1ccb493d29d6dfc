"""A run is all or nothing: an audit killed at any stage leaves `--out` holding the run
before it (byte for byte) and the store holding nothing of it; the next run clears
what the killed one left (its folder beside `--out`, its spilled work folder). A
signal to stop (SIGINT, SIGTERM) stops the workers, removes the work folder and the
unfinished run, and exits 130 or 143 with one line.

The audit runs as a real process. Where it stops is set by a `sitecustomize` module
put on its path (so that worker processes load it too): it wraps one function of the
stage so that the process kills itself with SIGKILL there, or waits to be signalled."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
HOUSE = SAMPLES / "house.toml"

# stage -> (module, function) wrapped: the process stops when it is called (or, with
# "after", once it has returned)
STAGES = {
    "reading": ("auditor.ingest.readers", "read", "after"),
    "rules": ("auditor.audit_part", "_game_checks", "before"),
    "findings": ("auditor.findings", "write", "after"),
    "report": ("auditor.report", "render", "before"),
    "store": ("auditor.store.write", "finding_rows", "before"),
    "folder": ("auditor.run_folder", "_synced", "after"),
}

HOOK = '''
import importlib, os, signal, time
stage = os.environ.get("AUDITOR_TEST_STOP")
if stage:
    module_name, name, when, how = stage.split(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    def stop():
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        open(os.environ["AUDITOR_TEST_MARK"], "w").close()
        time.sleep(120)

    def wrapped(*args, **kwargs):
        if when == "before":
            stop()
        result = original(*args, **kwargs)
        if when == "after":
            stop()
        return result

    setattr(module, name, wrapped)
'''


@pytest.fixture(scope="module")
def hook(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hook")
    (folder / "sitecustomize.py").write_text(HOOK)
    return folder


def _command(out: Path, work: Path, store: Path, log: str = "faulty") -> list[str]:
    # every audit makes its work folder in --workdir, spilled or not
    return [sys.executable, "-m", "auditor.cli", "audit", str(SAMPLES / log), "--house",
            str(HOUSE), "--out", str(out), "--workdir", str(work), "--store",
            f"sqlite:///{store}", "-q"]


def _env(hook: Path, stop: str | None = None, mark: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    env.pop("AUDITOR_TEST_STOP", None)
    if stop is not None:
        env["AUDITOR_TEST_STOP"] = stop
        env["AUDITOR_TEST_MARK"] = str(mark)
    return env


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _runs(store: Path) -> int:
    with sqlite3.connect(store) as db:
        return db.execute("select count(*) from runs").fetchone()[0]


def _left_beside(out: Path, work: Path) -> list[str]:
    beside = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    return beside + [p.name for p in work.iterdir()]


@pytest.fixture(scope="module")
def before(tmp_path_factory, hook):
    """A first, complete run of the clean day: what every killed run must leave."""
    folder = tmp_path_factory.mktemp("kills")
    out, work, store = folder / "out", folder / "work", folder / "audits.db"
    work.mkdir()
    done = subprocess.run(_command(out, work, store, "clean"), env=_env(hook),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_kill_at_any_stage_leaves_the_run_before(before, hook, stage):
    folder = before
    out, work, store = folder / "out", folder / "work", folder / "audits.db"
    files, runs = _files(out), _runs(store)
    module, name, when = STAGES[stage]
    killed = subprocess.run(_command(out, work, store),
                            env=_env(hook, f"{module}:{name}:{when}:kill", folder / "mark"),
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _files(out) == files  # the run before, byte for byte
    assert _runs(store) == runs
    # the next run completes, and clears what the killed one left
    again = subprocess.run(_command(out, work, store, "clean"), env=_env(hook),
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert _left_beside(out, work) == []
    assert _runs(store) == runs + 1
    assert set(_files(out)) == set(files)


def _signalled(command: list[str], env: dict, mark: Path, signum: int):
    """The command, signalled once it is waiting at its stage."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not mark.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("stage", ["reading", "report"])
def test_a_signal_stops_the_audit_and_removes_what_it_wrote(before, hook, stage, signum,
                                                            status):
    folder = before
    out, work, store = folder / "out", folder / "work", folder / "audits.db"
    files, runs = _files(out), _runs(store)
    mark = folder / f"mark-{stage}-{signum}"
    module, name, when = STAGES[stage]
    code, stderr = _signalled(_command(out, work, store),
                              _env(hook, f"{module}:{name}:{when}:wait", mark), mark, signum)
    assert code == status, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and f"stopped by {signal.Signals(signum).name}" in lines[0]
    assert _files(out) == files and _runs(store) == runs
    assert _left_beside(out, work) == []  # nothing waits for the next run to clear
