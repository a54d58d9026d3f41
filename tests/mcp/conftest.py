"""A live service on 127.0.0.1 and a plain-HTTP MCP client for poking at the transport's edges."""
from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from service.mcp.protocol import LATEST_VERSION

ACCEPT = "application/json, text/event-stream"


class RawMcp:
    """POSTs hand-made JSON-RPC to /mcp with an API key, the way a client would, or deliberately not."""

    def __init__(self, service, key: str | None = None):
        self.service = service
        self.url = service.url + "/mcp"
        self.key = key or service.agent_key

    def headers(self, *, session: str | None = None, version: str | None = None, key: str | None = None,
                **extra: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {key or self.key}", "Accept": ACCEPT, "Content-Type": "application/json"}
        if session is not None:
            headers["Mcp-Session-Id"] = session
        if version is not None:
            headers["MCP-Protocol-Version"] = version
        return {**headers, **extra}

    def post(self, message: Any = None, *, data: Any = None, headers: dict[str, str] | None = None,
             **header_options: Any) -> requests.Response:
        body = data if data is not None else json.dumps(message)
        return requests.post(self.url, data=body, headers=headers or self.headers(**header_options), timeout=30)

    def initialize(self, version: str = LATEST_VERSION, key: str | None = None) -> str:
        """A fresh session id, after the handshake a client does (initialize, then notifications/initialized)."""
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}, key=key)
        assert response.status_code == 200, response.text
        session = response.headers["Mcp-Session-Id"]
        initialized = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session, key=key)
        assert initialized.status_code == 202, initialized.text
        return session

    def request(self, method: str, params: dict[str, Any] | None = None, *, session: str, id_: Any = 1,
                **header_options: Any) -> requests.Response:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params is not None else {})}
        return self.post(message, session=session, **header_options)

    def call_tool(self, session: str, name: str, arguments: Any) -> dict[str, Any]:
        """A tools/call that must succeed at the protocol level; its result (which may carry isError)."""
        response = self.request("tools/call", {"name": name, "arguments": arguments}, session=session)
        assert response.status_code == 200, response.text
        return response.json()["result"]


@pytest.fixture
def mcp(service):
    return RawMcp(service)


def error_of(response: requests.Response) -> dict[str, Any]:
    """The JSON-RPC error a response carries, checking the envelope around it."""
    assert response.headers["Content-Type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    return body["error"]
