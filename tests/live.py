"""A real service (and mock backend) on 127.0.0.1 for end-to-end tests, in this process under gevent."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import gevent
import requests

from service import create_app
from service.config import Config
from service.database import db, make_database
from service.migrations import migrate
from service.server import make_server
from service.provisioning import create_organization_with_keys

SECRET = "test-secret-key-for-sealing-private-keys"


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
        return requests.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def session_token(self, subject: str = "alice", entitlements=(), anonymous: bool = False, ttl: int = 600) -> str:
        response = self.api("POST", "/v1/session-tokens", self.backend_key, json={
            "subject": subject, "entitlements": list(entitlements), "anonymous": anonymous, "ttl_seconds": ttl})
        assert response.status_code == 201, response.text
        return response.json()["token"]

    def as_session(self, method: str, path: str, token: str, **kwargs) -> requests.Response:
        """Call the service with a session token as the Bearer."""
        return requests.request(method, self.url + path, headers={"Authorization": f"Bearer {token}"},
                                timeout=60, **kwargs)


def converse(service: LiveService, token: str, *calls, project: str = "shop"):
    """Open a conversation on `project`, start a turn, run one step of `calls` ((name, arguments) pairs).

    Returns the conversation id, the turn id and the step's HTTP response (asserted 200)."""
    opened = service.as_session("POST", "/v1/conversations", token, json={"project": project})
    assert opened.status_code == 201, opened.text
    conversation = opened.json()["id"]
    turn = service.as_session("POST", f"/v1/conversations/{conversation}/turns", token).json()["turn"]
    body = {"calls": [{"id": str(i), "name": n, "arguments": a} for i, (n, a) in enumerate(calls)]}
    step = service.as_session("POST", f"/v1/conversations/{conversation}/turns/{turn}/steps", token, json=body)
    assert step.status_code == 200, step.text
    return conversation, turn, step


@contextlib.contextmanager
def live_service(tmp_path, database_url: str | None = None, org: str = "acme",
                 allowed_networks=("127.0.0.0/8",), **settings):
    """Start the service on a fresh database (SQLite in tmp_path unless given) on a free loopback port; `settings`
    are further Config fields (a pool size, a share of calls)."""
    url = database_url or f"sqlite:///{tmp_path / 'live.db'}"
    if database_url is None:
        database = make_database(url)
        with database.connection_context():
            migrate(database)
    server = make_server(None, "127.0.0.1", 0)
    server.init_socket()
    base = f"http://127.0.0.1:{server.server_port}"
    config = Config(database_url=url, public_url=base, secret_key=SECRET, allowed_networks=tuple(allowed_networks),
                    flask={"TESTING": True}, **settings)
    app = create_app(config)
    server.application = app
    with db.connection_context():
        from service.registry import create_api_key, get_organization

        admin = create_organization_with_keys(config, org)
        organization = get_organization(org)
        agent = create_api_key(organization, "agent")
        backend = create_api_key(organization, "backend")
    server.start()
    try:
        yield LiveService(url=base, config=config, org=org, admin_key=admin, agent_key=agent, backend_key=backend)
    finally:
        server.stop(timeout=1)


@contextlib.contextmanager
def mock_backend(issuers, broken: str | None = None):
    """The mock backend in this process on a free loopback port; yields its base URL."""
    from mock_backend import create_app as create_mock
    from mock_backend.server import make_server as make_mock_server

    server = make_mock_server(create_mock(list(issuers), broken=broken), "127.0.0.1", 0, log=None)
    worker = gevent.spawn(server.serve_forever)
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.stop(timeout=1)
        worker.kill()
