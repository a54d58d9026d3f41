"""The database goes away, comes back, loses connections mid-burst: the service answers 503 and never 500, keeps
every write it acknowledged, recovers without a restart, and liveness never depends on it."""

import gevent
import pytest
import requests

from service import registry
from service.database import db
from service.errors import ServiceError
from tests.dashboard.client import Person
from tests.load.proxy import proxied_service
from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")

#: Writes of the burst, 10 ms apart: half of them while the connections are being cut, half after.
BURST = 40


@pytest.fixture
def proxied(tmp_path):
    """A live service whose PostgreSQL is reached through a proxy the test controls; yields (service, proxy)."""
    with proxied_service(tmp_path) as proxied_pair:
        yield proxied_pair


def mcp_initialize(service):
    return requests.post(service.url + "/mcp", timeout=10, headers={
        "Authorization": f"Bearer {service.agent_key}", "Accept": "application/json, text/event-stream"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


def test_a_database_refusing_connections_is_503_everywhere_and_recovery_needs_no_restart(proxied):
    service, proxy = proxied
    with mock_backend([service.issuer]) as backend:
        publish_project(service, [tool("search", backend + "/tools/search/echo")])
        chat = Conversation(service, service.session_token())
        turn = chat.turn()
        person = Person(service.url)
        person.sign_in(service.admin_key)

        def every_surface():
            return {
                "registry": service.api("GET", "/v1/tools"),
                "session token": service.api("POST", "/v1/session-tokens", service.backend_key,
                                             json={"subject": "bob"}),
                "step": service.as_session("POST", f"/v1/conversations/{chat.id}/turns/{turn}/steps", chat.token,
                                           json={"calls": [{"id": "1", "name": "search", "arguments": {}}]}),
                "dashboard": requests.get(service.url + "/tools", timeout=10,
                                          headers={"Cookie": f"toolgate_dashboard={person.cookie}"}),
                "mcp": mcp_initialize(service),
                "healthz": requests.get(service.url + "/healthz", timeout=10),
                "readyz": requests.get(service.url + "/readyz", timeout=10),
            }

        proxy.down()
        away = every_surface()
        proxy.up()
        back = every_surface()

    statuses = {surface: answer.status_code for surface, answer in away.items()}
    assert statuses == {"registry": 503, "session token": 503, "step": 503, "dashboard": 503, "mcp": 503,
                        "healthz": 200, "readyz": 503}
    for surface in ("registry", "session token", "step", "dashboard", "mcp"):
        assert away[surface].headers["Retry-After"] == "1", surface
    for surface in ("registry", "session token", "step"):
        assert away[surface].json()["code"] == "database-unavailable"
    assert "text/html" in away["dashboard"].headers["Content-Type"]
    assert "The database is not answering; try again shortly." in away["dashboard"].text
    error = away["mcp"].json()["error"]
    assert error["code"] == -32000 and error["data"]["code"] == "database-unavailable"
    assert away["readyz"].json()["database"] == "unreachable"
    assert {surface: answer.status_code for surface, answer in back.items()} == {
        "registry": 200, "session token": 201, "step": 200, "dashboard": 200, "mcp": 200, "healthz": 200,
        "readyz": 200}


def test_pooled_connections_cut_while_idle_are_replaced_without_an_error(proxied):
    service, proxy = proxied
    for _ in range(3):  # warm the pool with connections, then cut them all while they sit idle
        assert service.api("GET", "/v1/tools").status_code == 200
    proxy.cut()
    gevent.sleep(0.05)
    assert [service.api("GET", "/v1/tools").status_code for _ in range(5)] == [200] * 5


def test_connections_cut_mid_burst_lose_no_acknowledged_write_and_answer_no_500(proxied):
    service, proxy = proxied

    def register(i):
        return service.api("POST", "/v1/tools", json=tool(f"burst_{i}", "https://api.example.com/x"))

    # Writes arrive every 10 ms while every connection is cut again and again (0.2 s), then as many once the cuts are
    # over: those are acknowledged however late a loaded machine runs the ones before.
    during = [gevent.spawn_later(i * 0.01, register, i) for i in range(BURST // 2)]
    for _ in range(10):
        gevent.sleep(0.02)
        proxy.cut()
    writers = during + [gevent.spawn_later(i * 0.01, register, BURST // 2 + i) for i in range(BURST // 2)]
    gevent.joinall(writers, timeout=60, raise_error=True)
    answers = {i: w.value for i, w in enumerate(writers)}

    statuses = sorted({a.status_code for a in answers.values()})
    assert set(statuses) <= {201, 503}, {a.status_code: a.text for a in answers.values()}
    assert 503 in statuses, "no connection was cut during a write: the test proved nothing"
    assert all(a.headers.get("Retry-After") == "1" for a in answers.values() if a.status_code == 503)
    listed = {t["name"] for t in service.api("GET", "/v1/tools").json()["tools"]}
    acknowledged = {f"burst_{i}" for i, a in answers.items() if a.status_code == 201}
    assert acknowledged and acknowledged <= listed


def test_projects_that_pin_the_same_drafts_in_opposite_orders_publish_each_draft_once(tmp_path):
    with fresh_postgres_schema(POSTGRES_URL) as url, live_service(tmp_path, url):
        with db.connection_context():
            acme = registry.get_organization("acme")
        for round_ in range(3):
            names = [f"first_{round_}", f"second_{round_}"]
            with db.connection_context():
                for name in names:
                    registry.register_tool(acme, tool(name, "https://api.example.com/x"), "test")
                for project, order in ((f"a{round_}", names), (f"b{round_}", names[::-1])):
                    registry.create_project(acme, project, "test")
                    registry.save_project_draft(acme, project, [{"tool": n, "version": "draft"} for n in order],
                                                "test")
            outcomes = _race(lambda project: registry.publish_project(acme, project, "test"),
                             f"a{round_}", f"b{round_}")
            # Overlapping, one wins and the other is refused 409; one after the other, the first's publish moved the
            # second's pins to the versions it made, so both publish. Never a deadlock, a 500 or a draft published
            # twice: each tool has its one version 1, and every project version published pins it.
            assert sorted(outcomes, key=str) in ([409, "published"], ["published", "published"]), outcomes
            with db.connection_context():
                for name in names:
                    versions = registry.tool_view(registry.get_tool(acme, name))["versions"]
                    assert [v["version"] for v in versions] == [1], name
                for project, outcome in zip((f"a{round_}", f"b{round_}"), outcomes):
                    versions = registry.project_view(registry.get_project(acme, project))["versions"]
                    assert [sorted((p["tool"], p["version"]) for p in v["pins"]) for v in versions] == (
                        [sorted((n, 1) for n in names)] if outcome == "published" else []), project


def _race(publish, *projects):
    def attempt(project):
        with db.connection_context():
            try:
                publish(project)
                return "published"
            except ServiceError as error:
                return error.status

    racers = [gevent.spawn(attempt, project) for project in projects]
    gevent.joinall(racers, raise_error=True)
    return [r.value for r in racers]


def test_without_a_database_a_path_that_matches_nothing_is_still_404(proxied):
    service, proxy = proxied
    proxy.down()
    try:
        assert requests.get(service.url + "/no/such/page", timeout=10).status_code == 404
        assert requests.get(service.url + "/metrics", timeout=10).status_code == 200
    finally:
        proxy.up()
