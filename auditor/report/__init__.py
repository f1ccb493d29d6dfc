"""The exception report: HTML from jinja2 templates, printed to PDF by weasyprint.

It is rendered only from the audit's output folder (summary.json, findings.parquet
and round_details.parquet), so `auditor report OUT` gives the same report without
re-auditing, and every number in it is one the machine files also hold. The
context is built in `model`, the charts in `charts`; the templates and the print
stylesheet are in report_templates/. The PDF is a tagged PDF/A-3 that carries its
evidence inside (`evidence`); `sign` signs it and `verify` checks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import data_dir
from ..rulesets import Rulesets, load_rulesets
from . import evidence, model
from .model import report_id

if TYPE_CHECKING:
    import jinja2

__all__ = ["PAGE_SIZES", "TEMPLATES", "html", "render", "report_id"]

TEMPLATES = data_dir("report_templates")
PAGE_SIZES = {"A4": "A4", "Letter": "letter"}


def _css_string(value: object) -> str:
    """A value inside a CSS double-quoted string."""
    text = str(value if value is not None else "")
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _environment() -> jinja2.Environment:
    import jinja2  # imported here, as weasyprint: an audit without a report needs neither

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(n=model.count, money=model.money, css_string=_css_string)
    return env


def html(
    out: Path,
    paper: str = "A4",
    rulesets: Rulesets | None = None,
    detail_per_rule: int | None = None,
) -> str:
    """The report as one self-contained HTML document (styles and charts inline)."""
    return _document(out, paper, rulesets, detail_per_rule)[0]


def _document(
    out: Path, paper: str, rulesets: Rulesets | None, detail_per_rule: int | None
) -> tuple[str, list[evidence.Evidence]]:
    """The HTML, and the files the PDF embeds (the ones its provenance lists)."""
    if paper not in PAGE_SIZES:
        raise ValueError(f"paper must be one of {', '.join(PAGE_SIZES)}, not {paper!r}")
    rs = rulesets or load_rulesets()
    context = model.build(out, rs, detail_per_rule)
    embedded, notes = evidence.gather(out, context["summary"])
    record = {
        "variant": evidence.VARIANT_NAME,
        "embedded": [e.listing() for e in embedded],
        "notes": notes,
    }
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    template = _environment().get_template("report.html.j2")
    document = template.render(
        **context, record=record, css=css, page_size=PAGE_SIZES[paper], paper=paper
    )
    return document, embedded


def url_fetcher():
    """What the PDF may fetch while it is printed: data: URLs only (the report's charts
    and styles are inline). Log text is escaped, but a report is a record: it reads
    nothing from the file system or the network, whatever a log holds."""
    from weasyprint.urls import URLFetcher

    return URLFetcher(allowed_protocols=("data",))


def render(
    out: Path,
    paper: str = "A4",
    rulesets: Rulesets | None = None,
    detail_per_rule: int | None = None,
) -> list[Path]:
    """Write OUT/report.pdf (tagged PDF/A-3, its evidence embedded) and OUT/report.html;
    `detail_per_rule` None: as the audit."""
    from weasyprint import HTML  # imported here: loading pango is slow and not always needed

    from . import pdfwriter

    document, embedded = _document(out, paper, rulesets, detail_per_rule)
    html_path = out / "report.html"
    html_path.write_text(document, encoding="utf-8")
    pdf_path = out / "report.pdf"
    fetcher = url_fetcher()
    with pdfwriter.record_pdf():
        HTML(string=document, base_url=str(TEMPLATES), url_fetcher=fetcher).write_pdf(
            pdf_path,
            pdf_variant=evidence.VARIANT,
            attachments=evidence.attachments(embedded, fetcher),
            finisher=evidence.finisher(embedded),
        )
    return [pdf_path, html_path]
