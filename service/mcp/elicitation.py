"""Asking the person in the MCP client to approve a held call (`elicitation/create`), and waiting for the answer.

A `tools/call` of a tool that requires approval holds the call as a step does (the approval row, the same
`GET /v1/conversations/{id}/approvals` lists, with the same expiry). When the client declared elicitation in form mode
and reads event streams, the POST is answered as a stream: first an `elicitation/create` request naming the tool and
the exact arguments, whose id names the approval (`approval:<id>`); the client's answer arrives as another POST, maybe
at another instance, which decides the approval exactly as the approvals route does (`decide`: approve sends the held
call once with the `approval` claim; decline or cancel sends nothing). The waiting stream learns the decision from the
approval row: at once when the answer reached this process (a gevent event), else by reading the row every
MCP_DECISION_POLL_SECONDS, never past the approval's expiry, holding no connection and no gate place meanwhile.
See docs/decisions.md, "A project server waits on the approval row".
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterator

from gevent.event import Event

from service.conversations import Dispatcher, Session, decide
from service.conversations.approvals import approval_views
from service.conversations.held import PENDING
from service.database import released
from service.dispatch import DECLINED, failure_object
from service.limits import MCP_DECISION_POLL_SECONDS
from service.mcp.protocol import INVALID_PARAMS, ProtocolError, Reply
from service.models import Approval, Conversation

#: An elicitation's request id is this and the approval's id, so the answer names what it decides.
ID_PREFIX = "approval:"
#: A comment on the waiting stream this often, so a client that has gone is noticed (its write fails).
HEARTBEAT_SECONDS = 15.0
#: The answers elicitation offers, and the decision each is.
DECISIONS = {"accept": "approve", "decline": "decline", "cancel": "decline"}

#: Streams of this process waiting for an approval's decision, by approval id; and those whose client answered with an
#: error (it could not ask the person): they stop waiting and answer that the call is pending.
_waiting: dict[str, Event] = {}
_unanswered: set[str] = set()


def can_elicit(capabilities: Any) -> bool:
    """Whether a client's declared capabilities include elicitation in form mode: 2025-06-18's `{}` (form was its
    only mode), or 2025-11-25's naming `form`."""
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return "form" in elicitation or "url" not in elicitation


def elicitation_request(view: dict[str, Any], protocol_version: str) -> dict[str, Any]:
    """The `elicitation/create` request asking the person to approve one held call, naming the tool and the exact
    arguments; accepting the (empty) form approves it."""
    arguments = json.dumps(view["arguments"], indent=2, ensure_ascii=False)
    expires = time.strftime("%H:%M:%S UTC", time.gmtime(view["expires_at"]))
    message = (f"Approve this call of {view['display_name']} ({view['tool']})?\n{view['description']}\n\n"
               f"Arguments:\n{arguments}\n\nAccept sends exactly this call once; decline sends nothing. "
               f"The request expires at {expires}.")
    params: dict[str, Any] = {"message": message, "requestedSchema": {"type": "object", "properties": {}}}
    if protocol_version >= "2025-11-25":
        params["mode"] = "form"
    return {"jsonrpc": "2.0", "id": ID_PREFIX + view["id"], "method": "elicitation/create", "params": params}


def event(message: dict[str, Any]) -> str:
    """One JSON-RPC message as a server-sent event."""
    return f"event: message\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"


def ask_and_wait(session: Session, conversation: Conversation, held: dict[str, Any], protocol_version: str,
                 finish: Callable[[dict[str, Any]], str], *, clock: Callable[[], float] = time.time,
                 poll: float = MCP_DECISION_POLL_SECONDS) -> Iterator[str]:
    """The event stream of a `tools/call` whose call was held: the elicitation, then (`finish`) the call's result once
    decided: the decided call's result, `declined` for an approval that expired undecided, or the pending one when
    the client could not ask the person."""
    approval_id = held["approval"]["id"]
    view = approval_views(session, conversation, [approval_id])[0]
    waiting = _waiting[approval_id] = Event()
    try:
        yield event(elicitation_request(view, protocol_version))
        deadline, beat = view["expires_at"], clock()
        while True:
            result = decided(Approval.get_by_id(approval_id), clock())
            if result is not None or approval_id in _unanswered or clock() >= deadline:
                break
            with released():  # no connection, no gate place, while the person takes their time
                waiting.wait(min(poll, max(deadline - clock(), 0)))
            waiting.clear()
            if clock() - beat >= HEARTBEAT_SECONDS:
                beat = clock()
                yield ": waiting for the person's decision\n\n"
        yield finish(result if result is not None else held)
    finally:
        _waiting.pop(approval_id, None)
        _unanswered.discard(approval_id)


def decided(row: Approval, at: float) -> dict[str, Any] | None:
    """The step result an approval's decision gave, once its call has answered; `declined` past its expiry undecided
    (it can no longer be approved, and was never sent); None while it may still be decided or is being sent."""
    if row.status != PENDING:
        return row.result
    if row.expires_at <= at:
        return {"id": row.call_id, "name": row.tool, "error": failure_object(DECLINED)}
    return None


def answer(session: Session, conversation: Conversation, reply: Reply, dispatcher: Dispatcher) -> None:
    """The client's answer to an elicitation: decide the approval it names as the approvals route does (404 for one
    not in this session's conversation, 409 once decided or expired), then wake the stream waiting for it here."""
    if not isinstance(reply.id, str) or not reply.id.startswith(ID_PREFIX):
        raise ProtocolError(404, INVALID_PARAMS, "Not Found: this server sent no request of that id.")
    approval_id = reply.id[len(ID_PREFIX):]
    try:
        if reply.error is not None:  # the client could not ask: the call stays pending for the approvals route
            if approval_id in _waiting:
                _unanswered.add(approval_id)
            return
        action = (reply.result or {}).get("action")
        if action not in DECISIONS:
            raise ProtocolError(400, INVALID_PARAMS, 'An elicitation result\'s action is "accept", "decline" or '
                                                     '"cancel".')
        decide(session, conversation.id, approval_id, {"decision": DECISIONS[action]}, dispatcher)
    finally:
        waiting = _waiting.get(approval_id)
        if waiting is not None:
            waiting.set()
