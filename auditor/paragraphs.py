"""What is checked, paragraph by paragraph.

Every paragraph of the regulation's game sections (9 NYCRR 5324.20, 5324.10) with the rules
that check it, or why a hand history cannot show it. A rule checks the paragraph it cites and
those it names in `also`. A paragraph no rule checks itself, whose subparagraphs are all
checked (each by a rule or, in turn, through its own subparagraphs), is checked through them.
Any other paragraph has a reason in its section's ``unchecked.toml`` (its kind one of
``rulesets.REASON_KINDS``); a paragraph with neither is listed as *missing* and one with both
as *both*, and tests/test_paragraphs.py fails on either, so no paragraph is forgotten
silently.

`auditor paragraphs`, the report's appendix C and the manual's "Paragraph by paragraph" page
(docs/checked/paragraphs.md) are all made from `listing()`.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from .rules.registry import Rule
from .rulesets import REASON_KINDS, Rulesets

# A paragraph's state: checked by a rule, checked through its subparagraphs, not checked for
# a reason; missing (neither) and both are faults of the data that the tests catch.
STATES = ("checked", "subparagraphs", "reason", "missing", "both")
WIDTH = 96  # the text listing's lines


@dataclass(frozen=True)
class Coverage:
    """One paragraph: who checks it, or why no rule does."""

    citation: str
    label: str  # the citation after its section: "(a)(4)(i)"
    text: str  # the paragraph's own words
    effective: date | None
    rules: tuple[str, ...]  # the rules citing it or naming it in `also`
    through: tuple[str, ...]  # the rules of its subparagraphs, when checked through them
    kind: str | None
    reason: str | None
    partly: str | None = None  # what the rules checking it do not check of it

    @property
    def state(self) -> str:
        checked = bool(self.rules or self.through)
        if self.reason is not None:
            return "both" if checked else "reason"
        if self.rules:
            return "checked"
        return "subparagraphs" if self.through else "missing"

    @property
    def checked(self) -> bool:
        return self.state in ("checked", "subparagraphs")

    def as_dict(self) -> dict:
        return {
            "citation": self.citation,
            "text": self.text,
            "effective": self.effective.isoformat() if self.effective else None,
            "state": self.state,
            "rules": list(self.rules),
            "through_subparagraphs": list(self.through),
            "kind": self.kind,
            "reason": self.reason,
            "partly": self.partly,
        }


@dataclass(frozen=True)
class Section:
    section: str  # "9 NYCRR 5324.20"
    title: str
    game: str
    paragraphs: tuple[Coverage, ...]

    @property
    def short(self) -> str:
        """ "5324.20": the section's number, as `--section` takes it."""
        return self.section.rsplit(" ", 1)[-1]


def listing(rs: Rulesets, rules: Iterable[Rule] | None = None,
            sections: Iterable[str] | None = None) -> list[Section]:
    """Every paragraph of each game's section (or of `sections`, "5324.20" or
    "9 NYCRR 5324.20"), in document order, with the `rules` (all registered by default)
    that check it or the reason none does."""
    if rules is None:
        from .rules.catalog import REGISTRY

        rules = REGISTRY.all()
    checking: dict[str, set[str]] = {}
    for rule in rules:
        for citation in (rule.citation, *rule.also):
            checking.setdefault(citation, set()).add(rule.id)
    wanted = None if sections is None else set(sections)
    out = []
    for game in rs.games():
        section, title = rs.section_of(game)
        if wanted is not None and not wanted & {section, section.rsplit(" ", 1)[-1]}:
            continue
        own = [p for p in rs.paragraphs() if p.section == section]
        out.append(Section(section, title, game, _covered(own, checking, rs)))
    return out


def _parent(citation: str) -> str:
    return citation[: citation.rindex("(")] if citation.endswith(")") else ""


def _covered(paragraphs, checking: dict[str, set[str]], rs: Rulesets) -> tuple[Coverage, ...]:
    """Each paragraph with its rules; a subparagraph follows its paragraph in document order,
    so walking backwards settles every subparagraph before the paragraph above it."""
    children: dict[str, list[str]] = {}
    for p in paragraphs:
        children.setdefault(_parent(p.citation), []).append(p.citation)
    # citation -> (rules checking it or, through its subparagraphs, the rules that do)
    checked: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for p in reversed(paragraphs):
        direct = tuple(sorted(checking.get(p.citation, ())))
        subs = children.get(p.citation, [])
        through: tuple[str, ...] = ()
        if not direct and subs and all(any(checked[c]) for c in subs):
            through = tuple(sorted({r for c in subs for part in checked[c] for r in part}))
        checked[p.citation] = (direct, through)
    out = []
    for p in paragraphs:
        reason = rs.reason(p.citation)
        out.append(Coverage(
            citation=p.citation,
            label=p.citation[len(p.section):],
            text=p.own_text,
            effective=p.effective,
            rules=checked[p.citation][0],
            through=checked[p.citation][1],
            kind=reason.kind if reason else None,
            reason=reason.reason if reason else None,
            partly=rs.partly(p.citation),
        ))
    return tuple(out)


def totals(sections: Iterable[Section]) -> dict:
    """How many paragraphs there are, are checked, have a reason (per kind), and neither."""
    paragraphs = [c for s in sections for c in s.paragraphs]
    states = Counter(c.state for c in paragraphs)
    kinds = Counter(c.kind for c in paragraphs if c.state == "reason")
    return {
        "paragraphs": len(paragraphs),
        "checked": states["checked"] + states["subparagraphs"],
        "checked_through_subparagraphs": states["subparagraphs"],
        "with_reason": states["reason"],
        "missing": [c.citation for c in paragraphs if c.state == "missing"],
        "both": [c.citation for c in paragraphs if c.state == "both"],
        "by_kind": {kind: kinds[kind] for kind in REASON_KINDS if kinds[kind]},
    }


def count_line(sections: Iterable[Section]) -> str:
    """ "N of M paragraphs checked by rules, K with a reason" (and any faults of the data)."""
    t = totals(sections)
    line = (f"{t['checked']} of {t['paragraphs']} paragraphs checked by rules, "
            f"{t['with_reason']} with a reason")
    if t["missing"]:
        line += f", {len(t['missing'])} with neither"
    if t["both"]:
        line += f", {len(t['both'])} with both"
    return line


def short(text: str, width: int) -> str:
    """The paragraph's first line, cut at a word to `width` characters."""
    first = " ".join(text.splitlines()[0].split()) if text else ""
    return textwrap.shorten(first, width, placeholder=" …") if len(first) > width else first


def verdict(c: Coverage) -> str:
    """What checks the paragraph, or why nothing does, in a few words."""
    parts = []
    if c.rules:
        parts.append(f"checked by {', '.join(c.rules)}"
                     + (f", in part: {c.partly}" if c.partly else ""))
    if c.through:
        parts.append(f"checked through its subparagraphs by {', '.join(c.through)}")
    if c.reason is not None:
        parts.append(f"not checked ({c.kind}): {c.reason}")
    if not parts:
        parts.append("NEITHER a rule nor a reason (unchecked.toml gives none)")
    return "; ".join(parts)


# --- the three listings: text, json, markdown ------------------------------------------


def as_text(sections: list[Section]) -> str:
    lines: list[str] = []
    for s in sections:
        dates = {c.effective for c in s.paragraphs}
        uniform = len(dates) == 1
        head = f"{s.section} {s.title}: {len(s.paragraphs)} paragraphs"
        if uniform and None not in dates:
            head += f", in force from {next(iter(dates)).isoformat()}"
        lines += [head, ""]
        for c in s.paragraphs:
            indent = "  " * (c.label.count("(") - 1)
            when = "" if uniform or c.effective is None else f" [from {c.effective.isoformat()}]"
            head = f"{indent}{c.label}{when}  "
            lines.append(head + short(c.text, max(40, WIDTH - len(head))))
            lines += textwrap.wrap(verdict(c), WIDTH, initial_indent=indent + "    ",
                                   subsequent_indent=indent + "      ")
        lines.append("")
    lines.append(count_line(sections) + ".")
    t = totals(sections)
    for key, words in (("missing", "Neither a rule nor a reason"), ("both", "Both")):
        if t[key]:
            lines += textwrap.wrap(f"{words}: {', '.join(t[key])}.", WIDTH,
                                   subsequent_indent="  ")
    return "\n".join(lines)


def as_json(sections: list[Section]) -> str:
    return json.dumps(
        {
            "sections": [
                {"section": s.section, "title": s.title, "game": s.game,
                 "paragraphs": [c.as_dict() for c in s.paragraphs]}
                for s in sections
            ],
            "kinds": REASON_KINDS,
            "totals": totals(sections),
        },
        indent=2,
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def as_markdown(sections: list[Section]) -> str:
    """A summary (counts per kind of reason and section) and every paragraph in a table."""
    t = totals(sections)
    lines = [
        f"Of the {t['paragraphs']} paragraphs of "
        f"{' and '.join(s.section for s in sections)}, {t['checked']} are checked by rules "
        f"({t['checked_through_subparagraphs']} of them through their subparagraphs) and "
        f"{t['with_reason']} have a reason a hand history cannot show them "
        "(`rulesets/*/unchecked.toml`; `auditor paragraphs` lists them)"
        + (f"; {len(t['missing'])} have neither: "
           f"{', '.join(c.split(' ')[-1] for c in t['missing'])}." if t["missing"] else "."),
        "",
        "| | " + " | ".join(s.short for s in sections) + " |",
        "| --- |" + " ---: |" * len(sections),
    ]
    per = [totals([s]) for s in sections]
    lines.append("| checked by rules | " + " | ".join(str(p["checked"]) for p in per) + " |")
    for kind, meaning in REASON_KINDS.items():
        if kind in t["by_kind"]:
            counts = " | ".join(str(p["by_kind"].get(kind, 0)) for p in per)
            lines.append(f"| not checked, `{kind}`: {meaning} | {counts} |")
    if t["missing"]:
        lines.append("| neither a rule nor a reason | "
                     + " | ".join(str(len(p["missing"])) for p in per) + " |")
    lines += ["", "<details><summary>Every paragraph, with the rules that check it or why "
              "none does</summary>", ""]
    lines += ["| paragraph | text | checked by, or why not |", "| --- | --- | --- |"]
    for s in sections:
        for c in s.paragraphs:
            lines.append(f"| {s.short}{c.label} | {_cell(short(c.text, 60))} | "
                         f"{_cell(_markdown_verdict(c))} |")
    lines += ["", "</details>"]
    return "\n".join(lines)


def _markdown_verdict(c: Coverage) -> str:
    if c.state == "checked":
        return ", ".join(c.rules) + (f" (in part: {c.partly})" if c.partly else "")
    if c.state == "subparagraphs":
        return f"through its subparagraphs: {', '.join(c.through)}"
    if c.state == "reason":
        return f"`{c.kind}`: {c.reason}"
    return verdict(c)
