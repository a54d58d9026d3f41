"""The adapters' pure parts: each API's format from the neutral values and back, the failure mapping (whose
order matters), the bound on a whole call, the system text, and which adapter a configuration builds."""
from __future__ import annotations

import json

import anthropic
import gevent
import httpx2
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion

from service.api.conversations.routes import MODEL_ADAPTER
from service.config import Config
from service.errors import ServiceError
from service.llm import (
    MODEL_MALFORMED,
    MODEL_REFUSED,
    MODEL_TIMED_OUT,
    MODEL_UNREACHABLE,
    ModelFailure,
    ModelMessage,
    ModelRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
    adapter_for,
    context_prompt,
)
from service.llm.anthropic_messages import MessagesAdapter, anthropic_messages, anthropic_tools, parse_message
from service.llm.openai_chat import ChatCompletionsAdapter, chat_messages, chat_tools, parse_completion
from service.llm.sdk import failure_from, within
from tests.support.databases import app_for
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, publish_project

SPEC = ToolSpec("get_orders", "The customer's orders.", {"type": "object", "properties": {}, "required": []})
CALLS = (ToolCall("c1", "get_orders", {"status": "open"}), ToolCall("c2", "nope", "{bad"))
RESULTS = (ToolResult("c1", "get_orders", '{"orders": []}', False),
           ToolResult("c2", "nope", '{"status": "error", "kind": "unknown-tool"}', True))
CONVERSATION = ModelRequest("Context here.", (
    ModelMessage("user", "Orders?"), ModelMessage("assistant", "", CALLS), ModelMessage("tool", results=RESULTS),
    ModelMessage("user", "And now?")), (SPEC,))


def test_chat_completions_format():
    assert chat_tools((SPEC,)) == [{"type": "function", "function": {
        "name": "get_orders", "description": "The customer's orders.", "parameters": SPEC.parameters}}]
    system, user, said, result_1, result_2, again = chat_messages(CONVERSATION)
    assert system == {"role": "system", "content": "Context here."}
    assert said["content"] is None and [c["function"]["arguments"] for c in said["tool_calls"]] == [
        '{"status": "open"}', "{bad"]
    assert result_1 == {"role": "tool", "tool_call_id": "c1", "content": '{"orders": []}'}
    assert result_2["content"] == '{"status": "error", "kind": "unknown-tool"}'
    assert again == {"role": "user", "content": "And now?"}
    assert chat_messages(ModelRequest("", (ModelMessage("user", "hi"),), ()))[0]["role"] == "user"


def test_messages_format_merges_results_and_the_next_message():
    assert anthropic_tools((SPEC,)) == [{"name": "get_orders", "description": "The customer's orders.",
                                         "input_schema": SPEC.parameters}]
    user, said, results_and_text = anthropic_messages(CONVERSATION)
    assert user == {"role": "user", "content": [{"type": "text", "text": "Orders?"}]}
    assert said["content"] == [{"type": "tool_use", "id": "c1", "name": "get_orders", "input": {"status": "open"}},
                               {"type": "tool_use", "id": "c2", "name": "nope", "input": {}}]
    assert results_and_text == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": '{"orders": []}'},
        {"type": "tool_result", "tool_use_id": "c2", "content": '{"status": "error", "kind": "unknown-tool"}',
         "is_error": True},
        {"type": "text", "text": "And now?"}]}


def test_an_empty_result_and_an_empty_reply_are_left_out_where_the_messages_api_refuses_them():
    request = ModelRequest("", (ModelMessage("user", "a"), ModelMessage("assistant", ""), ModelMessage("user", "b"),
                                ModelMessage("assistant", "", (ToolCall("x", "t", {}),)),
                                ModelMessage("tool", results=(ToolResult("x", "t", "", False),))), ())
    user, said, results = anthropic_messages(request)
    assert [b["text"] for b in user["content"]] == ["a", "b"]
    assert results["content"] == [{"type": "tool_result", "tool_use_id": "x"}]


def completion(message: dict) -> ChatCompletion:
    return ChatCompletion.model_validate({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "finish_reason": "stop", "message": message}]})


def test_a_chat_completion_is_read_into_text_and_calls():
    answer = parse_completion(completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "t", "arguments": '{"q": "milk"}'}},
        {"id": "b", "type": "function", "function": {"name": "t", "arguments": ""}},
        {"id": "c", "type": "function", "function": {"name": "t", "arguments": "[1, 2]"}}]}))
    assert answer.text == "" and [c.arguments for c in answer.calls] == [{"q": "milk"}, {}, "[1, 2]"]
    assert parse_completion(completion({"role": "assistant", "content": "Hi"})).text == "Hi"


@pytest.mark.parametrize("broken", [
    ChatCompletion.model_construct(choices=[]),
    ChatCompletion.model_construct(),
    completion({"role": "assistant", "content": None}),
    completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "", "type": "function", "function": {"name": "t", "arguments": "{}"}}]}),
])
def test_a_malformed_chat_completion_is_a_model_failure(broken):
    with pytest.raises(ModelFailure) as failure:
        parse_completion(broken)
    assert failure.value.kind == MODEL_MALFORMED


def message(content: list) -> AnthropicMessage:
    return AnthropicMessage.model_validate({"id": "m", "type": "message", "role": "assistant", "model": "m",
                                            "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                                            "usage": {"input_tokens": 0, "output_tokens": 0}})


def test_a_messages_response_is_read_into_text_and_calls():
    answer = parse_message(message([{"type": "text", "text": "Let me look."},
                                    {"type": "tool_use", "id": "t1", "name": "get_orders", "input": {"a": 1}}]))
    assert answer.text == "Let me look." and answer.calls == (ToolCall("t1", "get_orders", {"a": 1}),)


@pytest.mark.parametrize("broken", [message([]), AnthropicMessage.model_construct(content=None),
                                    AnthropicMessage.model_construct()])
def test_a_malformed_messages_response_is_a_model_failure(broken):
    with pytest.raises(ModelFailure) as failure:
        parse_message(broken)
    assert failure.value.kind == MODEL_MALFORMED


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
def test_sdk_exceptions_map_to_failure_kinds_timeouts_first(sdk):
    request = httpx2.Request("POST", "http://127.0.0.1/v1")
    timeout = sdk.APITimeoutError(request=request)
    assert isinstance(timeout, sdk.APIConnectionError)  # why the timeout check must come first
    assert failure_from(sdk, timeout).kind == MODEL_TIMED_OUT
    assert failure_from(sdk, sdk.APIConnectionError(request=request)).kind == MODEL_UNREACHABLE
    refused = failure_from(sdk, sdk.APIStatusError("no", response=httpx2.Response(429, request=request), body=None))
    assert (refused.kind, refused.http_code) == (MODEL_REFUSED, 429)
    invalid = sdk.APIResponseValidationError(response=httpx2.Response(200, request=request), body=None)
    assert failure_from(sdk, invalid).kind == MODEL_MALFORMED


def test_within_bounds_the_whole_call_and_leaves_other_timeouts_alone():
    with pytest.raises(ModelFailure) as failure:
        within(0.05, lambda: gevent.sleep(5))
    assert failure.value.kind == MODEL_TIMED_OUT
    outer = gevent.Timeout(0.05)
    with pytest.raises(gevent.Timeout) as fired:
        with outer:
            within(5, lambda: gevent.sleep(1))
    assert fired.value is outer
    assert within(1, lambda: "answer") == "answer"


def test_context_prompt_labels_each_item_and_marks_it_authoritative():
    assert context_prompt([]) == ""
    item = {"output": "{}", "authoritative": True, "tool": "get_profile", "description": "The profile."}
    preamble, items = context_prompt([item]).split("\n\n", 1)
    assert "authoritative" in preamble
    assert list(json.loads(items)[0]) == ["tool", "description", "authoritative", "output"]


def test_the_configuration_picks_the_adapter():
    base = Config(model="m", model_base_url="http://127.0.0.1:9/v1")
    chat = adapter_for(base)
    assert isinstance(chat, ChatCompletionsAdapter) and chat.model == "m"
    messages = adapter_for(base.with_overrides(model_provider="anthropic", model_api_key="k"))
    assert isinstance(messages, MessagesAdapter)
    for adapter in (chat, messages):  # deaf to proxy variables and .netrc, and the key goes nowhere else
        client = adapter._client._client
        assert client.trust_env is False and client.follow_redirects is False
        assert adapter._client.max_retries == 0
    for config in (Config(), base.with_overrides(model_provider="llama")):
        with pytest.raises(ServiceError) as refused:
            adapter_for(config)
        assert (refused.value.status, refused.value.code) == (503, "model-not-configured")


def test_an_app_with_a_model_holds_its_adapter_before_any_turn(tmp_path):
    # Built with the app: the client's import (seconds) is not left to the first turn, holding the worker's requests.
    with live_service(tmp_path, model="m", model_provider="anthropic", model_base_url="http://127.0.0.1:9") as service:
        assert isinstance(app_for(service.config).extensions[MODEL_ADAPTER], MessagesAdapter)


def test_an_app_with_a_model_of_no_known_provider_starts_and_each_turn_says_which(tmp_path):
    with live_service(tmp_path, model="m", model_provider="llama") as service:
        assert MODEL_ADAPTER not in app_for(service.config).extensions
        publish_project(service, [tool("t", "http://127.0.0.1:9/t")])
        chat = Conversation(service, service.session_token())
        refused = service.as_session("POST", f"/v1/conversations/{chat.id}/messages", chat.token, json={"text": "hi"})
    assert refused.status_code == 503 and refused.json()["code"] == "model-not-configured"
    assert "TOOLGATE_MODEL_PROVIDER is 'llama'" in refused.json()["message"]
