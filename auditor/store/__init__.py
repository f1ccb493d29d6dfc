"""The findings store: every audit run, its input files and its findings, in one database.

`auditor audit ... --store URL` writes a run after its output files are written, in one
transaction (a failed audit writes nothing); `auditor history --store URL` reads the runs
back: what is new since the run before, what keeps coming back per table, dealer or rule.
A URL selects the database (SQLAlchemy Core): `sqlite:///audits.db`, a file and no
server, or `postgresql+psycopg://user@host/db` for a team.

- schema: the tables, and the versioned steps that create and upgrade them
- engine: opening a store from its URL (SQLite's write lock, PostgreSQL's timeouts)
- ids: finding_id, the same for the same finding on the same event in every run
- write: one run in one transaction
- compare: a run against the run before it (new, still present, no longer present)
- history: runs over time and the rules that recur; show: the same as text;
  history_command: `auditor history`
- record: what `auditor audit --store` does, step by step

This module imports no database library, so that the report can read a comparison
without one.
"""

from __future__ import annotations


class StoreError(Exception):
    """The store cannot be opened, read or written: one line, with no password in it."""
