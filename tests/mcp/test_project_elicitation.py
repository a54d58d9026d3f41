"""Asking the person over raw HTTP: the event stream of a consequential call, and every refusal of an answer."""
from __future__ import annotations

import json

import pytest
import requests

from service.conversations.held import APPROVED, PENDING
from service.mcp.elicitation import can_elicit, decided
from service.models import Approval
from tests.mcp.project_client import RawProject, error_of, shop_tools
from tests.support.live import publish_project

pytestmark = pytest.mark.service(per_module=True)

ASKING = {"elicitation": {"form": {}}}


@pytest.fixture(scope="module")
def shop(module_service, module_backend):
    publish_project(module_service, shop_tools(module_backend))
    return module_service.url + "/mcp/projects/shop"


@pytest.fixture
def alice(module_service, shop):
    return RawProject(shop, module_service.session_token("alice"))


class Asked:
    """A tools/call answered as an event stream, read up to the elicitation it carries."""

    def __init__(self, raw: RawProject, session: str, items: list[str]) -> None:
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "place_order", "arguments": {"items": items}}}
        self.response = requests.post(raw.url, data=json.dumps(message), headers=raw.headers(session=session),
                                      stream=True, timeout=30)
        assert self.response.headers["Content-Type"].startswith("text/event-stream"), self.response.text
        self.lines = self.response.iter_lines(decode_unicode=True)
        self.request = self.next_message()

    def next_message(self) -> dict:
        return json.loads(next(line for line in self.lines if line.startswith("data:"))[len("data:"):])


def reply(raw: RawProject, session: str, id_, result=None, error=None, **options) -> requests.Response:
    message = {"jsonrpc": "2.0", "id": id_, **({"error": error} if error is not None else {"result": result})}
    return raw.post(message, session=session, **options)


def test_the_call_streams_an_elicitation_naming_the_tool_and_arguments(alice):
    session = alice.session(ASKING)
    asked = Asked(alice, session, ["tea"])
    assert asked.request["method"] == "elicitation/create" and asked.request["id"].startswith("approval:")
    params = asked.request["params"]
    assert params["mode"] == "form" and params["requestedSchema"] == {"type": "object", "properties": {}}
    assert "place_order" in params["message"] and '"tea"' in params["message"]
    assert reply(alice, session, asked.request["id"], {"action": "cancel"}).status_code == 202
    answer = asked.next_message()
    assert answer["id"] == 7 and answer["result"]["isError"] is True
    assert json.loads(answer["result"]["content"][0]["text"]) == {"status": "error", "kind": "declined"}


def test_a_client_that_cannot_ask_leaves_the_call_pending(module_service, alice):
    session = alice.session(ASKING)
    asked = Asked(alice, session, ["jam"])
    refused = reply(alice, session, asked.request["id"], error={"code": -32600, "message": "no person here"})
    assert refused.status_code == 202
    answer = asked.next_message()["result"]
    assert answer["isError"] is False and answer["structuredContent"]["approval"]["status"] == "pending"


def test_an_answer_decides_once(alice):
    session = alice.session(ASKING)
    asked = Asked(alice, session, ["salt"])
    assert reply(alice, session, asked.request["id"], {"action": "decline"}).status_code == 202
    asked.next_message()
    again = reply(alice, session, asked.request["id"], {"action": "accept"})
    assert again.status_code == 409 and error_of(again)["data"]["code"] == "approval-decided"


def test_an_answer_to_no_request_of_ours_is_404(alice):
    session = alice.session(ASKING)
    assert reply(alice, session, "approval:nothing", {"action": "accept"}).status_code == 404
    assert reply(alice, session, 99, {"action": "accept"}).status_code == 404


def test_another_subjects_answer_is_404_and_decides_nothing(module_service, shop, alice):
    session = alice.session(ASKING)
    asked = Asked(alice, session, ["pepper"])
    bob = RawProject(shop, module_service.session_token("bob"))
    bobs = bob.session(ASKING)
    assert reply(bob, bobs, asked.request["id"], {"action": "accept"}).status_code == 404
    assert reply(bob, session, asked.request["id"], {"action": "accept"}).status_code == 404
    assert reply(alice, session, asked.request["id"], {"action": "decline"}).status_code == 202
    assert json.loads(asked.next_message()["result"]["content"][0]["text"])["kind"] == "declined"


def test_an_answer_without_a_known_action_is_400(alice):
    session = alice.session(ASKING)
    asked = Asked(alice, session, ["sugar"])
    bad = reply(alice, session, asked.request["id"], {"action": "maybe"})
    assert bad.status_code == 400 and error_of(bad)["code"] == -32602
    assert reply(alice, session, asked.request["id"], {"action": "decline"}).status_code == 202
    asked.next_message()


def test_a_client_that_reads_no_event_stream_is_answered_pending(alice):
    session = alice.session(ASKING)
    response = alice.request(session, "tools/call", {"name": "place_order", "arguments": {"items": ["oil"]}},
                             Accept="application/json")
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["result"]["structuredContent"]["approval"]["status"] == PENDING


@pytest.mark.parametrize(("capabilities", "asks"), [
    ({}, False), ({"elicitation": {}}, True), ({"elicitation": {"form": {}}}, True),
    ({"elicitation": {"url": {}}}, False), ({"elicitation": {"form": {}, "url": {}}}, True), (None, False),
    ({"elicitation": True}, False)])
def test_only_a_form_elicitation_capability_asks(capabilities, asks):
    assert can_elicit(capabilities) is asks


def test_an_approval_past_its_expiry_undecided_is_declined_and_one_being_sent_is_awaited():
    row = Approval(id="a", call_id="7", tool="place_order", status=PENDING, expires_at=100.0)
    assert decided(row, 99.0) is None
    assert decided(row, 100.0) == {"id": "7", "name": "place_order", "error": {"status": "error", "kind": "declined"}}
    row.status = APPROVED
    assert decided(row, 99.0) is None  # approved, its call still on its way: its result is not kept yet
    row.result = {"id": "7", "name": "place_order", "output": "{}"}
    assert decided(row, 101.0) == row.result
