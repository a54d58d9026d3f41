"""The official MCP Python SDK client against a project's MCP server on 127.0.0.1, the mock backend as the tools'
endpoint: list (in pages), call, a failure, the subject attempt, elicitation accepted and declined, and a client
that cannot be asked. The scenario (`project_sdk_scenario.py`) runs once in a subprocess; each test asserts on one
part of what it printed and on what the endpoint and the approvals route saw."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.mcp.project_client import shop_tools
from tests.support.head_starts import head_start
from tests.support.live import publish_project

pytestmark = pytest.mark.service(per_module=True, mcp_page_size=2)

SCENARIO = Path(__file__).with_name("project_sdk_scenario.py")
SCENARIO_TIMEOUT_SECONDS = 60


@head_start("project_run")
def scenario_process():
    """The scenario's process, started early: it imports the SDK, then waits for its arguments."""
    process = subprocess.Popen([sys.executable, str(SCENARIO)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


@pytest.fixture(scope="module")
def project_run(module_service, module_backend, head_starts):
    publish_project(module_service, shop_tools(module_backend))
    requests.delete(module_backend + "/_calls", timeout=5)
    process = head_starts["project_run"].get()
    token = module_service.session_token("alice")
    out, err = process.communicate(f"{module_service.url}/mcp/projects/shop {token}\n",
                                   timeout=SCENARIO_TIMEOUT_SECONDS)
    assert process.returncode == 0, err
    return {"out": json.loads(out), "token": token,
            "sent": requests.get(module_backend + "/_calls", timeout=5).json()["calls"]}


def sent_to(project_run, tool: str) -> list[dict]:
    return [c for c in project_run["sent"] if f"/tools/{tool}/" in c.get("path", "")]


def test_the_sdk_connects_with_the_session_start_context_as_instructions(project_run):
    out = project_run["out"]
    assert out["protocol_version"] == "2025-11-25" and out["server_name"] == "toolgate-shop"
    assert out["instructions"].startswith("Authoritative context") and '"get_profile"' in out["instructions"]


def test_the_sdk_lists_the_offer_in_pages(project_run):
    pages = project_run["out"]["pages"]
    assert [[t["name"] for t in page] for page in pages] == [["echo_user", "broken"], ["place_order", "forget_me"]]
    tools = {t["name"]: t for page in pages for t in page}
    assert "subject" not in json.dumps(tools["echo_user"]["input_schema"])
    assert tools["echo_user"]["read_only"] is True and tools["forget_me"]["destructive"] is True


def test_the_sdk_calls_a_tool_for_the_tokens_subject(project_run):
    call = project_run["out"]["call"]
    assert call["is_error"] is False
    assert call["structured"]["path"].startswith("/tools/echo_user/echo/alice")


def test_a_failure_reaches_the_sdk_as_an_error_result(project_run):
    failure = project_run["out"]["failure"]
    assert failure["is_error"] is True
    assert json.loads(failure["text"]) == {"status": "error", "kind": "refused", "httpCode": 500}


def test_a_subject_the_model_supplies_never_reaches_the_endpoint(project_run):
    attempt = project_run["out"]["subject_attempt"]
    assert "intruder-bob-7" not in json.dumps(attempt)
    assert all("intruder-bob-7" not in json.dumps(c) for c in sent_to(project_run, "echo_user"))


def test_the_person_is_asked_naming_the_tool_and_the_exact_arguments(project_run):
    asked = project_run["out"]["asked"]
    assert len(asked) == 2
    assert asked[0]["mode"] == "form" and "place_order" in asked[0]["message"]
    assert '"tea"' in asked[0]["message"] and '"milk"' in asked[0]["message"]
    assert '"cake"' in asked[1]["message"]


def test_an_accepted_call_is_sent_once_with_the_approval_claim(project_run, module_service):
    accepted = project_run["out"]["accepted"]
    assert accepted["is_error"] is False
    assert len(sent_to(project_run, "place_order")) == 1  # this one; neither the declined nor the held one
    assert json.loads(accepted["structured"]["body"]) == {"items": ["tea", "milk"]}
    assert accepted["structured"]["claims"]["approval"]


def test_a_declined_call_answers_declined_and_sends_nothing(project_run):
    declined = project_run["out"]["declined"]
    assert declined["is_error"] is True
    assert json.loads(declined["text"]) == {"status": "error", "kind": "declined"}
    assert len(sent_to(project_run, "place_order")) == 1  # the accepted call only


def test_the_decisions_are_the_approvals_the_approvals_route_lists(project_run, module_service):
    calls = module_service.api("GET", "/v1/calls?tool=place_order").json()["calls"]
    conversation = calls[0]["conversation"]
    listed = module_service.as_session("GET", f"/v1/conversations/{conversation}/approvals", project_run["token"])
    statuses = [(a["arguments"], a["status"]) for a in listed.json()["approvals"]]
    assert statuses == [({"items": ["tea", "milk"]}, "approved"), ({"items": ["cake"]}, "declined")]
    assert calls[0]["approval"] is not None


def test_without_elicitation_the_call_is_held_and_nothing_is_sent(project_run):
    held = project_run["out"]["without_elicitation"]
    assert held["is_error"] is False and held["structured"]["approval"]["status"] == "pending"
    assert len(sent_to(project_run, "place_order")) == 1  # the accepted call only
