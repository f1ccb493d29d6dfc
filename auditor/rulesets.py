"""Regulation parameters and paragraph texts, loaded from the dated data under ``rulesets/``.

Each folder of ``rulesets/`` holds one section: ``parameters.toml`` (the numbers a rule
checks, each with the paragraph it comes from and its values keyed by effective date),
``paragraphs.toml`` (the section's paragraphs, written by ``scripts/extract_paragraphs.py``)
or ``sections.toml`` (the same shape, quoting a document that is not a regulation, such as
the input format), and ``unchecked.toml`` (each paragraph no rule checks, with the kind of
reason and the reason a hand history cannot show it: ``auditor paragraphs``). A lookup
takes the newest value dated on or before the day asked, so an audit of last year's logs
uses last year's rules.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .paths import data_dir

DEFAULT_ROOT = data_dir("rulesets")

PARAMETERS_FILE = "parameters.toml"
PARAGRAPH_FILES = ("paragraphs.toml", "sections.toml")
UNCHECKED_FILE = "unchecked.toml"
READINGS_FILE = "readings.toml"
PARAMETER_FIELDS = ("description", "unit", "reference", "values")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

# "9 NYCRR 5324.20(f)(13)": the section, then each level's label in parentheses.
NYCRR_CITATION = re.compile(r"^(?P<section>\d+ NYCRR \d+(?:\.\d+)?)(?P<levels>(?:\([0-9a-z]+\))*)$")
# "hand-history-v1 Columns": a document name, then the heading of one of its sections
# (words, spaces and commas: "Cards known by value, and net results").
DOCUMENT_CITATION = re.compile(
    r"^(?P<section>[a-z][a-z0-9.-]*) (?P<heading>[A-Z][A-Za-z ]*(?:, [A-Za-z ]+)*)$")
LEVEL_PATTERNS = (
    re.compile(r"[a-z]"),  # subdivision (a)
    re.compile(r"[1-9]\d*"),  # paragraph (1)
    re.compile(r"(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"),  # subparagraph (i)
    re.compile(r"[a-z]"),  # clause (a)
    re.compile(r"[1-9]\d*"),  # (1) below a clause
)


# Why no rule checks a paragraph: the kinds of reason unchecked.toml may give, each with
# what it means. A paragraph some rule checks is never given one.
REASON_KINDS: dict[str, str] = {
    "heading": "introduces subparagraphs of which not all are checked",
    "definition": "names or defines what the rules use; nothing in it can be breached",
    "layout": "what the table layout shows",
    "signage": "a sign posted at the table",
    "equipment": "equipment at or for the table, not a round's events",
    "opening": "the opening of the table and the inspection of cards or devices",
    "discretion": "a permission left to the dealer or a supervisor",
    "patron_duty": "a duty of the patron, not of the facility",
    "not_recorded": "acts or facts a hand history does not record",
    "other_game": "another game than the one audited",
}


class RulesetError(ValueError):
    """The ruleset data is missing, malformed, or has no value in force for the date asked."""


@dataclass(frozen=True)
class Paragraph:
    """One labelled paragraph (or document section) that findings cite.

    ``text`` is the paragraph with everything beneath it, each descendant on its own line
    after its label ("(a) win if ..."); ``own_text`` is only the paragraph's own words.
    """

    citation: str
    text: str
    own_text: str
    effective: date | None
    section: str
    title: str


@dataclass(frozen=True)
class Reason:
    """Why no rule checks a paragraph: one of REASON_KINDS and a sentence of its own."""

    citation: str
    kind: str
    reason: str


@dataclass(frozen=True)
class Reading:
    """How the auditor reads a section where the regulation is silent or garbled, or where
    a log records play one way of several, and the rules that reading governs."""

    title: str  # the section's heading on the readings page
    topic: str | None  # a heading of its own within the section (e.g. "Irregularities")
    topic_intro: str | None  # the topic's opening sentence
    rules: tuple[str, ...]
    text: str  # markdown: one paragraph


@dataclass(frozen=True)
class _Parameter:
    name: str
    description: str
    unit: str
    reference: str
    values: tuple[tuple[date, object], ...]  # oldest first

    def value_on(self, on: date) -> tuple[date, object] | None:
        in_force = [entry for entry in self.values if entry[0] <= on]
        return in_force[-1] if in_force else None


@dataclass(frozen=True)
class _Section:
    folder: str
    section: str
    title: str
    game: str | None
    parameters: Mapping[str, _Parameter]
    paragraphs: tuple[Paragraph, ...]
    reasons: tuple[Reason, ...] = ()
    readings: tuple[Reading, ...] = ()
    partly: Mapping[str, str] = dataclasses.field(default_factory=dict)


class Rulesets:
    """Every section under one rulesets root; build it with :func:`load_rulesets`."""

    def __init__(self, sections: Iterable[_Section]):
        self._sections = tuple(sections)
        self._games = {s.game: s for s in self._sections if s.game is not None}
        self._paragraphs = tuple(p for s in self._sections for p in s.paragraphs)
        self._by_citation = {p.citation: p for p in self._paragraphs}
        self._reasons = {r.citation: r for s in self._sections for r in s.reasons}
        self._partly = {c: why for s in self._sections for c, why in s.partly.items()}
        self._readings = tuple(r for s in self._sections for r in s.readings)

    def games(self) -> list[str]:
        return sorted(self._games)

    def section_of(self, game: str) -> tuple[str, str]:
        """The game's section citation and title, e.g. ("9 NYCRR 5324.20", "Baccarat")."""
        section = self._section(game)
        return section.section, section.title

    def params(self, game: str, on: date) -> dict[str, object]:
        """Every parameter of the game's section, as in force on `on`."""
        section = self._section(game)
        return {name: self._value(section, name, on) for name in section.parameters}

    def parameter(self, game: str, name: str, on: date) -> object:
        return self._value(self._section(game), name, on)

    def parameter_reference(self, game: str, name: str) -> str:
        return self._parameter(self._section(game), name).reference

    def effective_date(self, game: str, on: date) -> date:
        """The newest date on or before `on` from which a value or text of the game is in force."""
        section = self._section(game)
        dates = [day for p in section.parameters.values() for day, _ in p.values]
        dates += [p.effective for p in section.paragraphs if p.effective is not None]
        in_force = [day for day in dates if day <= on]
        if not in_force:
            raise RulesetError(f"no {game} rules in force on {on.isoformat()}")
        return max(in_force)

    def amendments(self, game: str, after: date, until: date) -> list[date]:
        """The days after `after`, up to `until`, on which a parameter of the game takes a
        new value: a period spanning one is judged in eras, each round under its day's."""
        section = self._section(game)
        return sorted({day for p in section.parameters.values() for day, _ in p.values
                       if after < day <= until})

    def has_paragraph(self, citation: str) -> bool:
        return citation in self._by_citation

    def paragraph(self, citation: str) -> Paragraph:
        try:
            return self._by_citation[citation]
        except KeyError:
            raise KeyError(f"no paragraph cited as {citation!r}") from None

    def paragraphs(self) -> list[Paragraph]:
        return list(self._paragraphs)

    def reason(self, citation: str) -> Reason | None:
        """Why no rule checks the paragraph, where unchecked.toml says; else None."""
        return self._reasons.get(citation)

    def partly(self, citation: str) -> str | None:
        """What a paragraph checked by rules asks that they do not check, where
        unchecked.toml says so (`[[partly]]`); else None."""
        return self._partly.get(citation)

    def readings(self, rule_id: str | None = None) -> list[Reading]:
        """Every reading, in the order of the files; or those governing one rule."""
        return [r for r in self._readings if rule_id is None or rule_id in r.rules]

    def _section(self, game: str) -> _Section:
        try:
            return self._games[game]
        except KeyError:
            raise RulesetError(f"no ruleset for game {game!r}") from None

    @staticmethod
    def _parameter(section: _Section, name: str) -> _Parameter:
        try:
            return section.parameters[name]
        except KeyError:
            raise KeyError(f"{section.section} has no parameter {name!r}") from None

    def _value(self, section: _Section, name: str, on: date) -> object:
        entry = self._parameter(section, name).value_on(on)
        if entry is None:
            raise RulesetError(
                f"{section.section}: parameter {name!r} has no value in force on {on.isoformat()}"
            )
        # The loaded data is cached and shared; a caller must not be able to change it.
        return copy.deepcopy(entry[1])


def load_rulesets(root: Path | None = None) -> Rulesets:
    """The rulesets under `root` (the repository's ``rulesets/`` by default), parsed once."""
    return _load(Path(root or DEFAULT_ROOT).resolve())


@functools.lru_cache(maxsize=8)
def _load(root: Path) -> Rulesets:
    if not root.is_dir():
        raise RulesetError(f"{root}: no rulesets folder")
    folders = sorted(folder for folder in root.iterdir() if folder.is_dir())
    sections = [s for s in map(_load_folder, folders) if s is not None]
    rulesets = Rulesets(sections)
    _check_unique(sections)
    _check_references(rulesets, sections)
    return rulesets


def _read_toml(path: Path) -> dict:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise RulesetError(f"{path}: not valid TOML: {error}") from None


def _load_folder(folder: Path) -> _Section | None:
    """The section in `folder`, or None for a folder with no ruleset files."""
    parameters_path = folder / PARAMETERS_FILE
    paragraph_paths = [folder / name for name in PARAGRAPH_FILES if (folder / name).is_file()]
    if len(paragraph_paths) > 1:
        raise RulesetError(f"{folder}: holds both {' and '.join(PARAGRAPH_FILES)}")
    paragraphs_path = paragraph_paths[0] if paragraph_paths else None
    if not parameters_path.is_file() and paragraphs_path is None:
        return None

    meta: dict | None = None
    parameters: dict[str, _Parameter] = {}
    if parameters_path.is_file():
        data = _read_toml(parameters_path)
        meta = _meta(parameters_path, data, ("section", "title", "game"))
        parameters = _parameters(parameters_path, data)

    paragraphs: tuple[Paragraph, ...] = ()
    if paragraphs_path is not None:
        data = _read_toml(paragraphs_path)
        paragraph_meta = _meta(paragraphs_path, data, ("section", "title"))
        if meta is not None and paragraph_meta["section"] != meta["section"]:
            raise RulesetError(
                f"{paragraphs_path}: meta.section {paragraph_meta['section']!r} differs from "
                f"{meta['section']!r} in {PARAMETERS_FILE}"
            )
        meta = meta or paragraph_meta
        paragraphs = _paragraphs(paragraphs_path, data, paragraph_meta)

    assert meta is not None  # one of the two files exists
    reasons: tuple[Reason, ...] = ()
    partly: dict[str, str] = {}
    if (folder / UNCHECKED_FILE).is_file():
        reasons, partly = _unchecked(folder / UNCHECKED_FILE, meta["section"], paragraphs)
    readings: tuple[Reading, ...] = ()
    if (folder / READINGS_FILE).is_file():
        readings = _readings(folder / READINGS_FILE, meta["section"])
    return _Section(
        folder=folder.name,
        section=meta["section"],
        title=meta["title"],
        game=meta.get("game"),
        parameters=parameters,
        paragraphs=paragraphs,
        reasons=reasons,
        partly=partly,
        readings=readings,
    )


def _meta(path: Path, data: dict, required: tuple[str, ...]) -> dict:
    meta = data.get("meta")
    if not isinstance(meta, dict):
        raise RulesetError(f"{path}: lacks a [meta] table")
    for key in required:
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise RulesetError(f"{path}: meta.{key} is missing or not a string")
    return meta


def _parameters(path: Path, data: dict) -> dict[str, _Parameter]:
    table = data.get("parameters", {})
    if not isinstance(table, dict):
        raise RulesetError(f"{path}: 'parameters' is not a table")
    return {name: _parameter(path, name, entry) for name, entry in table.items()}


def _parameter(path: Path, name: str, entry: object) -> _Parameter:
    key = f"parameters.{name}"
    if not isinstance(entry, dict):
        raise RulesetError(f"{path}: {key} is not a table")
    for field in PARAMETER_FIELDS:
        if field not in entry:
            raise RulesetError(f"{path}: {key} lacks '{field}'")
    for field in ("description", "unit", "reference"):
        if not isinstance(entry[field], str) or not entry[field]:
            raise RulesetError(f"{path}: {key}.{field} must be a non-empty string")
    values = entry["values"]
    if not isinstance(values, dict) or not values:
        raise RulesetError(f"{path}: {key}.values must be a table with at least one dated value")
    dated = {_value_date(path, key, day): value for day, value in values.items()}
    return _Parameter(
        name=name,
        description=entry["description"],
        unit=entry["unit"],
        reference=entry["reference"],
        values=tuple(sorted(dated.items(), key=lambda item: item[0])),
    )


def _value_date(path: Path, key: str, day: str) -> date:
    # fromisoformat alone also takes "20161116"; one spelling keeps one date one key.
    if ISO_DATE.fullmatch(day):
        try:
            return date.fromisoformat(day)
        except ValueError:
            pass
    raise RulesetError(f"{path}: {key}.values key {day!r} is not a date (YYYY-MM-DD)")


def _paragraphs(path: Path, data: dict, meta: dict) -> tuple[Paragraph, ...]:
    entries = data.get("paragraphs")
    if not isinstance(entries, list) or not entries:
        raise RulesetError(f"{path}: lacks [[paragraphs]] entries")
    own = [_own_paragraph(path, index, entry, meta) for index, entry in enumerate(entries)]
    return tuple(_with_descendants(own, index) for index in range(len(own)))


def _unchecked(path: Path, section: str,
               paragraphs: tuple[Paragraph, ...]) -> tuple[tuple[Reason, ...], dict[str, str]]:
    """unchecked.toml, read once: its reasons (`[[unchecked]]`, why no rule checks a
    paragraph) and what rules checking a paragraph in part leave unchecked of it
    (`[[partly]]`, by citation)."""
    data = _read_toml(path)
    meta = _meta(path, data, ("section",))
    if meta["section"] != section:
        raise RulesetError(f"{path}: meta.section {meta['section']!r} differs from {section!r}")
    known = {p.citation for p in paragraphs}
    reasons: dict[str, Reason] = {}
    for key, entry in _cited(path, data, "unchecked", ("citation", "kind", "reason"),
                             known, section):
        citation, kind = entry["citation"], entry["kind"]
        if citation in reasons:
            raise RulesetError(f"{path}: {key}.citation {citation!r} is given a reason twice")
        if kind not in REASON_KINDS:
            raise RulesetError(
                f"{path}: {key}.kind {kind!r} ({citation}) is not one of {', '.join(REASON_KINDS)}"
            )
        reasons[citation] = Reason(citation, kind, entry["reason"].strip())
    partly: dict[str, str] = {}
    for key, entry in _cited(path, data, "partly", ("citation", "reason"), known, section):
        if entry["citation"] in partly:
            raise RulesetError(f"{path}: {key}.citation {entry['citation']!r} is given twice")
        partly[entry["citation"]] = entry["reason"].strip()
    return tuple(reasons.values()), partly


def _cited(path: Path, data: dict, name: str, fields: tuple[str, ...], known: set[str],
           section: str) -> Iterator[tuple[str, dict]]:
    """The `[[name]]` tables of `data`, each with its key (`name[i]`), once every one of
    `fields` is a non-empty string and its citation is a paragraph of the section."""
    entries = data.get(name, [])
    if not isinstance(entries, list):
        raise RulesetError(f"{path}: '{name}' is not a list of [[{name}]] tables")
    for index, entry in enumerate(entries):
        key = f"{name}[{index}]"
        if not isinstance(entry, dict):
            raise RulesetError(f"{path}: {key} is not a table")
        for field in fields:
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise RulesetError(f"{path}: {key}.{field} is missing or not a string")
        if entry["citation"] not in known:
            raise RulesetError(
                f"{path}: {key}.citation {entry['citation']!r} is not a paragraph of {section}"
            )
        yield key, entry


def _readings(path: Path, section: str) -> tuple[Reading, ...]:
    """The readings of readings.toml, each naming at least one rule."""
    data = _read_toml(path)
    meta = _meta(path, data, ("section", "title"))
    if meta["section"] != section:
        raise RulesetError(f"{path}: meta.section {meta['section']!r} differs from {section!r}")
    topics = data.get("topics", {})
    entries = data.get("reading", [])
    if not isinstance(topics, dict) or not isinstance(entries, list):
        raise RulesetError(f"{path}: expects a [topics] table and [[reading]] tables")
    readings = []
    for index, entry in enumerate(entries):
        key = f"reading[{index}]"
        if not isinstance(entry, dict):
            raise RulesetError(f"{path}: {key} is not a table")
        rules, text, topic = entry.get("rules"), entry.get("text"), entry.get("topic")
        if not isinstance(text, str) or not text.strip():
            raise RulesetError(f"{path}: {key}.text is missing or not a string")
        if (not isinstance(rules, list) or not rules
                or not all(isinstance(r, str) and r for r in rules)):
            raise RulesetError(f"{path}: {key}.rules is not a list of rule ids")
        if topic is not None and topic not in topics:
            raise RulesetError(f"{path}: {key}.topic {topic!r} is not in [topics]")
        readings.append(Reading(meta["title"], topic,
                                topics.get(topic) if topic else None, tuple(rules),
                                text.strip()))
    return tuple(readings)


def _own_paragraph(path: Path, index: int, entry: object, meta: dict) -> Paragraph:
    key = f"paragraphs[{index}]"
    if not isinstance(entry, dict):
        raise RulesetError(f"{path}: {key} is not a table")
    citation = entry.get("citation")
    if not isinstance(citation, str):
        raise RulesetError(f"{path}: {key}.citation is missing or not a string")
    _check_citation(path, f"{key}.citation", citation, meta["section"])
    text = entry.get("text")
    if not isinstance(text, str):
        raise RulesetError(f"{path}: {key}.text ({citation}) is missing or not a string")
    effective = entry.get("effective")
    # tomllib reads an offset-less date as `date`; a datetime would be a typo in the data.
    if effective is not None and (type(effective) is not date):
        raise RulesetError(f"{path}: {key}.effective ({citation}) is not a date")
    return Paragraph(
        citation=citation,
        text=text,
        own_text=text,
        effective=effective,
        section=meta["section"],
        title=meta["title"],
    )


def _check_citation(path: Path, key: str, citation: str, section: str) -> None:
    nycrr = NYCRR_CITATION.match(citation)
    document = DOCUMENT_CITATION.match(citation)
    match = nycrr or document
    if match is None or match["section"] != section:
        raise RulesetError(
            f"{path}: {key} {citation!r} is malformed: expected {section!r} followed by "
            "its levels in parentheses, e.g. '9 NYCRR 5324.20(f)(13)', or by a heading"
        )
    if nycrr is None:
        return
    labels = re.findall(r"\(([^()]*)\)", nycrr["levels"])
    if len(labels) > len(LEVEL_PATTERNS) or not all(
        pattern.fullmatch(label) for pattern, label in zip(LEVEL_PATTERNS, labels, strict=False)
    ):
        raise RulesetError(
            f"{path}: {key} {citation!r} is malformed: levels go (a), (1), (i), (a), (1)"
        )


def _with_descendants(own: list[Paragraph], index: int) -> Paragraph:
    """The paragraph at `index` with the texts of the paragraphs beneath it appended; in
    document order they follow it directly, and their citations extend its citation."""
    parent = own[index]
    prefix = parent.citation + "("
    lines = [parent.own_text] if parent.own_text else []
    for child in own[index + 1 :]:
        if not child.citation.startswith(prefix):
            break
        label = child.citation[child.citation.rindex("(") :]
        lines.append(f"{label} {child.own_text}".rstrip())
    return Paragraph(
        citation=parent.citation,
        text="\n".join(lines),
        own_text=parent.own_text,
        effective=parent.effective,
        section=parent.section,
        title=parent.title,
    )


def _check_unique(sections: list[_Section]) -> None:
    """Two folders for one section or game would make lookups depend on folder order."""
    seen: dict[str, str] = {}
    for section in sections:
        keys = [f"section {section.section}"]
        if section.game is not None:
            keys.append(f"game {section.game}")
        for key in keys:
            if key in seen:
                raise RulesetError(f"{section.folder}: {key} is also in {seen[key]}")
            seen[key] = section.folder
        counts = Counter(p.citation for p in section.paragraphs)
        duplicates = sorted(citation for citation, count in counts.items() if count > 1)
        if duplicates:
            raise RulesetError(f"{section.folder}: paragraph cited twice: {duplicates[0]}")


def _check_references(rulesets: Rulesets, sections: list[_Section]) -> None:
    for section in sections:
        for parameter in section.parameters.values():
            if not rulesets.has_paragraph(parameter.reference):
                raise RulesetError(
                    f"{section.folder}/{PARAMETERS_FILE}: parameters.{parameter.name}.reference "
                    f"{parameter.reference!r} is not a paragraph in the rulesets"
                )
