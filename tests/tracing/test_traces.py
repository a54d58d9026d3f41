"""Traces end to end (issue 35): the service in this process under its own server, tracing to a real OTLP/HTTP receiver
on 127.0.0.1, the mock backend as the endpoint (its echo shows the `traceparent` it was sent) and the scripted model
for whole turns. Each test checks parentage, names and attributes, and that no secret it used is in any span."""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
import requests

from service import tracing
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project
from tests.support.logs import captured_logs, log_lines
from tests.support.otlp import ReceivedSpan, flushed, otlp_receiver, tracing_to
from tests.turns.conftest import turn_platform

#: A caller's trace, as its own tracing would send it (W3C's example ids).
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
#: An argument value and a message no span may carry.
SECRET_ARGUMENT = "argument-value-7f3a"
SECRET_MESSAGE = "message-text-9c1e"
#: Where the turn test writes the spans it received, when set (the docs' trace picture is drawn from them).
TRACE_OUT = "TOOLGATE_TRACE_OUT"
ITEM = {"name": "item", "type": "string", "location": "body"}


@pytest.fixture
def receiver():
    with otlp_receiver() as (endpoint, received), tracing_to(endpoint, OTEL_SERVICE_NAME="toolgate-under-test"):
        yield received


def assert_private(spans: list[ReceivedSpan], *secrets: str) -> None:
    """No name, attribute or event of any span holds any of `secrets` (nor a piece of a JWT or key that long)."""
    assert spans
    kinds = {s.kind for s in spans}
    for span in spans:
        for text in span.texts():
            for secret in secrets:
                assert secret not in text, (span.name, text)
            assert "Bearer" not in text and "tgk_" not in text and "eyJ" not in text, (span.name, text)
    assert kinds  # every kind present was scanned


def parent(receiver, span: ReceivedSpan) -> ReceivedSpan:
    return receiver.by_id(span.parent_id)


def echoed_traceparent(result: dict) -> str:
    headers = {k.lower(): v for k, v in json.loads(result["output"])["headers"].items()}
    return headers["traceparent"]


def test_off_without_an_exporter_no_span_is_made_and_nothing_is_carried(tmp_path, monkeypatch):
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    tracing.stop()
    assert not tracing.configure() and tracing.state.tracer is None
    with live_service(tmp_path) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("look", f"{backend}/tools/look/echo")])
        _, _, step = Conversation_step(service, ("look", {}))
        headers = {k.lower() for k in json.loads(step.json()["results"][0]["output"])["headers"]}
        assert "traceparent" not in headers
        assert tracing.current_ids() is None and tracing.outgoing_headers() == {}


@pytest.mark.parametrize("environ, wanted", [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
    ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False),
    ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, False),
    ({"OTEL_TRACES_EXPORTER": "zipkin"}, False),
])
def test_only_opentelemetrys_variables_turn_tracing_on(environ, wanted):
    assert tracing.exporter_wanted(environ) is wanted


def test_a_grpc_exporter_is_refused_and_tracing_stays_off():
    tracing.stop()
    assert not tracing.configure({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317",
                                  "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert tracing.state.tracer is None


def Conversation_step(service, *calls, headers=None):
    """Open a conversation on `shop` with a fresh session token, start a turn, run one step of `calls`."""
    token = service.session_token("alice")
    conversation = Conversation(service, token)
    turn = conversation.turn()
    body = {"calls": [{"id": f"call-{i}", "name": name, "arguments": arguments}
                      for i, (name, arguments) in enumerate(calls)]}
    step = requests.post(f"{service.url}/v1/conversations/{conversation.id}/turns/{turn}/steps", json=body,
                         headers={"Authorization": f"Bearer {token}", **(headers or {})}, timeout=30)
    assert step.status_code == 200, step.text
    return conversation, token, step


def test_a_step_continues_the_callers_trace_and_each_call_is_an_execute_tool_span_the_endpoint_continues(
        tmp_path, receiver):
    with live_service(tmp_path) as service, mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("place_order", f"{backend}/tools/place_order/echo", method="POST",
                                       parameters=[ITEM]),
                                  tool("broken", f"{backend}/tools/broken/status/500")])
        with captured_logs() as logs:
            conversation, token, step = Conversation_step(
                service, ("place_order", {"item": SECRET_ARGUMENT}), ("broken", {}), ("nowhere", {}),
                headers={"traceparent": TRACEPARENT, "tracestate": "vendor=value"})
        ordered, broken, unknown = step.json()["results"]
        assertions = [c["authorization"] for c in requests.get(f"{backend}/_calls", timeout=5).json()["calls"]]

    spans = flushed(receiver).spans
    server = receiver.one("POST /v1/conversations/<conversation_id>/turns/<turn_id>/steps")
    assert (server.kind, server.trace_id, server.parent_id) == ("server", CALLER_TRACE, CALLER_SPAN)
    assert server.attributes["http.response.status_code"] == 200
    assert server.resource["service.name"] == "toolgate-under-test"
    calls = {s.attributes["gen_ai.tool.call.id"]: s for s in receiver.named("execute_tool ")}
    assert set(calls) == {"call-0", "call-1", "call-2"}
    for call in calls.values():
        assert (call.trace_id, call.parent_id, call.kind) == (CALLER_TRACE, server.span_id, "internal")
        assert call.attributes["gen_ai.operation.name"] == "execute_tool"
        assert call.attributes["gen_ai.conversation.id"] == conversation.id
    order = calls["call-0"]
    assert order.name == "execute_tool place_order" and not order.error
    assert (order.attributes["gen_ai.tool.name"], order.attributes["http.response.status_code"],
            order.attributes["server.address"]) == ("place_order", 200, "127.0.0.1")
    # The endpoint received this call's span as its parent: the business's tracing continues the same trace.
    assert echoed_traceparent(ordered) == f"00-{CALLER_TRACE}-{order.span_id}-01"
    assert calls["call-1"].error and calls["call-1"].attributes["error.type"] == broken["error"]["kind"] == "refused"
    assert calls["call-1"].attributes["http.response.status_code"] == 500
    assert calls["call-2"].error and calls["call-2"].attributes["error.type"] == unknown["error"]["kind"]
    # Log lines of the request carry its trace; each call's line is written under the step's span.
    lines = [line for line in log_lines(logs) if line.get("request_id") == step.headers["X-Request-Id"]]
    assert [line["logger"] for line in lines] == ["service.call"] * 3 + ["service.request"]
    assert {(line["trace_id"], line["span_id"]) for line in lines} == {(CALLER_TRACE, server.span_id)}
    assert_private(spans, token, SECRET_ARGUMENT, service.admin_key, service.backend_key, *assertions,
                   *(a.removeprefix("Bearer ") for a in assertions), ordered["output"])


def test_a_whole_turn_is_one_span_with_its_model_calls_steps_calls_and_approvals(tmp_path, receiver):
    with turn_platform(tmp_path, providers=("openai",)) as platform:
        backend = platform.backend
        platform.publish([
            tool("profile", f"{backend}/tools/profile/echo", runs_at_session_start=True),
            tool("look", f"{backend}/tools/look/echo"),
            tool("place_order", f"{backend}/tools/place_order/echo", method="POST", parameters=[ITEM],
                 requires_approval=True)])
        platform.models["openai"].script([
            [{"calls": [{"id": "l", "name": "look", "arguments": {}},
                        {"id": "p", "name": "place_order", "arguments": {"item": SECRET_ARGUMENT}}]},
             {"text": "Done: {results}"}]])
        chat = platform.conversation("openai")
        paused = chat.send(SECRET_MESSAGE)
        [approval] = paused["approvals"]
        decided = chat.decide(approval["id"], "approve")
        streamed = chat.stream(None)  # the continue, as server-sent events: its span lasts until the stream ends
        assert streamed[-1][0] == "reply" and streamed[-1][1]["reply"].startswith("Done")
        service = platform.services["openai"]
        assertions = [c["authorization"] for c in platform.backend_calls()]

    spans = flushed(receiver).spans
    if os.environ.get(TRACE_OUT):  # the spans for docs/screenshots/trace-turn.png (tests/tracing/waterfall.py)
        Path(os.environ[TRACE_OUT]).write_text(json.dumps([dataclasses.asdict(s) for s in spans], indent=1))
    # Session-start calls: under the conversation's opening.
    opening = receiver.one("POST /v1/conversations")
    start = receiver.one("execute_tool profile")
    assert (start.parent_id, start.attributes["toolgate.session_start"]) == (opening.span_id, True)
    # The turn: under its request's server span, its model call, its step and the step's calls under it.
    first, again = receiver.named("invoke_agent ")
    assert parent(receiver, first).name == "POST /v1/conversations/<conversation_id>/messages"
    assert first.attributes["gen_ai.conversation.id"] == chat.id
    assert first.attributes["toolgate.turn.id"] == again.attributes["toolgate.turn.id"] == paused["turn"]
    assert first.attributes["toolgate.turn.stopped"] == "awaiting-approval"
    streaming = parent(receiver, again)
    assert streaming.name == "POST /v1/conversations/<conversation_id>/messages" and streaming != parent(receiver, first)
    assert streaming.start_ns <= again.start_ns and again.end_ns <= streaming.end_ns
    chats = receiver.named("chat ")
    assert [c.name for c in chats] == ["chat scripted-model"] * 2
    assert [c.parent_id for c in chats] == [first.span_id, again.span_id]
    assert {(c.attributes["gen_ai.request.model"], c.attributes["gen_ai.provider.name"]) for c in chats} == {
        ("scripted-model", "openai")}
    assert all(type(c.attributes["gen_ai.usage.input_tokens"]) is int for c in chats)  # the scripted model reports 0s
    step = receiver.one("step 0")
    assert step.parent_id == first.span_id
    look = receiver.one("execute_tool look")
    assert look.parent_id == step.span_id and look.trace_id == first.trace_id
    # The held call: an event on its step's span; the decision: an event on the decision's request, whose call it runs.
    [(held_name, held)] = step.events
    assert held_name == "approval held" and held["toolgate.approval.id"] == approval["id"]
    assert (held["gen_ai.tool.name"], held["toolgate.approval.status"]) == ("place_order", "pending")
    decision = receiver.one("POST /v1/conversations/<conversation_id>/approvals/<approval_id>")
    assert [(name, attrs["toolgate.approval.status"]) for name, attrs in decision.events] == [
        ("approval decided", "approved")]
    order = receiver.one("execute_tool place_order")
    assert order.parent_id == decision.span_id
    assert echoed_traceparent(decided["result"]).startswith(f"00-{order.trace_id}-{order.span_id}-")
    assert_private(spans, SECRET_MESSAGE, SECRET_ARGUMENT, chat.token, service.admin_key, service.backend_key,
                   *assertions, *(a.removeprefix("Bearer ") for a in assertions), decided["result"]["output"])
    assert {s.kind for s in spans} >= {"server", "internal"}


def test_a_failed_model_call_is_an_error_span_with_the_failure_kind_and_not_its_detail(receiver):
    from service.llm import MODEL_REFUSED, ModelFailure

    with pytest.raises(ModelFailure), tracing.span("chat scripted-model", {"gen_ai.operation.name": "chat"}):
        raise ModelFailure(MODEL_REFUSED, f"the API said {SECRET_MESSAGE}", 500)
    span = flushed(receiver).one("chat scripted-model")
    assert span.error and span.attributes["error.type"] == MODEL_REFUSED
    assert_private(receiver.spans, SECRET_MESSAGE)
