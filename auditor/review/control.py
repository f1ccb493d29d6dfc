"""Four eyes and sign-offs (issue 38): what a disposition set in the review application
records, and what a supervisor does, each in the caller's transaction with its trail.

- `decide`: a disposition set on findings (one, or a selection). With four eyes,
  "explained" and "not an error" (PROPOSABLE) are recorded as proposals: the findings are
  pending until a supervisor approves them. Any change withdraws the standing sign-off of
  every run that found one of the findings (signoffs.withdraw_touching), each withdrawal
  in the trail (`signoff_withdrawn`, with the first finding that caused it).
- `answer`: a supervisor approves or rejects a proposal, never their own (trail: `approve`,
  `reject`).
- `sign_off`: a supervisor signs a run off once none of its findings is open or pending
  (trail: `signoff`).

Who may do what (the roles of the reviewers file) is the routes' to check: any signed-in
reviewer decides; only a supervisor answers proposals and signs runs off, with four eyes
or without. Every step takes signoffs.lock first, so that a sign-off and a change to one
of its run's findings never cross.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from ..store import PROPOSABLE, STATES, signoffs, state_label
from ..store import dispositions as dsp
from . import trail


@dataclass
class Decided:
    """What `decide` recorded: how many rows, whether they are proposals, and the
    sign-offs withdrawn."""

    count: int
    proposed: bool
    withdrawn: list[dict[str, Any]] = field(default_factory=list)


def proposes(state: str, four_eyes: bool) -> bool:
    """Whether setting STATE records a proposal rather than a decision."""
    return four_eyes and state in PROPOSABLE


def _withdraw(conn: Connection, ids: list[str], by: str, change: str, client: str | None,
              detail: dict[str, Any]) -> list[dict[str, Any]]:
    withdrawn = signoffs.withdraw_touching(conn, ids, by, change)
    for signoff in withdrawn:
        touched = signoff["findings"]
        trail.record(conn, "signoff_withdrawn", reviewer=by, client=client,
                     run_id=signoff["run_id"], finding_id=touched[0],
                     detail={**detail, "why": change, "findings": len(touched),
                             "signed_by": signoff["signed_by"],
                             "signed_at": signoff["signed_at"],
                             "signoff_id": signoff["signoff_id"]})
    return withdrawn


def decide(conn: Connection, ids: list[str], state: str, note: str, reviewer: str, *,
           run_id: str | None, four_eyes: bool, client: str | None) -> Decided:
    """Set STATE on the findings IDS (a proposal with four eyes, where PROPOSABLE)."""
    signoffs.lock(conn)
    proposed = proposes(state, four_eyes)
    status = "proposed" if proposed else "decided"
    count = dsp.record(conn, ids, state, note, reviewer, run_id=run_id, status=status)
    label = state_label(state)
    change = (f"{label} proposed by {reviewer}" if proposed
              else f"set {label} by {reviewer}")
    if len(ids) > 1:
        change += f" on {count:,} findings"
    withdrawn = _withdraw(conn, ids, reviewer, change, client,
                          {"disposition": state, "status": status})
    return Decided(count, proposed, withdrawn)


def answer(conn: Connection, run_id: str, finding_id: str, proposal_id: int, supervisor: str,
           approve: bool, note: str, client: str | None) -> dict[str, Any]:
    """Approve or reject the proposal PROPOSAL_ID of FINDING_ID as SUPERVISOR (Superseded,
    OwnProposal: dispositions.answer); returns the row appended."""
    signoffs.lock(conn)
    proposal, row = dsp.answer(conn, finding_id, proposal_id, supervisor, approve, note,
                               run_id=run_id)
    trail.record(conn, "approve" if approve else "reject", reviewer=supervisor, client=client,
                 run_id=run_id, finding_id=finding_id,
                 detail={"disposition": proposal["state"], "proposed_by": proposal["reviewer"],
                         "proposal_id": proposal_id, "note": note})
    verb = "approved" if approve else "rejected"
    _withdraw(conn, [finding_id], supervisor,
              f"{state_label(proposal['state'])} {verb} by {supervisor}", client,
              {"disposition": row["state"], "status": row["status"]})
    return row


def sign_off(conn: Connection, run_id: str, supervisor: str, note: str,
             client: str | None) -> dict[str, Any]:
    """Sign RUN_ID off as SUPERVISOR (NotReady, AlreadySigned: signoffs.sign)."""
    signoffs.lock(conn)
    signed = signoffs.sign(conn, run_id, supervisor, note)
    trail.record(conn, "signoff", reviewer=supervisor, client=client, run_id=run_id,
                 detail={"counts": signed["counts"], "note": note,
                         "signoff_id": signed["signoff_id"]})
    return signed


def open_or_pending(counted: dict[str, int]) -> int:
    """How many of a run's findings wait for a reviewer (open) or a supervisor (pending)."""
    return counted.get(STATES[0], 0) + counted.get("pending", 0)
