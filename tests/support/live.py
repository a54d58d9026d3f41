"""A real service (and the mock backend) in this process under gevent, and a conversation driven over its API."""

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import gevent
import gevent.event
import requests
from gevent.pywsgi import WSGIServer

from service.config import Config
from service.database import db
from service.server import ARRIVAL_KEY, make_server
from tests.support.constants import LOOPBACK, SECRET
from tests.support.databases import app_for, migrated_sqlite
from tests.support.definitions import make_org


@dataclass
class LiveService:
    """A running service with one organization and a key of each role."""

    url: str
    config: Config
    org: str
    admin_key: str
    agent_key: str
    backend_key: str

    @property
    def issuer(self) -> str:
        return self.config.issuer(self.org)

    def api(self, method: str, path: str, key: str | None = None, **kwargs) -> requests.Response:
        """Call the service with an API key (admin by default)."""
        headers = {"Authorization": f"Bearer {key or self.admin_key}", **kwargs.pop("headers", {})}
        return requests.request(method, self.url + path, headers=headers, **{"timeout": 30, **kwargs})

    def session_token(self, subject: str = "alice", entitlements=(), anonymous: bool = False, ttl: int = 600) -> str:
        response = self.api("POST", "/v1/session-tokens", self.backend_key, json={
            "subject": subject, "entitlements": list(entitlements), "anonymous": anonymous, "ttl_seconds": ttl})
        assert response.status_code == 201, response.text
        return response.json()["token"]

    def session_token_minted_at(self, issued_at: float, subject: str = "alice", ttl: int = 600) -> str:
        """A session token as this service would have minted it at `issued_at`: the domain takes its clock as a
        parameter, so a test of expiry needs no wait."""
        from service.keys import mint_session_token
        from service.keys.store import signing_key
        from service.registry import get_organization

        with db.connection_context():
            key = signing_key(get_organization(self.org), self.config.secret_key)
        return mint_session_token(key, self.issuer, subject, False, (), ttl, issued_at)[0]

    def as_session(self, method: str, path: str, token: str, **kwargs) -> requests.Response:
        """Call the service with a session token as the Bearer."""
        return requests.request(method, self.url + path, headers={"Authorization": f"Bearer {token}"},
                                **{"timeout": 60, **kwargs})


#: Servers on loopback not serving a test right now, by their settings; see `service_server`.
_idle_servers: dict[str, list[WSGIServer]] = {}


@contextlib.contextmanager
def service_server(database_url: str, allowed_networks=("127.0.0.0/8",), **settings) -> Iterator[Config]:
    """The service on `database_url`, served on a loopback port; yields its Config (`public_url` is the server's).
    `settings` are further Config fields (a pool size, a shorter call deadline, a model).

    The server and its app outlive the context (`app_for`): the next test with the same settings gets them back,
    on a database of its own. `stop_idle_servers` stops them at the end of the run."""
    idle = _idle_servers.setdefault(repr((tuple(allowed_networks), sorted(settings.items()))), [])
    server = idle.pop() if idle else make_server(None, LOOPBACK, 0)
    if not server.started:
        server.init_socket()
    config = Config(database_url=database_url, public_url=f"http://{LOOPBACK}:{server.server_port}",
                    secret_key=SECRET, allowed_networks=tuple(allowed_networks), flask={"TESTING": True}, **settings)
    server.application = app_for(config)
    server.arrival = server.application.extensions[ARRIVAL_KEY]  # the deadlines and cap of these settings
    if not server.started:
        server.start()
    try:
        yield config
    finally:
        idle.append(server)


@contextlib.contextmanager
def live_service(tmp_path: Path, database_url: str | None = None, org: str = "acme",
                 allowed_networks=("127.0.0.0/8",), **settings) -> Iterator[LiveService]:
    """The service (`service_server`) on a fresh database, SQLite in tmp_path unless given, with organization `org`
    and an API key of each role."""
    url = database_url or migrated_sqlite(tmp_path / "live.db")
    with service_server(url, allowed_networks, **settings) as config:
        keys = make_org(config, org)
        yield LiveService(url=config.public_url, config=config, org=org, admin_key=keys["admin"],
                          agent_key=keys["agent"], backend_key=keys["backend"])


def stop_idle_servers() -> None:
    """Stop every server `service_server` kept (the end of a run)."""
    for servers in _idle_servers.values():
        while servers:
            servers.pop().stop(timeout=1)


#: How long a stopping in-process mock backend lets the requests it is still serving finish.
MOCK_STOP_SECONDS = 0.1


@contextlib.contextmanager
def mock_backend(issuers, broken: str | None = None) -> Iterator[str]:
    """The mock backend in this process on a free loopback port; yields its base URL."""
    from mock_backend import create_app as create_mock
    from mock_backend.server import make_server as make_mock_server

    server = make_mock_server(create_mock(list(issuers), broken=broken), LOOPBACK, 0, log=None)
    worker = gevent.spawn(server.serve_forever)
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        # The test is over: a call the mock is still holding (a slow or dripping one) is cut, not waited for.
        server.stop(timeout=MOCK_STOP_SECONDS)
        worker.kill()


def publish_project(service: LiveService, tools, project: str = "shop") -> int:
    """Register every tool, pin all their drafts into `project` and publish it; returns the version number."""
    if service.api("GET", f"/v1/projects/{project}").status_code == 404:
        assert service.api("POST", "/v1/projects", json={"name": project}).status_code == 201
    for definition in tools:
        response = service.api("POST", "/v1/tools", json=definition)
        assert response.status_code == 201, response.text
    pins = [{"tool": t["name"], "version": "draft"} for t in tools]
    response = service.api("PUT", f"/v1/projects/{project}/draft", json={"pins": pins})
    assert response.status_code == 200, response.text
    response = service.api("POST", f"/v1/projects/{project}/publish")
    assert response.status_code == 201, response.text
    return response.json()["version"]


class Conversation:
    """A conversation driven over the API with one session token."""

    def __init__(self, service: LiveService, token: str, project: str = "shop", version: int | None = None):
        self.service, self.token = service, token
        body = {"project": project} if version is None else {"project": project, "version": version}
        response = service.as_session("POST", "/v1/conversations", token, json=body)
        assert response.status_code == 201, response.text
        self.opened = response.json()
        self.id = self.opened["id"]

    def turn(self) -> str:
        response = self.service.as_session("POST", f"/v1/conversations/{self.id}/turns", self.token)
        assert response.status_code == 201, response.text
        return response.json()["turn"]

    def step_response(self, turn: str, *calls) -> requests.Response:
        """The step's HTTP response, whatever its status; `calls` are (name, arguments) pairs."""
        body = {"calls": [{"id": str(i), "name": name, "arguments": arguments}
                          for i, (name, arguments) in enumerate(calls)]}
        return self.service.as_session("POST", f"/v1/conversations/{self.id}/turns/{turn}/steps", self.token,
                                       json=body)

    def step(self, turn: str, *calls) -> list[dict]:
        """The results of a step that must succeed."""
        response = self.step_response(turn, *calls)
        assert response.status_code == 200, response.text
        return response.json()["results"]

    def tools(self, token: str | None = None) -> list[dict]:
        response = self.service.as_session("GET", f"/v1/conversations/{self.id}/tools", token or self.token)
        assert response.status_code == 200, response.text
        return response.json()["tools"]


def converse(service: LiveService, token: str, *calls, project: str = "shop"):
    """Open a conversation on `project`, start a turn, run one step of `calls` ((name, arguments) pairs).

    Returns the conversation id, the turn id and the step's HTTP response (asserted 200)."""
    conversation = Conversation(service, token, project)
    turn = conversation.turn()
    step = conversation.step_response(turn, *calls)
    assert step.status_code == 200, step.text
    return conversation.id, turn, step
