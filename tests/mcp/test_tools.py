"""The agent tools over a live service: reads, drafts, pins, refusals, and no path to publishing."""
from __future__ import annotations

import ast
from pathlib import Path

import gevent
import pytest

from service.mcp import tools as agent_tools
from service.mcp.schemas import check_arguments
from tests.mcp.conftest import RawMcp, error_of
from tests.support.definitions import key_id
from tests.support.live import live_service


def definition(name, **changes):
    return {"name": name, "description": f"The {name} tool.", "method": "GET",
            "url": "https://api.example.com/items", **changes}


def register(service, name):
    response = service.api("POST", "/v1/tools", json=definition(name))
    assert response.status_code == 201, response.text


def publish(service, name):
    assert service.api("POST", f"/v1/tools/{name}/publish").status_code == 201


def test_nothing_in_the_mcp_package_names_a_publishing_function():
    """Structural: no code path from /mcp can publish, because no MCP module refers to publishing at all."""
    names = set()
    for path in Path(agent_tools.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.name)
    assert {"register_tool", "save_draft", "save_project_draft"} <= names  # the scan sees the calls it should
    assert not [name for name in names if "publish" in name.lower()]


def test_a_refused_registration_writes_nothing(service, mcp):
    result = mcp.call_tool(mcp.initialize(), "register_tool", definition("broken", method="FETCH"))
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == [
        {"field": "method", "rule": "method-unsupported",
         "message": "The method must be one of GET, POST, PUT, PATCH, or DELETE."}]
    assert service.api("GET", "/v1/tools/broken").status_code == 404


@pytest.mark.parametrize("blank", ["\u00a0", "\u2003", "\u3000", "\u2028", "\u200b", "\ufeff"])
def test_a_display_name_of_unicode_blanks_is_the_tool_name(service, mcp, blank):
    session = mcp.initialize()
    result = mcp.call_tool(session, "register_tool", definition("blank_label", display_name=blank))
    assert result["isError"] is False, result
    assert service.api("GET", "/v1/tools/blank_label").json()["display_name"] == "blank_label"
    refused = mcp.call_tool(session, "validate_definition", definition("blank_text", description=blank))
    assert [e["rule"] for e in refused["structuredContent"]["errors"]] == ["description-required"]


def test_validation_saves_nothing(service, mcp):
    result = mcp.call_tool(mcp.initialize(), "validate_definition", definition("only_checked"))
    assert result["isError"] is False and result["structuredContent"]["valid"] is True
    assert service.api("GET", "/v1/tools/only_checked").status_code == 404


def test_a_published_version_is_read_and_a_new_draft_started_from_it(service, mcp):
    register(service, "catalog")
    publish(service, "catalog")
    session = mcp.initialize()
    version = mcp.call_tool(session, "get_tool", {"name": "catalog", "version": 1})["structuredContent"]
    assert version["read_only"] is True and version["definition"]["name"] == "catalog"
    started = mcp.call_tool(session, "start_draft", {"name": "catalog"})
    assert started["isError"] is False
    draft = started["structuredContent"]["draft"]
    assert draft["based_on"] == 1 and draft["updated_by"] == f"agent:agent:{key_id(service.agent_key)}"
    assert draft["definition"] == version["definition"]


def test_an_agent_drafts_a_tool_that_requires_approval_but_never_at_session_start(service, mcp):
    session = mcp.initialize()
    refused = mcp.call_tool(session, "register_tool", definition("starter", requires_approval=True,
                                                                 runs_at_session_start=True))
    assert refused["isError"] is True
    assert [e["rule"] for e in refused["structuredContent"]["errors"]] == ["session-start-no-approval"]
    assert mcp.call_tool(session, "register_tool", definition("order", requires_approval=True))["isError"] is False
    assert service.api("GET", "/v1/tools/order").json()["draft"]["definition"]["requires_approval"] is True


def test_a_save_without_a_draft_is_refused_with_the_registry_sentence(service, mcp):
    register(service, "frozen")
    publish(service, "frozen")
    result = mcp.call_tool(mcp.initialize(), "save_draft", definition("frozen"))
    assert result["isError"] is True
    assert result["structuredContent"]["errors"][0]["message"] == \
        "This tool has no draft. Start a new draft to change it."


def test_another_organizations_tool_is_not_found_nor_listed(service, mcp):
    from service.database import db
    from service.registry import create_organization, register_tool

    with db.connection_context():
        register_tool(create_organization("globex"), definition("their_secret"), "test")
    session = mcp.initialize()
    result = mcp.call_tool(session, "get_tool", {"name": "their_secret"})
    assert result["isError"] is True and result["structuredContent"]["code"] == "not-found"
    assert mcp.call_tool(session, "list_tools", {})["structuredContent"]["tools"] == []


def test_list_tools_can_be_narrowed_to_a_project(service, mcp):
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    assert service.api("POST", "/v1/tools", json={**definition("own"), "project": "shop"}).status_code == 201
    register(service, "shared_one")
    session = mcp.initialize()
    every = mcp.call_tool(session, "list_tools", {})["structuredContent"]["tools"]
    own = mcp.call_tool(session, "list_tools", {"project": "shop"})["structuredContent"]["tools"]
    assert {t["name"] for t in every} == {"own", "shared_one"}
    assert [(t["name"], t["project"]) for t in own] == [("own", "shop")]


def test_pinning_replaces_a_tools_pin_in_place_and_keeps_the_others(service, mcp):
    for name in ("a", "b", "c"):
        register(service, name)
    publish(service, "b")
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    session = mcp.initialize()
    for tool, version in (("a", "draft"), ("b", 1), ("c", "draft")):
        assert mcp.call_tool(session, "pin_tool", {"project": "shop", "tool": tool, "version": version})[
            "isError"] is False
    assert service.api("POST", "/v1/tools/b/draft").status_code == 201
    result = mcp.call_tool(session, "pin_tool", {"project": "shop", "tool": "b"})
    assert result["structuredContent"]["draft"]["pins"] == [
        {"tool": "a", "version": "draft"}, {"tool": "b", "version": "draft"}, {"tool": "c", "version": "draft"}]


@pytest.mark.parametrize("arguments, field, rule, message", [
    ({"project": "shop", "tool": "ghost"}, "tool", "pin-unknown-tool",
     "No tool with this name exists in this organization."),
    ({"project": "shop", "tool": "a", "version": 9}, "version", "pin-unknown-version",
     "This tool has no published version with that number."),
    ({"project": "shop", "tool": "a", "version": "latest"}, "version", "pin-version-format",
     'A pin\'s version is a published version number or "draft".'),
])
def test_a_bad_pin_is_refused_naming_the_agents_own_argument(service, mcp, arguments, field, rule, message):
    """The draft already pins two tools, so the new pin is the third: the refusal still names the argument the agent
    sent (`version`, `tool`), never `pins[2].version`, and calls it a pin, not a definition."""
    for name in ("a", "x", "y"):
        register(service, name)
    pins = [{"tool": "x", "version": "draft"}, {"tool": "y", "version": "draft"}]
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    assert service.api("PUT", "/v1/projects/shop/draft", json={"pins": pins}).status_code == 200
    result = mcp.call_tool(mcp.initialize(), "pin_tool", arguments)
    assert result["isError"] is True
    assert result["structuredContent"]["message"] == "The pin breaks one or more rules."
    assert [(e["field"], e["rule"], e["message"]) for e in result["structuredContent"]["errors"]] == [
        (field, rule, message)]
    assert service.api("GET", "/v1/projects/shop").json()["draft"]["pins"] == pins


def test_a_project_without_a_draft_takes_no_pin(service, mcp):
    register(service, "a")
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    assert service.api("POST", "/v1/projects/shop/publish").status_code == 201
    result = mcp.call_tool(mcp.initialize(), "pin_tool", {"project": "shop", "tool": "a"})
    assert result["structuredContent"]["errors"][0]["rule"] == "project-no-draft"


PINNERS = 6


def test_concurrent_pins_lose_nothing(database_url, tmp_path):
    """Pinning reads the pins and writes them back: a save that slips in between must not be silently lost."""
    with live_service(tmp_path, database_url=database_url) as running:
        names = [f"tool_{i}" for i in range(PINNERS)]
        for name in names:
            register(running, name)
        assert running.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
        mcp = RawMcp(running)
        sessions = [mcp.initialize() for _ in names]
        jobs = [gevent.spawn(mcp.call_tool, session, "pin_tool", {"project": "shop", "tool": name})
                for session, name in zip(sessions, names)]
        gevent.joinall(jobs, raise_error=True)
        won = {name for name, job in zip(names, jobs) if not job.value["isError"]}
        lost = [job.value["structuredContent"]["code"] for job in jobs if job.value["isError"]]
        assert won and set(lost) <= {"conflict"}
        pins = running.api("GET", "/v1/projects/shop").json()["draft"]["pins"]
        assert {pin["tool"] for pin in pins} == won


def test_a_failing_handler_is_an_internal_error_in_json_rpc(mcp, monkeypatch):
    from dataclasses import replace

    def broken(principal, arguments):
        raise RuntimeError("a bug")

    listed = agent_tools._BY_NAME["list_tools"]
    monkeypatch.setitem(agent_tools._BY_NAME, "list_tools", replace(listed, handler=broken))
    response = mcp.request("tools/call", {"name": "list_tools", "arguments": {}}, session=mcp.initialize())
    assert response.status_code == 500
    assert error_of(response) == {"code": -32603, "message": "Internal error."}


def test_an_unknown_tool_is_invalid_params(mcp):
    response = mcp.request("tools/call", {"name": "publish_tool", "arguments": {}}, session=mcp.initialize())
    assert response.status_code == 200
    assert error_of(response) == {"code": -32602, "message": "Unknown tool: publish_tool"}


@pytest.mark.parametrize("params", [{"name": "list_tools", "arguments": [1]}, {"arguments": {}}])
def test_a_call_with_no_name_or_non_object_arguments_is_invalid_params(mcp, params):
    response = mcp.request("tools/call", params, session=mcp.initialize())
    assert error_of(response)["code"] == -32602


def test_the_tool_list_comes_in_one_page(mcp):
    session = mcp.initialize()
    assert "nextCursor" not in mcp.request("tools/list", session=session).json()["result"]
    assert error_of(mcp.request("tools/list", {"cursor": "2"}, session=session))["code"] == -32602


SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "version": {"type": ["integer", "string"]},
                                           "flag": {"type": "boolean"}},
          "required": ["name"], "additionalProperties": False}


@pytest.mark.parametrize("arguments, expected", [
    ({"name": "x"}, []),
    ({"name": "x", "version": 2, "flag": False}, []),
    ({"name": "x", "version": "draft", "flag": None}, []),
    ({}, [("name", "argument-required")]),
    ({"name": None}, [("name", "argument-required")]),
    ({"name": 1}, [("name", "argument-type")]),
    ({"name": "x", "version": True}, [("version", "argument-type")]),
    ({"name": "x", "version": 1.5}, [("version", "argument-type")]),
    ({"name": "x", "flag": 1}, [("flag", "argument-type")]),
    ({"name": "x", "extra": 1, "another": 2}, [("another", "argument-unknown"), ("extra", "argument-unknown")]),
])
def test_arguments_are_checked_against_the_top_of_the_schema(arguments, expected):
    assert [(v.field, v.rule) for v in check_arguments(SCHEMA, arguments)] == expected


def test_list_tools_pages_with_an_opaque_cursor_as_mcp_does(service, mcp):
    for name in ("page_c", "page_a", "page_b", "page_d", "page_e"):
        register(service, name)
    session = mcp.initialize()
    seen, cursor, calls = [], None, 0
    while True:
        arguments = {"q": "page_", "limit": 2, **({"cursor": cursor} if cursor else {})}
        result = mcp.call_tool(session, "list_tools", arguments)
        assert result["isError"] is False, result
        seen.append([t["name"] for t in result["structuredContent"]["tools"]])
        cursor, calls = result["structuredContent"]["nextCursor"], calls + 1
        if cursor is None:
            break
        assert "page_" not in cursor and calls < 10  # opaque: not the name itself
    assert seen == [["page_a", "page_b"], ["page_c", "page_d"], ["page_e"]]


@pytest.mark.parametrize("cursor", ["not a cursor", "WyJwcm9qZWN0cyIsICJhIl0=", "WyJ0b29scyIsIDFd", "", "%%%"])
def test_a_cursor_no_list_gave_is_refused_naming_it(service, mcp, cursor):
    # The second is a cursor of list_projects ("projects", "a"); the third names no tool (a number).
    result = mcp.call_tool(mcp.initialize(), "list_tools", {"cursor": cursor})
    assert result["isError"] is True
    assert [(e["field"], e["rule"]) for e in result["structuredContent"]["errors"]] == [("cursor", "cursor-invalid")]


def test_list_projects_pages_with_a_cursor_too(service, mcp):
    for name in ("proj-b", "proj-a", "proj-c"):
        assert service.api("POST", "/v1/projects", json={"name": name}).status_code == 201
    session = mcp.initialize()
    first = mcp.call_tool(session, "list_projects", {"limit": 2})["structuredContent"]
    assert [p["name"] for p in first["projects"]] == ["proj-a", "proj-b"]
    rest = mcp.call_tool(session, "list_projects", {"cursor": first["nextCursor"]})["structuredContent"]
    assert [p["name"] for p in rest["projects"]] == ["proj-c"] and rest["nextCursor"] is None
    wrong = mcp.call_tool(session, "list_tools", {"cursor": first["nextCursor"]})
    assert wrong["structuredContent"]["errors"][0]["field"] == "cursor"
