"""Who may set dispositions: the reviewers file, signing in and out, and the session
(the sign-in and sign-out pages: .signin; sessions held in the store: .sessions).

The reviewers file is TOML, one table per reviewer under `reviewers`, holding an argon2id
hash of the password (argon2-cffi's PasswordHasher, its default parameters), the
reviewer's role and whether they are disabled; and, at its top, the settings of the
review (SETTINGS: `four_eyes`, whether "explained" and "not an error" wait for a
supervisor's approval):

    four_eyes = true

    [reviewers."Ann Smith"]
    password_hash = "$argon2id$v=19$m=65536,t=3,p=4$..."
    role = "supervisor"        # or "reviewer", the default
    disabled = true            # signs in no more; absent: false
    added_at = "2026-12-03T17:46:00Z"

`auditor review add-reviewer NAME [--role ROLE]` writes it (a changed password replaces
the hash), `disable-reviewer` and `enable-reviewer` set `disabled`. Every write is of the
whole file, through a temporary file renamed over it, under a lock (a lock file beside
it, flock): two commands at once both land, and a reader never sees half a file. The
server reads the file again whenever it changes: a reviewer added, removed, disabled or
given another password or role takes effect without a restart.

The session cookie is signed with a secret (Starlette's SessionMiddleware, itsdangerous)
kept in a file beside the reviewers file (`reviewers.secret`, made on the first start,
readable by its owner only); another secret (`create_app(secret=...)`) may be given
instead. The cookie carries the session's random token and nothing else that lasts
(a one-line notice for the next page at most): who is signed in is the store's session
row the token names (.sessions), looked up on every request; the form token (csrf) is
derived from it. The cookie is signed, not encrypted: nothing secret but the token is in it.

A wrong name and a wrong password are refused with the same sentence, and take the same
time (a name that is not in the file is checked against a hash all the same), so that
the page tells nobody which names exist. At most MAX_HASHING argon2 checks run at once
(each takes 64 MiB): a burst of sign-ins waits its turn instead of filling the memory.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import tempfile
import threading
import tomllib
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..store import StoreError
from . import csrf, sessions

DEFAULT_FILE = Path("reviewers.toml")
MIN_PASSWORD = 8
MAX_NAME = 64
MAX_PASSWORD = 1024  # argon2 takes any length; a page should not hash megabytes
REFUSED = "The name or password is not right."
SESSION_COOKIE = "auditor_review"
ROLES = ("reviewer", "supervisor")
SETTINGS = {"four_eyes": bool}  # the review's settings at the top of the file, and their type
MAX_HASHING = 2  # argon2 checks at once (64 MiB each)
HEADER = (
    "# Reviewers of `auditor review`: one table per reviewer, with an argon2 hash of the\n"
    "# password, the role (reviewer or supervisor) and whether disabled. Add one or change\n"
    "# a password with `auditor review add-reviewer NAME`; `disable-reviewer NAME`.\n"
)

_hasher = PasswordHasher()
_hashing = threading.BoundedSemaphore(MAX_HASHING)


class ReviewersError(Exception):
    """The reviewers file cannot be read or written, or a name or password is not allowed:
    one sentence."""


def check_name(name: str) -> str:
    """A reviewer's name as it is kept: printable, without spaces around it."""
    if not name or name != name.strip():
        raise ReviewersError("a reviewer's name is not empty and has no spaces around it")
    if len(name) > MAX_NAME:
        raise ReviewersError(f"a reviewer's name has at most {MAX_NAME} characters")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ReviewersError("a reviewer's name has no control characters")
    return name


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise ReviewersError(f"a password has at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise ReviewersError(f"a password has at most {MAX_PASSWORD} characters")
    return password


@dataclass(frozen=True)
class Reviewer:
    """A reviewer as the file has them."""

    name: str
    password_hash: str
    role: str = ROLES[0]
    disabled: bool = False


def _document(path: Path) -> dict[str, Any]:
    """The file as TOML ({} for a file that is not there)."""
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReviewersError(f"{path}: cannot be read ({exc})") from None


def _settings(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The settings at the top of the file (SETTINGS), checked; absent ones are left out."""
    out = {}
    for key, kind in SETTINGS.items():
        if key in data:
            if not isinstance(data[key], kind):
                raise ReviewersError(f"{path}: {key} is true or false")
            out[key] = data[key]
    return out


def read_settings(path: Path) -> dict[str, Any]:
    """The review's settings the file sets ({} for a file that is not there)."""
    return _settings(path, _document(path))


def _entries(path: Path, data: dict[str, Any] | None = None) -> dict[str, dict]:
    """The reviewers of the file by name, each entry with an argon2 password_hash, and a
    role and `disabled` where it has them ({} for a file that is not there)."""
    data = _document(path) if data is None else data
    reviewers = data.get("reviewers", {})
    if not isinstance(reviewers, dict):
        raise ReviewersError(f"{path}: `reviewers` is not a table of reviewers")
    for name, entry in reviewers.items():
        hashed = entry.get("password_hash") if isinstance(entry, dict) else None
        if not isinstance(hashed, str) or not hashed.startswith("$argon2"):
            raise ReviewersError(f"{path}: reviewer {name!r} has no argon2 password_hash")
        if entry.get("role", ROLES[0]) not in ROLES:
            raise ReviewersError(f"{path}: reviewer {name!r}: role is "
                                 f"{' or '.join(repr(r) for r in ROLES)}")
        if not isinstance(entry.get("disabled", False), bool):
            raise ReviewersError(f"{path}: reviewer {name!r}: disabled is true or false")
    return reviewers


def read_reviewers(path: Path, data: dict[str, Any] | None = None) -> dict[str, Reviewer]:
    """The reviewers of the file by name ({} for a file that is not there)."""
    return {
        name: Reviewer(name, entry["password_hash"], entry.get("role", ROLES[0]),
                       entry.get("disabled", False))
        for name, entry in _entries(path, data).items()
    }


def read_hashes(path: Path) -> dict[str, str]:
    """Each reviewer's name and password hash ({} for a file that is not there)."""
    return {name: entry["password_hash"] for name, entry in _entries(path).items()}


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (\\uXXXX for control characters)."""
    return json.dumps(text, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return _toml_string(str(value))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The reviewers file's lock (an flock on a file beside it, owner-only), held while
    the file is read, changed and written: two writers at once both land."""
    lock = path.with_name(path.name + ".lock")
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ReviewersError(f"{path}: cannot be locked ({exc.strerror or exc})") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # lets the lock go


def _write(path: Path, entries: dict[str, dict[str, Any]],
           settings: dict[str, Any] | None = None) -> None:
    """The file whole (its SETTINGS first, as they were), through a temporary file beside
    it renamed over it: a reader never sees half a file, and the file is readable by its
    owner only. (Under _locked.)"""
    lines = [HEADER]
    if settings:
        lines.append("\n")
        lines += [f"{key} = {_toml_value(value)}\n" for key, value in settings.items()]
    for name, entry in entries.items():
        lines.append(f"\n[reviewers.{_toml_string(name)}]\n")
        lines += [f"{key} = {_toml_value(value)}\n" for key, value in entry.items()]
    folder = path.resolve().parent
    if not folder.is_dir():
        raise ReviewersError(f"{path}: the folder {folder} does not exist")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("".join(lines))
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise ReviewersError(f"{path}: cannot be written ({exc})") from None


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def add_reviewer(path: Path, name: str, password: str, role: str | None = None) -> bool:
    """NAME with PASSWORD's hash in the reviewers file (made if need be), with ROLE (None:
    a new reviewer's is "reviewer", an existing one's is kept); True for a new reviewer,
    False where NAME's password (and role) was replaced. Disabled stays as it was."""
    check_name(name)
    check_password(password)
    if role is not None and role not in ROLES:
        raise ReviewersError(f"a role is {' or '.join(ROLES)}")
    hashed = _hasher.hash(password)  # (slow: before the lock)
    with _locked(path):
        data = _document(path)
        settings = _settings(path, data)
        entries = _entries(path, data)  # every entry well formed before one is added
        new = name not in entries
        entry = dict(entries.get(name, {}))
        entry["password_hash"] = hashed
        entry["role"] = role or entry.get("role", ROLES[0])
        entry.setdefault("added_at", _utc_now())
        if not new:
            entry["changed_at"] = _utc_now()
        entries[name] = entry
        _write(path, entries, settings)
    return new


def set_disabled(path: Path, name: str, disabled: bool) -> bool:
    """Disable NAME (or enable them again); False where they already were. A reviewers
    file without NAME is a ReviewersError."""
    with _locked(path):
        data = _document(path)
        settings = _settings(path, data)
        entries = _entries(path, data)
        if name not in entries:
            raise ReviewersError(f"{path}: there is no reviewer {name!r}")
        entry = dict(entries[name])
        if entry.get("disabled", False) == disabled:
            return False
        if disabled:
            entry["disabled"] = True
            entry["disabled_at"] = _utc_now()
        else:
            entry.pop("disabled", None)
            entry.pop("disabled_at", None)
        entries[name] = entry
        _write(path, entries, settings)
    return True


class Reviewers:
    """The reviewers file, read again whenever it changes: a reviewer added, removed or
    disabled (whose sessions then end), takes effect without a restart."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._reviewers: dict[str, Reviewer] = {}
        self._settings: dict[str, Any] = {}
        # what a name that is not in the file is checked against: made now, so that the
        # first such sign-in takes no longer than the others
        self._decoy = _hasher.hash(secrets.token_urlsafe(16))
        self.current()

    def current(self) -> dict[str, Reviewer]:
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            data = _document(self.path)
            self._reviewers = read_reviewers(self.path, data)
            self._settings = _settings(self.path, data)
            self._stamp = stamp
        return self._reviewers

    def four_eyes(self) -> bool:
        """Whether the file sets `four_eyes = true` (read again when the file changes)."""
        self.current()
        return bool(self._settings.get("four_eyes", False))

    def supervisors(self) -> list[str]:
        """The names of the supervisors not disabled."""
        return sorted(r.name for r in self.current().values()
                      if r.role == "supervisor" and not r.disabled)

    def names(self) -> set[str]:
        return set(self.current())

    def get(self, name: str) -> Reviewer | None:
        return self.current().get(name)

    def check(self, name: str, password: str) -> str | None:
        """None where NAME may sign in with PASSWORD, else why not: "unknown_name",
        "wrong_password" or "disabled". Every answer takes the time of one argon2 check
        (an unknown name is checked against a decoy hash), and at most MAX_HASHING run at
        once in this process."""
        entry = self.current().get(name)
        hashed = entry.password_hash if entry else self._decoy
        with _hashing:
            try:
                right = len(password) <= MAX_PASSWORD and _hasher.verify(hashed, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                right = False
        if entry is None:
            return "unknown_name"
        if not right:
            return "wrong_password"
        return "disabled" if entry.disabled else None

    def verify(self, name: str, password: str) -> bool:
        """Whether NAME is a reviewer, not disabled, with PASSWORD."""
        return self.check(name, password) is None


def secret_beside(path: Path) -> str:
    """The session secret kept beside the reviewers file, made (owner-only) when missing."""
    keep = path.with_suffix(".secret")
    try:
        if not keep.exists():
            handle = os.open(keep, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(handle, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
        secret = keep.read_text().strip()
    except FileExistsError:  # another server made it at the same moment
        secret = keep.read_text().strip()
    except OSError as exc:
        raise ReviewersError(f"{keep}: the session secret cannot be kept there ({exc})") from None
    if len(secret) < 32:
        raise ReviewersError(f"{keep}: the session secret is too short (remove the file)")
    return secret


# --- the session -------------------------------------------------------------------------


@dataclass
class SignInNeeded(Exception):
    """A page asked for without a session: to the sign-in page, and back after."""

    next_path: str


@dataclass(frozen=True)
class Signed:
    """The reviewer a request is from: their name, role, and session (its token's hash)."""

    name: str
    role: str
    session: str


def client_of(request: Request) -> str | None:
    """The client's address (behind a proxy, the proxy's)."""
    return request.client.host if request.client else None


def signed_in(request: Request) -> Signed | None:
    """The reviewer of the request's session while it is live (.sessions), else None (a
    session found ended is ended in the store then, and dropped from the cookie). Looked
    up once a request."""
    try:
        return request.state.signed
    except AttributeError:
        pass
    request.state.signed = _look_up(request)
    return request.state.signed


def _quietly(review, step) -> None:
    """A write the page does not wait on (SQLite: for a moment at most): a session touched
    or found ended. If the store is busy, the next request does it."""
    try:
        with review.touching() as conn:
            step(conn)
    except StoreError:
        pass


def _look_up(request: Request) -> Signed | None:
    review = request.app.state.review
    token = request.session.get(sessions.COOKIE_KEY)
    if review.read_only or not isinstance(token, str) or not token:
        return None
    hashed = sessions.token_hash(token)
    with review.reading() as conn:
        found = sessions.find(conn, hashed)
    if found is None:  # a token given before signing in: no session
        return None
    at = sessions.now()
    entry = review.reviewers.get(found["reviewer"])
    why = sessions.why_not_live(found, entry, review.idle, at)
    if why is not None:
        request.session.pop(sessions.COOKIE_KEY, None)
        if why != "ended":
            client = client_of(request)
            _quietly(review, lambda conn: sessions.end(conn, hashed, why, client, at))
        return None
    if at - found["last_seen"] >= review.touch_every:
        _quietly(review, lambda conn: sessions.touch(conn, hashed, at))
    return Signed(found["reviewer"], entry.role, hashed)


def reviewer_of(request: Request) -> str | None:
    """The signed-in reviewer's name (None: nobody, or a read-only server)."""
    signed = signed_in(request)
    return signed.name if signed else None


def _next_path(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def require_signed(request: Request) -> Signed | None:
    """The reviewer the page is for (None: a read-only server, where nobody signs in)."""
    if request.app.state.review.read_only:
        return None
    signed = signed_in(request)
    if signed is None:
        raise SignInNeeded(_next_path(request))
    return signed


def require_reviewer(request: Request) -> str | None:
    """The name of the reviewer the page is for (None: a read-only server)."""
    signed = require_signed(request)
    return signed.name if signed else None


def require_supervisor(request: Request) -> Signed:
    """A signed-in supervisor: anyone else is refused (403), a read-only server too."""
    if request.app.state.review.read_only:
        raise csrf.Refused()
    signed = require_signed(request)
    if signed is None or signed.role != "supervisor":
        raise csrf.Refused()
    return signed


def sign_in_redirect(request: Request, exc: SignInNeeded) -> Response:
    target = f"/sign-in?next={quote(exc.next_path, safe='')}"
    if request.method != "GET":
        return HTMLResponse(csrf.REFUSED_PAGE, status_code=403)
    if request.headers.get("hx-request"):  # htmx swaps a redirect's page in place: reload
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path of this site only (never //host or a URL)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
