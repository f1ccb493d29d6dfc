"""Signing the report: a PAdES signature (pyHanko) over report.pdf once it is written.

A report may be disputed years later; a signature binds every byte of it, the embedded
evidence included, to whoever signed it. The signature is added as an incremental
update, so the PDF/A-3 document it signs is kept byte for byte before it, and its
reason names the signer and the report id, so that a reader sees what was signed and
by whom without opening the certificate. Each signing adds a signature (a reviewer
may sign after the auditor); `verify` checks them all.

The key and certificate are PEM or DER files; an encrypted key's passphrase is read
from the environment (AUDITOR_SIGN_PASSPHRASE), never from the command line, where
other users of the machine could read it.

The signing time a signature states is the signer's clock. Given a time-stamping
authority's URL (RFC 3161), the signature also carries that authority's signed time
stamp over it (PAdES B-T): a time a third party vouches for, that the signer could not
have set back.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path

PASSPHRASE_ENV = "AUDITOR_SIGN_PASSPHRASE"
FIELD_PREFIX = "AuditorSignature"
TIMESTAMP_TIMEOUT = 30  # seconds an authority may take to answer


class SigningError(ValueError):
    """The key or certificate cannot sign the report (said in one sentence)."""


@dataclass(frozen=True)
class Credentials:
    """A loaded key and certificate: what signs, and the name the signature gives."""

    signer: object  # pyhanko.sign.signers.SimpleSigner
    name: str
    timestamper: object | None = None  # pyhanko's HTTPTimeStamper, when a URL is given


def _private_key(path: Path):
    """The private key, decrypted with the passphrase in the environment if it needs one."""
    from cryptography.hazmat.primitives import serialization

    data = path.read_bytes()
    passphrase = os.environ.get(PASSPHRASE_ENV)
    load = (
        serialization.load_pem_private_key
        if b"-----BEGIN" in data
        else serialization.load_der_private_key
    )
    try:
        return load(data, password=passphrase.encode() if passphrase else None)
    except TypeError:
        if passphrase:
            raise SigningError(
                f"{path}: the key is not encrypted; unset {PASSPHRASE_ENV}"
            ) from None
        raise SigningError(f"{path}: the key is encrypted; set {PASSPHRASE_ENV}") from None
    except ValueError:
        raise SigningError(
            f"{path}: not a private key in PEM or DER, or the passphrase is wrong"
        ) from None


def _certificates(path: Path) -> list:
    """The signer's certificate first, then any chain the same file holds."""
    from pyhanko.keys import load_certs_from_pemder_data

    try:
        certs = list(load_certs_from_pemder_data(path.read_bytes()))
        # parsed now: a broken file fails here, not while signing
        subjects = [cert.subject.native for cert in certs]
    except ValueError:
        subjects = []
    if not subjects:
        raise SigningError(f"{path}: no X.509 certificate in PEM or DER")
    return certs


def signer_name(cert) -> str:
    """The certificate's common name (else its whole subject): the name a reader knows."""
    subject = cert.subject.native
    return subject.get("common_name") or cert.subject.human_friendly


def timestamper(url: str | None):
    """The RFC 3161 client of a time-stamping authority's http(s) URL (None: none)."""
    if url is None:
        return None
    from urllib.parse import urlsplit

    from pyhanko.sign.timestamps import HTTPTimeStamper

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SigningError(f"{url}: a time-stamping authority's URL is http:// or https://")
    return HTTPTimeStamper(url, timeout=TIMESTAMP_TIMEOUT)


def load(key_path: Path, cert_path: Path, timestamp_url: str | None = None) -> Credentials:
    """Load and check a key and its certificate before anything is audited or written:
    a key that does not belong to the certificate would give a signature that fails."""
    from cryptography.hazmat.primitives import serialization
    from pyhanko.keys.internal import translate_pyca_cryptography_key_to_asn1
    from pyhanko.sign import signers
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    try:
        key = _private_key(key_path)
        certs = _certificates(cert_path)
    except OSError as exc:
        raise SigningError(f"{exc.filename}: {exc.strerror}") from None
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if public != certs[0].public_key.dump():
        raise SigningError(f"{key_path} is not the key of the certificate in {cert_path}")
    signer = signers.SimpleSigner(
        signing_cert=certs[0],
        signing_key=translate_pyca_cryptography_key_to_asn1(key),
        cert_registry=SimpleCertificateStore.from_certs(certs),
    )
    return Credentials(signer, signer_name(certs[0]), timestamper(timestamp_url))


def reason(name: str, report_id: str) -> str:
    """The signature's reason: who signs which report."""
    return f"{name} signs exception report {report_id}"


def _writer(handle):
    """An incremental writer that keeps the document PDF 1.7, as PDF/A-3 (a profile of
    ISO 32000-1) requires: pyHanko declares PDF 2.0, and its ISO 32002 extension, for
    an ECDSA key on a NIST or Brainpool curve, which PAdES allows in PDF 1.7 as it is
    (ETSI.CAdES.detached, with the ESIC extension pyHanko declares too)."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    class PdfA3Writer(IncrementalPdfFileWriter):
        def ensure_output_version(self, version):
            super().ensure_output_version(min(version, (1, 7)))

        def register_extension(self, ext):
            if str(ext.base_version) < "/2.0":
                super().register_extension(ext)

    return PdfA3Writer(handle, strict=False)


def _keep_pdfa_metadata(writer) -> None:
    """PDF/A requires the info dictionary's Producer to equal the XMP's; pyHanko sets the
    XMP's to its own name and appends its name to the info's, unless the info's already
    is that name: so it is set to it beforehand (the signed revision's producer)."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.metadata.model import VENDOR

    try:
        info_ref = writer.trailer.raw_get("/Info")
    except KeyError:
        return
    info = info_ref.get_object()
    info["/Producer"] = generic.TextStringObject(VENDOR)
    writer.mark_update(info_ref)


def _field_name(writer) -> str:
    """A new signature field's name, one more than the signatures already there."""
    from pyhanko.sign import fields

    taken = {name for name, _, _ in fields.enumerate_sig_fields(writer.prev)}
    n = 1
    while f"{FIELD_PREFIX}{n}" in taken:
        n += 1
    return f"{FIELD_PREFIX}{n}"


def sign(pdf: Path, credentials: Credentials, report_id: str) -> str:
    """Sign PDF in place (written to a temporary file, then moved over it, so a failure
    leaves the unsigned report whole); returns the signature's reason."""
    from pyhanko.sign import fields, signers
    from pyhanko.sign.general import SigningError as PyHankoSigningError
    from pyhanko.sign.timestamps import TimestampRequestError

    why = reason(credentials.name, report_id)
    with pdf.open("rb") as handle:
        writer = _writer(handle)
        _keep_pdfa_metadata(writer)
        meta = signers.PdfSignatureMetadata(
            field_name=_field_name(writer),
            reason=why,
            name=credentials.name,
            md_algorithm="sha256",
            subfilter=fields.SigSeedSubFilter.PADES,
        )
        signed = io.BytesIO()
        try:
            signers.sign_pdf(
                writer,
                meta,
                signer=credentials.signer,
                timestamper=credentials.timestamper,
                output=signed,
            )
        except PyHankoSigningError as exc:  # e.g. a certificate not meant for signing
            raise SigningError(f"{pdf}: {exc}") from None
        except TimestampRequestError as exc:  # the authority did not answer, or refused
            url, cause = credentials.timestamper.url, exc.__cause__
            why = f"{exc} ({cause})" if cause else str(exc)
            raise SigningError(f"no time stamp from {url}: {why}") from None
    partial = pdf.with_name(pdf.name + ".signing")
    partial.write_bytes(signed.getvalue())
    partial.replace(pdf)
    return why


def sign_report(out: Path, credentials: Credentials) -> str:
    """Sign OUT/report.pdf with the report id of OUT/summary.json."""
    from .model import report_id

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return sign(out / "report.pdf", credentials, report_id(summary))
