"""`auditor review`'s security (issue 38): sessions held in the store and ended by signing
out, a changed password, a disabled reviewer or the idle timeout; Host names refused;
sign-ins held back after failures, with the argon2 checks bounded; the trail of events,
its page and its CSV export; roles and disabling in the reviewers file, written under a
lock; the store and dispositions.json readable by their owner only; a version-2 store
upgraded. Over HTTP (the app in this process) and, where it matters, the real server;
on SQLite and on a throwaway PostgreSQL server (postgres.py), with the stores of
test_review_http (a faulty day audited twice).
"""

from __future__ import annotations

import base64
import csv
import inspect
import io
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated

import pytest
import sqlalchemy as sa
import test_review_http
from click.testing import CliRunner
from fastapi import Depends
from postgres import postgres_server  # noqa: F401 - the session's server, for the stores
from test_review_http import (
    PASSWORDS,
    ROOT,
    SCRIPT,
    TestClient,
    _audit,
    _cli,
    _finding_path,
    _findings,
    _rows,
    _runs,
    _signed_in,
    _token,
)

from auditor.cli import main
from auditor.review import auth, hosts, sessions, trail
from auditor.review.app import create_app
from auditor.review.throttle import Held, Throttle
from auditor.store import StoreError, carried, schema
from auditor.store import dispositions as dsp
from auditor.store.engine import connect
from auditor.store.schema import dispositions, review_events, review_sessions

# the stores and reviewers of test_review_http (made again for this module)
day, template = test_review_http.day, test_review_http.template
store_url, reviewers = test_review_http.store_url, test_review_http.reviewers


@pytest.fixture
def apps():
    """Applications made by the test, closed after it."""
    made = []

    def make(*args, **kwargs):
        app = create_app(*args, **kwargs)
        made.append(app)
        return app

    yield make
    for app in made:
        app.state.review.close()


def _session_token(client: TestClient) -> str:
    """The session token the cookie carries (signed, base64 JSON: {"sid": ...})."""
    value = client.cookies[auth.SESSION_COOKIE]
    return json.loads(base64.b64decode(value.rsplit(".", 2)[0]))["sid"]


def _sessions(url: str) -> list[dict]:
    return _rows(url, sa.select(review_sessions).order_by(review_sessions.c.created_at))


def _events(url: str, *kinds: str) -> list[dict]:
    store = connect(url)
    try:
        with store.begin() as conn:
            return trail.read(conn, trail.Filter(kinds=kinds))
    finally:
        store.close()


def _signed_out(client: TestClient) -> bool:
    answer = client.get("/", follow_redirects=False)
    return answer.status_code == 303 and answer.headers["location"].startswith("/sign-in")


def _sign_in(client: TestClient, name: str, password: str):
    token = _token(client.get("/sign-in").text)
    return client.post("/sign-in", data={"name": name, "password": password,
                                         "csrf_token": token}, follow_redirects=False)


# --- sessions end --------------------------------------------------------------------------


def test_signing_out_ends_the_session_and_a_replayed_cookie_opens_nothing(
        apps, store_url, reviewers):
    app = apps(store_url, reviewers)
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    client, token = _signed_in(app, "ann")
    saved = client.cookies[auth.SESSION_COOKIE]
    session_token = _session_token(client)
    [row] = _sessions(store_url)
    # the store keeps the token's SHA-256, never the token
    assert row["token_hash"] == sessions.token_hash(session_token)
    assert session_token not in json.dumps([{k: str(v) for k, v in row.items()}])
    assert (row["reviewer"], row["ended_at"], row["client"]) == ("ann", None, "testclient")

    out = client.post("/sign-out", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and _signed_out(client)
    [row] = _sessions(store_url)
    assert row["ended_at"] is not None and row["ended_why"] == "signout"

    # the cookie saved before signing out: the sign-in page, and a POST writes nothing
    replayed = TestClient(app, cookies={auth.SESSION_COOKIE: saved})
    answer = replayed.get("/findings", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"].startswith("/sign-in")
    form = {"disposition": "confirmed", "note": "replayed", "csrf_token": token}
    for path, data in [
        (_finding_path(second, finding_id) + "/disposition", form),
        ("/findings/bulk/confirm", {**form, "run": second}),
        ("/findings/bulk", {**form, "run": second, "count": "1"}),
    ]:
        replayed = TestClient(app, cookies={auth.SESSION_COOKIE: saved})
        assert replayed.post(path, data=data).status_code == 403, path
        replayed = TestClient(app, cookies={auth.SESSION_COOKIE: saved})
        assert replayed.post(path, data=data, headers={"X-CSRF-Token": token,
                                                       "HX-Request": "true"}
                             ).status_code == 403, path
    assert _rows(store_url, sa.select(dispositions)) == []
    assert [(e["kind"], e["reviewer"], e["client"]) for e in _events(store_url)] == [
        ("signin", "ann", "testclient"), ("signout", "ann", "testclient")]
    assert _events(store_url)[0]["detail"]["session"] == row["token_hash"][:12]


def test_a_changed_password_or_a_disabled_reviewer_ends_their_sessions(
        apps, store_url, reviewers):
    app = apps(store_url, reviewers)
    ann, _ = _signed_in(app, "ann")
    bob, _ = _signed_in(app, "bob")
    # ann's password changed (the file only): the server ends her session on her next request
    changed = _cli("review", "add-reviewer", "ann", "--reviewers", str(reviewers),
                   "--password-stdin", input="ann's new password\n")
    assert changed.exit_code == 0 and "changed the password of ann" in changed.output
    assert _signed_out(ann) and not _signed_out(bob)
    ended = {r["reviewer"]: r["ended_why"] for r in _sessions(store_url)}
    assert ended == {"ann": "password_changed", "bob": None}
    assert _sign_in(TestClient(app), "ann", PASSWORDS["ann"]).status_code == 401
    ann = TestClient(app)
    assert _sign_in(ann, "ann", "ann's new password").status_code == 303
    assert not _signed_out(ann)

    # bob disabled, with the store: his sessions end at once, the trail says so
    disabled = _cli("review", "disable-reviewer", "bob", "--reviewers", str(reviewers),
                    "--store", store_url)
    assert disabled.exit_code == 0, disabled.output
    assert "disabled reviewer bob" in disabled.output and "1 session ended" in disabled.output
    assert auth.read_reviewers(reviewers)["bob"].disabled
    bob_rows = [r for r in _sessions(store_url) if r["reviewer"] == "bob"]
    assert [r["ended_why"] for r in bob_rows] == ["disabled"]
    assert _signed_out(bob)
    # his right password no longer signs him in, with the same sentence as a wrong one
    refused = _sign_in(TestClient(app), "bob", PASSWORDS["bob"])
    assert refused.status_code == 401 and auth.REFUSED in refused.text
    [event] = _events(store_url, "reviewer_disabled")
    assert event["reviewer"] == "bob" and event["detail"]["sessions_ended"] == 1
    assert event["client"] == "command line" and event["detail"]["by"]
    assert _events(store_url, "signin_failed")[-1]["detail"] == {"why": "disabled"}
    assert [e["detail"]["why"] for e in _events(store_url, "session_ended")] == [
        "password_changed", "disabled"]

    # disabled in the file without --store: the server refuses the session all the same
    again = _cli("review", "enable-reviewer", "bob", "--reviewers", str(reviewers))
    assert again.exit_code == 0 and "enabled reviewer bob" in again.output
    bob = TestClient(app)
    assert _sign_in(bob, "bob", PASSWORDS["bob"]).status_code == 303
    assert _cli("review", "disable-reviewer", "bob", "--reviewers",
                str(reviewers)).exit_code == 0
    assert _signed_out(bob)
    assert [r["ended_why"] for r in _sessions(store_url) if r["reviewer"] == "bob"] == [
        "disabled", "disabled"]
    # a name that is not a reviewer: a sentence, exit 2
    for command in ("disable-reviewer", "enable-reviewer"):
        missing = CliRunner().invoke(main, ["review", command, "nobody", "--reviewers",
                                            str(reviewers)])
        assert missing.exit_code == 2 and "there is no reviewer 'nobody'" in missing.output


def test_a_session_ends_after_the_idle_timeout(apps, store_url, reviewers):
    app = apps(store_url, reviewers, idle=timedelta(seconds=3))
    client, _ = _signed_in(app, "ann")
    # in use: each request a little apart keeps it live past the timeout
    for _ in range(2):
        time.sleep(1.7)
        assert client.get("/", follow_redirects=False).status_code == 200
    time.sleep(3.5)
    assert _signed_out(client)
    [row] = _sessions(store_url)
    assert row["ended_why"] == "idle"
    assert [e["detail"]["why"] for e in _events(store_url, "session_ended")] == ["idle"]

    # a session older than a shift ends whatever its use; and one nobody came back to is
    # ended at the next sign-in
    long = apps(store_url, reviewers)
    client, _ = _signed_in(long, "ann")
    idle_one, _ = _signed_in(long, "bob")
    old, left = (sessions.token_hash(_session_token(c)) for c in (client, idle_one))
    store = connect(store_url)
    with store.begin() as conn:
        of = review_sessions.c.token_hash
        conn.execute(review_sessions.update().where(of == old)
                     .values(created_at=sessions.now() - timedelta(hours=11)))
        conn.execute(review_sessions.update().where(of == left)
                     .values(last_seen=sessions.now() - timedelta(hours=1)))
    store.close()
    assert _signed_out(client)
    _signed_in(long, "ann")
    why = {r["token_hash"]: r["ended_why"] for r in _sessions(store_url)}
    assert (why[old], why[left]) == ("expired", "idle")
    assert _signed_out(idle_one)
    shown = _cli("review", "--help").output
    assert "--idle-timeout MINUTES" in shown and "[default: 30" in shown


def test_a_new_session_at_each_sign_in_and_the_old_form_token_refused(
        apps, store_url, reviewers):
    app = apps(store_url, reviewers)
    client = TestClient(app)
    before = _token(client.get("/sign-in").text)
    visitor = _session_token(client)  # a visitor's token: no session in the store
    assert _sessions(store_url) == []
    assert _sign_in(client, "ann", PASSWORDS["ann"]).status_code == 303
    assert _session_token(client) != visitor
    after = _token(client.get("/").text)
    assert after != before
    refused = client.post("/sign-out", data={"csrf_token": before})
    assert refused.status_code == 403 and not _signed_out(client)


# --- hosts --------------------------------------------------------------------------------


def test_a_host_header_of_another_name_is_refused(apps, store_url, reviewers, template,
                                                    tmp_path):
    if template.backend != "sqlite":
        pytest.skip("the host check is before the store: once is enough")
    served = apps(store_url, reviewers, allowed_hosts=["review.example",
                                                       "proxy.example:8443"])
    read_only = apps(store_url, tmp_path / "none.toml", read_only=True)
    for app in (served, read_only):
        for base in ("http://attacker.example", "http://attacker.example:8000",
                     "http://127.0.0.1.attacker.example", "http://proxy.example:8000"):
            client = TestClient(app, base_url=base)
            for path in ("/", "/findings", "/events", "/sign-in", "/static/review.css"):
                answer = client.get(path, follow_redirects=False)
                assert answer.status_code == 400, (base, path)
                assert 'id="bad-host"' in answer.text and "finding" not in answer.text
            assert client.post("/sign-in", data={"name": "ann"}).status_code == 400
        assert TestClient(app).get("/sign-in").status_code == 200
    for base in ("http://review.example", "http://review.example:9000",
                 "http://proxy.example:8443", "http://localhost", "http://[::1]"):
        assert TestClient(served, base_url=base).get("/sign-in").status_code == 200, base
    # once bound to a port, the loopback names on that port only
    served.state.review.hosts.bind(8000)
    for base, status in (("http://127.0.0.1:8000", 200), ("http://localhost:8000", 200),
                         ("http://[::1]:8000", 200), ("http://127.0.0.1:8001", 400),
                         ("http://127.0.0.1", 400), ("http://review.example", 200)):
        answer = TestClient(served, base_url=base).get("/sign-in")
        assert answer.status_code == status, base
    # no Host, two, or one that is not a host at all
    check = served.state.review.hosts
    for header in (None, "", "[::1", "127.0.0.1:80a", "a b", "127.0.0.1:99999", "x@y"):
        assert not check.allows(header), header
    assert hosts.split("[::1]:8000") == ("::1", 8000)
    assert hosts.split("LocalHost.:8000") == ("localhost", 8000)
    assert hosts.split("::1") == ("::1", None)
    wildcard = hosts.Hosts("0.0.0.0", port=8000)
    assert wildcard.allows("127.0.0.1:8000") and not wildcard.allows("0.0.0.0:8000")
    other = hosts.Hosts("10.1.2.3", port=8000)
    assert other.allows("10.1.2.3:8000") and not other.allows("127.0.0.1:8000")
    with pytest.raises(hosts.HostError):
        hosts.Hosts("127.0.0.1", ["bad host/"])


def test_the_real_server_refuses_a_rebound_name_in_read_only_too(store_url, reviewers,
                                                                 template):
    """The issue's `curl -H 'Host: attacker.example' http://127.0.0.1:PORT/findings` on a
    --read-only server: 400; the address itself and an --allowed-host name: served."""
    if template.backend != "sqlite":
        pytest.skip("the server is the same on either store; started once")
    import httpx

    for extra in (["--read-only"], ["--reviewers", str(reviewers)]):
        server = subprocess.Popen(
            [sys.executable, "-m", "auditor.cli", "review", "--store", store_url, "--port", "0",
             "--allowed-host", "review.example", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            line = server.stderr.readline()
            address = re.search(r"at (http://127\.0\.0\.1:(\d+)/)", line)
            assert address, line
            url, port = address.group(1), address.group(2)
            rebound = httpx.get(url + "findings", headers={"Host": "attacker.example"},
                                timeout=30)
            assert rebound.status_code == 400 and "finding" not in rebound.text
            other_port = httpx.get(url + "findings", headers={"Host": "127.0.0.1:1"},
                                   timeout=30)
            assert other_port.status_code == 400
            assert httpx.get(url + "sign-in", headers={"Host": f"localhost:{port}"},
                             timeout=30).status_code in (200, 303)
            assert httpx.get(url + "sign-in", headers={"Host": "review.example"},
                             timeout=30).status_code in (200, 303)
        finally:
            server.terminate()
            server.wait(timeout=30)


# --- throttling ---------------------------------------------------------------------------


def _burst(app, n: int, name: str, password: str, clients=None) -> list:
    """N sign-ins at the same moment, each from a client of its own (made and given its
    form token first); the answers and how long each took."""
    made = clients or [TestClient(app) for _ in range(n)]
    tokens = [_token(c.get("/sign-in").text) for c in made]
    barrier = threading.Barrier(n)
    answers: list = [None] * n

    def one(i: int) -> None:
        barrier.wait(timeout=60)
        start = time.perf_counter()
        answer = made[i].post("/sign-in", data={"name": name, "password": password,
                                                "csrf_token": tokens[i]},
                              follow_redirects=False)
        answers[i] = (answer, time.perf_counter() - start)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return answers


def test_a_burst_of_wrong_sign_ins_is_held_back_at_once(apps, store_url, reviewers):
    app = apps(store_url, reviewers)
    start = time.perf_counter()
    answers = _burst(app, 16, "ann", "not ann's password")
    took = time.perf_counter() - start
    statuses = sorted(a.status_code for a, _ in answers)
    # the first five are checked (two argon2 checks at a time), the others held back
    assert statuses == [401] * 5 + [429] * 11, statuses
    held = [(a, t) for a, t in answers if a.status_code == 429]
    assert all(int(a.headers["Retry-After"]) >= 1 for a, _ in held)
    assert all("Too many sign-ins have failed" in a.text for a, _ in held)
    assert max(t for _, t in held) < 5 and took < 20, (took, [t for _, t in held])
    # held back by name: the right password too, until the wait is over
    assert _sign_in(TestClient(app), "ann", PASSWORDS["ann"]).status_code == 429
    # another name from another address is not held back
    other = TestClient(app, client=("192.0.2.7", 50000))
    assert _sign_in(other, "bob", PASSWORDS["bob"]).status_code == 303
    failed = _events(store_url, "signin_failed")
    assert len(failed) == 5 and {e["reviewer"] for e in failed} == {"ann"}
    assert {e["detail"]["why"] for e in failed} == {"wrong_password"}
    # recorded once a wait, not once a try held back (12 here)
    throttled = _events(store_url, "signin_throttled")
    assert 1 <= len(throttled) <= 6, len(throttled)
    assert all(e["detail"]["by"] == "name" and e["detail"]["seconds"] >= 1 for e in throttled)


def test_throttle_waits_double_past_the_free_tries_and_are_forgotten():
    now = [1000.0]
    throttle = Throttle(clock=lambda: now[0], max_keys=50)

    def fail(name="ann", address="a"):
        with throttle.attempt(name, address) as attempt:
            attempt.failed()

    for _ in range(5):
        fail()
    with pytest.raises(Held) as held:
        throttle.attempt("ann", "b")  # by name, from anywhere
    assert (held.value.seconds, held.value.kind, held.value.first) == (2, "name", True)
    with pytest.raises(Held) as again:
        throttle.attempt("ann", "b")
    assert not again.value.first  # the trail records the first only
    waits = []
    for _ in range(4):
        now[0] += throttle.wait_after(throttle._counts[("name", "ann")].failures)
        fail(address="c")
        with pytest.raises(Held) as held:
            throttle.attempt("ann", "d")
        waits.append(held.value.seconds)
    assert waits == [4, 8, 16, 32]
    assert throttle.wait_after(40) == 300  # at most five minutes
    # by address: five names tried from one address hold the sixth back
    for i in range(5):
        fail(f"name-{i}", "spray")
    with pytest.raises(Held) as held:
        throttle.attempt("name-5", "spray")
    assert held.value.kind == "address"
    # a success clears the name's count, not the address's
    now[0] += 1000
    with throttle.attempt("ann", "e") as attempt:
        attempt.succeeded()
    assert ("name", "ann") not in throttle._counts
    # forgotten after a quiet quarter of an hour
    now[0] += 901
    throttle.attempt("name-5", "spray").succeeded()
    # an error in between lets the place go without counting a failure
    with throttle.attempt("bob", "f"):
        pass
    assert throttle._counts[("name", "bob")].failures == 0
    assert throttle._counts[("name", "bob")].pending == 0
    # names sprayed without end: at most max_keys kept
    for i in range(200):
        fail(f"sprayed-{i}", f"addr-{i}")
    assert len(throttle._counts) <= 50


def test_an_unknown_names_failure_takes_as_long_as_a_known_ones(apps, store_url, reviewers):
    app = apps(store_url, reviewers)
    took = {"ann": [], "nobody-here": []}
    for i in range(4):
        for name in took:  # each from an address of its own: none is held back
            client = TestClient(app, client=(f"198.51.100.{i}", 50000))
            token = _token(client.get("/sign-in").text)
            start = time.perf_counter()
            answer = client.post("/sign-in", data={"name": name, "password": "wrong one!",
                                                   "csrf_token": token})
            took[name].append(time.perf_counter() - start)
            assert answer.status_code == 401 and auth.REFUSED in answer.text
    known, unknown = (statistics.median(t) for t in took.values())
    assert abs(known - unknown) < max(0.5 * known, 0.05), took
    assert {e["detail"]["why"] for e in _events(store_url, "signin_failed")} == {
        "wrong_password", "unknown_name"}


def _peak_memory(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024


def test_memory_stays_flat_under_a_burst_of_sign_ins(store_url, reviewers, template):
    """The real server, 16 wrong sign-ins at once from 16 addresses (127.0.0.2-17) and 16
    names, none held back: each costs a 64 MiB argon2 check, at most two run at once."""
    if template.backend != "sqlite" or not Path("/proc/self/status").exists():
        pytest.skip("the server is the same on either store; Linux's /proc")
    import httpx

    server = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "review", "--store", store_url, "--reviewers",
         str(reviewers), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        address = re.search(r"at (http://127\.0\.0\.1:\d+/)", server.stderr.readline())
        url = address.group(1)
        clients = [httpx.Client(base_url=url, timeout=120, transport=httpx.HTTPTransport(
            local_address=f"127.0.0.{i + 2}")) for i in range(16)]
        tokens = [_token(c.get("/sign-in").text) for c in clients]
        before = _peak_memory(server.pid)
        barrier = threading.Barrier(16)
        statuses = [None] * 16

        def one(i: int) -> None:
            barrier.wait(timeout=60)
            statuses[i] = clients[i].post("/sign-in", data={
                "name": f"guess-{i}", "password": "wrong one!", "csrf_token": tokens[i]}
            ).status_code

        threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        grown = _peak_memory(server.pid) - before
        assert statuses == [401] * 16  # every one checked, none held back
        # two checks at once: ~128 MiB more at most; sixteen would be a GiB
        assert grown < 320 * 2**20, f"{grown / 2**20:.0f} MiB"
        for c in clients:
            c.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- the trail ----------------------------------------------------------------------------


def test_the_trail_records_sign_ins_failures_and_a_bulk_change(apps, store_url, reviewers,
                                                                tmp_path):
    app = apps(store_url, reviewers)
    _first, second = _runs(store_url)
    chosen = _findings(store_url, second, table_id=SCRIPT, severity="error")
    stranger = TestClient(app)
    assert _sign_in(stranger, SCRIPT, "whatever it is").status_code == 401
    client, token = _signed_in(app, "ann")
    form = {"run": second, "table": SCRIPT, "severity": "error", "state": "",
            "disposition": "confirmed", "note": "=1+1 dealer's error", "csrf_token": token}
    done = client.post("/findings/bulk", data={**form, "count": len(chosen)},
                       follow_redirects=False)
    assert done.status_code == 303
    client.post("/sign-out", data={"csrf_token": token})
    kinds = [(e["kind"], e["reviewer"]) for e in _events(store_url)]
    assert kinds == [("signin_failed", SCRIPT), ("signin", "ann"), ("bulk", "ann"),
                     ("signout", "ann")]
    [bulk] = _events(store_url, "bulk")
    assert bulk["run_id"] == second and bulk["client"] == "testclient"
    assert bulk["detail"] == {"filter": {"table": SCRIPT, "severity": "error"},
                              "count": len(chosen), "disposition": "confirmed",
                              "note": "=1+1 dealer's error"}
    assert isinstance(bulk["at"], datetime)

    # the page: the newest first, filtered, escaped
    client, _ = _signed_in(app, "bob")
    page = client.get("/events").text
    assert int(re.search(r'id="events-count" class="counts" data-total="(\d+)"',
                         page).group(1)) == 5
    listed = re.findall(r'data-kind="([a-z_]+)"', page)
    assert listed == ["signin", "signout", "bulk", "signin", "signin_failed"]
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"count: {len(chosen)}" in page and "disposition: confirmed" in page
    bulk_only = client.get("/events", params={"kind": "bulk"}).text
    assert re.findall(r'data-kind="([a-z_]+)"', bulk_only) == ["bulk"]
    by_ann = client.get("/events", params={"reviewer": "ann"}).text
    assert re.findall(r'data-kind="([a-z_]+)"', by_ann) == ["signout", "bulk", "signin"]
    today = sessions.now().date()
    for params, count in (({"from": str(today), "until": str(today)}, 5),
                          ({"until": str(today - timedelta(days=1))}, 0),
                          ({"from": str(today + timedelta(days=1))}, 0)):
        answer = client.get("/events", params=params).text
        assert len(re.findall(r'data-kind="', answer)) == count, params
    assert client.get("/events", params={"kind": "nonsense"}).status_code == 400
    assert client.get("/events", params={"from": "yesterday"}).status_code == 400
    assert 'id="nav-events"' in page
    # signed out: to the sign-in page; a read-only server shows it
    assert TestClient(app).get("/events", follow_redirects=False).status_code == 303
    read_only = apps(store_url, tmp_path / "none.toml", read_only=True)
    shown = TestClient(read_only).get("/events")
    assert shown.status_code == 200 and 'data-kind="bulk"' in shown.text


def test_the_trail_is_append_only(store_url):
    store = connect(store_url)
    try:
        with store.begin() as conn:
            first = trail.record(conn, "signin", reviewer="ann", client="10.0.0.1",
                                 detail={"session": "abc"})
            trail.record(conn, "signin_failed", reviewer="x" * 500, detail={"why": "w"})
        with pytest.raises(ValueError), store.begin() as conn:
            trail.record(conn, "no_such_kind", reviewer="ann")
        # the store itself refuses a change or a removal, whoever asks
        for statement in (review_events.update().values(reviewer="eve"),
                          review_events.delete()):
            with pytest.raises(StoreError, match="append-only"), store.begin() as conn:
                conn.execute(statement.where(review_events.c.event_id == first))
        with store.begin() as conn:
            kept = trail.read(conn)
            assert trail.count(conn) == 2
    finally:
        store.close()
    assert [(e["reviewer"], e["detail"]) for e in kept] == [
        ("ann", {"session": "abc"}), ("x" * trail.MAX_TEXT, {"why": "w"})]
    # and the module's API has no way to change or remove one
    source = inspect.getsource(trail)
    assert ".update(" not in source and ".delete(" not in source
    assert "delete" not in " ".join(n for n in dir(trail) if not n.startswith("_")).lower()


def test_export_events_writes_the_trail_as_spreadsheet_safe_csv(apps, store_url, reviewers,
                                                               tmp_path):
    app = apps(store_url, reviewers)
    for name in ('=HYPERLINK("http://x","y")', "@SUM(1)", "+1", "-1"):
        assert _sign_in(TestClient(app, client=(f"10.9.9.{len(name)}", 1)), name,
                        "wrong one!").status_code == 401
    client, token = _signed_in(app, "ann")
    client.post("/sign-out", data={"csrf_token": token})
    out = tmp_path / "events.csv"
    written = _cli("review", "export", "--store", store_url, "--events", "--out", str(out))
    assert written.exit_code == 0 and "6 event(s)" in written.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0]) == list(trail.EXPORT_COLUMNS)
    assert [r["kind"] for r in rows] == ["signin_failed"] * 4 + ["signin", "signout"]
    assert [r["reviewer"] for r in rows[:4]] == [
        "'=HYPERLINK(\"http://x\",\"y\")", "'@SUM(1)", "'+1", "'-1"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["at"]) for r in rows)
    assert json.loads(rows[0]["detail"]) == {"why": "unknown_name"}
    printed = _cli("review", "export", "--store", store_url, "--events")
    assert printed.output == out.read_text()
    # the dispositions' export: times in UTC with Z as well
    _first, second = _runs(store_url)
    finding_id = _findings(store_url, second)[0]["finding_id"]
    client, token = _signed_in(app, "bob")
    client.post(_finding_path(second, finding_id) + "/disposition",
                data={"disposition": "confirmed", "note": "", "csrf_token": token})
    decided = list(csv.DictReader(io.StringIO(_cli("review", "export", "--store",
                                                   store_url).output)))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", decided[0]["decided_at"])


# --- the store --------------------------------------------------------------------------


def test_a_version_2_store_is_upgraded_and_reviewed(apps, day, template, reviewers, tmp_path,
                                                   monkeypatch):
    if template.backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'v2.db'}"
    else:
        url = template.server.new_database()
    with monkeypatch.context() as patch:  # the auditor before sessions and the trail
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        patch.setattr(dsp, "latest", lambda _conn, _ids: [])  # (it read none)
        _audit(day, f"v2-{uuid.uuid4().hex[:6]}", url)
        store = connect(url)
        with store.begin() as conn:
            run_id = conn.execute(sa.select(schema.runs.c.run_id)).scalar()
            finding = conn.execute(sa.select(schema.findings.c.finding_id)).scalar()
            # a disposition as version 2 wrote it (its columns only)
            conn.execute(sa.text(
                "INSERT INTO dispositions (finding_id, state, note, reviewer, decided_at, "
                "run_id) VALUES (:f, 'explained', 'before the upgrade', 'ann', :at, :r)"),
                {"f": finding, "at": datetime(2026, 11, 2, 9, 0), "r": run_id})
            assert schema.version(conn) == 2
            assert not sa.inspect(conn).has_table("review_events")
        store.close()
    app = apps(url, reviewers)  # upgrades it
    store = connect(url)
    with store.begin() as conn:
        assert schema.version(conn) == schema.latest()
        columns = {c["name"] for c in sa.inspect(conn).get_columns("review_sessions")}
        events = {c["name"] for c in sa.inspect(conn).get_columns("review_events")}
    store.close()
    assert columns == {"token_hash", "reviewer", "created_at", "last_seen", "ended_at",
                       "ended_why", "client", "password_mark"}
    assert events == {"event_id", "at", "kind", "reviewer", "client", "run_id", "finding_id",
                      "detail"}
    client, _ = _signed_in(app, "ann")
    page = client.get(_finding_path(run_id, finding)).text
    assert "before the upgrade" in page
    assert [e["kind"] for e in _events(url)] == ["signin"]


def test_the_store_and_dispositions_json_are_readable_by_their_owner_only(day, tmp_path):
    url = f"sqlite:///{tmp_path / 'new.db'}"
    old = os.umask(0o022)
    try:
        _audit(day, "owner-only", url)
    finally:
        os.umask(old)
    assert (tmp_path / "new.db").stat().st_mode & 0o777 == 0o600
    carried_file = day / "owner-only" / carried.FILE
    assert carried_file.stat().st_mode & 0o777 == 0o600
    # a store that is there keeps its mode
    (tmp_path / "shared.db").touch(mode=0o640)
    os.chmod(tmp_path / "shared.db", 0o640)
    connect(f"sqlite:///{tmp_path / 'shared.db'}").close()
    assert (tmp_path / "shared.db").stat().st_mode & 0o777 == 0o640


# --- reviewers: roles, disabling, the file under a lock ------------------------------------


def test_roles_are_kept_in_the_reviewers_file(apps, store_url, tmp_path):
    path = tmp_path / "team.toml"
    made = _cli("review", "add-reviewer", "sam", "--reviewers", str(path), "--role",
                "supervisor", "--password-stdin", input="sam's password\n")
    assert made.exit_code == 0, made.output
    auth.add_reviewer(path, "rita", "rita's password")
    found = auth.read_reviewers(path)
    assert (found["sam"].role, found["rita"].role) == ("supervisor", "reviewer")
    assert 'role = "supervisor"' in path.read_text()
    # a new password keeps the role unless another is given
    auth.add_reviewer(path, "sam", "sam's new password")
    assert auth.read_reviewers(path)["sam"].role == "supervisor"
    auth.add_reviewer(path, "rita", "rita's password", role="supervisor")
    auth.add_reviewer(path, "rita", "rita's password", role="reviewer")
    assert auth.read_reviewers(path)["rita"].role == "reviewer"
    bad = CliRunner().invoke(main, ["review", "add-reviewer", "x", "--reviewers", str(path),
                                    "--role", "boss", "--password-stdin"], input="long enough\n")
    assert bad.exit_code == 2
    broken = tmp_path / "broken.toml"
    broken.write_text(path.read_text().replace('role = "reviewer"', 'role = "boss"'))
    with pytest.raises(auth.ReviewersError, match="role is"):
        auth.read_reviewers(broken)
    # the role a page is for: require_supervisor lets sam through, refuses rita (403)
    app = apps(store_url, path)

    @app.get("/supervisors-only")
    def _only(signed: Annotated[auth.Signed, Depends(auth.require_supervisor)]):
        return {"name": signed.name, "role": signed.role}

    for name, password, status in (("sam", "sam's new password", 200),
                                   ("rita", "rita's password", 403)):
        client = TestClient(app)
        assert _sign_in(client, name, password).status_code == 303
        assert client.get("/supervisors-only").status_code == status, name
    client = TestClient(app)
    assert _sign_in(client, "sam", "sam's new password").status_code == 303
    assert client.get("/supervisors-only").json() == {"name": "sam", "role": "supervisor"}
    # the file changed under the server: the role the page sees changes with it
    auth.add_reviewer(path, "sam", "sam's new password", role="reviewer")
    client = TestClient(app)
    assert _sign_in(client, "sam", "sam's new password").status_code == 303
    assert client.get("/supervisors-only").status_code == 403
    # the commands with --store: the change in the trail, a changed password's sessions
    # ended at once
    changed = _cli("review", "add-reviewer", "sam", "--reviewers", str(path), "--store",
                   store_url, "--password-stdin", input="sam's third password\n")
    assert "changed the password of sam" in changed.output
    # (every session of sam's the store holds live: the earlier ones too, never used again)
    assert "3 sessions ended" in changed.output
    added = _cli("review", "add-reviewer", "tom", "--reviewers", str(path), "--store",
                 store_url, "--password-stdin", input="tom's password\n")
    assert "added reviewer tom" in added.output and "ended" not in added.output
    assert [(e["kind"], e["reviewer"], e["detail"]["sessions_ended"]) for e in _events(
        store_url, "password_changed", "reviewer_added")] == [
        ("password_changed", "sam", 3), ("reviewer_added", "tom", 0)]
    assert _signed_out(client)


def test_add_reviewer_commands_at_the_same_moment_all_land(tmp_path):
    path = tmp_path / "team.toml"
    names = [f"reviewer-{i}" for i in range(4)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = [
        subprocess.Popen([sys.executable, "-m", "auditor.cli", "review", "add-reviewer", name,
                          "--reviewers", str(path), "--password-stdin"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, env=env)
        for name in names
    ]
    # every command waits on its standard input: all are given it at once
    for process in started:
        process.stdin.write("a long password\n")
    for process in started:
        process.stdin.close()
    for process in started:
        assert process.wait(timeout=120) == 0, process.stderr.read()
    assert sorted(auth.read_reviewers(path)) == names
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.with_name(path.name + ".lock").stat().st_mode & 0o077 == 0
    # threads of one process too (each its own lock)
    threads = [threading.Thread(target=auth.add_reviewer, args=(path, f"t-{i}", "password!"))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(auth.read_reviewers(path)) == 7
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".team.toml.")]
