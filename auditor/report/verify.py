"""Verifying a report: is this PDF the report the audit wrote, and who signed it?

What a reader in a hearing needs to know, checked from the PDF alone:

- every file embedded in it (findings.csv, summary.json, the house rules) has the
  SHA-256 its provenance section prints beside that file's name, and the summary's
  report id is the one on its pages: the evidence inside is the evidence described;
- every signature is intact (no signed byte changed) and valid, and what was added to
  the file after it is no more than further signatures, time stamps and validation data;
- who signed, when and why, and whether the certificate comes from an authority the
  reader named as trusted (`trusted`): a self-signed certificate shows the document is
  unchanged since its key signed it, not who holds the key;
- a signature's time stamp, where it carries one (RFC 3161): intact, by which
  time-stamping authority, at what time, and whether that authority is trusted, on the
  same terms as the signer.

A report without a signature is not verified (its text and files could have been
changed together), unless unsigned reports are allowed: then the evidence alone is
checked.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pyhanko.keys import load_certs_from_pemder_data
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from . import pdftext
from .model import report_id

REQUIRED = ("findings.csv", "summary.json")
_DIGEST = r"([0-9a-f]{64})"
_REPORT_ID = re.compile(r"\bReport\s+(AUD-[0-9A-F]{12})\b")
# further revisions an earlier signature allows: timestamps and validation data, and
# the next signature (a signature field filled in); anything else changed the report
_ALLOWED_AFTER = ("NONE", "LTA_UPDATES", "FORM_FILLING")

for _name in ("pyhanko", "pyhanko_certvalidator"):
    # their warnings (a self-signed certificate, with its traceback) are said here
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False


@dataclass
class Check:
    ok: bool
    text: str
    note: bool = False  # said, neither passed nor failed (an unsigned report, when allowed)

    @property
    def label(self) -> str:
        return "note" if self.note else "ok" if self.ok else "FAIL"


@dataclass
class Verdict:
    """Every check made, in order; `ok` when all passed and the report is signed (or
    unsigned reports are allowed)."""

    checks: list[Check] = field(default_factory=list)
    signed: bool = False
    allow_unsigned: bool = False

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks) and (self.signed or self.allow_unsigned)

    def add(self, ok: bool, text: str, note: bool = False) -> None:
        self.checks.append(Check(ok, text, note))


# --- the evidence inside -------------------------------------------------------------


def _get(dictionary, key: str, default=None):
    """A dictionary's value, followed if indirect."""
    try:
        return dictionary[key]
    except KeyError:
        return default


def _name_tree(node) -> Iterable[tuple[str, object]]:
    """(name, value) of a PDF name tree, through its /Kids."""
    names = _get(node, "/Names", [])
    for i in range(0, len(names) - 1, 2):
        yield str(names[i]), names[i + 1]
    for kid in _get(node, "/Kids", []):
        yield from _name_tree(kid.get_object() if hasattr(kid, "get_object") else kid)


def embedded_files(reader) -> dict[str, bytes]:
    """The files embedded in the PDF, by the name its file specification gives."""
    tree = _get(_get(reader.root, "/Names", {}), "/EmbeddedFiles")
    if tree is None:
        return {}
    found: dict[str, bytes] = {}
    for key, ref in _name_tree(tree):
        spec = ref.get_object() if hasattr(ref, "get_object") else ref
        name = str(_get(spec, "/UF", _get(spec, "/F", key)))
        found[name] = spec["/EF"]["/F"].data
    return found


def _pdfa(reader) -> str | None:
    """The PDF/A part and conformance the XMP metadata declares ("3A"), if any."""
    stream = _get(reader.root, "/Metadata")
    if stream is None:
        return None
    xmp = stream.data.decode("utf-8", errors="replace")
    part = re.search(r"pdfaid:part(?:=\"|>)\s*(\d)", xmp)
    level = re.search(r"pdfaid:conformance(?:=\"|>)\s*([ABU])", xmp, re.I)
    return f"{part.group(1)}{level.group(1).lower() if level else ''}" if part else None


def _printed(reader, names: Iterable[str]) -> tuple[dict[str, set[str]], set[str]]:
    """The digests the pages print beside each name ("findings.csv 30,247 <sha256>"),
    and the report ids they print, read up to the page that names them all."""
    wanted = {n: re.compile(rf"(?<!\S){re.escape(n)}\s+[\d,]+\s+{_DIGEST}") for n in names}
    digests: dict[str, set[str]] = {n: set() for n in wanted}
    ids: set[str] = set()
    for text in pdftext.page_texts(reader):
        ids.update(_REPORT_ID.findall(text))
        for name, pattern in wanted.items():
            digests[name].update(pattern.findall(text))
        if "Row accounting" in text and all(digests.values()):
            break  # past the provenance section's file tables
    return digests, ids


def _check_evidence(reader, verdict: Verdict) -> None:
    pdfa = _pdfa(reader)
    if pdfa:
        verdict.add(True, f"PDF/A-{pdfa}, as its metadata declares")
    else:
        verdict.add(False, "the PDF does not declare itself PDF/A (no pdfaid in its metadata)")
    files = embedded_files(reader)
    for name in REQUIRED:
        if name not in files:
            verdict.add(False, f"{name} is not embedded in the report")
    printed, ids = _printed(reader, files)
    for name, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        shown = printed.get(name, set())
        if not shown:
            verdict.add(False, f"{name} is embedded but the report prints no SHA-256 for it")
        elif shown != {digest}:
            verdict.add(
                False,
                f"{name}: the embedded file's SHA-256 is {digest}, the report prints "
                + ", ".join(sorted(shown - {digest})),
            )
        else:
            verdict.add(
                True,
                f"{name}: embedded, {len(data):,} bytes, SHA-256 {digest} as the report prints it",
            )
    if "summary.json" in files:
        try:
            expected = report_id(json.loads(files["summary.json"]))
        except (ValueError, KeyError, TypeError):
            verdict.add(False, "summary.json is embedded but is not an audit summary")
            return
        if ids == {expected}:
            verdict.add(True, f"report id {expected}, as the embedded summary gives it")
        else:
            shown = ", ".join(sorted(ids)) or "none"
            verdict.add(
                False, f"the embedded summary gives report id {expected}; the pages print {shown}"
            )


# --- the signatures ----------------------------------------------------------------------


def load_trusted(paths: Iterable[Path]) -> list:
    """The certificates named as trusted (PEM or DER, any number a file)."""
    certs = []
    for path in paths:
        found = list(load_certs_from_pemder_data(Path(path).read_bytes()))
        if not found:
            raise ValueError(f"{path}: no X.509 certificate in PEM or DER")
        certs.extend(found)
    return certs


def _when(status) -> str:
    moment = status.signer_reported_dt
    return moment.isoformat(timespec="seconds") if moment else "an unstated time"


def _vouched_for(status, trusted: list) -> bool | None:
    """Whether the --trust certificates vouch for the one that signed (a signature or a
    time stamp): it chains to one of them, or is one of them (a self-signed one cannot
    chain); None when none were named, and nothing is judged."""
    if status.trusted or status.signing_cert.sha256 in {c.sha256 for c in trusted}:
        return True
    return False if trusted else None


def _trust(status, trusted: list) -> tuple[bool, str]:
    """Whether the signer is trusted, and what to say of it."""
    vouched = _vouched_for(status, trusted)
    if vouched:
        return True, "certificate trusted (named with --trust)"
    if vouched is None:
        return True, (
            "certificate not from a trusted authority (self-signed or issuer unknown; "
            "name it with --trust to check it)"
        )
    return False, "certificate not trusted: it is none of, nor issued by, the --trust ones"


def _stamp(status, trusted: list) -> tuple[bool, str]:
    """The time stamp on a signature, if any: whether it holds, and what to say of it.
    Without one the time is the signer's own clock, which is said, not failed."""
    stamp = status.timestamp_validity
    if stamp is None:
        return True, "no time stamp (the time is the signer's clock)"
    tsa = stamp.signing_cert.subject.human_friendly
    when = stamp.timestamp.isoformat(timespec="seconds")
    if not (stamp.intact and stamp.valid):
        return False, f"time stamp of {when} by {tsa} BROKEN (it does not match the signature)"
    vouched = _vouched_for(stamp, trusted)
    if vouched:
        return True, f"time-stamped {when} by {tsa}, an authority trusted (named with --trust)"
    if vouched is None:
        return True, f"time-stamped {when} by {tsa} (authority not judged: name it with --trust)"
    return False, f"time-stamped {when} by {tsa}, an authority none of the --trust ones vouch for"


def _changed_after(status) -> str | None:
    """What was changed after the signature, if more than further signing and
    validation data (timestamps, certificates, revocation data)."""
    if status.coverage == SignatureCoverageLevel.ENTIRE_FILE:
        return None
    level = status.modification_level.name if status.modification_level else "OTHER"
    if level in _ALLOWED_AFTER and status.docmdp_ok is not False:
        return None
    return level.lower().replace("_", " ")


def _check_signature(sig, status, trusted: list, verdict: Verdict) -> None:
    who = status.signing_cert.subject.human_friendly
    head = f"signature {sig.field_name} by {who}, {_when(status)}"
    reason = _get(sig.sig_object, "/Reason")
    if reason:
        head += f', reason "{reason}"'
    if not (status.intact and status.valid):
        broken = "BROKEN, the signed bytes were changed or the signature does not match them"
        verdict.add(False, f"{head}: {broken}")
        return
    changed = _changed_after(status)
    if changed:
        verdict.add(
            False, f"{head}: intact, but the file was changed after it was signed ({changed})"
        )
        return
    trusted_ok, trust_text = _trust(status, trusted)
    stamp_ok, stamp_text = _stamp(status, trusted)
    fingerprint = status.signing_cert.sha256.hex()
    verdict.add(
        trusted_ok and stamp_ok,
        f"{head}: intact, covers the report; {trust_text}; certificate SHA-256 {fingerprint}; "
        f"{stamp_text}",
    )


def _check_signatures(reader, trusted: list, verdict: Verdict) -> None:
    signatures = reader.embedded_regular_signatures
    verdict.signed = bool(signatures)
    if not signatures:
        verdict.add(
            verdict.allow_unsigned,
            "the report is not signed: nothing shows that its "
            "text and embedded files were not changed together",
            note=verdict.allow_unsigned,
        )
        return
    for sig in signatures:
        context = ValidationContext(trust_roots=list(trusted), allow_fetching=False)
        _check_signature(sig, validate_pdf_signature(sig, context), trusted, verdict)


def verify(pdf: Path, trusted: list | None = None, allow_unsigned: bool = False) -> Verdict:
    """Check PDF's embedded evidence against its text, and its signatures."""
    verdict = Verdict(allow_unsigned=allow_unsigned)
    data = pdf.read_bytes()
    try:
        # one reader each: what reading the evidence caches (the XMP, decoded) must not
        # be what the signatures' diff analysis compares revisions with
        _check_evidence(PdfFileReader(io.BytesIO(data), strict=False), verdict)
        _check_signatures(PdfFileReader(io.BytesIO(data), strict=False), trusted or [], verdict)
    except Exception as exc:  # whatever a damaged file breaks: it is not verified
        verdict.add(False, f"not a readable report PDF ({type(exc).__name__}: {exc})")
    return verdict
