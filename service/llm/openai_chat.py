"""The Chat Completions adapter, through the official `openai` client with a configurable base URL.

One adapter reaches every server that speaks this API: vLLM, Ollama, llama.cpp's server, LM Studio
and hosted services. Tools go to the model as `function` tools with the offered JSON Schema.
"""
from __future__ import annotations

import json
from typing import Any

import openai

from service.llm.interface import (
    MODEL_MALFORMED,
    ModelAnswer,
    ModelFailure,
    ModelRequest,
    ToolCall,
    ToolSpec,
    usage_of,
)
from service.llm.sdk import NO_KEY, failure_from, http_client, within

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def chat_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """The offered tools in the Chat Completions format."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in tools]


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The system text and the conversation in the Chat Completions format (one `tool` message a result)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    for message in request.messages:
        if message.role == "user":
            messages.append({"role": "user", "content": message.text})
        elif message.role == "assistant":
            said: dict[str, Any] = {"role": "assistant", "content": message.text or (None if message.calls else "")}
            if message.calls:
                said["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                    "name": c.name, "arguments": c.arguments_text()}} for c in message.calls]
            messages.append(said)
        else:
            messages.extend({"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                            for r in message.results)
    return messages


def _arguments(text: Any) -> Any:
    """The call's arguments as an object when they parse to one; otherwise the model's text, kept as it
    came, so the step answers invalid-arguments for that call alone."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}
    if not isinstance(text, str):
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def parse_completion(completion: Any) -> ModelAnswer:
    """The model's answer from a completion, or ModelFailure(model-malformed) saying what is missing."""
    try:
        message = completion.choices[0].message
        calls = []
        for call in message.tool_calls or ():
            function = getattr(call, "function", None)
            if not isinstance(call.id, str) or not call.id or function is None or not isinstance(function.name, str):
                raise ModelFailure(MODEL_MALFORMED, "a tool call without an id or a function name")
            calls.append(ToolCall(call.id, function.name, _arguments(function.arguments)))
        text = message.content
    except (AttributeError, IndexError, KeyError, TypeError) as error:
        raise ModelFailure(MODEL_MALFORMED, f"not a chat completion ({type(error).__name__})") from None
    if text is not None and not isinstance(text, str):
        raise ModelFailure(MODEL_MALFORMED, "the message content is not text")
    if text is None and not calls:
        raise ModelFailure(MODEL_MALFORMED, "neither text nor tool calls")
    return ModelAnswer(text or "", tuple(calls), usage_of(getattr(completion, "usage", None), "prompt_tokens",
                                                          "completion_tokens"))


class ChatCompletionsAdapter:
    """A model behind the Chat Completions API."""

    provider = "openai"

    def __init__(self, base_url: str, model: str, api_key: str = "") -> None:
        self.model = model
        self._client = openai.OpenAI(base_url=base_url or DEFAULT_BASE_URL, api_key=api_key or NO_KEY,
                                     max_retries=0, http_client=http_client(openai))

    def complete(self, request: ModelRequest, timeout: float) -> ModelAnswer:
        """One Chat Completions call with the whole conversation; no retries (the turn loop decides)."""
        arguments: dict[str, Any] = {"model": self.model, "messages": chat_messages(request), "timeout": timeout}
        if request.tools:
            arguments["tools"] = chat_tools(request.tools)

        def ask() -> Any:
            try:
                return self._client.chat.completions.create(**arguments)
            except openai.APIError as error:
                raise failure_from(openai, error) from None
            except ValueError as error:  # a body that is not JSON at all
                raise ModelFailure(MODEL_MALFORMED, f"{type(error).__name__}: {error}"[:300]) from None

        return parse_completion(within(timeout, ask))
