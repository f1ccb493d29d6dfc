"""What the report shows, computed from the audit's output folder only.

`build(out, rulesets, detail_per_rule)` reads summary.json, findings.parquet and
round_details.parquet (and, from an audit with --store, comparison.json and
dispositions.json) and returns the template's context. Counts and money are
taken from summary.json where it holds them, and otherwise summed from the
findings (money per table split by kind, findings per rule and hour), so every
number printed is one the machine files also hold.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from .. import details as dtl
from .. import paragraphs as para
from ..ingest.sources import sha256_of
from ..rules.catalog import REGISTRY
from ..rulesets import Rulesets
from ..store import carried, ids, state_label
from ..store import compare as cmp
from . import charts, replays

SEVERITIES = ("error", "warning")
OUTPUT_FILES = ("summary.json", "findings.parquet", "findings.csv", "findings.jsonl", dtl.FILE,
                cmp.FILE, carried.FILE)
HOURLY_UP_TO_HOURS = 48


# --- formatting ---------------------------------------------------------------


# the per-table counts the summary tables add up, and the money columns
COUNT_KEYS = (
    "rows_read",
    "rows_audited",
    "rows_reported",
    "rounds_read",
    "rounds_audited",
    "rounds_reported",
    "findings",
    "errors",
    "warnings",
)
MONEY_KEYS = ("underpaid", "overcharged", "overpaid")


def count(n: int | None) -> str:
    return "—" if n is None else f"{int(n):,}"


def money(dollars: float | None) -> str:
    if dollars is None:
        return ""
    sign = "−" if dollars < 0 else ""
    return f"{sign}${abs(dollars):,.2f}"


def when(iso: str | None) -> str:
    """ "2026-11-01 20:00:04" from an ISO timestamp (the log's local time, as written)."""
    if not iso:
        return "—"
    return iso.replace("T", " ")


def _period(period: dict) -> dict:
    """The period the logs cover, or (hand-history-v1 1.3) that their times are not
    recorded: for every table, or for those named."""
    start, end = when(period.get("start")), when(period.get("end"))
    state = period.get("times", "recorded")
    untimed = period.get("untimed_tables") or []
    if state == "not recorded":
        return {"start": "times not recorded", "end": "", "text": "times not recorded",
                "short": "times not recorded"}
    text = f"{start} to {end} (the log's local time)"
    if state == "partly recorded":
        text += f"; times not recorded for table{'s' if len(untimed) > 1 else ''} " + \
            ", ".join(untimed)
    return {"start": start, "end": end, "text": text, "short": f"{start} to {end}"}


def _window(window: dict | None) -> str:
    """The window audited, in words: "gaming day 2026-11-01 (2026-11-01 06:00:00 to ...)"."""
    if not window:
        return ""
    span = f"{when(window['from']) if window['from'] else 'the start of the logs'} to " \
        f"{when(window['until']) if window['until'] else 'their end'}"
    return f"gaming day {window['gaming_day']} ({span})" if window["gaming_day"] else span


def report_id(summary: dict) -> str:
    """A short id that changes whenever the audited inputs or its results change."""
    basis = json.dumps(
        {k: summary[k] for k in ("inputs", "house_rules", "findings", "run_at")}
        # a scoped audit's context files and window too (an audit without them keeps its id)
        | {k: summary[k] for k in ("context", "window") if summary.get(k)}, sort_keys=True
    )
    return "AUD-" + hashlib.sha256(basis.encode()).hexdigest()[:12].upper()


# --- money --------------------------------------------------------------------


def _overcharge_ids() -> list[str]:
    return sorted(r.id for r in REGISTRY.all() if r.overcharge)


def money_columns() -> list[pl.Expr]:
    """Underpaid, overcharged, overpaid (dollars, each >= 0) of a group of findings."""
    amount = pl.col("amount")
    over = pl.col("rule_id").is_in(_overcharge_ids())
    return [
        amount.filter((amount > 0) & ~over).sum().round(2).alias("underpaid"),
        amount.filter((amount > 0) & over).sum().round(2).alias("overcharged"),
        (-amount.filter(amount < 0)).sum().round(2).alias("overpaid"),
    ]


def amount_words(amount: float | None, rule_id: str) -> str:
    if amount is None or amount == 0:
        return ""
    if amount < 0:
        return "patron overpaid"
    rule = REGISTRY.get(rule_id) if rule_id in REGISTRY else None
    return "patron overcharged" if rule is not None and rule.overcharge else "patron underpaid"


# --- grouping the exceptions ------------------------------------------------------


@dataclass
class RoundGroup:
    round: int | None
    time: str
    findings: list[dict]
    view: replays.Replay | None
    why_no_view: str = ""


@dataclass
class ShoeGroup:
    shoe_id: str | None
    anchor: str
    shoe_level: list[dict] = field(default_factory=list)  # round null or 0
    rounds: list[RoundGroup] = field(default_factory=list)


@dataclass
class TableGroup:
    table_id: str | None
    anchor: str
    game: str | None
    pit: str | None
    total: int
    shown: int
    shoes: list[ShoeGroup] = field(default_factory=list)


def _anchor(*parts: Any) -> str:
    raw = "-".join(str(p) for p in parts if p is not None)
    return "x-" + "".join(ch if ch.isalnum() else "-" for ch in raw)


def _disposition(f: dict, decided: dict | None) -> dict | None:
    """The finding's disposition as the report shows it: None for a report of an audit
    without a store; open, with no reviewer, for a finding no reviewer has decided on."""
    if decided is None:
        return None
    d = decided["dispositions"].get(f["finding_id"]) or {"state": "open", "reviewer": None}
    at = d.get("decided_at")
    status = d.get("status") or "decided"  # (a file written before four eyes: none)
    label, by = state_label(d["state"]), f"by {d['reviewer']}"
    if status == "proposed":  # four eyes: not decided until a supervisor approves it
        label, by = f"pending: {label}", f"proposed by {d['reviewer']}"
    elif status == "approved":
        by = f"by {d['reviewer']}, approved by {d.get('approved_by')}"
    elif status == "rejected":
        by = f"a proposal rejected by {d['reviewer']}"
    return {
        **d,
        "label": label,
        "by": by,
        "at": f"{at[:16].replace('T', ' ')} UTC" if at else "",  # to the minute
    }


def _finding_view(f: dict, decided: dict | None = None) -> dict:
    rule = REGISTRY.get(f["rule_id"]) if f["rule_id"] in REGISTRY else None
    return {
        **f,
        "title": rule.title if rule else "",
        "amount_text": money(f["amount"]) if f["amount"] else "",
        "amount_words": amount_words(f["amount"], f["rule_id"]),
        "dealer_id": f.get("dealer_id"),  # (findings written before dealers: none)
        "disposition": _disposition(f, decided),
    }


def _exceptions(
    shown: pl.DataFrame,
    details: pl.DataFrame,
    tables: dict[str, dict],
    totals: dict[Any, int],
    replay_cap: int | None,
    decided: dict | None = None,
) -> list[TableGroup]:
    by_round: dict[tuple, dict] = {
        (r["table_id"], r["shoe_id"], r["round"]): r for r in details.iter_rows(named=True)
    }
    groups: dict[Any, TableGroup] = {}
    shoes: dict[tuple, ShoeGroup] = {}
    rounds: dict[tuple, RoundGroup] = {}
    for f in shown.iter_rows(named=True):
        t, s, r = f["table_id"], f["shoe_id"], f["round"]
        if t not in groups:
            info = tables.get(t, {}) if t else {}
            groups[t] = TableGroup(
                t,
                _anchor("table", t or "none"),
                info.get("game") or f["game"],
                info.get("pit"),
                totals.get(t, 0),
                0,
            )
        group = groups[t]
        group.shown += 1
        if (t, s) not in shoes:
            shoes[(t, s)] = ShoeGroup(s, _anchor("shoe", t, s or "none"))
            group.shoes.append(shoes[(t, s)])
        shoe = shoes[(t, s)]
        finding = _finding_view(f, decided)
        if t is None or r is None or r == 0:
            shoe.shoe_level.append(finding)
            continue
        if (t, s, r) not in rounds:
            row = by_round.get((t, s, r))
            replay, why = None, ""
            if row is not None and row["detail"]:
                game = row["game"]
                show = replays.VIEWS.get(game)
                replay = show(json.loads(row["detail"])) if show else None
            elif row is None or not row["detailed"]:
                why = (
                    "The round was not replayed at audit time (the audit kept replays for "
                    f"{replay_cap} findings per rule; re-run `auditor audit --detail-per-rule N`)."
                    if replay_cap is not None
                    else "No replay was recorded for this round (no round_details.parquet)."
                )
            else:
                why = (
                    "Not replayed: the round is reported as not fully auditable (see IN014), "
                    "or its game was not audited."
                )
            rounds[(t, s, r)] = RoundGroup(
                r,
                when(row["time"].isoformat()) if row is not None and row["time"] else "—",
                [],
                replay,
                why,
            )
            shoe.rounds.append(rounds[(t, s, r)])
        rounds[(t, s, r)].findings.append(finding)
    ordered = sorted(groups.values(), key=lambda g: (g.table_id is None, g.table_id or ""))
    for g in ordered:
        g.shoes.sort(key=lambda sh: (sh.shoe_id is None, sh.shoe_id or ""))
        for sh in g.shoes:
            sh.rounds.sort(key=lambda rg: rg.round or 0)
    return ordered


# --- charts ----------------------------------------------------------------------------


def _by_severity_bars(frame: pl.DataFrame, key: str, labels: dict | None = None) -> list:
    counts = frame.group_by(key, "severity").agg(pl.len().alias("n"))
    parts: dict[Any, dict[str, int]] = defaultdict(dict)
    for k, sev, n in counts.iter_rows():
        parts[k][sev] = n
    keys = sorted(parts, key=lambda k: (k is None, k or ""))
    return [
        charts.Bar(str(k) if k is not None else "(no table)", parts[k], (labels or {}).get(k, ""))
        for k in keys
    ]


def _time_buckets(findings: pl.DataFrame, details: pl.DataFrame) -> tuple[list, str, int]:
    """Findings per hour (per day for a period over 48 hours); and how many have no time."""
    timed = findings.join(
        details.select(*dtl.KEY, "time"), on=dtl.KEY, how="left", nulls_equal=True
    )
    undated = timed.filter(pl.col("time").is_null()).height
    timed = timed.filter(pl.col("time").is_not_null())
    if timed.is_empty():
        return [], "", undated
    first, last = timed["time"].min(), timed["time"].max()
    hourly = (last - first).total_seconds() <= HOURLY_UP_TO_HOURS * 3600
    every = "1h" if hourly else "1d"
    binned = timed.with_columns(pl.col("time").dt.truncate(every).alias("bucket"))
    counts = binned.group_by("bucket", "severity").agg(pl.len().alias("n"))
    parts: dict[datetime, dict[str, int]] = defaultdict(dict)
    for bucket, sev, n in counts.iter_rows():
        parts[bucket][sev] = n
    span = pl.datetime_range(min(parts), max(parts), every, eager=True).to_list()
    multi_day = span[0].date() != span[-1].date()

    def label(b: datetime) -> str:
        if not hourly:
            return b.strftime("%Y-%m-%d")
        if multi_day and (b.hour == 0 or b == span[0]):
            return b.strftime("%m-%d %H:00")
        return b.strftime("%H:00")

    bars = [charts.Bar(label(b), parts.get(b, {})) for b in span]
    axis = (
        "hour of the log's local time (bar: the hour starting at the label)"
        if hourly
        else "day (calendar date of the log's local time)"
    )
    return bars, axis, undated


def _charts(findings: pl.DataFrame, details: pl.DataFrame | None) -> dict[str, Any]:
    if findings.is_empty():
        return {}
    present = [s for s in SEVERITIES if s in set(findings["severity"].to_list())]
    titles = {r.id: r.title for r in REGISTRY.all()}
    short = {k: (v if len(v) <= 58 else v[:56] + "…") for k, v in titles.items()}
    out: dict[str, Any] = {
        "by_rule": charts.bar_charts(
            _by_severity_bars(findings, "rule_id", short),
            present,
            "Findings by rule",
            label_width=50,
            note_width=250,
        ),
        "by_table": charts.bar_charts(
            _by_severity_bars(findings, "table_id"),
            present,
            "Findings by table",
            label_width=80,
        ),
    }
    if details is not None:
        bars, axis, undated = _time_buckets(findings, details)
        if bars:
            out["over_time"] = charts.columns(bars, present, "Findings over time", axis)
            out["time_axis"] = axis
            out["undated"] = undated
            out["hourly"] = axis.startswith("hour")
    return out


# --- the whole context -----------------------------------------------------------


def _per_table(summary: dict, findings: pl.DataFrame) -> tuple[list[dict], dict]:
    money_by_table = {
        r["table_id"]: r
        for r in findings.filter(pl.col("table_id").is_not_null())
        .group_by("table_id")
        .agg(
            *money_columns(),
            pl.len().alias("n"),
            (pl.col("severity") == "warning").sum().alias("warnings"),
        )
        .iter_rows(named=True)
    }
    rows = []
    for t in summary["tables"]:
        m = money_by_table.get(t["table_id"], {})
        rows.append(
            {
                **t,
                "anchor": _anchor("table", t["table_id"]),
                "rounds_reported": t["rounds_read"] - t["rounds_audited"],
                "warnings": t["findings"] - t["errors"],
                "underpaid": m.get("underpaid") or 0.0,
                "overcharged": m.get("overcharged") or 0.0,
                "overpaid": m.get("overpaid") or 0.0,
            }
        )
    tabled = {k: sum(r[k] for r in rows) for k in COUNT_KEYS}
    by_sev = summary["findings"]["by_severity"]
    total = {
        "rows_read": summary["rows"]["read"],
        "rows_audited": summary["rows"]["audited"],
        "rows_reported": summary["rows"]["reported"],
        "rounds_read": summary["rounds"]["read"],
        "rounds_audited": summary["rounds"]["audited"],
        "rounds_reported": summary["rounds"]["reported"],
        "findings": summary["findings"]["total"],
        "errors": by_sev.get("error", 0),
        "warnings": by_sev.get("warning", 0),
        **summary["money"],
    }
    other = {k: total[k] - v for k, v in tabled.items()}
    return rows, {"total": total, "other": other if any(other.values()) else None}


def _per_game(table_rows: list[dict]) -> list[dict]:
    games: dict[str, dict] = {}
    for t in table_rows:
        g = games.setdefault(t["game"] or "unknown", {"game": t["game"] or "unknown", "tables": 0})
        g["tables"] += 1
        for k in (*COUNT_KEYS, *MONEY_KEYS):
            g[k] = round(g.get(k, 0) + t[k], 2)
    return sorted(games.values(), key=lambda g: g["game"])


def _by_rule(summary: dict, findings: pl.DataFrame, shown: pl.DataFrame) -> list[dict]:
    amounts = {
        r["rule_id"]: r
        for r in findings.group_by("rule_id").agg(*money_columns()).iter_rows(named=True)
    }
    shown_n = dict(shown.group_by("rule_id").agg(pl.len()).iter_rows())
    rows = []
    for rule_id, n in summary["findings"]["by_rule"].items():
        rule = REGISTRY.get(rule_id) if rule_id in REGISTRY else None
        m = amounts.get(rule_id, {})
        rows.append(
            {
                "id": rule_id,
                "title": rule.title if rule else "",
                "citation": rule.citation if rule else "",
                "severity": rule.severity if rule else "",
                "count": n,
                "shown": shown_n.get(rule_id, 0),
                "more": n - shown_n.get(rule_id, 0),
                "against": round((m.get("underpaid") or 0) + (m.get("overcharged") or 0), 2),
                "overpaid": m.get("overpaid") or 0.0,
            }
        )
    return rows


def _by_dealer(summary: dict) -> dict | None:
    """The summary's dealers ranked by rule errors per 1,000 rounds dealt (most first; then
    by rounds dealt, most first), the rounds whose dealer is not recorded last, and the
    findings on no dealer's round or shoe; None for a summary without the block."""
    if "dealers" not in summary:
        return None
    rows = [{**d, "errors": d["by_severity"]["error"], "warnings": d["by_severity"]["warning"],
             **d["money"]} for d in summary["dealers"]]
    named = sorted(
        (d for d in rows if d["dealer_id"] is not None),
        key=lambda d: (d["errors_per_1000_rounds"] is None, -(d["errors_per_1000_rounds"] or 0),
                       -d["rounds_dealt"], d["dealer_id"]),
    )
    unrecorded = next((d for d in rows if d["dealer_id"] is None), None)
    total = {k: round(sum(d[k] for d in rows), 2)
             for k in ("rounds_dealt", "findings", "errors", "warnings", "rule_errors",
                       *MONEY_KEYS)}
    rounds, errors = total["rounds_dealt"], total["rule_errors"]
    total["errors_per_1000_rounds"] = round(errors * 1000 / rounds, 2) if rounds else None
    return {
        "named": named,
        "unrecorded": unrecorded,
        "total": total,
        "untied": summary["findings"]["total"] - sum(d["findings"] for d in rows),
    }


def _paragraphs(rs: Rulesets, findings: pl.DataFrame) -> list[dict]:
    cited: dict[str, set[str]] = defaultdict(set)
    for citation, rule_id in findings.select("citation", "rule_id").unique().iter_rows():
        if citation:
            cited[citation].add(rule_id)
    out = []
    for citation in sorted(cited, key=_citation_order):
        p = rs.paragraph(citation) if rs.has_paragraph(citation) else None
        out.append(
            {
                "citation": citation,
                "anchor": _anchor("para", citation),
                "title": p.title if p else "",
                "text": p.text if p else "(the paragraph's text is not in the rulesets)",
                "effective": p.effective.isoformat() if p and p.effective else None,
                "cited_by": sorted(cited[citation]),
            }
        )
    return out


def _citation_order(citation: str) -> tuple:
    """Sort 5324.20(b)(1)(ii) before (b)(1)(iii) and (d)(2) before (d)(10)."""
    parts = citation.replace(")", "").split("(")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _regulation(rs: Rulesets, games: list[str]) -> dict | None:
    """Appendix C: every paragraph of the audited games' sections (every game's where the
    log has none) with the rules that check it, or why a hand history cannot show it."""
    sections = [s for s in para.listing(rs, REGISTRY.all()) if not games or s.game in games]
    if not sections:
        return None
    return {
        "count": para.count_line(sections),
        "sections": [
            {
                "name": f"{s.section} {s.title}",
                "rows": [
                    {
                        "label": s.short + c.label,
                        "rules": ", ".join(c.rules),
                        "through": ", ".join(c.through),
                        "kind": c.kind,
                        "reason": c.reason,
                    }
                    for c in s.paragraphs
                ],
            }
            for s in sections
        ],
    }


def _tables_named(tables: list[str], summary: dict) -> str:
    """"every blackjack table" where the list is all of that game's, else the list."""
    games = {t["table_id"]: t["game"] for t in summary["tables"]}
    game = {games.get(t) for t in tables}
    if len(game) == 1 and None not in game:
        every = sorted(t for t, g in games.items() if g in game)
        if sorted(tables) == every:
            return f"every {game.pop()} table"
    return ", ".join(tables)


def _by_reason(places: list[dict]) -> dict[str, list[str]]:
    """The tables of `places` ({"table_id", "why"}) by why."""
    out: dict[str, list[str]] = {}
    for place in places:
        out.setdefault(place["why"], []).append(place["table_id"])
    return out


def _parts(coverage: dict, summary: dict) -> list[dict]:
    """The checks of rules not judged where the rest of the rule is (`parts_not_judged`):
    a row per rule, check and why, with the tables."""
    return [
        {"rule_id": rule["rule_id"], "part": part["part"], "what": part["what"],
         "tables": _tables_named(tables, summary), "why": why}
        for rule in coverage["by_rule"] for part in rule.get("parts_not_judged", [])
        for why, tables in _by_reason(part["tables"]).items()
    ]


def _partly_how(coverage: dict) -> str:
    """How the rules judged partly were: "on some tables only", "a check of theirs not
    judged", "not on the boxes settled by net", as the coverage has them."""
    partly = [r for r in coverage["by_rule"] if r["state"] == "partly"]
    how = [words for key, words in (
        ("not_judged_on", "on some tables only"),
        ("parts_not_judged", "a check of theirs not judged"),
        ("boxes_not_judged", "not on the boxes settled by net"),
    ) if any(key in r for r in partly)]
    return ", or ".join(how) or "on some tables only"


def _coverage(summary: dict) -> dict | None:
    """The scope section: how many rules were judged, the rules that were not (or not on
    every table) grouped by why and where, and the checks of rules not judged where the
    rest of the rule is."""
    coverage = summary.get("coverage")
    if not coverage:
        return None
    groups: dict[tuple[str, str], list[str]] = {}
    for rule in coverage["by_rule"]:
        if rule["state"] == "judged":
            continue
        if "why" in rule:
            groups.setdefault((rule["why"], "—"), []).append(rule["rule_id"])
            continue
        for why, tables in _by_reason(rule.get("not_judged_on", [])).items():
            groups.setdefault((why, _tables_named(tables, summary)), []).append(
                rule["rule_id"])
    rounds = [r for r in coverage["by_rule"] if r.get("rounds_not_judged")]
    # the rules of single settlements on the boxes settled by net: said once, together
    boxes: dict[tuple[int, str], list[str]] = {}
    for rule in coverage["by_rule"]:
        if rule.get("boxes_not_judged"):
            key = (rule["boxes_not_judged"], rule["boxes_why"])
            boxes.setdefault(key, []).append(rule["rule_id"])
    return {
        "rules": coverage["rules"],
        "judged": coverage["judged"],
        "partly": coverage["partly"],
        "partly_how": _partly_how(coverage),
        "groups": [{"why": why, "tables": tables, "rules": ids}
                   for (why, tables), ids in groups.items()],
        "parts": _parts(coverage, summary),
        "boxes": [{"rules": ids, "boxes": n, "why": why} for (n, why), ids in boxes.items()],
        "rounds": [{"rule_id": r["rule_id"], "rounds": r["rounds_not_judged"],
                    "why": r["rounds_why"]} for r in rounds],
    }


def _files(out: Path) -> list[dict]:
    return [
        {"name": name, "bytes": (out / name).stat().st_size, "sha256": sha256_of(out / name)}
        for name in OUTPUT_FILES
        if (out / name).exists()
    ]


def build(out: Path, rs: Rulesets, detail_per_rule: int | None) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    findings = pl.read_parquet(out / "findings.parquet")
    decided = carried.for_report(out)  # None unless the audit wrote to a store
    if decided is not None:  # the ids the store gave the findings, to look theirs up
        findings = findings.with_columns(
            pl.Series("finding_id", ids.finding_ids(findings, summary), dtype=pl.String)
        )
    details, replay_cap = dtl.read(out)
    has_details = (out / dtl.FILE).exists()
    cap = detail_per_rule if detail_per_rule is not None else (replay_cap or dtl.DETAIL_PER_RULE)
    marked = dtl.mark_shown(findings, cap)
    shown = marked.filter(pl.col("shown")).drop("shown")
    table_rows, totals = _per_table(summary, findings)
    table_info = {t["table_id"]: t for t in table_rows}
    counts_by_table = dict(findings.group_by("table_id").agg(pl.len()).iter_rows())
    games_in_log = sorted({t["game"] for t in summary["tables"] if t["game"]})
    rules = [REGISTRY.get(r) for r in summary["rules_applied"] if r in REGISTRY]
    return {
        "summary": summary,
        "report_id": report_id(summary),
        "facility": summary.get("facility") or "(facility not named in the house rules)",
        "period": _period(summary["period"]),
        "run_at": when(summary["run_at"]),
        "window": _window(summary.get("window")),
        "games": games_in_log,
        "rulesets": [
            {"game": g, **summary["ruleset"][g]}
            for g in (games_in_log or summary["ruleset"])
            if g in summary["ruleset"]
        ],
        "tables": table_rows,
        "totals": totals,
        "per_game": _per_game(table_rows),
        "by_rule": _by_rule(summary, findings, shown),
        "dealers": _by_dealer(summary),
        "charts": _charts(findings, details if has_details else None),
        "exceptions": _exceptions(
            shown,
            details,
            table_info,
            counts_by_table,
            replay_cap if has_details else None,
            decided,
        ),
        "detail_per_rule": cap,
        "shown_total": shown.height,
        "paragraphs": _paragraphs(rs, findings),
        "rules": rules,
        "regulation": _regulation(rs, games_in_log),
        "coverage": _coverage(summary),
        "outputs": _files(out),
        "comparison": cmp.for_report(out),  # None unless the audit wrote to a store
        "dispositions": decided,
    }
