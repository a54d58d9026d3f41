"""Querying the call log: each filter, paging, views of each outcome, and only the organization's own calls."""
import time

import pytest

from service import registry
from service.database import db
from service.models import CallRecord


def record(org, **fields):
    row = {"organization": org, "conversation_id": "c1", "turn": "t1", "tool": "get_orders", "tool_version": 1,
           "subject": "alice", "anonymous": False, "kind": None, "http_code": 200, "latency_ms": 12.0,
           "size_chars": 42, "jti": "j", "approval": None, "session_start": False, "created_at": time.time()}
    row.update(fields)
    return row


@pytest.fixture
def logged(api, other_api):
    """Eight calls of acme's, one of globex's."""
    now = time.time()
    with db.connection_context():
        acme, globex = registry.get_organization("acme"), registry.get_organization("globex")
        CallRecord.insert_many([
            record(acme.id, jti="a1", created_at=now - 3600),
            record(acme.id, jti="a2", kind="refused", http_code=500, size_chars=None),
            record(acme.id, jti="a3", kind="response-too-big", size_chars=None),
            record(acme.id, jti="a4", turn="t2", tool="get_stock", subject="bob", anonymous=True),
            record(acme.id, jti=None, turn="t2", tool="made_up", tool_version=None, kind="unknown-tool",
                   http_code=None, size_chars=None, latency_ms=0),
            record(acme.id, jti="a6", conversation_id="c2", turn="t0", session_start=True),
            record(acme.id, jti="a7", kind="timed-out", http_code=None, size_chars=None, latency_ms=10_012.0),
            record(acme.id, jti="a8", created_at=now - 86_400 * 3),
            record(globex.id, jti="g1"),
        ]).execute()
    return api


def jtis(api, query=""):
    response = api("GET", f"/v1/calls{query}")
    assert response.status_code == 200, response.json
    return [c["jti"] for c in response.json["calls"]]


def test_each_filter_narrows_the_log(logged):
    now = time.time()
    # Newest first, by the time recorded (a8 was written last, three days old), then by id.
    assert jtis(logged) == ["a7", "a6", None, "a4", "a3", "a2", "a1", "a8"]
    assert jtis(logged, "?conversation=c2") == ["a6"]
    assert jtis(logged, "?turn=t2") == [None, "a4"]
    assert jtis(logged, "?tool=get_stock") == ["a4"]
    assert jtis(logged, "?subject=bob") == ["a4"]
    assert jtis(logged, "?kind=ok") == ["a6", "a4", "a1", "a8"]
    assert jtis(logged, "?kind=unknown-tool") == [None]
    assert jtis(logged, f"?since={now - 7200}&until={now - 1800}") == ["a1"]
    assert jtis(logged, f"?until={now - 86_400}") == ["a8"]
    assert jtis(logged, "?kind=ok&turn=t1&conversation=c1") == ["a1", "a8"]


def test_pages_follow_next(logged):
    first = logged("GET", "/v1/calls?limit=3").json
    assert [c["jti"] for c in first["calls"]] == ["a7", "a6", None]
    second = logged("GET", f"/v1/calls?limit=3&before={first['next']}").json
    third = logged("GET", f"/v1/calls?limit=3&before={second['next']}").json
    assert [c["jti"] for c in second["calls"] + third["calls"]] == ["a4", "a3", "a2", "a1", "a8"]
    assert third["next"] is None


def test_each_outcome_shows_its_size_status_and_kind(logged):
    calls = {c["jti"]: c for c in logged("GET", "/v1/calls").json["calls"]}
    assert (calls["a1"]["kind"], calls["a1"]["status"], calls["a1"]["size"]) == ("ok", 200, 42)
    assert (calls["a2"]["kind"], calls["a2"]["status"], calls["a2"]["size"]) == ("refused", 500, None)
    assert calls["a3"]["size"] == "over the cap"
    assert (calls["a7"]["kind"], calls["a7"]["status"], calls["a7"]["latency_ms"]) == ("timed-out", None, 10_012.0)
    assert (calls[None]["version"], calls[None]["tool"]) == (None, "made_up")
    assert calls["a4"]["anonymous"] is True and calls["a6"]["session_start"] is True
    assert set(calls["a1"]) == {"id", "at", "conversation", "turn", "tool", "version", "session_start", "subject",
                                "anonymous", "kind", "status", "latency_ms", "size", "jti", "approval", "raw_size"}


def test_only_the_organizations_admins_read_its_calls(logged, other_api, keys):
    assert jtis(other_api) == ["g1"]
    assert logged("GET", "/v1/calls", key=keys["agent"]).status_code == 403
    assert logged("GET", "/v1/calls", key=keys["backend"]).status_code == 403
    assert logged("GET", "/v1/calls", key="tgk_nope_nope").status_code == 401


@pytest.mark.parametrize("query", ["?kind=exploded", "?limit=0", "?limit=501", "?since=yesterday"])
def test_bad_queries_are_refused(logged, query):
    assert logged("GET", f"/v1/calls{query}").status_code == 422
