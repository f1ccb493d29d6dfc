"""The exception report: HTML from jinja2 templates, printed to PDF by weasyprint.

It is rendered only from the audit's output folder (findings.parquet and
summary.json), so `auditor report OUT` gives the same report without
re-auditing, and every number in it is one the machine files also hold.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
import polars as pl

from ..paths import data_dir
from ..rules.catalog import REGISTRY
from ..rulesets import Rulesets, load_rulesets

TEMPLATES = data_dir("report_templates")
DETAIL_PER_RULE = 50


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def report_id(summary: dict) -> str:
    """A short id that changes whenever the audited inputs or its results change."""
    basis = json.dumps(
        {k: summary[k] for k in ("inputs", "house_rules", "findings", "run_at")}, sort_keys=True
    )
    return "AUD-" + hashlib.sha256(basis.encode()).hexdigest()[:12].upper()


def _context(out: Path, paper: str, rs: Rulesets, detail_per_rule: int) -> dict:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    findings = pl.read_parquet(out / "findings.parquet")
    rules = [REGISTRY.get(r) for r in summary["rules_applied"] if r in REGISTRY]
    cited = sorted({r.citation for r in rules} | set(findings["citation"].drop_nulls().to_list()))
    shown = findings.with_columns(pl.int_range(pl.len()).over("rule_id").alias("_n")).filter(
        pl.col("_n") < detail_per_rule
    )
    counts = findings.group_by("rule_id").agg(pl.len().alias("n"))
    hidden = {r: n - detail_per_rule for r, n in counts.iter_rows() if n > detail_per_rule}
    return {
        "summary": summary,
        "report_id": report_id(summary),
        "paper": paper,
        "findings": shown.drop("_n").to_dicts(),
        "hidden": hidden,
        "by_rule": [
            {"rule": REGISTRY.get(r) if r in REGISTRY else None, "id": r, "count": n}
            for r, n in summary["findings"]["by_rule"].items()
        ],
        "rules": rules,
        "paragraphs": [rs.paragraph(c) for c in cited if rs.has_paragraph(c)],
        "detail_per_rule": detail_per_rule,
    }


def render(
    out: Path,
    paper: str = "A4",
    rulesets: Rulesets | None = None,
    detail_per_rule: int = DETAIL_PER_RULE,
) -> list[Path]:
    from weasyprint import HTML  # imported here: loading pango is slow and not always needed

    rs = rulesets or load_rulesets()
    context = _context(out, paper, rs, detail_per_rule)
    env = _environment()
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    html = env.get_template("report.html.j2").render(**context, css=css)
    html_path = out / "report.html"
    html_path.write_text(html, encoding="utf-8")
    pdf_path = out / "report.pdf"
    HTML(string=html, base_url=str(TEMPLATES)).write_pdf(pdf_path)
    return [pdf_path, html_path]
