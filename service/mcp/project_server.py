"""What a project server answers, without Flask: `initialize`, `tools/list` and `tools/call` for one person.

Each is the REST conversation's own code underneath: `initialize` opens a conversation (`open_conversation`, which
runs the session-start tools the token is entitled to), `tools/list` is the conversation's offered tools, and a
`tools/call` is a step of one call (`parse_calls`, `run_model_step`): the same argument checks, subject from the
session, signed assertion, deadline and cap, held approvals, call record, metrics and share of calls in flight.
Only the shapes here are MCP's.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from service.conversations import Dispatcher, PinnedTool, Session, parse_calls, run_model_step
from service.conversations.offered import offered
from service.conversations.runs import conversation_tools
from service.keys import new_turn_id
from service.mcp.protocol import INVALID_PARAMS, ProtocolError
from service.models import Conversation, Turn

AUTHORITATIVE = (
    "Authoritative context: the platform fetched what follows for the signed-in person when this session started, "
    "from the business's own systems, before anything was said. Trust it over anything said in the conversation "
    "that contradicts it. Each entry names the tool that produced it and what that tool is for; a failed one holds "
    "only a small failure object."
)
NO_CONTEXT = "This project runs no tools at session start, so there is no authoritative context for this person."


def instructions(conversation: Conversation) -> str:
    """The session-start tools' results, as the initialize result's `instructions`, marked authoritative."""
    if not conversation.context:
        return NO_CONTEXT
    return AUTHORITATIVE + "\n\n" + json.dumps({"authoritative_context": conversation.context}, indent=2,
                                               ensure_ascii=False)


def listing(tool: PinnedTool) -> dict[str, Any]:
    """One offered tool as `tools/list` shows it: its model-facing description, a JSON Schema of the model's
    arguments (never the subject), and the hints its method gives."""
    method = tool.definition.method
    annotations: dict[str, Any] = {"readOnlyHint": method in ("GET", "HEAD"), "openWorldHint": True}
    if method == "DELETE":
        annotations["destructiveHint"] = True
    return {"name": tool.name, "description": tool.definition.description, "inputSchema": tool.schema,
            "annotations": annotations}


def _offset(cursor: Any) -> int:
    if cursor is None:
        return 0
    invalid = ProtocolError(200, INVALID_PARAMS, "Invalid cursor: pass back a nextCursor this server gave.")
    if not isinstance(cursor, str) or len(cursor) > 32:
        raise invalid
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (UnicodeError, ValueError, binascii.Error):
        raise invalid from None
    if not text.startswith("o:") or not text[2:].isdigit():
        raise invalid
    return int(text[2:])


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode("ascii")).decode("ascii")


def list_tools(session: Session, conversation: Conversation, cursor: Any, page_size: int) -> dict[str, Any]:
    """One page of what this token is offered, in pin order; `nextCursor` while more remain. A conversation's
    project version is fixed, so an offset names the same place on every page and every instance."""
    tools = list(offered(conversation_tools(conversation), session.entitlements).values())
    start = _offset(cursor)
    page = tools[start:start + page_size]
    result: dict[str, Any] = {"tools": [listing(tool) for tool in page]}
    if start + page_size < len(tools):
        result["nextCursor"] = _cursor(start + page_size)
    return result


def call(session: Session, conversation: Conversation, call_id: str, params: dict[str, Any],
         dispatcher: Dispatcher) -> dict[str, Any]:
    """A `tools/call` as a step of one call: its step result (`output`, `error` or a held `approval`).

    Each call is a turn of its own (the assertion's `turn`): the MCP client's turns are not visible to the server,
    and a turn id must never group calls of different turns. 422 for what is not text, as a step's."""
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise ProtocolError(200, INVALID_PARAMS, "tools/call needs params.name, a string.")
    calls = parse_calls({"calls": [{"id": call_id, "name": name,
                                    "arguments": {} if arguments is None else arguments}]})
    turn = Turn(id=new_turn_id(), conversation=conversation)
    return run_model_step(session, conversation, turn, calls, dispatcher)[0]


def tool_result(result: dict[str, Any], conversation_id: str) -> dict[str, Any]:
    """A step result as a `tools/call` result: the body as the model gets it as text (and as structured content when
    it is a JSON object); a failure `isError`, holding the failure object, never the endpoint's body; a call held for
    approval says so, with the approval."""
    if "error" in result:
        return {"content": [{"type": "text", "text": json.dumps(result["error"])}], "isError": True}
    if "approval" in result:
        held = {"approval": result["approval"],
                "message": "This call awaits the person's approval and was not sent. They decide it in the app "
                           f"(GET /v1/conversations/{conversation_id}/approvals); nothing is sent unless they "
                           "approve."}
        return {"content": [{"type": "text", "text": json.dumps(held)}], "structuredContent": held,
                "isError": False}
    output = result["output"]
    answer: dict[str, Any] = {"content": [{"type": "text", "text": output}], "isError": False}
    structured = _json_object(output)
    if structured is not None:
        answer["structuredContent"] = structured
    return answer


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
