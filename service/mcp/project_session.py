"""A project server's MCP session: a conversation, named by a signed id.

`initialize` opens a conversation exactly as `POST /v1/conversations` does; the `Mcp-Session-Id` it answers with is
signed (TOOLGATE_SECRET_KEY, a salt of its own) and names that conversation, the negotiated protocol revision and
whether the client can be asked (elicitation). So any instance reads a session without a lookup of its own, and the
conversation row decides the rest on every request: it must be the token's subject's in the token's organization,
of the project in the URL, and not ended. `DELETE` ends it on that row, so every instance sees the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.conversations import Session
from service.mcp import protocol
from service.models import Conversation, now
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
    (a stranger's, another project's and an ended one are never told apart). One statement, its text made once:
    every request of a session reads it, and building it with peewee's query builder cost more than running it."""
    if not is_text(project) or not is_text(conversation_id):
        return None
    database = Conversation._meta.database
    row = database.execute_sql(_conversation_sql(database.param), (
        conversation_id, session.organization.id, session.subject, project)).fetchone()
    if row is None:
        return None
    return Conversation(**{f.name: f.python_value(v) for f, v in zip(Conversation._meta.sorted_fields, row)})


@lru_cache(maxsize=2)
def _conversation_sql(param: str) -> str:
    columns = ", ".join(f"c.{f.column_name}" for f in Conversation._meta.sorted_fields)
    return (f"SELECT {columns} FROM conversation c JOIN project p ON p.id = c.project_id "
            f"WHERE c.id = {param} AND c.organization_id = {param} AND c.subject = {param} "
            f"AND c.ended_at IS NULL AND p.name = {param}")


def end(conversation: Conversation) -> None:
    """End the conversation as an MCP session: its id is refused (404) from now on, on every instance."""
    Conversation.update(ended_at=now()).where(Conversation.id == conversation.id,
                                              Conversation.ended_at.is_null()).execute()
