"""A broken platform's model side: a proxy between the platform and the scripted model.

The platform is configured to call this proxy as its model, and the proxy forwards to the kit's
scripted model server. For each fault switched on it bends what the model receives (Chat
Completions format), as a platform with that bug would send it: the session-start context no
longer marked authoritative, the subject offered as a parameter, an endpoint's error body beside
the failure object, a successful result reshaped, a continued turn's decided result withheld (the
pending one handed over again, for the tools a pattern names). The model server records what it
received, so the kit's turn cases see the bent request.
"""
from __future__ import annotations

import json
import re
from typing import Any

from tests.conformance_platform.forwarding import Incoming, Outgoing, received, send
from tests.conformance_platform.front import LEAKED


def _failure(content: Any) -> bool:
    try:
        parsed = json.loads(content)
    except (TypeError, ValueError):
        return False
    return isinstance(parsed, dict) and parsed.get("status") == "error"


class ModelDouble:
    """The proxy in front of the model. Set `upstream` to the model server's URL once it is up."""

    def __init__(self) -> None:
        self.upstream = ""
        self.faults: dict[str, Any] = {}

    def handle(self, incoming: Incoming) -> Outgoing:
        body = incoming.json()
        if isinstance(body, dict) and self.faults:
            incoming.body = json.dumps(self.bend(body)).encode()
        return received(send(self.upstream, incoming))

    def bend(self, body: dict[str, Any]) -> dict[str, Any]:
        """The request as a platform with the switched-on bugs would have sent it."""
        messages = []
        names: dict[Any, str] = {}  # each call's tool, by call id, from the assistant's tool calls
        for message in body.get("messages", []):
            message = dict(message)
            for call in message.get("tool_calls") or []:
                names[call.get("id")] = str((call.get("function") or {}).get("name"))
            if message.get("role") == "tool" and self.withheld(names.get(message.get("tool_call_id"))):
                message["content"] = json.dumps({"approval": {"status": "pending"}})
            if message.get("role") == "system" and "context-unmarked" in self.faults:
                message["content"] = str(message.get("content")).replace("authoritative", "advisory")
            if message.get("role") == "tool":
                content = message.get("content")
                if _failure(content) and "model-sees-error-body" in self.faults:
                    message["content"] = json.dumps({**json.loads(content), "body": LEAKED})
                elif not _failure(content) and "output-reshaped" in self.faults:
                    message["content"] = json.dumps({"output": content})
            messages.append(message)
        tools = body.get("tools", [])
        if "model-sees-subject" in self.faults:
            tools = [{**t, "function": {**t["function"], "parameters": _with_subject(t["function"]["parameters"])}}
                     for t in tools]
        return {**body, "messages": messages, **({"tools": tools} if tools else {})}


    def withheld(self, tool: str | None) -> bool:
        """Whether a call of `tool` is handed over as still pending (`decided-withheld`, a pattern of tool names):
        a platform that continues a paused turn without handing the model the decided result."""
        pattern = self.faults.get("decided-withheld")
        return tool is not None and (pattern is True or (isinstance(pattern, str) and re.search(pattern, tool)
                                                         is not None))


def _with_subject(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "properties": {**schema.get("properties", {}), "subject": {"type": "string"}},
            "required": [*schema.get("required", []), "subject"]}
