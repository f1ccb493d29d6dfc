"""Split a New York regulation text into its labelled paragraphs, as TOML data.

    .venv/bin/python scripts/extract_paragraphs.py REGULATION.txt [...] [--out FILE]

Each regulation file becomes ``rulesets/<title>-nycrr-<section>/paragraphs.toml``
(or ``--out`` when a single file is given): a ``[meta]`` table and one
``[[paragraphs]]`` entry per labelled paragraph, in document order, with its
citation, its own text and the date that text is in force from. The output
depends only on the input text, so re-running the script is safe.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The label kinds of the five levels of a NYCRR section:
# subdivision (a), paragraph (1), subparagraph (i), clause (a), and (1) below that.
LEVEL_KINDS = ("letter", "number", "roman", "letter", "number")
FIRST_LABEL = {"letter": "a", "number": "1", "roman": "i"}

LABEL_LINE = re.compile(r"^\(([a-z]+|\d+)\)\s*(.*)$")
ROMAN_DIGITS = (
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
)

CITATION_HEADER = re.compile(r"tit\.\s*(\d+)\s*§\s*([\d.]+)")
SECTION_LINE = re.compile(r"^Section\s+([\d.]+)\s+-\s+(.+)$")
CURRENT_THROUGH = re.compile(r"^Current through Register\b.*$")
TRAILER_LINE = re.compile(r"^N\.Y\. Comp\. Codes")
EFFECTIVE_NOTE = re.compile(r"^(Adopted|Amended)\b.*\beff\.\s*(\d{1,2})/(\d{1,2})/(\d{4})")

# Words that make a capitalised opening a sentence of rule text rather than a heading.
VERBS = {"shall", "may", "must", "is", "are", "will", "be"}


class ExtractError(ValueError):
    """The regulation text does not have the shape this script expects."""


@dataclass
class Node:
    labels: tuple[str, ...]
    lines: list[str] = field(default_factory=list)


@dataclass
class Regulation:
    title_number: str
    section_number: str
    title: str
    source: str
    adopted: date
    amended: date | None
    nodes: list[Node]

    @property
    def section(self) -> str:
        return f"{self.title_number} NYCRR {self.section_number}"

    @property
    def effective(self) -> date:
        # The text is the one as last amended, so it is in force from the amendment.
        return self.amended or self.adopted

    def citation(self, node: Node) -> str:
        return self.section + "".join(f"({label})" for label in node.labels)


def int_to_roman(number: int) -> str:
    out = []
    for value, digits in ROMAN_DIGITS:
        count, number = divmod(number, value)
        out.append(digits * count)
    return "".join(out)


# Subparagraphs never run past a few dozen; a table also rejects non-canonical numerals.
ROMAN_NUMBERS = {int_to_roman(number): number for number in range(1, 100)}


def successor(label: str, kind: str) -> str | None:
    """The label that follows `label` at a level of `kind`, or None if it is not of that kind."""
    if kind == "number":
        return str(int(label) + 1) if label.isdigit() else None
    if kind == "roman":
        value = ROMAN_NUMBERS.get(label)
        return int_to_roman(value + 1) if value else None
    if len(label) == 1 and "a" <= label < "z":
        return chr(ord(label) + 1)
    return None


def begins_heading(text: str) -> bool:
    """Whether `text` opens with a short capitalised heading such as "Irregularities."."""
    match = re.match(r"^([A-Z][^.:]*)\.(?:\s|$)", text)
    if not match:
        return False
    words = re.findall(r"[A-Za-z']+", match.group(1))
    return len(words) <= 12 and not VERBS.intersection(w.lower() for w in words)


def candidate_depths(stack: list[str], label: str) -> list[int]:
    """Every depth at which `label` may stand: the next label of a level already open, or the
    first label of the level below the deepest open one."""
    depths = [
        depth
        for depth, open_label in enumerate(stack)
        if successor(open_label, LEVEL_KINDS[depth]) == label
    ]
    if len(stack) < len(LEVEL_KINDS) and label == FIRST_LABEL[LEVEL_KINDS[len(stack)]]:
        depths.append(len(stack))
    return depths


def place_label(stack: list[str], label: str, text: str, line_number: int) -> int:
    """The depth of a label. The deepest reading wins, except that a label that could also be
    the next subdivision and opens a heading is that subdivision: "(i) Irregularities." after
    subdivision (h) would otherwise read as subparagraph (i) of the last paragraph."""
    depths = candidate_depths(stack, label)
    if not depths:
        raise ExtractError(f"line {line_number}: label ({label}) does not follow {stack}")
    if 0 in depths and begins_heading(text):
        return 0
    return max(depths)


def split_paragraphs(body: list[tuple[int, str]]) -> list[Node]:
    """Split the numbered body lines into labelled nodes; unlabelled lines (tables) stay with
    the paragraph before them, one line per row."""
    nodes: list[Node] = []
    stack: list[str] = []
    for line_number, line in body:
        match = LABEL_LINE.match(line)
        if match is None:
            if not nodes:
                raise ExtractError(f"line {line_number}: text before the first label: {line!r}")
            nodes[-1].lines.append(line)
            continue
        label, text = match.groups()
        depth = place_label(stack, label, text, line_number)
        stack[depth:] = [label]
        nodes.append(Node(tuple(stack), [text] if text else []))
    return nodes


def effective_dates(trailer: list[str]) -> tuple[date, date | None]:
    adopted = None
    amended = None
    for line in trailer:
        match = EFFECTIVE_NOTE.match(line)
        if match is None:
            continue
        kind, month, day, year = match.groups()
        when = date(int(year), int(month), int(day))
        if kind == "Adopted":
            adopted = when
        else:
            # Later amendments are listed after earlier ones; the text is the latest.
            amended = when
    if adopted is None:
        raise ExtractError("no 'Adopted ... eff. M/D/YYYY' line after the text")
    return adopted, amended


def parse_regulation(text: str) -> Regulation:
    lines = [line.rstrip() for line in text.splitlines()]
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    body_start = next((i for i, (_, line) in enumerate(numbered) if LABEL_LINE.match(line)), None)
    if body_start is None:
        raise ExtractError("no labelled paragraph found")
    header = [line for _, line in numbered[:body_start]]
    body_end = next(
        (i for i in range(body_start, len(numbered)) if TRAILER_LINE.match(numbered[i][1])),
        len(numbered),
    )
    trailer = [line for _, line in numbered[body_end:]]

    header_match = next(filter(None, map(CITATION_HEADER.search, header)), None)
    section_match = next(filter(None, map(SECTION_LINE.match, header)), None)
    source = next((line for line in header if CURRENT_THROUGH.match(line)), None)
    if header_match is None or section_match is None or source is None:
        raise ExtractError("header lacks the citation, 'Section ... - Title' or 'Current through'")
    if header_match.group(2) != section_match.group(1):
        raise ExtractError("the header citation and the 'Section' line name different sections")
    adopted, amended = effective_dates(trailer)
    return Regulation(
        title_number=header_match.group(1),
        section_number=section_match.group(1),
        title=section_match.group(2).strip(),
        source=source,
        adopted=adopted,
        amended=amended,
        nodes=split_paragraphs(numbered[body_start:body_end]),
    )


def toml_string(value: str) -> str:
    """A TOML basic string; tabs and newlines are escaped so table rows stay visible."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
    )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in escaped):
        raise ExtractError(f"control character in {value!r}")
    return f'"{escaped}"'


def render_toml(regulation: Regulation, source_name: str) -> str:
    out = [
        f"# Paragraphs of {regulation.section} ({regulation.title}), from {source_name}.",
        "# Written by scripts/extract_paragraphs.py: re-run it rather than editing by hand.",
        "",
        "[meta]",
        f"section = {toml_string(regulation.section)}",
        f"title = {toml_string(regulation.title)}",
        f"source = {toml_string(regulation.source)}",
        f"adopted = {regulation.adopted.isoformat()}",
    ]
    if regulation.amended is not None:
        out.append(f"amended = {regulation.amended.isoformat()}")
    for node in regulation.nodes:
        out += [
            "",
            "[[paragraphs]]",
            f"citation = {toml_string(regulation.citation(node))}",
            f"effective = {regulation.effective.isoformat()}",
            f"text = {toml_string(chr(10).join(node.lines))}",
        ]
    return "\n".join(out) + "\n"


def default_output(regulation: Regulation) -> Path:
    folder = f"{regulation.title_number}-nycrr-{regulation.section_number}"
    return ROOT / "rulesets" / folder / "paragraphs.toml"


def extract(source: Path, out: Path | None = None) -> Path:
    regulation = parse_regulation(source.read_text(encoding="utf-8"))
    target = out or default_output(regulation)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Fixed newline so the file is byte-identical whatever the platform.
    target.write_text(render_toml(regulation, source.name), encoding="utf-8", newline="\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("regulations", nargs="+", type=Path, help="regulation text files")
    parser.add_argument("--out", type=Path, help="output file (only with one regulation)")
    args = parser.parse_args(argv)
    if args.out and len(args.regulations) > 1:
        parser.error("--out takes a single regulation file")
    for source in args.regulations:
        try:
            target = extract(source, args.out)
        except (ExtractError, OSError) as error:
            print(f"{source}: {error}", file=sys.stderr)
            return 2
        print(f"{source} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
