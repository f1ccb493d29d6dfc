"""The draft itself: each file sampled, its layout and column roles guessed, files of
one kind gathered into one source, and each source's keys (its columns, value maps, card
notation, times and lists) proposed with their evidence. What cannot be told is a Todo.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ...ingest import vocabulary as v
from ..lists import hands_of
from ..load import COLUMNS_READ, LAYOUT_COLUMNS  # the columns each layout reads
from ..model import format_named
from . import roles as r
from . import synonyms
from .notation import Todo, card_notation, counted, list_syntax, none_tokens, timestamp_format
from .sample import Sample, sample
from .vocabulary import TARGETS, value_map


class DraftError(Exception):
    """The draft cannot be made (a file that cannot be read): the message names it."""


@dataclass
class Line:
    """One `key = value` of the profile, and the evidence for it (a comment)."""

    key: str
    value: object  # text, number, boolean, list, inline table ({"value": ...}), or Todo
    note: str = ""


@dataclass
class SourceDraft:
    name: str
    samples: list[Sample]
    layout: str | None
    game: str | None
    head: list[Line] = field(default_factory=list)
    columns: list[Line] = field(default_factory=list)
    values: dict[str, tuple[str, list[Line]]] = field(default_factory=dict)
    cards: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # export columns no key reads
    separator: object = None  # blackjack coups: a list cell's separator, where not a space
    list_evidence: str = ""


@dataclass
class Draft:
    name: str
    sources: list[SourceDraft]
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def export_files(arguments: list[str]) -> list[Path]:
    """The files FILE|FOLDER arguments name: a file as named, a folder's files whose
    names say an export format (.csv, .jsonl, .ndjson, .parquet, optionally .gz)."""
    found: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [f for f in sorted(path.rglob("*"), key=lambda p: p.parts)
                      if f.is_file() and format_named(f.name)]
        else:
            raise DraftError(f"{argument}: no such file or folder")
    if not found:
        raise DraftError(f"{' '.join(arguments)}: names no export file (.csv, .jsonl, "
                         ".ndjson, .parquet, optionally .gz)")
    return list(dict.fromkeys(found))


def draft(arguments: list[str], game: str | None = None) -> Draft:
    paths = export_files(arguments)
    samples = []
    for path in paths:
        try:
            samples.append(sample(path))
        except Exception as exc:  # noqa: BLE001 - SampleError, or any reason it cannot be read
            raise DraftError(str(exc) if str(exc).startswith(str(path))
                             else f"{path}: cannot be read ({exc})") from None
    groups: dict[tuple, list[Sample]] = {}
    kinds: dict[tuple, tuple] = {}
    for s in samples:
        layout, kind_game, _ = _layout(s, game)
        key = (layout, kind_game, s.format, s.delimiter,
               None if s.format == "jsonl" and layout else tuple(s.header))
        groups.setdefault(key, []).append(s)
        kinds[key] = (layout, kind_game)
    sources: list[SourceDraft] = []
    names: Counter = Counter()
    for key, members in groups.items():
        layout, kind_game = kinds[key]
        base = layout or "source"
        names[base] += 1
        name = base if names[base] == 1 else f"{base}-{names[base]}"
        sources.append(_source(name, members, layout, kind_game, game))
        if layout == "coups":
            wagers = _wagers_too(sources[-1], members, kind_game)
            if wagers is not None:
                sources.append(wagers)
    named = [[s.path.name for s in src.samples] for src in sources]
    unique = list(dict.fromkeys(tuple(n) for n in named))
    made = dict(zip(unique, _patterns([list(n) for n in unique]), strict=True))
    patterns = [made[tuple(n)] for n in named]
    for src, (files, why) in zip(sources, patterns, strict=True):
        src.head.insert(0, Line("files", files, why))
        if any(format_named(p) is None for p in files):
            src.head.insert(2, Line("format", src.samples[0].format or Todo(
                "csv, jsonl or parquet"), "the files' names do not say it"))
    title = (Path(arguments[0]).name if len(arguments) == 1 else
             ", ".join(Path(a).name for a in arguments[:3]))
    notes = [f"{s.path}: " + (f"{s.rows:,} row(s), read whole" if s.whole else
                               f"{s.size:,} bytes; {s.head_rows:,} first row(s) and "
                               f"{s.rows - s.head_rows:,} sampled at random")
             for s in samples]
    for s in samples:
        notes += [f"{s.path}: line {line}: {why}" + (" (left out of the sample)"
                                                     if line > 1 else "")
                  for line, why in s.skipped[:5]]
        if len(s.skipped) > 5:
            notes.append(f"{s.path}: {len(s.skipped) - 5} more line(s) left out so")
    return Draft(f"Drafted from {title}", sources, notes, paths)


def _patterns(groups: list[list[str]]) -> list[tuple[list[str], str]]:
    """Each source's `files`: the names it was drafted from, made a pattern (their
    common start and their ending, or one name's digits as `*`) where the pattern
    matches no other source's file."""
    found = []
    for n, names in enumerate(groups):
        others = [x for m, g in enumerate(groups) if m != n for x in g]
        if len(names) > 1:
            start = os.path.commonprefix(names)
            start = start[:max((start.rfind(c) for c in "-_. "), default=-1) + 1]
            ends = [x[len(start):] for x in names]
            ending = min((e[e.find("."):] if "." in e else "" for e in ends), key=len)
            pattern = f"{start}*{ending}"
            why = f"the common start and ending of {len(names)} files' names"
        else:
            pattern = re.sub(r"\d+", "*", names[0])
            why = "the file's name, its digits as *" if pattern != names[0] else \
                "the file's name"
        if pattern != "*" and all(fnmatch.fnmatchcase(x, pattern) for x in names) and not any(
                fnmatch.fnmatchcase(x, pattern) for x in others):
            found.append(([pattern], why + ": widen it for later exports"
                          if pattern == names[0] else why))
        else:
            found.append((names, "the files' names"))
    return found


def _shapes(s: Sample) -> dict[str, r.Shape]:
    if s.shapes is None:
        s.shapes = {name: r.shape(name, s.frame.get_column(name), name in s.list_columns)
                    for name in s.header}
    return s.shapes


def _layout(s: Sample, game: str | None) -> tuple[str | None, str | None, str]:
    """(layout, game, evidence) from the header and the row shape."""
    shapes = _shapes(s)
    named = {name: r.candidates(name, shapes[name]) for name in s.header}
    has = {role for roles in named.values() for role in roles}
    card_columns = [n for n in s.header if synonyms.card_column(n)
                    and r.fits("card", shapes[n])]
    events = [n for n, roles in named.items() if "event" in roles
              and _known_share(shapes[n], "event") >= 0.5]
    if events:
        share = _known_share(shapes[events[0]], "event")
        return "events", game, (f"one row per event: `{events[0]}` names each row's event "
                                f"({share:.0%} of its distinct words are event names)")
    if len(card_columns) >= 4:
        return ("coups", game or "baccarat",
                f"one row per baccarat coup: the hands' card columns {', '.join(card_columns)}")
    if {"cards", "dealer_cards"} <= has:
        return ("coups", game or "blackjack", "one row per blackjack box (or hand): the "
                "box's cards and the dealer's cards as lists in each row")
    bets = [n for n, roles in named.items() if "bet" in roles
            and _known_share(shapes[n], "bet") >= 0.5]
    if bets and "amount" in has and "card" not in has:
        return "wagers", game, (f"one row per wager: a bet (`{bets[0]}`) and an amount in "
                                "each row, no cards")
    return None, game, ""


def _known_share(s: r.Shape, column: str) -> float:
    """The share of a column's distinct words that the synonym table (or the format)
    knows as values of `column`."""
    if not s.values:
        return 0.0
    known = synonyms.words(column)
    own = set(TARGETS[column])
    return sum(1 for w in s.values if w in own or synonyms.fold(w) in known) / len(s.values)


def _source(name: str, members: list[Sample], layout: str | None, kind_game: str | None,
            game: str | None) -> SourceDraft:
    s = members[0]
    if len(members) > 1:
        frame = pl.concat([m.frame for m in members], how="diagonal")
        header = list(dict.fromkeys(h for m in members for h in m.header))
        s = Sample(s.path, s.format, s.delimiter, header, frame.select(header),
                   s.head_rows, all(m.whole for m in members), s.size,
                   set().union(*(m.list_columns for m in members)))
    layout, kind_game, why = _layout(s, game)
    src = SourceDraft(name, members, layout, kind_game)
    shapes = _shapes(s)
    if not s.header:
        src.notes.append("the file has no header line nor rows")
    recognised = any(synonyms.columns_named(h) or synonyms.card_column(h)
                     or synonyms.is_repeat_key(h) for h in s.header)
    if layout is None:
        src.head.append(Line("layout", Todo("events, coups or wagers (one row per event, "
                                            "per round, or per wager)"),
                             "the header and cells do not tell the layout"
                             + ("" if recognised else ": no header names a column the "
                                "synonym table knows")))
        if s.format == "csv" and not s.sniffed_header:
            src.notes.append("the first line looks like data rather than a header "
                             "(csv.Sniffer): a profile reads the first line as the header")
        if s.format == "csv" and s.delimiter != ",":
            src.head.append(Line("delimiter", s.delimiter, "csv.Sniffer"))
        _required(src, layout, {}, s.header)
        return src
    src.head.append(Line("layout", layout, why))
    if s.format == "csv" and s.delimiter != ",":
        src.head.append(Line("delimiter", s.delimiter, f"csv.Sniffer; {s.rows:,} sampled "
                             f"rows split into the header's {len(s.header)} fields"))
    kind = f"coups:{kind_game}" if layout == "coups" else layout
    allowed = set(COLUMNS_READ[kind]) | set(LAYOUT_COLUMNS[layout])
    found = r.assign(shapes, allowed)
    columns = dict(found.found)
    _times(src, s, columns)
    if layout == "events" and found.repeat_key:
        _repeat_key(src, s, found.repeat_key, columns)
    elif found.repeat_key:
        found.unread.append(found.repeat_key)
    if layout == "coups":
        _shoe_starts(src, columns)
        if "round" not in columns:
            src.notes.append("no column of round numbers: the rows are numbered within each "
                             "shoe, in the table's order (1.1); profile check shows the "
                             "first rounds so derived")
    if layout == "wagers":
        _join(src, columns)
    if layout == "coups" and kind_game == "blackjack":
        lists = list_syntax(pl.concat([s.frame.get_column(columns[c]) for c in
                                       ("cards", "actions", "dealer_cards") if c in columns]),
                            any(columns.get(c) in s.list_columns for c in LIST_KEYS))
        for key, value in lists.keys.items():
            if key == "lists":
                src.head.append(Line("lists", value, lists.evidence))
        src.separator = lists.keys.get("separator")
        src.list_evidence = lists.evidence
        for money, other in (("amount", "net"), ("net", "amount")):
            if money in columns and other not in columns:
                src.notes.append(f"`{columns.pop(money)}` may be {money}, read only with "
                                 f"{other}, which no header names")
    _columns(src, s, shapes, found, columns, layout, kind_game, game)
    _values(src, s, columns, layout, kind_game)
    _cards(src, s, found, columns, layout, kind_game)
    read = {*columns.values(), *(n for hand in found.card_columns.values()
                                 for n in hand.values()),
            *(n for names in found.clashes.values() for n in names)}
    if layout == "events" and found.repeat_key:
        read.add(found.repeat_key)
    src.unread = [n for n in s.header if n not in read]
    return src


LIST_KEYS = ("cards", "actions", "dealer_cards")
# (1.1, one file, two layouts) a coups row that also holds its wager: these columns
_WAGER_ROLES = ("seat", "hand", "bet", "amount", "player_id", "pay", "collect", "push", "vig",
                "vig_mode", "settle_order", "vig_order")


def _wagers_too(coups: SourceDraft, members: list[Sample],
                kind_game: str | None) -> SourceDraft | None:
    """(1.1) A wagers source reading the coups source's files too, where each coups row
    also holds a wager: a bet whose words the synonym table knows, an amount and a seat.
    Its table, shoe and round are the coups source's columns; it sets no join."""
    s = members[0] if len(members) == 1 else None
    if s is None or kind_game != "baccarat":
        return None
    shapes = _shapes(s)
    allowed = set(COLUMNS_READ["wagers"]) | set(LAYOUT_COLUMNS["wagers"])
    found = r.assign(shapes, allowed)
    bet = found.found.get("bet")
    if bet is None or "amount" not in found.found or "seat" not in found.found \
            or _known_share(shapes[bet], "bet") < 0.5:
        return None
    keys = {x.key: x for x in coups.columns if x.key in ("table_id", "shoe_id", "round")}
    columns = {role: found.found[role] for role in _WAGER_ROLES if role in found.found}
    src = SourceDraft("wagers", members, "wagers", None)
    src.head.append(Line("layout", "wagers", f"each coup row also holds a wager: a bet "
                         f"(`{bet}`) and an amount; the file is read as both (1.1), each "
                         "row's wager joining the coup made from it"))
    _join_needs(src, columns)
    lines = [*keys.values()] + [Line(role, column, found.evidence.get(role, ""))
                                for role, column in columns.items()]
    src.columns = sorted(lines, key=lambda x: _ORDER.index(x.key))
    _values(src, s, columns, "wagers", kind_game)
    coups.unread = [n for n in coups.unread if n not in columns.values()]
    return src


def _times(src: SourceDraft, s: Sample, columns: dict[str, str]) -> None:
    times = {c: s.frame.get_column(columns[c]) for c in ("ts", "end_ts") if c in columns}
    if not times:
        src.notes.append("no column of times: the rows have no clock (rules that need "
                         "times are not judged); map ts if a column holds them")
        return
    guess = timestamp_format(times)
    for key, value in guess.keys.items():
        src.head.append(Line(key, value, guess.evidence))
    if not guess.keys and guess.evidence:
        src.notes.append(guess.evidence)
    src.notes.append("timezone not set: times are taken as written; set it where the "
                     "export writes local time and the audit needs instants")


def _repeat_key(src: SourceDraft, s: Sample, column: str, columns: dict[str, str]) -> None:
    head = s.frame.head(s.head_rows)
    cells = head.get_column(column)
    table = head.get_column(columns["table_id"]) if "table_id" in columns else None
    same = cells.is_not_null() & (cells == cells.shift(1))
    if table is not None:
        same = same & (table == table.shift(1))
    repeats = int(same.fill_null(False).sum())
    src.head.append(Line("repeat_key", [column], f"`{column}` is a frame number (synonym "
                         f"table); {repeats:,} of the first {head.height:,} rows repeat "
                         "the previous row's"))


def _shoe_starts(src: SourceDraft, columns: dict[str, str]) -> None:
    if "shoe_id" in columns and "decks" in columns:
        src.head.append(Line("shoe_starts", "new_shoe_id",
                             f"the rows give each shoe's deck count (`{columns['decks']}`): "
                             f"a new `{columns['shoe_id']}` begins a shoe"))
    else:
        if "decks" in columns:
            columns.pop("decks")
        src.notes.append('shoe_starts not set: no column gives a shoe\'s deck count; with '
                         'shoe_starts = "new_shoe_id" a new shoe id begins a shoe (its decks '
                         "a constant or, in blackjack, the house rules')")


def _join(src: SourceDraft, columns: dict[str, str]) -> None:
    if "shoe_id" in columns and "round" in columns:
        src.head.append(Line("join", "round", "the rows name their shoe and round"))
    elif "ts" in columns:
        columns.pop("shoe_id", None)
        columns.pop("round", None)
        src.head.append(Line("join", "time", "the rows name no shoe and round, and give "
                             "a time: the round under way then"))
    else:
        src.head.append(Line("join", Todo('"round" (map shoe_id and round) or "time" '
                                          "(map ts): the rows give neither"), ""))
    _join_needs(src, columns)


def _join_needs(src: SourceDraft, columns: dict[str, str]) -> None:
    for order, needs in (("vig_mode", ("vig",)), ("vig_order", ("vig",)),
                         ("settle_order", ("pay", "collect", "push"))):
        if order in columns and not any(n in columns for n in needs):
            src.notes.append(f"`{columns.pop(order)}` may be {order}, read only with "
                             f"{' or '.join(needs)}")


def _sql_name(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else '"' + name.replace(
        '"', '""') + '"'


_ORDER = [*v.COLUMNS, "end_ts", *LIST_KEYS, *LAYOUT_COLUMNS["wagers"]]


def _columns(src: SourceDraft, s: Sample, shapes, found: r.Roles, columns: dict[str, str],
             layout: str, kind_game: str | None, game: str | None) -> None:
    lines: dict[str, Line] = {}
    for role, column in columns.items():
        value: object = column
        note = found.evidence.get(role, "")
        if role in r.MONEY_ROLES and "cents" in synonyms.fold(column):
            if shapes[column].all(shapes[column].integers):
                value = {"sql": f"CAST({_sql_name(column)} AS DOUBLE) / 100"}
                note += "; the header says cents, and every cell is whole"
            else:
                value = Todo(f'"{column}" (in units) or {{ sql = "CAST({_sql_name(column)} '
                             'AS DOUBLE) / 100" }: the header says cents, and some cells '
                             "have a fraction")
        lines[role] = Line(role, value, note)
    for role, names in found.clashes.items():
        if role not in columns:
            said = [f"`{n}` (whose header names {' or '.join(found.unsure[n])}, and whose "
                    "cells do not tell which)" if n in found.unsure else f"`{n}`"
                    for n in names]
            lines[role] = Line(role, Todo(" or ".join(said) + f": which gives {role}, "
                                          "if any"), "")
    if layout == "coups":
        lines["game"] = Line("game", {"value": kind_game},
                             "from the layout" if game is None else "--game")
    elif layout == "events" and "game" not in lines:
        told, why = (game, "--game") if game else _game_by_words(s, columns)
        lines["game"] = Line("game", {"value": told} if told else {"value": Todo(
            "baccarat or blackjack: no column gives the game (or draft with --game)")},
            f"a constant: no column gives the game; {why}" if told else why)
    _required(src, layout, lines, s.header)
    src.columns = [lines[k] for k in sorted(lines, key=_ORDER.index)]


# Words only one game's rows take: by column, the format's word and its game
_GAME_WORDS = {
    "bet": {**{b: "baccarat" for b in v.BACCARAT_BETS},
            **{b: "blackjack" for b in v.BLACKJACK_BETS}},
    "target": {"player": "baccarat", "banker": "baccarat", "dealer": "blackjack",
               "seat": "blackjack"},
    "winner": dict.fromkeys(v.WINNERS, "baccarat"),
}


def _game_by_words(s: Sample, columns: dict[str, str]) -> tuple[str | None, str]:
    """The game of an events source with no game column, where its words tell one game
    only: (game, evidence); (None, what was seen) where they tell none or both."""
    seen: dict[str, set[str]] = {}
    for column, games in _GAME_WORDS.items():
        if column not in columns:
            continue
        known = synonyms.words(column)
        for value in s.frame.get_column(columns[column]).drop_nulls().unique().to_list():
            target = value if value in games else known.get(synonyms.fold(value))
            if target in games:
                seen.setdefault(games[target], set()).add(f"{column} `{value}`")
    if len(seen) == 1:
        game, words = next(iter(seen.items()))
        return game, f"only {game}'s words are seen: " + ", ".join(sorted(words)[:4])
    if len(seen) > 1:
        return None, "words of both games are seen (" + "; ".join(
            f"{g}: {', '.join(sorted(w)[:2])}" for g, w in seen.items()) + ")"
    return None, "no word tells the game"


def _required(src: SourceDraft, layout: str | None, lines: dict[str, Line],
              header: list[str]) -> None:
    needed = {"events": ("table_id", "game", "event"), "coups": ("table_id", "shoe_id"),
              "wagers": ("table_id", "seat", "bet", "amount"), None: ("table_id",)}[layout]
    if layout == "wagers" and any(x.key == "join" and x.value == "round" for x in src.head):
        needed += ("shoe_id", "round")
    unread = ", ".join(f"`{h}`" for h in header[:12]) or "none"
    for role in needed:
        if role in lines:
            continue
        if role == "table_id":
            lines[role] = Line(role, Todo("the column of the table's id; or, where a file "
                                          'is one table\'s, a constant { value = "..." } '
                                          "or the file's name: { sql = \"SPLIT_PART(_file, "
                                          "'_', 1)\" }"),
                               f"no header names it (the columns: {unread})")
        else:
            lines[role] = Line(role, Todo(f"the export column of {role}"),
                               f"no header names it (the columns: {unread})")
    if layout is None:
        src.columns = list(lines.values())


def _values(src: SourceDraft, s: Sample, columns: dict[str, str], layout: str,
            kind_game: str | None) -> None:
    for role in synonyms.VOCABULARY_COLUMNS:
        if role not in columns:
            continue
        cells = s.frame.get_column(columns[role]).drop_nulls()
        values = Counter(dict(cells.value_counts().iter_rows())) if cells.len() else Counter()
        _one_map(src, role, values, kind_game if layout != "events" else None, False)
    if layout == "coups" and "actions" in columns:
        hands = _elements(src, s, columns["actions"])
        _one_map(src, "action", hands, None, True)


def _one_map(src: SourceDraft, role: str, values: Counter, game: str | None,
             actions_list: bool) -> None:
    found = value_map(role, values, actions_list=actions_list, game=game)
    if not found.needed:
        src.notes.append(f"`{role}`: every sampled value is the format's own word: no map")
        return
    src.values[role] = (found.evidence, [
        Line(value, target, f"{count:,} sampled") for value, target, count in found.entries])


def _elements(src: SourceDraft, s: Sample, column: str) -> Counter:
    """The list elements of a column, counted."""
    cells = s.frame.get_column(column)
    lists = "bracketed" if (column in s.list_columns or any(
        x.key == "lists" and x.value == "bracketed" for x in src.head)) else "separated"
    separator = src.separator or " "
    if isinstance(separator, Todo):
        separator = " "
    hands = hands_of(cells, lists, separator).get_column("hands")
    flat = hands.explode().explode().drop_nulls()
    return Counter(dict(flat.value_counts().iter_rows())) if flat.len() else Counter()


def _cards(src: SourceDraft, s: Sample, found: r.Roles, columns: dict[str, str],
           layout: str, kind_game: str | None) -> None:
    lines: list[Line] = []
    cells: Counter = Counter()
    if layout == "coups" and kind_game == "baccarat":
        for hand in ("player", "banker"):
            numbered = found.card_columns.get(hand, {})
            names = [numbered[n] for n in sorted(numbered)]
            for name in names:
                kept = s.frame.get_column(name).drop_nulls()
                cells.update(dict(kept.value_counts().iter_rows()) if kept.len() else {})
            lines.append(Line(hand, names if len(names) == 3 else Todo(
                f"the {hand}'s three card columns, in the order dealt (found: "
                f"{', '.join(names) or 'none'})"),
                f"the headers name the {hand}'s cards 1, 2, 3" if len(names) == 3 else ""))
    elif layout == "coups" and kind_game == "blackjack":
        for key in ("cards", "dealer_cards"):
            if key in columns:
                cells.update(_elements(src, s, columns[key]))
        if src.separator is not None:
            lines.append(Line("separator", src.separator, src.list_evidence))
    elif "card" in columns:
        kept = s.frame.get_column(columns["card"]).drop_nulls()
        cells.update(dict(kept.value_counts().iter_rows()) if kept.len() else {})
    else:
        return
    none = none_tokens(cells)
    for token in none:
        cells.pop(token)
    guess = card_notation(cells, kind_game)
    head = [Line(k, val, guess.evidence if k == "notation" else "")
            for k, val in guess.keys.items()]
    if none:
        head.append(Line("none", ["", *none], "cells that hold no card: "
                         + counted(Counter({t: 0 for t in none}), 6).replace(" (0)", "")))
    src.cards = head + lines
