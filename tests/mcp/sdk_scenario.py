"""Drive Toolgate's /mcp with the official MCP Python SDK client, over Streamable HTTP, and print what happened.

Run as `.venv/bin/python tests/mcp/sdk_scenario.py URL KEY PREFIX PROJECT`, or with no arguments and them on one line
of stdin (the test starts it early, so the SDK, a second or two to import, is imported by the time the service is
up). It is a separate process because the SDK is asyncio/anyio and the test process is gevent-patched. It registers
`{PREFIX}_orders`, saves, reads back, collects each refusal, pins the draft into PROJECT and tries every way to
publish; it asserts nothing itself and prints one JSON document for the test to assert on.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

SUBJECT = {"name": "subject", "type": "string", "location": "path"}


def orders(name: str, **changes: Any) -> dict[str, Any]:
    """A valid per-user definition, with any field changed."""
    return {"name": name, "display_name": "Customer orders", "description": "The signed-in customer's orders.",
            "method": "GET", "url": "https://api.example.com/users/{subject}/orders", "scope": "per_user",
            "parameters": [SUBJECT, {"name": "status", "type": "string", "location": "query", "required": False}],
            **changes}


def refusals(prefix: str) -> dict[str, dict[str, Any]]:
    """The definitions an agent might get wrong, each refused by a rule the spec words."""
    return {
        "subject-not-string": orders(f"{prefix}_a", parameters=[{**SUBJECT, "type": "number"}]),
        "array-without-element-type": orders(f"{prefix}_b", method="POST", parameters=[
            SUBJECT, {"name": "ids", "type": "array", "location": "body"}]),
        "element-type-on-non-array": orders(f"{prefix}_c", parameters=[
            SUBJECT, {"name": "status", "type": "string", "location": "query", "element_type": "string"}]),
        "many-at-once": orders(f"{prefix}_d", parameters=[
            {**SUBJECT, "type": "boolean"}, {"name": "ids", "type": "array", "location": "query"},
            {"name": "ids", "type": "string", "location": "body"}]),
        "name-taken": orders(f"{prefix}_orders"),
    }


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's outcome: a result (error or not), or the protocol error the server answered with."""
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message}}
    return {"is_error": result.is_error, "structured": result.structured_content,
            "text": result.content[0].text if result.content else None}


async def scenario(url: str, key: str, prefix: str, project: str) -> dict[str, Any]:
    name = f"{prefix}_orders"
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            out["protocol_version"] = client.protocol_version
            out["server_name"] = client.server_info.name if client.server_info else None
            out["instructions"] = client.instructions
            listed = await client.list_tools()
            out["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.input_schema,
                             "read_only": t.annotations.read_only_hint if t.annotations else None}
                            for t in listed.tools]
            out["validate"] = await call(client, "validate_definition", orders(name))
            out["register"] = await call(client, "register_tool", orders(name))
            etag = (out["register"].get("structured") or {}).get("draft", {}).get("etag")
            out["save"] = await call(client, "save_draft", {
                **orders(name, description="The customer's orders, newest first."), "etag": etag})
            out["stale_save"] = await call(client, "save_draft", {**orders(name), "etag": etag})
            out["read"] = await call(client, "get_tool", {"name": name})
            out["listed"] = await call(client, "list_tools", {})
            out["refusals"] = {case: await call(client, "register_tool", definition)
                               for case, definition in refusals(prefix).items()}
            out["bad_arguments"] = await call(client, "get_tool", {"name": 7, "colour": "red"})
            out["start_draft"] = await call(client, "start_draft", {"name": name})
            out["pin"] = await call(client, "pin_tool", {"project": project, "tool": name})
            out["projects"] = await call(client, "list_projects", {})
            out["publish_attempts"] = {
                tool: await call(client, tool, {"name": name, "project": project})
                for tool in ("publish_tool", "publish", "publish_project", "publish_draft")}
    return out


def main() -> None:
    arguments = sys.argv[1:5] or sys.stdin.readline().split()
    if not arguments:  # the test run ended without needing the scenario
        return
    url, key, prefix, project = arguments
    print(json.dumps(asyncio.run(scenario(url, key, prefix, project))))


if __name__ == "__main__":
    main()
