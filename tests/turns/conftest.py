"""A platform that runs turns: the service configured with a model adapter, a scripted model server for it,
and the mock backend, all on 127.0.0.1 in this process. The services and models are kept for the next test with
the same settings (tests.support.live.service_server), on a database of its own.

Each provider gets its own service and its own scripted model; the services share one database and one
organization, so a test may run a turn through both adapters at the same time.
"""
from __future__ import annotations

import contextlib
import json
import secrets
from dataclasses import dataclass, field

# The model clients (anthropic, openai) are imported as this folder is collected: a service with a model builds its
# adapter as it starts, and a client library's first import (2.6 s for anthropic's) is the process's cost, once,
# not its first test's.
import anthropic  # noqa: F401
import gevent
import openai  # noqa: F401
import pytest
import requests

from mock_backend.model_server import create_model_app
from mock_backend.server import make_server as make_model_server
from tests.support.databases import migrated_sqlite
from tests.support.definitions import make_org, tool
from tests.support.live import Conversation, LiveService, mock_backend, publish_project, service_server

PROVIDERS = ("openai", "anthropic")


class ScriptedModel:
    """The scripted model server: give it a script, read back what the platform asked it."""

    def __init__(self, url: str) -> None:
        self.url = url

    def base_url(self, provider: str) -> str:
        """The base URL each client expects: Chat Completions clients include `/v1`."""
        return f"{self.url}/v1" if provider == "openai" else self.url

    def script(self, turns) -> None:
        response = requests.put(f"{self.url}/_script", json=turns, timeout=5)
        assert response.status_code == 204, response.text

    def requests(self) -> list[dict]:
        return requests.get(f"{self.url}/_requests", timeout=5).json()["requests"]

    def bodies(self) -> list[dict]:
        return [entry["body"] for entry in self.requests()]


@contextlib.contextmanager
def scripted_model(script=(), key=None):
    server = make_model_server(create_model_app(list(script), key), "127.0.0.1", 0, log=None)
    worker = gevent.spawn(server.serve_forever)
    try:
        yield ScriptedModel(f"http://127.0.0.1:{server.server_port}")
    finally:
        server.stop(timeout=1)
        worker.kill()


#: Scripted models no test is using, kept for the next: a platform's services are kept by their settings, the
#: model's URL among them (tests.support.live.service_server), so a model kept too lets the next test have them back.
_idle_models: list[ScriptedModel] = []


@contextlib.contextmanager
def kept_scripted_model():
    """A scripted model of the run's, as new: no script, nothing asked of it remembered."""
    model = _idle_models.pop() if _idle_models else _start_kept_model()
    model.script([])
    assert requests.delete(f"{model.url}/_requests", timeout=5).status_code == 204
    try:
        yield model
    finally:
        _idle_models.append(model)


def _start_kept_model() -> ScriptedModel:
    server = make_model_server(create_model_app([]), "127.0.0.1", 0, log=None)
    gevent.spawn(server.serve_forever)  # for the whole run, as the kept services are
    return ScriptedModel(f"http://127.0.0.1:{server.server_port}")


@dataclass
class Platform:
    """One service and one scripted model per provider, and the mock backend trusting every service."""

    services: dict[str, LiveService]
    models: dict[str, ScriptedModel]
    backend: str = ""
    subject: str = field(default_factory=lambda: f"subject-{secrets.token_hex(6)}")

    def publish(self, tools, project="shop") -> int:
        return publish_project(next(iter(self.services.values())), tools, project)

    def conversation(self, provider: str, entitlements=(), project="shop", subject=None) -> "TurnConversation":
        service = self.services[provider]
        return TurnConversation(service, service.session_token(subject or self.subject, entitlements), project)

    def backend_calls(self) -> list[dict]:
        return requests.get(f"{self.backend}/_calls", timeout=5).json()["calls"]


class TurnConversation(Conversation):
    """A conversation whose turns the platform runs: send a message, read the history."""

    def send(self, text: str, expect: int = 200, **extra) -> dict:
        return self.send_body({"text": text, **extra}, expect)

    def send_body(self, body, expect: int = 200) -> dict:
        """POST …/messages with this body; the answer's JSON, which must come with status `expect`."""
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/messages", self.token, json=body)
        assert response.status_code == expect, response.text
        return response.json()

    def go_on(self, expect: int = 200) -> dict:
        """Continue the turn paused for approval: a message without text."""
        return self.send_body({}, expect)

    def approvals(self) -> list[dict]:
        response = self.service.as_session("GET", f"/v1/conversations/{self.id}/approvals", self.token)
        assert response.status_code == 200, response.text
        return response.json()["approvals"]

    def decide(self, approval: str, decision: str, expect: int = 200) -> dict:
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/approvals/{approval}", self.token,
                                           json={"decision": decision})
        assert response.status_code == expect, response.text
        return response.json()

    @classmethod
    def joined(cls, service: LiveService, token: str, conversation_id: str) -> "TurnConversation":
        """A conversation already open, reached through `service` with `token` (another instance, say)."""
        joined = cls.__new__(cls)
        joined.service, joined.token, joined.id = service, token, conversation_id
        return joined

    def stream(self, text: str | None) -> list[tuple[str, dict]]:
        """The turn's server-sent events, as (event, data) pairs; `text` None continues the paused turn."""
        body = {"stream": True} if text is None else {"text": text, "stream": True}
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/messages", self.token, json=body)
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = []
        for block in response.text.split("\n\n"):
            if block.strip():
                lines = dict(line.split(": ", 1) for line in block.splitlines())
                events.append((lines["event"], json.loads(lines["data"])))
        return events

    def history(self) -> list[dict]:
        response = self.service.as_session("GET", f"/v1/conversations/{self.id}/messages", self.token)
        assert response.status_code == 200, response.text
        return response.json()["messages"]


@contextlib.contextmanager
def turn_platform(tmp_path, providers=PROVIDERS, model_url: str | None = None, database_url: str | None = None,
                  **settings):
    """Services for `providers` on one fresh database (SQLite unless a migrated `database_url` is given),
    each with its own scripted model (or `model_url`)."""
    url = database_url or migrated_sqlite(tmp_path / "turns.db")
    with contextlib.ExitStack() as stack:
        models, services = {}, {}
        for provider in providers:
            models[provider] = stack.enter_context(kept_scripted_model())
            config = stack.enter_context(service_server(url, **{
                "model_provider": provider, "model": "scripted-model",
                "model_base_url": model_url or models[provider].base_url(provider), **settings}))
            services[provider] = LiveService(url=config.public_url, config=config, org="acme", admin_key="",
                                             agent_key="", backend_key="")
        keys = make_org(next(iter(services.values())).config, "acme")
        for service in services.values():
            service.admin_key, service.agent_key, service.backend_key = keys["admin"], keys["agent"], keys["backend"]
        platform = Platform(services, models)
        platform.backend = stack.enter_context(mock_backend([s.issuer for s in services.values()]))
        yield platform


@pytest.fixture(params=PROVIDERS)
def provider(request) -> str:
    return request.param


@pytest.fixture
def platform(tmp_path, provider):
    with turn_platform(tmp_path, providers=(provider,)) as running:
        yield running


def slow(name: str, seconds: float, backend: str) -> dict:
    """A shared tool answering after `seconds` (the mock backend's delay route)."""
    return tool(name, f"{backend}/tools/{name}/delay/{seconds:g}")


def shop_tools(backend: str) -> list[dict]:
    """The demo shop's orders, one order, and product search, as tools on the mock backend."""
    subject = {"name": "subject", "type": "string", "location": "path"}
    return [
        tool("get_orders", f"{backend}/users/{{subject}}/orders", scope="per_user", parameters=[
            subject, {"name": "status", "type": "string", "location": "query", "required": False}]),
        tool("get_order", f"{backend}/users/{{subject}}/orders/{{order_id}}", scope="per_user", parameters=[
            subject, {"name": "order_id", "type": "string", "location": "path"}]),
        tool("search_products", f"{backend}/products", parameters=[
            {"name": "q", "type": "string", "location": "query"}]),
    ]
