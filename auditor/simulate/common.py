"""What the baccarat and blackjack simulators share."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import polars as pl

# truth.tsv: one row per planted fault, where it is and the rule that must find it
TRUTH_SCHEMA = {
    "table_id": pl.String,
    "shoe_id": pl.String,
    "round": pl.Int64,
    "seq": pl.Int64,
    "fault": pl.String,
    "rule_id": pl.String,
    "note": pl.String,
}


def truth_frame(truths: Iterable[Any]) -> pl.DataFrame:
    """The planted faults (objects with TRUTH_SCHEMA's attributes), in log order."""
    rows = list(truths)
    return pl.DataFrame(
        {name: [getattr(t, name) for t in rows] for name in TRUTH_SCHEMA},
        schema=TRUTH_SCHEMA,
    ).sort("table_id", "shoe_id", "round", "seq", nulls_last=False, maintain_order=True)


def offset_text(start: datetime) -> str:
    """The UTC offset written after each timestamp, e.g. "-05:00" ("" for local time)."""
    offset = start.utcoffset()
    if offset is None:
        return ""
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


# Dealers rotate: each deals a table for a down of 20 minutes, then moves to the next
# table, one more dealer than tables so that one is on a break in each down
DOWN_SECONDS = 20 * 60


def dealer_on(
    prefix: str, tables: int, table: pl.Expr, seconds: pl.Expr, event: pl.Expr
) -> pl.Expr:
    """`dealer_id` of a row (hand-history-v1 1.1): on round_start the dealer of the
    round, on shuffle who shuffled, null on the other rows. `table`: the table's index;
    `seconds`: the row's time on the table clock; dealers are named `prefix` and 01, 02..."""
    crew = tables + 1
    number = (table.cast(pl.Int64) + seconds.cast(pl.Int64) // DOWN_SECONDS) % crew + 1
    name = pl.lit(prefix) + number.cast(pl.String).str.zfill(2)
    return pl.when(event.cast(pl.String).is_in(["round_start", "shuffle"])).then(name)


class TableRounds:
    """Plays the tables' rounds in turn and hands out fault variants in turn.

    A subclass sets `tables` (each with `budget`, `done`, `play_round()`, `flush()`),
    `planner` (with `rounds_done`) and calls `TableRounds.__init__`.
    """

    tables: list[Any]
    planner: Any

    def __init__(self) -> None:
        self._turns: Counter[str] = Counter()

    def turn(self, kind: str, variants: tuple) -> Any:
        """The next variant of a fault kind, in turn, so that each one shows up."""
        self._turns[kind] += 1
        return variants[(self._turns[kind] - 1) % len(variants)]

    def run(self) -> None:
        longest = max((t.budget for t in self.tables), default=0)
        for _ in range(longest):
            for table in self.tables:
                if table.done < table.budget:
                    table.play_round()
                    self.planner.rounds_done += 1
        for table in self.tables:
            table.flush()


# --- shuffles that did not happen (BA108, BA109, BJ106, BJ107), planted only on request ---

# the kinds, by the name a caller asks for them
ORDER_FAULTS = ("shoe_reused", "decks_unshuffled")
ORDER_SHARE = 0.3  # the share of shoes (after a table's first) that get one, in turn


class OrderPlants:
    """Shoes dealt without a shuffle, planted only where asked (`kinds`, of ORDER_FAULTS),
    so that a simulation without them deals exactly as before: every draw for them comes
    from a generator of their own.

    - `shoe_reused`: a shoe dealt again in the order of an earlier shoe of its table (the
      simulators deal a table at a time, on clocks that overlap: another table's shoe may
      be dealt later), from a random point of it (a cut, no shuffle): it repeats that
      shoe's run;
    - `decks_unshuffled`: one deck put into the shoe in a new deck's order (each suit A to
      K or K to A, the suits in a random order) at a random place among shuffled cards.

    Cards are simulator indexes (rank x 4 + suit, auditor.ingest.vocabulary.CARDS).
    """

    def __init__(self, kinds: Iterable[str], seed: int) -> None:
        self.kinds = tuple(kinds)
        unknown = set(self.kinds) - set(ORDER_FAULTS)
        if unknown:
            raise ValueError(f"unknown order fault(s) {sorted(unknown)}; known: "
                             f"{', '.join(ORDER_FAULTS)}")
        self.rng = random.Random(f"order-{seed}")
        self.past: dict[str, list[list[int]]] = {}  # earlier shoes dealt as shuffled
        self.planted = 0

    def plant(self, shoe: list[int], table: str) -> tuple[list[int], str | None, str]:
        """The shoe to deal (`shoe`, shuffled, or one planted in its place), the kind
        planted (None) and a note. A table's first shoe is never planted."""
        if not self.kinds:
            return shoe, None, ""
        rng = self.rng
        past = self.past.setdefault(table, [])
        if not past or rng.random() >= ORDER_SHARE:
            past.append(list(shoe))
            return shoe, None, ""
        kind = self.kinds[self.planted % len(self.kinds)]
        if kind == "shoe_reused":
            same = [old for old in past if len(old) == len(shoe)]
            if not same:
                past.append(list(shoe))
                return shoe, None, ""
            old = rng.choice(same)
            # early enough that the run is dealt before the cover card, at any deck count
            cut = rng.randrange(0, max(1, len(old) // 6))
            self.planted += 1
            note = f"the order of an earlier shoe from its card {cut + 1}"
            return old[cut:] + old[:cut], kind, note
        # one deck in a new deck's order, the rest shuffled around it
        deck: list[int] = []
        for suit in rng.sample(range(4), 4):
            ranks = list(range(13)) if rng.random() < 0.5 else list(range(12, -1, -1))
            deck += [rank * 4 + suit for rank in ranks]
        rest = list(shoe)
        for card in range(52):
            rest.remove(card)
        at = rng.randrange(0, max(1, len(shoe) // 4))
        self.planted += 1
        return rest[:at] + deck + rest[at:], kind, f"a deck in new-deck order from card {at + 1}"
