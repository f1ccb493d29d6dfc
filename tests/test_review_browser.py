"""The review application in a real browser (playwright driving Debian's chromium) over a
real server (`auditor review`, uvicorn) and a store of the faulty sample day, on SQLite and
on PostgreSQL: a reviewer signs in, filters the findings, opens one, sets its
disposition, audits again and finds the disposition carried to the new run; the same
store served read-only shows no form and refuses a write; a reviewer goes through
findings by keys alone, with no error in the console; the runs page fits 1366 pixels."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres import postgres_server  # noqa: F401 - the session's server, for the stores

from auditor.cli import main
from auditor.review.auth import add_reviewer
from auditor.store import dispositions as dsp
from auditor.store.engine import connect

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (./scripts/setup)")

NAME, PASSWORD = "ada", "correct horse battery"


def _audit(store: str, out: Path) -> None:
    result = CliRunner().invoke(main, [
        "audit", str(ROOT / "sample_logs" / "faulty"), "--house",
        str(ROOT / "sample_logs" / "house.toml"), "--out", str(out), "--store", store,
        "--no-report", "-q"], catch_exceptions=False)
    assert result.exit_code == 1, result.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'audits.db'}"
    else:
        url = request.getfixturevalue("postgres_server").new_database()
    _audit(url, tmp_path / "night-1")
    return url


def _serve(store: str, tmp_path: Path, *extra: str) -> Iterator[str]:
    """`auditor review` in a process of its own; yields its address until it is stopped."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "review", "--store", store, "--port",
         str(port), "--reviewers", str(tmp_path / "reviewers.toml"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    address = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None:
                    raise AssertionError(server.stdout.read()) from None
                time.sleep(0.1)
        yield address
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def browser() -> Iterator:
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def _sign_in(page, address: str) -> None:
    page.goto(address + "/")
    page.fill("#sign-in-name", NAME)
    page.fill("#sign-in-password", PASSWORD)
    page.click("#sign-in-submit")
    page.wait_for_selector("#top")
    assert page.locator("#sign-in-error").count() == 0


def test_a_reviewer_disposes_of_a_finding_and_the_next_run_keeps_it(store, tmp_path, browser):
    add_reviewer(tmp_path / "reviewers.toml", NAME, PASSWORD)
    served = _serve(store, tmp_path)
    address = next(served)
    try:
        page = browser.new_page()
        page.goto(address + "/findings")
        assert page.locator("#sign-in").count() == 1  # signed out: the sign-in form
        _sign_in(page, address)
        page.goto(address + "/findings")
        total = int(page.get_attribute("#selection-count", "data-total"))
        assert total == 101  # the faulty sample day's findings
        # filter by a rule: the table is swapped in place (htmx), only that rule left
        page.select_option("#filter-rule", "BA501")
        page.click("#filter-apply")
        # (the page's CSP forbids eval: a locator assertion, not a polled function)
        playwright.expect(page.locator("#selection-count")).not_to_have_attribute(
            "data-total", "101")
        rows = page.locator("#findings-table tbody tr")
        assert rows.count() >= 1
        assert all("BA501" in rows.nth(i).inner_text() for i in range(rows.count()))
        finding_id = rows.first.get_attribute("data-finding-id")
        rows.first.locator("a").first.click()
        page.wait_for_selector("#disposition-form")
        assert "5324.20" in page.content()  # the paragraph quoted
        page.select_option("#disposition-state", "confirmed")
        page.fill("#disposition-note", "Dealer paid short; <b>retrained</b>")
        page.click("#disposition-submit")
        page.wait_for_selector("#disposition-reviewer")
        assert page.inner_text("#disposition-reviewer") == NAME
        assert "<b>retrained</b>" in page.inner_text("#disposition-current-note")  # escaped

        # the next night's audit finds it again: its disposition comes with it, into the
        # run's report (dispositions.json, which the report is rendered from) too
        _audit(store, tmp_path / "night-2")
        carried_over = json.loads((tmp_path / "night-2" / "dispositions.json").read_text())
        assert carried_over["dispositions"][finding_id]["state"] == "confirmed"
        assert carried_over["dispositions"][finding_id]["reviewer"] == NAME
        assert carried_over["counts"]["confirmed"] == 1
        page.goto(address + "/runs")
        page.goto(address + "/findings?state=confirmed")
        assert int(page.get_attribute("#selection-count", "data-total")) == 1
        carried = page.locator(f"#finding-{finding_id}")
        assert carried.count() == 1
        assert re.search(r"[Cc]onfirmed", carried.inner_text())
    finally:
        next(served, None)


def test_read_only_serves_without_sign_in_and_refuses_writes(store, tmp_path, browser):
    served = _serve(store, tmp_path, "--read-only")
    address = next(served)
    try:
        page = browser.new_page()
        page.goto(address + "/findings")
        assert page.locator("#sign-in").count() == 0
        assert int(page.get_attribute("#selection-count", "data-total")) == 101
        page.locator("#findings-table tbody tr a").first.click()
        page.wait_for_selector("#disposition")
        assert page.locator("#disposition-form").count() == 0
        assert page.locator("#bulk-form").count() == 0
        written = page.request.post(page.url + "/disposition",
                                    form={"disposition": "confirmed", "note": "x"})
        assert written.status == 403
    finally:
        next(served, None)


def _errors(page) -> list[str]:
    """The console's errors (a content security policy refusal is one) and the page's
    uncaught exceptions, as they come."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(str(e)))
    return seen


def _history(store: str, finding_id: str) -> list[dict]:
    opened = connect(store)
    try:
        with opened.begin() as conn:
            return dsp.history(conn, finding_id)
    finally:
        opened.close()


def test_keys_walk_three_findings_and_set_a_disposition(store, tmp_path, browser):
    add_reviewer(tmp_path / "reviewers.toml", NAME, PASSWORD)
    served = _serve(store, tmp_path)
    address = next(served)
    try:
        page = browser.new_page()
        errors = _errors(page)
        _sign_in(page, address)
        page.goto(address + "/findings?severity=error&sort=amount")
        ids = [page.locator("#findings-table tbody tr").nth(i).get_attribute("data-finding-id")
               for i in range(5)]
        selected = page.locator("#findings-table tbody tr.selected")
        # the list: j and k move the selection, o opens it
        for key, at in (("j", 0), ("j", 1), ("j", 2), ("k", 1), ("j", 2)):
            page.keyboard.press(key)
            playwright.expect(selected).to_have_attribute("data-finding-id", ids[at])
        with page.expect_navigation():
            page.keyboard.press("o")
        playwright.expect(page.locator("#finding-place")).to_have_attribute(
            "data-position", "3")
        assert "sort=amount" in page.url and ids[2] in page.url
        # a finding: j and k open the next and previous of the same selection
        for key, at in (("j", 3), ("k", 2), ("k", 1)):
            with page.expect_navigation():
                page.keyboard.press(key)
            assert ids[at] in page.url
            playwright.expect(page.locator("#finding-place")).to_have_attribute(
                "data-position", str(at + 1))
        # ? shows the shortcuts written on the page
        page.keyboard.press("?")
        playwright.expect(page.locator("#shortcuts")).to_have_attribute("open", "")
        page.keyboard.press("Escape")
        # the note box resized (as dragging its corner does: an inline style), typed in:
        # keys typed there are text; Esc leaves it; 2 sets "confirmed" (htmx)
        page.evaluate("document.getElementById('disposition-note').style.height = '9em'")
        page.click("#disposition-note")
        page.keyboard.type("Short paid; jk")
        page.keyboard.press("Enter")
        page.keyboard.type("retrained")
        assert ids[1] in page.url  # j and k in the box moved nothing
        page.keyboard.press("Escape")
        page.keyboard.press("2")
        playwright.expect(page.locator("#disposition-done")).to_be_visible()
        playwright.expect(page.locator("#disposition")).to_have_attribute(
            "data-state", "confirmed")
        assert page.inner_text("#disposition-reviewer") == NAME
        [decided] = _history(store, ids[1])
        assert (decided["state"], decided["note"], decided["reviewer"]) == (
            "confirmed", "Short paid; jk\nretrained", NAME)
        # the line break shown; and after the swap, j still goes on to the next
        assert page.inner_text("#disposition-current-note") == "Short paid; jk\nretrained"
        with page.expect_navigation():
            page.keyboard.press("j")
        assert ids[2] in page.url
        with page.expect_navigation():
            page.keyboard.press("u")
        playwright.expect(selected).to_have_attribute("data-finding-id", ids[2])
        assert errors == []  # no refusal of the content security policy, no exception
    finally:
        next(served, None)


def test_the_runs_page_fits_1366_pixels(store, tmp_path, browser):
    add_reviewer(tmp_path / "reviewers.toml", NAME, PASSWORD)
    served = _serve(store, tmp_path)
    address = next(served)
    try:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        errors = _errors(page)
        _sign_in(page, address)
        page.goto(address + "/runs")
        widths = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth,"
            " document.getElementById('runs-table').scrollWidth,"
            " document.getElementById('runs-table').parentElement.clientWidth]")
        page_width, window_width, table_width, room = widths
        assert page_width <= window_width and table_width <= room, widths
        audited = page.inner_text("#runs-table tbody td.audited")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d to \d{4}-\d\d-\d\d \d\d:\d\d",
                            audited), audited
        assert errors == []
    finally:
        next(served, None)


def _sign_in_as(page, address: str, name: str, password: str) -> None:
    page.goto(address + "/sign-in")
    page.fill("#sign-in-name", name)
    page.fill("#sign-in-password", password)
    page.click("#sign-in-submit")
    page.wait_for_selector("#signed-in-as")
    assert name in page.inner_text("#signed-in-as")


def test_four_eyes_a_proposal_approved_and_the_run_signed_off_reaches_the_report(
        store, tmp_path, browser):
    """A reviewer proposes "not an error" (four eyes) and settles the rest; a supervisor
    approves the proposal and signs the run off; the report re-rendered with the store
    says so on its cover."""
    team = tmp_path / "reviewers.toml"
    add_reviewer(team, NAME, PASSWORD)
    add_reviewer(team, "sam", "sam's password", role="supervisor")
    served = _serve(store, tmp_path, "--four-eyes")
    address = next(served)
    try:
        page = browser.new_page()
        errors = _errors(page)
        _sign_in_as(page, address, NAME, PASSWORD)
        # the reviewer proposes: the finding is pending, waiting for a supervisor
        page.goto(address + "/findings?rule=BA501")
        row = page.locator("#findings-table tbody tr").first
        finding_id = row.get_attribute("data-finding-id")
        row.locator("a.finding-link").click()
        page.wait_for_selector("#four-eyes-note")
        page.select_option("#disposition-state", "not_an_error")
        page.fill("#disposition-note", "The house pays this bet short by its rules")
        page.click("#disposition-submit")
        playwright.expect(page.locator("#disposition")).to_have_attribute("data-pending", "true")
        assert "pending: not an error" in page.inner_text("#disposition-current")
        assert page.locator("#proposal-waits").count() == 1
        assert page.locator("#approve-form").count() == 0
        # ... and confirms every finding still open, as a selection
        page.goto(address + "/findings?state=open")
        page.select_option("#bulk-state", "confirmed")
        page.click("#bulk-submit")
        page.click("#bulk-confirm")
        page.wait_for_selector("#flash")
        page.goto(address + "/findings")
        assert page.inner_text("#count-open") == "open 0"
        assert page.inner_text("#count-pending") == "pending 1"
        assert "proposed by ada" in page.inner_text(f"#finding-{finding_id}")
        # the runs page, with its pending column and the run's sign-off, fits 1366 pixels
        page.set_viewport_size({"width": 1366, "height": 768})
        page.goto(address + "/runs")
        assert page.inner_text("#runs-table thead").count("Pending") == 1
        page_width, window_width, table_width, room = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth,"
            " document.getElementById('runs-table').scrollWidth,"
            " document.getElementById('runs-table').parentElement.clientWidth]")
        assert page_width <= window_width and table_width <= room
        page.click("#sign-out-submit")
        page.wait_for_selector("#sign-in")

        # the supervisor approves it
        _sign_in_as(page, address, "sam", "sam's password")
        page.goto(address + "/findings?state=pending")
        page.locator(f"#finding-{finding_id} a.finding-link").click()
        page.click("#approve-submit")
        playwright.expect(page.locator("#disposition-approver")).to_have_text("sam")
        assert page.locator("#disposition").get_attribute("data-pending") is None
        [*_, approved] = _history(store, finding_id)
        assert (approved["state"], approved["status"], approved["reviewer"],
                approved["approved_by"]) == ("not_an_error", "approved", NAME, "sam")
        # ... and signs the run off from the runs page
        page.goto(address + "/")
        page.locator("span.signoff a", has_text="Sign off…").click()
        page.fill("#signoff-note", "Reviewed at the end of the night")
        page.click("#signoff-submit")
        playwright.expect(page.locator("#signoff-by")).to_have_text("sam")
        assert "signed off by sam: 100 confirmed, 1 not an error" in page.inner_text("#flash")
        page.goto(address + "/")
        assert page.locator("span.signoff").get_attribute("data-signed") == "true"
        assert "Signed off by sam" in page.inner_text("span.signoff")
        assert errors == []
    finally:
        next(served, None)

    # the report re-rendered with the store: the sign-off on its cover
    result = CliRunner().invoke(main, ["report", str(tmp_path / "night-1"), "--store", store],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "night-1" / "dispositions.json").read_text())
    assert doc["signoff"]["by"] == "sam" and doc["signoff"]["standing"]
    assert doc["dispositions"][finding_id]["approved_by"] == "sam"
    if shutil.which("pdftotext"):
        cover = subprocess.run(["pdftotext", "-l", "2", str(tmp_path / "night-1" / "report.pdf"),
                                "-"], capture_output=True, text=True, check=True).stdout
        cover = re.sub(r"\s+", " ", cover)
    else:
        cover = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (
            tmp_path / "night-1" / "report.html").read_text()))
    assert re.search(r"Signed off in the findings store by sam, supervisor, on "
                     r"\d{4}-\d\d-\d\d \d\d:\d\d UTC: 100 confirmed · 1 not an error\. "
                     r"Note: Reviewed at the end of the night\.", cover), cover[:3000]
