"""The call record: every request, with when it started and ended, what it was and how it went."""
from __future__ import annotations

import gevent
import jwt

from mock_backend.calls import CallLog


def test_calls_record_start_end_status_and_claims(http, harness, live):
    token = harness.token("slow_tool", sub="bob")
    http.get(f"{live}/tools/slow_tool/delay/0.2?x=1", headers=harness.auth(token))
    (call,) = http.get(f"{live}/_calls").json()["calls"]
    assert call["ended"] - call["started"] >= 0.2
    assert {key: call[key] for key in ("tool", "method", "path", "query", "status", "reason", "fault", "sub")} == {
        "tool": "slow_tool", "method": "GET", "path": "/tools/slow_tool/delay/0.2", "query": "x=1",
        "status": 200, "reason": None, "fault": None, "sub": "bob"}
    assert call["turn"] == jwt.decode(token, options={"verify_signature": False})["turn"]


def test_parallel_calls_overlap_in_the_record(http, harness, live):
    def gathering():  # answers only once the other call is there too: the two are at the mock at once
        return http.get(f"{live}/tools/slow_tool/together/overlap/2", headers=harness.bearer("slow_tool")).json()

    calls = [gevent.spawn(gathering), gevent.spawn(gathering)]
    gevent.joinall(calls, raise_error=True)
    assert [call.value["met"] for call in calls] == [True, True]
    first, second = http.get(f"{live}/_calls").json()["calls"]
    assert max(first["started"], second["started"]) < min(first["ended"], second["ended"])


def test_every_request_is_recorded_even_unrouted_or_rejected(http, harness, live):
    http.get(f"{live}/no/such/route")
    http.get(f"{live}/products")
    http.get(f"{live}/_health")  # bookkeeping is not a call
    calls = http.get(f"{live}/_calls").json()["calls"]
    assert [(c["tool"], c["path"], c["status"], c["reason"]) for c in calls] == [
        (None, "/no/such/route", 404, None),
        ("search_products", "/products", 401, "missing-token"),
    ]


def test_delete_clears_the_record(http, harness, live):
    http.get(f"{live}/products", headers=harness.bearer("search_products"))
    assert http.delete(f"{live}/_calls").status_code == 204
    assert http.get(f"{live}/_calls").json() == {"calls": []}


def test_the_record_is_a_bounded_ring():
    log = CallLog(size=3)
    for index in range(5):
        log.start("GET", f"/{index}", "")
    assert [call["path"] for call in log.snapshot()] == ["/2", "/3", "/4"]


def test_a_call_still_running_has_no_end_yet():
    log = CallLog()
    log.start("GET", "/slow", "")
    (call,) = log.snapshot()
    assert call["ended"] is None and call["started"] > 0


def test_calls_filter_by_tool(http, harness, live):
    http.get(f"{live}/tools/a/status/200", headers=harness.bearer("a"))
    http.get(f"{live}/tools/b/status/200", headers=harness.bearer("b"))
    calls = http.get(f"{live}/_calls", params={"tool": "b"}).json()["calls"]
    assert [call["path"] for call in calls] == ["/tools/b/status/200"]
