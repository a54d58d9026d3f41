"""The conversation as a model is handed it, rebuilt from the stored history.

Both model APIs refuse a tool call without its result (and a result without its call), so every call handed over
has exactly one result: a call whose result was never stored (a process that died mid-step) is left out, and the
decided results of a continued turn take the place of its pending ones. No Flask here.
"""
from __future__ import annotations

from service.llm import ModelMessage, ToolCall, ToolResult
from service.models import Message


def model_transcript(rows: list[Message]) -> list[ModelMessage]:
    """The conversation so far as the model sees it (the platform's own notes are not shown to it). The decided
    results of a continued turn take the place of the pending ones in the step before, so each call has one
    result, the one the model is handed now."""
    messages: list[ModelMessage] = []
    for row in rows:
        content = row.content
        if row.role == "user":
            messages.append(ModelMessage("user", content["text"]))
        elif row.role == "assistant":
            messages.append(ModelMessage("assistant", content.get("text", ""), tuple(
                ToolCall(c["id"], c["name"], c["arguments"]) for c in content.get("calls", []))))
        elif row.role == "tool" and "approvals" in content:
            _replace_results(messages, [ToolResult.from_result(r) for r in content["results"]])
        elif row.role == "tool":
            results = tuple(ToolResult.from_result(r) for r in content["results"])
            messages.append(ModelMessage("tool", results=results))
    return _answered_calls_only(messages)


def _replace_results(messages: list[ModelMessage], decided: list[ToolResult]) -> None:
    """Put the decided results in place of the pending ones, by call id, in the last step's results."""
    if not messages or messages[-1].role != "tool":
        return
    by_id = {r.call_id: r for r in decided}
    messages[-1] = ModelMessage("tool", results=tuple(by_id.get(r.call_id, r) for r in messages[-1].results))


def _answered_calls_only(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Drop calls whose results were never stored (a process that died mid-step), which both APIs refuse."""
    kept = []
    for index, message in enumerate(messages):
        answered = index + 1 < len(messages) and messages[index + 1].role == "tool"
        if message.role == "assistant" and message.calls and not answered:
            if message.text:
                kept.append(ModelMessage("assistant", message.text))
            continue
        kept.append(message)
    return kept
