"""Whole turns paused for the person's approval (issue 19), and what the model is handed when they go on.

A step that holds a call stops its turn `awaiting-approval`; the platform's note in the history names the step's
approvals, and the turn lock is let go while the person takes their time. The conversation awaits approval as long
as that note is its last message. Once every approval is decided, a message without text continues the turn: each
held call's decided result (kept on its approval row when the decision's call answered) is stored in the history,
then the model is handed the conversation with those results in place of the pending ones. An approval that expired
undecided was never sent, and never will be: the model is handed it as declined. No Flask here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from service.catalogue import violation
from service.config import Config
from service.conversations.approvals import approval_views
from service.conversations.held import APPROVED, PENDING
from service.conversations.offered import pinned_tool
from service.conversations.runs import Dispatcher, ModelCall, run_decided_call
from service.conversations.sessions import Session
from service.definition import ToolDefinition
from service.dispatch import DECLINED, TIMED_OUT, failure_object
from service.errors import approvals_pending, turn_awaits_continue
from service.models import Approval, Conversation, Message, now

#: The stop reason of a turn whose step held a call for the person's approval.
AWAITING_APPROVAL = "awaiting-approval"

#: An approved call whose result was never kept (its process died while it was being sent) is taken as still being
#: sent for a call's deadline and this margin after the decision; past that the model is told it timed out.
SENDING_MARGIN_SECONDS = 5.0


@dataclass(frozen=True)
class Paused:
    """A turn awaiting approval: its id and the approvals its last step held, in the step's calls' order."""

    turn: str
    approvals: tuple[str, ...]


def held_approvals(results: Sequence[dict[str, Any]]) -> list[str]:
    """The ids of the approvals a step's results are waiting on (empty for a step that held nothing)."""
    return [r["approval"]["id"] for r in results if "approval" in r]


def pause_note(stopped: dict[str, str], approvals: list[str]) -> dict[str, Any]:
    """The platform's note in the history that a turn paused, naming the approvals it awaits."""
    return {"stopped": stopped, "approvals": approvals}


def paused_turn(rows: Sequence[Message]) -> Paused | None:
    """The turn the conversation awaits approval for (its last message pauses it), or None."""
    if not rows or rows[-1].role != "platform":
        return None
    content = rows[-1].content
    if (content.get("stopped") or {}).get("reason") != AWAITING_APPROVAL:
        return None
    return Paused(rows[-1].turn, tuple(content.get("approvals", ())))


def steps_taken(rows: Sequence[Message], turn: str) -> int:
    """How many steps of calls the turn has run so far (each stored its calls before running them)."""
    return sum(1 for r in rows if r.turn == turn and r.role == "assistant" and r.content.get("calls"))


def refuse_message(conversation: Conversation, paused: Paused, config: Config) -> None:
    """Refuse a new message while a turn is paused: 409 `approvals-pending` naming each undecided approval, or
    `turn-awaits-continue` once none is."""
    _undecided_or_raise(_approvals(conversation, paused), now(), config)
    raise turn_awaits_continue()


def hand_over(session: Session, conversation: Conversation, paused: Paused,
              dispatcher: Dispatcher) -> list[dict[str, Any]]:
    """The decided result of each held call, in the step's order, once all are decided (409 `approvals-pending`
    otherwise, changing nothing): `[{"approval": its view, "result": what the model is handed}]`.

    An expired approval is handed over as declined, and recorded in the call log as such (nothing was sent)."""
    rows = _approvals(conversation, paused)
    _undecided_or_raise(rows, now(), dispatcher.config)
    results = []
    for approval_id in paused.approvals:
        row = rows.get(approval_id)
        if row is None:  # gone with a purge: nothing of it can be sent now
            continue
        results.append(_decided_result(session, conversation, row, dispatcher))
    views = approval_views(session, conversation, [r["id"] for r in results])
    return [{"approval": view, "result": result["result"]} for view, result in zip(views, results)]


def _approvals(conversation: Conversation, paused: Paused) -> dict[str, Approval]:
    """The paused turn's approval rows, by id, in the step's order."""
    found = {r.id: r for r in Approval.select().where(Approval.conversation == conversation,
                                                      Approval.id.in_(list(paused.approvals)))}
    return {i: found[i] for i in paused.approvals if i in found}


def _sending_until(row: Approval, config: Config) -> float:
    return (row.decided_at or 0.0) + config.call_deadline_seconds + SENDING_MARGIN_SECONDS


def _undecided_or_raise(rows: dict[str, Approval], at: float, config: Config) -> None:
    undecided = []
    for row in rows.values():
        if row.status == PENDING and row.expires_at > at:
            undecided.append(violation(f"approvals/{row.id}", "approval-pending"))
        elif row.status == APPROVED and row.result is None and _sending_until(row, config) > at:
            undecided.append(violation(f"approvals/{row.id}", "approval-sending"))
    if undecided:
        raise approvals_pending(undecided)


def _decided_result(session: Session, conversation: Conversation, row: Approval,
                    dispatcher: Dispatcher) -> dict[str, Any]:
    if row.result is not None:
        return {"id": row.id, "result": row.result}
    if row.status == APPROVED:  # sent, perhaps, but its answer was lost with the process that sent it
        return {"id": row.id, "result": {"id": row.call_id, "name": row.tool, "error": failure_object(TIMED_OUT)}}
    if row.status == PENDING:  # expired undecided: recorded as declined, the model's view of it
        call = ModelCall(id=row.call_id, name=row.tool, arguments=row.arguments, approval=row.id)
        tool = pinned_tool(row.tool, row.tool_version, ToolDefinition.from_dict(row.definition))
        return {"id": row.id, "result": run_decided_call(session, conversation, row.turn, call, tool, dispatcher,
                                                         approved=False)}
    # Declined, its result lost before it was kept: a declined call's result is always the same.
    return {"id": row.id, "result": {"id": row.call_id, "name": row.tool, "error": failure_object(DECLINED),
                                     "latency_ms": 0}}
