"""The evidence a report carries inside it: findings.csv, summary.json, the house rules
and, for exports read through one, the export profile.

A report is filed and kept for years, and the machine files beside it can be lost or
drift apart from it. So the PDF is a PDF/A-3 document that embeds them as associated
files (the way e-invoices carry their data), byte for byte as the output folder holds
them, and its provenance section prints each one's SHA-256: `auditor verify` checks the
one against the other. What the report shows is `Data` (findings, summary); what the
audit was judged by is `Source` (the house rules).

The audit keeps a copy of the house rules (`house.toml`) and of the export profile
(`profile.toml`) in its output folder, so that `auditor report DIR` embeds the files the
audit applied without the paths they were read from.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HOUSE_COPY = "house.toml"
PROFILE_COPY = "profile.toml"
VARIANT = "pdf/a-3a"  # ISO 19005-3, level A: tagged, every glyph mapped to Unicode
VARIANT_NAME = "PDF/A-3a"

# name, AFRelationship, MIME type, what it is
_OUTPUTS = (
    (
        "findings.csv",
        "Data",
        "text/csv",
        "Every finding of the audit, one row per exception: all of them, where section 4 "
        "details at most a set number per rule.",
    ),
    (
        "summary.json",
        "Data",
        "application/json",
        "What was read, audited, reported and found: the counts, sums and file digests "
        "the report prints.",
    ),
)
_HOUSE = (
    "Source",
    "application/toml",
    "The house rules file the audit applied",
)
_PROFILE = (
    "Source",
    "application/toml",
    "The export profile the logs were read through",
)


@dataclass(frozen=True)
class Evidence:
    """One file embedded in the report, with the bytes that were hashed and embedded."""

    name: str
    data: bytes
    relationship: str
    mime: str
    description: str
    modified: datetime

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        return len(self.data)

    def listing(self) -> dict:
        """The row the provenance section prints for it."""
        return {
            "name": self.name,
            "bytes": self.size,
            "sha256": self.sha256,
            "relationship": self.relationship,
            "description": self.description,
        }


def _sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def keep_house_rules(house_path: Path | None, out: Path) -> Path | None:
    """Copy the house rules into OUT as house.toml, so the folder holds every file the
    report embeds (a path outside it may be gone when the report is rendered again)."""
    return _keep(house_path, out / HOUSE_COPY)


def keep_profile(profile_path: Path | None, out: Path) -> Path | None:
    """Copy the export profile into OUT as profile.toml (as the house rules)."""
    return _keep(profile_path, out / PROFILE_COPY)


def _keep(path: Path | None, target: Path) -> Path | None:
    if path is None:
        return None
    if target.exists() and target.samefile(path):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    return target


def _read(path: Path, name: str, relationship: str, mime: str, description: str) -> Evidence:
    data = path.read_bytes()
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).replace(microsecond=0)
    return Evidence(name, data, relationship, mime, description, modified)


def _house_rules(out: Path, summary: dict) -> tuple[Evidence | None, str]:
    """The house rules file the audit applied, if it can be found unchanged, and what a
    reader should know about it (why it is not embedded, or where it came from)."""
    recorded = summary.get("house_rules") or {}
    if not recorded.get("sha256"):
        return None, "The audit recorded no house rules file, so none is embedded."
    return _applied(out, recorded, HOUSE_COPY, _HOUSE, "house rules file")


def _profile(out: Path, summary: dict) -> tuple[Evidence | None, str]:
    """The export profile the logs were read through (none: hand histories)."""
    recorded = summary.get("profile") or {}
    if not recorded.get("sha256"):
        return None, ""
    return _applied(out, recorded, PROFILE_COPY, _PROFILE, "export profile")


def _applied(out: Path, recorded: dict, copy_name: str, kind: tuple[str, str, str],
             what_file: str) -> tuple[Evidence | None, str]:
    """A file the audit applied, if it can be found unchanged: the folder's copy first,
    then the path the audit recorded; either is embedded only when its SHA-256 is the
    one summary.json recorded."""
    digest, origin = recorded.get("sha256"), recorded.get("path")
    relationship, mime, what = kind
    description = f"{what} (read from {origin})." if origin else f"{what}."
    copy = out / copy_name
    copy_differs = copy.is_file() and _sha256_of(copy) != digest
    if copy.is_file() and not copy_differs:
        return _read(copy, copy_name, relationship, mime, description), ""
    differs = (
        f"The output folder's {copy_name} is not the {what_file} the audit applied "
        "(its SHA-256 differs from the one summary.json records)"
    )
    if origin and Path(origin).is_file() and _sha256_of(Path(origin)) == digest:
        found = _read(Path(origin), copy_name, relationship, mime, description)
        why = differs if copy_differs else f"The output folder holds no {copy_name}"
        return found, f"{why}; the file at {origin}, unchanged, is embedded."
    if copy_differs:
        return None, f"{differs}, so it is not embedded; the report states its SHA-256 only."
    return None, (
        f"The {what_file} the audit applied ({origin or 'no path recorded'}) is neither "
        "in the output folder nor unchanged at its recorded path, so it is not embedded; "
        "the report states its SHA-256 only."
    )


def gather(out: Path, summary: dict) -> tuple[list[Evidence], list[str]]:
    """The files to embed from OUT, and a sentence for a reader about each one that
    cannot be (or that came from elsewhere than the folder)."""
    found: list[Evidence] = []
    notes: list[str] = []
    for name, relationship, mime, description in _OUTPUTS:
        path = out / name
        if path.is_file():
            found.append(_read(path, name, relationship, mime, description))
        else:
            notes.append(f"{name} is not in the output folder, so it is not embedded.")
    for applied in (_house_rules, _profile):
        kept, note = applied(out, summary)
        if kept is not None:
            found.append(kept)
        if note:
            notes.append(note)
    return found, notes


def attachments(evidence: list[Evidence], url_fetcher) -> list:
    """weasyprint attachments of the evidence, from the bytes already hashed, in the
    order of their names (a PDF name tree's keys are sorted)."""
    import io

    from weasyprint import Attachment

    return [
        Attachment(
            file_obj=io.BytesIO(e.data),
            url_fetcher=url_fetcher,
            name=e.name,
            description=e.description,
            created=e.modified,
            modified=e.modified,
            relationship=e.relationship,
        )
        for e in sorted(evidence, key=lambda e: e.name)
    ]


def finisher(evidence: list[Evidence]) -> Callable:
    """What weasyprint's PDF needs before it is written, for PDF/A-3 associated files:
    each embedded file's MIME type and relationship set by its name (weasyprint guesses
    the type from the extension and matches relationships by content), and each file
    listed once in the catalog's /AF (weasyprint lists it twice)."""
    by_name = {e.name: e for e in evidence}

    def finish(document, pdf) -> None:
        for obj in pdf.objects:
            if not isinstance(obj, dict) or obj.get("Type") != "/Filespec":
                continue
            e = by_name.get(getattr(obj.get("UF"), "string", None))
            if e is None:
                continue
            obj["AFRelationship"] = f"/{e.relationship}"
            stream = pdf.objects[int(obj["EF"]["F"].split()[0])]
            stream.extra["Subtype"] = "/" + e.mime.replace("/", "#2f")
        if "AF" in pdf.catalog:
            unique = list(dict.fromkeys(pdf.catalog["AF"]))
            pdf.catalog["AF"][:] = unique

    return finish
