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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from .rules import catalog
from .rules.registry import Rule

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

    def missing(self, rule: Rule, table: str) -> list[str]:
        """The evidence `rule` needs that `table`'s log does not record."""
        _, has = self.tables[table]
        return [n for n in rule.needs if n not in has]

    def applies(self, rule: Rule, table: str) -> bool:
        return rule.scope in ("input", "house") or rule.scope == self.tables[table][0]

    def not_judged(self, rule: Rule) -> list[tuple[str, str]]:
        """(table, why) of each table of the rule's game it is not judged on."""
        out = []
        for table in sorted(self.tables):
            if self.applies(rule, table):
                lacking = self.missing(rule, table)
                if lacking:
                    out.append((table, EVIDENCE[lacking[0]]))
        return out

    def keep(self, findings: pl.DataFrame) -> pl.DataFrame:
        """The findings of rules judged where they are (a finding of no table is kept)."""
        dropped = [
            (rule.id, table)
            for rule in catalog.REGISTRY.all() if rule.needs
            for table in self.tables if self.applies(rule, table) and self.missing(rule, table)
        ]
        if dropped:
            pairs = pl.DataFrame(dropped, schema={"rule_id": pl.String, "table_id": pl.String},
                                 orient="row")
            findings = findings.join(pairs, on=["rule_id", "table_id"], how="anti",
                                     maintain_order="left")
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

    def as_dict(self) -> dict:
        """`coverage` of summary.json: every rule, judged on every table of its game,
        on some, or on none, with the tables it was not judged on and why."""
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
