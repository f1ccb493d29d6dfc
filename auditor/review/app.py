"""The review application: `create_app` builds it over a store, `serve` runs it (uvicorn).

FastAPI on Starlette: routes with typed query values, dependencies for the form token
(csrf.check, on the whole app) and the signed-in reviewer (auth.require_reviewer), a
signed cookie carrying the session's token and sessions held in the store (sessions);
jinja2 pages (autoescaped) with htmx swapping parts of them in place; uvicorn serves it,
bound to 127.0.0.1 unless told otherwise, answering only to the host names it is meant
for (hosts). Everything the pages load (htmx, the style sheet) is served by the app
itself: no network at run time.

Reads and writes go through the store's engine (store.engine): writes (dispositions) in
its transactions, which on SQLite take the write lock at once; reads on SQLite through an
engine of their own whose transactions begin deferred, so that pages keep answering
while an audit writes a run (they see the store as it was before that run).
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import jinja2
import sqlalchemy as sa
from fastapi import Depends, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.engine import Connection, Engine
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from ..rulesets import Rulesets, load_rulesets
from ..store.engine import BUSY_SECONDS, Store, connect, errors
from ..store.schema import migrate
from . import auth, csrf, events, pages, sessions, signin, supervise
from .hosts import CheckHost, Hosts
from .queries import RunFacts
from .throttle import Throttle

HERE = Path(__file__).resolve().parent
READS = ("GET", "HEAD")
TOUCH_WAIT = 1  # second a session's touch waits for SQLite's write lock
SECURITY_HEADERS = [
    # only this site's own scripts, styles and forms; never framed
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


@dataclass
class Review:
    """What every request reads: the store, the reviewers, the mode and the templates."""

    store: Store
    reader: Engine
    reviewers: auth.Reviewers | None
    read_only: bool
    rulesets: Rulesets
    templates: jinja2.Environment
    secret: str  # signs the cookie, and keys the form tokens (csrf)
    hosts: Hosts
    idle: timedelta = timedelta(minutes=sessions.IDLE_MINUTES)
    toucher: Engine | None = None
    throttle: Throttle = field(default_factory=Throttle)
    facts: RunFacts = field(default_factory=RunFacts)
    four_eyes_asked: bool = False  # --four-eyes

    @property
    def four_eyes(self) -> bool:
        """Whether "explained" and "not an error" wait for a supervisor's approval:
        --four-eyes, or `four_eyes = true` in the reviewers file (read again when the
        file changes)."""
        return self.four_eyes_asked or (
            self.reviewers is not None and self.reviewers.four_eyes())

    @property
    def touch_every(self) -> timedelta:
        """How old a session's last use may be before a request writes it again."""
        return min(sessions.TOUCH_EVERY, self.idle / 4)

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        with errors(self.store.name), self.reader.begin() as conn:
            yield conn

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        with self.store.begin() as conn:
            yield conn

    @contextmanager
    def touching(self) -> Iterator[Connection]:
        """A small write that waits for the store a moment at most (StoreError if busy)."""
        with errors(self.store.name), (self.toucher or self.store.engine).begin() as conn:
            yield conn

    def close(self) -> None:
        for engine in (self.reader, self.toucher):
            if engine is not None and engine is not self.store.engine:
                engine.dispose()
        self.store.close()


def _sqlite_engine(store: Store, begin: str, timeout: float) -> Engine:
    engine = sa.create_engine(store.url, connect_args={"timeout": timeout})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # no BEGIN of the driver's: ours below

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin)

    return engine


def _reader(store: Store) -> Engine:
    """The engine pages read through: on SQLite one whose transactions begin deferred
    (a read takes no write lock); on PostgreSQL the store's own."""
    if store.backend != "sqlite":
        return store.engine
    return _sqlite_engine(store, "BEGIN", BUSY_SECONDS)


def _toucher(store: Store) -> Engine | None:
    """The engine of a page's small writes: on SQLite one that waits TOUCH_WAIT for the
    write lock; on PostgreSQL the store's own (None)."""
    if store.backend != "sqlite":
        return None
    return _sqlite_engine(store, "BEGIN IMMEDIATE", TOUCH_WAIT)


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every value from a log or a note is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["utc"] = pages.utc_minutes
    env.filters["money"] = pages.money
    env.filters["dash"] = pages.dash
    env.filters["code"] = pages.code_spans
    return env


class ReadOnly:
    """A read-only server refuses every request that is not a read, before any route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in READS:
            await HTMLResponse(csrf.REFUSED_PAGE, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class HeadAsGet:
    """HEAD is answered wherever GET is (FastAPI's routes take only the methods they
    name): served as a GET, with GET's headers and no body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the parts of a streamed body, dropped
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class SecurityHeaders:
    """Every response says what the page may load, and that it is not to be cached."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + SECURITY_HEADERS
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    store_url: str,
    reviewers_path: Path = auth.DEFAULT_FILE,
    read_only: bool = False,
    secret: str | None = None,
    idle: timedelta = timedelta(minutes=sessions.IDLE_MINUTES),
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] = (),
    four_eyes: bool = False,
) -> FastAPI:
    """The application over the store at STORE_URL (which must exist; an older schema is
    upgraded, as any use of the store does). Reviewers sign in with the names and
    passwords of REVIEWERS_PATH, unless READ_ONLY (no sign-in, every write refused); a
    session ends after IDLE without a request. The session cookie is signed with SECRET,
    or the secret kept beside the reviewers file. Requests are served for the Host names
    of HOST (the address to be bound: its port is told later, `state.review.hosts.bind`)
    and ALLOWED_HOSTS (hosts). FOUR_EYES: "explained" and "not an error" are proposals
    until a supervisor approves them (also when the reviewers file sets `four_eyes`).
    Raises StoreError, ReviewersError, HostError or RulesetError with a sentence."""
    hosts = Hosts(host, allowed_hosts)
    store = connect(store_url, must_exist=True)
    reader = toucher = None
    try:
        with store.begin() as conn:
            migrate(conn)
        reviewers = None
        if not read_only:
            reviewers = auth.Reviewers(reviewers_path)
            if not reviewers.names():
                raise auth.ReviewersError(
                    f"{reviewers_path}: no reviewers yet; add one with "
                    "`auditor review add-reviewer NAME`, or serve with --read-only")
            secret = secret or auth.secret_beside(reviewers_path)
        reader, toucher = _reader(store), _toucher(store)
        state = Review(store, reader, reviewers, read_only, load_rulesets(), templates(),
                       # read-only: nobody signs in; a secret for this process only
                       secret=secret or secrets.token_hex(32), hosts=hosts, idle=idle,
                       toucher=toucher, four_eyes_asked=four_eyes)
    except Exception:
        for engine in (reader, toucher):
            if engine is not None and engine is not store.engine:
                engine.dispose()
        store.close()
        raise

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        state.close()

    app = FastAPI(
        title="auditor review",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(csrf.check)],
    )
    app.state.review = state
    app.add_middleware(
        SessionMiddleware,
        secret_key=state.secret,
        session_cookie=auth.SESSION_COOKIE,
        max_age=int(sessions.MAX_AGE.total_seconds()),  # the session's own limit
        same_site="strict",
        https_only=False,  # served on 127.0.0.1 over plain HTTP
    )
    if read_only:
        app.add_middleware(ReadOnly)
    app.add_middleware(HeadAsGet)
    app.add_middleware(CheckHost, hosts=hosts)  # before everything but the headers
    app.add_middleware(SecurityHeaders)
    app.add_exception_handler(csrf.Refused, csrf.refused)
    app.add_exception_handler(auth.SignInNeeded, auth.sign_in_redirect)
    pages.add_handlers(app)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(signin.router)
    app.include_router(events.router)
    app.include_router(supervise.router)
    app.include_router(pages.router)

    return app


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to HOST:PORT (port 0: any free one), or OSError with the reason."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    sock.listen(128)  # connections wait in the backlog until uvicorn takes them
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def addresses(bound: str, port: int) -> list[str]:
    """Where a server bound to the address BOUND (numeric, as the socket says) is opened:
    that address; or, bound to every address (0.0.0.0, ::), which no browser opens, this
    machine's loopback first, then its name and its other addresses, as other machines
    reach it."""
    import ipaddress

    ip = ipaddress.ip_address(bound.split("%")[0])
    if not ip.is_unspecified:
        return [_url(bound, port)]
    found = [_url("::1" if ip.version == 6 else "127.0.0.1", port)]
    name = socket.gethostname()
    if name and name != "localhost":
        found.append(_url(name, port))
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except OSError:
        infos = []
    for info in infos:
        other = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if other.is_loopback or other.is_link_local or other.version > ip.version:
            continue  # this machine only; an IPv6 address where IPv4 only is listened on
        url = _url(str(other), port)
        if url not in found:
            found.append(url)
    return found


def banner(store_name: str, mode: str, bound: str, port: int) -> list[str]:
    """What `auditor review` says on starting: the store and where to open it."""
    where = addresses(bound, port)
    lines = [f"auditor review: serving {store_name}{mode} at {where[0]} (Ctrl-C stops)"]
    if _url(bound, port) not in where:  # every address: the others it is reached at
        others = " or ".join(where[1:]) or "this machine's name or address"
        lines.append(f"auditor review: listening on every address of this machine; from "
                     f"other machines, open {others}")
    return lines


def loopback(host: str) -> bool:
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    import ipaddress

    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def serve(app: FastAPI, sock: socket.socket, log_level: str = "info") -> None:
    """Serve APP on the bound socket until stopped (Ctrl-C)."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, proxy_headers=False,
                            server_header=False, date_header=True)
    uvicorn.Server(config).run(sockets=[sock])
