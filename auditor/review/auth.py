"""Who may set dispositions: the reviewers file, signing in and out, and the signed session
(the sign-in and sign-out pages: .signin).

The reviewers file is TOML, one table per reviewer under `reviewers`, holding an argon2id
hash of the password (argon2-cffi's PasswordHasher, its default parameters):

    [reviewers."Ann Smith"]
    password_hash = "$argon2id$v=19$m=65536,t=3,p=4$..."
    added_at = "2026-12-03T17:46:00Z"

`auditor review add-reviewer NAME` writes it (a changed password replaces the hash). The
session is a cookie signed with a secret (Starlette's SessionMiddleware, itsdangerous):
the secret is kept in a file beside the reviewers file (`reviewers.secret`, made on the
first start, readable by its owner only), so that a restart keeps reviewers signed in;
another secret (`create_app(secret=...)`) may be given instead. The cookie holds the
reviewer's name and the form token (csrf); it is signed, not encrypted: nothing secret is
put in it.

A wrong name and a wrong password are refused with the same sentence, and take the same
time (a name that is not in the file is checked against a hash all the same), so that
the page tells nobody which names exist.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import tomllib
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from . import csrf

DEFAULT_FILE = Path("reviewers.toml")
MIN_PASSWORD = 8
MAX_NAME = 64
MAX_PASSWORD = 1024  # argon2 takes any length; a page should not hash megabytes
REFUSED = "The name or password is not right."
SESSION_COOKIE = "auditor_review"
SESSION_HOURS = 10  # a working shift and some: then sign in again
HEADER = (
    "# Reviewers of `auditor review`: one table per reviewer, with an argon2 hash of the\n"
    "# password. Add or change one with `auditor review add-reviewer NAME`.\n"
)

_hasher = PasswordHasher()


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


def _entries(path: Path) -> dict[str, dict]:
    """The reviewers of the file by name, each entry with an argon2 password_hash ({} for a
    file that is not there)."""
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ReviewersError(f"{path}: cannot be read ({exc})") from None
    reviewers = data.get("reviewers", {})
    if not isinstance(reviewers, dict):
        raise ReviewersError(f"{path}: `reviewers` is not a table of reviewers")
    for name, entry in reviewers.items():
        hashed = entry.get("password_hash") if isinstance(entry, dict) else None
        if not isinstance(hashed, str) or not hashed.startswith("$argon2"):
            raise ReviewersError(f"{path}: reviewer {name!r} has no argon2 password_hash")
    return reviewers


def read_hashes(path: Path) -> dict[str, str]:
    """Each reviewer's name and password hash ({} for a file that is not there)."""
    return {name: entry["password_hash"] for name, entry in _entries(path).items()}


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (\\uXXXX for control characters)."""
    return json.dumps(text, ensure_ascii=False)


def _write(path: Path, entries: dict[str, dict[str, str]]) -> None:
    """The file whole, through a temporary file beside it renamed over it: a reader never
    sees half a file, and the file is readable by its owner only."""
    lines = [HEADER]
    for name, entry in entries.items():
        lines.append(f"\n[reviewers.{_toml_string(name)}]\n")
        lines += [f"{key} = {_toml_string(value)}\n" for key, value in entry.items()]
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


def add_reviewer(path: Path, name: str, password: str) -> bool:
    """NAME with PASSWORD's hash in the reviewers file (made if need be); True for a new
    reviewer, False where NAME's password was replaced."""
    check_name(name)
    check_password(password)
    # every entry well formed before one is added
    entries = {n: {k: str(v) for k, v in e.items()} for n, e in _entries(path).items()}
    new = name not in entries
    entries[name] = {
        "password_hash": _hasher.hash(password),
        "added_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _write(path, entries)
    return new


class Reviewers:
    """The reviewers file, read again whenever it changes: a reviewer added, or removed
    (whose session then ends), takes effect without a restart."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._hashes: dict[str, str] = {}
        # what a name that is not in the file is checked against: made now, so that the
        # first such sign-in takes no longer than the others
        self._decoy = _hasher.hash(secrets.token_urlsafe(16))
        self.current()

    def current(self) -> dict[str, str]:
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._hashes = read_hashes(self.path)
            self._stamp = stamp
        return self._hashes

    def names(self) -> set[str]:
        return set(self.current())

    def verify(self, name: str, password: str) -> bool:
        """Whether NAME is a reviewer with PASSWORD; an unknown name costs the same time."""
        if len(password) > MAX_PASSWORD:
            return False
        hashed = self.current().get(name)
        try:
            return _hasher.verify(hashed or self._decoy, password) and hashed is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False


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


def reviewer_of(request: Request) -> str | None:
    """The signed-in reviewer, while the reviewers file still names them."""
    name = request.session.get("reviewer")
    if name is None:
        return None
    if name not in request.app.state.review.reviewers.names():
        request.session.clear()
        return None
    return name


def require_reviewer(request: Request) -> str | None:
    """The reviewer the page is for (None: a read-only server, where nobody signs in)."""
    if request.app.state.review.read_only:
        return None
    name = reviewer_of(request)
    if name is None:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInNeeded(path)
    return name


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
