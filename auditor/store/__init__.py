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
- dispositions: what reviewers decided each finding is (append-only, carried across runs
  by finding_id), proposals awaiting a second reviewer (four eyes) among them; carried:
  the dispositions a run's findings had when it was audited, in its folder for the report
- signoffs: a supervisor's sign-off of a run, withdrawn when one of its findings changes

This module imports no database library, so that the report can read a comparison and
the dispositions without one.
"""

from __future__ import annotations

# What a reviewer may decide a finding is (dispositions), in the order they are shown.
# A finding nobody has decided on yet is "open".
STATES = ("open", "confirmed", "explained", "not_an_error", "corrected")
MEANINGS: dict[str, str] = {
    "open": "Not decided yet: every finding is open until a reviewer decides what it is, "
    "and one may be set open again to reopen it.",
    "confirmed": "A breach of the paragraph cited, as recorded: the game was dealt or "
    "settled against the rules (a dealer's error, for one), and it stands.",
    "explained": "What the log records breaks the rule, for a cause the note gives and the "
    "reviewer accepts, such as a table-system fault or a supervisor's ruling on the floor.",
    "not_an_error": "No breach: what was recorded is allowed (a house practice the rules "
    "permit), or the finding should not have been made.",
    "corrected": "A breach that has been put right: the patron paid or refunded, or the "
    "record corrected; the note says how.",
}


# Four eyes: these dispositions are proposals until a second reviewer, a supervisor,
# approves them; a finding whose latest disposition is a proposal counts as "pending".
PROPOSABLE = ("explained", "not_an_error")
PENDING = "pending"
PENDING_MEANING = (
    "Proposed, not decided: with four eyes, \"explained\" and \"not an error\" wait for "
    "a supervisor other than the reviewer who proposed them to approve (or reject) them.")
# What a finding is counted as, in this order: open, pending, then the decided states.
TALLIED = (STATES[0], PENDING, *STATES[1:])
# The kinds of disposition row (dispositions.status): a decision; a proposal (four eyes);
# a proposal approved (the state proposed, `approved_by` the supervisor); a proposal
# rejected (the finding open again, `reviewer` the supervisor).
STATUSES = ("decided", "proposed", "approved", "rejected")


def state_label(state: str) -> str:
    """A state as words: "not_an_error" is "not an error"."""
    return state.replace("_", " ")


def tallied(d: dict | None) -> str:
    """What a finding counts as, from its latest disposition (None: open): "pending"
    while that is a proposal, else its state."""
    if d is None:
        return STATES[0]
    return PENDING if d.get("status") == "proposed" else d["state"]


class StoreError(Exception):
    """The store cannot be opened, read or written: one line, with no password in it."""
