"""Rule metadata, registered once.

A rule is one documented unit: a stable id (family prefix + digits, never
reused), a title naming what it flags, the paragraph it enforces, severity,
game, and docs with a failing and a passing example. The quoted paragraph is
not copied here: it is read from `rulesets/` by the citation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from ..audit_context import GameContext
    from ..house import HouseRules

SEVERITIES = ("error", "warning")
SCOPES = ("input", "house", "baccarat", "blackjack")
PART = "part"  # the check column naming a rule's part (Part)

# What a game rule's check returns: one row per exception. Missing optional
# columns are filled in; `amount_cents` is money at stake (positive: the
# patron was underpaid or overcharged; negative: overpaid).
CHECK_COLUMNS: dict[str, pl.DataType] = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "round": pl.Int64(),
    "seq": pl.Int64(),
    "message": pl.String(),
    "expected": pl.String(),
    "observed": pl.String(),
    "amount_cents": pl.Int64(),
    # the paragraph the finding cites, for a rule whose findings each name theirs
    # (Rule.citation_per_finding); null elsewhere: the rule's citation
    "citation": pl.String(),
    # the part of the rule (Rule.parts) whose check gave the row; null: the rule's common
    # check. Coverage reads it to drop a part's findings where its evidence is lacking;
    # it is no column of the findings
    PART: pl.String(),
}


@dataclass(frozen=True)
class Part:
    """A check within a rule that needs evidence the rule's other checks do not
    (export-profiles-v1 1.1, Coverage): a surrender's settled amount is plain from a wagers
    row, when it was settled is not. The rule's check names the part on the rows it gives
    (check column `part`); where a table's log lacks what the part needs, those rows give
    no finding there and coverage says the rule was judged "partly", the rest of the rule
    still judged. A part needs kinds decided per table only (not `settle_order` on its
    rounds, nor a per-box kind): coverage drops those per rule."""

    name: str  # a word, unique within its rule: `timing`
    what: str  # what the part checks, in a few words
    needs: tuple[str, ...]  # evidence it needs besides the rule's own `needs`

    def where(self, condition: pl.Expr | None = None) -> pl.Expr:
        """The check column `part`: this part on the rows where `condition` holds (on
        every row without one), else null (the rule's common check)."""
        if condition is None:
            return pl.lit(self.name, pl.String).alias(PART)
        return pl.when(condition).then(pl.lit(self.name)).otherwise(pl.lit(None, pl.String)) \
            .alias(PART)

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "what": self.what, "needs": list(self.needs)}


@dataclass(frozen=True)
class Rule:
    id: str
    name: str  # kebab-case, names what the rule flags
    title: str
    citation: str
    severity: str
    scope: str  # input, house, baccarat or blackjack
    what: str  # what it checks, in a sentence or two
    fail_example: str
    pass_example: str
    overcharge: bool = False  # a positive amount is an overcharge rather than an underpayment
    check: Callable[[GameContext], pl.DataFrame] | None = None
    # A rule judged over tables that may be audited in different parts of the log
    # (the tables of a pit): `check` then gives each part's evidence, with the
    # table_id and seq of every row a finding may point at, and `across` judges the
    # evidence of all parts at once, giving the check rows.
    across: Callable[[pl.DataFrame, HouseRules], pl.DataFrame] | None = None
    # Whether the shoes the evidence names are kept for the report (the rows of shoes
    # with findings): False where the evidence is every shoe (BA108's cards), whose few
    # findings are judged at the end; the evidence then carries each row's file_id and
    # line (and `audited`), so that its findings are located without the part's events
    evidence_names_shoes: bool = True
    # The evidence the rule needs (coverage.EVIDENCE): where a table's log does not
    # record one of them, the rule is not judged there. What every check of the rule
    # needs; a part's check needs its own besides (`parts`)
    needs: tuple[str, ...] = ()
    # The checks of the rule that need more evidence than `needs` (Part): judged where
    # their own evidence is recorded, the rest of the rule judged without them
    parts: tuple[Part, ...] = ()
    # Further paragraphs the rule checks besides the one it cites (e.g. the card values the
    # point counts it compares rest on): `auditor paragraphs` lists the rule under each
    also: tuple[str, ...] = ()
    # Each finding names the paragraph it cites (a check column `citation`, one of
    # `citation` and `also`): a net result's difference cites the one wager that explains
    # it, else the box's payout paragraph, the rule's `citation`
    citation_per_finding: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "title": self.title,
            "citation": self.citation,
            "severity": self.severity,
            "scope": self.scope,
            "what": self.what,
            "fail_example": self.fail_example,
            "pass_example": self.pass_example,
            "needs": list(self.needs),
            "parts": [p.as_dict() for p in self.parts],
            "also": list(self.also),
        }


class Registry:
    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

    def add(self, rule: Rule) -> Rule:
        if rule.id in self._rules:
            raise ValueError(f"rule id {rule.id} registered twice")
        if rule.severity not in SEVERITIES or rule.scope not in SCOPES:
            raise ValueError(f"rule {rule.id}: bad severity or scope")
        _check_parts(rule)
        self._rules[rule.id] = rule
        return rule

    def get(self, rule_id: str) -> Rule:
        return self._rules[rule_id.upper()]

    def __contains__(self, rule_id: str) -> bool:
        return rule_id.upper() in self._rules

    def all(self) -> list[Rule]:
        return sorted(self._rules.values(), key=lambda r: r.id)

    def for_scope(self, scope: str) -> list[Rule]:
        return [r for r in self.all() if r.scope == scope]

    def metadata_frame(self) -> pl.DataFrame:
        rules = self.all()
        return pl.DataFrame(
            {
                "rule_id": [r.id for r in rules],
                "citation": [r.citation for r in rules],
                "severity": [r.severity for r in rules],
                "overcharge": [r.overcharge for r in rules],
                "citation_per_finding": [r.citation_per_finding for r in rules],
            }
        )


def _check_parts(rule: Rule) -> None:
    """A part is named once in its rule and needs evidence the rule does not, and that
    alone: else it would be judged wherever the rule is, and be no part."""
    names = [p.name for p in rule.parts]
    if len(set(names)) != len(names):
        raise ValueError(f"rule {rule.id}: a part named twice")
    for part in rule.parts:
        if not part.needs or set(part.needs) & set(rule.needs):
            raise ValueError(f"rule {rule.id}: part {part.name} must need evidence of its "
                             "own, and only what the rule does not")


REGISTRY = Registry()
register = REGISTRY.add
