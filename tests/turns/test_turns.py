"""Whole turns run by the platform, through each adapter, against the scripted model and the mock backend."""
from __future__ import annotations

import json

from tests.support.definitions import gathered, gathering_tool, tool
from tests.turns.conftest import shop_tools


def system_text(body: dict, provider: str) -> str:
    if provider == "anthropic":
        return body.get("system", "")
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def tools_sent(body: dict, provider: str) -> dict[str, dict]:
    """The tools in a model request, by name, each as {"description", "parameters"}."""
    if provider == "anthropic":
        return {t["name"]: {"description": t["description"], "parameters": t["input_schema"]}
                for t in body.get("tools", [])}
    return {t["function"]["name"]: {"description": t["function"]["description"],
                                    "parameters": t["function"]["parameters"]} for t in body.get("tools", [])}


def results_given(body: dict, provider: str) -> dict[str, str]:
    """The tool results a model request hands back, by call id, as the model reads them."""
    if provider == "anthropic":
        blocks = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
        return {b["tool_use_id"]: b.get("content", "") for b in blocks}
    given = {}
    for message in reversed(body["messages"]):
        if message["role"] != "tool":
            break
        given[message["tool_call_id"]] = message["content"]
    return given


def test_a_turn_without_tool_calls_answers_and_is_kept(platform, provider):
    platform.publish(shop_tools(platform.backend))
    platform.models[provider].script([[{"text": "Hello! How can I help?"}]])
    chat = platform.conversation(provider)

    result = chat.send("Hi there")

    assert result["reply"] == "Hello! How can I help?"
    assert result["steps"] == [] and result["stopped"] is None and result["turn"]
    assert [(m["role"], m["text"], m["turn"]) for m in chat.history()] == [
        ("user", "Hi there", result["turn"]), ("assistant", "Hello! How can I help?", result["turn"])]
    (body,) = platform.models[provider].bodies()
    assert body["model"] == "scripted-model"
    assert body["messages"][-1]["role"] == "user" and "Hi there" in json.dumps(body["messages"][-1])
    # The tools as GET …/tools offers them, in the API's own format.
    assert tools_sent(body, provider) == {t["name"]: {"description": t["description"], "parameters": t["parameters"]}
                                          for t in chat.tools()}
    assert platform.backend_calls() == []


def test_two_calls_at_once_then_a_second_step(platform, provider):
    platform.publish(shop_tools(platform.backend) + [gathering_tool("pair_a", platform.backend, "first-step", 2),
                                                     gathering_tool("pair_b", platform.backend, "first-step", 2)])
    model = platform.models[provider]
    model.script([[
        {"calls": [{"id": "a", "name": "pair_a", "arguments": {}}, {"id": "b", "name": "pair_b", "arguments": {}}]},
        {"calls": [{"id": "c", "name": "get_order", "arguments": {"order_id": "o-1001"}}]},
        {"text": "Your order o-1001 is open."},
    ]])
    chat = platform.conversation(provider, subject="alice")

    result = chat.send("Where is my order?")

    assert result["reply"] == "Your order o-1001 is open." and result["stopped"] is None
    first, second = result["steps"]
    assert [c["name"] for c in first["calls"]] == ["pair_a", "pair_b"]
    assert [gathered(r) for r in first["results"]] == [(True, 2), (True, 2)]  # both were at the mock at once
    assert json.loads(second["results"][0]["output"])["id"] == "o-1001"
    calls = platform.backend_calls()
    assert len(calls) == 3 and {(c["turn"], c["sub"]) for c in calls} == {(result["turn"], "alice")}
    # The model was given each result as the body came, and asked again after each step.
    bodies = model.bodies()
    assert len(bodies) == 3
    assert results_given(bodies[1], provider) == {"a": first["results"][0]["output"],
                                                  "b": first["results"][1]["output"]}
    assert results_given(bodies[2], provider) == {"c": second["results"][0]["output"]}
    assert [m["role"] for m in chat.history()] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_unknown_tools_and_bad_arguments_fail_the_call_not_the_turn(platform, provider):
    gated = tool("gated", f"{platform.backend}/products", required_entitlement="orders:admin")
    platform.publish(shop_tools(platform.backend) + [gated])
    model = platform.models[provider]
    model.script([[
        {"calls": [{"id": "1", "name": "drop_tables", "arguments": {}},
                   {"id": "2", "name": "gated", "arguments": {}},
                   {"id": "3", "name": "get_orders", "arguments": {"status": 5}},
                   {"id": "4", "name": "search_products", "arguments": "{oops"}]},
        {"text": "Sorry, I could not do that."},
    ]])
    chat = platform.conversation(provider)

    result = chat.send("Do something odd")

    (step,) = result["steps"]
    assert [r["error"]["kind"] for r in step["results"]] == [
        "unknown-tool", "unknown-tool", "invalid-arguments", "invalid-arguments"]
    assert all("httpCode" not in r["error"] for r in step["results"])
    assert result["reply"] == "Sorry, I could not do that."
    assert platform.backend_calls() == []  # nothing was called
    given = results_given(model.bodies()[1], provider)
    assert json.loads(given["1"]) == {"status": "error", "kind": "unknown-tool"}


def test_session_start_context_reaches_the_model_marked_authoritative(platform, provider):
    backend = platform.backend
    profile = tool("get_profile", f"{backend}/users/{{subject}}/profile", scope="per_user",
                   runs_at_session_start=True, parameters=[{"name": "subject", "type": "string", "location": "path"}])
    broken = tool("loyalty", f"{backend}/tools/loyalty/status/500", runs_at_session_start=True)
    platform.publish([profile, broken] + shop_tools(backend))
    model = platform.models[provider]
    model.script([[{"text": "Hello Alice."}], [{"text": "Still here."}]])
    chat = platform.conversation(provider, subject="alice")

    chat.send("Hi")
    chat.send("Hi again")

    for body in model.bodies():  # every turn starts from the same context, without running the tools again
        system = system_text(body, provider)
        assert "authoritative" in system
        items = json.loads(system.split("\n\n", 1)[1])
        assert items == chat.opened["context"]
        assert [(i["tool"], i["description"], i["authoritative"]) for i in items] == [
            ("get_profile", "The get_profile tool.", True), ("loyalty", "The loyalty tool.", True)]
        assert json.loads(items[0]["output"])["loyalty_tier"] == "gold"
        assert items[1]["error"] == {"status": "error", "kind": "refused", "httpCode": 500}
        assert "mock status 500" not in json.dumps(body)
        assert not {"get_profile", "loyalty"} & set(tools_sent(body, provider))
    assert len([c for c in platform.backend_calls() if c["tool"] == "get_profile"]) == 1


def test_the_model_never_sees_the_subject_an_unoffered_tool_or_an_error_body(platform, provider):
    backend = platform.backend
    whoami = tool("whoami", f"{backend}/tools/whoami/delay/0", scope="per_user",
                  parameters=[{"name": "subject", "type": "string", "location": "query"}])
    broken = tool("broken", f"{backend}/tools/broken/status/500")
    gated = tool("gated", f"{backend}/products", required_entitlement="orders:admin",
                 description="A gated tool only admins get.")
    platform.publish([whoami, broken, gated])
    model = platform.models[provider]
    model.script([[{"calls": [{"id": "w", "name": "whoami", "arguments": {}},
                              {"id": "b", "name": "broken", "arguments": {}}]},
                   {"text": "Done."}]])
    chat = platform.conversation(provider)

    result = chat.send("Who am I?")

    assert result["steps"][0]["results"][1]["error"] == {"status": "error", "kind": "refused", "httpCode": 500}
    (called,) = [c for c in platform.backend_calls() if c["tool"] == "whoami"]
    assert called["sub"] == platform.subject and platform.subject in called["query"]  # the endpoint got it
    bodies = model.bodies()
    assert len(bodies) == 2
    for body in bodies:
        sent = json.dumps(body)
        assert platform.subject not in sent
        assert "gated" not in sent and "only admins" not in sent
        assert "mock status 500" not in sent
        offered = tools_sent(body, provider)
        assert set(offered) == {"whoami", "broken"}
        assert offered["whoami"]["parameters"]["properties"] == {}


def test_history_is_the_subjects_own(platform, provider):
    platform.publish(shop_tools(platform.backend))
    platform.models[provider].script([[{"text": "Hi."}]])
    chat = platform.conversation(provider)
    chat.send("Hello")
    service = platform.services[provider]
    other = service.session_token("mallory")
    path = f"/v1/conversations/{chat.id}/messages"
    assert service.as_session("GET", path, other).status_code == 404
    assert service.as_session("POST", path, other, json={"text": "hi"}).status_code == 404
    assert len(chat.history()) == 2
