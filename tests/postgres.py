"""A throwaway PostgreSQL server for the store tests: `initdb` into a temporary folder,
`pg_ctl start` on a free port (its socket in that folder too), a fresh database per test,
`pg_ctl stop` at the end of the session.

The server binaries come from the `postgresql` package (./scripts/setup installs it); on
Debian they live in /usr/lib/postgresql/<version>/bin, off the PATH. Run as root (a CI
container), the server runs as an unprivileged user (`postgres`, which the package
creates, else `nobody`): initdb and postgres refuse to run as root. The tests are skipped
only where the binaries are not there; a server that is there but fails to start fails
the tests, with its log.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

SUPERUSER = "auditor"
INSTALL = "./scripts/setup installs it (Debian package `postgresql`)"


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on the PATH, else the newest Debian one."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _account() -> pwd.struct_passwd | None:
    """Who runs the server: None (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.fail("running as root, and no `postgres` or `nobody` user to run PostgreSQL as")


class Server:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.account = _account()
        # not under pytest's own temporary folder: the server's user must reach it
        self.root = Path(tempfile.mkdtemp(prefix="auditor-pg-"))
        self.data, self.log = self.root / "data", self.root / "server.log"
        self.port = _free_port()
        if self.account is not None:
            os.chown(self.root, self.account.pw_uid, self.account.pw_gid)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        user = (
            {}
            if self.account is None
            else {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}
        )
        env = {**os.environ, "HOME": str(self.root), "LC_ALL": "C"}
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            cwd=self.root,
            env=env,
            timeout=120,
            **user,
        )

    def start(self) -> None:
        init = self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        if init.returncode:
            pytest.fail(f"initdb failed:\n{init.stdout}\n{init.stderr}")
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        )
        started = self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        )
        if started.returncode:
            log = self.log.read_text() if self.log.exists() else ""
            pytest.fail(f"pg_ctl start failed:\n{started.stdout}\n{started.stderr}\n{log}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database on the server: its URL."""
        name = f"store_{uuid.uuid4().hex[:12]}"
        engine = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        engine.dispose()
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    bin_dir = server_binaries()
    if bin_dir is None:
        pytest.skip(f"the PostgreSQL server (initdb, pg_ctl) is not installed: {INSTALL}")
    server = Server(bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
