"""Calls held for the person's approval (issue 19): what a step stores for them and what the model is told.

A call of a tool that requires approval is validated as every call is (unknown tool, invalid arguments), then held
unsent: the step stores it with exactly what would be sent, and the model learns only that it awaits approval.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from service.conversations.offered import PinnedTool
from service.conversations.sessions import Session

PENDING, APPROVED, DECLINED = "pending", "approved", "declined"
#: How a pending approval past its expiry is listed: it can no longer be decided.
EXPIRED = "expired"


@dataclass(frozen=True)
class Held:
    """A call held for approval, in place of a call's outcome in a step."""

    approval_id: str
    expires_at: float
    #: No argument failed to fit (the playground asks every outcome which did).
    found: tuple[tuple[str, str], ...] = ()

    def to_result(self) -> dict[str, Any]:
        """The model's view: the call awaits the person's approval, and nothing else."""
        return {"approval": {"id": self.approval_id, "status": PENDING, "expires_at": self.expires_at}}


def approval_expiry(session: Session, lifetime_seconds: float, at: float) -> float:
    """When an approval made at `at` expires: its lifetime, but never past the session token that made it."""
    return min(at + lifetime_seconds, float(session.claims.expires_at))


def approval_event(approval_id: str, tool: str, call_id: str, conversation_id: str, status: str) -> dict[str, str]:
    """The attributes of an approval's span event (held, decided): ids and its status, never its arguments."""
    return {"toolgate.approval.id": approval_id, "gen_ai.tool.name": tool, "gen_ai.tool.call.id": call_id,
            "gen_ai.conversation.id": conversation_id, "toolgate.approval.status": status}


def hold(session: Session, conversation_id: str, turn: str, call_id: str, tool: PinnedTool, arguments: dict,
         lifetime_seconds: float, at: float) -> tuple[Held, dict[str, Any]]:
    """The held call, and the approval row to store for it (random id; the definition and arguments as sent)."""
    held = Held(secrets.token_urlsafe(16), approval_expiry(session, lifetime_seconds, at))
    row = {"id": held.approval_id, "organization": session.organization.id, "conversation": conversation_id,
           "turn": turn, "call_id": call_id, "tool": tool.name, "tool_version": tool.version,
           "definition": tool.definition.to_dict(), "arguments": arguments, "subject": session.subject,
           "status": PENDING, "created_at": at, "expires_at": held.expires_at, "decided_at": None}
    return held, row
