"""One audit: read the logs, check every rule, gather findings and the summary.

The log is audited in parts of whole tables (see audit_part), in a worker process
when there are several: memory follows the part in flight, not the log.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from . import budget
from . import findings as fnd
from .audit_context import GameContext, gaps_of, table_settings
from .audit_part import (
    GAMES,
    PartResult,
    Prepared,
    Setting,
    audit_part,
    game_rules,
    prepare_part,
    run_part,
)
from .coverage import Coverage, of_log
from .house import HouseRules
from .ingest import chunks, compact, folded, spill, storage
from .ingest.partition import (
    Log,
    TableTooLarge,
    dealt,
    open_log,
    open_rows,
    open_spilled,
    relocated,
)
from .ingest.sources import Source
from .ingest.totals import LogTotals, problems_deduplicated
from .profiles.read import quiet
from .profiles.translated import Translated
from .rules import catalog
from .rulesets import Rulesets
from .scope import IN_SCOPE, Scope, Window, findings_in_scope

__all__ = ["GAMES", "AuditError", "AuditResult", "run"]


class AuditError(Exception):
    """The audit could not be completed (not a problem of the input)."""

# progress(stage, done, total): what is being done and, where countable, how far along
Progress = Callable[..., None]


@dataclass
class AuditResult:
    totals: LogTotals  # what is kept of the log: counts per table, reported rows, kept shoes
    findings: pl.DataFrame
    house: HouseRules
    rulesets: Rulesets
    on: date  # the day whose ruleset applies: the first day of the logs
    rule_ids: list[str]  # rules applied
    contexts: dict[str, GameContext] = field(default_factory=dict)  # per game, with its frames
    plan: Plan | None = None  # how the audit ran: its budget, its parts and where
    coverage: Coverage | None = None  # which rules were judged on which tables
    export: Translated | None = None  # the exports and profile, where read through one
    # the rule part (registry.Part) of each finding, in the findings' order: null for a
    # rule's common check and for input findings. No column of the findings (their
    # columns are the format's); another log's coverage may be applied to them with it
    # (Coverage.keep(findings.with_columns(parts)))
    parts: pl.Series | None = None
    # every shoe's cards in order, one row a shoe (games.shoe_order.packed, with `game`):
    # what the store's prints of the shoes are made from (store.prints)
    shoes_packed: pl.DataFrame | None = None

    @property
    def shoe_cards(self) -> pl.DataFrame | None:
        """Every card of every shoe, in order (games.shoe_order.shoe_cards, with `game`)."""
        if self.shoes_packed is None:
            return None
        from .games import shoe_order

        return shoe_order.unpacked(self.shoes_packed, ["game"])

    @property
    def scope(self) -> Scope:
        return self.totals.scope


# Rows of one part of the log, at most: the log is read, checked and audited a part of
# whole tables at a time, so the memory an audit takes follows the part, not the log
# (the budget may make parts smaller: budget.Budget.part_rows)
PART_ROWS = 3_000_000


@dataclass(frozen=True)
class Plan:
    """How the audit runs: its memory budget, its parts and where they run."""

    budget: int  # bytes
    parts: int
    where: str  # "here" (this process), "worker" (one local worker process), "workers",
    # "cluster"
    workers: int  # processes or cluster workers the parts can use
    text: str  # "none", "read whole" or "spilled"
    part_rows: int  # rows a part may hold

    def as_dict(self) -> dict:
        return {"memory_budget_gb": round(self.budget / budget.GB, 2), "parts": self.parts,
                "where": self.where, "workers": self.workers, "text_files": self.text,
                "part_rows_at_most": self.part_rows}

    def sentence(self) -> str:
        """What the console says of it."""
        places = {"here": "in this process", "worker": "in one worker process",
                  "workers": f"on {self.workers} local worker processes",
                  "cluster": f"on a Dask cluster of {self.workers} worker thread(s)"}
        parts = "one part" if self.parts == 1 else f"{self.parts} parts"
        return (f"audited in {parts} of whole tables {places[self.where]}, within a memory "
                f"budget of {budget.in_gb(self.budget)} GB")


def _parts(log: Log, part_rows: int | None = None,
           slots: int = 1) -> list[list[str]] | list[None]:
    """Tables in parts of at most `part_rows` rows (PART_ROWS where not said; a table
    is never split: its shoes and rounds are judged in order, and a larger one is a
    part of its own), and at least as many parts as `slots` (workers to take them)
    where there are as many tables. A log of one part audited where it is read is read
    whole (None: every table). Rules that compare tables (a pit's) judge their evidence
    across parts."""
    part_rows = min(PART_ROWS, part_rows or PART_ROWS)
    if slots <= 1 and log.table_rows["rows"].sum() <= part_rows:
        return [None]
    return dealt(log.table_rows, part_rows, slots)


# The worker's allocator (polars' jemalloc) keeps freed memory for 2 s before giving
# it back, not the 0.5 s polars sets, and large blocks too (by default they have an
# arena of their own that gives them back at once), all in one arena: the next step
# of a part reuses memory instead of faulting fresh pages in. Measured on a million
# rounds: keeping it about 15% faster than polars' setting; large blocks kept and one
# arena about 10-15% faster again, with a quarter less peak memory. 2 s is as fast as
# 5 s (1 s is slower) and gives the memory of the file's reading back sooner: the
# blackjack worker's peak, right after that reading, is 0.2-0.3 GB lower.
WORKER_ENVIRONMENT = {
    "_RJEM_MALLOC_CONF": "oversize_threshold:0,narenas:1,dirty_decay_ms:2000,muzzy_decay_ms:2000"
}

# A log whose files likely hold more than PART_ROWS rows has its worker started
# before the log is looked over, so that the worker's start (a new interpreter
# importing polars) overlaps that look rather than following it. Bytes per row, about
# (of the simulated logs); a gzip file holds about six times more rows per byte.
_BYTES_PER_ROW = {"parquet": 6, "csv": 80, "jsonl": 200}


def _context_of_findings(game: str, kept: pl.DataFrame, unauditable: pl.DataFrame,
                         house: HouseRules, rs: Rulesets, on: date) -> GameContext:
    """A context over the shoes that have findings only, for the report's replays (its
    frames are per round and per shoe, so they come out as over the whole log)."""
    events = kept.filter(pl.col("game") == game)
    table_ids = events["table_id"].unique().sort()
    tables = table_settings(house, game, table_ids.to_list())
    return GameContext(game, events, house, rs.params(game, on=on), on, tables,
                       gaps_of(unauditable, table_ids))


_SETTING: Setting | None = None  # the worker's setting, sent once before its parts


def _take_setting(setting: Setting) -> None:
    global _SETTING
    _SETTING = setting
    # every part is read here: each Parquet file is read once and held for them all
    setting.log.read_once = True


class _Ahead:
    """The next part read and checked (with the frames built ahead: prepare_part) in a
    thread of the worker while the rules check the part before it. Both keep the cores
    busy only part of the time (many steps are short or run on one core), and polars
    lets go of Python while it works, so the two overlap (the manual's Large logs
    page has the figures). One part ahead at most, so no more than two parts are
    held."""

    def __init__(self) -> None:
        self._thread: ThreadPoolExecutor | None = None
        self._pending: tuple[list[str], Future[Prepared]] | None = None

    def start(self, setting: Setting, job: Step) -> None:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1)
        self._pending = (job[0], self._thread.submit(prepare_part, setting, *job))

    def take(self, tables: list[str]) -> Prepared | None:
        """The part of `tables` if it was read ahead (an error reading it is raised
        here, as it would have been reading it now)."""
        pending, self._pending = self._pending, None
        if pending is None or pending[0] != tables:
            return None
        return pending[1].result()


_AHEAD = _Ahead()

# A part to audit: its tables, whether it is the first, where its row numbers start,
# and the first part's rows of unknown round; a job is a step and the step after it
Step = tuple[list[str], bool, int, pl.DataFrame | None]
Job = tuple[list[str], bool, int, pl.DataFrame | None, Step | None]


def _jobs(parts: list[list[str]], offsets: list[int], orphans: pl.DataFrame | None = None,
          start: int = 0) -> list[Job]:
    steps: list[Step] = [
        (tables, n == 0, offsets[n], orphans) for n, tables in enumerate(parts)
    ][start:]
    return [(*step, after) for step, after in zip(steps, [*steps[1:], None], strict=True)]


def _worker_part(job: Job) -> PartResult:
    *step, after = job

    def read_next() -> None:
        if after is not None:
            _AHEAD.start(_SETTING, after)

    return audit_part(_SETTING, *step, prepared=_AHEAD.take(step[0]), after_ingest=read_next)


class _Worker:
    """The worker process, started when asked (or at the first part) and stopped on
    leaving. One process: it checks a part while it reads the next (_Ahead); a second
    process auditing other parts took as much again in memory. The setting is sent
    once and its parts follow in order."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # polars' threads do not survive a fork
            with _worker_environment():
                self._pool = ProcessPoolExecutor(1, mp_context=spawn)
                self._pool.submit(int)  # the process starts now (the pool starts it lazily)

    def parts(self, setting: Setting, jobs: list,
              task: Callable[..., PartResult] = _worker_part) -> Iterator[PartResult]:
        self.start()
        self._pool.submit(_take_setting, setting)
        try:
            yield from self._pool.map(task, jobs)
        except BrokenProcessPool:
            raise AuditError(
                "a worker process stopped before finishing its part of the log (the "
                "machine may have run out of memory); no findings were written"
            ) from None

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


@contextmanager
def _worker_environment() -> Iterator[None]:
    """WORKER_ENVIRONMENT for the worker processes started within (they inherit it)."""
    before = {key: os.environ.get(key) for key in WORKER_ENVIRONMENT}
    os.environ.update(WORKER_ENVIRONMENT)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class _Pool:
    """Parts audited side by side: on N local processes, or as tasks of a Dask
    distributed cluster (its client's concurrent.futures executor). One code path: a
    part's audit is a function of the part and the setting (audit_part.run_part),
    whichever executor runs it; the results come back in part order. A local process
    lost in mid-part (the pool breaks) has its parts run again on a new pool; Dask runs
    again by itself a task whose worker was lost."""

    RETRIES = 2

    def __init__(self, workers: int, cluster: str | None) -> None:
        self.workers, self.cluster = workers, cluster
        self._executor: Executor | None = None
        self._client = None

    def start(self) -> None:
        if self._executor is not None:
            return
        if self.cluster is not None:
            try:
                from distributed import Client
            except ImportError:
                raise AuditError("--cluster needs the `distributed` package") from None
            try:
                self._client = Client(self.cluster, set_as_default=False, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise AuditError(f"cannot reach the Dask scheduler {self.cluster}: {exc}") \
                    from None
            self._executor = self._client.get_executor(pure=False)
        else:
            with _worker_environment():
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"))

    def slots(self) -> tuple[int, list[int]]:
        """Parts that can run at once (the cluster's worker threads, or the local
        processes), and each cluster worker's memory limit (0: none)."""
        self.start()
        if self._client is None:
            return self.workers, []
        workers = self._client.scheduler_info(n_workers=-1)["workers"].values()
        return (max(1, sum(w.get("nthreads", 1) for w in workers)),
                [int(w.get("memory_limit") or 0) for w in workers])

    def parts(self, setting: Setting, jobs: list[Job]) -> Iterator[PartResult]:
        self.start()
        steps = [job[:4] for job in jobs]
        futures = [self._executor.submit(run_part, setting, step) for step in steps]
        for number, step in enumerate(steps):
            for attempt in range(self.RETRIES + 1):
                try:
                    yield futures[number].result()
                    break
                except BrokenProcessPool:
                    if attempt == self.RETRIES:
                        raise AuditError(
                            "a worker process stopped before finishing its part of the log "
                            f"(tables {', '.join(step[0])}) {self.RETRIES + 1} times; no "
                            "findings were written") from None
                    self._renew()
                    futures[number:] = [self._executor.submit(run_part, setting, s)
                                        for s in steps[number:]]
                except Exception as exc:  # noqa: BLE001 - named, and the audit stops
                    raise AuditError(
                        f"the part of tables {', '.join(step[0])} failed: "
                        f"{type(exc).__name__}: {exc}") from exc

    def _renew(self) -> None:
        self._shutdown()
        self.start()

    def _shutdown(self) -> None:
        if self._client is None:
            self._executor.shutdown(cancel_futures=True)
        else:  # Dask's executor: cancels what is left on shutting down without waiting
            self._executor.shutdown(wait=False)
        self._executor = None

    def stop(self) -> None:
        if self._executor is not None:
            self._shutdown()
        if self._client is not None:
            self._client.close()
            self._client = None


def _row_offsets(log: Log, parts: list[list[str]]) -> list[int]:
    """Where each part's row numbers start: after every row of the parts before it
    (the first part also holds the rows without a table)."""
    rows = dict(log.table_rows.drop_nulls("table_id").iter_rows())
    offsets, at = [], 0
    for number, tables in enumerate(parts):
        offsets.append(at)
        at += sum(rows[t] for t in tables)
        if number == 0:
            at += int(log.table_rows.filter(pl.col("table_id").is_null())["rows"].sum())
    return offsets


def _audit_parts(setting: Setting, parts: list[list[str] | None], worker: _Worker | _Pool,
                 progress: Progress) -> Iterator[PartResult]:
    steps = sum(len(r) for r in game_rules().values())
    if parts == [None]:  # the whole log, here
        done = [0]

        def tick(stage: str) -> None:
            progress(stage, done[0], steps)
            done[0] += 1

        yield audit_part(setting, parts[0], True, 0, None, tick, keep_contexts=True)
        return
    offsets = _row_offsets(setting.log, parts)
    jobs = _jobs(parts, offsets)
    if setting.log.may_have_orphans and len(parts) > 1:
        # rows whose round is unknown are read with the first part, and the rounds
        # around them may be in any table: the other parts wait for them
        progress(f"auditing part 1 of {len(parts)}", 0, len(parts))
        first = next(iter(worker.parts(setting, [(*jobs[0][:4], None)])))
        yield first
        jobs = _jobs(parts, offsets, first.orphans, start=1)
    for done, result in enumerate(worker.parts(setting, jobs), start=len(parts) - len(jobs) + 1):
        yield result
        progress(f"audited part {done} of {len(parts)}", done, len(parts))


def _likely_rows(sources: list[Source]) -> int:
    rows = 0
    for source in sources:
        if source.path.is_file():
            per_row = _BYTES_PER_ROW.get(source.encoding, 80)
            per_row /= chunks.GZIP_RATIO if source.gzip else 1
            rows += int(source.path.stat().st_size / per_row)
    return rows


def run(
    sources: list[Source], house: HouseRules, rs: Rulesets,
    progress: Progress = lambda *_: None,
    context: list[Source] = (),
    window: Window | None = None,
    workdir: Path | None = None,
    workers: int = 1,
    cluster: str | None = None,
    memory: int | None = None,
    export: Translated | None = None,
    max_line: int | None = None,
    allow_empty: bool = False,
) -> AuditResult:
    """Audit the logs. `context`: logs read only to give the audited rounds their
    history (never reported themselves); `window`: only the rounds that start within it
    are audited, every other row read is context (see scope). `workdir`: where large text
    files are spilled by table (ingest.spill), in a folder of its own removed at the end
    (by default in the system's temporary folder). `workers` (above 1) audits the parts
    on that many local processes, `cluster` (a Dask scheduler's address) on its workers;
    every text file is then spilled, so that each part reads its tables only. `memory`:
    the budget in bytes (None: budget.default_bytes()) the parts, the held rows and the
    spill are planned within; a log that cannot fit it is refused (AuditError) before
    its parts are read. `export`: the exports read through a profile (their events, at
    their own files and lines), in place of reading `sources` (its `sources` and
    `context`). `max_line`: the longest line of a text log read (None:
    ingest.text.MAX_LINE_BYTES); a longer one is an input finding at its line. A file
    that holds no row at all is an AuditError (an empty export is usually one that
    failed) unless `allow_empty`.

    A log of several parts is audited in a worker process started with spawn: a script
    calling this must do so under `if __name__ == "__main__":`."""
    both = {str(s.path) for s in sources} & {str(s.path) for s in context}
    if both:
        raise AuditError(f"{sorted(both)[0]} is given both as a log to audit and as context")
    side_by_side = workers > 1 or cluster is not None
    limit = budget.Budget(memory or budget.default_bytes(), workers if workers > 1 else 0,
                          cluster is not None)
    try:
        limit.check_floor()
    except budget.BudgetError as exc:
        raise AuditError(str(exc)) from None
    worker = _Pool(workers, cluster) if side_by_side else _Worker()
    try:
        if _likely_rows([*sources, *context]) > PART_ROWS or side_by_side:
            worker.start()
        with storage.work_folder(workdir) as spilled:
            return _run(sources, list(context), window, house, rs, worker, progress, spilled,
                        limit, export, max_line, allow_empty)
    finally:
        worker.stop()


def _run(sources: list[Source], context: list[Source], window: Window | None,
         house: HouseRules, rs: Rulesets, worker: _Worker | _Pool, progress: Progress,
         workdir: Path, limit: budget.Budget, export: Translated | None = None,
         max_line: int | None = None, allow_empty: bool = False) -> AuditResult:
    every = [*sources, *context]
    text = spill.text_bytes(every)
    if export is not None and export.spilled is not None:
        log = open_spilled(export.named(), export.table_rows, export.days)
    elif export is not None:
        log = open_rows(export.named())
    else:
        hold = limit.held_rows(compact.ROWS_AT_MOST)
        # a table past the most a part could hold is refused as soon as its rows are
        # counted, before the rest of the log is read (the plan's own room is smaller)
        most = None if limit.cluster else limit.part_rows(1 << 62, 0)
        try:
            log = open_log(every, workdir, spill_all=isinstance(worker, _Pool),
                           spill_text=not limit.holds_text(text), hold_rows=hold,
                           chunk_bytes=limit.chunk_bytes(), max_line=max_line,
                           hold_text=limit.text_held_at_most(), table_rows_at_most=most)
        except TableTooLarge as exc:
            raise AuditError(_too_large(exc.table, exc.rows, most, limit, 0, True)) from None
    if not allow_empty:
        _refuse_empty(log, export)
    if export is not None:
        log.shoes_unrecorded = export.shoes_unrecorded()
    log.scope = Scope(tuple(range(len(sources), len(sources) + len(context))), window)
    on = _first_day(log, len(sources), window)
    setting = Setting(log, house, rs, on)
    plan, parts = _planned(log, limit, worker, text)
    rules = game_rules()
    applied = [r.id for r in catalog.REGISTRY.all() if r.scope in ("input", "house")]
    applied += [r.id for game in GAMES for r in rules[game]]
    totals = LogTotals(log.files, scope=log.scope)
    contexts: dict[str, GameContext] = {}
    found: list[pl.DataFrame] = []
    evidence: dict[str, list[pl.DataFrame]] = {}
    places: list[pl.DataFrame] = []
    for result in _audit_parts(setting, parts, worker, progress):
        found.append(result.found)
        totals.add(result.totals)
        contexts.update(result.contexts)
        for rule_id, frame in result.evidence.items():
            evidence.setdefault(rule_id, []).append(frame)
        places.append(result.places)
    # every part is in: the worker's memory goes before the findings' shoes are replayed
    worker.stop()
    found += _judged_across(evidence, places, house, log)
    shoe_cards = _shoe_cards(evidence)
    if len(parts) > 1:
        kept = totals.kept_audited
        for game in GAMES:
            if kept.select((pl.col("game") == game).any()).item():
                contexts[game] = _context_of_findings(game, kept, totals.unauditable, house, rs,
                                                      on)
    totals.problems = pl.concat([
        problems_deduplicated(totals.problems, totals.missing_rows), folded.said(totals.tally)],
        how="diagonal_relaxed")
    findings = pl.concat([fnd.from_problems(totals.problems, log.files), *found])
    coverage = of_log(totals.tables, export.tables if export else None,
                      export.unordered if export else None)
    untimed = coverage.untimed()
    if window is not None and untimed:
        raise AuditError(
            f"table {untimed[0]}" + (f" (and {len(untimed) - 1} other table(s))"
                                     if len(untimed) > 1 else "")
            + " records no times (no row has a ts): a window (--gaming-day, --from, "
            "--until) cannot apply to it; audit it without one")
    findings = coverage.keep(findings)
    if export is not None:
        findings = quiet(export, findings)
    findings = fnd.order(relocated(findings, log))
    return AuditResult(totals, findings.drop(fnd.PART), house, rs, on, applied, contexts, plan,
                       coverage, export, findings[fnd.PART], shoe_cards)


# the rules whose evidence is every shoe's cards in order (the evidence that names no
# shoe for the report: Rule.evidence_names_shoes), by game
ORDER_RULES = {rule.scope: rule.id for rule in catalog.REGISTRY.all()
               if rule.across is not None and not rule.evidence_names_shoes}


def _shoe_cards(evidence: dict[str, list[pl.DataFrame]]) -> pl.DataFrame | None:
    """The shoes of every part, packed (the evidence of the repeated-order rules), with
    their game."""
    frames = [pl.concat(evidence[rule]).with_columns(pl.lit(game).alias("game"))
              for game, rule in ORDER_RULES.items() if evidence.get(rule)]
    return pl.concat(frames) if frames else None


def _refuse_empty(log: Log, export: Translated | None) -> None:
    """An AuditError naming the first file that holds no row at all: a nightly job's
    empty export is an export that failed, not a day without play."""
    empty = ([e.path for e in export.exports if e.rows == 0 and not e.problems]
             if export is not None else log.empty_files())
    if empty:
        others = f" (and {len(empty) - 1} other file(s))" if len(empty) > 1 else ""
        raise AuditError(
            f"{empty[0]}{others} holds no rows: an empty log is usually an export that "
            "failed; nothing was audited (--allow-empty audits it as a day without play)")


def _planned(log: Log, limit: budget.Budget, worker: _Worker | _Pool,
             text: int) -> tuple[Plan, list[list[str]] | list[None]]:
    """The parts of the log within the budget, sized for the workers that take them;
    an AuditError where its largest table cannot fit a part."""
    slots, limits = worker.slots() if isinstance(worker, _Pool) else (1, [])
    if limit.cluster:
        limit = dataclasses.replace(limit, part_rows_there=budget.cluster_part_rows(limits))
    held = min(log.parquet_rows, log.rows_held_at_most)  # none where parts run side by side
    room = limit.part_rows(1 << 62, held)
    tables = log.table_rows.drop_nulls("table_id")
    if tables.height and int(tables["rows"].max()) > room:
        largest = tables.sort("rows", descending=True).row(0)
        raise AuditError(_too_large(largest[0], largest[1], room, limit, held))
    parts = _parts(log, room, slots)
    where = ("cluster" if limit.cluster else "workers" if limit.workers > 1
             else "here" if parts == [None] else "worker")
    spilled = any(h.spilled is not None and h.source.encoding != "parquet" for h in log.held)
    kind = "none" if not text else "spilled" if spilled else "read whole"
    return Plan(limit.bytes, len(parts), where, slots, kind, min(room, PART_ROWS)), parts


def _too_large(table: str, rows: int, room: int, limit: budget.Budget, held: int,
               read_so_far: bool = False) -> str:
    """Why a table cannot be audited within the budget, and what to set."""
    needed = limit.needed_for(rows, held)
    where = "on the cluster's workers (their memory limit)" if limit.cluster else (
        f"within the memory budget of {budget.in_gb(limit.bytes)} GB")
    advice = ("give the cluster's workers more memory" if limit.cluster else
              (f"set --memory above {budget.in_gb(needed)}" if read_so_far
               else f"set --memory {budget.in_gb(needed)} or more")
              + (", or fewer --workers" if limit.workers > 1 else ""))
    has = (f"has {rows:,} rows or more (the log was read no further: how many more, the "
           "rest of it tells)" if read_so_far else f"has {rows:,} rows")
    return (f"table {table} {has}, more than a part can hold {where} ({room:,} rows); a "
            f"table is never split, so {advice}; nothing was audited")


def _first_day(log: Log, audited: int, window: Window | None) -> date:
    """The first day audited, whose law applies until the next amendment (eras): the
    window's, else the audited files' earliest (context files read before it do not
    count), else today."""
    if window is not None and window.start is not None:
        return window.start.date()
    return log.first_day_of(range(audited)) or log.first_day or date.today()


def _judged_across(evidence: dict[str, list[pl.DataFrame]], places: list[pl.DataFrame],
                   house: HouseRules, log: Log) -> list[pl.DataFrame]:
    """The findings of the rules judged across parts, from every part's evidence."""
    where = pl.concat(places)
    out = []
    for rule_id, frames in evidence.items():
        rule = catalog.REGISTRY.get(rule_id)
        rows = fnd.from_check(rule, rule.across(pl.concat(frames), house), rule.scope)
        # the evidence of every shoe's cards carries its rows' places (and whether each is
        # audited), read only where a finding points
        at = where if rule.evidence_names_shoes else _carried_places(frames, rows, where)
        out.append(findings_in_scope(fnd.located(rows, at, log.files), at))
    return out


def _carried_places(frames: list[pl.DataFrame], rows: pl.DataFrame,
                    where: pl.DataFrame) -> pl.DataFrame:
    """The places of the rows `rows` point at, from packed shoes' cards (shoe_order)."""
    from .games import shoe_order

    scope = [IN_SCOPE] if IN_SCOPE in where.columns else []
    shoes = pl.concat(frames).join(rows.select("table_id", "shoe_id").unique(),
                                   on=["table_id", "shoe_id"], how="semi")
    return shoe_order.unpacked(shoes).select(
        "table_id", "seq", "file_id", "line",
        *(pl.col("audited").alias(IN_SCOPE) for _ in scope)).join(
            rows.select("table_id", "seq"), on=["table_id", "seq"], how="semi")
