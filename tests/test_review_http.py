"""`auditor review` over HTTP (Starlette's TestClient, the app in this process): signing in,
form tokens, escaping, dispositions on one finding and on a selection, read-only mode,
two reviewers at once, and the add-reviewer and export commands; on SQLite and on a
throwaway PostgreSQL server (postgres.py).

The store is made once per module and backend by `auditor audit --store` on a small
simulated faulty day of baccarat (one table named `<script>alert(1)</script>`), twice: the
first 13 minutes, then the whole day, so that the second run has findings new and still
present. Each test gets a copy of it (a copied SQLite file, a PostgreSQL database made
from it as a template), so that dispositions never leak from one test to another.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
import threading
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from postgres import postgres_server  # noqa: F401 - the session's server, for the stores

from auditor.cli import main
from auditor.review import auth
from auditor.review.app import create_app
from auditor.store import STATES
from auditor.store import dispositions as dsp
from auditor.store.engine import connect
from auditor.store.schema import dispositions, findings, runs

with warnings.catch_warnings():
    # starlette prefers httpx2 now; the project's lock holds httpx, which works the same
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient as _TestClient


class TestClient(_TestClient):
    """The app in this process, asked as a browser on this machine asks it: for the host
    127.0.0.1 (the server answers to no other name unless told: hosts)."""

    __test__ = False

    def __init__(self, app, base_url: str = "http://127.0.0.1", **kwargs) -> None:
        super().__init__(app, base_url=base_url, **kwargs)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
PASSWORDS = {"ann": "ann's password", "bob": "bob's password"}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
REFUSED = "Refused."


def _cli(*args: str, **kwargs):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, **kwargs)


# --- the store: a faulty day audited twice ---------------------------------------------------


@pytest.fixture(scope="module")
def day(tmp_path_factory) -> Path:
    """A simulated faulty day of baccarat on two tables, the second one named SCRIPT."""
    folder = tmp_path_factory.mktemp("day")
    made = _cli("simulate", "baccarat", "--rounds", "60", "--tables", "2", "--faults", "0.3",
                "--seed", "3", "--out", str(folder / "logs"))
    assert made.exit_code == 0, made.output
    (folder / "logs" / "truth.tsv").unlink()
    for name in ("baccarat.jsonl", "house.toml"):
        path = folder / "logs" / name
        path.write_text(path.read_text().replace("BAC-02", SCRIPT))
    return folder


def _audit(day: Path, out: str, url: str, *window: str) -> None:
    result = _cli("audit", str(day / "logs" / "baccarat.jsonl"), "--house",
                  str(day / "logs" / "house.toml"), "--out", str(day / out), "--store", url,
                  "--no-report", "-q", "--fail-on", "never", *window)
    assert result.exit_code == 0, result.output


@dataclass
class Template:
    backend: str
    url: str  # the store both runs were written to, copied for each test
    server: object | None = None


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def template(request, day) -> Template:
    backend = request.param
    if backend == "sqlite":
        url = f"sqlite:///{day / f'template-{uuid.uuid4().hex[:6]}.db'}"
        server = None
    else:
        server = request.getfixturevalue("postgres_server")
        url = server.new_database()
    tag = uuid.uuid4().hex[:6]
    _audit(day, f"first-{tag}", url, "--until", "2026-11-01T20:13")
    _audit(day, f"whole-{tag}", url)
    return Template(backend, url, server)


@pytest.fixture
def store_url(template: Template, tmp_path) -> str:
    """A copy of the template store, for this test alone."""
    if template.backend == "sqlite":
        copy = tmp_path / "audits.db"
        shutil.copy(sa.make_url(template.url).database, copy)
        return f"sqlite:///{copy}"
    name = f"store_{uuid.uuid4().hex[:12]}"
    source = sa.make_url(template.url).database
    engine = sa.create_engine(template.server.url(), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    engine.dispose()
    return template.server.url(name)


@pytest.fixture
def reviewers(tmp_path) -> Path:
    path = tmp_path / "reviewers.toml"
    for name, password in PASSWORDS.items():
        auth.add_reviewer(path, name, password)
    return path


@pytest.fixture
def app(store_url, reviewers):
    made = create_app(store_url, reviewers)
    yield made
    made.state.review.reader.dispose()
    made.state.review.store.close()


def _rows(url: str, query) -> list[dict]:
    store = connect(url)
    try:
        with store.begin() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]
    finally:
        store.close()


def _runs(url: str) -> list[str]:
    """The run ids, in the order they were stored."""
    query = sa.select(runs.c.run_id).order_by(runs.c.finished_at, runs.c.run_id)
    return [r["run_id"] for r in _rows(url, query)]


def _findings(url: str, run_id: str, **where) -> list[dict]:
    query = sa.select(findings).where(findings.c.run_id == run_id,
                                      *(findings.c[k] == v for k, v in where.items()))
    return _rows(url, query.order_by(findings.c.finding_id))


def _history(url: str, finding_id: str) -> list[dict]:
    store = connect(url)
    try:
        with store.begin() as conn:
            return dsp.history(conn, finding_id)
    finally:
        store.close()


def _token(html: str) -> str:
    return TOKEN.search(html).group(1)


def _signed_in(app, name: str = "ann") -> tuple[TestClient, str]:
    """A client signed in as NAME, and its session's form token."""
    client = TestClient(app)
    page = client.get("/sign-in")
    signed = client.post("/sign-in", data={"name": name, "password": PASSWORDS[name],
                                           "csrf_token": _token(page.text)},
                         follow_redirects=False)
    assert signed.status_code == 303, signed.text
    return client, _token(client.get("/").text)


def _finding_path(run_id: str, finding_id: str) -> str:
    return f"/runs/{run_id}/findings/{finding_id}"


# --- signing in --------------------------------------------------------------------------


def test_pages_need_a_signed_in_reviewer(app, store_url):
    client = TestClient(app)
    run_id = _runs(store_url)[-1]
    finding_id = _findings(store_url, run_id)[0]["finding_id"]
    for path in ("/", "/findings", f"/findings?run={run_id}&severity=error",
                 _finding_path(run_id, finding_id)):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code == 303, path
        assert answer.headers["location"].startswith("/sign-in?next=%2F"), path
    # htmx is told to load the sign-in page whole, not to swap it into a table
    part = client.get("/findings", headers={"HX-Request": "true"}, follow_redirects=False)
    assert part.headers["HX-Redirect"].startswith("/sign-in")
    assert client.get("/static/htmx-2.0.11.min.js").status_code == 200
    assert client.get("/static/review.css").status_code == 200
    # no docs pages that would load scripts from elsewhere
    assert client.get("/docs").status_code == 404


def test_a_wrong_name_and_a_wrong_password_are_refused_alike(app):
    client = TestClient(app)
    token = _token(client.get("/sign-in").text)
    answers = [
        client.post("/sign-in", data={"name": name, "password": password, "csrf_token": token})
        for name, password in (("ann", "not ann's password"), ("nobody", PASSWORDS["ann"]),
                               ("", ""))
    ]
    for answer in answers:
        assert answer.status_code == 401
        assert auth.REFUSED in answer.text
        assert client.get("/", follow_redirects=False).status_code == 303  # still signed out
    # the pages differ only in the name typed, given back in its field
    same = [a.text.replace('value="nobody"', 'value="ann"').replace('value=""', 'value="ann"')
            for a in answers]
    assert same[0] == same[1] == same[2]

    signed = client.post("/sign-in", data={"name": "ann", "password": PASSWORDS["ann"],
                                           "csrf_token": token, "next": "/findings"},
                         follow_redirects=False)
    assert signed.status_code == 303 and signed.headers["location"] == "/findings"
    page = client.get("/")
    assert page.status_code == 200 and "Signed in as <strong>ann</strong>" in page.text
    # a new session on signing in: the token from before is not the session's any more
    assert _token(page.text) != token
    out = client.post("/sign-out", data={"csrf_token": _token(page.text)},
                      follow_redirects=False)
    assert out.status_code == 303
    assert client.get("/", follow_redirects=False).status_code == 303


def test_sign_in_goes_back_only_to_pages_of_this_site(app):
    client = TestClient(app)
    token = _token(client.get("/sign-in").text)
    for target, lands in (("//evil.example/x", "/"), ("https://evil.example/", "/"),
                          ("/findings?severity=error", "/findings?severity=error")):
        signed = client.post("/sign-in", data={"name": "ann", "password": PASSWORDS["ann"],
                                               "csrf_token": token, "next": target},
                             follow_redirects=False)
        assert signed.headers["location"] == lands
        token = _token(client.get("/").text)


def test_a_removed_reviewer_is_signed_out_and_the_session_survives_a_restart(
        store_url, reviewers):
    first = create_app(store_url, reviewers)
    client, _ = _signed_in(first, "bob")
    secret = reviewers.with_suffix(".secret")
    assert secret.exists() and secret.stat().st_mode & 0o077 == 0
    # the same secret beside the file: a restarted server knows the session
    again = create_app(store_url, reviewers)
    client = TestClient(again, cookies=client.cookies)
    assert client.get("/", follow_redirects=False).status_code == 200
    text = reviewers.read_text()
    reviewers.write_text(text[: text.index('[reviewers."bob"]')])
    assert client.get("/", follow_redirects=False).status_code == 303
    for made in (first, again):
        made.state.review.reader.dispose()
        made.state.review.store.close()


# --- form tokens ---------------------------------------------------------------------------


def test_a_post_without_the_sessions_token_is_refused(app, store_url):
    run_id = _runs(store_url)[-1]
    finding_id = _findings(store_url, run_id)[0]["finding_id"]
    path = _finding_path(run_id, finding_id) + "/disposition"
    ann, token = _signed_in(app, "ann")
    _bob, bobs_token = _signed_in(app, "bob")
    form = {"disposition": "confirmed", "note": "n"}
    refused = [
        ann.post(path, data=form),  # no token at all
        ann.post(path, data={**form, "csrf_token": ""}),
        ann.post(path, data={**form, "csrf_token": token[:-1] + ("A" if token[-1] != "A" else "B")}),
        ann.post(path, data={**form, "csrf_token": bobs_token}),  # another session's
        ann.post(path, data=form, headers={"X-CSRF-Token": "forged"}),
        ann.post(path, data={**form, "csrf_token": token}, headers={"X-CSRF-Token": "forged"}),
        ann.post("/findings/bulk/confirm", data={"run": run_id, **form}),
        ann.post("/findings/bulk", data={"run": run_id, "count": "1", **form}),
        ann.post("/sign-out"),
        TestClient(app).post("/sign-in", data={"name": "ann", "password": PASSWORDS["ann"]}),
    ]
    for answer in refused:
        assert answer.status_code == 403
        assert REFUSED in answer.text and "token" not in answer.text.lower()
    assert _history(store_url, finding_id) == []
    # the form field, or the header htmx sends, with the session's token: accepted
    assert ann.post(path, data={**form, "csrf_token": token},
                    follow_redirects=False).status_code == 303
    assert ann.post(path, data=form, headers={"X-CSRF-Token": token,
                                              "HX-Request": "true"}).status_code == 200
    assert len(_history(store_url, finding_id)) == 2


# --- escaping ------------------------------------------------------------------------------


def test_log_text_and_notes_come_back_escaped(app, store_url):
    client, token = _signed_in(app)
    run_id = _runs(store_url)[-1]
    found = _findings(store_url, run_id, table_id=SCRIPT)
    assert found
    finding_id = found[0]["finding_id"]
    note = "<script>alert('note')</script> & <b>bold</b>"
    answer = client.post(_finding_path(run_id, finding_id) + "/disposition",
                         data={"disposition": "explained", "note": note, "csrf_token": token},
                         headers={"HX-Request": "true"})
    assert answer.status_code == 200
    pages = [
        answer.text,
        client.get("/findings", params={"run": run_id, "table": SCRIPT}).text,
        client.get("/findings", params={"run": run_id}).text,
        client.get(_finding_path(run_id, finding_id)).text,
        client.get("/").text,
    ]
    for page in pages:
        assert "<script>" not in page and "<b>bold" not in page
    assert ESCAPED in pages[1] and ESCAPED in pages[3]
    assert "&lt;script&gt;alert(&#39;note&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in pages[3]
    # the replay of a round at that table is shown, its table's name escaped too
    assert 'class="replay"' in pages[3]
    assert _history(store_url, finding_id)[-1]["note"] == note


def test_pages_say_what_they_may_load(app):
    client, _ = _signed_in(app)
    page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "http://" not in page.text.split("<main")[0] and "https://" not in page.text


# --- findings -------------------------------------------------------------------------------


def _count(html: str) -> int:
    return int(re.search(r'id="selection-count" class="counts" data-total="(\d+)"', html).group(1))


def test_findings_filtered_counted_and_paged(app, store_url):
    client, _ = _signed_in(app)
    first, second = _runs(store_url)
    stored = _findings(store_url, second)
    earlier = {f["finding_id"] for f in _findings(store_url, first)}
    page = client.get("/findings")  # the latest run by default
    assert _count(page.text) == len(stored) > 10
    assert f'<option value="{second}" selected>' in page.text
    new = client.get("/findings", params={"run": second, "presence": "new"}).text
    still = client.get("/findings", params={"run": second, "presence": "still_present"}).text
    assert _count(still) == len({f["finding_id"] for f in stored} & earlier) > 0
    assert _count(new) + _count(still) == len(stored) and _count(new) > 0
    for f in _findings(store_url, second):
        assert (f'data-finding-id="{f["finding_id"]}"' in still) == (f["finding_id"] in earlier)
    # the first run has no run before it: everything it found is new
    new_first = client.get("/findings", params={"run": first, "presence": "new"}).text
    assert _count(new_first) == len(earlier) > 0 and "no run before this one" in new_first
    assert _count(client.get("/findings", params={"run": first,
                                                  "presence": "still_present"}).text) == 0
    rule = stored[0]["rule_id"]
    by_rule = client.get("/findings", params={"run": second, "rule": rule}).text
    assert _count(by_rule) == sum(f["rule_id"] == rule for f in stored)
    by_table = client.get("/findings", params={"run": second, "table": SCRIPT}).text
    assert _count(by_table) == sum(f["table_id"] == SCRIPT for f in stored)
    dealer = next(f["dealer_id"] for f in stored if f["dealer_id"])
    by_dealer = client.get("/findings", params={"run": second, "dealer": dealer,
                                                "severity": "error"}).text
    assert _count(by_dealer) == sum(f["dealer_id"] == dealer and f["severity"] == "error"
                                    for f in stored)
    assert _count(client.get("/findings", params={"run": second, "state": "open"}).text) \
        == len(stored)
    assert _count(client.get("/findings", params={"run": second, "state": "confirmed"}).text) == 0

    # pages of 4: each finding once over the pages, in the findings files' order
    seen = []
    pages = -(-len(stored) // 4)
    for number in range(1, pages + 1):
        html = client.get("/findings", params={"run": second, "per_page": 4,
                                               "page": number}).text
        assert f'<span id="page-number">{number}</span> of {pages}' in html
        seen += re.findall(r'<tr id="finding-([0-9a-f]{32})"', html)
    assert sorted(seen) == sorted(f["finding_id"] for f in stored) and len(seen) == len(set(seen))
    beyond = client.get("/findings", params={"run": second, "per_page": 4, "page": 999}).text
    assert f'<span id="page-number">{pages}</span>' in beyond

    # htmx gets the part it swaps, with the address to show
    part = client.get("/findings", params={"run": second, "severity": "error", "rule": ""},
                      headers={"HX-Request": "true"})
    assert part.text.lstrip().startswith('<div id="findings-view">')
    assert "<html" not in part.text
    assert part.headers["HX-Push-Url"] == f"/findings?run={second}&severity=error"
    assert client.get("/findings", params={"run": "no-such-run"}).status_code == 404
    bad = client.get("/findings", params={"run": second, "severity": "fatal"})
    assert bad.status_code == 400 and "severity is error or warning" in bad.text
    assert client.get("/findings", params={"page": "x"}).status_code == 400


def test_a_finding_shows_its_rule_paragraph_replay_and_runs(app, store_url):
    client, _ = _signed_in(app)
    first, second = _runs(store_url)
    earlier = {f["finding_id"] for f in _findings(store_url, first)}
    finding = next(f for f in _findings(store_url, second)
                   if f["finding_id"] in earlier and f["round"])
    page = client.get(_finding_path(second, finding["finding_id"])).text
    assert f'<strong id="rule-id">{finding["rule_id"]}</strong>' in page
    assert 'id="paragraph-text"' in page and finding["citation"] in page
    assert 'class="replay"' in page
    assert f'id="found-in-{first}" class="when-earlier"' in page
    assert f'id="found-in-{second}" class="when-this-run"' in page
    assert 'id="disposition-history-empty"' in page
    # the run's folder gone: the page says so instead of a replay
    store = connect(store_url)
    with store.begin() as conn:
        conn.execute(runs.update().where(runs.c.run_id == second)
                     .values(out_dir=str(Path("/nonexistent") / second)))
    store.close()
    gone = client.get(_finding_path(second, finding["finding_id"])).text
    assert 'id="replay-missing"' in gone and "is no longer there" in gone
    # the first run's folder still holds it
    assert 'class="replay"' in client.get(_finding_path(first, finding["finding_id"])).text
    assert client.get(_finding_path(second, "0" * 32)).status_code == 404


# --- dispositions -------------------------------------------------------------------------


def test_a_disposition_set_is_listed_with_its_reviewer(app, store_url):
    client, token = _signed_in(app, "bob")
    first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    path = _finding_path(second, finding_id)
    done = client.post(path + "/disposition", data={"disposition": "not_an_error",
                                                     "note": "house practice",
                                                     "csrf_token": token},
                       follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == path
    page = client.get(path).text
    assert 'id="flash"' in page and "Set to “not an error” by bob." in page
    assert '<span id="disposition-reviewer">bob</span>' in page
    assert '<td class="reviewer">bob</td>' in page and "house practice" in page
    [row] = _history(store_url, finding_id)
    assert (row["state"], row["note"], row["reviewer"], row["run_id"]) == (
        "not_an_error", "house practice", "bob", second)
    listed = client.get("/findings", params={"run": second, "state": "not_an_error"}).text
    assert _count(listed) == 1 and f'data-finding-id="{finding_id}"' in listed
    assert "not an error <span class=\"by\">(bob)</span>" in listed
    runs_page = client.get("/").text
    assert f'href="/findings?run={second}&amp;state=not_an_error">1</a>' in runs_page
    # a state that is not one, or a finding of no run: refused with a sentence, nothing set
    bad = client.post(path + "/disposition", data={"disposition": "fine", "csrf_token": token})
    assert bad.status_code == 400 and "a disposition is one of" in bad.text
    missing = client.post(_finding_path(second, "f" * 32) + "/disposition",
                          data={"disposition": "confirmed", "csrf_token": token})
    assert missing.status_code == 404
    assert len(_history(store_url, finding_id)) == 1


def test_a_disposition_set_on_a_whole_selection(app, store_url):
    client, token = _signed_in(app)
    _first, second = _runs(store_url)
    chosen = _findings(store_url, second, table_id=SCRIPT, severity="error")
    assert len(chosen) > 2
    selection = {"run": second, "table": SCRIPT, "severity": "error", "state": ""}
    form = {**selection, "disposition": "confirmed", "note": "=dealer's error",
            "csrf_token": token}
    confirm = client.post("/findings/bulk/confirm", data=form, headers={"HX-Request": "true"})
    assert confirm.status_code == 200 and 'id="bulk-confirm-form"' in confirm.text
    assert f'<strong id="bulk-count">{len(chosen)}</strong>' in confirm.text
    assert not _rows(store_url, sa.select(dispositions))  # nothing set before confirming
    # a count that is no longer the selection's is not applied
    stale = client.post("/findings/bulk", data={**form, "count": len(chosen) + 1})
    assert stale.status_code == 409 and 'id="bulk-changed"' in stale.text
    assert not _rows(store_url, sa.select(dispositions))
    done = client.post("/findings/bulk", data={**form, "count": len(chosen)},
                       headers={"HX-Request": "true"})
    assert done.status_code == 200 and done.headers["HX-Redirect"].startswith("/findings?")
    stored = _rows(store_url, sa.select(dispositions))
    assert sorted(r["finding_id"] for r in stored) == sorted(f["finding_id"] for f in chosen)
    assert {(r["state"], r["reviewer"], r["run_id"], r["note"]) for r in stored} == {
        ("confirmed", "ann", second, "=dealer's error")}
    page = client.get(done.headers["HX-Redirect"]).text
    assert f"Set “confirmed” on {len(chosen)} findings by ann." in page
    assert re.search(r'id="count-confirmed">confirmed (\d+)<', page).group(1) == str(len(chosen))
    # the selection filtered by disposition, set again: only what is still open
    still_open = {"run": second, "state": "open", "disposition": "explained",
                  "csrf_token": token}
    total = len(_findings(store_url, second)) - len(chosen)
    confirm = client.post("/findings/bulk/confirm", data=still_open)
    assert f'<strong id="bulk-count">{total}</strong>' in confirm.text
    client.post("/findings/bulk", data={**still_open, "count": total})
    assert len(_rows(store_url, sa.select(dispositions))) == len(_findings(store_url, second))
    nothing = client.post("/findings/bulk/confirm", data=still_open)
    assert 'id="bulk-nothing"' in nothing.text


def test_two_reviewers_at_once_are_both_kept(app, store_url):
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    path = _finding_path(second, finding_id) + "/disposition"
    clients = {name: _signed_in(app, name) for name in ("ann", "bob")}
    barrier = threading.Barrier(2)
    answers = {}

    def decide(name: str, state: str) -> None:
        client, token = clients[name]
        barrier.wait(timeout=30)
        answers[name] = client.post(path, data={"disposition": state, "note": f"by {name}",
                                                "csrf_token": token},
                                    headers={"HX-Request": "true"})

    threads = [threading.Thread(target=decide, args=a)
               for a in (("ann", "confirmed"), ("bob", "explained"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert {n: a.status_code for n, a in answers.items()} == {"ann": 200, "bob": 200}
    kept = _history(store_url, finding_id)
    assert sorted((r["reviewer"], r["state"], r["note"]) for r in kept) == [
        ("ann", "confirmed", "by ann"), ("bob", "explained", "by bob")]
    # the later row is the finding's disposition, and the page shows both
    page = clients["ann"][0].get(_finding_path(second, finding_id)).text
    assert page.count('class="history-row"') == 2
    assert f'data-state="{kept[-1]["state"]}"' in page


# --- read-only ------------------------------------------------------------------------------


def test_read_only_serves_without_sign_in_and_refuses_every_write(store_url, tmp_path):
    app = create_app(store_url, tmp_path / "no-reviewers.toml", read_only=True)
    client = TestClient(app)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    for path in ("/", "/findings", _finding_path(second, finding_id)):
        page = client.get(path, follow_redirects=False)
        assert page.status_code == 200, path
        assert 'method="post"' not in page.text and 'hx-post' not in page.text
        assert 'id="read-only-badge"' in page.text
    assert client.get("/sign-in", follow_redirects=False).status_code == 303
    for path, form in [
        (_finding_path(second, finding_id) + "/disposition", {"disposition": "confirmed"}),
        ("/findings/bulk/confirm", {"run": second, "disposition": "confirmed"}),
        ("/findings/bulk", {"run": second, "disposition": "confirmed", "count": "1"}),
        ("/sign-in", {"name": "ann", "password": "x"}),
        ("/sign-out", {}),
        ("/anything", {}),
    ]:
        answer = client.post(path, data=form)
        assert answer.status_code == 403 and REFUSED in answer.text, path
    assert client.put("/findings").status_code == 403
    assert not _rows(store_url, sa.select(dispositions))
    app.state.review.reader.dispose()
    app.state.review.store.close()


# --- the commands ---------------------------------------------------------------------------


def test_add_reviewer_asks_twice_or_reads_stdin(tmp_path, store_url):
    path = tmp_path / "team.toml"
    asked = _cli("review", "add-reviewer", "Cara Diaz", "--reviewers", str(path),
                 input="cara's secret\ncara's secret\n")
    assert asked.exit_code == 0, asked.output
    assert "added reviewer Cara Diaz" in asked.output and "cara's secret" not in path.read_text()
    piped = _cli("review", "add-reviewer", "dan", "--reviewers", str(path), "--password-stdin",
                 input="dan's secret\n")
    assert piped.exit_code == 0 and "added reviewer dan" in piped.output
    changed = _cli("review", "add-reviewer", "dan", "--reviewers", str(path),
                   "--password-stdin", input="dan's new secret\n")
    assert "changed the password of dan" in changed.output
    assert path.stat().st_mode & 0o077 == 0
    assert auth.read_hashes(path).keys() == {"Cara Diaz", "dan"}
    reviewers = auth.Reviewers(path)
    assert reviewers.verify("Cara Diaz", "cara's secret")
    assert reviewers.verify("dan", "dan's new secret") and not reviewers.verify("dan",
                                                                                "dan's secret")
    for args, given, says in [
        (["dan"], "short\n", "at least 8 characters"),
        (["  dan"], "long enough\n", "no spaces around it"),
        (["d\tan"], "long enough\n", "no control characters"),
    ]:
        refused = CliRunner().invoke(main, ["review", "add-reviewer", *args, "--reviewers",
                                            str(path), "--password-stdin"], input=given)
        assert refused.exit_code == 2 and says in refused.output, refused.output
        assert "Traceback" not in refused.output
    mismatch = CliRunner().invoke(main, ["review", "add-reviewer", "eve", "--reviewers",
                                         str(path)], input="first one!\nsecond one\n" * 3)
    assert mismatch.exit_code != 0 and "eve" not in auth.read_hashes(path)
    # the new reviewer signs in
    app = create_app(store_url, path)
    client = TestClient(app)
    signed = client.post("/sign-in", data={"name": "Cara Diaz", "password": "cara's secret",
                                           "csrf_token": _token(client.get("/sign-in").text)},
                         follow_redirects=False)
    assert signed.status_code == 303
    app.state.review.reader.dispose()
    app.state.review.store.close()


def test_export_writes_dispositions_as_spreadsheet_safe_csv(store_url, tmp_path):
    _first, second = _runs(store_url)
    chosen = _findings(store_url, second)[:3]
    store = connect(store_url)
    with store.begin() as conn:
        dsp.record(conn, [chosen[0]["finding_id"]], "confirmed", "=HYPERLINK(\"x\")", "ann",
                   run_id=second)
        dsp.record(conn, [f["finding_id"] for f in chosen], "explained", "@note", "bob")
    store.close()
    out = tmp_path / "dispositions.csv"
    written = _cli("review", "export", "--store", store_url, "--out", str(out))
    assert written.exit_code == 0, written.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 4
    assert rows[0]["note"] == "'=HYPERLINK(\"x\")" and rows[1]["note"] == "'@note"
    assert [r["reviewer"] for r in rows] == ["ann", "bob", "bob", "bob"]
    assert rows[0]["rule_id"] == chosen[0]["rule_id"] and rows[0]["state"] == "confirmed"
    assert all(r["state"] in STATES for r in rows)
    printed = _cli("review", "export", "--store", store_url)
    assert printed.output == out.read_text()
    for url, says in [(f"sqlite:///{tmp_path / 'none.db'}", "no store at"),
                      ("nonsense", "is not a database URL")]:
        failed = CliRunner().invoke(main, ["review", "export", "--store", url])
        assert failed.exit_code == 2 and says in failed.output
        assert "Traceback" not in failed.output


def test_review_commands_have_help():
    for args in (["review"], ["review", "add-reviewer"], ["review", "export"]):
        shown = _cli(*args, "--help")
        assert shown.exit_code == 0 and "Usage" in shown.output


def test_review_refuses_to_start_with_a_sentence(store_url, reviewers, tmp_path):
    for args, says in [
        ([], "--store URL names the findings store"),
        (["--store", f"sqlite:///{tmp_path / 'none.db'}"], "no store at"),
        (["--store", store_url, "--reviewers", str(tmp_path / "empty.toml")],
         "no reviewers yet"),
    ]:
        failed = CliRunner().invoke(main, ["review", *args])
        assert failed.exit_code == 2 and says in failed.output, failed.output
        assert "Traceback" not in failed.output
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = CliRunner().invoke(main, ["review", "--store", store_url, "--reviewers",
                                           str(reviewers), "--port", str(port)])
    assert failed.exit_code == 2 and "cannot listen there" in failed.output


def test_review_serves_over_http_on_loopback(store_url, reviewers, template):
    """The real server (uvicorn), on a free port of 127.0.0.1: it answers, then stops."""
    if template.backend != "sqlite":
        pytest.skip("the server is the same on either store; started once")
    import httpx

    server = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "review", "--store", store_url, "--reviewers",
         str(reviewers), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = server.stderr.readline()
        address = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert address, line
        answer = httpx.get(address.group(1) + "sign-in", timeout=30)
        assert answer.status_code == 200 and 'id="sign-in"' in answer.text
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- going through findings: next and previous, search, order, export --------------------


def _ids(html: str) -> list[str]:
    return re.findall(r'<tr id="finding-([0-9a-f]{32})"', html)


def _unescape(href: str) -> str:
    return href.replace("&amp;", "&")


def _place(html: str) -> tuple[str, str]:
    found = re.search(r'id="finding-place" data-position="(\d*)" data-total="(\d+)"', html)
    return found.group(1), found.group(2)


def _nav(html: str, which: str) -> str | None:
    found = re.search(rf'id="finding-{which}" rel="{which}" href="([^"]+)"', html)
    return _unescape(found.group(1)) if found else None


def test_a_finding_page_walks_the_selection_it_was_opened_from(app, store_url):
    client, token = _signed_in(app)
    _first, second = _runs(store_url)
    query = {"run": second, "severity": "error", "sort": "amount", "per_page": 4}
    listed = client.get("/findings", params={**query, "per_page": 500}).text
    order = _ids(listed)
    assert len(order) > 5
    # the list's links carry the selection (without its run, in the path, and its page)
    page = client.get("/findings", params=query).text
    first_link = _unescape(re.search(r'class="finding-link" href="([^"]+)"', page).group(1))
    assert first_link == f"{_finding_path(second, order[0])}?severity=error&sort=amount&per_page=4"
    # from the first to the last by "next", each once, in the list's order; back by "previous"
    walked, href = [], first_link
    while href:
        html = client.get(href).text
        walked.append(re.search(r'id="fact-finding-id"><code>([0-9a-f]{32})<', html).group(1))
        assert _place(html) == (str(len(walked)), str(len(order)))
        assert f"Finding <strong>{len(walked)}</strong> of {len(order)}" in html
        back = re.search(r'id="back-to-findings" href="([^"]+)"', html).group(1)
        page_of = (len(walked) - 1) // 4 + 1
        assert _unescape(back) == (f"/findings?run={second}&severity=error&sort=amount"
                                   + (f"&page={page_of}" if page_of > 1 else "")
                                   + f"&per_page=4#finding-{walked[-1]}")
        if len(walked) == 1:
            assert _nav(html, "prev") is None and 'id="finding-prev-none"' in html
        else:
            assert _nav(html, "prev") == f"{_finding_path(second, walked[-2])}?{href.split('?')[1]}"
        href = _nav(html, "next")
    assert walked == order
    assert 'id="finding-next-none"' in html
    # without a selection: every finding of the run, in the findings files' order
    plain = client.get(_finding_path(second, order[0])).text
    assert _place(plain)[1] == str(len(_findings(store_url, second)))

    # a disposition set under a filter by disposition: the finding leaves the selection,
    # its neighbours stay; the page it leads back to keeps the selection
    open_only = "state=open&sort=amount"
    at = f"{_finding_path(second, order[1])}?{open_only}"
    before = client.get(at).text
    neighbours = _nav(before, "prev"), _nav(before, "next")
    total = int(_place(before)[1])
    set_htmx = client.post(_finding_path(second, order[1]) + f"/disposition?{open_only}",
                           data={"disposition": "confirmed", "csrf_token": token},
                           headers={"HX-Request": "true"})
    assert set_htmx.status_code == 200
    assert 'id="finding-nav" class="finding-nav" aria-label="Findings of this selection" ' \
           'hx-swap-oob="true"' in set_htmx.text
    assert _place(set_htmx.text) == ("", str(total - 1))
    assert "Not in this selection any more" in set_htmx.text
    assert (_nav(set_htmx.text, "prev"), _nav(set_htmx.text, "next")) == neighbours
    assert f'action="{_finding_path(second, order[1])}/disposition?state=open&amp;sort=amount"' \
        in set_htmx.text
    whole = client.post(_finding_path(second, order[2]) + f"/disposition?{open_only}",
                        data={"disposition": "explained", "csrf_token": token},
                        follow_redirects=False)
    assert whole.status_code == 303
    assert whole.headers["location"] == f"{_finding_path(second, order[2])}?{open_only}"
    assert client.get(_finding_path(second, order[0]), params={"sort": "sideways"}
                      ).status_code == 400


def test_findings_searched_in_their_messages_and_rule_ids(app, store_url):
    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    stored = _findings(store_url, second)
    word = next(w for f in stored for w in (f["message"] or "").split() if len(w) > 5
                and w.isalpha())
    shouted = word.upper()  # any case
    page = client.get("/findings", params={"run": second, "q": shouted, "per_page": 500}).text
    expected = {f["finding_id"] for f in stored
                if word.lower() in (f["message"] or "").lower()
                or word.lower() in f["rule_id"].lower()}
    assert set(_ids(page)) == expected and expected
    assert f'value="{shouted}"' in page and "in this selection" in page
    rule = stored[0]["rule_id"]
    by_rule = client.get("/findings", params={"run": second, "q": rule.lower(),
                                              "per_page": 500}).text
    assert set(_ids(by_rule)) >= {f["finding_id"] for f in stored if f["rule_id"] == rule}
    # LIKE's wildcards are themselves: a search for them finds only what holds them
    for wildcard in ("%", "_", "\\", "$%"):
        found = client.get("/findings", params={"run": second, "q": wildcard,
                                                 "per_page": 500}).text
        assert set(_ids(found)) == {f["finding_id"] for f in stored
                                    if wildcard in (f["message"] or "")
                                    or wildcard in f["rule_id"]}, wildcard
    # the search narrows a disposition set on the whole selection too
    token = _token(page)
    confirm = client.post("/findings/bulk/confirm", data={
        "run": second, "q": shouted, "disposition": "explained", "csrf_token": token})
    assert f'<strong id="bulk-count">{len(expected)}</strong>' in confirm.text
    assert f'name="q" value="{shouted}"' in confirm.text
    too_long = client.get("/findings", params={"run": second, "q": "x" * 201})
    assert too_long.status_code == 400 and "at most 200 characters" in too_long.text


def test_findings_sorted_by_amount_and_by_table_then_round(app, store_url):
    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    stored = {f["finding_id"]: f for f in _findings(store_url, second)}

    def listed(sort: str) -> list[dict]:
        page = client.get("/findings", params={"run": second, "sort": sort, "per_page": 500})
        assert page.status_code == 200
        return [stored[i] for i in _ids(page.text)]

    def file_key(f):
        return tuple((f[c] is None, f[c] if f[c] is not None else 0)
                     for c in ("table_id", "shoe_id", "round", "seq")) + (f["rule_id"],
                                                                         f["finding_id"])

    largest = listed("amount")
    sizes = [abs(f["amount"]) for f in largest if f["amount"] is not None]
    assert sizes == sorted(sizes, reverse=True) and sizes
    assert all(f["amount"] is None for f in largest[len(sizes):])  # without one: last
    smallest = listed("amount_asc")
    sizes = [abs(f["amount"]) for f in smallest if f["amount"] is not None]
    assert sizes == sorted(sizes)
    assert all(f["amount"] is None for f in smallest[len(sizes):])
    by_table = listed("table")
    keys = [(f["table_id"], f["round"] if f["round"] is not None else 1 << 62,
             f["seq"] if f["seq"] is not None else 1 << 62) for f in by_table]
    assert keys == sorted(keys)
    assert [f["finding_id"] for f in listed("file")] == [
        f["finding_id"] for f in sorted(stored.values(), key=file_key)]
    assert listed("file") == listed("")
    # the order chosen is kept by the form and by the pages' links
    page = client.get("/findings", params={"run": second, "sort": "amount", "per_page": 4}).text
    assert '<option value="amount" selected>' in page
    assert f'href="/findings?run={second}&amp;sort=amount&amp;page=2&amp;per_page=4"' in page
    bad = client.get("/findings", params={"run": second, "sort": "random"})
    assert bad.status_code == 400 and "sort is one of file, table, amount, amount_asc" in bad.text


def test_the_rule_filter_names_each_rule_with_its_title(app, store_url):
    from auditor.rules.catalog import REGISTRY

    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    page = client.get("/findings", params={"run": second}).text
    rules = {f["rule_id"] for f in _findings(store_url, second)}
    for rule_id in rules:
        count = sum(f["rule_id"] == rule_id for f in _findings(store_url, second))
        title = REGISTRY.get(rule_id).title.replace("'", "&#39;")
        assert f'<option value="{rule_id}">{rule_id} — {title} ({count})</option>' in page


def test_the_selection_exported_as_spreadsheet_safe_csv(app, store_url):
    client, token = _signed_in(app)
    _first, second = _runs(store_url)
    chosen = _findings(store_url, second, table_id=SCRIPT)
    notes = ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "fine\nsecond line"]
    for f, note in zip(chosen, notes, strict=False):
        client.post(_finding_path(second, f["finding_id"]) + "/disposition",
                    data={"disposition": "explained", "note": note, "csrf_token": token},
                    follow_redirects=False)
    query = {"run": second, "table": SCRIPT, "sort": "amount"}
    page = client.get("/findings", params=query).text
    assert f'id="export-csv" href="/findings.csv?{urlencode(query).replace("&", "&amp;")}"' \
        in page
    answer = client.get("/findings.csv", params=query)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert answer.headers["content-disposition"] == (
        f'attachment; filename="findings-{second}.csv"')
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    listed = _ids(client.get("/findings", params={**query, "per_page": 500}).text)
    assert [r["finding_id"] for r in rows] == listed and len(rows) == len(chosen)
    by_id = {r["finding_id"]: r for r in rows}
    for f, note in zip(chosen, notes, strict=False):
        row = by_id[f["finding_id"]]
        assert row["disposition"] == "explained" and row["reviewer"] == "ann"
        assert row["note"] == (note if note[0] not in "=+-@" else "'" + note)
        assert row["decided_at"].endswith("Z")
    for row in rows:
        assert row["table_id"] == SCRIPT and row["run_id"] == second
        assert row["presence"] in ("new", "still present") and row["rule_title"]
        for cell in row.values():
            assert not cell.startswith(("=", "+", "@", "\t", "\r")) and (
                not cell.startswith("-") or re.fullmatch(r"-[0-9.]+", cell)), cell
    # every finding of the run without filters; a run that is not there
    everything = client.get("/findings.csv", params={"run": second})
    assert len(list(csv.DictReader(io.StringIO(everything.text)))) == len(
        _findings(store_url, second))
    assert client.get("/findings.csv", params={"run": "no-such-run"}).status_code == 404
    assert client.get("/findings.csv", params={"run": second, "sort": "x"}).status_code == 400
    assert TestClient(app).get("/findings.csv", follow_redirects=False).status_code == 303


def test_the_runs_page_shows_the_period_each_run_audited_as_history_does(app, store_url):
    import json

    from auditor.store.show import audited

    client, _ = _signed_in(app)
    page = client.get("/").text
    shown = _cli("history", "--store", store_url, "--format", "json")
    listed = json.loads(shown.output)["runs"]
    first, second = listed
    assert first["window"] != second["window"]  # one run asked --until, one every round
    for run in listed:
        words = audited(run)
        assert words != "every round of its logs"
        row = re.search(rf'<tr id="run-{run["run_id"]}".*?</tr>', page, re.S).group(0)
        cell = re.search(r'<td class="audited">(.*?)</td>', row).group(1)
        assert re.sub(r"<[^>]+>", "", cell) == words
    assert "every round of its logs" not in page


# --- small things: notes, rule text, HEAD, unknown pages, the banner ---------------------


def test_a_note_over_the_limit_is_refused_at_its_box(app, store_url):
    from auditor.review.pages import MAX_NOTE

    client, token = _signed_in(app)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    path = _finding_path(second, finding_id)
    page = client.get(path).text
    assert f'maxlength="{MAX_NOTE}"' in page
    assert page.count(f'maxlength="{MAX_NOTE}"') == 1
    assert f'id="bulk-note" name="note" rows="2" cols="50" maxlength="{MAX_NOTE}"' in \
        client.get("/findings", params={"run": second}).text
    long_note = "<b>x</b>" + "y" * MAX_NOTE
    form = {"disposition": "corrected", "note": long_note, "csrf_token": token}
    whole = client.post(path + "/disposition?sort=amount", data=form)
    assert whole.status_code == 400
    assert 'id="disposition-note-error"' in whole.text and "at most 10,000" in whole.text
    assert f">&lt;b&gt;x&lt;/b&gt;{'y' * MAX_NOTE}</textarea>" in whole.text  # kept, escaped
    assert '<option value="corrected" data-key="5" selected>' in whole.text
    assert 'aria-invalid="true"' in whole.text and 'id="finding-nav"' in whole.text
    part = client.post(path + "/disposition", data=form, headers={"HX-Request": "true"})
    assert part.status_code == 200 and part.text.lstrip().startswith('<section id="disposition"')
    assert 'id="disposition-note-error"' in part.text and "<html" not in part.text
    assert _history(store_url, finding_id) == []
    # at the limit: set
    exact = client.post(path + "/disposition", data={**form, "note": "z" * MAX_NOTE},
                        headers={"HX-Request": "true"})
    assert 'id="disposition-done"' in exact.text
    assert len(_history(store_url, finding_id)) == 1
    # the same on a whole selection: its form again, the note kept, nothing set
    bulk = {"run": second, "disposition": "explained", "note": long_note, "csrf_token": token}
    whole = client.post("/findings/bulk/confirm", data=bulk)
    assert whole.status_code == 400 and 'id="bulk-note-error"' in whole.text
    assert 'id="bulk-form"' in whole.text and 'id="bulk-confirm-form"' not in whole.text
    part = client.post("/findings/bulk/confirm", data=bulk, headers={"HX-Request": "true"})
    assert part.status_code == 200 and 'id="bulk-note-error"' in part.text
    assert f">&lt;b&gt;x&lt;/b&gt;{'y' * MAX_NOTE}</textarea>" in part.text
    assert len(_rows(store_url, sa.select(dispositions))) == 1


def test_notes_keep_their_line_breaks(app, store_url):
    client, token = _signed_in(app)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    path = _finding_path(second, finding_id)
    note = "Dealer retrained.\r\n<i>Second</i> line."
    client.post(path + "/disposition", data={"disposition": "confirmed", "note": note,
                                             "csrf_token": token})
    page = client.get(path).text
    kept = "Dealer retrained.\n&lt;i&gt;Second&lt;/i&gt; line."
    assert f'<td class="note note-text">{kept}</td>' in page
    assert f'class="note-text">{kept}</q>' in page
    css = client.get("/static/review.css").text
    assert ".note-text { white-space: pre-wrap; }" in css


def test_rule_text_shows_code_as_code(app, store_url):
    from markupsafe import Markup

    from auditor.review.pages import code_spans
    from auditor.rules.catalog import REGISTRY

    assert code_spans("a `card_exposed` row, `<b>x</b>` & `a`b") == Markup(
        "a <code>card_exposed</code> row, <code>&lt;b&gt;x&lt;/b&gt;</code> &amp; "
        "<code>a</code>b")
    assert code_spans("no code <here>") == "no code &lt;here&gt;"
    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    finding = next(f for f in _findings(store_url, second)
                   if "`" in REGISTRY.get(f["rule_id"]).what)
    page = client.get(_finding_path(second, finding["finding_id"])).text
    what = re.search(r'<p id="rule-what">(.*?)</p>', page, re.S).group(1)
    assert "<code>" in what and "`" not in what
    assert 'id="rule-fails"' in page and 'id="rule-passes"' in page


def test_every_page_answers_head_as_it_answers_get(app, store_url):
    from fastapi.routing import APIRoute

    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    values = {"run_id": second, "finding_id": finding_id}
    paths = ["/static/review.css", "/static/review.js", "/static/htmx-2.0.11.min.js",
             "/no-such-page", f"/findings.csv?run={second}"]

    def routes(listed):  # the app's routes, and those of the routers it includes
        for route in listed:
            included = getattr(route, "original_router", None)
            yield from routes(included.routes) if included is not None else [route]

    for route in routes(app.routes):
        if isinstance(route, APIRoute) and "GET" in route.methods:
            paths.append(route.path.format(**values))
    assert {"/", "/runs", "/findings", "/findings.csv", "/sign-in",
            _finding_path(second, finding_id)} <= set(paths)
    for path in paths:
        got = client.get(path, follow_redirects=False)
        head = client.head(path, follow_redirects=False)
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        assert head.headers.get("content-type") == got.headers.get("content-type"), path
        assert "content-security-policy" in head.headers
        if "content-length" in got.headers:
            assert head.headers["content-length"] == got.headers["content-length"], path
    assert client.head("/").status_code == 200
    anonymous = TestClient(app)
    assert anonymous.head("/sign-in").status_code == 200
    assert anonymous.head("/findings", follow_redirects=False).status_code == 303


def test_an_unknown_address_gets_the_apps_own_page(app):
    signed, _ = _signed_in(app)
    for client in (TestClient(app), signed):
        for path in ("/no-such-page", "/static/nothing.js", "/runs/x/y/z"):
            answer = client.get(path)
            assert answer.status_code == 404, path
            assert answer.headers["content-type"].startswith("text/html")
            assert '<p id="error-message" class="error" role="alert">There is no such page.</p>' \
                in answer.text, path
            assert 'id="top"' in answer.text and 'href="/static/review.css"' in answer.text
            assert "Not Found" not in answer.text


def test_the_shortcuts_are_written_on_the_pages(app, store_url):
    from auditor.store import state_label

    client, _ = _signed_in(app)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    for path in ("/findings", _finding_path(second, finding_id)):
        page = client.get(path).text
        assert '<details id="shortcuts" class="shortcuts">' in page
        assert '<script src="/static/review.js" defer></script>' in page
        for key in ("j", "k", "o", "u", "?", "Esc", "/"):
            assert f"<kbd>{key}</kbd>" in page, key
        for n, state in enumerate(STATES, start=1):
            assert f"<kbd>{n}</kbd></th><td>on a finding: sets “{state_label(state)}”" in page
    page = client.get(_finding_path(second, finding_id)).text
    for n, state in enumerate(STATES, start=1):
        assert f'<option value="{state}" data-key="{n}"' in page
    script = client.get("/static/review.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    # the policy still allows no inline script: the page has none
    assert "<script>" not in page and " onclick=" not in page


def test_the_banner_names_an_address_that_opens():
    from auditor.review.app import banner

    local = banner("sqlite:///a.db", " (read-only)", "127.0.0.1", 8123)
    assert local == ["auditor review: serving sqlite:///a.db (read-only) at "
                     "http://127.0.0.1:8123/ (Ctrl-C stops)"]
    for every, loop in (("0.0.0.0", "http://127.0.0.1:8123/"), ("::", "http://[::1]:8123/")):
        said = banner("sqlite:///a.db", "", every, 8123)
        assert said[0] == f"auditor review: serving sqlite:///a.db at {loop} (Ctrl-C stops)"
        assert said[1].startswith("auditor review: listening on every address of this "
                                  "machine; from other machines, open http://")
        assert every not in " ".join(said).replace("::1", "")
        assert "0.0.0.0" not in " ".join(said)
    assert banner("s", "", "192.0.2.7", 80)[0].endswith("at http://192.0.2.7:80/ (Ctrl-C stops)")
    assert banner("s", "", "2001:db8::7", 80)[0].endswith("http://[2001:db8::7]:80/ (Ctrl-C stops)")


def test_review_on_every_address_says_where_to_open_it(store_url, reviewers, template):
    """`--host 0.0.0.0`: the banner names this machine's loopback, which opens, first."""
    if template.backend != "sqlite":
        pytest.skip("the server is the same on either store; started once")
    import httpx

    server = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "review", "--store", store_url, "--reviewers",
         str(reviewers), "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        first, second = server.stderr.readline(), server.stderr.readline()
        address = re.search(r"at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)", first)
        assert address and "0.0.0.0" not in first + second, first
        assert "listening on every address of this machine" in second
        answer = httpx.get(address.group(1) + "sign-in", timeout=30)
        assert answer.status_code == 200 and 'id="sign-in"' in answer.text
    finally:
        server.terminate()
        server.wait(timeout=30)
