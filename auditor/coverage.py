"""What the log can show, and so which rules are judged on each table
(export-profiles-v1, "Coverage").

Each rule names the evidence it needs (Rule.needs). A table's log records some of it: a
hand history records everything a table's events can show; an export records what its
layout and card notation can (a shoe's coups presume the order of the deal; a wagers
export has no shoe events). And the rows themselves may hold none of a kind: a table
with no wager row at all records no wagers, in any layout; a table with a card known by
value only (format 1.3: `8*`) records no suits, one with an `X*` no ranks. A rule is
judged on a table only where the table's log records all it needs; elsewhere it gives no
finding, and the audit says once, per rule, on which tables it was not judged and why.

A rule that checks several things needing different evidence has parts (Rule.parts, 1.1):
its `needs` are what every check needs, a part's own what that check needs besides (a
surrender's settled amount is plain from a wagers row, when it was settled is not). Its
check rows name the part that gave them (check column `part`); where a table lacks what a
part needs, that part's findings are dropped there and the rule is judged "partly", the
part named, never switched off whole for want of what one check needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from .ingest import vocabulary as v
from .ingest.totals import evidence_rows
from .rules import catalog
from .rules.registry import PART, Part, Rule

if TYPE_CHECKING:
    from .profiles.translated import Translated

# Each kind of evidence, and what is said where a table's log lacks it
EVIDENCE: dict[str, str] = {
    "cards": "the log records no cards",
    "deal_order": "the order the cards left the shoe is not recorded (coups: the order of "
                  "the deal is presumed)",
    "suits": "the card notation records no suits, or the log records some cards by value "
             "only (format 1.3): their suit is not recorded",
    "ranks": "the log records some cards by value only (format 1.3): their rank is not "
             "recorded (X*, a ten-value card)",
    "shuffles": "the log records no shuffles (decks)",
    "shoe_procedure": "the log records no burn or cover card",
    "offers": "the log records no shoe offers",
    "round_events": "the log records no no-more-bets or void events",
    "wagers": "the log records no wagers",
    "wager_timing": "when each wager was placed or settled is not recorded (wagers "
                    "export: the timing is presumed)",
    "settlements": "each settlement is not recorded as a row of its own (wagers export: "
                   "one row per wager)",
    "settle_order": "the order of settlement is not recorded",
    "vig_settle": "commission marked and settled later is not recorded",
    "decisions": "the log records no decisions",
    "deciders": "who called each decision is not recorded (coups: a box's decisions carry "
                "no patron)",
    "split_order": "the order of play across split hands is not recorded",
    "irregularities": "the log records no irregularities (no card_exposed, dead_hand, "
                      "hole_card_check or refuse row: hand-history-v1 1.2)",
    "seq": "event numbers are derived from the order of the rows, so lost or reordered "
           "rows cannot be shown",
    # (1.1) a box settled by its net result (format 1.3 settle_net): decided per box
    "single_settlements": "single settlements are not recorded: the box was settled by its "
                          "net result (format 1.3 settle_net), which BJ707 and BA509 judge",
    # (1.1; hand-history-v1 1.3, No clock) a table whose rows all lack ts
    "times": "the exports record no times",
    # (1.1, Net results, blackjack) coups with `amount` and `net`: the wagers other than
    # the main wager are presumed (`stakes:presumed`, where such a wager was made)
    "stakes": "the amounts of doubles, splits or insurance are presumed from the main "
              "wager (net results only): a double or split at the main wager, insurance "
              "at half of it; rules on those amounts are not judged",
}
# Evidence decided per box, not per table: a table that records it may lack it on the
# boxes of some rounds (coverage says how many, once)
PER_BOX = ("single_settlements",)
EVERYTHING = frozenset(EVIDENCE)
# What each layout of an export records (export-profiles-v1, Layouts)
_EVENTS = EVERYTHING
_COUPS = frozenset({"cards", "suits"})
_WAGERS = frozenset({"wagers", "single_settlements", "stakes"})


def recorded(marks: set[str] | None) -> frozenset[str]:
    """The evidence a table's log records, from how its rows were read: None for a hand
    history; else the marks its export's reading left (profiles.read): the layouts,
    `notation:...`, `seq:derived`, `shoe_starts`, `settle_order` and `vig_order`; (1.1)
    `coups:net` (a blackjack coups source's net results) and `stakes:presumed` (a
    double, split or insurance wager whose amount it presumed)."""
    if marks is None:
        return EVERYTHING
    found: set[str] = {"times"}  # unless its rows have none (of_log)
    if "events" in marks:
        found |= _EVENTS
        if "seq:derived" in marks:
            found.discard("seq")
    if "coups" in marks:
        found |= _COUPS | ({"shuffles"} if "shoe_starts" in marks else set())
        found.add("ranks")  # unless its rows hold an X* (of_log)
        found |= {"decisions"} if "decisions" in marks else set()
    if "coups:net" in marks:  # (1.1) a box's main wager and net result: no single one
        found |= {"wagers", "stakes"}
    if "wagers" in marks:
        found |= _WAGERS
        if {"settle_order", "vig_order"} <= marks:
            found.add("settle_order")
    if "notation:suitless" in marks:
        found.discard("suits")
    if "stakes:presumed" in marks:
        found.discard("stakes")
    return frozenset(found)


@dataclass
class Coverage:
    """Per table, its game and the evidence its log records; the rounds whose order of
    settlement is not recorded (a wagers row without its settle_order); and per table the
    boxes settled by their net result (format 1.3 settle_net), on which the rules of
    single settlements are not judged (the rules skip those wagers: nothing is dropped
    here)."""

    def untimed(self) -> list[str]:
        """The tables whose rows record no times (hand-history-v1 1.3, No clock)."""
        return sorted(t for t, (_, has) in self.tables.items() if "times" not in has)

    tables: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    unordered: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(
        schema={"table_id": pl.String, "shoe_id": pl.String, "round": pl.Int64}))
    net_boxes: dict[str, int] = field(default_factory=dict)

    def missing(self, rule: Rule, table: str, part: Part | None = None) -> list[str]:
        """The evidence `rule` needs (with `part`: that part's own) that `table`'s log
        does not record."""
        _, has = self.tables[table]
        return [n for n in (rule.needs if part is None else part.needs) if n not in has]

    def applies(self, rule: Rule, table: str) -> bool:
        return rule.scope in ("input", "house") or rule.scope == self.tables[table][0]

    def why_not(self, rule: Rule, table: str, part: Part | None = None) -> str | None:
        """Why `rule` is not judged on `table` (its first lacking evidence in words), or
        with `part`, why that part is not where the rest of the rule is; None where it
        is judged."""
        lacking = self.missing(rule, table)
        if part is not None:
            lacking = [] if lacking else self.missing(rule, table, part)
        return EVIDENCE[lacking[0]] if lacking else None

    def not_judged(self, rule: Rule, part: Part | None = None) -> list[tuple[str, str]]:
        """(table, why) of each table of the rule's game it is not judged on (with `part`:
        that part is not, the rest of the rule judged)."""
        places = (t for t in sorted(self.tables) if self.applies(rule, t))
        return [(t, why) for t in places if (why := self.why_not(rule, t, part))]

    def unjudged(self, table: str) -> list[tuple[Rule, Part | None, str]]:
        """What is not judged on `table`, with why: each rule of its game not judged
        there, and each part of a rule judged there (`profile check` says it per
        table)."""
        out: list[tuple[Rule, Part | None, str]] = []
        for rule in catalog.REGISTRY.all():
            if not self.applies(rule, table):
                continue
            why = self.why_not(rule, table)
            if why:
                out.append((rule, None, why))
                continue
            for part in rule.parts:
                why = self.why_not(rule, table, part)
                if why:
                    out.append((rule, part, why))
        return out

    def keep(self, findings: pl.DataFrame) -> pl.DataFrame:
        """The findings of rules, and of parts of rules, judged where they are (a finding
        of no table is kept). A part's findings are told by the column `part` (the check
        column, registry.PART), which findings of a log whose parts are not all judged
        must have."""
        unjudged = [(rule.id, table, part) for table in self.tables
                    for rule, part, _ in self.unjudged(table)]
        rules = [(rule, table) for rule, table, part in unjudged if part is None]
        parts = [(rule, table, part.name) for rule, table, part in unjudged if part is not None]
        findings = _without(findings, rules, ["rule_id", "table_id"])
        if parts and PART not in findings.columns:
            raise ValueError("findings without their parts (registry.PART), where parts of "
                             "rules are not judged")
        findings = _without(findings, parts, ["rule_id", "table_id", PART])
        if self.unordered.height:
            ordered = [r.id for r in catalog.REGISTRY.all() if "settle_order" in r.needs]
            rounds = self.unordered.with_columns(pl.lit(True).alias("_unordered"))
            findings = (findings.join(rounds, on=["table_id", "shoe_id", "round"], how="left",
                                      maintain_order="left")
                        .filter(~(pl.col("_unordered").fill_null(False)
                                  & pl.col("rule_id").is_in(ordered)))
                        .drop("_unordered"))
        return findings

    def _boxes(self, rule: Rule, tables: list[str], missed: list[tuple[str, str]]) -> int:
        """The boxes settled by net on the tables `rule` is judged on, where it judges single
        settlements."""
        if not any(kind in rule.needs for kind in PER_BOX):
            return 0
        skipped = {table for table, _ in missed}
        return sum(self.net_boxes.get(t, 0) for t in tables if t not in skipped)

    def _parts_not_judged(self, rule: Rule) -> list[dict]:
        """`parts_not_judged` of a rule's entry: each part not judged on some table the
        rest of the rule is judged on, with those tables and why."""
        out = []
        for part in rule.parts:
            missed = self.not_judged(rule, part)
            if missed:
                out.append({"part": part.name, "what": part.what, "needs": list(part.needs),
                            "tables": [{"table_id": t, "why": why} for t, why in missed]})
        return out

    def as_dict(self) -> dict:
        """`coverage` of summary.json: every rule, judged on every table of its game,
        on some, or on none, with the tables it was not judged on and why; a rule judged
        on a table where a part of it is not (Rule.parts) is judged "partly", with that
        part, its tables and why (`parts_not_judged`)."""
        rules = []
        for rule in catalog.REGISTRY.all():
            tables = [t for t in sorted(self.tables) if self.applies(rule, t)]
            missed = self.not_judged(rule)
            state = ("not_judged" if not tables or len(missed) == len(tables)
                     else "partly" if missed else "judged")
            entry = {"rule_id": rule.id, "state": state}
            if not tables:
                entry["why"] = f"the log has no {rule.scope} table"
            if missed:
                entry["not_judged_on"] = [{"table_id": t, "why": why} for t, why in missed]
            parts = self._parts_not_judged(rule) if state != "not_judged" else []
            if parts:
                entry["state"] = state = "partly"
                entry["parts_not_judged"] = parts
            if state != "not_judged" and self.unordered.height and "settle_order" in rule.needs:
                count = self.unordered.filter(pl.col("table_id").is_in(tables)).height
                if count:
                    entry["rounds_not_judged"] = count
                    entry["rounds_why"] = ("a wagers row of the round has no settle_order "
                                           "(or a commission no vig_order)")
            boxes = self._boxes(rule, tables, missed)
            if state != "not_judged" and boxes:
                entry["state"] = state = "partly"
                entry["boxes_not_judged"] = boxes
                entry["boxes_why"] = EVIDENCE["single_settlements"]
            rules.append(entry)
        judged = sum(1 for r in rules if r["state"] == "judged")
        return {"rules": len(rules), "judged": judged,
                "partly": sum(1 for r in rules if r["state"] == "partly"),
                "not_judged": sum(1 for r in rules if r["state"] == "not_judged"),
                "by_rule": rules}


def _without(findings: pl.DataFrame, keys: list[tuple], on: list[str]) -> pl.DataFrame:
    """`findings` but those whose `on` columns are one of `keys`."""
    if not keys:
        return findings
    dropped = pl.DataFrame(keys, schema=dict.fromkeys(on, pl.String), orient="row")
    return findings.join(dropped, on=on, how="anti", maintain_order="left")


def _by_value(found: Coverage, tables: pl.DataFrame) -> None:
    """(format 1.3, Cards known by value) A table whose rows hold a card known by value only
    records no suits; one holding an `X*`, no ranks: decided from the rows themselves."""
    if "value_only_cards" not in tables.columns:
        return
    counted = (tables.drop_nulls("table_id").group_by("table_id")
               .agg(pl.col("value_only_cards", "rankless_cards").sum()))
    for table, value_only, rankless in counted.iter_rows():
        if table not in found.tables:
            continue
        game, has = found.tables[table]
        lacking = ({"suits"} if value_only else set()) | ({"ranks"} if rankless else set())
        found.tables[table] = (game, has - lacking)


def of_log(tables: pl.DataFrame, marks: dict[str, set[str]] | None,
           unordered: pl.DataFrame | None = None) -> Coverage:
    """The coverage of a log: `tables` (table_id, game, wager_rows, irregularity_rows,
    net_boxes) as read, `marks` per table from an export's reading (None: a hand
    history)."""
    found = Coverage()
    counted = tables.select("table_id", "game", "wager_rows", "irregularity_rows",
                            "net_boxes", "first")
    for table, game, wagers, irregular, netted, first in counted.iter_rows():
        if table is None or game is None:
            continue
        has = set(recorded(None if marks is None else marks.get(table, set())))
        if not wagers:
            has.discard("wagers")
        if first is None:  # no row of the table has a time (1.3)
            has.discard("times")
        if not irregular:
            has.discard("irregularities")
        found.tables[table] = (game, frozenset(has))
        if netted:
            found.net_boxes[table] = found.net_boxes.get(table, 0) + netted
    _by_value(found, tables)
    if unordered is not None:
        found.unordered = unordered
    return found


# The columns of an export's events the evidence is read from (as text: the events of one
# file are text, another's times may be read), and the box a net result settles
_READ = ("table_id", "game", "event", "action", "card", "ts", "shoe_id", "round", "seat")


def of_export(read: Translated) -> Coverage:
    """The coverage an audit of the exports `read` (profiles.read.translate, held whole)
    would find, from their events before any audit: `profile check` says it per table."""
    frames = [events.select(pl.col(c).cast(pl.String) if c in events.columns
                            else pl.lit(None, pl.String).alias(c) for c in _READ)
              for events in read.events if events.height]
    if not frames:
        return Coverage()
    rows = pl.concat(frames)
    net = pl.col("event") == v.NET_EVENT
    tables = rows.group_by("table_id").agg(
        pl.col("game").drop_nulls().first(),
        *evidence_rows(),
        # boxes (a round's seat) settled by their net result
        pl.struct("shoe_id", "round", "seat").filter(net).n_unique().alias("net_boxes"),
        pl.col("ts").drop_nulls().first().alias("first"),
    )
    return of_log(tables, read.tables, read.unordered)
