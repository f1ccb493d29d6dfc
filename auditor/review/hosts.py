"""The host names the server answers to: the address it is bound to (and, bound to the
loopback or to every address, 127.0.0.1, localhost and ::1), on the port it listens on,
and the names given with `auditor review --allowed-host`. Any other Host header gets 400
before anything else runs, in --read-only too.

This is what stops DNS rebinding: a page of attacker.example whose name is made to
resolve to 127.0.0.1 reaches the server, but its requests say `Host: attacker.example`,
and are refused; without this, a read-only server (no sign-in) would hand that page
every finding and note.

A name given with a port (`review.example:8443`) is served on that port only; a name
alone on any port, or with none (what a TLS proxy in front usually sends). The bound
address and the loopback names are served on the bound port (or with no port where that
is 80). Before the port is known (`create_app` alone, not yet bound), on any port.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("127.0.0.1", "localhost", "::1")
REFUSED_PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not served</title>'
    '</head><body><p id="bad-host">This server does not answer to that host name. '
    "(<code>auditor review --allowed-host NAME</code> adds one.)</p></body></html>"
)


class HostError(ValueError):
    """An --allowed-host value that is no host name: one sentence."""


def split(value: str) -> tuple[str, int | None] | None:
    """A Host header's name (lower case, IPv6 without brackets, no final dot) and port
    (None: none given); None where it is not a host."""
    value = value.strip()
    if not value:
        return None
    if value.startswith("["):  # [IPv6]:port
        close = value.find("]")
        if close < 0:
            return None
        name, rest = value[1:close], value[close + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") > 1:  # a bare IPv6 address: no port
        name, port_text = value, None
    else:
        name, _, port_text = value.partition(":")
        port_text = port_text if ":" in value else None
    if port_text is not None:
        if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
            return None
        port = int(port_text)
    else:
        port = None
    name = name.lower().rstrip(".")
    if not name or any(c in name for c in "/\\@ \t?#"):
        return None
    return name, port


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host == ""


def _loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Hosts:
    """Which Host headers are served (see the module's text)."""

    def __init__(self, bound: str = "127.0.0.1", allowed: Iterable[str] = (),
                 port: int | None = None) -> None:
        own = split(bound)
        self.bound_names = {own[0]} if own and not _unspecified(bound) else set()
        if _loopback(bound) or _unspecified(bound):
            self.bound_names.update(LOOPBACK)
        self.port = port
        self.named: dict[str, set[int | None]] = {}  # --allowed-host: name -> ports (None: any)
        for value in allowed:
            parsed = split(value)
            if parsed is None:
                raise HostError(f"--allowed-host {value!r} is not a host name (NAME or NAME:PORT)")
            self.named.setdefault(parsed[0], set()).add(parsed[1])

    def bind(self, port: int) -> None:
        """The port the server listens on, once bound."""
        self.port = port

    def allows(self, header: str | None) -> bool:
        parsed = split(header) if header else None
        if parsed is None:
            return False
        name, port = parsed
        ports = self.named.get(name)
        if ports is not None and (None in ports or port in ports):
            return True
        if name in self.bound_names:
            if self.port is None:
                return True
            return port == self.port or (port is None and self.port == 80)
        return False


class CheckHost:
    """Refuse (400) every HTTP request whose Host is not one the server answers to."""

    def __init__(self, app: ASGIApp, hosts: Hosts) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            header = None
            for key, value in scope.get("headers", []):
                if key == b"host":
                    if header is not None:  # two Host headers: which one is meant?
                        header = None
                        break
                    header = value.decode("latin-1")
            if not self.hosts.allows(header):
                if scope["type"] == "http":
                    await HTMLResponse(REFUSED_PAGE, status_code=400)(scope, receive, send)
                else:
                    await send({"type": "websocket.close", "code": 1008})
                return
        await self.app(scope, receive, send)
