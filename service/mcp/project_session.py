"""A project server's MCP session: a conversation, named by a signed id.

`initialize` opens a conversation exactly as `POST /v1/conversations` does; the `Mcp-Session-Id` it answers with is
signed (TOOLGATE_SECRET_KEY, a salt of its own) and names that conversation, the negotiated protocol revision and
whether the client can be asked (elicitation). So any instance reads a session without a lookup of its own, and the
conversation row decides the rest on every request: it must be the token's subject's in the token's organization,
of the project in the URL, and not ended. `DELETE` ends it on that row, so every instance sees the end.

Every request of a session reads that row, in one statement whose text is made once. What never changes is
remembered: a session id's signature, once verified (the id is the signed payload, so it opens the same way every
time), and the conversation's row, once read (only `ended_at` ever changes, and it is in the statement's WHERE).
So the statement of a known session selects no column, and none is turned into a model: it only says yes or no.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from service.conversations import Session
from service.database import generation
from service.limits import MAX_KNOWN_MCP_SESSIONS
from service.mcp import protocol
from service.models import Conversation, now
from service.text import is_text

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class ProjectSession:
    """What a project server's session id vouches for."""

    conversation_id: str
    protocol_version: str
    #: The client declared elicitation in form mode: a call needing approval asks the person in the session.
    elicitation: bool


def names_another_organization(named: list[str], slug: str) -> bool:
    """Whether a request's `?org=` values (the RFC 9728 resource's) name an organization other than the token's:
    a project of another organization is not found, on the plain path and in the view alike."""
    return any(value and value != slug for value in named)


def issue(secret: str, conversation_id: str, protocol_version: str, elicitation: bool) -> str:
    """The session id of a conversation just opened by `initialize`."""
    payload = {"c": conversation_id, "v": protocol_version, "e": elicitation}
    return protocol.serializer(secret, protocol.PROJECT_SESSION_SALT).dumps(payload)


#: Session ids whose signature was verified: (secret, id) → what it vouches for. Only ids this service signed are
#: kept, so a stranger's guesses never fill it.
_verified: OrderedDict[tuple[str, str], ProjectSession] = OrderedDict()
#: Conversations of sessions, as read: (database binding, conversation id) → its row, which never changes but for
#: `ended_at` (read again by every request's statement).
_conversations: OrderedDict[tuple[int, str], Conversation] = OrderedDict()


def read(secret: str, session_id: str) -> ProjectSession | None:
    """The session a presented id vouches for, or None if this service did not sign it as a project session."""
    known = _verified.get((secret, session_id))
    if known is not None:
        return known
    payload = protocol.signed_payload(secret, protocol.PROJECT_SESSION_SALT, session_id)
    if payload is None:
        return None
    conversation_id, version, elicitation = payload.get("c"), payload.get("v"), payload.get("e")
    if (not isinstance(conversation_id, str) or version not in protocol.SUPPORTED_VERSIONS
            or not isinstance(elicitation, bool)):
        return None
    return _remember(_verified, (secret, session_id), ProjectSession(conversation_id, version, elicitation))


def conversation_of(session: Session, project: str, conversation_id: str) -> Conversation | None:
    """The session's conversation: the token's subject's, in its organization, of `project`, not ended; else None
    (a stranger's, another project's and an ended one are never told apart). One statement on every request, on
    whatever instance, its text made once (peewee's query builder cost more than running it); its row is read only
    the first time (see the module's docstring)."""
    if not is_text(project) or not is_text(conversation_id):
        return None
    key = (generation(), conversation_id)
    known = _conversations.get(key)
    database = Conversation._meta.database
    row = database.execute_sql(_conversation_sql(database.param, known is None), (
        conversation_id, session.organization.id, session.subject, project)).fetchone()
    if row is None:
        return None
    if known is None:
        known = _remember(_conversations, key, Conversation(
            **{f.name: f.python_value(v) for f, v in zip(Conversation._meta.sorted_fields, row)}))
    return known


@lru_cache(maxsize=4)
def _conversation_sql(param: str, columns: bool) -> str:
    """The statement of a session's request: with the conversation's columns (the first), or only whether it may
    go on (a known conversation). The WHERE is the same, whatever the columns."""
    selected = ", ".join(f"c.{f.column_name}" for f in Conversation._meta.sorted_fields) if columns else "1"
    return (f"SELECT {selected} FROM conversation c JOIN project p ON p.id = c.project_id "
            f"WHERE c.id = {param} AND c.organization_id = {param} AND c.subject = {param} "
            f"AND c.ended_at IS NULL AND p.name = {param}")


def _remember(cache: OrderedDict[K, V], key: K, value: V) -> V:
    """Keep `value` under `key`, forgetting the oldest past MAX_KNOWN_MCP_SESSIONS."""
    cache[key] = value
    if len(cache) > MAX_KNOWN_MCP_SESSIONS:
        cache.popitem(last=False)
    return value


def end(conversation: Conversation) -> None:
    """End the conversation as an MCP session: its id is refused (404) from now on, on every instance."""
    Conversation.update(ended_at=now()).where(Conversation.id == conversation.id,
                                              Conversation.ended_at.is_null()).execute()
