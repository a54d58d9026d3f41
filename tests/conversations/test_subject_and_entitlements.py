"""The subject comes from the session token, never the model; entitlements decide what is offered."""
import json

from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project


def test_a_model_supplied_subject_never_reaches_the_endpoint(service, backend):
    publish_project(service, [
        tool("echo_user", backend + "/tools/echo_user/echo/{subject}", scope="per_user",
             parameters=[SUBJECT_IN_PATH, {"name": "q", "type": "string", "location": "query", "required": False}]),
        tool("get_orders", backend + "/users/{subject}/orders", scope="per_user", parameters=[SUBJECT_IN_PATH]),
    ])
    conversation = Conversation(service, service.session_token("alice"))
    assert conversation.tools()[0]["parameters"]["properties"] == {"q": {"type": "string"}}  # no subject offered
    turn = conversation.turn()
    results = conversation.step(
        turn,
        ("echo_user", {"subject": "bob", "q": "x"}),
        ("echo_user", {"Subject": "bob", "SUBJECT": "bob"}),
        ("get_orders", {"subject": "bob"}),
    )
    for result in results[:2]:
        request = json.loads(result["output"])
        assert request["path"].startswith("/tools/echo_user/echo/alice")
        assert "bob" not in json.dumps(request)
    assert json.loads(results[2]["output"])["subject"] == "alice"


def test_an_unentitled_tool_is_neither_offered_nor_callable(service, backend):
    publish_project(service, [
        tool("search", backend + "/tools/search/echo"),
        tool("admin_report", backend + "/tools/admin_report/echo", required_entitlement="reports:read"),
    ])
    plain = service.session_token("alice")
    entitled = service.session_token("alice", entitlements=["reports:read"])
    conversation = Conversation(service, plain)
    assert [t["name"] for t in conversation.tools()] == ["search"]
    assert sorted(t["name"] for t in conversation.tools(token=entitled)) == ["admin_report", "search"]
    result = conversation.step(conversation.turn(), ("admin_report", {}))[0]
    assert result["error"] == {"status": "error", "kind": "unknown-tool"}


def test_arguments_that_do_not_fit_are_invalid_and_nothing_is_called(service, backend):
    import requests

    publish_project(service, [tool("search_products", backend + "/products", parameters=[
        {"name": "q", "type": "string", "location": "query"},
        {"name": "max_price", "type": "number", "location": "query", "required": False}])])
    conversation = Conversation(service, service.session_token("alice"))
    requests.delete(backend + "/_calls", timeout=5)
    results = conversation.step(
        conversation.turn(),
        ("search_products", {}),  # missing required
        ("search_products", {"q": "tea", "max_price": "cheap"}),  # wrong type
        ("search_products", {"q": "tea", "colour": "red"}),  # unknown name
        ("search_products", {"q": ".."}),  # fine in a query string
        ("search_products", "{not json"),
    )
    invalid = {"status": "error", "kind": "invalid-arguments"}
    assert [r.get("error") for r in results[:3]] == [invalid] * 3
    assert results[4]["error"] == invalid
    assert "output" in results[3]
    assert len(requests.get(backend + "/_calls", timeout=5).json()["calls"]) == 1


def test_hostile_path_values_never_change_the_url_shape(service, backend):
    publish_project(service, [tool("get_order", backend + "/tools/get_order/echo/orders/{id}",
                                   parameters=[{"name": "id", "type": "string", "location": "path"}])])
    conversation = Conversation(service, service.session_token("alice"))
    hostile = ["../admin", "a/b?c#d", "x\r\nInjected: yes", "é/ü?", "%2e%2e", "y" * 2_000]
    refused = ["..", ".", "", "x" * 10_000]  # dot segments, nothing, and past the URL's size bound
    results = conversation.step(conversation.turn(), *[("get_order", {"id": v}) for v in hostile + refused])
    for value, result in zip(hostile, results):
        assert "output" in result, (value, result)
        request = json.loads(result["output"])
        tail = request["path"].split("/tools/get_order/echo/orders/", 1)[1]
        assert "/" not in tail and "?" not in tail and "#" not in tail, value
        assert request["query"]["raw"] == ""
        assert "injected" not in {k.lower() for k in request["headers"]}
    assert [r["error"]["kind"] for r in results[len(hostile):]] == ["invalid-arguments"] * len(refused)


def test_the_offered_tools_keep_the_definitions_order(service, backend):
    # The model reads the tool's parameters as its author wrote them, not sorted; the answer is the raw JSON text.
    parameters = [{"name": name, "type": "string", "location": "query", "description": f"The {name}."}
                  for name in ("zeta", "alpha", "mu")]
    publish_project(service, [tool("search", backend + "/tools/search/echo", parameters=parameters)])
    token = service.session_token("alice")
    conversation = Conversation(service, token)
    answer = service.as_session("GET", f"/v1/conversations/{conversation.id}/tools", token)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/json"
    text = answer.text
    assert text.index('"zeta"') < text.index('"alpha"') < text.index('"mu"')
    assert text.index('"name"') < text.index('"description"') < text.index('"parameters"')
    assert answer.json()["tools"][0]["parameters"]["properties"]["mu"] == {"type": "string", "description": "The mu."}


def test_opening_a_conversation_offers_the_tools_in_the_same_order(service, backend):
    parameters = [{"name": name, "type": "string", "location": "query"} for name in ("zeta", "alpha")]
    publish_project(service, [tool("search", backend + "/tools/search/echo", parameters=parameters)])
    token = service.session_token("alice")
    answer = service.as_session("POST", "/v1/conversations", token, json={"project": "shop"})
    assert answer.status_code == 201
    assert answer.text.index('"zeta"') < answer.text.index('"alpha"')
