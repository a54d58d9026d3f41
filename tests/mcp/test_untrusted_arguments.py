"""Agent tool arguments that used to be a JSON-RPC internal error (issue 14), on SQLite and PostgreSQL alike: a
version number past what the database stores, and names with a NUL or another control character. Each is a tool
result with isError, naming the argument and its rule."""
import contextlib

import pytest

from service.catalogue import RULES
from service.limits import MAX_STORED_INTEGER
from service.mcp.schemas import READ_TOOL, check_arguments
from tests.conftest import ENGINES, POSTGRES_URL, fresh_postgres_schema
from tests.mcp.conftest import RawMcp
from tests.support.live import live_service


@pytest.fixture(params=ENGINES)
def service(request, tmp_path):
    with fresh_postgres_schema(POSTGRES_URL) if request.param == "postgres" else contextlib.nullcontext() as url:
        with live_service(tmp_path, database_url=url) as running:
            definition = {"name": "get_orders", "description": "The orders.", "method": "GET",
                          "url": "https://api.example.com/orders"}
            assert running.api("POST", "/v1/tools", json=definition).status_code == 201
            assert running.api("POST", "/v1/tools/get_orders/publish").status_code == 201
            assert running.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
            yield running


def refused(result, argument, rule):
    assert result["isError"] is True, result
    assert result["structuredContent"]["errors"] == [{"field": argument, "rule": rule, "message": RULES[rule]}]


def test_arguments_that_used_to_crash_are_refused_by_name(service):
    mcp = RawMcp(service)
    session = mcp.initialize()
    for version in (MAX_STORED_INTEGER + 1, 2 ** 63, 10 ** 40, 0, -1):
        refused(mcp.call_tool(session, "get_tool", {"name": "get_orders", "version": version}), "version",
                "number-range")
    for tool, arguments, argument in [
            ("get_tool", {"name": "get_orders\x00"}, "name"), ("start_draft", {"name": "get\norders"}, "name"),
            ("list_tools", {"project": "sh\x00op"}, "project"),
            ("save_draft", {"name": "get_orders\x00", "description": "d", "method": "GET",
                            "url": "https://api.example.com/orders"}, "name"),
            ("pin_tool", {"project": "shop\x00", "tool": "get_orders"}, "project"),
            ("pin_tool", {"project": "shop", "tool": "get_orders\x1b"}, "tool")]:
        refused(mcp.call_tool(session, tool, arguments), argument, "control-character")
    assert mcp.call_tool(session, "get_tool", {"name": "get_orders", "version": 1})["isError"] is False


def test_a_pin_past_the_database_is_an_unknown_version(service):
    mcp = RawMcp(service)
    result = mcp.call_tool(mcp.initialize(), "pin_tool", {"project": "shop", "tool": "get_orders", "version": 2 ** 63})
    assert result["isError"] is True
    assert [e["rule"] for e in result["structuredContent"]["errors"]] == ["pin-unknown-version"]


def test_the_version_bound_is_in_the_schema_the_agent_reads():
    assert READ_TOOL["properties"]["version"]["maximum"] == MAX_STORED_INTEGER
    assert check_arguments(READ_TOOL, {"name": "x", "version": MAX_STORED_INTEGER}) == []
