"""Drive a project's MCP server (`/mcp/projects/<project>`) with the official MCP Python SDK client, as a person's
assistant would, and print what happened.

Run as `.venv/bin/python tests/mcp/project_sdk_scenario.py URL TOKEN`, or with no arguments and them on one line of
stdin (the test starts it early: the SDK takes a second or two to import). A separate process, because the SDK is
asyncio and the test process is gevent-patched. Two clients: one that can be asked (elicitation: it accepts the first
approval it is asked for and declines the second, keeping each request it was shown), and one that cannot. It
asserts nothing itself and prints one JSON document for the test to assert on.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's outcome: a result (error or not), or the protocol error the server answered with."""
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message}}
    return {"is_error": result.is_error, "structured": result.structured_content,
            "text": result.content[0].text if result.content else None}


async def every_page(client: Client) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        listed = await client.list_tools(cursor=cursor, cache_mode="bypass") if cursor else \
            await client.list_tools(cache_mode="bypass")
        pages.append([{"name": t.name, "description": t.description, "input_schema": t.input_schema,
                       "read_only": t.annotations.read_only_hint if t.annotations else None,
                       "destructive": t.annotations.destructive_hint if t.annotations else None}
                      for t in listed.tools])
        cursor = listed.next_cursor
        if not cursor or len(pages) > 10:
            return pages


async def scenario(url: str, token: str) -> dict[str, Any]:
    out: dict[str, Any] = {"asked": []}
    answers = iter(["accept", "decline"])

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        out["asked"].append(params.model_dump(mode="json", exclude_none=True))
        return types.ElicitResult(action=next(answers, "cancel"))

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
            out["protocol_version"] = client.protocol_version
            out["server_name"] = client.server_info.name if client.server_info else None
            out["instructions"] = client.instructions
            out["pages"] = await every_page(client)
            out["call"] = await call(client, "echo_user", {"q": "tea"})
            out["failure"] = await call(client, "broken", {})
            out["subject_attempt"] = await call(client, "echo_user", {"subject": "intruder-bob-7", "q": "x"})
            out["accepted"] = await call(client, "place_order", {"items": ["tea", "milk"]})
            out["declined"] = await call(client, "place_order", {"items": ["cake"]})
        async with Client(streamable_http_client(url, http_client=http)) as plain:
            out["without_elicitation"] = await call(plain, "place_order", {"items": ["bread"]})
    return out


def main() -> None:
    arguments = sys.argv[1:3] or sys.stdin.readline().split()
    if not arguments:  # the test run ended without needing the scenario
        return
    url, token = arguments
    print(json.dumps(asyncio.run(scenario(url, token))))


if __name__ == "__main__":
    main()
