"""What the cells tell of how an export writes things: its card notation (with `index`
base and suit order where they can be told, a `pattern` for other notations, `points`),
its timestamp format and offset, and how it writes a list in one cell.

Each guess is a Guess: the keys to write (a value that cannot be told is a Todo) and the
evidence, in words, for the comment beside them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import polars as pl

from ...ingest.vocabulary import RANKS
from ..cards import PATTERNS, POINT_TOKENS
from .synonyms import fold


@dataclass(frozen=True)
class Todo:
    """A decision the draft leaves to a person: written as the text "TODO: ...", which
    the profile loader refuses until it is settled. `provisional`: a value the coverage
    preview may read it as meanwhile (the spec's default, or the first choice), where
    one will do for that; never written into the profile."""

    text: str
    provisional: object = None


@dataclass
class Guess:
    keys: dict = field(default_factory=dict)
    evidence: str = ""


def counted(values: Counter, limit: int = 4) -> str:
    """`XX` (4), `--` (1), ... for messages."""
    shown = ", ".join(f"`{v}` ({n:,})" for v, n in values.most_common(limit))
    more = len(values) - limit
    return shown + (f" and {more} more" if more > 0 else "")


# --- cards

# rank_suit and suit_rank as the profile's reader reads them
_NAMED = {notation: re.compile(pattern) for notation, pattern in PATTERNS.items()}
_INTEGER = re.compile(r"^\d+(\.0*)?$")
_NONE_WORDS = {"none", "null", "na", "nil", "empty", "nocard", "blank"}
# Rank and suit tokens a `pattern` notation may write, by the rank or suit they are
_RANK_WORDS = {"ace": "A", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
               "seven": "7", "eight": "8", "nine": "9", "ten": "T", "jack": "J",
               "queen": "Q", "king": "K", **{r.lower(): r for r in RANKS}, "10": "T"}
_SUIT_WORDS = {"s": "S", "h": "H", "d": "D", "c": "C", "spade": "S", "spades": "S",
               "heart": "H", "hearts": "H", "diamond": "D", "diamonds": "D", "club": "C",
               "clubs": "C", "pik": "S", "coeur": "H", "carreau": "D", "trefle": "C",
               "\u2660": "S", "\u2665": "H", "\u2666": "D", "\u2663": "C",
               "\u2664": "S", "\u2661": "H", "\u2662": "D", "\u2667": "C"}
_SEPARATORS = ("", " ", "-", "_", "/", ":", "|", ".", " of ", " - ", "of")
# Fewer cells than this cannot tell `points` from an `index` that happened to stay low
POINTS_EVIDENCE = 100


def is_card_like(cell: str) -> bool:
    """Whether a cell looks like a card in some notation (for column roles)."""
    return bool(any(regex.match(cell) for regex in _NAMED.values()) or _INTEGER.match(cell)
                or _split_card(cell) is not None)


def none_tokens(cells: Counter) -> list[str]:
    """The cells that mean "no card": punctuation only, or a word such as `none`."""
    return sorted(c for c in cells if re.fullmatch(r"[-_.*/?]+", c) or fold(c) in _NONE_WORDS)


def card_notation(cells: Counter, game: str | None) -> Guess:
    """The notation of the card cells `cells` (text -> count; none cells removed)."""
    total = sum(cells.values())
    if not total:
        return Guess({"notation": Todo("the card notation: no card cell was sampled "
                                       "(rank_suit, suit_rank, index, pattern or points)")},
                     "no card cell in the sample")
    for notation, regex in _NAMED.items():
        unmatched = Counter({c: n for c, n in cells.items() if not regex.match(c)})
        if sum(unmatched.values()) <= total * 0.01:
            return Guess({"notation": notation}, _matched(notation, total, unmatched))
    numbers = Counter({c: n for c, n in cells.items() if _INTEGER.match(c)})
    if sum(numbers.values()) >= total * 0.99:
        return _numeric(cells, numbers, total, game)
    points = Counter({c: n for c, n in cells.items() if c.upper() in POINT_TOKENS})
    if sum(points.values()) >= total * 0.99:
        return _points(cells, total, game)
    return _pattern(cells, total)


def _matched(notation: str, total: int, unmatched: Counter) -> str:
    matched = total - sum(unmatched.values())
    said = f"read as {notation}: {matched:,} of {total:,} sampled cells match"
    return said + (f"; unmatched: {counted(unmatched)}" if unmatched else "")


def _numeric(cells: Counter, numbers: Counter, total: int, game: str | None) -> Guess:
    values = {int(float(c)) for c in numbers}
    unmatched = Counter({c: n for c, n in cells.items() if c not in numbers})
    if max(values) <= 11:
        return _points(cells, total, game)
    keys: dict = {"notation": "index"}
    evidence = (f"read as index: {sum(numbers.values()):,} of {total:,} sampled cells are "
                f"integers, from {min(values)} to {max(values)}")
    if 0 in values and 52 not in values:
        keys["index_base"] = 0
        evidence += "; 0 is among them: index_base 0"
    elif 52 in values and 0 not in values:
        keys["index_base"] = 1
        evidence += "; 52 is among them: index_base 1"
    else:
        keys["index_base"] = Todo("0 or 1: the sample does not tell (neither 0 nor 52 "
                                  "is among its cells)" if 0 not in values else
                                  "0 or 1: both 0 and 52 are among the cells", 1)
    if max(values) > 52:
        evidence += f"; {max(values)} is beyond any index of 52 cards"
    keys["index_suits"] = Todo('the suits\' order of the index, e.g. "SHDC" (cards '
                               "0-12 or 1-13 of one suit, then the next): integers cannot "
                               "tell it", "SHDC")
    if unmatched:
        evidence += f"; unmatched: {counted(unmatched)}"
    return Guess(keys, evidence)


def _points(cells: Counter, total: int, game: str | None) -> Guess:
    tokens = Counter()
    for c, n in cells.items():
        tokens[str(int(float(c))) if _INTEGER.match(c) else c.upper()] += n
    values = sorted(tokens)
    unmatched = Counter({c: n for c, n in tokens.items() if c not in POINT_TOKENS})
    evidence = (f"read as points: {total - sum(unmatched.values()):,} of {total:,} sampled "
                f"cells are card values ({', '.join(values[:14])})")
    if unmatched:
        evidence += f"; unmatched: {counted(unmatched)}"
    if total < POINTS_EVIDENCE:
        return Guess({"notation": Todo(
            f"points or index: {total} card cells, all 11 or less, are too few to tell "
            "an index of 52 cards from point values")}, evidence)
    return Guess({"notation": "points"}, evidence)


def _alternation(words) -> str:
    return "|".join(map(re.escape, sorted(words, key=len, reverse=True)))


_R, _S = _alternation(_RANK_WORDS), _alternation(_SUIT_WORDS)
_SEP = "|".join(map(re.escape, _SEPARATORS[1:]))
_RANK_FIRST = re.compile(rf"^(?P<rank>{_R})(?P<sep>{_SEP}|)(?P<suit>{_S})$", re.IGNORECASE)
_SUIT_FIRST = re.compile(rf"^(?P<suit>{_S})(?P<sep>{_SEP}|)(?P<rank>{_R})$", re.IGNORECASE)


def _split_card(cell: str) -> tuple[str, str, str, bool] | None:
    """(rank token, separator, suit token, rank first) where the cell is a rank and a
    suit in words or symbols the draft knows, else None."""
    if len(cell) > 24:
        return None
    for regex, first in ((_RANK_FIRST, True), (_SUIT_FIRST, False)):
        found = regex.match(cell)
        if found:
            return found["rank"], found["sep"], found["suit"], first
    return None


def _pattern(cells: Counter, total: int) -> Guess:
    split = {c: _split_card(c) for c in cells}
    shapes = Counter()
    for c, parts in split.items():
        if parts is not None:
            shapes[(parts[1], parts[3])] += cells[c]
    if not shapes:
        return Guess({"notation": Todo("the card notation: the cells match none the draft "
                                       f"knows, e.g. {counted(cells, 3)}")},
                     f"{total:,} card cells, none in a notation the draft knows")
    (sep, rank_first), matched = shapes.most_common(1)[0]
    chosen = [split[c] for c in cells if split[c] and split[c][1:4:2] == (sep, rank_first)]
    ranks = sorted({parts[0] for parts in chosen}, key=lambda t: (-len(t), t))
    suits = sorted({parts[2] for parts in chosen}, key=lambda t: (-len(t), t))
    rank = f"(?P<rank>{'|'.join(map(re.escape, ranks))})"
    suit = f"(?P<suit>{'|'.join(map(re.escape, suits))})"
    pattern = f"^{rank}{re.escape(sep)}{suit}$" if rank_first else f"^{suit}{re.escape(sep)}{rank}$"
    keys: dict = {"notation": "pattern", "pattern": pattern}
    rank_map = {t: _RANK_WORDS[t.casefold()] for t in ranks
                if not re.fullmatch(r"10|[2-9AaTtJjQqKk]", t)}
    suit_map = {t: _SUIT_WORDS[t.casefold()] for t in suits if t.upper() not in "SHDC"
                or len(t) != 1}
    if rank_map:
        keys["ranks"] = rank_map
    if suit_map:
        keys["suits"] = suit_map
    unmatched = Counter({c: n for c, n in cells.items()
                         if not (split[c] and split[c][1:4:2] == (sep, rank_first))})
    evidence = (f"read as a pattern: {matched:,} of {total:,} sampled cells are a "
                f"{'rank then a suit' if rank_first else 'suit then a rank'}"
                + (f" separated by `{sep}`" if sep else "")
                + (f"; unmatched: {counted(unmatched)}" if unmatched else ""))
    if matched < total * 0.99:
        keys["notation"] = Todo(f"the card notation: a pattern reads only {matched:,} of "
                                f"{total:,} sampled cells")
    return Guess(keys, evidence)


# --- times

# Formats tried on a time column, in this order; ISO 8601 (the default) first
_DATES = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d-%m-%Y",
          "%m-%d-%Y", "%Y%m%d")
_CLOCKS = (" %H:%M:%S", " %H:%M:%S%.f", "T%H:%M:%S", "T%H:%M:%S%.f", " %H:%M")
_OFFSETS = ("", "%z", " %z", "%:z", "Z")
ISO = "ISO 8601"


def _iso(cell: pl.Expr) -> pl.Expr:
    """The default reading (times.py): ISO 8601, a space allowed for the T, Z or an
    offset optional."""
    iso = cell.str.replace(r"^(\d{4}-\d\d-\d\d) ", "${1}T").str.replace(r"Z$", "+00:00")
    return pl.coalesce(
        iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%z", strict=False, time_zone="UTC")
        .dt.replace_time_zone(None),
        iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False))


_DATE_LIKE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{8}")


def time_formats(cells: pl.Series) -> dict[str, pl.Series]:
    """Each format (ISO for the default) that reads every non-empty cell of `cells`, with
    what it reads them as."""
    cells = cells.drop_nulls()
    if not cells.len() or not _DATE_LIKE.search(cells[0]):
        return {}
    frame = cells.to_frame("c")
    tried = {ISO: _iso(pl.col("c"))}
    for date in _DATES:
        for clock in _CLOCKS:
            for offset in _OFFSETS:
                fmt = date + clock + offset
                zoned = "z" in offset.lower()
                tried[fmt] = pl.col("c").str.to_datetime(
                    fmt.replace("Z", "%#z") if offset == "Z" else fmt, strict=False,
                    **({"time_zone": "UTC"} if zoned else {}))
    read = frame.select(expr.alias(str(n)) for n, expr in enumerate(tried.values()))
    found = {}
    for n, fmt in enumerate(tried):
        column = read.get_column(str(n))
        if column.null_count() == 0:
            found[fmt] = column.dt.replace_time_zone(None) if column.dtype.time_zone \
                else column
    return found


def timestamp_format(columns: dict[str, pl.Series]) -> Guess:
    """The source's timestamp_format from its time columns (name -> cells)."""
    cells = pl.concat([s.rename("c") for s in columns.values()]) if columns else pl.Series(
        "c", [], pl.String)
    cells = cells.drop_nulls()
    if not cells.len():
        return Guess({}, "")
    count = cells.len()
    cells = cells.unique(maintain_order=True)  # each distinct time read once
    found = time_formats(cells)
    sample = f"`{cells[0]}`"
    if not found:
        return Guess({"timestamp_format": Todo(
            f"the times' format (polars strftime): none the draft tries reads every "
            f"sampled cell, e.g. {sample}")}, f"{count:,} time cells")
    offset = (any("z" in f.lower() for f in found)
              or cells.str.contains(r"(Z|[+-]\d\d:?\d\d)$").all())
    carries = " with an offset (the instant it gives overrides any timezone)" if offset else \
        " without an offset (local times: the source's timezone, where set, says which)"
    readings = {}
    for fmt, read in found.items():
        readings.setdefault(tuple(read.to_list()), []).append(fmt)
    if len(readings) > 1:
        choices = [fmts[0] for fmts in readings.values()]
        return Guess({"timestamp_format": Todo(
            "which of " + ", ".join(f'"{c}"' for c in choices) + " (each reads every "
            f"sampled cell, as different times: e.g. {sample})",
            next((c for c in choices if c != ISO), None))},
            f"{count:,} time cells{carries}")
    fmts = next(iter(readings.values()))
    if ISO in fmts:
        return Guess({}, f"times read as ISO 8601 (the default): all {count:,} "
                     f"sampled cells, e.g. {sample},{carries}")
    return Guess({"timestamp_format": fmts[0]},
                 f"all {count:,} sampled cells read, e.g. {sample},{carries}")


# --- lists

def list_syntax(cells: pl.Series, json_lists: bool) -> Guess:
    """How a blackjack coups source writes a list in one cell: a JSON or Parquet list
    (nothing to say), bracketed, or separated (and by what)."""
    if json_lists:
        return Guess({}, "lists are JSON lists")
    cells = cells.drop_nulls()
    if not cells.len():
        return Guess({}, "")
    bracketed = cells.str.contains(r"^\[.*\]$").sum()
    if bracketed == cells.len():
        return Guess({"lists": "bracketed"},
                     f"all {cells.len():,} sampled list cells are in brackets, e.g. `{cells[0]}`")
    if bracketed:
        return Guess({"lists": Todo(f"bracketed or separated: {bracketed:,} of "
                                    f"{cells.len():,} list cells are in brackets")}, "")
    seps = Counter()
    for cell in cells.to_list():
        for sep in (" ", ",", "|", ";", "/", "+"):
            if sep in cell.strip():
                seps[sep] += 1
    if not seps:
        return Guess({}, "every sampled list cell holds one element: separated by a space "
                     "(the default) presumed")
    sep, n = seps.most_common(1)[0]
    if len(seps) > 1 and seps.most_common(2)[1][1] == n:
        return Guess({"separator": Todo(f"the separator of a list cell: {counted(seps)}",
                                        sep)}, "")
    keys = {} if sep == " " else {"separator": sep}
    return Guess(keys, f"list cells separated by `{sep}`: {n:,} of {cells.len():,} sampled "
                 "cells hold it")
