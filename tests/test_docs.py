"""The manual (docs/, mkdocs.yml): its generated pages are what the code gives now, every
rule has a page, every hand-written page is in the navigation, and the site builds with
`mkdocs build --strict` (a broken link, anchor or missing page fails)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor import docs_pages
from auditor.cli import main
from auditor.layers import LAYERS
from auditor.rules.catalog import REGISTRY
from auditor.rulesets import load_rulesets

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS = Path(sys.executable).parent / "mkdocs"


def test_generated_pages_are_up_to_date():
    stale = docs_pages.stale(DOCS, cli=main)
    assert not stale, f"generated pages out of date: {stale}; run ./scripts/docs"


def test_every_rule_has_a_page_listed_under_its_family():
    index = (DOCS / "rules" / "index.md").read_text(encoding="utf-8")
    for rule in REGISTRY.all():
        assert (DOCS / "rules" / f"{rule.id}.md").is_file(), f"{rule.id} has no page"
        assert f"[{rule.id}]({rule.id}.md)" in index, f"rules/index.md does not list {rule.id}"
        assert docs_pages.family(rule.id) != "Other", f"{rule.id}: no family in FAMILIES"


def test_a_rule_page_quotes_its_paragraph_and_shows_its_cases():
    page = docs_pages.pages()["rules/BA206.md"]
    assert page.startswith(docs_pages.GENERATED)
    assert "# BA206: " in page and "9 NYCRR 5324.20(f)(13)" in page
    assert "The total of the initial two cards dealt to the banker's hand" in page
    assert "## Evidence it needs" in page and "`cards`: not judged where" in page
    assert "### Passes: " in page and "### Fails: " in page
    assert '{"macro": "round"' in page


def test_a_page_without_case_files_leaves_the_cases_out(tmp_path):
    facts = docs_pages.rule_facts(REGISTRY.get("IN004"), load_rulesets(), cases=tmp_path)
    assert facts.passing is None and facts.failing is None
    assert "## Cases" not in docs_pages.rule_page(facts)


def test_the_rule_command_reads_the_same_facts():
    run = CliRunner().invoke(main, ["rule", "BA206", "--format", "markdown"])
    assert run.exit_code == 0
    assert run.output == docs_pages.pages()["rules/BA206.md"]
    text = CliRunner().invoke(main, ["rule", "ba206"]).output
    assert "Evidence it needs" in text and "cards: not judged where" in text


def test_readings_name_rules_and_each_rule_page_quotes_its_own():
    rs = load_rulesets()
    known = {rule.id for rule in REGISTRY.all()}
    for reading in rs.readings():
        assert set(reading.rules) <= known, f"a reading names no rule: {reading.rules}"
    page = docs_pages.pages()["rules/BA206.md"]
    assert "## How the auditor reads it" in page and "the banker of 0-2 always draws" in page
    assert "always draws" not in docs_pages.pages()["rules/BA201.md"]
    readings = docs_pages.pages()["checked/readings.md"]
    assert all(reading.text.splitlines()[0] in readings for reading in rs.readings())
    assert "[BJ405](../rules/BJ405.md)" in readings
    text = CliRunner().invoke(main, ["rule", "BA206"]).output
    assert "How the auditor reads it" in text and "the banker of 0-2 always draws" in text


def test_the_readme_is_a_front_page_whose_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 80, "the README is the front page: about one screen"
    for command in ("./scripts/sample-audit", "./scripts/test"):
        assert command in readme
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)|src=\"([^\"]+)\"", readme)
    assert len(targets) > 10
    for path, anchor, image in targets:
        target = ROOT / (path or image)
        assert target.exists(), f"README links to {path or image}, which is not there"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)
            assert anchor in {docs_pages._slug(h) for h in headings}, f"{path}#{anchor}"
    # one click each: the first audit, the nightly cron line, any rule, the profile reference
    for wanted in ("docs/getting-started.md#the-first-audit", "docs/guides/nightly.md#a-cron-line",
                   "docs/rules/index.md", "docs/reference/export-profiles.md"):
        assert f"]({wanted})" in readme, wanted


def test_every_hand_written_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed: set[str] = set()

    def walk(items):
        for item in items:
            if isinstance(item, str):
                listed.add(item)
            elif isinstance(item, dict):
                for value in item.values():
                    walk(value if isinstance(value, list) else [value])

    walk(config["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    missing = sorted(p for p in pages - listed if not p.startswith("rules/")
                     or p == "rules/index.md")
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"
    assert not listed - pages, f"nav entries with no page: {sorted(listed - pages)}"


def test_the_architecture_page_names_every_layer():
    page = (DOCS / "architecture.md").read_text(encoding="utf-8").lower()
    for layer in LAYERS:
        assert f"### {layer.name}" in page, f"docs/architecture.md says nothing of {layer.name!r}"


@pytest.mark.skipif(not MKDOCS.exists(),
                    reason="mkdocs is not installed (the docs dependency group: uv sync)")
def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "rules" / "BA206" / "index.html").is_file()
    assert (tmp_path / "site" / "guides" / "nightly" / "index.html").is_file()

