"""finding_id: one id per finding, the same for the same finding on the same event in every
run, and never one for two different findings.

The id is the first 128 bits (32 hex digits) of the SHA-256 of a canonical JSON array:

- the scheme's name (`finding-id/1`), so that a later scheme cannot reuse an id;
- the facility the house rules name: table ids are unique within a facility only;
- the rule and the event it points at: table, shoe, round and seq. The log names the
  event itself (a shuffle starts a new shoe id, seq is strictly increasing within a
  table), so a game finding keeps its id whichever file carried the event, and a round
  at the cut of two nightly exports is the same event in both runs;
- for a finding about the input (input and house rules), also the SHA-256 of its file
  (not the path, which changes when the file is moved), the line and the field: a bad
  row is that row of those bytes, and one row may have several bad fields.

A rule may in principle give two findings on one event (none does in the sample logs,
and the tests check it). Those few are told apart by what they say (expected, observed,
message and amount), and if even that is the same, by their order in the findings
(which is deterministic): ids stay unique within a run, and the same input gives the
same ids again. (Such a finding's id then holds what it says, so it differs from the id
it has in a run where it is alone on its event: a comparison shows it as gone and new,
never as another finding still present.)
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import polars as pl

from ..rules.catalog import REGISTRY

SCHEME = "finding-id/1"
HEX_DIGITS = 32  # 128 bits
INPUT_SCOPES = ("input", "house")
EVENT = ("rule_id", "table_id", "shoe_id", "round", "seq")
ABOUT_INPUT = ("line", "field")
CONTENT = ("expected", "observed", "message", "amount")


def _about_input(rule_id: str) -> bool:
    if rule_id in REGISTRY:
        return REGISTRY.get(rule_id).scope in INPUT_SCOPES
    return rule_id.startswith(("IN", "HR"))


def file_digests(summary: dict) -> dict[str, str]:
    """Each input file's path, as the findings write it, to its SHA-256 (summary.json)."""
    files = [*summary.get("inputs", []), *summary.get("context", [])]
    return {f["path"]: f["sha256"] for f in files}


def _key(row: dict, facility: str | None, digests: dict[str, str]) -> list[Any]:
    key = [SCHEME, facility, *(row[c] for c in EVENT)]
    if _about_input(row["rule_id"]):
        key += [
            digests.get(row["file"]) if row["file"] is not None else None,
            *(row[c] for c in ABOUT_INPUT),
        ]
    return key


def _encoded(key: list[Any]) -> str:
    """The key as canonical JSON: null apart from "", a number apart from a string."""
    return json.dumps(key, ensure_ascii=False, separators=(",", ":"), default=str)


def _digest(key: list[Any]) -> str:
    return hashlib.sha256(_encoded(key).encode("utf-8")).hexdigest()[:HEX_DIGITS]


def finding_ids(findings: pl.DataFrame, summary: dict) -> list[str]:
    """The id of every finding, in the frame's order (the findings files' order)."""
    digests = file_digests(summary)
    facility = summary.get("facility")
    rows = list(findings.iter_rows(named=True))
    keys = [_key(row, facility, digests) for row in rows]
    shared = Counter(_encoded(k) for k in keys)
    for key, row in zip(keys, rows, strict=True):
        if shared[_encoded(key)] > 1:
            key.append([row[c] for c in CONTENT])
    seen: Counter[str] = Counter()
    twins = Counter(_encoded(k) for k in keys)
    for key in keys:
        encoded = _encoded(key)
        if twins[encoded] > 1:
            key.append(seen[encoded])
            seen[encoded] += 1
    return [_digest(k) for k in keys]


def with_ids(findings: pl.DataFrame, summary: dict) -> pl.DataFrame:
    """The findings with `finding_id` and `file_sha256` in front."""
    digests = file_digests(summary)
    return findings.with_columns(
        pl.Series("finding_id", finding_ids(findings, summary), dtype=pl.String),
        pl.col("file")
        .replace_strict(digests, default=None, return_dtype=pl.String)
        .alias("file_sha256"),
    ).select("finding_id", "file_sha256", *findings.columns)
