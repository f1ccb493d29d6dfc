"""What `auditor audit --store URL` does with the store, in the audit's order:

1. `open_for_audit`, before the logs are read: the store is opened, and created or
   upgraded, so that a bad URL or an unreachable server stops the audit before its work
   (exit 2), not after it;
2. `prepare`, once the findings and the summary are built: the run gets its run_id (in
   summary.json, so that the folder names its run) and finding ids, and the comparison
   with the run before it (the last to finish before this one began) is written to the
   folder (comparison.json) for the report, and
   so are the dispositions its findings carry from earlier runs (carried:
   dispositions.json), read by finding_id;
3. `land`, after every output file is written: the run goes into the store in one
   transaction. An audit that fails before this writes nothing to the store.

`auditor report OUT --store URL` reads the dispositions again (`carry_now`), with the
run's latest sign-off: the report then shows them as they are in the store, not as they
were when the audit ran.

Without a store, `NoStore` does nothing but remove a comparison and dispositions an
earlier audit left in the folder, which would describe another run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import sqlalchemy as sa

from . import StoreError, carried, signoffs
from . import compare as cmp
from . import dispositions as dsp
from .engine import Store, connect
from .history import facts_of, previous_run
from .ids import finding_ids, with_ids
from .schema import migrate, runs
from .without import NoStore
from .write import Run, local_time, new_run_id, utc_now, write


class Recorder:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.started_at = utc_now()
        self.run_id = new_run_id(self.started_at)
        self.run: Run | None = None
        self.prints = None  # tonight's shoe prints (store.prints), kept with the run

    def judge_order(self, result, progress: Callable[[str], None] = lambda _: None) -> None:
        """Tonight's shoes against the prints of every shoe of earlier runs (BA108, BJ106
        across nights): the repeats found join the run's findings; tonight's prints are
        kept to land with the run."""
        from . import prints as shoe_prints

        cards = result.shoe_cards
        if cards is None or cards.is_empty():
            return
        progress("comparing the shoes with the store's prints")
        self.prints = shoe_prints.prints_of(cards)
        with self.store.begin() as conn:
            found = shoe_prints.repeats(conn, self.prints, cards)
        if found.is_empty():
            return
        extra = order_findings(found, cards, result.totals.files)
        if extra.is_empty():
            return
        from .. import findings as fnd

        # each finding's rule part (none for a repeat) kept in the findings' order
        parts = (result.parts if result.parts is not None
                 else pl.Series(fnd.PART, [None] * result.findings.height, pl.String))
        both = fnd.order(pl.concat([
            result.findings.with_columns(parts.alias(fnd.PART)),
            extra.with_columns(pl.lit(None, pl.String).alias(fnd.PART))]))
        result.findings, result.parts = both.drop(fnd.PART), both[fnd.PART]

    def prepare(self, summary: dict[str, Any], findings: pl.DataFrame, out: Path,
                recorded_as: Path | None = None) -> None:
        """`out`: where the comparison and the dispositions are written; `recorded_as`:
        the run's folder as the store records it (where `out` is put in the end)."""
        summary["run_id"] = self.run_id
        self.run = Run(self.run_id, self.started_at, summary, with_ids(findings, summary),
                       recorded_as or out)
        now = facts_now(self.run)
        ids = self.run.findings["finding_id"].to_list()
        with self.store.begin() as conn:
            # the run before is read from the times alone (the last to finish before this
            # run began), as `auditor history` reads it once this run is stored
            before = previous_run(conn, summary.get("facility"), now.spans, self.started_at)
            before_facts = facts_of(conn, before) if before else None
            decided = dsp.latest(conn, ids)
        cmp.write(cmp.compare(now, before_facts), self.store.name, out)
        doc = carried.document(self.store.name, self.run_id, ids, decided, utc_now())
        carried.write(doc, out)

    def land(self, before_commit: Callable[[], None] = lambda: None) -> None:
        """The run into the store; `before_commit` (the run's folder put in place) runs
        last inside its transaction, so that the two happen together."""
        tonight = self.prints

        def keep_prints(conn: sa.engine.Connection) -> None:
            if tonight is not None:
                from . import prints as shoe_prints

                shoe_prints.write(conn, self.run.run_id, tonight)

        try:
            write(self.store, self.run, before_commit, keep_prints)
        finally:
            self.store.close()


def order_findings(found: pl.DataFrame, cards: pl.DataFrame, files: list) -> pl.DataFrame:
    """The findings of repeats found through the store, located at tonight's card where
    each run starts (only where that card is audited, not context)."""
    from .. import findings as fnd
    from ..audit import ORDER_RULES
    from ..rules.baccarat import shoe_order as baccarat_order
    from ..rules.blackjack import shoe_order as blackjack_order
    from ..rules.catalog import REGISTRY

    checks = {"baccarat": baccarat_order.repeated_in, "blackjack": blackjack_order.repeated_in}
    places = cards.select("table_id", "shoe_id", "seq", "game", "audited", "file_id", "line")
    found = (
        found.join(places, on=["table_id", "shoe_id", "seq"], how="inner")
        .filter(pl.col("audited"))
        .with_columns(pl.col("run_began_b").dt.strftime("%Y-%m-%d").alias("run_day_b"))
    )
    rows = [fnd.from_check(REGISTRY.get(rule), checks[game](found.filter(pl.col("game") == game)),
                           game)
            for game, rule in ORDER_RULES.items()]
    located = fnd.located(pl.concat(rows), places.select("table_id", "seq", "file_id", "line"),
                          files)
    return located


def open_for_audit(url: str | None) -> Recorder | NoStore:
    if url is None:
        return NoStore()
    store = connect(url)
    try:
        with store.begin() as conn:
            migrate(conn)
    except Exception:
        store.close()
        raise
    return Recorder(store)


def carry_now(url: str, out: Path) -> Path:
    """The latest dispositions of the findings in OUT, a run of the store at URL, and the
    run's latest sign-off, written to OUT/dispositions.json for the report."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    run_id = summary.get("run_id")
    if not run_id:
        raise StoreError(f"{out} was not audited with --store: its summary.json names no run")
    ids = finding_ids(pl.read_parquet(out / "findings.parquet"), summary)
    store = connect(url, must_exist=True)
    try:
        with store.begin() as conn:
            migrate(conn)
            stored = sa.select(runs.c.run_id).where(runs.c.run_id == run_id)
            if conn.execute(stored).first() is None:
                raise StoreError(f"{store.name} holds no run {run_id}, the run of {out}")
            decided = dsp.latest(conn, ids)
            signed = signoffs.as_json(signoffs.latest_by_run(conn, [run_id]).get(run_id))
    finally:
        store.close()
    doc = carried.document(store.name, run_id, ids, decided, utc_now(), signed)
    return carried.write(doc, out)


def facts_now(run: Run) -> cmp.Facts:
    """The run being written, as a comparison needs it."""
    s = run.summary
    spans = {
        t["table_id"]: (local_time(t.get("first_event")), local_time(t.get("last_event")))
        for t in s["tables"]
        if t["table_id"] is not None
    }
    wanted = [c for c in (*cmp.LISTED, "file_sha256") if c in run.findings.columns]
    rows = list(run.findings.select(wanted).iter_rows(named=True))
    return cmp.Facts({"run_id": run.run_id, "started_at": run.started_at}, rows, spans,
                     {f["sha256"] for f in s["inputs"]})
