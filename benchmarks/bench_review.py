"""How fast the review application answers over a store of 100,000 findings in 30 runs.

    .venv/bin/python benchmarks/bench_review.py [--store-dir DIR] [--requests 5]

Builds the store once (`review_store.py`: a faulty day audited into SQLite, then the
run copied to thirty nights), serves it with `auditor review --read-only` (uvicorn, a
process of its own), and times whole HTTP requests of the findings page, each filter in
turn, over the last run: the page as a browser asks for it, and the htmx request that
swaps the table in place. Prints the median and the slowest of each. Target: under 1 s.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import time
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import sqlalchemy as sa
from review_store import build

from auditor.store.schema import findings, runs

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, server: subprocess.Popen) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if server.poll() is not None:
                raise SystemExit(server.stdout.read()) from None
            time.sleep(0.1)


def _queries(url: str) -> list[dict[str, str]]:
    """The filters a reviewer uses, over the last run, with values the store holds."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        last = conn.execute(sa.select(runs.c.run_id).order_by(runs.c.finished_at.desc())
                            ).scalars().first()
        row = conn.execute(sa.select(findings.c.rule_id, findings.c.table_id,
                                     findings.c.dealer_id)
                           .where(findings.c.run_id == last).limit(1)).one()
    return [
        {"run": last},
        {"run": last, "severity": "error"},
        {"run": last, "rule": row.rule_id},
        {"run": last, "table": row.table_id},
        {"run": last, "dealer": row.dealer_id or ""},
        {"run": last, "presence": "new"},
        {"run": last, "state": "open", "page": "5"},
    ]


def _timed(address: str, params: dict[str, str], htmx: bool) -> float:
    request = Request(f"{address}/findings?{urlencode(params)}",
                      headers={"HX-Request": "true"} if htmx else {})
    started = time.perf_counter()
    with urlopen(request) as response:
        response.read()
        assert response.status == 200
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/auditor-review-bench"))
    parser.add_argument("--requests", type=int, default=5)
    args = parser.parse_args()
    url = build(args.store_dir)
    with sa.create_engine(url).connect() as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(findings)).scalar()
        nights = conn.execute(sa.select(sa.func.count()).select_from(runs)).scalar()
    print(f"store: {count:,} findings over {nights} runs ({url})")
    port = _free_port()
    server = subprocess.Popen([str(ROOT / ".venv/bin/auditor"), "review", "--store", url,
                               "--read-only", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait(port, server)
        address = f"http://127.0.0.1:{port}"
        worst = 0.0
        for params in _queries(url):
            for htmx in (False, True):
                _timed(address, params, htmx)  # warm: the first request of a filter
                times = [_timed(address, params, htmx) for _ in range(args.requests)]
                worst = max(worst, max(times))
                shown = ", ".join(f"{k}={v}" for k, v in params.items() if k != "run")
                print(f"{'htmx' if htmx else 'page'} {shown or 'no filter':<28} median "
                      f"{statistics.median(times) * 1000:6.0f} ms, slowest "
                      f"{max(times) * 1000:6.0f} ms")
        print(f"slowest of all: {worst * 1000:.0f} ms (target: under 1,000 ms)")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
