"""Value maps for the vocabulary columns: each distinct sampled value, its count and a
proposed target (the synonym table's, or the format's own word); a value it cannot map
is a TODO. Where every value is already the format's own word, no map is needed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...ingest import vocabulary as v
from . import synonyms
from .notation import Todo

# What each vocabulary column may map to (as the loader checks it)
TARGETS: dict[str, tuple] = {
    "event": v.EVENTS + (v.NET_EVENT,), "game": v.GAMES, "target": v.TARGETS,
    "bet": v.BETS, "action": v.ACTIONS, "mode": v.MODES, "vig_mode": v.MODES,
    "winner": v.WINNERS, "exposure": v.EXPOSURES, "accepted": (True, False),
    "disclosed": (True, False),
}


@dataclass
class ValueMap:
    column: str
    entries: list[tuple[str, str | bool | Todo, int]] = field(default_factory=list)
    needed: bool = True  # False: every value is the format's own word
    evidence: str = ""


def value_map(column: str, values: Counter, *, actions_list: bool = False,
              game: str | None = None) -> ValueMap:
    """The map of `column` (an export's words -> the format's) for the sampled `values`
    (word -> count). `actions_list`: a blackjack coups source's list of decisions, whose
    map may also say `insurance`."""
    targets = TARGETS[column] + (("insurance",) if actions_list else ())
    known = synonyms.words(column)
    if column == "bet" and game is not None:
        allowed = set(v.BACCARAT_BETS if game == "baccarat" else v.BLACKJACK_BETS)
        known = {w: t for w, t in known.items() if t in allowed}
    found = ValueMap(column)
    own = 0
    for value, count in sorted(values.items(), key=lambda x: (-x[1], x[0])):
        if value in targets and not isinstance(value, bool):
            found.entries.append((value, value, count))
            own += 1
            continue
        target = known.get(synonyms.fold(value))
        if target is not None and (target in targets or target == ""):
            found.entries.append((value, target, count))
        else:
            choices = ", ".join(str(t).lower() if isinstance(t, bool) else t
                                for t in targets)
            found.entries.append((value, Todo(f"one of {choices}, or \"\" (no value)", ""),
                                  count))
    found.needed = own < len(found.entries)
    mapped = sum(1 for _, t, _ in found.entries if not isinstance(t, Todo))
    total = sum(values.values())
    found.evidence = (f"{len(found.entries)} distinct value(s) in {total:,} sampled cells; "
                      f"{mapped} mapped by the synonym table or as the format's own word")
    return found
