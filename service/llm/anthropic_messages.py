"""The Messages adapter, through the official `anthropic` client with a configurable base URL.

Tools go to the model with the offered JSON Schema as `input_schema`. The Messages API wants user
and assistant turns to alternate, so consecutive messages of one role are merged: a step's tool
results and the person's next message share one user message, the results first.
"""
from __future__ import annotations

from typing import Any

import anthropic

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

DEFAULT_BASE_URL = "https://api.anthropic.com"

#: The Messages API requires a ceiling on the answer's length; a reply or a set of tool calls fits well within it.
MAX_OUTPUT_TOKENS = 4_096


def anthropic_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """The offered tools in the Messages format."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def anthropic_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation in the Messages format: content blocks, roles alternating."""
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for message in request.messages:
        if message.role == "user":
            add("user", [{"type": "text", "text": message.text}])
        elif message.role == "assistant":
            add("assistant", ([{"type": "text", "text": message.text}] if message.text else []) + [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments_object()}
                for c in message.calls])
        else:
            add("user", [{"type": "tool_result", "tool_use_id": r.call_id,
                          **({"content": r.content} if r.content else {}),
                          **({"is_error": True} if r.failed else {})} for r in message.results])
    return messages


def parse_message(message: Any) -> ModelAnswer:
    """The model's answer from a Messages response, or ModelFailure(model-malformed)."""
    texts, calls = [], []
    try:
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                if not isinstance(block.id, str) or not block.id or not isinstance(block.name, str):
                    raise ModelFailure(MODEL_MALFORMED, "a tool use without an id or a name")
                calls.append(ToolCall(block.id, block.name, block.input if block.input is not None else {}))
    except (AttributeError, TypeError) as error:
        raise ModelFailure(MODEL_MALFORMED, f"not a Messages response ({type(error).__name__})") from None
    if not texts and not calls:
        raise ModelFailure(MODEL_MALFORMED, "neither text nor tool calls")
    if not all(isinstance(t, str) for t in texts):
        raise ModelFailure(MODEL_MALFORMED, "a text block without text")
    return ModelAnswer("".join(texts), tuple(calls), usage_of(getattr(message, "usage", None), "input_tokens",
                                                               "output_tokens"))


class MessagesAdapter:
    """A model behind the Messages API."""

    provider = "anthropic"

    def __init__(self, base_url: str, model: str, api_key: str = "") -> None:
        self.model = model
        # An explicit key keeps the client from reading credentials or profiles from the environment.
        self._client = anthropic.Anthropic(base_url=base_url or DEFAULT_BASE_URL, api_key=api_key or NO_KEY,
                                           max_retries=0, http_client=http_client(anthropic))

    def complete(self, request: ModelRequest, timeout: float) -> ModelAnswer:
        """One Messages call with the whole conversation; no retries (the turn loop decides)."""
        arguments: dict[str, Any] = {"model": self.model, "max_tokens": MAX_OUTPUT_TOKENS,
                                     "messages": anthropic_messages(request), "timeout": timeout}
        if request.system:
            arguments["system"] = request.system
        if request.tools:
            arguments["tools"] = anthropic_tools(request.tools)

        def ask() -> Any:
            try:
                return self._client.messages.create(**arguments)
            except anthropic.APIError as error:
                raise failure_from(anthropic, error) from None
            except ValueError as error:  # a body that is not JSON at all
                raise ModelFailure(MODEL_MALFORMED, f"{type(error).__name__}: {error}"[:300]) from None

        return parse_message(within(timeout, ask))
