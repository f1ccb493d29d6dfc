"""The house rules file: what the regulation leaves to the facility.

Read from TOML at start and validated against the regulation's own limits in
`rulesets/` (e.g. the commission rates (d)(2) allows). An unknown key or a
value out of range is a `HouseRulesError` naming the key; the CLI exits 2.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, time
from pathlib import Path
from typing import Any

from .rulesets import Rulesets

PROCEDURES = ("i", "ii", "iii", "iv")
RESPLIT_PLACEMENTS = ("beside", "end")  # where a re-split hand is laid (hand-history 1.1)
VARIANTS = ("big", "midi", "mini")
OPTIONAL_WAGERS = ("twenty_point_bonus", "in_between", "other_bonus")
RATIO = re.compile(r"^(\d+):(\d+)$")
# The largest number any key may hold: no value of the regulation or a house is near it
# (a payout limit of a trillion dollars), its cents fit a 64-bit integer, and it keeps a
# number TOML reads as it likes (1e400 is inf, an integer may have any length) away from
# the arithmetic of the audit.
LARGEST = 10**12

BACCARAT_DEFAULTS: dict[str, Any] = {
    "commission_percent": 5,
    "tie_pays": 8,
    "dragon_bonus_pay_table": "A",
    "dragon7_pays": 40,
    "seats": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15],
}
BLACKJACK_DEFAULTS: dict[str, Any] = {
    "dealer_hits_soft_17": False,
    "blackjack_pays": "3:2",
    "insurance_pays": "2:1",
    "surrender": False,
    "payout_limit": 100000,
}


class HouseRulesError(ValueError):
    """The house rules file cannot be used; the message names the key."""


@dataclass(frozen=True)
class TableRules:
    """Everything the audit needs to know about one table."""

    table_id: str
    game: str
    pit: str | None
    listed: bool  # False: not in the house rules, audited under the section defaults
    settings: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.settings[key]


@dataclass(frozen=True)
class HouseRules:
    path: Path | None
    facility: str
    baccarat: dict[str, Any]
    blackjack: dict[str, Any]
    collection_procedure: dict[str, str]
    tables: dict[str, TableRules]
    gaming_day_start: time = time(0, 0)  # local time a gaming day starts (hand-history 1.1)
    seq_gapless: bool = False  # the table system numbers events without gaps (1.1)

    def gapless_tables(self) -> tuple[list[str], list[str]]:
        """The listed tables whose seq has no gaps, and those whose seq may; a table the
        house rules do not list follows `seq_gapless`."""
        own = {t.table_id: t.settings.get("seq_gapless", self.seq_gapless)
               for t in self.tables.values()}
        return ([t for t, on in own.items() if on], [t for t, on in own.items() if not on])

    def table(self, table_id: str, game: str) -> TableRules:
        """The table's rules, or the section defaults for a table the file does not list."""
        known = self.tables.get(table_id)
        if known is not None and known.game == game:
            return known
        defaults = self.baccarat if game == "baccarat" else self.blackjack
        extra = {"variant": "big", "ez": False} if game == "baccarat" else {}
        return TableRules(table_id, game, None, False, {**extra, **defaults})


# --- validators: each returns an error message, or None when the value is good.

Validator = Callable[[Any], str | None]


def _int_in(low: int, high: int) -> Validator:
    def check(value: Any) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            return f"must be a whole number from {low} to {high}"
        return None

    return check


def _one_of(*allowed: Any) -> Validator:
    def check(value: Any) -> str | None:
        if value not in allowed or isinstance(value, bool) != isinstance(allowed[0], bool):
            return "must be one of " + ", ".join(map(str, allowed))
        return None

    return check


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "must be a non-empty string"


def _positive_number(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return None if ok else "must be a positive number"


def _ratio(at_least: float = 1.0) -> Validator:
    def check(value: Any) -> str | None:
        match = RATIO.match(value) if isinstance(value, str) else None
        if not match or int(match[2]) == 0:
            return 'must be odds written "N:M", e.g. "3:2"'
        if int(match[1]) / int(match[2]) < at_least:
            return f"must pay at least {at_least:g}:1"
        return None

    return check


def _seat_list(value: Any) -> str | None:
    ok = (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 99 for s in value)
        and len(set(value)) == len(value)
    )
    return None if ok else "must be a list of distinct seat numbers from 1 to 99"


CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def _clock(value: Any) -> str | None:
    ok = isinstance(value, str) and CLOCK.match(value)
    return None if ok else 'must be a local time written "HH:MM", from "00:00" to "23:59"'


def _wager_list(value: Any) -> str | None:
    ok = isinstance(value, list) and all(w in OPTIONAL_WAGERS for w in value)
    return None if ok else "must be a list drawn from " + ", ".join(OPTIONAL_WAGERS)


def _baccarat_keys(rs: Rulesets, on: date) -> dict[str, Validator]:
    params = rs.params("baccarat", on=on)
    return {
        "commission_percent": _one_of(*params["commission_percents"]),
        "tie_pays": _int_in(1, 1000),
        "dragon_bonus_pay_table": _one_of(*sorted(params["dragon_bonus_pay_tables"])),
        "dragon7_pays": _int_in(1, 1000),
        "seats": _seat_list,
    }


def _blackjack_keys(rs: Rulesets, on: date) -> dict[str, Validator]:
    params = rs.params("blackjack", on=on)
    return {
        "dealer_hits_soft_17": _boolean,
        "blackjack_pays": _ratio(1.0),
        "insurance_pays": _ratio(float(params["insurance_min_odds"])),
        "surrender": _boolean,
        "payout_limit": _positive_number,
        # no default: unset, BJ205 accepts the order of either placement
        "resplit_hand_placement": _one_of(*RESPLIT_PLACEMENTS),
    }


def _out_of_reach(value: Any) -> str | None:
    """Whether a number, or a number in a list, is not finite or is beyond LARGEST: checked
    for every key before its own check, which may not think of it (inf > 0 holds)."""
    if isinstance(value, list):
        return next(filter(None, map(_out_of_reach, value)), None)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return (f"must be a finite number, at most {LARGEST:,} (TOML reads a number too large "
                "for it, such as 1e400, as inf)")
    if abs(value) > LARGEST:
        return f"must be a number no larger than {LARGEST:,}"
    return None


def _check_keys(values: dict[str, Any], allowed: dict[str, Validator], where: str) -> None:
    for key, value in values.items():
        name = f"{where}.{key}" if where else key
        if key not in allowed:
            raise HouseRulesError(f"unknown key `{name}` (allowed: {', '.join(sorted(allowed))})")
        problem = _out_of_reach(value) or allowed[key](value)
        if problem:
            raise HouseRulesError(f"`{name}` = {value!r} {problem}")


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise HouseRulesError(f"`{name}` must be a table ([{name}])")
    return section


def _procedures(section: dict[str, Any]) -> dict[str, str]:
    procedures = section.pop("collection_procedure", {})
    if not isinstance(procedures, dict):
        raise HouseRulesError("`baccarat.collection_procedure` must be a table of pit = procedure")
    _check_keys(
        procedures,
        {pit: _one_of(*PROCEDURES) for pit in procedures},
        "baccarat.collection_procedure",
    )
    return dict(procedures)


def _table(
    entry: Any,
    index: int,
    sections: dict[str, dict[str, Any]],
    keys: dict[str, dict[str, Validator]],
) -> TableRules:
    where = f"tables[{index}]"
    if not isinstance(entry, dict):
        raise HouseRulesError(f"`{where}` must be a table ([[tables]])")
    for required in ("table_id", "game"):
        if required not in entry:
            raise HouseRulesError(f"`{where}.{required}` is missing")
    game = entry["game"]
    if game not in ("baccarat", "blackjack"):
        raise HouseRulesError(f"`{where}.game` = {game!r} must be one of baccarat, blackjack")
    common = {"table_id": _text, "game": _text, "pit": _text, "decks": _int_in(1, 16),
              "seq_gapless": _boolean}
    if game == "baccarat":
        specific = {
            "variant": _one_of(*VARIANTS),
            "ez": _boolean,
            "commission_percent": keys["baccarat"]["commission_percent"],
        }
    else:
        specific = {
            **keys["blackjack"],
            "dealt_from": _one_of("shoe", "hand"),
            "optional_wagers": _wager_list,
        }
    _check_keys(entry, {**common, **specific}, where)
    settings = {**sections[game], **entry}
    if game == "baccarat":
        settings.setdefault("variant", "big")
        settings.setdefault("ez", False)
        own_rate = entry.get("commission_percent")
        if settings["variant"] == "big" and own_rate not in (
            None,
            sections[game]["commission_percent"],
        ):
            raise HouseRulesError(
                f"`{where}.commission_percent` = {own_rate}: a big baccarat table uses the "
                "facility's rate, 9 NYCRR 5324.20(d)(2)(iii); only midi and mini tables may differ"
            )
    else:
        settings.setdefault("dealt_from", "shoe")
        settings.setdefault("optional_wagers", [])
    return TableRules(entry["table_id"], game, entry.get("pit"), True, settings)


def parse(data: dict[str, Any], rs: Rulesets, on: date, path: Path | None = None) -> HouseRules:
    data = dict(data)
    top = {
        "facility": _text,
        "gaming_day_start": _clock,
        "seq_gapless": _boolean,
        "baccarat": lambda _: None,
        "blackjack": lambda _: None,
        "tables": lambda t: None if isinstance(t, list) else "must be a list ([[tables]])",
    }
    _check_keys(data, top, "")
    baccarat = dict(_section(data, "baccarat"))
    procedures = _procedures(baccarat)
    blackjack = dict(_section(data, "blackjack"))
    keys = {"baccarat": _baccarat_keys(rs, on), "blackjack": _blackjack_keys(rs, on)}
    _check_keys(baccarat, keys["baccarat"], "baccarat")
    _check_keys(blackjack, keys["blackjack"], "blackjack")
    sections = {
        "baccarat": {**BACCARAT_DEFAULTS, **baccarat},
        "blackjack": {**BLACKJACK_DEFAULTS, **blackjack},
    }
    tables: dict[str, TableRules] = {}
    for index, entry in enumerate(data.get("tables", [])):
        table = _table(entry, index, sections, keys)
        if table.table_id in tables:
            raise HouseRulesError(
                f"`tables[{index}].table_id` = {table.table_id!r} is listed twice"
            )
        tables[table.table_id] = table
    return HouseRules(
        path,
        data.get("facility", "(facility not named)"),
        sections["baccarat"],
        sections["blackjack"],
        procedures,
        tables,
        time.fromisoformat(data.get("gaming_day_start", "00:00")),
        data.get("seq_gapless", False),
    )


def load(path: Path, rs: Rulesets, on: date) -> HouseRules:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HouseRulesError(f"cannot read the house rules file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise HouseRulesError(f"the house rules file is not valid TOML: {exc}") from None
    return parse(data, rs, on, path)
