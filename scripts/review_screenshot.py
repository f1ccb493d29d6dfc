"""The manual's picture of the review application (docs/review-findings.png).

    .venv/bin/python scripts/review_screenshot.py

Audits the faulty sample day into a throwaway SQLite store, records a few dispositions
as reviewer "ada" would, serves the store read-only and has Debian's chromium (through
playwright) photograph the findings page.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from playwright.sync_api import sync_playwright

from auditor.store import dispositions
from auditor.store.schema import findings

ROOT = Path(__file__).resolve().parent.parent
AUDITOR = ROOT / ".venv/bin/auditor"
OUT = ROOT / "docs" / "review-findings.png"


def _store(folder: Path) -> str:
    url = f"sqlite:///{folder / 'audits.db'}"
    subprocess.run([str(AUDITOR), "audit", str(ROOT / "sample_logs/faulty"), "--house",
                    str(ROOT / "sample_logs/house.toml"), "--out", str(folder / "out"),
                    "--store", url, "--no-report", "-q"], check=False, capture_output=True)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        run_id, *_ = conn.execute(sa.select(findings.c.run_id)).first()
        ids = conn.execute(sa.select(findings.c.finding_id).order_by(
            findings.c.table_id, findings.c.seq)).scalars().all()
        dispositions.record(conn, ids[:3], "confirmed", "Paid short at the table", "ada",
                            run_id)
        dispositions.record(conn, ids[3:5], "explained", "Reader fault, ticket 4411", "ada",
                            run_id)
        dispositions.record(conn, ids[5:6], "corrected", "Patron refunded", "ada", run_id)
    return url


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = _store(Path(tmp))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([str(AUDITOR), "review", "--store", url, "--read-only",
                                   "--port", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                            args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 860})
                page.goto(f"http://127.0.0.1:{port}/findings")
                page.screenshot(path=str(OUT))
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
