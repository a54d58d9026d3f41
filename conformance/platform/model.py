"""The scripted model the platform runs whole turns with, driven by the kit.

The platform calls a model (TOOLGATE_MODEL_BASE_URL) for every turn sent to
`POST /v1/conversations/{id}/messages`. For the turn cases that model is a scripted model server
(`python -m mock_backend.model_server`): the kit scripts what it answers (`PUT /_script`) and reads
back what the platform sent it (`GET /_requests`), so a case can check exactly what the model was
given: the context, the offered tools, each call's result. The server follows one script at a time,
so the turn cases take turns (`ScriptedModel.lock`) while the other areas run beside them.

Requests are read in either wire format the server speaks: Chat Completions (`/v1/chat/completions`)
or Messages (`/v1/messages`).
"""
from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

import requests

from conformance.platform.budgets import REQUEST_TIMEOUT_SECONDS
from conformance.platform.client import Conversation, Reply, SetupRefused, expect_status

NEEDS_MODEL = ("this case needs --model-url, the scripted model server (python -m mock_backend.model_server) "
               "the platform runs turns with; or leave the turn cases out with --skip turn/")


@dataclass(frozen=True)
class Seen:
    """One request the model received, read whatever its wire format: system text, messages, tools."""

    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [m for m in self.body.get("messages") or [] if isinstance(m, dict)]

    def system(self) -> str:
        """Every system text: Chat Completions' system messages, or the Messages API's `system`."""
        texts = [_text(m.get("content")) for m in self.messages if m.get("role") == "system"]
        return "\n".join([_text(self.body.get("system")), *texts]).strip()

    def context(self) -> str:
        """Everything the model is given before the person's last message: system text and earlier messages."""
        messages = self.messages
        last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages))
        earlier = [_text(m.get("content")) for m in messages[:last] if m.get("role") != "system"]
        return "\n".join([self.system(), *earlier]).strip()

    def person(self) -> list[str]:
        """The person's texts, in order."""
        return [_text(m.get("content")) for m in self.messages if m.get("role") == "user" and _text(m.get("content"))]

    def tools(self) -> dict[str, dict[str, Any]]:
        """The offered tools by name, each with its `description` and `parameters` (a JSON Schema)."""
        offered = {}
        for tool in self.body.get("tools") or []:
            function = tool.get("function", tool) if isinstance(tool, dict) else {}
            offered[function.get("name")] = {"description": function.get("description"),
                                             "parameters": function.get("parameters", function.get("input_schema"))}
        return offered

    def results(self) -> list[tuple[str, str]]:
        """The tool results given back since the model's last answer: (call id, content), in order."""
        found: list[tuple[str, str]] = []
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                break
            if message.get("role") == "tool":
                found.insert(0, (message.get("tool_call_id"), _text(message.get("content"))))
            elif isinstance(message.get("content"), list):
                blocks = [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
                found[:0] = [(b.get("tool_use_id"), _text(b.get("content"))) for b in blocks]
        return found

    def text(self) -> str:
        """The whole request as text, to look for what must appear nowhere in it."""
        return json.dumps(self.body, ensure_ascii=False)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") if isinstance(b, dict) and "text" in b else
                             b.get("content", "") if isinstance(b, dict) else b) for b in content)
    return ""


@dataclass(frozen=True)
class Turn:
    """What one whole turn gave: the platform's answer, and every request the model received, in order."""

    reply: Reply
    seen: list[Seen]


@dataclass
class ScriptedModel:
    """The scripted model server at `url`; `lock` keeps one scripted turn at a time."""

    url: str
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _call(self, method: str, path: str, body: Any = None) -> requests.Response:
        with requests.Session() as session:
            session.trust_env = False
            return session.request(method, self.url + path, json=body, timeout=REQUEST_TIMEOUT_SECONDS)

    def answers(self) -> bool:
        """Whether the server is up."""
        try:
            return self._call("GET", "/_health").status_code == 200
        except requests.RequestException:
            return False

    def received(self) -> list[Seen]:
        """Every request the model received since it was last scripted, in order."""
        return [Seen(r.get("body") or {}) for r in self._call("GET", "/_requests").json().get("requests", [])]

    @contextlib.contextmanager
    def scripted(self, responses: list[dict[str, Any]]) -> Iterator[Script]:
        """The model scripted to give `responses`, in order, to the messages sent through the `Script` yielded,
        and no other case's, until the block ends: a turn paused for approval takes several messages."""
        with self.lock:
            scripted = self._call("PUT", "/_script", [responses])
            if scripted.status_code != 204:
                raise SetupRefused(f"scripting the model at {self.url}: HTTP {scripted.status_code} {scripted.text}")
            self._call("DELETE", "/_requests")
            yield Script(self)

    def turn(self, conversation: Conversation, text: str, responses: list[dict[str, Any]]) -> Turn:
        """Send `text` as the person's message with the model scripted to give `responses`, in order."""
        with self.scripted(responses) as script:
            reply = script.send(conversation, {"text": text})
            return Turn(reply, script.seen())


@dataclass(frozen=True)
class Script:
    """A scripted model in use: messages sent to the platform, and every request the model received since."""

    model: ScriptedModel

    def send(self, conversation: Conversation, body: dict[str, Any]) -> Reply:
        """`POST …/messages` with `body`: `{"text"}` for the person's message, `{}` to continue a paused turn."""
        return conversation.target.request("POST", f"{conversation.path}/messages", conversation.token, body)

    def seen(self) -> list[Seen]:
        """Every request the model received since it was scripted, in order."""
        return self.model.received()


def answered(turn: Turn, doing: str) -> dict[str, Any]:
    """The turn's answer, which must be 200 with a reply, else SetupRefused."""
    body = expect_status(turn.reply, 200, doing).body
    if not isinstance(body, dict) or not turn.seen:
        raise SetupRefused(f"{doing}: the model was never asked ({turn.reply.describe()})")
    return body
