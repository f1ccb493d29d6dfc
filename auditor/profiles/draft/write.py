"""The draft as a profile (TOML, export-profiles-v1 revision 1.1): every guess with its
evidence in a comment beside it, every undecided key written as the text "TODO: ...",
which keeps the file valid TOML and which the profile loader refuses, naming the line,
until a person settles it."""

from __future__ import annotations

import json
import re

from .build import Draft, Line, SourceDraft
from .notation import Todo

TODO = "TODO: "
WIDTH = 92  # a comment longer than this goes on the lines above its key


def text(draft: Draft) -> str:
    out = ["# Drafted by `auditor profile draft` from a sample of each export:"]
    out += [f"#   {note}" for note in draft.notes]
    out += ["# Each guess is followed by its evidence. A value \"TODO: ...\" is a decision "
            "left to you:",
            "# the profile is refused until every one is settled. Check it with",
            "# `auditor profile check PROFILE FILE...`.", "",
            "[profile]", line(Line("name", draft.name)), line(Line("version", 1)), ""]
    for source in draft.sources:
        out += _source(source)
    return "\n".join(out).rstrip("\n") + "\n"


def todos(draft_text: str) -> list[tuple[int, str]]:
    """(line, text) of each TODO value in a written draft."""
    return [(n, row.strip()) for n, row in enumerate(draft_text.splitlines(), start=1)
            if not row.lstrip().startswith("#") and f'"{TODO}' in row]


def _source(source: SourceDraft) -> list[str]:
    out = ["[[source]]", line(Line("name", source.name))]
    out += [line(x) for x in source.head]
    if source.columns:
        out += ["", "[source.columns]", *[line(x) for x in source.columns]]
    for column, (evidence, entries) in source.values.items():
        out += ["", f"[source.values.{column}]", *_comment(evidence),
                *[line(x) for x in entries]]
    if source.cards:
        out += ["", "[source.cards]", *[line(x) for x in source.cards]]
    if source.notes:
        out += ["", *[c for note in source.notes for c in _comment(note)]]
    return [*out, ""]


def line(x: Line) -> str:
    said = f"{key(x.key)} = {value(x.value)}"
    if not x.note:
        return said
    if len(said) + len(x.note) + 4 <= WIDTH:
        return f"{said}  # {x.note}"
    return "\n".join([*_comment(x.note), said])


def _comment(note: str) -> list[str]:
    words, rows, row = note.split(), [], "#"
    for word in words:
        if len(row) + 1 + len(word) > WIDTH and row != "#":
            rows.append(row)
            row = "#  "
        row += " " + word
    return [*rows, row] if row.strip("# ") else rows


def key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _string(name)


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string


def value(v: object) -> str:
    if isinstance(v, Todo):
        return _string(TODO + v.text)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {v!r}")
