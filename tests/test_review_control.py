"""`auditor review`'s control (issue 38, items 5 to 7): four eyes (proposals pending until
a second reviewer, a supervisor, approves them), roles (only supervisors approve and sign
off), runs signed off and the sign-off withdrawn when a finding changes, the trail of
each, and the pending findings and the sign-off in the findings list, `auditor history`,
dispositions.json and the report re-rendered with --store; a version-3 store upgraded.
Over HTTP (the app in this process), on SQLite and on a throwaway PostgreSQL server
(postgres.py), with the stores of test_review_http (a faulty day audited twice).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import uuid
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
import test_review_http
from click.testing import CliRunner
from postgres import postgres_server  # noqa: F401 - the session's server, for the stores
from test_review_http import (
    SCRIPT,
    TestClient,
    _audit,
    _cli,
    _finding_path,
    _findings,
    _rows,
    _runs,
    _token,
)

from auditor import report
from auditor.cli import main
from auditor.review import auth, trail
from auditor.review.app import create_app
from auditor.store import StoreError, carried, record, schema, signoffs
from auditor.store import dispositions as dsp
from auditor.store.engine import connect
from auditor.store.schema import dispositions

# the stores of test_review_http (made again for this module)
day, template = test_review_http.day, test_review_http.template
store_url = test_review_http.store_url

TEAM = {"ann": ("ann's password", "reviewer"), "bob": ("bob's password", "reviewer"),
        "sam": ("sam's password", "supervisor"), "sue": ("sue's password", "supervisor")}


@pytest.fixture
def team(tmp_path) -> Path:
    """Two reviewers (ann, bob) and two supervisors (sam, sue)."""
    path = tmp_path / "reviewers.toml"
    for name, (password, role) in TEAM.items():
        auth.add_reviewer(path, name, password, role)
    return path


@pytest.fixture
def apps():
    made = []

    def make(*args, **kwargs):
        app = create_app(*args, **kwargs)
        made.append(app)
        return app

    yield make
    for app in made:
        app.state.review.close()


def _as(app, name: str) -> tuple[TestClient, str]:
    """A client signed in as NAME (of TEAM), and its form token."""
    client = TestClient(app)
    token = _token(client.get("/sign-in").text)
    signed = client.post("/sign-in", data={"name": name, "password": TEAM[name][0],
                                           "csrf_token": token}, follow_redirects=False)
    assert signed.status_code == 303, signed.text
    return client, _token(client.get("/").text)


def _set(client, token: str, run_id: str, finding_id: str, state: str, note: str = ""):
    return client.post(_finding_path(run_id, finding_id) + "/disposition",
                       data={"disposition": state, "note": note, "csrf_token": token},
                       follow_redirects=False)


def _answer(client, token: str, run_id: str, finding_id: str, proposal: int, verb: str,
            note: str = "", **kw):
    return client.post(_finding_path(run_id, finding_id) + f"/{verb}",
                       data={"proposal": str(proposal), "note": note, "csrf_token": token},
                       follow_redirects=False, **kw)


def _latest(url: str, finding_id: str) -> dict:
    return _read(url, dsp.history, finding_id)[-1]


def _read(url: str, how, *args):
    store = connect(url)
    try:
        with store.begin() as conn:
            return how(conn, *args)
    finally:
        store.close()


def _events(url: str, *kinds: str) -> list[dict]:
    return _read(url, trail.read, trail.Filter(kinds=kinds))


def _out_of(url: str, run_id: str, tmp_path: Path) -> Path:
    """A copy of the run's output folder (the store names it), for this test alone."""
    [run] = _rows(url, sa.select(schema.runs).where(schema.runs.c.run_id == run_id))
    copy = tmp_path / f"out-{run_id}"
    shutil.copytree(run["out_dir"], copy)
    (copy / carried.FILE).unlink(missing_ok=True)
    return copy


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _settle(client, token: str, run_id: str, state: str = "confirmed") -> int:
    """Set STATE on every open finding of the run (a selection, confirmed); how many."""
    form = {"run": run_id, "state": "open", "disposition": state, "note": "",
            "csrf_token": token}
    confirm = client.post("/findings/bulk/confirm", data=form)
    total = int(re.search(r'id="bulk-count">(\d+)<', confirm.text).group(1))
    done = client.post("/findings/bulk", data={**form, "count": total}, follow_redirects=False)
    assert done.status_code == 303, done.text
    return total


# --- four eyes ----------------------------------------------------------------------------


def test_with_four_eyes_a_proposal_is_pending_everywhere(apps, store_url, team, tmp_path):
    app = apps(store_url, team, four_eyes=True)
    first, second = _runs(store_url)
    earlier = {f["finding_id"] for f in _findings(store_url, first)}
    finding = next(f for f in _findings(store_url, second) if f["finding_id"] in earlier)
    finding_id = finding["finding_id"]
    ann, token = _as(app, "ann")
    page = ann.get(_finding_path(second, finding_id)).text
    assert 'id="four-eyes-note"' in page
    done = _set(ann, token, second, finding_id, "not_an_error", "house practice")
    assert done.status_code == 303
    page = ann.get(done.headers["location"]).text
    assert "Proposed “not an error” by ann: pending until a supervisor approves it." in page
    assert "pending: not an error" in _text(page) and 'data-pending="true"' in page
    assert 'id="proposal-waits"' in page and 'id="approve-form"' not in page  # a reviewer
    stored = _latest(store_url, finding_id)
    assert (stored["state"], stored["status"], stored["reviewer"]) == (
        "not_an_error", "proposed", "ann")

    # the findings list: the row, the count and the filter
    listed = ann.get("/findings", params={"run": second}).text
    row = re.search(rf'<tr id="finding-{finding_id}".*?</tr>', listed, re.S).group(0)
    assert "pending: not an error" in _text(row) and "proposed by ann" in row
    assert re.search(r'id="count-pending">pending 1<', listed)
    assert '<option value="pending">pending</option>' in listed
    pending = ann.get("/findings", params={"run": second, "state": "pending"}).text
    assert re.findall(r'<tr id="finding-([0-9a-f]{32})"', pending) == [finding_id]
    csv_text = ann.get("/findings.csv", params={"run": second, "state": "pending"}).text
    [cells] = list(csv.DictReader(io.StringIO(csv_text)))
    assert (cells["disposition"], cells["proposed"], cells["reviewer"]) == (
        "pending", "not_an_error", "ann")
    # the runs page: a pending column, in both runs that found it
    runs_page = ann.get("/").text
    for run_id in (first, second):
        cells = re.search(rf'<tr id="run-{run_id}".*?</tr>', runs_page, re.S).group(0)
        assert re.search(r'class="num state-pending"><a [^>]*>1</a>', cells)

    # auditor history, as text and as JSON
    text = _cli("history", "--store", store_url).output
    assert re.search(r"run\s+open\s+pending\s+confirmed", text), text
    doc = json.loads(_cli("history", "--store", store_url, "--format", "json").output)
    assert [r["dispositions"]["pending"] for r in doc["runs"]] == [1, 1]
    assert [r["signoff"] for r in doc["runs"]] == [None, None]

    # dispositions.json and the report re-rendered with the store
    out = _out_of(store_url, second, tmp_path)
    record.carry_now(store_url, out)
    written = json.loads((out / carried.FILE).read_text())
    entry = written["dispositions"][finding_id]
    assert entry["pending"] is True and entry["proposed_by"] == "ann"
    assert entry["state"] == "not_an_error" and entry["approved_by"] is None
    assert written["counts"]["pending"] == 1 and written["signoff"] is None
    html = _text(report.html(out))
    assert re.search(rf"Disposition: pending: not an error , proposed by ann on \S+ \S+ UTC "
                     rf"\(set from run {second}\): house practice", html)
    assert " · 1 pending · " in html[: html.index("Contents")]

    # confirmed and corrected are decided at once, four eyes or not
    other = next(f["finding_id"] for f in _findings(store_url, second)
                 if f["finding_id"] != finding_id)
    _set(ann, token, second, other, "confirmed")
    assert _latest(store_url, other)["status"] == "decided"
    # a selection: proposals too, said so before and after
    form = {"run": second, "state": "open", "table": SCRIPT, "disposition": "explained",
            "note": "", "csrf_token": token}
    confirm = ann.post("/findings/bulk/confirm", data=form).text
    total = int(re.search(r'id="bulk-count">(\d+)<', confirm).group(1))
    assert "Propose <strong>explained</strong>" in confirm and "each stays pending" in confirm
    done = ann.post("/findings/bulk", data={**form, "count": total}, follow_redirects=False)
    assert f"Proposed “explained” on {total} finding" in ann.get(done.headers["location"]).text
    proposed = _rows(store_url, sa.select(dispositions).where(
        dispositions.c.state == "explained"))
    assert len(proposed) == total > 0 and {r["status"] for r in proposed} == {"proposed"}
    [bulk] = _events(store_url, "bulk")
    assert bulk["detail"]["proposed"] is True

    # without four eyes, the same is decided at once (as before)
    plain = apps(store_url, team)
    bob, bobs = _as(plain, "bob")
    assert 'id="four-eyes-note"' not in bob.get(_finding_path(second, other)).text
    _set(bob, bobs, second, other, "not_an_error")
    assert _latest(store_url, other)["status"] == "decided"


def test_only_a_supervisor_other_than_the_proposer_approves_or_rejects(
        apps, store_url, team, tmp_path):
    app = apps(store_url, team, four_eyes=True)
    _first, second = _runs(store_url)
    f1, f2, f3 = (f["finding_id"] for f in _findings(store_url, second)[:3])
    ann, annt = _as(app, "ann")
    bob, bobt = _as(app, "bob")
    sam, samt = _as(app, "sam")
    sue, suet = _as(app, "sue")
    _set(ann, annt, second, f1, "not_an_error", "a house practice")
    _set(sam, samt, second, f2, "explained", "table system fault")
    _set(ann, annt, second, f3, "explained")
    p1, p2, p3 = (_latest(store_url, f)["disposition_id"] for f in (f1, f2, f3))

    # reviewers may not answer (403), nor may the proposer, a supervisor (403, and why)
    for client, token in ((ann, annt), (bob, bobt)):
        for verb in ("approve", "reject"):
            assert _answer(client, token, second, f1, p1, verb).status_code == 403
    own = _answer(sam, samt, second, f2, p2, "approve")
    assert own.status_code == 403 and "another supervisor approves or rejects it" in own.text
    page = sam.get(_finding_path(second, f2)).text
    assert 'id="proposal-own"' in page and 'id="approve-form"' not in page
    assert _answer(sam, "", second, f1, p1, "approve").status_code == 403  # no form token
    assert all(_latest(store_url, f)["status"] == "proposed" for f in (f1, f2, f3))

    # a supervisor approves another's proposal: the proposer's state and note, approved
    page = sue.get(_finding_path(second, f2)).text
    assert 'id="approve-form"' in page and 'id="reject-form"' in page
    done = _answer(sue, suet, second, f2, p2, "approve", headers={"HX-Request": "true"})
    assert done.status_code == 200 and 'id="disposition-approver">sue<' in done.text
    assert "Approved “explained”, proposed by sam, as sue." in done.text
    approved = _latest(store_url, f2)
    assert (approved["state"], approved["status"], approved["reviewer"], approved["approved_by"],
            approved["proposal_id"], approved["note"]) == (
        "explained", "approved", "sam", "sue", p2, "table system fault")
    assert _answer(sam, samt, second, f1, p1, "approve").status_code == 303
    assert _latest(store_url, f1)["approved_by"] == "sam"
    # an answer to a proposal that is no longer the finding's latest: nothing (409)
    again = _answer(sue, suet, second, f1, p1, "approve")
    assert again.status_code == 409 and "no such proposal waiting" in again.text
    assert len(_read(store_url, dsp.history, f1)) == 2

    # rejected: open again, by the supervisor, with why
    assert _answer(sue, suet, second, f3, p3, "reject", "not explained by the note"
                   ).status_code == 303
    rejected = _latest(store_url, f3)
    assert (rejected["state"], rejected["status"], rejected["reviewer"],
            rejected["note"], rejected["proposal_id"]) == (
        "open", "rejected", "sue", "not explained by the note", p3)
    page = ann.get(_finding_path(second, f3)).text
    assert "a proposal rejected by" in _text(page)
    listed = ann.get("/findings", params={"run": second}).text
    row = re.search(rf'<tr id="finding-{f1}".*?</tr>', listed, re.S).group(0)
    assert "not an error" in row and "approved by sam" in row

    # the trail: each answer, with the proposal, its proposer and the supervisor
    answers = [(e["kind"], e["reviewer"], e["finding_id"], e["detail"]["proposed_by"],
                e["detail"]["proposal_id"]) for e in _events(store_url, "approve", "reject")]
    assert answers == [("approve", "sue", f2, "sam", p2), ("approve", "sam", f1, "ann", p1),
                       ("reject", "sue", f3, "ann", p3)]
    assert _events(store_url, "reject")[0]["detail"]["note"] == "not explained by the note"
    assert ann.get("/events", params={"kind": "approve"}).status_code == 200

    # a read-only server answers nothing
    reader = apps(store_url, tmp_path / "nobody.toml", read_only=True)
    refused = TestClient(reader).post(_finding_path(second, f1) + "/approve",
                                      data={"proposal": str(p1)})
    assert refused.status_code == 403


# --- sign-off -----------------------------------------------------------------------------


def test_a_run_is_signed_off_once_nothing_is_open_or_pending_and_a_change_withdraws_it(
        apps, store_url, team):
    app = apps(store_url, team, four_eyes=True)
    first, second = _runs(store_url)
    found = [f["finding_id"] for f in _findings(store_url, first)]
    again = {f["finding_id"] for f in _findings(store_url, second)} & set(found)
    assert again, "a finding of the first run is found again by the second"
    ann, annt = _as(app, "ann")
    bob, bobt = _as(app, "bob")
    sam, samt = _as(app, "sam")
    sue, suet = _as(app, "sue")
    path = f"/runs/{first}/sign-off"

    # open findings: refused, with how many
    page = sam.get(path).text
    assert 'id="signoff-waiting"' in page and 'id="signoff-form"' not in page
    refused = sam.post(path, data={"csrf_token": samt})
    assert refused.status_code == 409
    assert f"run {first} has {len(found)} open findings" in refused.text
    # every finding decided but one proposed: still refused (1 pending)
    proposed = found[0]
    _set(ann, annt, first, proposed, "not_an_error", "as the house allows")
    assert _settle(ann, annt, first) == len(found) - 1
    refused = sam.post(path, data={"csrf_token": samt})
    assert refused.status_code == 409 and "has 1 pending finding:" in refused.text
    # only supervisors sign off (a reviewer: 403; the form is not shown to one)
    assert bob.post(path, data={"csrf_token": bobt}).status_code == 403
    _answer(sue, suet, first, proposed, _latest(store_url, proposed)["disposition_id"],
            "approve")
    assert 'id="signoff-supervisors"' in bob.get(path).text
    assert 'id="signoff-form"' in sam.get(path).text
    runs_page = sam.get("/").text
    assert re.search(rf'id="signoff-{first}" data-signed="false">\s*<a [^>]*>Sign off…</a>',
                     runs_page)
    done = sam.post(path, data={"note": "reviewed with the pit boss", "csrf_token": samt},
                    follow_redirects=False)
    assert done.status_code == 303
    page = sam.get(done.headers["location"]).text
    counts = {"confirmed": len(found) - 1, "not_an_error": 1}
    assert f"Run {first} signed off by sam: {len(found) - 1} confirmed, 1 not an error." in page
    assert 'id="signoff-by">sam<' in page and 'id="signoff-form"' not in page
    [signed] = _read(store_url, signoffs.of_run, first)
    assert signed["signed_by"] == "sam" and signed["standing"]
    assert {k: v for k, v in signed["counts"].items() if v} == counts
    assert signed["note"] == "reviewed with the pit boss"
    [event] = _events(store_url, "signoff")
    assert (event["reviewer"], event["run_id"]) == ("sam", first)
    assert {k: v for k, v in event["detail"]["counts"].items() if v} == counts
    assert sue.post(path, data={"csrf_token": suet}).status_code == 409  # signed off already
    # the runs page and auditor history show it
    runs_page = ann.get("/").text
    cell = re.search(rf'id="signoff-{first}".*?</td>', runs_page, re.S).group(0)
    assert 'data-signed="true"' in cell and '<span class="signed-by">sam</span>' in cell
    text = _cli("history", "--store", store_url).output
    assert re.search(rf"{first}\s+0\s+{len(found) - 1}\s+0\s+1\s+0\s+sam \d{{4}}-", text), text
    doc = json.loads(_cli("history", "--store", store_url, "--format", "json").output)
    signoff = doc["runs"][0]["signoff"]
    assert signoff["by"] == "sam" and signoff["standing"] and signoff["at"].endswith("Z")
    assert doc["runs"][1]["signoff"] is None

    # reopening a finding withdraws it, and the trail says which finding
    reopened = found[1]
    done = _set(ann, annt, first, reopened, "open", "look again")
    page = ann.get(done.headers["location"]).text
    assert f"The sign-off of run {first} was withdrawn" in page
    [withdrawn] = _read(store_url, signoffs.of_run, first)
    assert not withdrawn["standing"] and withdrawn["withdrawn_by"] == "ann"
    assert withdrawn["withdrawn_why"] == "set open by ann"
    [event] = _events(store_url, "signoff_withdrawn")
    assert (event["run_id"], event["finding_id"], event["reviewer"]) == (first, reopened, "ann")
    assert event["detail"]["signoff_id"] == signed["signoff_id"]
    assert event["detail"]["disposition"] == "open"
    cell = re.search(rf'id="signoff-{first}".*?</td>', ann.get("/").text, re.S).group(0)
    assert 'data-signed="false"' in cell and "withdrawn" in cell
    assert "withdrawn" in _cli("history", "--store", store_url).output

    # signed off again; a change made from the later run that found the same finding
    # withdraws it as well (a disposition is the finding's, in every run)
    _set(ann, annt, first, reopened, "confirmed")
    assert sam.post(path, data={"csrf_token": samt}, follow_redirects=False).status_code == 303
    shared = sorted(again)[0]
    _set(bob, bobt, second, shared, "corrected", "refunded")
    listed = _read(store_url, signoffs.of_run, first)
    assert len(listed) == 2 and not listed[-1]["standing"]
    assert listed[-1]["withdrawn_why"] == "set corrected by bob"
    events = _events(store_url, "signoff_withdrawn")
    assert [(e["run_id"], e["finding_id"]) for e in events] == [
        (first, reopened), (first, shared)]


def test_the_report_re_rendered_with_the_store_shows_the_sign_off(
        apps, store_url, team, tmp_path):
    app = apps(store_url, team)  # sign-off is a supervisor's with or without four eyes
    first, _second = _runs(store_url)
    ann, annt = _as(app, "ann")
    sam, samt = _as(app, "sam")
    _settle(ann, annt, first, "confirmed")
    found = len(_findings(store_url, first))
    assert sam.post(f"/runs/{first}/sign-off", data={"csrf_token": samt},
                    follow_redirects=False).status_code == 303
    out = _out_of(store_url, first, tmp_path)
    if store_url.startswith("sqlite") and shutil.which("pdftotext"):
        # the PDF's cover (printed once: the PDF does not depend on the store's kind)
        result = _cli("report", str(out), "--store", store_url)
        assert result.exit_code == 0, result.output
        pdf = subprocess.run(["pdftotext", "-l", "2", str(out / "report.pdf"), "-"],
                             capture_output=True, text=True, check=True).stdout
        cover = re.sub(r"\s+", " ", pdf)
    else:
        record.carry_now(store_url, out)
        html = _text(report.html(out))
        cover = html[: html.index("Contents")]
    assert re.search(rf"Signed off in the findings store by sam, supervisor, on "
                     rf"\d{{4}}-\d\d-\d\d \d\d:\d\d UTC: {found} confirmed\.", cover), cover
    doc = json.loads((out / carried.FILE).read_text())
    assert doc["signoff"]["by"] == "sam" and doc["signoff"]["standing"] is True
    # withdrawn: the cover says so
    _set(ann, annt, first, _findings(store_url, first)[0]["finding_id"], "open")
    record.carry_now(store_url, out)
    html = _text(report.html(out))
    assert re.search(r"Not signed off: the sign-off by sam of \S+ \S+ UTC was withdrawn on "
                     r"\S+ \S+ UTC \(set open by ann\)", html)


# --- the reviewers file, the store ----------------------------------------------------------


def test_four_eyes_is_set_at_the_top_of_the_reviewers_file(apps, store_url, team):
    text = team.read_text()
    team.write_text(text.replace("\n[reviewers.", "\nfour_eyes = true\n\n[reviewers.", 1))
    assert auth.read_settings(team) == {"four_eyes": True}
    # the commands that write the file keep it
    auth.add_reviewer(team, "tom", "tom's password")
    auth.set_disabled(team, "bob", True)
    assert auth.read_settings(team) == {"four_eyes": True}
    assert "four_eyes = true" in team.read_text().split("[reviewers.")[0]
    app = apps(store_url, team)  # no --four-eyes: the file says it
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    ann, token = _as(app, "ann")
    _set(ann, token, second, finding_id, "explained")
    assert _latest(store_url, finding_id)["status"] == "proposed"
    # read again when the file changes: off
    team.write_text(team.read_text().replace("four_eyes = true", "four_eyes = false"))
    _set(ann, token, second, finding_id, "explained")
    assert _latest(store_url, finding_id)["status"] == "decided"
    team.write_text(team.read_text().replace("four_eyes = false", 'four_eyes = "yes"'))
    with pytest.raises(auth.ReviewersError, match="four_eyes is true or false"):
        auth.read_settings(team)
    # the command line takes --four-eyes (here refused for its store, after the option)
    started = CliRunner().invoke(main, ["review", "--store", "sqlite:////nonexistent/x.db",
                                        "--four-eyes", "--reviewers", str(team)])
    assert started.exit_code == 2 and "no store at" in started.output


def test_a_version_3_store_is_upgraded_to_four_eyes_and_sign_offs(
        apps, day, template, team, tmp_path, monkeypatch):
    if template.backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'v3.db'}"
    else:
        url = template.server.new_database()
    with monkeypatch.context() as patch:  # the auditor before four eyes
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
        patch.setattr(dsp, "latest", lambda _conn, _ids: [])  # (it read none)
        _audit(day, f"v3-{uuid.uuid4().hex[:6]}", url)
        store = connect(url)
        with store.begin() as conn:
            run_id = conn.execute(sa.select(schema.runs.c.run_id)).scalar()
            finding = conn.execute(sa.select(schema.findings.c.finding_id)).scalar()
            conn.execute(sa.text(
                "INSERT INTO dispositions (finding_id, state, note, reviewer, decided_at, "
                "run_id) VALUES (:f, 'not_an_error', 'before four eyes', 'ann', :at, :r)"),
                {"f": finding, "at": datetime(2026, 11, 2, 9, 0), "r": run_id})
            assert schema.version(conn) == 3
            assert not sa.inspect(conn).has_table("signoffs")
            assert "status" not in {c["name"] for c in
                                    sa.inspect(conn).get_columns("dispositions")}
        store.close()
    app = apps(url, team, four_eyes=True)  # upgrades it
    store = connect(url)
    with store.begin() as conn:
        assert schema.version(conn) == schema.latest() == 5
        columns = {c["name"] for c in sa.inspect(conn).get_columns("signoffs")}
        [kept] = dsp.history(conn, finding)
    store.close()
    assert columns == {"signoff_id", "run_id", "signed_by", "signed_at", "counts", "note",
                       "withdrawn_at", "withdrawn_by", "withdrawn_why"}
    # the row from before is a decision, and reads as one
    assert (kept["status"], kept["approved_by"], kept["proposal_id"]) == ("decided", None, None)
    ann, token = _as(app, "ann")
    assert "before four eyes" in ann.get(_finding_path(run_id, finding)).text
    _set(ann, token, run_id, finding, "explained")
    assert _latest(url, finding)["status"] == "proposed"
    # the store keeps the rules itself: a status that is none, two standing sign-offs
    store = connect(url)
    try:
        with pytest.raises(StoreError), store.begin() as conn:
            conn.execute(dispositions.insert().values(
                finding_id=finding, state="open", reviewer="x", decided_at=datetime.now(),
                status="maybe"))
        row = {"run_id": run_id, "signed_by": "sam", "signed_at": datetime.now(),
               "counts": "{}"}
        with pytest.raises(StoreError), store.begin() as conn:
            conn.execute(schema.signoffs.insert(), [row, row])
        with pytest.raises(StoreError, match="only explained and not_an_error"), \
                store.begin() as conn:
            dsp.record(conn, [finding], "confirmed", "", "ann", status="proposed")
    finally:
        store.close()
