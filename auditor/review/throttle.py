"""Sign-in throttling: after a few failed sign-ins for one name, or from one client address,
each further try waits longer (429, with Retry-After), in this process.

Each name and each address has a count of failures. The first FREE_TRIES go through as
they come (several at once too); past them, one try at a time, each after a wait that
doubles with every failure (FIRST_WAIT, then twice that, up to MAX_WAIT). A try held back
is answered at once, before any password is checked, so a burst costs nothing but the
answers. A sign-in that succeeds clears its name's count (not its address's: a reviewer
signing in as themselves does not buy an address more guesses at other names); a count
with no failure for FORGET_AFTER is forgotten. At most MAX_KEYS names and addresses are
kept, the oldest let go first.

The argon2 checks themselves are bounded apart (auth: at most two at once), so that
memory stays flat whatever the burst. Behind a proxy every client has the proxy's
address: their failures count together.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

FREE_TRIES = 5
FIRST_WAIT = 2.0  # seconds
MAX_WAIT = 300.0
FORGET_AFTER = 900.0
MAX_KEYS = 10_000
MAX_NAME = 200  # characters of a name kept as its key


class Held(Exception):
    """A sign-in held back: try again in SECONDS. KIND: "name" or "address", the count that
    held it; FIRST: the first try held since that count's last failure (the one the trail
    records)."""

    def __init__(self, seconds: int, kind: str, first: bool) -> None:
        super().__init__(f"held back by {kind} for {seconds} s")
        self.seconds, self.kind, self.first = seconds, kind, first


@dataclass
class _Count:
    failures: int = 0
    pending: int = 0  # tries being checked now
    until: float = 0.0  # no try before this moment
    last: float = 0.0  # the last failure
    told: bool = False  # a held try was reported since the last failure


class Throttle:
    def __init__(self, clock: Callable[[], float] = time.monotonic, free_tries: int = FREE_TRIES,
                 first_wait: float = FIRST_WAIT, max_wait: float = MAX_WAIT,
                 forget_after: float = FORGET_AFTER, max_keys: int = MAX_KEYS) -> None:
        self.clock = clock
        self.free_tries, self.first_wait, self.max_wait = free_tries, first_wait, max_wait
        self.forget_after, self.max_keys = forget_after, max_keys
        self._lock = threading.Lock()
        self._counts: OrderedDict[tuple[str, str], _Count] = OrderedDict()

    def wait_after(self, failures: int) -> float:
        """The wait after this many failures (0 below FREE_TRIES)."""
        if failures < self.free_tries:
            return 0.0
        return min(self.max_wait, self.first_wait * 2 ** (failures - self.free_tries))

    def _count(self, key: tuple[str, str], now: float) -> _Count:
        count = self._counts.get(key)
        if count is not None and count.pending == 0 and now >= count.until and \
                now - count.last > self.forget_after:
            count = None  # forgotten
        if count is None:
            count = self._counts[key] = _Count()
            while len(self._counts) > self.max_keys:  # the oldest first, never one in use
                oldest = next((k for k, c in self._counts.items() if c.pending == 0), None)
                if oldest is None or oldest == key:
                    break
                del self._counts[oldest]
        self._counts.move_to_end(key)
        return count

    def attempt(self, name: str, address: str | None) -> Attempt:
        """A try at signing in as NAME from ADDRESS, or Held (raised) where it must wait."""
        keys = [("name", name[:MAX_NAME]), ("address", address or "")]
        with self._lock:
            now = self.clock()
            counts = [self._count(key, now) for key in keys]
            for (kind, _), count in zip(keys, counts, strict=True):
                wait = count.until - now
                if wait <= 0 and count.failures + count.pending >= self.free_tries \
                        and count.pending:
                    wait = self.wait_after(count.failures + count.pending)  # one at a time
                if wait > 0:
                    first, count.told = not count.told, True
                    raise Held(max(1, math.ceil(wait)), kind, first)
            for count in counts:
                count.pending += 1
        return Attempt(self, keys)

    def _end(self, keys: list[tuple[str, str]], outcome: str) -> None:
        with self._lock:
            now = self.clock()
            for kind, key in keys:
                count = self._counts.get((kind, key))
                if count is None:
                    continue
                count.pending = max(0, count.pending - 1)
                if outcome == "failed":
                    count.failures += 1
                    count.last = now
                    count.told = False
                    count.until = now + self.wait_after(count.failures)
                elif outcome == "succeeded" and kind == "name" and count.pending == 0:
                    del self._counts[(kind, key)]


class Attempt:
    """One try let through: say how it went (`failed`, `succeeded`); a try that ends
    otherwise (an error) only lets its place go."""

    def __init__(self, throttle: Throttle, keys: list[tuple[str, str]]) -> None:
        self.throttle, self.keys, self.done = throttle, keys, False

    def _finish(self, outcome: str) -> None:
        if not self.done:
            self.done = True
            self.throttle._end(self.keys, outcome)

    def failed(self) -> None:
        self._finish("failed")

    def succeeded(self) -> None:
        self._finish("succeeded")

    def __enter__(self) -> Attempt:
        return self

    def __exit__(self, *_exc) -> None:
        self._finish("released")
