"""The person's decisions on held calls (issue 19): list a conversation's approvals, approve or decline one.

Only the conversation's own subject sees or decides them (the conversation is found for its subject, as a step's
is). A decision is taken with one conditional update, so of two racing decisions one wins and the other is refused;
an approved call is then sent exactly as it was held, through the same path as a step's call, and its assertion
carries the approval's id. A refused decision sends nothing.
"""
from __future__ import annotations

from typing import Any

from service import tracing
from service.catalogue import violation
from service.conversations.held import APPROVED, DECLINED, EXPIRED, PENDING, approval_event
from service.conversations.offered import pinned_tool
from service.conversations.runs import Dispatcher, ModelCall, get_conversation, run_decided_call
from service.conversations.sessions import Session
from service.definition import ToolDefinition
from service.errors import REQUEST, approval_decided, approval_expired, invalid, not_entitled, not_found
from service.models import Approval, Conversation, Tool, now
from service.records import metrics
from service.text import is_text

#: The decisions a person may take, and the status each gives.
DECISIONS = {"approve": APPROVED, "decline": DECLINED}
#: The approval table's id column holds this many characters; a random id has 22.
MAX_APPROVAL_ID_CHARS = 64


def approval_view(row: Approval, display_names: dict[str, str], at: float) -> dict[str, Any]:
    """An approval as the person is shown it: the tool, the exact arguments, the turn, the expiry and the status."""
    status = EXPIRED if row.status == PENDING and row.expires_at <= at else row.status
    definition = row.definition
    return {"id": row.id, "status": status, "tool": row.tool, "display_name": display_names.get(row.tool, row.tool),
            "description": definition.get("description", ""), "version": row.tool_version, "call_id": row.call_id,
            "arguments": row.arguments, "turn": row.turn, "created_at": row.created_at,
            "expires_at": row.expires_at, "decided_at": row.decided_at}


def _display_names(session: Session, names: set[str]) -> dict[str, str]:
    if not names:
        return {}
    tools = Tool.select(Tool.name, Tool.display_name).where(Tool.organization == session.organization,
                                                            Tool.name.in_(sorted(names)))
    return {t.name: t.display_name or t.name for t in tools}


def _views(session: Session, rows: list[Approval]) -> list[dict[str, Any]]:
    names, at = _display_names(session, {r.tool for r in rows}), now()
    return [approval_view(r, names, at) for r in rows]


def list_approvals(session: Session, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation's approvals, pending and decided, oldest first; 404 unless it is the session subject's."""
    conversation = get_conversation(session, conversation_id)
    return _views(session, list(Approval.select().where(Approval.conversation == conversation)
                                .order_by(Approval.created_at, Approval.id)))


def approval_views(session: Session, conversation: Conversation, ids: list[str]) -> list[dict[str, Any]]:
    """The conversation's approvals of these ids, in their order, as `list_approvals` shows them."""
    rows = {r.id: r for r in Approval.select().where(Approval.conversation == conversation, Approval.id.in_(ids))}
    return _views(session, [rows[i] for i in ids if i in rows])


def decide(session: Session, conversation_id: str, approval_id: str, body: Any, dispatcher: Dispatcher, *,
           assertions: list[str | None] | None = None) -> dict[str, Any]:
    """Approve or decline a held call: `{"approval": its view, "result": the call's step result}`.

    404 for another subject's or conversation's approval (never told apart from none), 409 once decided or past its
    expiry, 403 for a session token without the tool's entitlement: each sends nothing. The result is kept on the
    approval, for the model when its paused turn goes on. A caller that shows what was sent (the playground) passes
    `assertions` to receive the approved call's signed assertion.
    """
    decision = body.get("decision") if isinstance(body, dict) else None
    if not isinstance(decision, str) or decision not in DECISIONS:
        raise invalid([violation("decision", "decision-format")], REQUEST)
    conversation = get_conversation(session, conversation_id)
    # An id no approval could have (a NUL, a lone surrogate, past the column) is never sent to the database.
    row = (Approval.get_or_none(Approval.id == approval_id, Approval.conversation == conversation)
           if is_text(approval_id) and len(approval_id) <= MAX_APPROVAL_ID_CHARS else None)
    if row is None or row.subject != session.subject:
        raise not_found("approval")
    definition = ToolDefinition.from_dict(row.definition)
    if definition.required_entitlement is not None and definition.required_entitlement not in session.entitlements:
        raise not_entitled()
    status = DECISIONS[decision]
    # The call's slot is held before the decision is taken, so an approval refused for the organization's share of
    # calls in flight (429) stays pending rather than being used up unsent.
    with dispatcher.slots.held(session.organization.id, 1 if status == APPROVED else 0):
        decided_at = now()
        taken = (Approval.update(status=status, decided_at=decided_at)
                 .where(Approval.id == row.id, Approval.status == PENDING, Approval.expires_at > decided_at)
                 .execute())
        if not taken:
            current = Approval.get_by_id(row.id)
            if current.status != PENDING:
                raise approval_decided(current.status)
            raise approval_expired()
        metrics.approvals(session.organization.slug, row.tool, status)
        tracing.event("approval decided", approval_event(row.id, row.tool, row.call_id, conversation.id, status))
        call = ModelCall(id=row.call_id, name=row.tool, arguments=row.arguments, approval=row.id)
        tool = pinned_tool(row.tool, row.tool_version, definition)
        result = run_decided_call(session, conversation, row.turn, call, tool, dispatcher,
                                  approved=status == APPROVED, assertions=assertions)
    Approval.update(result=result).where(Approval.id == row.id).execute()
    row.status, row.decided_at = status, decided_at
    return {"approval": approval_view(row, _display_names(session, {row.tool}), decided_at), "result": result}
