"""The draft as a profile (TOML, export-profiles-v1 revision 1.1): every guess with its
evidence in a comment beside it, every undecided key written as the text "TODO: ...",
which keeps the file valid TOML and which the profile loader refuses, naming the line,
until a person settles it.

`provisional` writes the same profile with each TODO read as a value that will do for
a coverage preview (the spec's default, or the first choice), for `profile draft`'s
check only: never a profile a person is given.
"""

from __future__ import annotations

import json
import re

from .build import Draft, Line, SourceDraft
from .notation import Todo

TODO = "TODO: "
WIDTH = 92  # a comment longer than this goes on the lines above its key


class _NoProvisional(Exception):
    """A TODO with no provisional value: no preview can be made."""


def text(draft: Draft) -> str:
    return _Writer(None).profile(draft)


def provisional(draft: Draft) -> tuple[str, list[str]] | None:
    """The draft with each TODO read as its provisional value, and the lines so written;
    None where some TODO has no such value."""
    said: list[str] = []
    try:
        return _Writer(said).profile(draft), said
    except _NoProvisional:
        return None


def todos(draft_text: str) -> list[tuple[int, str]]:
    """(line, text) of each TODO value in a written draft."""
    return [(n, row.strip()) for n, row in enumerate(draft_text.splitlines(), start=1)
            if not row.lstrip().startswith("#") and f'"{TODO}' in row]


class _Writer:
    def __init__(self, provisional: list[str] | None) -> None:
        self.provisional = provisional

    def profile(self, draft: Draft) -> str:
        out = ["# Drafted by `auditor profile draft` from a sample of each export:"]
        out += [f"#   {note}" for note in draft.notes]
        out += ["# Each guess is followed by its evidence. A value \"TODO: ...\" is a decision "
                "left to you:",
                "# the profile is refused until every one is settled. Check it with",
                "# `auditor profile check PROFILE FILE...`.", "",
                "[profile]", self.line(Line("name", draft.name)),
                self.line(Line("version", 1)), ""]
        for source in draft.sources:
            out += self.source(source)
        return "\n".join(out).rstrip("\n") + "\n"

    def source(self, source: SourceDraft) -> list[str]:
        out = ["[[source]]", self.line(Line("name", source.name))]
        out += [self.line(x) for x in source.head]
        if source.columns:
            out += ["", "[source.columns]", *[self.line(x) for x in source.columns]]
        for column, (evidence, entries) in source.values.items():
            out += ["", f"[source.values.{column}]", *_comment(evidence),
                    *[self.line(x) for x in entries]]
        if source.cards:
            out += ["", "[source.cards]", *[self.line(x) for x in source.cards]]
        notes = list(source.notes)
        if source.unread:
            notes.append("columns no role was found for, left unread (map any the audit "
                         "should read): " + ", ".join(f"`{n}`" for n in source.unread))
        if notes:
            out += ["", *[c for note in notes for c in _comment(note)]]
        return [*out, ""]

    def line(self, x: Line) -> str:
        said = f"{key(x.key)} = {self.value(x.value)}"
        if self.provisional is not None and _has_todo(x.value):
            self.provisional.append(said)
        if not x.note:
            return said
        if len(said) + len(x.note) + 4 <= WIDTH:
            return f"{said}  # {x.note}"
        return "\n".join([*_comment(x.note), said])

    def value(self, v: object) -> str:
        if isinstance(v, Todo):
            if self.provisional is None:
                return _string(TODO + v.text)
            if v.provisional is None:
                raise _NoProvisional(v.text)
            return self.value(v.provisional)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(v)
        if isinstance(v, str):
            return _string(v)
        if isinstance(v, list | tuple):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{key(k)} = {self.value(x)}" for k, x in v.items()) + " }"
        raise TypeError(f"no TOML for {v!r}")


def _has_todo(v: object) -> bool:
    if isinstance(v, Todo):
        return True
    if isinstance(v, list | tuple):
        return any(_has_todo(x) for x in v)
    if isinstance(v, dict):
        return any(_has_todo(x) for x in v.values())
    return False


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
