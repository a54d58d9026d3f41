"""The one small interface every model adapter serves, and the values that cross it.

A turn speaks to the model in these neutral values; each adapter turns them into its API's own
format and back. Nothing here knows a subject, a session or an endpoint's error body: the model is
given only what these values carry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

#: Why a model call failed, each named once. The turn ends with the kind as its reason.
MODEL_UNREACHABLE = "model-unreachable"  # no connection, or it broke before an answer
MODEL_TIMED_OUT = "model-timed-out"  # no answer within what was left of the turn's deadline
MODEL_REFUSED = "model-refused"  # the model's API answered with an error status
MODEL_MALFORMED = "model-malformed"  # an answer that is not a well-formed reply or set of tool calls

MODEL_FAILURE_KINDS = (MODEL_UNREACHABLE, MODEL_TIMED_OUT, MODEL_REFUSED, MODEL_MALFORMED)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, its description and the JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for. `arguments` is an object, or the model's text when it was not one."""

    id: str
    name: str
    arguments: Any

    def arguments_text(self) -> str:
        """The arguments as JSON text, for the APIs that carry them so."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)

    def arguments_object(self) -> dict[str, Any]:
        """The arguments as an object, for the APIs that carry them so ({} when they were not one)."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            parsed = json.loads(self.arguments) if isinstance(self.arguments, str) else None
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {}


@dataclass(frozen=True)
class ToolResult:
    """What the model is shown for one call: the body as it came, or the small failure object as JSON."""

    call_id: str
    name: str
    content: str
    failed: bool

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> "ToolResult":
        """From a step's result, `{"id", "name", "output"}`, `{"id", "name", "error"}`, or a call held for the
        person's approval, `{"id", "name", "approval"}`, which the model is shown as it is."""
        if "approval" in result:
            return cls(result["id"], result["name"], json.dumps({"approval": result["approval"]}), False)
        if "error" in result:
            return cls(result["id"], result["name"], json.dumps(result["error"]), True)
        return cls(result["id"], result["name"], result.get("output") or "", False)


@dataclass(frozen=True)
class ModelMessage:
    """One message of the conversation as the model sees it.

    `user`: the person's `text`. `assistant`: the model's `text` and the `calls` it asked for.
    `tool`: the `results` of one step's calls, in the calls' order.
    """

    role: str
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    """Everything one model call is given: the system text (may be empty), the messages, the tools."""

    system: str
    messages: tuple[ModelMessage, ...]
    tools: tuple[ToolSpec, ...]


@dataclass(frozen=True)
class ModelAnswer:
    """What the model said: its text, and the calls it asked for (none: this is its reply)."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    #: (input tokens, output tokens) where the provider reports them, for traces; None where it does not.
    usage: tuple[int, int] | None = None


def usage_of(usage: Any, input_name: str, output_name: str) -> tuple[int, int] | None:
    """(input tokens, output tokens) from a provider's usage object, when it reports both as integers."""
    given, taken = getattr(usage, input_name, None), getattr(usage, output_name, None)
    return (given, taken) if type(given) is int and type(taken) is int else None


class ModelFailure(Exception):
    """A model call that did not give an answer: one of MODEL_FAILURE_KINDS, and a detail for logs."""

    def __init__(self, kind: str, detail: str = "", http_code: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind, self.detail, self.http_code = kind, detail, http_code


class ModelAdapter(Protocol):
    """A model API behind the platform's one interface."""

    provider: str
    model: str

    def complete(self, request: ModelRequest, timeout: float) -> ModelAnswer:
        """Ask the model once; raise ModelFailure when no answer comes back within `timeout` seconds."""
        ...  # pragma: no cover
