"""The store's tables (SQLAlchemy Core), and the versioned steps that create and upgrade them.

- `runs`: one row per audit run: when it ran (UTC), the auditor's version, the facility,
  the house rules file and its SHA-256, the window audited, the period the logs cover,
  its counts (rows and rounds read, audited, reported; findings, errors, warnings; money
  at stake), its output folder and report id.
- `inputs`: the files each run read, `audited` or `context`, with SHA-256, rows and bytes.
- `run_tables`: the tables each run audited, with their counts and the first and last
  event audited (what a later run must cover before a finding counts as gone).
- `run_dealers`: the dealers each run's logs name (dealer_id), with the rounds they dealt
  and their findings (summary.json's `dealers`).
- `findings`: each run's findings, every column of the findings files as written, with
  `finding_id` (ids) and the SHA-256 of the finding's input file.
- `dispositions` (version 2): what reviewers decided each finding is, one row per
  decision, never updated: a change is a new row, so a finding's history is kept whole.
  Rows name a finding by finding_id, not by run, so a finding found again by a later run
  keeps its last disposition (the row with the highest disposition_id); `run_id` is the
  run the reviewer set it from, if any.
- `review_sessions` (version 3): the review application's sessions, held in the store so
  that signing out, a changed password or a disabled reviewer ends them: a SHA-256 of the
  session's token (the token itself is only in the reviewer's cookie), the reviewer, when
  it began and was last used, when and why it ended (null while it is live), the client
  address, and a fingerprint of the reviewer's password hash at sign-in.
- `review_events` (version 3): the review's trail, append-only (triggers refuse an UPDATE
  or DELETE of a row): sign-ins, sign-outs and failures, sessions ended, a disposition
  set on a selection with its filter and count, reviewers disabled; one row each, with
  its time (UTC), kind, reviewer, client, run and finding where it has them, and details
  as JSON text (review.trail).
- `dispositions` (version 4) gains `status`: `decided` (every row before), `proposed` (with
  four eyes, "explained" and "not an error" wait for a supervisor's approval: the finding
  is pending), `approved` (the proposal's state, by its proposer, `approved_by` the
  supervisor) or `rejected` (the finding open again, by the supervisor); `proposal_id`
  names the proposal an approval or rejection answers. Rows are still only appended.
- `signoffs` (version 4): a supervisor's sign-off of a run (who, when, the run's findings
  by disposition then, as JSON, and a note); withdrawn (when, by whom, why) when a
  finding of the run changes afterwards. A run has at most one sign-off not withdrawn (a
  partial unique index).
- `shoe_prints` (version 5): a bounded print of each shoe a run audited, so that later runs
  compare their shoes with it (BA108, BJ106 across nights; store.prints): the shoe's cards,
  one byte a card, its place in the run's prints, and whether it is printed on values (a
  table whose log records cards by value only); `print_index`: each run's winnowed gram
  hashes of its shoes, one row per kind (cards, values), as Parquet of (hash, position),
  so that a night reads a year's hashes in a few hundred rows.
- `schema_version`: the versions applied, one row each.

The store upgrades itself: `migrate` applies, in one transaction and under a lock, every
step above the store's version, so two audits opening a new store at once create it once.
A later version that changes a table adds a step here; a store newer than this auditor
is refused (an older auditor would write rows the newer schema does not expect).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import STATES, STATUSES, StoreError

metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", sa.DateTime, nullable=False),  # UTC
    sa.Column("description", sa.Text, nullable=False),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("started_at", sa.DateTime, nullable=False),  # UTC
    sa.Column("finished_at", sa.DateTime, nullable=False),  # UTC: when the run was stored
    sa.Column("auditor_version", sa.String(40), nullable=False),
    sa.Column("facility", sa.Text),
    sa.Column("house_rules_path", sa.Text),
    sa.Column("house_rules_sha256", sa.String(64)),
    # the window audited (null: every round of the logs), in the log's local time
    sa.Column("gaming_day", sa.Date),
    sa.Column("window_from", sa.DateTime),
    sa.Column("window_until", sa.DateTime),
    # the first and last event audited, in the log's local time
    sa.Column("period_start", sa.DateTime),
    sa.Column("period_end", sa.DateTime),
    sa.Column("inputs", sa.Integer, nullable=False),
    sa.Column("context_inputs", sa.Integer, nullable=False),
    sa.Column("tables", sa.Integer, nullable=False),
    sa.Column("rows_read", sa.BigInteger, nullable=False),
    sa.Column("rows_audited", sa.BigInteger, nullable=False),
    sa.Column("rows_reported", sa.BigInteger, nullable=False),
    sa.Column("rounds_read", sa.BigInteger, nullable=False),
    sa.Column("rounds_audited", sa.BigInteger, nullable=False),
    sa.Column("rounds_reported", sa.BigInteger, nullable=False),
    sa.Column("findings", sa.BigInteger, nullable=False),
    sa.Column("errors", sa.BigInteger, nullable=False),
    sa.Column("warnings", sa.BigInteger, nullable=False),
    sa.Column("underpaid", sa.Float, nullable=False),
    sa.Column("overcharged", sa.Float, nullable=False),
    sa.Column("overpaid", sa.Float, nullable=False),
    sa.Column("out_dir", sa.Text, nullable=False),
    sa.Column("report_id", sa.String(20), nullable=False),
    sa.Index("runs_finished_at", "finished_at"),
)

inputs = sa.Table(
    "inputs",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("role", sa.String(8), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("file", sa.Text, nullable=False),
    sa.Column("encoding", sa.String(16)),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("rows", sa.BigInteger, nullable=False),
    sa.Column("bytes", sa.BigInteger),
    sa.CheckConstraint("role IN ('audited', 'context')", name="inputs_role"),
    sa.Index("inputs_sha256", "sha256"),
)

run_tables = sa.Table(
    "run_tables",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("table_id", sa.Text, primary_key=True),
    sa.Column("game", sa.String(16)),
    sa.Column("pit", sa.Text),
    sa.Column("rows_read", sa.BigInteger, nullable=False),
    sa.Column("rows_audited", sa.BigInteger, nullable=False),
    sa.Column("rounds_read", sa.BigInteger, nullable=False),
    sa.Column("rounds_audited", sa.BigInteger, nullable=False),
    sa.Column("first_event", sa.DateTime),
    sa.Column("last_event", sa.DateTime),
    sa.Column("findings", sa.BigInteger, nullable=False),
    sa.Column("errors", sa.BigInteger, nullable=False),
)

run_dealers = sa.Table(
    "run_dealers",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("dealer_id", sa.Text, primary_key=True),
    sa.Column("tables", sa.Text),  # the tables dealt at, comma-separated
    sa.Column("rounds_dealt", sa.BigInteger, nullable=False),
    sa.Column("findings", sa.BigInteger, nullable=False),
    sa.Column("errors", sa.BigInteger, nullable=False),
)

findings = sa.Table(
    "findings",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("finding_id", sa.String(32), primary_key=True),
    sa.Column("file_sha256", sa.String(64)),  # the SHA-256 of `file`, from the run's inputs
    # the findings files' columns, as written
    sa.Column("table_id", sa.Text),
    sa.Column("shoe_id", sa.Text),
    sa.Column("round", sa.BigInteger),
    sa.Column("seq", sa.BigInteger),
    sa.Column("rule_id", sa.String(16), nullable=False),
    sa.Column("citation", sa.Text),
    sa.Column("severity", sa.String(10), nullable=False),
    sa.Column("message", sa.Text),
    sa.Column("expected", sa.Text),
    sa.Column("observed", sa.Text),
    sa.Column("amount", sa.Float),
    sa.Column("file", sa.Text),
    sa.Column("line", sa.BigInteger),
    sa.Column("game", sa.String(16)),
    sa.Column("field", sa.Text),
    sa.Column("dealer_id", sa.Text),
    sa.Index("findings_finding_id", "finding_id"),
    sa.Index("findings_table_rule", "table_id", "rule_id"),
    sa.Index("findings_dealer_rule", "dealer_id", "rule_id"),
)

# the columns of the findings files the store keeps, in the files' order
FINDING_COLUMNS = [c.name for c in findings.columns][3:]

_STATES_LISTED = ", ".join(f"'{state}'" for state in STATES)

_STATUSES_LISTED = ", ".join(f"'{status}'" for status in STATUSES)


def _dispositions_v2(into: sa.MetaData) -> list:
    """The dispositions table's columns and constraints as version 2 made them (a step
    of the past does not change: version 4 adds its columns with ALTER TABLE)."""
    return [
        sa.Column("disposition_id", sa.Integer, primary_key=True, autoincrement=True),
        # no foreign key: a finding_id is in `findings` once per run that found it
        sa.Column("finding_id", sa.String(32), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("decided_at", sa.DateTime, nullable=False),  # UTC
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id")),
        sa.CheckConstraint(f"state IN ({_STATES_LISTED})", name="dispositions_state"),
        # a finding's rows in order: its latest is the last entry of the index
        sa.Index("dispositions_finding", "finding_id", "disposition_id"),
    ]


dispositions = sa.Table(
    "dispositions",
    metadata,
    *_dispositions_v2(metadata),
    # version 4: four eyes
    sa.Column("status", sa.String(10), nullable=False, server_default="decided"),
    sa.Column("approved_by", sa.Text),  # an approved proposal's supervisor
    sa.Column("proposal_id", sa.Integer),  # the proposal an approval or rejection answers
    sa.CheckConstraint(f"status IN ({_STATUSES_LISTED})", name="dispositions_status"),
)

signoffs = sa.Table(
    "signoffs",
    metadata,
    sa.Column("signoff_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), nullable=False),
    sa.Column("signed_by", sa.Text, nullable=False),
    sa.Column("signed_at", sa.DateTime, nullable=False),  # UTC
    sa.Column("counts", sa.Text, nullable=False),  # JSON: the run's findings by disposition
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("withdrawn_at", sa.DateTime),  # UTC; null while the sign-off stands
    sa.Column("withdrawn_by", sa.Text),
    sa.Column("withdrawn_why", sa.Text),
    sa.Index("signoffs_run", "run_id", "signoff_id"),
    # at most one sign-off of a run stands
    sa.Index("signoffs_live", "run_id", unique=True,
             sqlite_where=sa.text("withdrawn_at IS NULL"),
             postgresql_where=sa.text("withdrawn_at IS NULL")),
)


review_sessions = sa.Table(
    "review_sessions",
    metadata,
    # SHA-256 (hex) of the session's random token: a copy of the store opens no session
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("reviewer", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),  # UTC
    sa.Column("last_seen", sa.DateTime, nullable=False),  # UTC, kept to the minute
    sa.Column("ended_at", sa.DateTime),  # UTC; null while the session is live
    sa.Column("ended_why", sa.String(24)),  # signout, idle, expired, password_changed, ...
    sa.Column("client", sa.Text),  # the address it signed in from
    # a fingerprint of the reviewer's password hash at sign-in: a changed password ends it
    sa.Column("password_mark", sa.String(16), nullable=False),
    sa.Index("review_sessions_reviewer", "reviewer", "ended_at"),
    sa.Index("review_sessions_live", "ended_at", "last_seen"),
)

review_events = sa.Table(
    "review_events",
    metadata,
    sa.Column("event_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.DateTime, nullable=False),  # UTC
    sa.Column("kind", sa.String(32), nullable=False),
    # who it was (for a failed sign-in: the name as typed, which may be no reviewer's)
    sa.Column("reviewer", sa.Text, nullable=False),
    sa.Column("client", sa.Text),
    sa.Column("run_id", sa.String(64)),
    sa.Column("finding_id", sa.String(32)),
    sa.Column("detail", sa.Text),  # JSON: what else the event says (a filter, a count...)
    sa.Index("review_events_at", "at"),
    sa.Index("review_events_kind", "kind", "at"),
    sa.Index("review_events_reviewer", "reviewer", "at"),
)

shoe_prints = sa.Table(
    "shoe_prints",
    metadata,
    sa.Column("print_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), nullable=False),
    sa.Column("table_id", sa.Text, nullable=False),
    sa.Column("shoe_id", sa.Text, nullable=False),
    sa.Column("game", sa.String(16), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # its place in the run's prints
    sa.Column("by_value", sa.Boolean, nullable=False),
    sa.Column("cards", sa.LargeBinary, nullable=False),  # one byte a card (shoe_order codes)
    sa.Index("shoe_prints_place", "run_id", "position", unique=True),
)

print_index = sa.Table(
    "print_index",
    metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id"), primary_key=True),
    sa.Column("by_value", sa.Boolean, primary_key=True),
    # Parquet of (hash UInt32, position UInt32): the run's shoes' kept gram hashes
    sa.Column("hashes", sa.LargeBinary, nullable=False),
)

APPEND_ONLY = "review_events is append-only: its rows are never changed or removed"


def _create_v1(conn: Connection) -> None:
    metadata.create_all(conn, tables=[runs, inputs, run_tables, run_dealers, findings])


def _create_v2(conn: Connection) -> None:
    then = sa.MetaData()
    runs.to_metadata(then)  # (what the foreign key names)
    sa.Table("dispositions", then, *_dispositions_v2(then)).create(conn)


def _create_v3(conn: Connection) -> None:
    metadata.create_all(conn, tables=[review_sessions, review_events])
    # the trail is append-only for every writer of the store, not only this auditor
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(
            "CREATE FUNCTION review_events_append_only() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN RAISE EXCEPTION '{APPEND_ONLY}'; END $$")
        conn.exec_driver_sql(
            "CREATE TRIGGER review_events_no_change BEFORE UPDATE OR DELETE ON review_events "
            "FOR EACH ROW EXECUTE FUNCTION review_events_append_only()")
        conn.exec_driver_sql(
            "CREATE TRIGGER review_events_no_truncate BEFORE TRUNCATE ON review_events "
            "FOR EACH STATEMENT EXECUTE FUNCTION review_events_append_only()")
    else:
        for action in ("UPDATE", "DELETE"):
            conn.exec_driver_sql(
                f"CREATE TRIGGER review_events_no_{action.lower()} BEFORE {action} ON "
                f"review_events BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END")


def _create_v4(conn: Connection) -> None:
    # ALTER TABLE ... ADD COLUMN: the same words on SQLite and PostgreSQL; the rows there
    # are decisions
    for sql in (
        "ALTER TABLE dispositions ADD COLUMN status VARCHAR(10) DEFAULT 'decided' NOT NULL "
        f"CONSTRAINT dispositions_status CHECK (status IN ({_STATUSES_LISTED}))",
        "ALTER TABLE dispositions ADD COLUMN approved_by TEXT",
        "ALTER TABLE dispositions ADD COLUMN proposal_id INTEGER",
    ):
        conn.exec_driver_sql(sql)
    metadata.create_all(conn, tables=[signoffs])


def _create_v5(conn: Connection) -> None:
    metadata.create_all(conn, tables=[shoe_prints, print_index])


# (version, what it does, the step): applied in order, each once
MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "runs, inputs, run_tables, run_dealers and findings", _create_v1),
    (2, "dispositions: what reviewers decided each finding is", _create_v2),
    (3, "review_sessions and review_events: sessions held in the store, the review's trail",
     _create_v3),
    (4, "four eyes (dispositions proposed, approved, rejected) and signoffs of runs",
     _create_v4),
    (5, "shoe_prints and print_index: each shoe's order, to find a shoe repeated on a "
        "later night",
     _create_v5),
]


def latest() -> int:
    return MIGRATIONS[-1][0]


def version(conn: Connection) -> int:
    """The store's schema version; 0 for a database with no store in it yet."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    return conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0


# PostgreSQL advisory lock key for creating and upgrading the schema ("auditor")
_LOCK = 0x61756469746F72


def migrate(conn: Connection) -> int:
    """Bring the store to the latest version, in the caller's transaction; returns it.

    The lock makes a second audit opening a new store wait for the first one's steps,
    then find nothing left to do: on SQLite the transaction's BEGIN IMMEDIATE (engine),
    on PostgreSQL an advisory lock held until the transaction ends (taken only when there
    is something to do, so that writers of runs do not queue on it)."""
    if version(conn) == latest():
        return latest()
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_LOCK)))
    now = version(conn)
    if now > latest():
        raise StoreError(
            f"the store's schema is version {now}, newer than this auditor's ({latest()}): "
            "use a newer auditor with it"
        )
    if now == 0:
        metadata.create_all(conn, tables=[schema_version])
    for number, description, step in MIGRATIONS:
        if number > now:
            step(conn)
            conn.execute(
                schema_version.insert().values(
                    version=number,
                    description=description,
                    applied_at=datetime.now(UTC).replace(tzinfo=None),
                )
            )
    return latest()
