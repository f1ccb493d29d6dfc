"""The report as a record: a PDF/A-3 document that carries its evidence inside, tagged
for accessibility, and signed when asked. Read back with pikepdf and poppler (pdfinfo,
pdfdetach, pdfsig, pdftotext); verified with `auditor verify`, then altered and verified
again."""

from __future__ import annotations

import datetime as dt
import hashlib
import http.server
import io
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pikepdf
import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from auditor.cli import main
from auditor.report import charts, evidence, pdftext, sign
from auditor.report.model import report_id
from auditor.simulate import baccarat as sim_baccarat
from auditor.simulate import blackjack as sim_blackjack
from auditor.simulate.writer import write_events, write_house_rules

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) is not installed"
)

SIGNER = "Test Auditor"


def _run(*args: str, env: dict | None = None):
    return CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)


def _tool(*args: str) -> str:
    return subprocess.run(args, check=False, capture_output=True, text=True).stdout


def _text(pdf: Path) -> str:
    return re.sub(r"\s+", " ", _tool("pdftotext", "-layout", str(pdf), "-"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key_and_cert(
    folder: Path, name: str, passphrase: bytes | None = None, time_stamping: bool = False
) -> tuple[Path, Path]:
    """A throwaway EC key and a self-signed certificate for NAME (a time-stamping
    authority's, with the extended key usage RFC 3161 requires, if `time_stamping`: an
    RSA key, the one pyHanko's authority signs with)."""
    folder.mkdir(parents=True, exist_ok=True)
    if time_stamping:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Test Commission"),
        ]
    )
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
    )
    if time_stamping:
        usage = x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.TIME_STAMPING])
        builder = builder.add_extension(usage, critical=True)
    cert = builder.sign(key, hashes.SHA256())
    encryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    key_path, cert_path = folder / "key.pem", folder / "cert.pem"
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


class Audited:
    def __init__(self, root: Path, house: Path, out: Path, key: Path, cert: Path):
        self.root, self.house, self.out, self.key, self.cert = root, house, out, key, cert
        self.pdf = out / "report.pdf"
        # the signing options with this audit's signer
        self.signing = ["--sign-key", str(key), "--sign-cert", str(cert)]
        self.summary = json.loads((out / "summary.json").read_text())

    def audit_again(self, out: Path, *options: str):
        """The same logs audited again into OUT, with OPTIONS."""
        return _run("audit", str(self.root / "logs"), "--house", str(self.house), "--out",
                    str(out), *options)


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Audited:
    """A faulty day of both games, audited and signed by the command line."""
    root = tmp_path_factory.mktemp("record")
    bac = sim_baccarat.simulate(rounds=120, tables=2, seed=5, faults=0.1)
    bj = sim_blackjack.simulate(rounds=60, tables=1, seed=3, faults=0.1)
    write_events(bac.events, root / "logs" / "baccarat.jsonl", "jsonl")
    write_events(bj.events, root / "logs" / "blackjack.csv", "csv")
    house = write_house_rules(
        [*bac.tables, *bj.tables], root / "rules" / "house-2026.toml", blackjack=bj.house
    )
    key, cert = _key_and_cert(root / "signer", SIGNER)
    out = root / "out"
    result = _run(
        "audit",
        str(root / "logs"),
        "--house",
        str(house),
        "--out",
        str(out),
        "-q",
        "--sign-key",
        str(key),
        "--sign-cert",
        str(cert),
    )
    assert result.exit_code == 1, result.output  # findings
    return Audited(root, house, out, key, cert)


@pytest.fixture(scope="module")
def unsigned(audited, tmp_path_factory) -> Path:
    """The same folder re-rendered by `auditor report`, not signed."""
    out = tmp_path_factory.mktemp("unsigned") / "out"
    shutil.copytree(audited.out, out)
    result = _run("report", str(out))
    assert result.exit_code == 0, result.output
    return out


# --- PDF/A-3 ----------------------------------------------------------------------------


def test_pdfa3_metadata_names_part_and_conformance(audited):
    with pikepdf.open(audited.pdf) as pdf:
        meta = pdf.open_metadata()
        assert meta["pdfaid:part"] == "3"
        assert meta["pdfaid:conformance"] == "A"
        assert report_id(audited.summary) in meta["dc:title"]
        # PDF/A: the info dictionary agrees with the XMP, after signing too
        assert str(pdf.trailer.Info.Producer) == meta["pdf:Producer"]
        intents = pdf.Root.OutputIntents
        assert len(intents) == 1 and intents[0].S == "/GTS_PDFA1"
        assert str(pdf.Root.Lang) == "en"
        # PDF/A-3 is PDF 1.7, signed with an ECDSA key too
        assert pdf.pdf_version == "1.7" and "/Version" not in pdf.Root
        assert pdf.check_pdf_syntax() == []  # no repair needed (name trees sorted, ...)
    info = _tool("pdfinfo", str(audited.pdf))
    assert re.search(r"Tagged:\s+yes", info)
    assert re.search(r"Metadata Stream:\s+yes", info)
    fonts = _tool("pdffonts", str(audited.pdf)).splitlines()[2:]
    assert fonts and all(line.split()[-5] == "yes" for line in fonts), fonts  # embedded


LEVEL_CLAIM = "ISO_19005_3:6.6.4-3"  # the XMP's pdfaid:conformance is the level checked


def test_a_pdfa_validator_approves_the_report(unsigned):
    """pikepdf's PDF/A validator (veraPDF's rules; it approves only what it knows) finds
    nothing in the report but its level: it checks level b, to which level a adds the
    tags and the text of every glyph (tested below)."""
    from pikepdf import pdfa

    report = pdfa.validate_written(unsigned / "report.pdf", "3b")
    level = [f for f in report.findings if f.rule == LEVEL_CLAIM]
    assert [f.message for f in level] == ["pdfaid:conformance is 'A', expected 'B'"]
    others = [str(f) for f in report.findings if f.rule != LEVEL_CLAIM]
    assert others == []


def test_the_validator_sees_what_breaks_pdfa(unsigned, tmp_path):
    """The validator above can fail: a report whose fonts are not embedded is refused."""
    from pikepdf import pdfa

    broken = tmp_path / "report.pdf"
    with pikepdf.open(unsigned / "report.pdf") as pdf:
        for font in pdf.pages[0].Resources.Font.values():
            for descendant in font.get("/DescendantFonts", [font]):
                for key in ("/FontFile", "/FontFile2", "/FontFile3"):
                    if key in descendant.FontDescriptor:
                        del descendant.FontDescriptor[key]
        pdf.save(broken)
    report = pdfa.validate_written(broken, "3b")
    not_embedded = {f.rule for f in report.findings if "not embedded" in f.message}
    assert not_embedded == {"ISO_19005_3:6.2.11.4.1-1"}  # fonts: every one embedded


def test_the_report_depends_on_nothing_outside_it(audited):
    with pikepdf.open(audited.pdf) as pdf:
        for page in pdf.pages:
            for annot in page.get("/Annots", []):
                action = annot.get("/A")
                assert action is None or action.S == "/GoTo", action  # internal links only
                assert int(annot.get("/F", 0)) & 4  # printable, as PDF/A requires
        for obj in pdf.objects:
            if isinstance(obj, pikepdf.Dictionary) and obj.get("/Type") == "/Filespec":
                assert "/EF" in obj  # embedded, not a reference to a file elsewhere


# --- the evidence inside ------------------------------------------------------------------


def _attachments(pdf_path: Path) -> dict[str, tuple[bytes, str, str]]:
    with pikepdf.open(pdf_path) as pdf:
        found = {}
        for name, spec in pdf.attachments.items():
            stream = spec.obj.EF.F
            found[name] = (
                spec.get_file().read_bytes(),
                str(spec.obj.AFRelationship),
                str(stream.Subtype),
            )
        af = [str(f.UF) for f in pdf.Root.AF]
    assert sorted(af) == sorted(found), af  # each an associated file, listed once
    return found


def test_evidence_is_embedded_byte_for_byte(audited):
    files = _attachments(audited.pdf)
    assert set(files) == {"findings.csv", "summary.json", "house.toml"}
    for name in ("findings.csv", "summary.json"):
        assert files[name][0] == (audited.out / name).read_bytes(), name
    assert files["house.toml"][0] == audited.house.read_bytes()  # the file audited
    assert (audited.out / "house.toml").read_bytes() == audited.house.read_bytes()
    assert _sha(files["house.toml"][0]) == audited.summary["house_rules"]["sha256"]
    assert {n: (rel, mime) for n, (_, rel, mime) in files.items()} == {
        "findings.csv": ("/Data", "/text/csv"),
        "summary.json": ("/Data", "/application/json"),
        "house.toml": ("/Source", "/application/toml"),
    }
    listed = _tool("pdfdetach", "-list", str(audited.pdf))
    assert "3 embedded files" in listed


def test_provenance_lists_the_embedded_files_with_their_sha256(audited):
    text = _text(audited.pdf)
    assert "Files inside this report" in text
    assert "PDF/A-3a" in text
    for name in ("findings.csv", "summary.json", "house.toml"):
        digest = _sha((audited.out / name).read_bytes())
        size = (audited.out / name).stat().st_size
        assert re.search(rf"{re.escape(name)} {size:,} {digest}", text), name


def test_report_dir_embeds_the_folders_files(unsigned):
    files = _attachments(unsigned / "report.pdf")
    for name in ("findings.csv", "summary.json", "house.toml"):
        assert files[name][0] == (unsigned / name).read_bytes(), name


def test_a_folder_without_the_house_rules_says_so(audited, tmp_path):
    """An older folder: no house.toml, and the recorded path gone. The report embeds what
    the folder holds and says the house rules are not inside; `auditor report` signs."""
    out = tmp_path / "old"
    shutil.copytree(audited.out, out)
    (out / "house.toml").unlink()
    summary = json.loads((out / "summary.json").read_text())
    summary["house_rules"]["path"] = str(tmp_path / "moved" / "house.toml")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    result = _run("report", str(out), *audited.signing)
    assert result.exit_code == 0, result.output
    assert set(_attachments(out / "report.pdf")) == {"findings.csv", "summary.json"}
    assert (
        "is neither in the output folder nor unchanged at its recorded path, so it is "
        "not embedded" in _text(out / "report.pdf")
    )
    verified = _run("verify", str(out / "report.pdf"))
    assert verified.exit_code == 0, verified.output


def test_house_rules_are_embedded_only_as_the_audit_applied_them(tmp_path):
    house = tmp_path / "rules.toml"
    house.write_text('facility = "X"\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.csv").write_text("table_id\n")
    summary = {"house_rules": {"path": str(house), "sha256": _sha(house.read_bytes())}}
    evidence.keep_house_rules(house, out)
    found, notes = evidence.gather(out, summary)
    assert [e.name for e in found] == ["findings.csv", "house.toml"]
    assert notes == ["summary.json is not in the output folder, so it is not embedded."]
    (out / "house.toml").write_text('facility = "Y"\n')  # the folder's copy edited
    found, notes = evidence.gather(out, summary)
    assert found[-1].data == house.read_bytes() and "unchanged, is embedded" in notes[-1]
    (out / "house.toml").unlink()  # no copy (a folder audited before it was kept)
    found, notes = evidence.gather(out, summary)
    assert found[-1].data == house.read_bytes() and "holds no house.toml" in notes[-1]
    house.write_text('facility = "Z"\n')  # and the file the audit read changed
    found, notes = evidence.gather(out, summary)
    assert "house.toml" not in [e.name for e in found]
    assert "so it is not embedded" in notes[-1]


# --- tagged for accessibility --------------------------------------------------------------


def _structure(pdf: pikepdf.Pdf) -> tuple[dict[str, int], list[str]]:
    """Counts of each structure type in the tag tree, and the figures' /Alt texts."""
    counts: dict[str, int] = {}
    alts: list[str] = []
    stack = list(pdf.Root.StructTreeRoot.K)
    while stack:
        node = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or "/S" not in node:
            continue
        kind = str(node.S)[1:]
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "TD" and len(node.get("/A", {}).get("/Headers", [])):
            counts["TD with headers"] = counts.get("TD with headers", 0) + 1
        if kind == "Figure":
            alts.append(str(node.get("/Alt", "")))
        kids = node.get("/K")
        if isinstance(kids, pikepdf.Array):
            stack.extend(kids)
        elif isinstance(kids, pikepdf.Dictionary):
            stack.append(kids)
    return counts, alts


def test_tag_tree_has_headings_tables_lists_and_chart_text(audited):
    with pikepdf.open(audited.pdf) as pdf:
        assert pdf.Root.MarkInfo.Marked
        counts, alts = _structure(pdf)
    for kind in ("Document", "H1", "H2", "H3", "Table", "TH", "TD", "L", "LI", "Figure"):
        assert counts.get(kind), kind
    assert counts["TH"] >= 10
    assert counts.get("TD with headers", 0) >= 20  # cells name their header cells
    assert alts and all(alts), alts  # every chart has its text alternative
    by_table = next(a for a in alts if a.startswith("Findings by table"))
    for table in audited.summary["tables"]:
        if table["findings"]:
            assert f"{table['table_id']}: {table['findings']:,}" in by_table, by_table
    total = audited.summary["findings"]["total"]
    assert f"{total:,} in all" in by_table


def test_every_glyph_reads_back_as_text(audited):
    """Level A: every glyph maps to Unicode; the pages read as pdftotext reads them."""
    from pyhanko.pdf_utils.reader import PdfFileReader

    with audited.pdf.open("rb") as handle:
        pages = list(pdftext.page_texts(PdfFileReader(handle, strict=False)))
    assert not any(pdftext.UNMAPPED in page for page in pages)
    ours = re.sub(r"\s+", "", "".join(pages))
    theirs = re.sub(r"\s+", "", _tool("pdftotext", "-raw", str(audited.pdf), "-"))
    assert len(ours) == pytest.approx(len(theirs), rel=0.02)
    assert report_id(audited.summary) in ours


def test_chart_text_alternative_states_the_numbers():
    bars = [charts.Bar("BA201", {"error": 3, "warning": 1}), charts.Bar("BJ703", {"error": 2})]
    alt = charts.text_alternative("Findings by rule", bars, ["error", "warning"])
    assert alt == (
        "Findings by rule, 2 bars, 6 in all. BA201: 4 (3 errors, 1 warning); BJ703: 2 (2 errors)."
    )
    svg = charts.horizontal_bars(bars, ["error", "warning"], "Findings by rule")
    assert f"<title>{alt}</title>" in svg and f'aria-label="{alt}"' in svg


# --- signed, and verified -----------------------------------------------------------------


def test_signature_is_pades_with_signer_and_report_id_in_its_reason(audited):
    rid = report_id(audited.summary)
    with pikepdf.open(audited.pdf) as pdf:
        fields = pdf.Root.AcroForm.Fields
        assert len(fields) == 1
        value = fields[0].V
        assert value.SubFilter == "/ETSI.CAdES.detached"
        assert str(value.Reason) == f"{SIGNER} signs exception report {rid}"
        assert str(value.Name) == SIGNER
    out = _tool("pdfsig", str(audited.pdf))
    assert "Signature is Valid" in out and "Total document signed" in out
    assert f"Common Name: {SIGNER}" in out


def test_verify_a_signed_report(audited):
    result = _run("verify", str(audited.pdf))
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("verified")
    for name in ("findings.csv", "summary.json", "house.toml"):
        assert re.search(rf"^ok\s+{re.escape(name)}: embedded", result.output, re.M), name
    assert "intact, covers the report" in result.output
    assert "not from a trusted authority" in result.output
    trusted = _run("verify", str(audited.pdf), "--trust", str(audited.cert))
    assert trusted.exit_code == 0 and "certificate trusted" in trusted.output


def test_verify_fails_for_a_signer_the_trusted_ones_do_not_vouch_for(audited, tmp_path):
    _, other = _key_and_cert(tmp_path, "Someone Else")
    result = _run("verify", str(audited.pdf), "--trust", str(other))
    assert result.exit_code == 1
    assert "certificate not trusted" in result.output


@pytest.mark.parametrize("where", ["content", "reason"])
def test_one_byte_altered_fails_verification(audited, tmp_path, where):
    data = bytearray(audited.pdf.read_bytes())
    if where == "content":
        i = len(data) // 3  # inside the signed bytes, in the pages' streams
        data[i] ^= 0x01
    else:
        i = data.index(b"signs exception report")
        data[i] = ord("S")
    altered = tmp_path / "altered.pdf"
    altered.write_bytes(bytes(data))
    result = _run("verify", str(altered))
    assert result.exit_code == 1, result.output
    assert "NOT verified" in result.output


def test_an_update_after_signing_fails_verification(audited, tmp_path):
    """The embedded findings replaced in a revision appended after the signature: the
    signature still checks its own bytes, but no longer covers the file."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    altered = tmp_path / "appended.pdf"
    with audited.pdf.open("rb") as handle:
        writer = IncrementalPdfFileWriter(handle, strict=False)
        names = writer.root["/Names"]["/EmbeddedFiles"]["/Names"]
        spec_ref = names.raw_get(list(names).index("findings.csv") + 1)
        stream = generic.StreamObject(
            {"/Type": generic.NameObject("/EmbeddedFile")}, stream_data=b"table_id,rule_id\n"
        )
        spec_ref.get_object()["/EF"]["/F"] = writer.add_object(stream)
        writer.mark_update(spec_ref)
        buffer = io.BytesIO()
        writer.write(buffer)
    altered.write_bytes(buffer.getvalue())
    result = _run("verify", str(altered))
    assert result.exit_code == 1, result.output
    assert re.search(r"^FAIL\s+findings\.csv: the embedded file's SHA-256", result.output, re.M)
    assert "changed after it was signed" in result.output


def test_an_unsigned_report_is_not_verified_unless_allowed(unsigned):
    result = _run("verify", str(unsigned / "report.pdf"))
    assert result.exit_code == 1
    assert "the report is not signed" in result.output
    allowed = _run("verify", "--allow-unsigned", str(unsigned / "report.pdf"))
    assert allowed.exit_code == 0, allowed.output
    assert "verified (unsigned: files only)" in allowed.output


def test_a_second_signature_and_an_encrypted_key(audited, tmp_path, monkeypatch):
    """A reviewer signs after the auditor, with a key kept encrypted: both signatures
    verify, the first one allowing only the second's signing after it."""
    pdf = tmp_path / "report.pdf"
    shutil.copy(audited.pdf, pdf)
    key, cert = _key_and_cert(tmp_path / "reviewer", "Test Reviewer", passphrase=b"s3cret")
    monkeypatch.delenv(sign.PASSPHRASE_ENV, raising=False)
    with pytest.raises(sign.SigningError, match="encrypted"):
        sign.load(key, cert)
    monkeypatch.setenv(sign.PASSPHRASE_ENV, "s3cret")
    credentials = sign.load(key, cert)
    assert credentials.name == "Test Reviewer"
    sign.sign(pdf, credentials, report_id(audited.summary))
    result = _run("verify", str(pdf))
    assert result.exit_code == 0, result.output
    assert "AuditorSignature1 by" in result.output and "AuditorSignature2 by" in result.output


def test_signing_options_are_checked_before_any_work(audited, tmp_path):
    only_key = _run("report", str(audited.out), "--sign-key", str(audited.key))
    assert only_key.exit_code == 2 and "give both" in only_key.output
    _, other = _key_and_cert(tmp_path, "Someone Else")
    mismatch = _run(
        "report", str(audited.out), "--sign-key", str(audited.key), "--sign-cert", str(other)
    )
    assert mismatch.exit_code == 2 and "is not the key of the certificate" in mismatch.output
    no_report = audited.audit_again(tmp_path / "x", "--no-report", *audited.signing)
    assert no_report.exit_code == 2 and "--no-report" in no_report.output
    assert not (tmp_path / "x").exists()


def test_verify_has_help():
    result = _run("verify", "--help")
    assert (
        result.exit_code == 0 and "--trust" in result.output and "--allow-unsigned" in result.output
    )


def test_verify_says_a_file_is_not_a_report(tmp_path):
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.7\nnot really\n")
    result = _run("verify", str(junk))
    assert result.exit_code == 1 and "NOT verified" in result.output


# --- time stamps (RFC 3161) --------------------------------------------------------------


class _TimeStampHandler(http.server.BaseHTTPRequestHandler):
    """RFC 3161 over HTTP: a TimeStampReq posted, a TimeStampResp answered, signed by the
    server's authority (pyHanko's own TSA code, keyed with a throwaway certificate)."""

    def do_POST(self) -> None:
        from asn1crypto import tsp

        body = self.rfile.read(int(self.headers["Content-Length"]))
        reply = self.server.stamper.request_tsa_response(tsp.TimeStampReq.load(body)).dump()
        self.server.asked.append(self.headers["Content-Type"])
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:  # the tests' output is pytest's
        pass


class Authority:
    def __init__(self, url: str, cert: Path, server, at: dt.datetime):
        self.url, self.cert, self.server, self.at = url, cert, server, at


@pytest.fixture(scope="module")
def authority(tmp_path_factory):
    """A time-stamping authority on a local port, answering with a fixed time."""
    from pyhanko.keys import load_cert_from_pemder, load_private_key_from_pemder
    from pyhanko.sign.timestamps import DummyTimeStamper

    key, cert = _key_and_cert(tmp_path_factory.mktemp("tsa"), "Test TSA", time_stamping=True)
    at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TimeStampHandler)
    server.stamper = DummyTimeStamper(
        load_cert_from_pemder(cert), load_private_key_from_pemder(key, None), fixed_dt=at
    )
    server.asked = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Authority(f"http://127.0.0.1:{server.server_port}/tsa", cert, server, at)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def stamped(audited, unsigned, authority, tmp_path_factory) -> Path:
    """The unsigned folder signed by `auditor report`, time-stamped by the authority."""
    out = tmp_path_factory.mktemp("stamped") / "out"
    shutil.copytree(unsigned, out)
    result = _run("report", str(out), *audited.signing, "--timestamp-url", authority.url)
    assert result.exit_code == 0, result.output
    assert "time-stamped by " + authority.url in result.output
    assert authority.server.asked and set(authority.server.asked) == {"application/timestamp-query"}
    return out / "report.pdf"


def test_a_time_stamped_signature_verifies_with_the_authoritys_time(stamped, authority, audited):
    result = _run("verify", str(stamped))
    assert result.exit_code == 0, result.output
    at = authority.at.isoformat(timespec="seconds")
    assert f"time-stamped {at} by Organization: Test Commission, Common Name: Test TSA" in result.output
    assert "authority not judged" in result.output
    both = _run("verify", str(stamped), "--trust", str(audited.cert), "--trust", str(authority.cert))
    assert both.exit_code == 0, both.output
    assert "an authority trusted (named with --trust)" in both.output
    # the signer trusted but not the authority: its time is vouched for by no one named
    signer_only = _run("verify", str(stamped), "--trust", str(audited.cert))
    assert signer_only.exit_code == 1, signer_only.output
    assert "an authority none of the --trust ones vouch for" in signer_only.output
    # a signature without a stamp says whose clock its time is
    assert "no time stamp (the time is the signer's clock)" in _run("verify", str(audited.pdf)).output


def test_pdfsig_sees_the_time_stamp(stamped):
    out = _tool("pdfsig", str(stamped))
    assert "Signature is Valid" in out and "Total document signed" in out


def test_a_changed_time_stamp_fails_verification(stamped, authority, tmp_path):
    """One digit of the authority's time changed inside the signature's token: the
    document's signature still holds, the time stamp does not."""
    data = stamped.read_bytes()
    when = authority.at.strftime("%Y%m%d%H%M%S").encode().hex().encode()
    i = data.lower().index(when)  # GeneralizedTime, hex-coded in /Contents
    altered = tmp_path / "altered.pdf"
    changed = b"3" if data[i + 7 : i + 8] != b"3" else b"4"  # the year's last digit
    altered.write_bytes(data[: i + 7] + changed + data[i + 8 :])
    result = _run("verify", str(altered))
    assert result.exit_code == 1, result.output
    assert "BROKEN (it does not match the signature)" in result.output
    assert "NOT verified" in result.output


def test_an_authority_that_does_not_answer_leaves_the_report_unsigned(audited, unsigned, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(unsigned, out)
    result = _run("report", str(out), *audited.signing, "--timestamp-url", "http://127.0.0.1:9/tsa")
    assert result.exit_code == 2, result.output
    assert "no time stamp from http://127.0.0.1:9/tsa" in result.output
    assert "the report is written, unsigned" in result.output
    assert "the report is not signed" in _run("verify", str(out / "report.pdf")).output


def test_timestamp_url_is_checked_before_any_work(audited, tmp_path):
    alone = _run("report", str(audited.out), "--timestamp-url", "http://127.0.0.1:9/")
    assert alone.exit_code == 2 and "give --sign-key too" in alone.output
    scheme = _run("report", str(audited.out), *audited.signing, "--timestamp-url",
                  "ftp://tsa.example/")
    assert scheme.exit_code == 2 and "is http:// or https://" in scheme.output
    no_report = audited.audit_again(tmp_path / "x", "--no-report", "--timestamp-url",
                                    "http://127.0.0.1:9/")
    assert no_report.exit_code == 2 and not (tmp_path / "x").exists()
