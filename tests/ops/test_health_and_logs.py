"""Alive, ready (database reachable, schema current), request ids, and one JSON log line per request."""
import io
import json
import logging
import re

import gevent
import pytest

from service.database import db, make_database, open_database
from service.ops.health import readiness
from service.records.logs import configure_logging
from service.records.metrics import REGISTRY_WRITES
from tests.support.logs import captured_logs, log_lines

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/none"  # nothing listens on port 1: refused at once


def test_alive(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json) == (200, {"status": "alive"})


def test_ready_when_the_database_answers_and_its_schema_is_current(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json == {"status": "ready", "database": "reachable", "schema": "current", "work": "admitting",
                             "problems": []}


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


def test_lines_logged_at_once_from_threads_and_greenlets_each_stay_whole(monkeypatch):
    # The service's handler holds the thread's own lock (not gevent's): it must still keep real threads' lines apart.
    configure_logging()
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    # Only the service's handler: pytest's own, above it, takes gevent's lock, which a thread cannot wait on here.
    monkeypatch.setattr(logging.getLogger("service"), "propagate", False)
    log = logging.getLogger("service.test")

    def write(writer: str) -> None:
        for n in range(300):
            log.info("line", extra={"fields": {"writer": writer, "n": n, "padding": "x" * 200}})

    threads = [gevent.get_hub().threadpool.spawn(write, f"thread-{i}") for i in range(4)]
    greenlets = [gevent.spawn(write, f"greenlet-{i}") for i in range(4)]
    gevent.joinall(greenlets)
    for thread in threads:
        thread.get(timeout=30)
    lines = [json.loads(line) for line in stderr.getvalue().splitlines()]
    assert len(lines) == 2400
    assert {(line["writer"], line["n"]) for line in lines} == {
        (f"{kind}-{i}", n) for kind in ("thread", "greenlet") for i in range(4) for n in range(300)}


def test_metric_counts_from_threads_and_greenlets_at_once_are_exact():
    # The metrics' values hold the thread's own lock too: a count from several threads loses no increment.
    child = REGISTRY_WRITES.labels("test-threads", "counted")
    before = child._value.get()

    def count() -> None:
        for _ in range(20_000):
            child.inc()

    threads = [gevent.get_hub().threadpool.spawn(count) for _ in range(4)]
    gevent.joinall([gevent.spawn(count) for _ in range(2)])
    for thread in threads:
        thread.get(timeout=30)  # a lock a thread cannot wait on would hang here: fail instead
    assert child._value.get() - before == 120_000
