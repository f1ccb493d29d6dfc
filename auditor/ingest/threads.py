"""Pieces of a file worked on two at a time, their results taken in order.

Reading a file in pieces leaves a core idle at times (one column's parse is long, a
write runs on one thread); polars lets go of Python while it works, so a second piece
in a second thread fills it. At most AT_ONCE pieces are in flight, and the next is
taken from `items` only as one is done: the memory follows the pieces in flight.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

AT_ONCE = 2

Item = TypeVar("Item")
Result = TypeVar("Result")


def in_order(work: Callable[[Item], Result], items: Iterable[Item]) -> Iterator[Result]:
    """`work` done on each item, AT_ONCE at a time, the results in the items' order."""
    items = iter(items)
    with ThreadPoolExecutor(AT_ONCE) as pool:
        pending = deque(pool.submit(work, item) for item in itertools.islice(items, AT_ONCE))
        while pending:
            done = pending.popleft()
            pending.extend(pool.submit(work, item) for item in itertools.islice(items, 1))
            yield done.result()
