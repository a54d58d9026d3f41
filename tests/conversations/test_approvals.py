"""Calls of tools that require approval (issue 19), on real servers: the endpoint receives nothing until the
conversation's own subject approves, then exactly the held call once, its assertion carrying the approval's id;
a decline, an expired approval, a second decision, another subject and another conversation each send nothing."""
import json

import jwt
import pytest
import requests

from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

ORDER = {"name": "item", "type": "string", "location": "body"}


def setup(service, backend):
    """A project with a consequential tool (place_order, which echoes) and an ordinary one (look)."""
    publish_project(service, [
        tool("place_order", f"{backend}/tools/place_order/echo", method="POST", parameters=[ORDER],
             requires_approval=True),
        tool("look", f"{backend}/tools/look/echo"),
    ])


@pytest.fixture
def shop(service, backend):
    """The service with the project set up. A service per test: two tests below start their own (on each engine,
    with a zero lifetime), and a module's shared one would not survive that."""
    setup(service, backend)


def received(backend, name):
    """Every request the mock received for tool `name`."""
    return requests.get(f"{backend}/_calls", params={"tool": name}, timeout=5).json()["calls"]


def approvals(service, conversation, token=None):
    return service.as_session("GET", f"/v1/conversations/{conversation.id}/approvals", token or conversation.token)


def decide(service, conversation, approval_id, decision, token=None, conversation_id=None):
    path = f"/v1/conversations/{conversation_id or conversation.id}/approvals/{approval_id}"
    return service.as_session("POST", path, token or conversation.token, json={"decision": decision})


def held(conversation, arguments=None):
    """Run a step with one call of place_order and one of look; the held call's approval, and the turn."""
    turn = conversation.turn()
    order, look = conversation.step(turn, ("place_order", arguments or {"item": "milk"}), ("look", {}))
    assert "output" in look  # the step's other call ran as usual
    assert set(order) == {"id", "name", "approval"} and order["name"] == "place_order"
    assert set(order["approval"]) == {"id", "status", "expires_at"}
    assert order["approval"]["status"] == "pending"
    return order["approval"], turn


def test_nothing_is_sent_until_approved_then_exactly_the_held_call_once(tmp_path, database_url):
    with live_service(tmp_path, database_url=database_url) as service, mock_backend([service.issuer]) as backend:
        setup(service, backend)
        conversation = Conversation(service, service.session_token("alice"))
        approval, turn = held(conversation, {"item": "milk"})
        assert received(backend, "place_order") == [] and len(received(backend, "look")) == 1

        [listed] = approvals(service, conversation).json()["approvals"]
        assert listed["id"] == approval["id"] and listed["status"] == "pending"
        assert (listed["tool"], listed["display_name"], listed["description"]) == (
            "place_order", "place_order", "The place_order tool.")
        assert listed["arguments"] == {"item": "milk"} and listed["turn"] == turn and listed["version"] == 1
        assert listed["expires_at"] == approval["expires_at"] and listed["decided_at"] is None

        answer = decide(service, conversation, approval["id"], "approve")
        assert answer.status_code == 200, answer.text
        decided = answer.json()
        assert decided["approval"]["status"] == "approved" and decided["approval"]["decided_at"] is not None
        echoed = json.loads(decided["result"]["output"])
        assert echoed["json"] == {"item": "milk"} and echoed["method"] == "POST"
        assert echoed["claims"]["approval"] == approval["id"]
        [call] = received(backend, "place_order")
        claims = jwt.decode(call["authorization"].removeprefix("Bearer "), options={"verify_signature": False})
        assert claims["approval"] == approval["id"] and claims["turn"] == turn and claims["sub"] == "alice"
        assert claims["aud"] == "place_order"

        replay = decide(service, conversation, approval["id"], "approve")
        assert replay.status_code == 409 and replay.json()["code"] == "approval-decided"
        assert decide(service, conversation, approval["id"], "decline").json()["code"] == "approval-decided"
        assert len(received(backend, "place_order")) == 1
        assert approvals(service, conversation).json()["approvals"][0]["status"] == "approved"

        # The call log has the sent call, with its assertion's id, never a body or a token.
        [logged] = service.api("GET", "/v1/calls", params={"tool": "place_order"}).json()["calls"]
        assert logged["kind"] == "ok" and logged["turn"] == turn and logged["jti"] == claims["jti"]
        assert logged["approval"] == approval["id"]
        assert [c["approval"] for c in service.api("GET", "/v1/calls", params={"tool": "look"}).json()["calls"]] == [
            None]


def test_unknown_tool_and_invalid_arguments_are_decided_before_anything_is_held(service, backend, shop):
    conversation = Conversation(service, service.session_token("ida"))
    turn = conversation.turn()
    results = conversation.step(turn, ("place_order", {}), ("place_order", {"item": 3}), ("no_such_tool", {}))
    assert [r["error"]["kind"] for r in results] == ["invalid-arguments", "invalid-arguments", "unknown-tool"]
    assert approvals(service, conversation).json() == {"approvals": []}
    assert received(backend, "place_order") == []


def test_a_declined_call_is_never_sent_and_fails_declined(service, backend, shop):
    conversation = Conversation(service, service.session_token("dee"))
    approval, _ = held(conversation)
    answer = decide(service, conversation, approval["id"], "decline")
    assert answer.status_code == 200, answer.text
    assert answer.json()["approval"]["status"] == "declined"
    assert answer.json()["result"] == {"id": "0", "name": "place_order", "error": {"status": "error",
                                                                                   "kind": "declined"},
                                       "latency_ms": 0}
    again = decide(service, conversation, approval["id"], "approve")
    assert again.status_code == 409 and again.json()["code"] == "approval-decided"
    assert "declined" in again.json()["message"]
    assert received(backend, "place_order") == []
    [logged] = service.api("GET", "/v1/calls", params={"tool": "place_order", "subject": "dee"}).json()["calls"]
    assert logged["kind"] == "declined" and logged["jti"] is None and logged["approval"] == approval["id"]


def test_another_subject_or_conversation_cannot_see_or_decide_an_approval(service, backend, shop):
    alice = Conversation(service, service.session_token("amy"))
    approval, _ = held(alice)
    bob = service.session_token("bob")
    assert approvals(service, alice, token=bob).status_code == 404
    refused = decide(service, alice, approval["id"], "approve", token=bob)
    assert refused.status_code == 404 and refused.json()["code"] == "not-found"

    elsewhere = Conversation(service, alice.token)
    refused = decide(service, alice, approval["id"], "approve", conversation_id=elsewhere.id)
    assert refused.status_code == 404 and refused.json()["code"] == "not-found"
    assert decide(service, alice, "no-such-approval", "approve").status_code == 404
    bad = decide(service, alice, approval["id"], "yes")
    assert bad.status_code == 422 and bad.json()["errors"][0]["rule"] == "decision-format"

    assert received(backend, "place_order") == []
    assert approvals(service, alice).json()["approvals"][0]["status"] == "pending"  # still the person's to decide
    assert decide(service, alice, approval["id"], "approve").status_code == 200
    assert len(received(backend, "place_order")) == 1


def test_an_approval_expires_with_the_session_token_at_the_latest(service, backend, shop):
    token = service.session_token("tess", ttl=60)
    conversation = Conversation(service, token)
    approval, _ = held(conversation)
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert approval["expires_at"] == expires  # 60 s of token left, under the 300 s an approval may last


def test_an_approval_needs_the_tools_entitlement_on_the_deciding_token(service, backend, shop):
    publish_project(service, [tool("vip_order", f"{backend}/tools/vip_order/echo", requires_approval=True,
                                   required_entitlement="orders:write")], project="vip")
    entitled = Conversation(service, service.session_token("val", entitlements=["orders:write"]), project="vip")
    [result] = entitled.step(entitled.turn(), ("vip_order", {}))
    plain = service.session_token("val")
    refused = decide(service, entitled, result["approval"]["id"], "approve", token=plain)
    assert refused.status_code == 403 and refused.json()["code"] == "not-entitled"
    assert received(backend, "vip_order") == []
    assert decide(service, entitled, result["approval"]["id"], "approve").status_code == 200
    assert len(received(backend, "vip_order")) == 1


def test_an_expired_approval_sends_nothing(tmp_path):
    # An approval lifetime of zero: every approval has expired by the time anyone decides it, with no wait.
    with live_service(tmp_path, approval_lifetime_seconds=0) as service, \
            mock_backend([service.issuer]) as backend:
        setup(service, backend)
        conversation = Conversation(service, service.session_token("alice"))
        approval, _ = held(conversation)
        assert approvals(service, conversation).json()["approvals"][0]["status"] == "expired"
        refused = decide(service, conversation, approval["id"], "approve")
        assert refused.status_code == 409 and refused.json()["code"] == "approval-expired"
        assert received(backend, "place_order") == []


def test_a_malformed_decision_or_approval_id_is_refused_not_a_server_error(service, backend, shop):
    conversation = Conversation(service, service.session_token("max"))
    approval, _ = held(conversation)
    for body in ({"decision": {}}, {"decision": None}, {}, []):
        path = f"/v1/conversations/{conversation.id}/approvals/{approval['id']}"
        answer = service.as_session("POST", path, conversation.token, json=body)
        assert answer.status_code == 422 and answer.json()["errors"][0]["rule"] == "decision-format"
    assert decide(service, conversation, "x" * 200, "approve").status_code == 404
    assert decide(service, conversation, "bad\x00id", "approve").status_code == 404
    assert received(backend, "place_order") == []
