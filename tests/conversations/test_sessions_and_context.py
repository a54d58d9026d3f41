"""Session-start context, parallel steps, and who may see a conversation."""
import time

import jwt

from service.limits import CLOCK_SKEW_SECONDS
from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import gathered, gathering_tool, tool
from tests.support.live import Conversation, publish_project


def test_session_start_tools_run_once_in_parallel_and_fill_the_context(service, backend):
    import requests

    publish_project(service, [
        tool("get_profile", backend + "/users/{subject}/profile", scope="per_user", runs_at_session_start=True,
             parameters=[SUBJECT_IN_PATH]),
        gathering_tool("start_a", backend, "session-start", 2, runs_at_session_start=True),
        gathering_tool("start_b", backend, "session-start", 2, runs_at_session_start=True),
        tool("broken_start", backend + "/tools/broken_start/status/500", runs_at_session_start=True),
        tool("vip_start", backend + "/tools/vip_start/echo", runs_at_session_start=True, required_entitlement="vip"),
        tool("search", backend + "/tools/search/echo"),
    ])
    conversation = Conversation(service, service.session_token("alice"))
    context = {item["tool"]: item for item in conversation.opened["context"]}
    assert set(context) == {"get_profile", "start_a", "start_b", "broken_start"}  # vip_start skipped
    assert gathered(context["start_a"]) == gathered(context["start_b"]) == (True, 2)  # both at the endpoint at once
    assert all(item["authoritative"] is True for item in context.values())
    assert context["get_profile"]["description"] == "The get_profile tool."
    assert '"loyalty_tier"' in context["get_profile"]["output"]
    assert context["broken_start"] == {"tool": "broken_start", "description": "The broken_start tool.",
                                       "authoritative": True,
                                       "error": {"status": "error", "kind": "refused", "httpCode": 500}}
    assert [t["name"] for t in conversation.tools()] == ["search"]  # session-start tools are not offered

    calls_before = len(requests.get(backend + "/_calls", timeout=5).json()["calls"])
    again = service.as_session("GET", f"/v1/conversations/{conversation.id}", conversation.token).json()
    assert again["context"] == conversation.opened["context"]
    assert len(requests.get(backend + "/_calls", timeout=5).json()["calls"]) == calls_before
    session_turns = {c["turn"] for c in requests.get(backend + "/_calls", timeout=5).json()["calls"]}
    assert len(session_turns) == 1  # session-start calls share a turn id of their own


def test_a_session_start_tool_called_by_the_model_is_unknown(service, backend):
    publish_project(service, [tool("get_profile", backend + "/users/{subject}/profile", scope="per_user",
                                   runs_at_session_start=True, parameters=[SUBJECT_IN_PATH])])
    conversation = Conversation(service, service.session_token("alice"))
    result = conversation.step(conversation.turn(), ("get_profile", {}))[0]
    assert result["error"]["kind"] == "unknown-tool"


def test_both_calls_of_a_step_are_at_the_endpoint_at_once(service, backend):
    publish_project(service, [gathering_tool("pair_a", backend, "step", 2), gathering_tool("pair_b", backend, "step", 2)])
    conversation = Conversation(service, service.session_token("alice"))
    results = conversation.step(conversation.turn(), ("pair_a", {}), ("pair_b", {}))
    assert [gathered(r) for r in results] == [(True, 2), (True, 2)]


def test_a_conversation_is_visible_only_to_its_subject(service, backend):
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    conversation = Conversation(service, service.session_token("alice"))
    bob = service.session_token("bob")
    for method, path in [("GET", f"/v1/conversations/{conversation.id}"),
                         ("GET", f"/v1/conversations/{conversation.id}/tools"),
                         ("POST", f"/v1/conversations/{conversation.id}/turns")]:
        assert service.as_session(method, path, bob).status_code == 404


def test_a_step_answers_only_the_subject_whose_conversation_and_turn_it_names(service, backend):
    publish_project(service, [tool("search", backend + "/tools/search/echo")])
    alice = Conversation(service, service.session_token("alice"))
    turn = alice.turn()
    other_turn = Conversation(service, service.session_token("alice")).turn()
    alice.step(turn, ("search", {}))  # the conversation and turn are now known to the service, and remembered
    bob = service.session_token("bob")
    body = {"calls": [{"id": "1", "name": "search", "arguments": {}}]}

    def step(conversation, turn_id, token):
        return service.as_session("POST", f"/v1/conversations/{conversation}/turns/{turn_id}/steps", token,
                                  json=body)

    refused = {"bob": step(alice.id, turn, bob), "a turn of another conversation": step(alice.id, other_turn,
                                                                                         alice.token),
               "no such conversation": step("nope", turn, alice.token)}
    assert {k: (r.status_code, r.json()["message"]) for k, r in refused.items()} == {
        "bob": (404, "No such conversation."), "a turn of another conversation": (404, "No such turn."),
        "no such conversation": (404, "No such conversation.")}
    assert step(alice.id, turn, alice.token).status_code == 200


def test_expired_or_forged_session_tokens_are_401(service, backend):
    publish_project(service, [tool("search", backend + "/tools/search/echo")])

    def opened(token):
        response = service.as_session("POST", "/v1/conversations", token, json={"project": "shop"})
        return response.status_code, response.json().get("message")

    # Minted in the past rather than waited on: expired by more than the verifier's skew, or by less.
    expired = service.session_token_minted_at(time.time() - 60 - CLOCK_SKEW_SECONDS - 2, ttl=60)
    within_skew = service.session_token_minted_at(time.time() - 60 - CLOCK_SKEW_SECONDS + 3, ttl=60)
    assert opened(expired) == (401, "The session token was refused (expired).")
    assert opened(within_skew)[0] == 201
    good = service.session_token("alice")
    header, payload, signature = good.split(".")
    claims = jwt.decode(good, options={"verify_signature": False})
    forged = jwt.encode({**claims, "sub": "bob"}, "a-shared-secret-of-32-bytes-or-more!", algorithm="HS256",
                        headers={"kid": jwt.get_unverified_header(good)["kid"]})
    for token in (forged, f"{header}.{payload}.", "not-a-token", service.admin_key):
        response = service.as_session("POST", "/v1/conversations", token, json={"project": "shop"})
        assert response.status_code == 401, token


def test_session_tokens_are_minted_only_by_backend_or_admin_keys_within_30_minutes(service):
    def mint(key, **body):
        return service.api("POST", "/v1/session-tokens", key, json={"subject": "alice", **body})

    assert mint(service.backend_key).status_code == 201
    assert mint(service.admin_key).status_code == 201
    assert mint(service.agent_key).status_code == 403
    too_long = mint(service.backend_key, ttl_seconds=1801)
    assert too_long.status_code == 422 and too_long.json()["errors"][0]["field"] == "ttl_seconds"
    token = mint(service.backend_key, entitlements=["a:b"]).json()["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert set(claims) == {"iss", "aud", "sub", "anon", "entitlements", "iat", "exp", "jti"}
    assert claims["aud"] == claims["iss"] == service.issuer
    assert claims["exp"] - claims["iat"] == 1800
    assert jwt.get_unverified_header(token)["typ"] != "JWT"  # never mistaken for a call assertion
