"""Alive, ready (database reachable, schema current), request ids, and one JSON log line per request."""
import re

import pytest

from service.database import db, make_database, open_database
from service.ops.health import readiness
from tests.helpers import captured_logs, log_lines

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/none"  # nothing listens on port 1: refused at once


def test_alive(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json) == (200, {"status": "alive"})


def test_ready_when_the_database_answers_and_its_schema_is_current(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json == {"status": "ready", "database": "reachable", "schema": "current", "problems": []}


def test_not_ready_when_the_schema_is_behind(client):
    with db.connection_context():
        db.execute_sql("DELETE FROM schema_migration WHERE number = 3")
    response = client.get("/readyz")
    assert response.status_code == 503
    assert (response.json["database"], response.json["schema"]) == ("reachable", "behind")
    assert response.json["problems"] == ["schema behind: pending 0003_operations"]


def test_not_ready_when_the_database_is_unreachable(app, client, database_url):
    state = readiness(make_database(UNREACHABLE, pooled=False))
    assert (state.ready, state.database, state.problems) == (False, False, ["database: OperationalError"])
    open_database(UNREACHABLE)  # the app's own handle now points at nothing; even its per-request connect fails
    try:
        response = client.get("/readyz")
        assert response.status_code == 503
        assert response.json["database"] == "unreachable"
        assert "127.0.0.1" not in response.get_data(as_text=True)  # the probe is public: no host named
        response = client.get("/v1/audit", headers={"Authorization": "Bearer tgk_a_b"})
        assert (response.status_code, response.json["code"]) == (503, "database-unavailable")
    finally:
        open_database(database_url)


def test_a_request_id_is_echoed_or_made(client):
    assert client.get("/healthz", headers={"X-Request-Id": "lb-7f3a.91_x"}).headers["X-Request-Id"] == "lb-7f3a.91_x"
    for offered in ("has spaces", "x" * 65, "quote\""):
        made = client.get("/healthz", headers={"X-Request-Id": offered}).headers["X-Request-Id"]
        assert re.fullmatch(r"[0-9a-f]{16}", made)
    first, second = (client.get("/nowhere").headers["X-Request-Id"] for _ in range(2))
    assert first != second


def test_every_request_is_one_json_line_with_its_id(api, client):
    with captured_logs() as logged:
        ok = api("GET", "/v1/tools")
        refused = client.get("/v1/tools", headers={"Authorization": "Bearer tgk_secret_part"})
        unmatched = client.get("/v1/no/such/path?token=abc")
    entries = [line for line in log_lines(logged) if line["logger"] == "service.request"]
    assert [(e["request_id"], e["status"]) for e in entries] == [
        (ok.headers["X-Request-Id"], 200), (refused.headers["X-Request-Id"], 401),
        (unmatched.headers["X-Request-Id"], 404)]
    assert entries[0]["org"] == "acme" and entries[0]["route"] == "/v1/tools" and entries[0]["method"] == "GET"
    assert entries[2]["route"] == "(unmatched)" and "path" not in entries[2]
    text = logged.getvalue()
    assert "tgk_secret_part" not in text and "token=abc" not in text and api.key not in text


@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/readyz"])
def test_operations_endpoints_need_no_credentials(client, path):
    assert client.get(path).status_code == 200
