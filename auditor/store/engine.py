"""Opening a store from its URL, and one transaction at a time on it.

Two audits may write to one store at once, and both must land:

- SQLite: every transaction begins with `BEGIN IMMEDIATE`, which takes the database's
  write lock at once (not at the first write, where two readers turned writers would
  deadlock); the other writer waits for it up to BUSY_SECONDS. The driver's own
  transaction handling is turned off so that this BEGIN is the only one.
- PostgreSQL: each run is its own rows under a run id of its own, so two transactions
  never touch the same row; creating or upgrading the schema holds an advisory lock.

Every database error comes out as a StoreError of one line, the URL's password hidden.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from . import StoreError

# how long a writer waits for another one's transaction to end (SQLite's busy timeout)
BUSY_SECONDS = 120
# how long connecting to a PostgreSQL server may take before the store is unreachable
CONNECT_SECONDS = 15
EXAMPLES = "sqlite:///audits.db or postgresql+psycopg://user@host/dbname"


@dataclass
class Store:
    engine: Engine
    url: URL

    @property
    def name(self) -> str:
        """The URL as it may be printed: without its password."""
        return shown(self.url)

    @property
    def backend(self) -> str:
        return self.url.get_backend_name()

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        with errors(self.name), self.engine.begin() as conn:
            yield conn

    def close(self) -> None:
        self.engine.dispose()


def shown(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def parse(url: str) -> URL:
    """The URL, checked: SQLite on a file, or PostgreSQL (through psycopg 3, also when the
    URL names no driver)."""
    try:
        parsed = sa.make_url(url)
    except (ArgumentError, ValueError):
        raise StoreError(f"{url!r} is not a database URL (e.g. {EXAMPLES})") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(f"{shown(parsed)}: the store is SQLite or PostgreSQL (e.g. {EXAMPLES})")
    if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise StoreError(
            f"{shown(parsed)} is a database in memory, which keeps nothing: "
            "name a file, e.g. sqlite:///audits.db"
        )
    if backend == "sqlite":  # the file in full, as a run's comparison names its store
        parsed = parsed.set(database=str(Path(parsed.database).resolve()))
    return parsed


def connect(url: str, must_exist: bool = False) -> Store:
    """A store on `url`. `must_exist`: a SQLite file that is not there is an error rather
    than a new, empty store (for reading one)."""
    parsed = parse(url)
    if parsed.get_backend_name() == "sqlite":
        return Store(_sqlite(parsed, must_exist), parsed)
    try:
        engine = sa.create_engine(parsed, connect_args={"connect_timeout": CONNECT_SECONDS})
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(f"{shown(parsed)}: {exc}") from None
    return Store(engine, parsed)


def _sqlite(url: URL, must_exist: bool) -> Engine:
    path = Path(url.database)
    if must_exist and not path.is_file():
        raise StoreError(f"{shown(url)}: no store at {path} (`auditor audit --store` makes one)")
    if not path.parent.is_dir():
        raise StoreError(f"{shown(url)}: the folder {path.parent} does not exist")
    _owner_only(url, path)
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_SECONDS})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # no BEGIN of the driver's: ours below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _owner_only(url: URL, path: Path) -> None:
    """A store the auditor creates is readable and writable by its owner only (findings,
    reviewers' notes, the trail): the file is made empty (which SQLite takes for a new
    database) with mode 0600 before SQLite opens it; SQLite gives its journal the file's
    mode. A store that is there already keeps the mode it has."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise StoreError(f"{shown(url)}: cannot be created ({exc.strerror or exc})") from None
    os.close(handle)


@contextmanager
def errors(name: str) -> Iterator[None]:
    """A database error as a StoreError naming the store: its first line only (a driver's
    message may run to several, and may quote the SQL)."""
    try:
        yield
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise StoreError(f"{name}: {reason[0] if reason else type(exc).__name__}") from exc
