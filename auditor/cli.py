"""The command line: audit, report, verify, history, review, rules, rule, paragraphs (and
simulate, per game).

Exit status: 0 no finding reaches --fail-on, 1 one does, 2 the command could
not run (bad arguments, unreadable house rules, rulesets that do not load, a
findings store that cannot be opened or written).
"""

from __future__ import annotations

import contextlib
import errno
import json
import multiprocessing
import os
import re
import signal
import sys
import tempfile
from datetime import date, datetime
from pathlib import Path

import click

from . import __version__
from .rules.catalog import REGISTRY
from .rulesets import RulesetError, load_rulesets

FAIL_ON = ("error", "warning", "never")
# a local time as the log writes it (its wall clock), for --from and --until
LOCAL_TIME = click.DateTime(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S",
                             "%Y-%m-%d %H:%M", "%Y-%m-%d"])


class Failure(click.ClickException):
    """The command could not run: exit 2 with a one-line reason."""

    exit_code = 2


def _rulesets(root: Path | None):
    try:
        return load_rulesets(root)
    except RulesetError as exc:
        raise Failure(f"rulesets: {exc}") from None


def _progress(quiet: bool):
    """A progress bar on stderr, shown only on a terminal (never in pipes or with --quiet)."""
    if quiet or not sys.stderr.isatty():
        return lambda *_: None

    def show(stage: str, done: int = 0, total: int = 0) -> None:
        bar = ""
        if total:
            filled = round(30 * done / total)
            bar = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} "
        click.echo(f"\r\033[Kauditor: {bar}{stage}", err=True, nl=False)

    return show


def _signing_options(command):
    """--sign-key, --sign-cert and --timestamp-url, shared by audit and report."""
    key = click.option(
        "--sign-key",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        default=None,
        help="Sign report.pdf (PAdES) with this private key, PEM or DER (an encrypted key's "
        "passphrase from AUDITOR_SIGN_PASSPHRASE); with --sign-cert.",
    )
    cert = click.option(
        "--sign-cert",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        default=None,
        help="The signer's X.509 certificate (PEM or DER; chain certificates may follow it).",
    )
    stamp = click.option(
        "--timestamp-url",
        metavar="URL",
        default=None,
        help="Have this RFC 3161 time-stamping authority (http:// or https://) time-stamp "
        "the signature, so that its time rests on the authority's clock; with --sign-key.",
    )
    return key(cert(stamp(command)))


def _credentials(key: Path | None, cert: Path | None, timestamp_url: str | None = None):
    """The signer, loaded and checked before any work (None: the report is not signed)."""
    if key is None and cert is None:
        if timestamp_url:
            raise Failure("--timestamp-url time-stamps the signature: give --sign-key too")
        return None
    if key is None or cert is None:
        raise Failure("--sign-key and --sign-cert go together: give both")
    from .report import sign

    try:
        return sign.load(key, cert, timestamp_url)
    except sign.SigningError as exc:
        raise Failure(f"signing: {exc}") from None


def _sign(out: Path, credentials, quiet: bool = False, shown: Path | None = None) -> None:
    """Sign OUT/report.pdf; `shown`: the folder named in messages (where OUT is put)."""
    if credentials is None:
        return
    from .report import sign

    shown = shown or out
    try:
        reason = sign.sign_report(out, credentials)
    except sign.SigningError as exc:
        written = ("the report is written, unsigned" if shown == out
                   else f"nothing was written to {shown}")
        raise Failure(f"signing: {exc}; {written}") from None
    if not quiet:
        tsa = credentials.timestamper
        stamped = f" (time-stamped by {tsa.url})" if tsa else ""
        click.echo(f"signed {shown / 'report.pdf'}: {reason}{stamped}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Replay recorded baccarat and blackjack hand histories through 9 NYCRR Part 5324
    and report every exception with the paragraph it breaks."""


@main.command()
@click.argument("logs", nargs=-1, required=True)
@click.option(
    "--house",
    "house_path",
    required=True,
    type=click.Path(path_type=Path),
    help="House rules file (TOML).",
)
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder for findings.*, summary.json and the report.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit status 1.",
)
@click.option(
    "--rulesets",
    "rulesets_root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Rulesets folder (default: the one shipped).",
)
@click.option("--no-report", is_flag=True, help="Skip the PDF and HTML report.")
@click.option("--paper", type=click.Choice(["A4", "Letter"]), default="A4", show_default=True)
@click.option(
    "--detail-per-rule",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Findings per rule shown in the report with their round replayed.",
)
@click.option(
    "--context",
    "context_logs",
    multiple=True,
    metavar="LOG",
    help="A log read only to give the audited rounds their history (yesterday's file, the "
    "hours before a window): files, folders or globs, like LOGS; repeat for more. Its own "
    "rounds are not audited, counted or reported.",
)
@click.option(
    "--gaming-day",
    type=click.DateTime(["%Y-%m-%d"]),
    default=None,
    help="Audit the rounds that start within this gaming day (from the house rules' "
    "gaming_day_start); every other row of LOGS is context.",
)
@click.option(
    "--from",
    "start",
    type=LOCAL_TIME,
    default=None,
    help="Audit the rounds that start at or after this local time (the log's wall clock); "
    "earlier rows are context.",
)
@click.option(
    "--until",
    type=LOCAL_TIME,
    default=None,
    help="Audit the rounds that start before this local time; later rows are context.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Audit the log's parts on this many local processes at once.",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Audit the log's parts as tasks of a running Dask distributed cluster "
    "(its scheduler, tcp://host:port); every worker must reach the logs and --workdir.",
)
@click.option(
    "--workdir",
    metavar="DIR|URL",
    default=None,
    help="Where large text logs are spilled by table while the audit runs (a folder of its "
    "own, removed at the end; default: the system's temporary folder). A folder, or an "
    "fsspec URL (s3://bucket/work) that every worker of --cluster can reach.",
)
@click.option(
    "--memory",
    metavar="GB",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="The memory the audit may use, in GB (2^30 bytes): its parts, held rows and spill "
    "are planned within it, and a log whose largest table cannot fit is refused as soon as "
    "its rows are counted, before any part is audited (exit 2). Default: 3/4 of the "
    "machine's memory (or of its control group's limit).",
)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    default=None,
    help="Also write the run, its input files and its findings to this findings store (an "
    "SQLAlchemy URL: sqlite:///audits.db, a file, or postgresql+psycopg://user@host/db), once "
    "every output file is written; the report compares it with the run before. "
    "`auditor history` reads the store.",
)
@click.option(
    "--profile",
    "profile_path",
    metavar="PROFILE.toml",
    type=click.Path(path_type=Path),
    default=None,
    help="Read LOGS and --context as a table system's own exports, through this export "
    "profile (export-profiles-v1): files of any extension its sources' `files` match.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Audit a log that holds no rows as a day without play (0 rows in the summary "
    "and on the report's cover). Without it, a file with no rows is exit 2: a nightly "
    "job's empty export is usually one that failed.",
)
@click.option(
    "--max-line",
    metavar="MB",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="The longest line of a text log read, in MB (2^20 bytes); a longer line is an "
    "input finding at its line (IN002), read no further.",
)
@_signing_options
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
def audit(logs, house_path, out, fail_on, rulesets_root, no_report, paper, detail_per_rule,
          context_logs, gaming_day, start, until, workers, cluster, workdir, quiet,
          memory=None, store_url=None, sign_key=None, sign_cert=None, timestamp_url=None,
          profile_path=None, allow_empty=False, max_line=None):
    """Audit LOGS (files, folders or globs of .jsonl/.ndjson/.csv[.gz] or .parquet).

    Every file of the run (findings, summary, report) is written into a folder beside
    OUT and put in place of OUT at the end: OUT holds the previous run or this one,
    never a mix."""
    from . import audit as audit_mod
    from .house import HouseRulesError
    from .house import load as load_house
    from .ingest import storage
    from .ingest.column_types import ColumnTypeError
    from .ingest.sources import SourceError, expand
    from .run_folder import RunFolder, RunFolderError

    rs = _rulesets(rulesets_root)
    try:
        house = load_house(house_path, rs, on=date.today())
    except HouseRulesError as exc:
        raise Failure(f"{house_path}: {exc}") from None
    if workdir is not None:
        workdir = _work_folder(workdir)
    if no_report and (sign_key or sign_cert or timestamp_url):
        raise Failure("--sign-key signs the report: drop --no-report")
    folder = RunFolder(out)
    try:
        staged = folder.open()
    except RunFolderError as exc:
        raise Failure(str(exc)) from None
    try:
        # exports too large to hold are spilled by table while the audit runs, then removed
        with contextlib.ExitStack() as held:
            storage.reclaim(workdir)
            spilled = (held.enter_context(storage.work_folder(workdir))
                       if profile_path is not None else None)
            export = _exports(profile_path, logs, context_logs, house, memory, spilled)
            try:
                if export is not None:
                    sources, context = export.sources, export.context
                else:
                    sources = expand(list(logs))
                    context = expand(list(context_logs)) if context_logs else []
            except SourceError as exc:
                raise Failure(str(exc)) from None
            window = _window(house, gaming_day, start, until)
            credentials = _credentials(sign_key, sign_cert, timestamp_url)
            recorder = _store(store_url)
            progress = _progress(quiet)
            progress(f"reading {len(sources) + len(context)} file(s)")
            try:
                result = audit_mod.run(
                    sources, house, rs, progress=progress, context=context, window=window,
                    workdir=workdir, workers=workers, cluster=cluster,
                    memory=None if memory is None else int(memory * (1 << 30)),
                    export=export, max_line=int(max_line * (1 << 20)),
                    allow_empty=allow_empty)
            except audit_mod.AuditError as exc:
                raise Failure(f"the audit stopped: {exc}") from None
            except ColumnTypeError as exc:
                raise Failure(str(exc)) from None
            except Exception as exc:
                _said_where(exc, f"the work folder {workdir or tempfile.gettempdir()}",
                            "reading the logs", "nothing was audited")
                raise
        _judge_order(recorder, result, progress)
        if not quiet and result.plan is not None:
            if sys.stderr.isatty():
                click.echo("", err=True)
            click.echo(f"auditor: {result.plan.sentence()}", err=True)
        try:
            summary = _write_run(result, staged, out, recorder, house_path, profile_path,
                                 detail_per_rule, progress)
            if not no_report:
                progress("rendering the report")
                from .report import render

                render(staged, paper=paper, rulesets=rs, detail_per_rule=detail_per_rule)
                _sign(staged, credentials, quiet, out)
            _land(recorder, folder, progress)
        except Exception as exc:
            _said_where(exc, f"--out {out}", f"--out {out}", "the run was not written")
            raise
    except BaseException:
        folder.abandon()
        raise
    progress("done")
    if not quiet and sys.stderr.isatty():
        click.echo("", err=True)
    _print_summary(summary, out, quiet)
    sys.exit(_exit_status(summary, fail_on))


def _said_where(exc: Exception, writing: str, otherwise: str, outcome: str) -> None:
    """A failure of the system raised as exit 2 naming what failed: `writing` for a full
    disk, else `otherwise`, and the `outcome`; any other failure is left to go on."""
    system = system_error(exc)
    if system is None:
        return
    full = system[0] in (errno.ENOSPC, errno.EDQUOT)
    raise Failure(f"{writing if full else otherwise}: {system[1]}; {outcome}, and --out "
                  "keeps the run before") from None


def _write_run(result, staged: Path, out: Path, recorder, house_path: Path,
               profile_path: Path | None, detail_per_rule: int, progress) -> dict:
    """The run's files into its folder (`staged`, to be put in place of `out`): the
    findings, the summary (with the store's comparison), the house rules and profile
    applied, and the rounds the report replays."""
    from . import details as dtl
    from . import findings as fnd
    from . import summary as summ
    from .report.evidence import keep_house_rules, keep_profile

    progress("writing findings")
    fnd.write(result.findings, staged)
    summary = summ.build(result, datetime.now().astimezone())
    _compare(recorder, summary, result.findings, staged, out)
    summ.write(summary, staged)
    keep_house_rules(house_path, staged)
    keep_profile(profile_path, staged)
    progress("replaying the rounds to show")
    dtl.write(dtl.round_details(result, detail_per_rule), staged, detail_per_rule)
    return summary


def _exports(profile_path: Path | None, logs, context_logs, house=None,
             memory: float | None = None, spilled: Path | None = None):
    """The exports LOGS and --context name, read through the profile, or an import
    dataset read back (None: hand histories); a profile error, or a file no source
    reads, is exit 2."""
    from .ingest.sources import SourceError
    from .profiles import ProfileError
    from .profiles import dataset as ds
    from .profiles.load import load as load_profile
    from .profiles.read import translate

    if profile_path is None:
        datasets = [Path(a) for a in logs if ds.is_dataset(Path(a))]
        if not datasets:
            return None
        if len(logs) > 1 or context_logs:
            raise Failure(f"{datasets[0]} is an import dataset: audit it alone, without "
                          "other logs or --context")
        try:
            return ds.read(datasets[0])
        except ds.DatasetError as exc:
            raise Failure(str(exc)) from None
    from .budget import BudgetError, default_bytes

    try:
        decks = None if house is None else (
            lambda table: house.table(table, "blackjack").settings.get("decks"))
        limit = default_bytes() if memory is None else int(memory * (1 << 30))
        return translate(load_profile(profile_path), list(logs), list(context_logs), decks,
                         limit, spilled)
    except (ProfileError, SourceError, BudgetError) as exc:
        raise Failure(str(exc)) from None


def _work_folder(text: str) -> Path:
    """--workdir as a local folder (made if need be) or an fsspec URL."""
    from .ingest import storage

    try:
        folder = storage.location(text)
        folder.mkdir(parents=True, exist_ok=True)
    except (storage.StorageError, OSError) as exc:
        raise Failure(f"--workdir {text}: cannot be used ({exc})") from None
    return folder


def _window(house, gaming_day: datetime | None, start: datetime | None,
            until: datetime | None):
    """The window audited (None: every round of LOGS)."""
    from .scope import Window
    from .scope import gaming_day as day_window

    if gaming_day is not None:
        if start is not None or until is not None:
            raise Failure("--gaming-day and --from/--until each name the window: give one")
        return day_window(gaming_day.date(), house.gaming_day_start)
    if start is None and until is None:
        return None
    try:
        return Window(start, until)
    except ValueError as exc:
        raise Failure(f"--from/--until: {exc}") from None


def _store(url: str | None):
    """The findings store the run will be written to (--store), opened now: a bad URL or
    an unreachable server stops the audit before its work."""
    if url is None:  # no database library is loaded for a run without a store
        from .store.without import NoStore

        return NoStore()
    from .store import StoreError
    from .store.record import open_for_audit

    try:
        return open_for_audit(url)
    except StoreError as exc:
        raise Failure(f"--store: {exc}") from None


def _judge_order(recorder, result, progress) -> None:
    """With --store, tonight's shoes against the prints of earlier runs (BA108, BJ106)."""
    from .store import StoreError

    try:
        recorder.judge_order(result, progress)
    except StoreError as exc:
        raise Failure(f"--store: {exc}; nothing was written to the store") from None


def _compare(recorder, summary: dict, findings, staged: Path, out: Path) -> None:
    from .store import StoreError

    try:
        recorder.prepare(summary, findings, staged, recorded_as=out)
    except StoreError as exc:
        raise Failure(f"--store: {exc}; nothing was written to the store") from None


def _carry_now(url: str, out: Path) -> None:
    """`auditor report --store`: the dispositions of OUT's findings read again."""
    from .store import StoreError
    from .store.record import carry_now

    try:
        carry_now(url, out)
    except StoreError as exc:
        raise Failure(f"--store: {exc}") from None


def _land(recorder, folder, progress) -> None:
    """The run into the store and its folder put in place, together, last: the folder's
    rename runs inside the store's transaction, just before it commits, so that an
    audit that fails before either writes neither."""
    from .store import StoreError

    progress("writing the run")
    try:
        recorder.land(before_commit=folder.commit)
    except StoreError as exc:
        placed = (f"the run's files are in {folder.out}, but" if folder.committed
                  else f"{folder.out} keeps the run before; and")
        raise Failure(f"--store: {exc}; {placed} nothing of the run was written to the "
                      "store") from None


def _print_summary(summary: dict, out: Path, quiet: bool) -> None:
    if quiet:
        return
    rows, rounds, found = summary["rows"], summary["rounds"], summary["findings"]
    # exports: their rows read, and the events made from them audited or reported
    read = (f"{rows['read']} export rows, {rows['events']} events"
            if "export" in rows else f"{rows['read']} rows")
    click.echo(
        f"{rounds['read']} rounds ({rounds['audited']} audited, {rounds['reported']} reported), "
        f"{read} ({rows['audited']} audited, {rows['reported']} reported); "
        f"{found['total']} findings "
        f"({found['by_severity'].get('error', 0)} errors, "
        f"{found['by_severity'].get('warning', 0)} warnings) -> {out}"
    )


def _exit_status(summary: dict, fail_on: str) -> int:
    by_severity = summary["findings"]["by_severity"]
    if fail_on == "never":
        return 0
    if fail_on == "warning":
        return 1 if summary["findings"]["total"] else 0
    return 1 if by_severity.get("error", 0) else 0


@main.command()
@click.argument("out", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--paper", type=click.Choice(["A4", "Letter"]), default="A4", show_default=True)
@click.option(
    "--rulesets", "rulesets_root", type=click.Path(path_type=Path, file_okay=False), default=None
)
@click.option(
    "--detail-per-rule",
    type=click.IntRange(min=0),
    default=None,
    help="Findings per rule shown in detail (default: as many as the audit replayed, "
    "50 unless `auditor audit --detail-per-rule` said otherwise).",
)
@click.option("--store", "store_url", default=None, metavar="URL",
              help="The findings store OUT's run was written to: show its findings' "
              "dispositions as they are now (without it, as they were when the audit ran).")
@_signing_options
def report(out, paper, rulesets_root, detail_per_rule, store_url=None, sign_key=None,
           sign_cert=None, timestamp_url=None):
    """Re-render report.pdf and report.html in OUT from its findings and summary."""
    from .report import render

    if not (out / "summary.json").exists() or not (out / "findings.parquet").exists():
        raise Failure(f"{out}: no summary.json and findings.parquet here; run `auditor audit`")
    credentials = _credentials(sign_key, sign_cert, timestamp_url)
    if store_url is not None:
        _carry_now(store_url, out)
    paths = render(
        out, paper=paper, rulesets=_rulesets(rulesets_root), detail_per_rule=detail_per_rule
    )
    _sign(out, credentials)
    click.echo(" ".join(str(p) for p in paths))


@main.command()
@click.argument("pdf", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--trust",
    "trust_paths",
    multiple=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    metavar="CERT",
    help="A certificate (PEM or DER) trusted as a signer or as the authority of one; "
    "repeat for more. Given, a signer none of them vouches for fails.",
)
@click.option(
    "--allow-unsigned",
    is_flag=True,
    help="Check an unsigned report's embedded files only (exit 0 when they match).",
)
def verify(pdf, trust_paths, allow_unsigned):
    """Check PDF, a report: its embedded files against the SHA-256 it prints, and its
    signatures. Exit 0 verified, 1 not (a check failed, or the report is unsigned)."""
    from .report import verify as verify_mod

    try:
        trusted = verify_mod.load_trusted(trust_paths)
    except (OSError, ValueError) as exc:
        raise Failure(f"--trust: {exc}") from None
    verdict = verify_mod.verify(pdf, trusted, allow_unsigned)
    for check in verdict.checks:
        click.echo(f"{check.label:<4}  {check.text}")
    if verdict.ok:
        click.echo(f"{pdf}: verified" + ("" if verdict.signed else " (unsigned: files only)"))
    else:
        click.echo(f"{pdf}: NOT verified")
    sys.exit(0 if verdict.ok else 1)


@main.command()
@click.option("--store", "store_url", required=True, metavar="URL",
              help="The findings store `auditor audit --store` writes (an SQLAlchemy URL).")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Only the runs started on or after this day (local time).")
@click.option("--by", type=click.Choice(["table", "dealer", "rule"]), default=None,
              help="The rules that recur: in how many runs each found something, per table, "
              "per dealer, or per rule.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def history(store_url, since, by, fmt):
    """Runs over time and their findings, what is new since the run before, and (--by) the
    rules that recur per table or dealer."""
    from .store import StoreError
    from .store.history_command import history_of

    try:
        click.echo(history_of(store_url, since, by, fmt))
    except StoreError as exc:
        raise Failure(f"--store: {exc}") from None


@main.command("rules")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--scope",
    type=click.Choice(["input", "house", "baccarat", "blackjack"]),
    default=None,
    help="Only the rules of one game or family.",
)
def rules_cmd(fmt, scope):
    """List every rule: id, severity, citation and title."""
    rules = [r for r in REGISTRY.all() if scope is None or r.scope == scope]
    if fmt == "json":
        click.echo(json.dumps([r.as_dict() for r in rules], indent=2))
        return
    for r in rules:
        click.echo(f"{r.id}  {r.severity:<7}  {r.citation:<28}  {r.title}")


@main.command("rule")
@click.argument("rule_id")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
    show_default=True, help="markdown: the rule's page in the manual (docs/rules/ID.md).",
)
@click.option(
    "--rulesets", "rulesets_root", type=click.Path(path_type=Path, file_okay=False), default=None
)
def rule_cmd(rule_id, fmt, rulesets_root):
    """Explain one rule: what it checks, the paragraph it enforces, examples, the evidence
    it needs (the facts its page in the manual is made from)."""
    from . import docs_pages

    if rule_id not in REGISTRY:
        raise Failure(f"no rule {rule_id!r}; `auditor rules` lists them")
    facts = docs_pages.rule_facts(REGISTRY.get(rule_id), _rulesets(rulesets_root))
    if fmt == "json":
        click.echo(json.dumps(facts.as_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(docs_pages.rule_page(facts), nl=False)
    else:
        click.echo(docs_pages.rule_text(facts))


@main.command("paragraphs")
@click.option("--section", "sections", type=click.Choice(["5324.20", "5324.10"]), multiple=True,
              help="Only this section (baccarat 5324.20, blackjack 5324.10); repeatable.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
    show_default=True, help="markdown: the table of the manual's \"Paragraph by paragraph\" page.",
)
@click.option(
    "--rulesets", "rulesets_root", type=click.Path(path_type=Path, file_okay=False), default=None
)
def paragraphs_cmd(sections, fmt, rulesets_root):
    """Every paragraph of the regulation with the rules that check it, or why a hand
    history cannot show it (rulesets/*/unchecked.toml)."""
    from . import paragraphs

    listed = paragraphs.listing(_rulesets(rulesets_root), REGISTRY.all(), sections or None)
    show = {"text": paragraphs.as_text, "json": paragraphs.as_json,
            "markdown": paragraphs.as_markdown}[fmt]
    click.echo(show(listed))


@main.group()
def simulate() -> None:
    """Write simulated hand histories (for testing and demonstration)."""


def _simulate_command(game: str):
    @simulate.command(game)
    @click.option("--rounds", type=click.IntRange(min=1), required=True)
    @click.option("--tables", type=click.IntRange(min=1), default=4, show_default=True)
    @click.option("--seed", type=int, default=0, show_default=True)
    @click.option("--faults", type=click.FloatRange(0, 1), default=0.0, show_default=True,
                  help="Fraction of rounds given one planted fault (0: a clean log).")
    @click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False))
    @click.option("--encoding", type=click.Choice(["jsonl", "jsonl.gz", "csv", "csv.gz",
                                                   "parquet"]),
                  default="jsonl", show_default=True)
    @click.option("--start", default=None, metavar="TIME",
                  help="When the first table opens, ISO 8601 with its UTC offset "
                  "(default 2026-11-01T20:00:00-05:00).")
    @click.option("--layout", type=click.Choice(["events", "coups", "wagers", "boxes"]),
                  default=None,
                  help="Write the day as a table system would export it, with the profile "
                  "that reads it (profile.toml): events, a device feed; coups or wagers, "
                  "shoe coups and their wagers (both are written: wagers need their coups; "
                  "baccarat's joined by time, blackjack's by round); boxes (blackjack), a "
                  "simulator's export: one row per round and box, every hand of the box in "
                  "one row as bracketed lists, cards by value (an ace 11), the box's main "
                  "wager and net result, no round number and no clock (the day is dealt "
                  "with one patron a box). Default: the hand-history format.")
    @click.option("--nets", is_flag=True,
                  help="Settle each box by its net result (format 1.3 settle_net) in place "
                  "of its collect, pay, push and vig rows, as a table system that records "
                  "only nets does (the hand-history format only). A planted settlement fault "
                  "is then in the box's net, the net rules' (BJ707, BA509).")
    @click.option("--order-fault", "order_faults", multiple=True,
                  type=click.Choice(["shoe_reused", "decks_unshuffled"]),
                  help="Plant shuffles that did not happen besides (repeatable), in turn in "
                  "about 3 shoes in 10 after each table's first: shoe_reused, a shoe dealt "
                  "again in an earlier shoe's order from a random point (BA108, BJ106); "
                  "decks_unshuffled, a deck in new-deck order (BA109, BJ107). None unless "
                  "asked: --faults plants every other kind.")
    def command(rounds, tables, seed, faults, out, encoding, start, layout, nets,
                order_faults):
        """Write a log, a matching house.toml and (with --faults or --order-fault)
        truth.tsv to OUT."""
        import importlib

        from .simulate import exports
        from .simulate.writer import write_events, write_house_rules

        module = importlib.import_module(f".simulate.{game}", __package__)
        opens = {}
        if start is not None:
            try:
                opens["start"] = datetime.fromisoformat(start)
            except ValueError:
                raise Failure(f"--start {start!r} is not an ISO 8601 time") from None
        if nets and layout is not None:
            raise Failure("--nets writes the hand-history format: leave out --layout")
        if layout == "boxes":
            if game != "blackjack":
                raise Failure("--layout boxes is a blackjack simulator's export: "
                              "auditor simulate blackjack --layout boxes")
            # a simulator deals one patron a box: its export records one wager a box
            opens["co_patrons"] = False
        sim = module.simulate(rounds=rounds, tables=tables, seed=seed, faults=faults,
                              order_faults=order_faults, **opens)
        events = sim.events
        if nets:
            from .simulate.nets import as_nets

            events = as_nets(events)
        if layout is None:
            logs = [write_events(events, out / f"{game}.{encoding}", encoding)]
        else:
            logs = exports.write(events, out, layout, game)
        extra = {"blackjack": sim.house} if game == "blackjack" else {}
        house = write_house_rules(sim.tables, out / "house.toml", **extra)
        written = [*logs, house]
        if faults > 0 or order_faults:
            # tab-separated, so that auditing the folder does not read it as a log
            sim.truth.write_csv(out / "truth.tsv", separator="\t")
            written.append(out / "truth.tsv")
        click.echo(f"{events.height} events, {len(sim.truth)} planted faults: "
                   + " ".join(str(p) for p in written))

    return command


simulate_baccarat = _simulate_command("baccarat")
simulate_blackjack = _simulate_command("blackjack")


@main.group()
def profile() -> None:
    """Export profiles: how a table system's own exports map onto the format."""


@profile.command("check")
@click.argument("profile_path", metavar="PROFILE", type=click.Path(path_type=Path))
@click.argument("logs", nargs=-1, metavar="[LOG]...")
def profile_check(profile_path, logs):
    """Check PROFILE (every key), and with LOGs which source reads each file, the files
    skipped, the mapped columns a file lacks and every value no map covers; then, per
    table, the evidence its exports record and the rules, and checks of rules, that an
    audit will not judge, and why. Exit 2 where the profile is invalid or an audit of
    these files could not run."""
    from .ingest.sources import SourceError
    from .profiles import ProfileError
    from .profiles.files import (
        check_readers,
        files_named,
        look,
        readers_of,
        sources_of,
    )
    from .profiles.load import load

    try:
        read = load(profile_path)
    except ProfileError as exc:
        raise Failure(str(exc)) from None
    click.echo(f"{profile_path}: profile {read.name!r}, {len(read.sources)} source(s): "
               + ", ".join(f"{s.name} ({s.layout})" for s in read.sources))
    try:
        files = files_named(logs)
    except SourceError as exc:
        raise Failure(str(exc)) from None
    failures, counts, derived, readable = [], {"read": 0, "skipped": 0}, [], []
    kinds: dict[str, dict[str, str]] = {}  # per kind of source, each table and a source
    for path, named in files:
        matched = sources_of(read, path)
        if not matched:
            counts["skipped"] += 1
            click.echo(f"{path}: skipped (no source's files match it)")
            if named:
                failures.append(f"{path} is named on the command line, and no source "
                                "reads it")
            continue
        counts["read"] += 1
        readers = readers_of(read, path)
        also = [s for s in matched if s not in readers]
        also = f"; also matched by {', '.join(s.name for s in also)}" if also else ""
        try:
            check_readers(read, path, readers)
        except ProfileError as exc:
            click.echo(str(exc))
            failures.append(str(exc))
            continue
        if len(readers) > 1:
            click.echo(f"{path}: read as both coups (source {readers[0].name}) and wagers "
                       f"(source {readers[1].name}): one file, two layouts")
        readable.append(path)
        for source in readers:
            found = _looked(path, source, also, failures, look)
            if found is None:
                continue
            _said_of_file(path, source, found, failures)
            if source.layout == "coups" and "round" not in source.columns:
                derived.append(path)
            kinds.setdefault("events" if source.layout == "events" else "coups and wagers",
                             {}).update({t: source.name for t in found.tables})
            # (1.1) a coups source's net results, or a wagers source's wagers
            if source.layout == "wagers" or "net" in source.columns:
                kinds.setdefault(source.layout + " money", {}).update(
                    {t: source.name for t in found.tables})
    both = sorted(set(kinds.get("events", {})) & set(kinds.get("coups and wagers", {})))
    for table in both:
        click.echo(f"table {table}: given by an events source "
                   f"({kinds['events'][table]}) and by coups or wagers "
                   f"({kinds['coups and wagers'][table]})")
        failures.append(f"table {table} is given by sources of both kinds")
    netted, wagered = kinds.get("coups money", {}), kinds.get("wagers money", {})
    for table in sorted(set(netted) & set(wagered)):
        failures.append(f"table {table} is given by the coups source {netted[table]!r}, "
                        "which maps net results (amount and net), and by the wagers source "
                        f"{wagered[table]!r}: a table's wagers come from one of them")
    if kinds and not failures:
        # the files as an audit reads them, once: their derived rounds and their coverage
        translated = _translated(read, readable, failures)
        if translated is not None:
            _derived_rounds_said(translated, derived)
            _coverage_said(translated)
    if failures:
        raise Failure("; ".join(failures))
    files = f"; {counts['read']} file(s) read, {counts['skipped']} skipped" if logs else ""
    click.echo(f"profile check: the profile is valid{files}")


@profile.command("draft")
@click.argument("exports", nargs=-1, required=True, metavar="FILE|FOLDER...")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              metavar="PROFILE.toml",
              help="Write the profile here (a new file); without it, to standard output, "
              "and what the draft says to standard error.")
@click.option("--game", type=click.Choice(["baccarat", "blackjack"]), default=None,
              help="The exports' game, where no column or layout says it.")
@click.option("--no-check", is_flag=True, help="Do not run profile check on the files "
              "after writing (it reads at most the first 16 MB of each).")
@click.pass_context
def profile_draft(ctx, exports, out, game, no_check):
    """Draft a profile from the exports themselves: format and delimiter, layout, column
    roles (by header and by cells), card notation, timestamp format, list syntax and value
    maps, read from a bounded sample of each file. Every guess carries its evidence in a
    comment; every decision it cannot make is a value "TODO: ...", which the profile
    loader refuses (exit 2) until a person settles it. Then, unless --no-check, it runs
    profile check on the files. Exit 0 once the profile is written, TODOs or not."""
    from .profiles.draft.build import DraftError, draft
    from .profiles.draft.write import provisional, text, todos

    if out is not None and out.exists():
        raise Failure(f"{out}: exists; draft to a new file (a draft never overwrites a "
                      "profile)")
    try:
        drafted = draft(list(exports), game)
    except DraftError as exc:
        raise Failure(str(exc)) from None
    written = text(drafted)
    left = todos(written)
    if out is not None:
        try:
            out.write_text(written, encoding="utf-8")
        except OSError as exc:
            raise Failure(f"{out}: cannot be written ({exc.strerror or exc})") from None
    else:
        click.echo(written, nl=False)
    said = sys.stdout if out is not None else sys.stderr
    with contextlib.redirect_stdout(said):
        named = out if out is not None else "the profile"
        click.echo(f"profile draft: {named}: {len(drafted.sources)} source(s) from "
                   f"{len(drafted.files)} file(s); {len(left)} TODO(s) to settle"
                   + (":" if left else ""))
        for line, todo in left:
            click.echo(f"  line {line}: {_todo_said(todo)}")
        if no_check:
            return
        if not left:
            _draft_checked(ctx, written, out, drafted.files)
            return
        preview = provisional(drafted)
        if preview is None:
            click.echo("profile check: not run: the profile is refused until its TODOs are "
                       "settled; then run `auditor profile check PROFILE FILE...`")
            return
        read_as, lines = preview
        click.echo("profile check, a preview: the profile is refused until its TODOs are "
                   "settled; here they are read as " + "; ".join(lines))
        _draft_checked(ctx, read_as, None, drafted.files)
        click.echo(f"profile draft: that was a preview; {named} is refused until its "
                   f"{len(left)} TODO(s) are settled")


def _todo_said(row: str) -> str:
    """A TODO line of the draft as `key: what it asks`."""
    import tomllib

    key, _, value = row.partition("=")
    try:
        said = tomllib.loads(f"x = {value.strip()}")["x"]
    except (tomllib.TOMLDecodeError, KeyError):
        return row
    return f"{key.strip()}: {said}"


def _draft_checked(ctx, written: str, out: Path | None, files: list[Path]) -> None:
    """profile check of the draft on the files (each bounded to its first 16 MB)."""
    from .profiles.draft.bounded import bounded

    with tempfile.TemporaryDirectory(prefix="auditor-draft-") as folder:
        work = Path(folder)
        profile_path = out
        if profile_path is None:
            profile_path = work / "profile.toml"
            profile_path.write_text(written, encoding="utf-8")
        paths, cut = bounded(files, work)
        for said in cut:
            click.echo(said)
        try:
            ctx.invoke(profile_check, profile_path=profile_path,
                       logs=tuple(str(p) for p in paths))
        except click.ClickException as exc:
            click.echo(f"profile check: the draft does not yet pass: {exc.format_message()}")


def _looked(path, source, also: str, failures: list[str], look):
    """What one source reads of a file (profile check), or None where it cannot be read:
    a reason an audit would stop is a failure."""
    from .budget import BudgetError, default_bytes, export_text_limit
    from .profiles import ProfileError

    try:
        found = look(path, source, export_text_limit(default_bytes()))
    except (ProfileError, BudgetError) as exc:  # what stops an audit of the file
        click.echo(str(exc))
        failures.append(str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 - any reason a file cannot be read
        click.echo(f"{path}: source {source.name}{also}; cannot be read ({exc})")
        return None
    click.echo(f"{path}: source {source.name}{also}; {found.rows} row(s)")
    return found


def _said_of_file(path, source, found, failures: list[str]) -> None:
    """What profile check says of a file as one source reads it."""
    from .profiles.files import absent_message

    for column in found.own:
        click.echo(f"{path}: has a column of its own named {column!r}: read in place of "
                   "the built-in")
    for column in found.twice:
        click.echo(f"{path}: the header names the column {column!r} twice")
        failures.append(f"{path} names the column {column!r} twice")
    for column in found.missing:
        click.echo(f"{path}: lacks the mapped column {column!r}")
        if source.format_of(path.name) != "jsonl":
            failures.append(f"{path} has no column {column!r}")
    for key, column in found.absent:
        failures.append(absent_message(path, source, key, column))
    for canonical, value, rows, first in found.unmapped:
        click.echo(f"{path}: {canonical}: {value!r} is in no value map ({rows} row(s), "
                   f"first at line {first})")


def _translated(profile, paths: list, failures: list[str]):
    """The files read through the profile as an audit reads them (profile check), or None
    where they cannot be: the reason is a failure; or where they are too large to hold
    here (an audit reads them a part of their tables at a time), which is said."""
    from .budget import BudgetError, default_bytes
    from .ingest.sources import SourceError
    from .profiles import ProfileError
    from .profiles.read import translate

    try:
        return translate(profile, [str(p) for p in dict.fromkeys(paths)],
                         memory=default_bytes())
    except BudgetError:
        click.echo("the files are too large to hold whole here: what they record of each "
                   "table is said by their audit (summary.json coverage)")
        return None
    except (ProfileError, SourceError) as exc:
        click.echo(str(exc))
        failures.append(str(exc))
        return None


def _derived_rounds_said(read, derived: list) -> None:
    """(1.1) The rounds a coups source that maps no round numbers its rows with: the first
    rows of each table of the files `derived`, as the audit reads them."""
    import polars as pl

    named = {str(p) for p in derived}
    events = [e for x, e in zip(read.exports, read.events, strict=True)
              if str(x.path) in named and e.height]
    if not events:
        return
    starts = pl.concat(events, how="diagonal_relaxed").filter(pl.col("event") == "round_start")
    for table, *rows in sorted(starts.group_by("table_id").agg(
            pl.col("shoe_id", "round", "line").head(5)).iter_rows(), key=lambda r: r[0] or ""):
        said = ", ".join(f"line {line}: shoe {shoe} round {number}"
                         for shoe, number, line in zip(*rows, strict=True))
        click.echo(f"table {table}: rounds derived from the rows: {said}")


def _coverage_said(read) -> None:
    """(export-profiles-v1, Coverage) Per table, the evidence its exports record and what
    an audit of them will not judge, and why: the rules, and the checks of rules judged
    otherwise (Rule.parts). Tables alike in both are said together."""
    from .coverage import EVIDENCE, of_export

    found = of_export(read)
    alike: dict[tuple, list[str]] = {}
    for table in sorted(found.tables):
        game, has = found.tables[table]
        unjudged = tuple((r.id, p.name if p else None, why) for r, p, why in found.unjudged(table))
        alike.setdefault((game, has, unjudged), []).append(table)
    for (game, has, unjudged), tables in alike.items():
        named = f"table {tables[0]}" if len(tables) == 1 else f"tables {', '.join(tables)}"
        recorded = [kind for kind in EVIDENCE if kind in has]
        lacks = [kind for kind in EVIDENCE if kind not in has]
        click.echo(f"{named} ({game}): the exports record {', '.join(recorded) or 'nothing'}"
                   + (f"; not {', '.join(lacks)}" if lacks else ""))
        _unjudged_said(named, "not judged", [(r, why) for r, p, why in unjudged if not p])
        _unjudged_said(named, "checks not judged",
                       [(f"{r} {p}", why) for r, p, why in unjudged if p])
    for table, boxes in sorted(found.net_boxes.items()):
        click.echo(f"table {table}: {boxes} box(es) settled by net, where "
                   + EVIDENCE["single_settlements"])


def _unjudged_said(named: str, label: str, unjudged: list[tuple[str, str]]) -> None:
    """One line per reason: the rules (or checks) of `unjudged` (name, why) it leaves."""
    by_why: dict[str, list[str]] = {}
    for name, why in unjudged:
        by_why.setdefault(why, []).append(name)
    for why, names in by_why.items():
        click.echo(f"{named}: {label}: {', '.join(names)} ({why})")


@main.command("import")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--profile", "profile_path", required=True, metavar="PROFILE.toml",
              type=click.Path(path_type=Path), help="The export profile LOGS are read through.")
@click.option("--house", "house_path", required=True, type=click.Path(path_type=Path),
              help="The house rules: the facility, and when a gaming day starts.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="The dataset folder to write (hive layout).")
@click.option("--gaming-day", "gaming_day", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="The gaming day the rows of tables that record no times are filed under "
              "(needed where a table's exports have no ts); no window: a table with times "
              "is filed by them.")
def import_exports(logs, profile_path, house_path, out, gaming_day=None):
    """Read LOGS (a table system's exports) through PROFILE and write them as a Parquet
    dataset of the format's rows in hive layout, each row with its source_file and
    source_line; `auditor audit OUT` then gives the findings `audit --profile` gives."""
    from .house import HouseRulesError
    from .house import load as load_house
    from .profiles import dataset as ds

    rs = _rulesets(None)
    try:
        house = load_house(house_path, rs, on=date.today())
    except HouseRulesError as exc:
        raise Failure(f"{house_path}: {exc}") from None
    export = _exports(profile_path, logs, (), house)
    if out.exists() and any(out.iterdir()):
        raise Failure(f"{out}: the folder is not empty; import into a new folder")
    try:
        rows = ds.write(export, house.facility or "unnamed", house.gaming_day_start, out,
                        gaming_day.date() if gaming_day else None)
    except ds.DatasetError as exc:
        raise Failure(str(exc)) from None
    counts = export.accounting()
    click.echo(f"{counts['read']} export rows read ({counts['repeats']} repeats, "
               f"{counts['no_event']} mapped to no event), {rows} rows written, "
               f"{sum(len(e.problems) for e in export.exports)} input finding(s) kept -> {out}")


REVIEWERS_OPTION = click.option(
    "--reviewers", "reviewers_path", type=click.Path(path_type=Path, dir_okay=False),
    default=Path("reviewers.toml"), show_default=True,
    help="The reviewers file (TOML: each reviewer's name, argon2 password hash, role and "
    "whether disabled).")


def _events_client() -> tuple[str, dict[str, str]]:
    """How the trail names an event of a command: its client, and who ran it."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return "command line", {"by": user}


def _review_store_events(store_url: str, name: str, kind: str, why: str | None) -> int:
    """Record KIND about reviewer NAME in the store's trail and, with WHY, end every
    session of theirs; returns the sessions ended."""
    from .review import sessions, trail
    from .store import StoreError
    from .store.engine import connect
    from .store.schema import migrate

    client, detail = _events_client()
    try:
        store = connect(store_url, must_exist=True)
        try:
            with store.begin() as conn:
                migrate(conn)
                ended = sessions.end_all(conn, name, why, client) if why else 0
                trail.record(conn, kind, reviewer=name, client=client,
                             detail={**detail, "sessions_ended": ended})
        finally:
            store.close()
    except StoreError as exc:
        raise Failure(f"--store: {exc}") from None
    return ended


def _sessions_ended(ended: int) -> str:
    return f"; {ended} session{'' if ended == 1 else 's'} ended" if ended else ""


@main.group("review", invoke_without_command=True)
@click.option("--store", "store_url", metavar="URL", default=None,
              help="The findings store to review (an SQLAlchemy URL, as `auditor audit "
              "--store` writes).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; another than this machine's loopback lets "
              "other machines reach the sign-in page.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port to listen on (0: any free one, printed).")
@click.option("--allowed-host", "allowed_hosts", metavar="NAME[:PORT]", multiple=True,
              help="Also serve requests for this host name (repeatable): the name a TLS "
              "proxy or other machines reach the server by. Requests for any other name "
              "than these and the address listened on are refused (400).")
@REVIEWERS_OPTION
@click.option("--read-only", is_flag=True,
              help="Serve without signing in and without writes: every change is refused.")
@click.option("--idle-timeout", "idle_minutes", metavar="MINUTES", type=click.IntRange(1, 600),
              default=30, show_default=True,
              help="End a session after this many minutes without a request.")
@click.option("--four-eyes", is_flag=True,
              help="\"explained\" and \"not an error\" are proposals, pending until a "
              "supervisor other than their proposer approves them (also when the reviewers "
              "file says `four_eyes = true`).")
@click.pass_context
def review(ctx, store_url, host, port, allowed_hosts, reviewers_path, read_only,
           idle_minutes, four_eyes=False):
    """Review a findings store's exceptions in a browser: reviewers sign in and record what
    each finding is (a disposition, with a note), carried to later runs."""
    if ctx.invoked_subcommand is not None:
        return
    if store_url is None:
        raise Failure("--store URL names the findings store to review "
                      "(e.g. sqlite:///audits.db)")
    from datetime import timedelta

    from .review.app import banner, create_app, listening, loopback, serve
    from .review.auth import ReviewersError
    from .review.hosts import HostError
    from .store import StoreError

    try:
        app = create_app(store_url, reviewers_path, read_only,
                         idle=timedelta(minutes=idle_minutes), host=host,
                         allowed_hosts=allowed_hosts, four_eyes=four_eyes)
    except (StoreError, ReviewersError, RulesetError, HostError) as exc:
        raise Failure(f"review: {exc}") from None
    try:
        sock = listening(host, port)
    except OSError as exc:
        app.state.review.close()
        raise Failure(f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})"
                      ) from None
    bound_host, bound_port = sock.getsockname()[:2]
    app.state.review.hosts.bind(bound_port)
    state = app.state.review
    mode = " (read-only)" if read_only else f" (reviewers: {reviewers_path}" + (
        ", four eyes)" if state.four_eyes else ")")
    for line in banner(app.state.review.store.name, mode, bound_host, bound_port):
        click.echo(line, err=True)
    if state.four_eyes and not read_only and not state.reviewers.supervisors():
        click.echo(f"auditor review: four eyes, and {reviewers_path} names no supervisor: "
                   "nobody can approve a proposal or sign a run off (add-reviewer NAME "
                   "--role supervisor)", err=True)
    if not loopback(host):
        click.echo(f"auditor review: {host} is reachable from other machines, over plain "
                   "HTTP: put it behind a TLS proxy or serve on 127.0.0.1", err=True)
        if not allowed_hosts:
            click.echo("auditor review: only requests for the address itself are served; "
                       "--allowed-host NAME adds the name other machines use", err=True)
    serve(app, sock)


ROLE_OPTION = click.option(
    "--role", type=click.Choice(["reviewer", "supervisor"]), default=None,
    help="The reviewer's role (a new reviewer's default: reviewer; an existing one's is "
    "kept unless given).")
STORE_SESSIONS_OPTION = click.option(
    "--store", "store_url", metavar="URL", default=None,
    help="The findings store the server uses: end the reviewer's sessions in it now, and "
    "record the change in its trail.")


@review.command("add-reviewer")
@click.argument("name")
@REVIEWERS_OPTION
@ROLE_OPTION
@click.option("--password-stdin", is_flag=True,
              help="Read the password from the first line of standard input instead of "
              "asking for it.")
@STORE_SESSIONS_OPTION
def review_add_reviewer(name, reviewers_path, role, password_stdin, store_url):
    """Add reviewer NAME to the reviewers file (made if need be), or change NAME's password
    (which ends the sessions begun with the old one)."""
    from .review.auth import ReviewersError, add_reviewer, check_name

    try:
        check_name(name)
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt(f"Password for {name}", hide_input=True,
                                    confirmation_prompt=True)
        new = add_reviewer(reviewers_path, name, password, role)
    except ReviewersError as exc:
        raise Failure(f"add-reviewer: {exc}") from None
    ended = 0
    if store_url is not None:
        ended = _review_store_events(store_url, name, "reviewer_added" if new
                                     else "password_changed", None if new else "password_changed")
    click.echo(f"{'added reviewer' if new else 'changed the password of'} {name} "
               f"in {reviewers_path}{_sessions_ended(ended)}")


def _set_disabled(name: str, reviewers_path: Path, store_url: str | None,
                  disabled: bool) -> None:
    from .review.auth import ReviewersError, set_disabled

    word = "disable" if disabled else "enable"
    try:
        changed = set_disabled(reviewers_path, name, disabled)
    except ReviewersError as exc:
        raise Failure(f"{word}-reviewer: {exc}") from None
    ended = 0
    if store_url is not None:
        ended = _review_store_events(store_url, name, f"reviewer_{word}d",
                                     "disabled" if disabled else None)
    said = f"{word}d" if changed else f"already {word}d:"
    click.echo(f"{said} reviewer {name} in {reviewers_path}{_sessions_ended(ended)}")


@review.command("disable-reviewer")
@click.argument("name")
@REVIEWERS_OPTION
@STORE_SESSIONS_OPTION
def review_disable_reviewer(name, reviewers_path, store_url):
    """Disable reviewer NAME: they sign in no more, and the server ends their sessions (at
    once with --store); their dispositions stay as they were."""
    _set_disabled(name, reviewers_path, store_url, True)


@review.command("enable-reviewer")
@click.argument("name")
@REVIEWERS_OPTION
@click.option("--store", "store_url", metavar="URL", default=None,
              help="The findings store the server uses: record the change in its trail.")
def review_enable_reviewer(name, reviewers_path, store_url):
    """Let disabled reviewer NAME sign in again."""
    _set_disabled(name, reviewers_path, store_url, False)


@review.command("export")
@click.option("--store", "store_url", required=True, metavar="URL",
              help="The findings store whose dispositions (or trail) to export.")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The CSV file to write (default: standard output).")
@click.option("--events", is_flag=True,
              help="Write the review's trail instead: every event (sign-ins, sign-outs, "
              "failures, sessions ended, changes of a whole selection...), oldest first.")
def review_export(store_url, out, events):
    """Write every disposition (oldest first, with its finding's rule, table, round and
    message) as CSV, safe to open in a spreadsheet; times in UTC (with Z)."""
    import polars as pl

    from .findings import spreadsheet_safe
    from .review import trail
    from .store import StoreError
    from .store.dispositions import export_rows
    from .store.engine import connect
    from .store.schema import migrate

    try:
        store = connect(store_url, must_exist=True)
        try:
            with store.begin() as conn:
                migrate(conn)
                if events:
                    rows = trail.export_rows(conn)
                else:
                    # reviewers' notes and log text reach the cells: none is read as a formula
                    rows = spreadsheet_safe(export_rows(conn)).with_columns(
                        pl.col("decided_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
        finally:
            store.close()
    except StoreError as exc:
        raise Failure(f"--store: {exc}") from None
    try:
        if out is None:
            click.echo(rows.write_csv(), nl=False)
        else:
            rows.write_csv(out)
    except OSError as exc:
        raise Failure(f"--out {out}: cannot be written ({exc.strerror or exc})") from None
    if out is not None:
        what = "event" if events else "disposition"
        click.echo(f"{rows.height} {what}(s) -> {out}", err=True)


class Stopped(BaseException):
    """A signal to stop (SIGINT, SIGTERM): raised where the command is, so that what it
    holds is let go on the way out (its workers, its work folder, an unfinished run)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, _frame) -> None:
    # the worker processes first: a pool waits for its parts on shutting down
    for child in multiprocessing.active_children():
        child.terminate()
    raise Stopped(signum)


def entry() -> None:
    """The `auditor` command: `main`, with a signal to stop and any failure of the
    system (an I/O error, a full disk) or of the auditor itself said in one line and
    exit 2, never a traceback (AUDITOR_TRACEBACK=1 shows one)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    try:
        main()
    except Stopped as stop:
        name = signal.Signals(stop.signum).name
        click.echo(f"auditor: stopped by {name}; nothing more was written (an audit's --out "
                   "keeps the run before)", err=True)
        sys.exit(128 + stop.signum)
    except Exception as exc:  # noqa: BLE001 - said in one line below, exit 2
        if os.environ.get("AUDITOR_TRACEBACK"):
            raise
        click.echo(f"auditor: {_failure_sentence(exc)}", err=True)
        sys.exit(2)


# polars and pyarrow say a system error in their own words, ending "(os error 28)"
_OS_ERROR = re.compile(r"([^:()]+) \(os error (\d+)\)")


def system_error(exc: BaseException) -> tuple[int, str] | None:
    """A failure of the system (a full disk, an I/O error), as its errno and words, from
    Python or from polars and pyarrow; None for any other failure."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno, exc.strerror or str(exc)
    found = _OS_ERROR.search(str(exc))
    return (int(found.group(2)), found.group(1).strip()) if found else None


def _failure_sentence(exc: Exception) -> str:
    """What a failure outside the auditor's own checks was, in one line."""
    system = system_error(exc)
    if system is not None:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{system[1]}; the command stopped"
    first = (str(exc).strip().splitlines() or [""])[0]
    return (f"the command failed ({type(exc).__name__}: {first}); this is a fault of the "
            "auditor: please report it with the command that gave it")


if __name__ == "__main__":
    entry()
