"""Where a baccarat audit's time goes, stage by stage, in one process, one step at a time.

    _RJEM_MALLOC_CONF=... .venv/bin/python benchmarks/stages.py /tmp/b1m/baccarat.parquet \\
        /tmp/b1m/house.toml [--parts N]

The log is held (as the audit holds it) and planned in parts as the audit plans it; then
each part is read and checked, and every rule checked, one after the other in this
thread (the audit overlaps the two stages and checks two rules at a time: here nothing
overlaps, so each step's time is its own). Every shared frame (`ctx.derived`) is timed
where it is built, its time taken out of the rule that first asked for it and out of any
frame it was built inside. Wall and processor seconds (the process's, polars' threads
included) are printed per stage, per frame and per rule.
"""

from __future__ import annotations

import argparse
import functools
import threading
import time
from collections import defaultdict
from datetime import date
from pathlib import Path

import polars as pl

from auditor import audit, audit_part, dealers, eras
from auditor import findings as fnd
from auditor.audit_context import GameContext
from auditor.cli import _rulesets
from auditor.house import load as load_house
from auditor.ingest import compact, load, schema, sequence
from auditor.ingest.sources import expand
from auditor.ingest.totals import part_totals
from auditor.profiles.load import load as load_profile
from auditor.profiles.read import translate
from auditor.scope import findings_in_scope, rows_in_scope

WALL: dict[str, float] = defaultdict(float)
CPU: dict[str, float] = defaultdict(float)
_stack = threading.local()


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


class Timed:
    """Exclusive time of nested labelled steps: a step's time less that of the steps
    timed inside it."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __enter__(self):
        stack = getattr(_stack, "s", None)
        if stack is None:
            stack = _stack.s = []
        self.start = _now()
        self.inner = [0.0, 0.0]
        stack.append(self)
        return self

    def __exit__(self, *exc):
        stack = _stack.s
        stack.pop()
        w, c = (b - a for a, b in zip(self.start, _now(), strict=True))
        WALL[self.label] += w - self.inner[0]
        CPU[self.label] += c - self.inner[1]
        if stack:
            stack[-1].inner[0] += w
            stack[-1].inner[1] += c


def _wrap(module, name: str, label: str) -> None:
    original = getattr(module, name)

    @functools.wraps(original)
    def timed(*args, **kwargs):
        with Timed(label):
            return original(*args, **kwargs)

    setattr(module, name, timed)


def _timed_derived() -> None:
    original = GameContext.derived

    def derived(self, name, build):
        if name in self._derived:
            return self._derived[name]

        def timed_build(ctx):
            with Timed(f"frame {name}"):
                return build(ctx)

        return original(self, name, timed_build)

    GameContext.derived = derived


def _instrument() -> None:
    _timed_derived()
    _wrap(load, "_read_part", "ingest: read part (pick out of held file, widen)")
    _wrap(compact, "read", "hold: read the file once, typed and coded")
    _wrap(schema, "validate", "ingest: schema row checks")
    _wrap(load, "_table_seq_order", "ingest: sort key")
    _wrap(load, "_sorted_releasing", "ingest: sort")
    _wrap(sequence, "with_round_ids", "ingest: round ids")
    _wrap(sequence, "seq_problems", "ingest: seq checks")
    _wrap(sequence, "order_problems", "ingest: order checks")
    _wrap(load, "_unauditable_rounds", "ingest: unauditable rounds")
    _wrap(load, "_locate", "ingest: locate problems")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log", type=Path)
    parser.add_argument("house", type=Path)
    parser.add_argument("--parts", type=int, default=0, help="only the first N parts")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--profile", type=Path, default=None,
                        help="an export profile: LOG is read through it, as audit --profile")
    args = parser.parse_args()
    _instrument()
    rs = _rulesets(None)
    house = load_house(args.house, rs, on=date.today())
    sources = expand([str(args.log)])
    limit = audit.budget.Budget(audit.budget.default_bytes(), 0, False)
    started = _now()
    if args.profile is not None:
        with Timed("read: the exports through the profile, made into events"):
            export = translate(load_profile(args.profile), [str(args.log)])
        with Timed("hold: the events made, as rows"):
            log = audit.open_rows(export.named())
            log.shoes_unrecorded = export.shoes_unrecorded()
            log.scope = audit.Scope((), None)
    else:
        with Timed("hold: read and hold the file, look it over"):
            log = audit.open_log(sources, None, spill_all=False, spill_text=True,
                                 hold_rows=limit.held_rows(compact.ROWS_AT_MOST),
                                 chunk_bytes=limit.chunk_bytes())
            log.scope = audit.Scope((), None)
    with Timed("hold: first day"):
        on = audit._first_day(log, 1, None)
    setting = audit_part.Setting(log, house, rs, on)
    log.read_once = True  # as the worker reads it (audit._take_setting)
    worker = audit._Worker()
    _plan, parts = audit._planned(log, limit, worker, 0)
    offsets = audit._row_offsets(log, parts) if parts != [None] else [0]
    rules = audit_part.game_rules()
    rows = 0
    found = []
    for number, tables in enumerate(parts):
        if args.parts and number >= args.parts:
            break
        with Timed("ingest: other"):
            part = audit_part.ingest_of(setting, tables, number == 0, offsets[number], None)
        rows += part.events.height
        with Timed("contexts"):
            contexts = {g: audit_part._context(g, part, setting) for g in audit_part.GAMES}
        checks = [
            fnd.as_check_rows(audit_part._not_auditable(part)),
            fnd.as_check_rows(audit_part._unlisted_tables(rows_in_scope(part.events),
                                                          setting.house)),
        ]
        evidence = {}
        for game, game_rules in rules.items():
            ctx = contexts[game]
            if ctx is None:
                continue

            def each(ctx, game=game, game_rules=game_rules):
                out, ev = [], {}
                for rule in game_rules:
                    with Timed(f"rule {rule.id}"):
                        result = rule.check(ctx)
                        if rule.across is not None:
                            ev[rule.id] = result
                        else:
                            out.append(fnd.from_check(rule, result, game))
                return out, ev

            c, e = eras.checks_in_force(ctx, setting.rulesets, each)
            checks += c
            evidence.update(e)
        with Timed("after: locate findings"):
            located = findings_in_scope(
                fnd.located(pl.concat(checks), part.events, setting.log.files), part.events)
        with Timed("after: dealers"):
            named = dealers.named(part.events)
            located = dealers.on_findings(located, named)
            part.problems = dealers.on_findings(part.problems, named)
        with Timed("after: totals"):
            part_totals(part, audit_part._finding_shoes(located, part, evidence),
                        setting.log.scope, named.dealt() if named is not None else None)
        with Timed("after: places of the evidence"):
            audit_part._places(evidence, part.events)
        found.append(located)
        print(f"part {number + 1}/{len(parts)}: {part.events.height:,} rows, "
              f"{time.perf_counter() - started[0]:.1f} s so far", flush=True)
    total_w, total_c = (b - a for a, b in zip(started, _now(), strict=True))
    print(f"\n{rows:,} rows in {len(parts)} parts; findings "
          f"{sum(f.height for f in found)}; wall {total_w:.2f} s, processor {total_c:.2f} s")
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for label in WALL:
        kind = label.split(" ")[0].rstrip(":")
        groups[kind][0] += WALL[label]
        groups[kind][1] += CPU[label]
    print("\nby kind (wall, processor, share of processor):")
    for kind, (w, c) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"  {kind:10s} {w:7.2f} {c:7.2f}  {100 * c / total_c:5.1f}%")
    print(f"\nsteps (top {args.top} by processor):")
    for label in sorted(CPU, key=lambda k: -CPU[k])[: args.top]:
        share = 100 * CPU[label] / total_c
        print(f"  {WALL[label]:7.3f} {CPU[label]:7.3f}  {share:5.1f}%  {label}")
    print("\nall frames:")
    for label in sorted(CPU, key=lambda k: -CPU[k]):
        if label.startswith("frame"):
            print(f"  {WALL[label]:7.3f} {CPU[label]:7.3f}  {label}")
    print("\nall rules:")
    for label in sorted(CPU, key=lambda k: -CPU[k]):
        if label.startswith("rule"):
            print(f"  {WALL[label]:7.3f} {CPU[label]:7.3f}  {label}")


if __name__ == "__main__":
    main()
