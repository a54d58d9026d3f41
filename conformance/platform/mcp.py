"""Just enough of an MCP client to check what the spec says of agents: JSON-RPC over Streamable HTTP.

One session per use: `initialize` (the server answers with an `Mcp-Session-Id`), the `initialized`
notification, then requests carrying that id and the negotiated protocol revision. Each request is
one POST answered with one JSON body, as the platform's `/mcp` serves them.
"""
from __future__ import annotations

import itertools
from typing import Any

from conformance.platform.client import PlatformTarget, SetupRefused

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "toolgate-conformance", "version": "1"}


class McpSession:
    """An initialized MCP session with one credential: an API key on `/mcp`, or a session token on a project's
    server (`path` `/mcp/projects/{project}`)."""

    def __init__(self, target: PlatformTarget, key: str, path: str = "/mcp") -> None:
        self.target, self.key, self.path = target, key, path
        self.headers = {"Accept": "application/json, text/event-stream"}
        self._ids = itertools.count(1)
        answer = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                             "clientInfo": CLIENT_INFO})
        if "result" not in answer:
            raise SetupRefused(f"MCP initialize was refused: {answer}")
        self.headers["MCP-Protocol-Version"] = answer["result"].get("protocolVersion", PROTOCOL_VERSION)
        self.notify("notifications/initialized")

    def _post(self, message: dict[str, Any]) -> Any:
        reply = self.target.request("POST", f"{self.target.url}{self.path}", self.key, message, self.headers)
        session = reply.headers.get("Mcp-Session-Id")
        if session:
            self.headers["Mcp-Session-Id"] = session
        return reply

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One JSON-RPC request; its whole answer (`result` or `error`)."""
        reply = self._post({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}})
        if not isinstance(reply.body, dict):
            raise SetupRefused(f"MCP {method}: not a JSON-RPC answer: {reply.describe()}")
        return reply.body

    def notify(self, method: str) -> None:
        """A JSON-RPC notification (no answer expected)."""
        self._post({"jsonrpc": "2.0", "method": method})

    def tool_names(self) -> list[str]:
        """The names `tools/list` offers."""
        answer = self.request("tools/list")
        return [t.get("name") for t in (answer.get("result") or {}).get("tools", [])]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`tools/call`: the whole JSON-RPC answer."""
        return self.request("tools/call", {"name": tool, "arguments": arguments})


def succeeded(answer: dict[str, Any]) -> bool:
    """Whether a `tools/call` answer is a result that is not a tool error."""
    return isinstance(answer.get("result"), dict) and answer["result"].get("isError") is not True


def summary(answer: dict[str, Any]) -> Any:
    """What a `tools/call` answer says, in brief: the JSON-RPC error, or the result's structured content."""
    if "error" in answer:
        return answer["error"]
    result = answer.get("result") or {}
    return {"isError": result.get("isError", False), "content": result.get("structuredContent")}
