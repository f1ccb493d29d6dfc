"""A plain audit loads only what it uses: no database library without --store, no
cluster without --cluster, nothing of the report, its signature or the review without
them. Each is seconds of start-up a nightly job and a year's rerun pay on every run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"

# the libraries of the features a plain `audit --no-report` does not use
NOT_FOR_A_PLAIN_AUDIT = {
    "sqlalchemy": "--store",
    "psycopg": "--store",
    "psycopg2": "--store",
    "dask": "--cluster",
    "distributed": "--cluster",
    "weasyprint": "the report",
    "pydyf": "the report",
    "jinja2": "the report",
    "pyhanko": "a signature",
    "fastapi": "review",
    "starlette": "review",
    "uvicorn": "review",
}

_RUN = """
import atexit, json, sys
listing = sys.argv[1]
atexit.register(lambda: open(listing, "w").write(json.dumps(sorted(sys.modules))))
args = sys.argv[2:]
sys.argv = ["auditor", *args]
from auditor.cli import entry
entry()
"""


def _modules_of(args: list[str], tmp_path: Path) -> tuple[int, set[str]]:
    listing = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", _RUN, str(listing), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, set(json.loads(listing.read_text()))


def _loaded(modules: set[str]) -> dict[str, str]:
    return {name: why for name, why in NOT_FOR_A_PLAIN_AUDIT.items()
            if any(m == name or m.startswith(name + ".") for m in modules)}


@pytest.mark.parametrize("log", ["clean", "faulty"])
def test_a_plain_audit_imports_no_library_of_a_feature_it_does_not_use(log, tmp_path):
    status, modules = _modules_of(
        ["audit", str(SAMPLES / log), "--house", str(SAMPLES / "house.toml"),
         "--no-report", "--out", str(tmp_path / "out")], tmp_path)
    assert status == (0 if log == "clean" else 1)
    assert "auditor.audit" in modules  # the audit ran in this process
    assert _loaded(modules) == {}


def test_an_export_audited_through_its_profile_imports_none_of_them_either(tmp_path):
    export = SAMPLES / "exports" / "baccarat-coups"
    status, modules = _modules_of(
        ["audit", str(export), "--profile", str(export / "profile.toml"),
         "--house", str(SAMPLES / "house.toml"), "--no-report", "--out",
         str(tmp_path / "out")], tmp_path)
    assert status == 1
    assert _loaded(modules) == {}


def test_the_list_sees_a_library_that_is_loaded(tmp_path):
    """The check itself: a run with --store loads the database library, and is seen to."""
    status, modules = _modules_of(
        ["audit", str(SAMPLES / "clean"), "--house", str(SAMPLES / "house.toml"),
         "--no-report", "--store", f"sqlite:///{tmp_path / 'store.db'}", "--out",
         str(tmp_path / "out")], tmp_path)
    assert status == 0
    assert set(_loaded(modules)) == {"sqlalchemy"}
