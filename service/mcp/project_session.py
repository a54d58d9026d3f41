"""A project server's MCP session: a conversation, named by a signed id.

`initialize` opens a conversation exactly as `POST /v1/conversations` does; the `Mcp-Session-Id` it answers with is
signed (TOOLGATE_SECRET_KEY, a salt of its own) and names that conversation, the negotiated protocol revision and
whether the client can be asked (elicitation). So any instance reads a session without a lookup of its own, and the
conversation row decides the rest on every request: it must be the token's subject's in the token's organization,
of the project in the URL, and not ended. `DELETE` ends it on that row, so every instance sees the end.
"""
from __future__ import annotations

from dataclasses import dataclass

from service.conversations import Session
from service.mcp import protocol
from service.models import Conversation, Project, now
from service.text import is_text


@dataclass(frozen=True)
class ProjectSession:
    """What a project server's session id vouches for."""

    conversation_id: str
    protocol_version: str
    #: The client declared elicitation in form mode: a call needing approval asks the person in the session.
    elicitation: bool


def issue(secret: str, conversation_id: str, protocol_version: str, elicitation: bool) -> str:
    """The session id of a conversation just opened by `initialize`."""
    payload = {"c": conversation_id, "v": protocol_version, "e": elicitation}
    return protocol.serializer(secret, protocol.PROJECT_SESSION_SALT).dumps(payload)


def read(secret: str, session_id: str) -> ProjectSession | None:
    """The session a presented id vouches for, or None if this service did not sign it as a project session."""
    payload = protocol.signed_payload(secret, protocol.PROJECT_SESSION_SALT, session_id)
    if payload is None:
        return None
    conversation_id, version, elicitation = payload.get("c"), payload.get("v"), payload.get("e")
    if (not isinstance(conversation_id, str) or version not in protocol.SUPPORTED_VERSIONS
            or not isinstance(elicitation, bool)):
        return None
    return ProjectSession(conversation_id, version, elicitation)


def conversation_of(session: Session, project: str, conversation_id: str) -> Conversation | None:
    """The session's conversation: the token's subject's, in its organization, of `project`, not ended; else None
    (a stranger's, another project's and an ended one are never told apart)."""
    if not is_text(project):
        return None
    return (Conversation.select(Conversation).join(Project)
            .where(Conversation.id == conversation_id, Conversation.organization == session.organization,
                   Conversation.subject == session.subject, Conversation.ended_at.is_null(),
                   Project.name == project)
            .first())


def end(conversation: Conversation) -> None:
    """End the conversation as an MCP session: its id is refused (404) from now on, on every instance."""
    Conversation.update(ended_at=now()).where(Conversation.id == conversation.id,
                                              Conversation.ended_at.is_null()).execute()
