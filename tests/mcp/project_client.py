"""A plain-HTTP client of a project's MCP server (`/mcp/projects/<project>`) with a session token, for the raw-protocol
tests, and the published project they share."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import requests

from service.mcp.protocol import LATEST_VERSION
from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import tool

ACCEPT = "application/json, text/event-stream"


def shop_tools(backend: str) -> list[dict[str, Any]]:
    """The project every test here serves: a session-start profile, a per-user read, a failing read, an entitled
    report, a consequential order and a DELETE."""
    return [
        tool("get_profile", backend + "/users/{subject}/profile", scope="per_user", runs_at_session_start=True,
             parameters=[SUBJECT_IN_PATH]),
        tool("echo_user", backend + "/tools/echo_user/echo/{subject}", scope="per_user",
             parameters=[SUBJECT_IN_PATH, {"name": "q", "type": "string", "location": "query", "required": False,
                                           "description": "What to look for."}]),
        tool("broken", backend + "/tools/broken/status/500"),
        tool("report", backend + "/tools/report/echo", required_entitlement="reports:read"),
        tool("place_order", backend + "/tools/place_order/echo", method="POST", requires_approval=True,
             parameters=[{"name": "items", "type": "array", "element_type": "string", "location": "body"}]),
        tool("forget_me", backend + "/tools/forget_me/echo", method="DELETE"),
    ]


class RawProject:
    """POSTs hand-made JSON-RPC to a project's MCP server, the way a client would, or deliberately not."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token = url, token

    def headers(self, *, session: str | None = None, version: str | None = None, token: str | None = None,
                **extra: str) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        bearer = token or self.token
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        if session is not None:
            headers["Mcp-Session-Id"] = session
        if version is not None:
            headers["MCP-Protocol-Version"] = version
        return {**headers, **extra}

    def post(self, message: Any, **options: Any) -> requests.Response:
        return requests.post(self.url, data=json.dumps(message), headers=self.headers(**options), timeout=30)

    def initialize(self, capabilities: dict[str, Any] | None = None, **options: Any) -> requests.Response:
        return self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LATEST_VERSION, "capabilities": capabilities or {},
            "clientInfo": {"name": "raw", "version": "1"}}}, **options)

    def session(self, capabilities: dict[str, Any] | None = None) -> str:
        response = self.initialize(capabilities)
        assert response.status_code == 200, response.text
        return response.headers["Mcp-Session-Id"]

    def request(self, session: str, method: str, params: dict[str, Any] | None = None, id_: Any = 1,
                **options: Any) -> requests.Response:
        return self.post({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}, session=session,
                         **options)

    def result(self, session: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.request(session, method, params)
        assert response.status_code == 200, response.text
        return response.json()["result"]


def error_of(response: requests.Response) -> dict[str, Any]:
    assert response.headers["Content-Type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    return body["error"]


def running_app(config):
    """The in-process app serving `config` (tests.support.databases keeps one per set of settings)."""
    from tests.support import databases

    return databases._apps[repr(replace(config, database_url=""))]
