"""The official MCP Python SDK client, over Streamable HTTP, against a live service: a real client we did not write.

The scenario (`sdk_scenario.py`) runs once per key in a subprocess, the agent's and the admin's at the same time;
each test below asserts on one part of what it printed and on what the REST API shows afterwards. The processes
start ahead (a head start, see tests.support.head_starts.head_start) and import the SDK while other tests run.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gevent
import pytest

from tests.support.definitions import key_id
from tests.support.head_starts import head_start

pytestmark = pytest.mark.service(per_module=True)  # the scenario runs once, and each test reads it

SCENARIO = Path(__file__).with_name("sdk_scenario.py")
AGENT_TOOLS = {"list_tools", "get_tool", "validate_definition", "register_tool", "save_draft", "start_draft",
               "import_openapi", "list_projects", "pin_tool"}


#: The longest the scenario may take, once its process has the service's URL.
SCENARIO_TIMEOUT_SECONDS = 60
ROLES = ("agent", "admin")


@head_start("runs")
def scenario_processes():
    """The scenario's process per role, started early: each imports the SDK, then waits for its arguments."""
    processes = {role: subprocess.Popen([sys.executable, str(SCENARIO)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for role in ROLES}
    try:
        yield processes
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
            process.communicate()


def run_scenario(process: subprocess.Popen, url: str, key: str, prefix: str, project: str) -> dict:
    out, err = process.communicate(f"{url} {key} {prefix} {project}\n", timeout=SCENARIO_TIMEOUT_SECONDS)
    assert process.returncode == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def runs(module_service, head_starts):
    """The scenario's output per role; each role works in a project of its own."""
    service = module_service
    processes = head_starts["runs"].get()
    keys = {"agent": service.agent_key, "admin": service.admin_key}
    for role in ROLES:
        assert service.api("POST", "/v1/projects", json={"name": f"{role}_shop"}).status_code == 201
    jobs = {role: gevent.spawn(run_scenario, processes[role], service.url + "/mcp", keys[role], role, f"{role}_shop")
            for role in ROLES}
    gevent.joinall(list(jobs.values()), raise_error=True)
    return {role: job.value for role, job in jobs.items()}


def test_the_sdk_client_connects_and_negotiates_the_latest_version(runs):
    for out in runs.values():
        assert out["protocol_version"] == "2025-11-25"
        assert out["server_name"] == "toolgate"
        assert "cannot be done here" in out["instructions"]


def test_the_agent_tools_are_listed_and_none_publishes(runs):
    for out in runs.values():
        names = {tool["name"] for tool in out["tools"]}
        assert names == AGENT_TOOLS
        assert not any("publish" in name for name in names)


def test_every_tool_has_a_one_paragraph_description_and_an_object_schema(runs):
    for tool in runs["agent"]["tools"]:
        assert len(tool["description"]) > 80 and "\n" not in tool["description"], tool["name"]
        assert tool["input_schema"]["type"] == "object"
        assert isinstance(tool["input_schema"]["properties"], dict)
    read_only = {t["name"] for t in runs["agent"]["tools"] if t["read_only"]}
    assert read_only == {"list_tools", "get_tool", "validate_definition", "list_projects"}


def test_a_draft_is_validated_registered_saved_and_read_back(runs, service):
    out = runs["agent"]
    assert out["validate"]["is_error"] is False and out["validate"]["structured"]["valid"] is True
    registered = out["register"]
    assert registered["is_error"] is False
    assert registered["structured"]["draft"]["revision"] == 1
    assert json.loads(registered["text"]) == registered["structured"]  # the text block is the same data
    assert out["save"]["is_error"] is False
    assert out["save"]["structured"]["draft"]["revision"] == 2
    read = out["read"]["structured"]
    assert read["draft"]["definition"]["description"] == "The customer's orders, newest first."
    assert read["versions"] == []
    listed = {t["name"]: t for t in out["listed"]["structured"]["tools"]}
    assert listed["agent_orders"]["draft"]["revision"] == 2 and listed["agent_orders"]["versions"] == []
    over_rest = service.api("GET", "/v1/tools/agent_orders").json()
    assert over_rest["draft"]["definition"] == read["draft"]["definition"]


REFUSALS = {
    "subject-not-string": [("parameters[0].type", "subject-must-be-string",
                            "The subject parameter must be a string.")],
    "array-without-element-type": [("parameters[1].element_type", "array-needs-element-type",
                                    "An array parameter must say what its elements are.")],
    "element-type-on-non-array": [("parameters[1].element_type", "element-type-only-on-array",
                                   "Only an array parameter has an element type.")],
    "name-taken": [("name", "name-taken", "A tool with this name already exists.")],
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_refusal_comes_back_as_a_tool_error_with_the_spec_sentence(runs, case):
    for out in runs.values():
        refused = out["refusals"][case]
        assert refused["is_error"] is True
        errors = [(e["field"], e["rule"], e["message"]) for e in refused["structured"]["errors"]]
        assert errors == REFUSALS[case]
        assert REFUSALS[case][0][2] in refused["text"]


def test_every_violation_is_listed_at_once(runs):
    refused = runs["agent"]["refusals"]["many-at-once"]
    assert refused["is_error"] is True
    messages = {(e["field"], e["message"]) for e in refused["structured"]["errors"]}
    assert messages == {
        ("parameters[0].type", "The subject parameter must be a string."),
        ("parameters[1].element_type", "An array parameter must say what its elements are."),
        ("parameters[1].location", "This type cannot ride in that location."),
        ("parameters[2].name", "A parameter with this name already exists on this tool."),
        ("parameters[2].location", "A GET or DELETE request cannot carry a body parameter."),
    }


def test_a_save_with_a_stale_etag_is_refused(runs):
    stale = runs["agent"]["stale_save"]
    assert stale["is_error"] is True
    assert stale["structured"]["code"] == "stale-draft"


def test_arguments_that_do_not_fit_the_schema_are_listed(runs):
    refused = runs["agent"]["bad_arguments"]
    assert refused["is_error"] is True
    assert refused["structured"]["code"] == "invalid-arguments"
    assert {(e["field"], e["rule"]) for e in refused["structured"]["errors"]} == {
        ("name", "argument-type"), ("colour", "argument-unknown")}


def test_starting_a_second_draft_is_refused(runs):
    assert runs["agent"]["start_draft"]["structured"]["errors"][0]["rule"] == "draft-exists"


def test_the_draft_is_pinned_into_the_project_draft(runs, service):
    for role, out in runs.items():
        assert out["pin"]["is_error"] is False
        pins = service.api("GET", f"/v1/projects/{role}_shop").json()["draft"]["pins"]
        assert pins == [{"tool": f"{role}_orders", "version": "draft"}]
        listed = {p["name"]: p for p in out["projects"]["structured"]["projects"]}
        assert listed[f"{role}_shop"]["draft"]["pins"] == pins


def test_there_is_no_way_to_publish_not_even_with_an_admin_key(runs, service):
    for role, out in runs.items():
        for attempt in out["publish_attempts"].values():
            assert attempt["protocol_error"]["code"] == -32602
            assert attempt["protocol_error"]["message"].startswith("Unknown tool")
        assert service.api("GET", f"/v1/tools/{role}_orders").json()["versions"] == []
        assert service.api("GET", f"/v1/projects/{role}_shop").json()["versions"] == []


def test_every_write_is_recorded_as_done_by_the_key(service, runs):
    expected = {"agent": f"agent:agent:{key_id(service.agent_key)}",
                "admin": f"person:admin:{key_id(service.admin_key)}"}
    for role in runs:
        draft = service.api("GET", f"/v1/tools/{role}_orders").json()["draft"]
        assert draft["updated_by"] == expected[role]
        assert service.api("GET", f"/v1/projects/{role}_shop").json()["draft"]["updated_by"] == expected[role]


def test_the_agents_writes_are_in_the_tools_history(service, runs):
    records = service.api("GET", "/v1/tools/agent_orders/history").json()["records"]
    assert [(r["action"], r["actor"]["kind"], r["actor"]["role"], r["actor"]["key_id"]) for r in records] == [
        ("save", "agent", "agent", key_id(service.agent_key)),
        ("register", "agent", "agent", key_id(service.agent_key))]
