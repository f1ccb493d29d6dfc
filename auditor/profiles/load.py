"""Reading a profile file: every key of every table checked against export-profiles-v1,
"The profile file". A mistake is a ProfileError naming the profile and the key, so that
`auditor audit --profile` and `auditor profile check` stop (exit 2) before any export is
read.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
import zoneinfo
from pathlib import Path
from typing import Any

import polars as pl

from ..ingest import vocabulary as v
from . import ProfileError
from . import sql as sql_text
from .cards import POINT_TOKENS, read_as_cards
from .model import (
    FORMATS,
    LAYOUTS,
    LIST_COLUMNS,
    LISTS,
    NOTATIONS,
    Cards,
    Mapping,
    Profile,
    Source,
    format_named,
)

_SOURCE_KEYS = {"name", "files", "layout", "format", "delimiter", "lists", "timestamp_format",
                "timezone", "columns", "values", "cards"}
_LAYOUT_KEYS = {"events": {"repeat_key"}, "coups": {"shoe_starts"}, "wagers": {"join"}}
_FORMAT_COLUMNS = set(v.COLUMNS)
# Each layout's own columns ([source.columns] keys beside the format's)
_LAYOUT_COLUMNS = {
    "events": set(),
    "coups": {"end_ts"},
    # (1.1) `net`: a wager's net result, in place of pay, collect, push and vig
    "wagers": {"pay", "collect", "push", "vig", "vig_mode", "settle_order", "vig_order",
               "net"},
}
# (1.1) `net` with `amount`: a box's net result and its main wager (Net results, blackjack)
_BLACKJACK_COUPS_COLUMNS = {"cards", "actions", "dealer_cards", "net"}
# (1.1, nothing ignored) The format's columns each layout reads; another is refused,
# naming the key, rather than left unread
_COUPS_READ = {"table_id", "game", "shoe_id", "round", "ts", "end_ts", "dealer_id", "decks"}
_READ = {
    "events": set(v.COLUMNS),
    "coups:baccarat": _COUPS_READ | {"winner", "player_points", "banker_points"},
    "coups:blackjack": _COUPS_READ | {"seat", "hand", "amount"} | _BLACKJACK_COUPS_COLUMNS,
    "wagers": {"table_id", "shoe_id", "round", "ts", "seat", "hand", "bet", "amount",
               "player_id"} | _LAYOUT_COLUMNS["wagers"],
}
# What each layout reads, for the modules that propose keys (profile draft)
COLUMNS_READ = _READ
LAYOUT_COLUMNS = _LAYOUT_COLUMNS
_WHY_NOT_READ = {
    "coups": "a coups row makes a round's start, cards, result and end (and a shuffle "
             "with shoe_starts); it has no {column}",
    "wagers": "a wagers row makes a wager and its settlements, in the round it joins "
              "(whose game, seq and events are the coups source's); it has no {column}",
}# What a value map may map to, by the column it maps ("" makes a cell empty in any)
_VALUE_TARGETS: dict[str, tuple] = {
    "event": v.EVENTS,
    "game": v.GAMES,
    "target": v.TARGETS,
    "bet": v.BETS,
    "action": v.ACTIONS,
    "mode": v.MODES,
    "vig_mode": v.MODES,
    "winner": v.WINNERS,
    "exposure": v.EXPOSURES,
}
_BOOLEAN_COLUMNS = set(v.BOOLEAN_COLUMNS)
_INTEGER_COLUMNS = set(v.INTEGER_COLUMNS)
_CARD_KEYS = {
    "rank_suit": set(), "suit_rank": set(), "points": {"ranks"},
    "index": {"index_base", "index_suits"},
    "pattern": {"pattern", "ranks", "suits"},
}


def load(path: Path) -> Profile:
    """The profile at `path`, or a ProfileError naming the key that is wrong."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProfileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{path}: not a TOML file ({exc})") from None
    check = _Checker(path)
    _settled(check, document, data.decode("utf-8"))
    check.keys(document, {"profile", "source"}, "")
    head = check.table(document.get("profile"), "profile")
    check.keys(head, {"name", "version"}, "profile")
    if head.get("version") != 1:
        check.fail("profile.version", "must be 1 (the version of export-profiles this "
                   "auditor reads)")
    name = head.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        check.fail("profile.name", "must be a text")
    listed = document.get("source")
    if not isinstance(listed, list) or not listed:
        check.fail("source", "at least one [[source]] is needed")
    sources = tuple(_source(check, table, n) for n, table in enumerate(listed, start=1))
    clocked_coups = any(s.layout == "coups" and s.clocked for s in sources)
    for s in sources:
        if s.layout == "wagers" and s.join == "time" and not clocked_coups:
            check.fail(f"source {s.name!r}.join", '"time" finds a row\'s round by the times '
                       "of the coups' rounds, and no coups source maps ts: join = \"round\"")
    for s in sources:
        _keys_of_one_file(check, s, sources)
    names = [s.name for s in sources]
    for s in sources:
        if names.count(s.name) > 1:
            check.fail(f"source {s.name!r}.name", "is given to two sources; each needs its own")
    return Profile(path, name, sources, hashlib.sha256(data).hexdigest())


# A decision `auditor profile draft` left to a person: a value written as this text
TODO = "TODO:"


def _todos(value: Any, where: str) -> list[str]:
    """The keys (dotted) whose value, or an element of it, is a TODO text."""
    if isinstance(value, str):
        return [where] if value.lstrip().startswith(TODO) else []
    if isinstance(value, dict):
        return [k for name, x in value.items()
                for k in _todos(x, f"{where}.{name}" if where else str(name))]
    if isinstance(value, list):
        return [k for n, x in enumerate(value) for k in _todos(x, f"{where}[{n}]")]
    return []


def _settled(check: _Checker, document: dict, text: str) -> None:
    """A TODO the draft left (a value "TODO: ...") is refused, naming its line and key:
    the profile is not used until a person settles every one."""
    keys = _todos(document, "")
    if not keys:
        return
    listed = document.get("source")
    found = re.match(r"source\[(\d+)\]", keys[0])
    if found and isinstance(listed, list) and isinstance(listed[int(found[1])], dict):
        name = listed[int(found[1])].get("name")
        if isinstance(name, str):
            keys[0] = f"source {name!r}" + keys[0][found.end():]
    lines = [n for n, row in enumerate(text.splitlines(), start=1)
             if not row.lstrip().startswith("#") and re.search(r"[\"']\s*TODO:", row)]
    at = f"line {lines[0]}: " if lines else ""
    more = f" (and {len(keys) - 1} more TODO(s))" if len(keys) > 1 else ""
    check.fail(f"{at}{keys[0]}", "is a TODO left by `auditor profile draft`; settle it "
               f"(write the value it asks for){more}")


class _Checker:
    """Errors named by the profile and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, why: str):
        raise ProfileError(f"{self.path}: {key}: {why}")

    def keys(self, table: dict, allowed: set[str], where: str) -> None:
        for key in table:
            if key not in allowed:
                place = f"{where}.{key}" if where else key
                self.fail(place, "is not a key export-profiles-v1 defines here"
                          + (f" (here: {', '.join(sorted(allowed))})" if allowed else ""))

    def table(self, value: Any, key: str) -> dict:
        if value is None:
            self.fail(key, "is missing")
        if not isinstance(value, dict):
            self.fail(key, "must be a table")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(key, "must be a non-empty text")
        return value

    def texts(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(
                isinstance(x, str) and x for x in value):
            self.fail(key, "must be a list of non-empty texts")
        return tuple(value)

    def one_of(self, value: Any, choices: tuple, key: str) -> Any:
        if value not in choices:
            self.fail(key, f"must be one of {', '.join(map(str, choices))} (found {value!r})")
        return value


def _source(check: _Checker, table: Any, number: int) -> Source:
    if not isinstance(table, dict):
        check.fail(f"source #{number}", "must be a [[source]] table")
    name = table.get("name")
    where = f"source {name!r}" if isinstance(name, str) and name else f"source #{number}"
    name = check.text(name, f"{where}.name")
    if "layout" not in table:
        check.fail(f"{where}.layout", "is missing (events, coups or wagers)")
    layout = check.one_of(table["layout"], LAYOUTS, f"{where}.layout")
    check.keys(table, _SOURCE_KEYS | _LAYOUT_KEYS[layout], where)
    if "files" not in table:
        check.fail(f"{where}.files", "is missing (patterns on the files' base names)")
    files = check.texts(table["files"], f"{where}.files")
    for pattern in files:
        if "/" in pattern:
            check.fail(f"{where}.files", f"{pattern!r}: a pattern matches a base name, "
                       "without '/'")
    kind = table.get("format")
    if kind is not None:
        check.one_of(kind, FORMATS, f"{where}.format")
    else:
        for pattern in files:
            if format_named(pattern) is None:
                check.fail(f"{where}.format", f"is needed: {pattern!r} does not end .csv, "
                           ".jsonl, .ndjson or .parquet (optionally .gz)")
    kinds = {kind} if kind else {format_named(p) for p in files}
    options = _options(check, table, where, kinds)
    columns = _columns(check, table.get("columns"), where, layout)
    source = Source(name, files, layout, kind, columns=columns, **options)
    _required(check, source, where)
    _all_read(check, source, where, table)
    values = _values(check, table.get("values", {}), where, source)
    cards = _cards(check, table.get("cards"), where, source)
    return Source(name, files, layout, kind, columns=columns, values=values, cards=cards,
                  **options)


def _keys_of_one_file(check: _Checker, source: Source, sources: tuple[Source, ...]) -> None:
    """A wagers source that sets no `join` may leave shoe_id and round unmapped (1.1) only
    where a coups source leaves them so too: its files are then read as coups as well,
    and each record's wager joins the coup made from it (read: every file of it is)."""
    if source.layout != "wagers" or source.join_set:
        return
    for column in ("shoe_id", "round"):
        if column in source.columns:
            continue
        if not any(s.layout == "coups" and s.columns.get(column) == source.columns.get(column)
                   for s in sources):
            check.fail(f"source {source.name!r}.columns.{column}",
                       'is needed by the wagers layout (join = "round"), unless its files '
                       "are read as coups too by a coups source that leaves it unmapped")


def _all_read(check: _Checker, source: Source, where: str, given: dict) -> None:
    """(1.1) Nothing in a profile is ignored: a column the layout does not read, or a
    key that nothing the source maps makes use of, is refused naming it."""
    layout = source.layout
    kind = f"coups:{source.game}" if layout == "coups" else layout
    for column in source.columns:
        if column in v.COLUMNS and column not in _READ[kind]:
            check.fail(f"{where}.columns.{column}", "is not read: "
                       + _WHY_NOT_READ[layout].format(column=column))
    columns = source.columns
    if layout == "coups" and source.game == "blackjack":
        # (1.1) net results: the box's main wager and its net, one with the other
        for column, other in (("amount", "net"), ("net", "amount")):
            if column in columns and other not in columns:
                check.fail(f"{where}.columns.{column}", f"is read with {other}: a blackjack "
                           "coups source's net results are its rows' main wager (amount) "
                           "and net result (net), both mapped")
    if layout == "coups" and "decks" in columns and not source.shoe_starts:
        check.fail(f"{where}.columns.decks", 'is read for the shuffles shoe_starts = '
                   '"new_shoe_id" makes: without shoe_starts a coups source makes none')
    if layout == "wagers":
        if source.join == "time":
            for column in ("shoe_id", "round"):
                if column in columns:
                    check.fail(f"{where}.columns.{column}", 'is not read: join = "time" '
                               "finds a row's round by its ts (join = \"round\" by "
                               "table_id, shoe_id and round)")
        for column, needs in (("vig_mode", ("vig",)), ("vig_order", ("vig",)),
                              ("settle_order", ("pay", "collect", "push"))):
            if column in columns and not any(n in columns for n in needs):
                check.fail(f"{where}.columns.{column}", f"is read with {' or '.join(needs)}, "
                           "which the source does not map")
    if not ({"ts", "end_ts"} & set(columns)):
        for key in ("timestamp_format", "timezone"):
            if getattr(source, key) is not None:
                check.fail(f"{where}.{key}", "reads the source's times, and it maps no ts "
                           "(nor end_ts)")
    blackjack_coups = layout == "coups" and source.game == "blackjack"
    if "lists" in given and not blackjack_coups:
        check.fail(f"{where}.lists", "is for a blackjack coups source's list columns "
                   "(cards, actions, dealer_cards); this source has none")
    if "cards" in given and not (layout == "coups" or "card" in columns):
        check.fail(f"{where}.cards", "says how cards are written, and the source maps no "
                   "card" + (" (a wagers source has none)" if layout == "wagers" else ""))


def _options(check: _Checker, table: dict, where: str, kinds: set) -> dict:
    found: dict[str, Any] = {}
    if "delimiter" in table:
        if kinds != {"csv"}:
            check.fail(f"{where}.delimiter", "is for CSV only")
        delimiter = check.text(table["delimiter"], f"{where}.delimiter")
        if len(delimiter) != 1:
            check.fail(f"{where}.delimiter", "must be one character")
        found["delimiter"] = delimiter
    if "lists" in table:
        found["lists"] = check.one_of(table["lists"], LISTS, f"{where}.lists")
    if "timestamp_format" in table:
        found["timestamp_format"] = check.text(table["timestamp_format"],
                                               f"{where}.timestamp_format")
    if "timezone" in table:
        zone = check.text(table["timezone"], f"{where}.timezone")
        try:
            zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            check.fail(f"{where}.timezone", f"{zone!r} is not a time zone (e.g. "
                       "America/New_York)")
        found["timezone"] = zone
    if "repeat_key" in table:
        found["repeat_key"] = check.texts(table["repeat_key"], f"{where}.repeat_key")
    if "shoe_starts" in table:
        found["shoe_starts"] = check.one_of(table["shoe_starts"], ("new_shoe_id",),
                                            f"{where}.shoe_starts")
    if "join" in table:
        found["join"] = check.one_of(table["join"], ("round", "time"), f"{where}.join")
        found["join_set"] = True
    return found


def _columns(check: _Checker, table: Any, where: str, layout: str) -> dict[str, Mapping]:
    table = check.table(table, f"{where}.columns")
    game = table.get("game")
    blackjack = isinstance(game, dict) and game.get("value") == "blackjack"
    allowed = _FORMAT_COLUMNS | _LAYOUT_COLUMNS[layout]
    if layout == "coups" and blackjack:
        allowed |= _BLACKJACK_COUPS_COLUMNS
    check.keys(table, allowed, f"{where}.columns")
    return {name: _mapping(check, spec, f"{where}.columns.{name}")
            for name, spec in table.items()}


def _mapping(check: _Checker, spec: Any, key: str) -> Mapping:
    if isinstance(spec, str):
        return Mapping(column=check.text(spec.strip(), key))
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in ("value", "sql"):
        check.fail(key, 'must be an export column\'s name, { value = ... } or { sql = "..." }')
    if "value" in spec:
        constant = spec["value"]
        if not isinstance(constant, str | int | float | bool):
            check.fail(key, "a constant must be a text, a number or a boolean")
        return Mapping(value=constant)
    sql = check.text(spec["sql"], key)
    try:
        # on the text first: polars runs a subquery's file reads and can crash on a long
        # enough expression while it parses one
        sql_text.check(sql)
    except sql_text.SqlRefused as exc:
        check.fail(key, f"the SQL {exc}")
    try:
        pl.sql_expr(sql)
    except Exception as exc:  # noqa: BLE001 - polars' parser says why
        check.fail(key, f"the SQL does not parse ({str(exc).splitlines()[0]})")
    return Mapping(sql=sql)


def _required(check: _Checker, source: Source, where: str) -> None:
    """What a layout cannot do without (export-profiles-v1, Layouts)."""
    deferred = ("shoe_id", "round") if source.layout == "wagers" and not source.join_set else ()
    for column in source.needed:
        if column not in source.columns and column not in deferred:
            check.fail(f"{where}.columns.{column}", f"is needed by the {source.layout} layout"
                       + (f' (join = "{source.join}")' if source.layout == "wagers" else ""))
    game = source.columns.get("game")
    if game is not None and game.constant:
        check.one_of(game.value, v.GAMES, f"{where}.columns.game")
    elif source.layout == "coups":
        check.fail(f"{where}.columns.game", 'a coups source\'s game is a constant '
                   '({ value = "baccarat" } or "blackjack")')


def _values(check: _Checker, table: Any, where: str,
            source: Source) -> dict[str, dict[str, str | int | bool]]:
    table = check.table(table, f"{where}.values")
    found = {}
    for column, mapped in table.items():
        key = f"{where}.values.{column}"
        via_actions = (column == "action" and source.layout == "coups"
                       and "actions" in source.columns)
        if column not in source.columns and not via_actions:
            check.fail(key, "maps a column the source does not map")
        if column in LIST_COLUMNS:
            check.fail(key, "a list's elements are read as cells of their own: a card by "
                       "[source.cards], a decision by [source.values.action]")
        mapped = check.table(mapped, key)
        for value, target in mapped.items():
            if via_actions and target == "insurance":
                continue  # (1.1) the box took insurance: its wager, not a decision
            _target(check, column, target, f'{key}."{value}"')
        found[column] = dict(mapped)
    return found


def _target(check: _Checker, column: str, target: Any, key: str) -> None:
    """A value map's target: one the format knows for the column ("" empties a cell)."""
    if target == "":
        return
    if column in _VALUE_TARGETS:
        check.one_of(target, _VALUE_TARGETS[column], key)
    elif column in _BOOLEAN_COLUMNS:
        if not isinstance(target, bool):
            check.fail(key, "must map to true or false")
    elif column in _INTEGER_COLUMNS:
        if isinstance(target, bool) or not isinstance(target, int):
            check.fail(key, "must map to an integer")
    elif not isinstance(target, str | int | float) or isinstance(target, bool):
        check.fail(key, "must map to a text or a number")


def _cards(check: _Checker, table: Any, where: str, source: Source) -> Cards | None:
    baccarat_coups = source.layout == "coups" and source.game == "baccarat"
    if table is None:
        if source.layout == "coups":
            check.fail(f"{where}.cards", "a coups source says how its cards are written "
                       "([source.cards] with notation" + (", player and banker)"
                                                         if baccarat_coups else ")"))
        return None
    key = f"{where}.cards"
    table = check.table(table, key)
    if "notation" not in table:
        check.fail(f"{key}.notation", f"is missing ({', '.join(NOTATIONS)})")
    notation = check.one_of(table["notation"], NOTATIONS, f"{key}.notation")
    allowed = {"notation", "none"} | _CARD_KEYS[notation]
    if baccarat_coups:
        allowed |= {"player", "banker"}
    if source.layout == "coups" and source.game == "blackjack":
        allowed |= {"separator"}
    check.keys(table, allowed, key)
    found: dict[str, Any] = {"notation": notation}
    if "none" in table:
        none = table["none"]
        if not isinstance(none, list) or not all(isinstance(x, str) for x in none):
            check.fail(f"{key}.none", "must be a list of texts")
        found["none"] = tuple(none)
    if baccarat_coups:
        for hand in ("player", "banker"):
            if hand not in table:
                check.fail(f"{key}.{hand}", "is missing: the columns of the hand's cards, in "
                           "the order it received them")
            listed = table[hand]
            if not isinstance(listed, list) or not listed:
                check.fail(f"{key}.{hand}", "must be a list: the columns of the hand's "
                           "cards, in the order it received them")
            # (1.1) each an export column, a constant or an SQL expression
            found[hand] = tuple(_mapping(check, spec, f"{key}.{hand}[{n}]")
                                for n, spec in enumerate(listed, start=1))
    if "separator" in table:
        if source.lists == "bracketed":
            check.fail(f"{key}.separator", 'splits a list written in one cell, and lists '
                       '= "bracketed" reads each cell as a bracketed list')
        found["separator"] = check.text(table["separator"], f"{key}.separator")
    if "index_base" in table:
        found["index_base"] = check.one_of(table["index_base"], (0, 1), f"{key}.index_base")
    if "index_suits" in table:
        suits = check.text(table["index_suits"], f"{key}.index_suits")
        if sorted(suits) != sorted(v.SUITS) or len(suits) != len(v.SUITS):
            check.fail(f"{key}.index_suits", "must be an order of the four suits S, H, D, C")
        found["index_suits"] = suits
    if notation == "pattern":
        found |= _pattern(check, table, key)
    if notation == "points" and "ranks" in table:
        # (1.1) other tokens to the value tokens only: never a rank with a suit, nor J Q K
        mapped = check.table(table["ranks"], f"{key}.ranks")
        for token, target in mapped.items():
            check.one_of(target, tuple(POINT_TOKENS), f'{key}.ranks."{token}"')
        found["ranks"] = dict(mapped)
    cards = Cards(**found)
    read = read_as_cards(cards, list(cards.none))
    if read:
        check.fail(f"{key}.none", f"{read[0]!r} is read as a card by the {notation} notation")
    return cards


def _pattern(check: _Checker, table: dict, key: str) -> dict[str, Any]:
    if "pattern" not in table:
        check.fail(f"{key}.pattern", "is missing: a regular expression with (?P<rank>...)")
    pattern = check.text(table["pattern"], f"{key}.pattern")
    try:
        pl.select(pl.lit("").str.extract_groups(pattern))
    except Exception as exc:  # noqa: BLE001 - polars' regex engine says why
        check.fail(f"{key}.pattern", f"is not a regular expression polars reads "
                   f"({str(exc).splitlines()[0]})")
    if "(?P<rank>" not in pattern:
        check.fail(f"{key}.pattern", "needs a named group (?P<rank>...)")
    found: dict[str, Any] = {"pattern": pattern}
    for tokens, valid in (("ranks", (*v.RANKS, "10")), ("suits", tuple(v.SUITS))):
        if tokens in table:
            mapped = check.table(table[tokens], f"{key}.{tokens}")
            for token, target in mapped.items():
                check.one_of(target, valid, f'{key}.{tokens}."{token}"')
            found[tokens] = dict(mapped)
    return found
