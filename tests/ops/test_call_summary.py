"""`GET /v1/calls/summary`: calls over time by kind and per tool, read from the rollups the call records' writer
keeps, on both engines; its window, its filters and its refusals; the rollups of real steps; retention."""
import time

import pytest

from service.conversations.records import insert_call_records
from service.database import db
from service.latency import PERCENTILE_RELATIVE_ERROR
from service.migrations.call_rollups import DAY, HOUR
from service.records.calls import purge
from service.records.summary import bucket_width
from service.registry import get_organization
from tests.support.definitions import tool
from tests.support.live import Conversation, live_service, mock_backend, publish_project

#: A whole hour, long enough ago that "now" never moves the window of a test.
T0 = (int(time.time()) // DAY - 5) * DAY


def record(org, at, tool_name="lookup", kind=None, latency=10.0, project=None):
    return {"organization": org, "conversation_id": "c", "turn": "t", "tool": tool_name, "subject": "s",
            "anonymous": False, "kind": kind, "latency_ms": latency, "session_start": False, "created_at": at,
            "project": project}


@pytest.fixture
def acme(app, keys):
    with db.connection_context():
        return get_organization("acme").id


def summary(api, query=""):
    response = api("GET", f"/v1/calls/summary{query}")
    assert response.status_code == 200, response.text
    return response.json


def test_buckets_count_each_kind_and_tools_their_calls_kinds_and_percentiles(api, acme):
    latencies = [float(v) for v in range(1, 101)]
    with db.connection_context():
        insert_call_records([record(acme, T0 + 60 + i, latency=v) for i, v in enumerate(latencies)])
        insert_call_records([record(acme, T0 + 2 * HOUR + 5, kind="timed-out", latency=10_000.0),
                             record(acme, T0 + 2 * HOUR + 6, "other", kind="refused"),
                             record(acme, T0 + 5 * HOUR, "other")])
    found = summary(api, f"?since={T0}&until={T0 + 6 * HOUR}")
    assert (found["since"], found["until"], found["bucket_seconds"]) == (T0, T0 + 6 * HOUR, HOUR)
    assert [b["start"] for b in found["buckets"]] == [T0 + i * HOUR for i in range(6)]
    assert [b["counts"] for b in found["buckets"]] == [
        {"ok": 100}, {}, {"timed-out": 1, "refused": 1}, {}, {}, {"ok": 1}]
    lookup, other = found["tools"]  # most calls first
    assert (lookup["tool"], lookup["calls"], lookup["kinds"]) == ("lookup", 101, {"ok": 100, "timed-out": 1})
    assert (other["tool"], other["calls"], other["kinds"]) == ("other", 2, {"ok": 1, "refused": 1})
    # Its 101 calls: 1 … 100 ms and 10 s, so the exact (nearest rank) p50 is the 51st, 51 ms, and the p95 the 96th.
    assert abs(lookup["p50_ms"] - 51) <= 51 * PERCENTILE_RELATIVE_ERROR
    assert abs(lookup["p95_ms"] - 96) <= 96 * PERCENTILE_RELATIVE_ERROR


def test_the_filters_narrow_both_the_buckets_and_the_tools(api, acme):
    shop = api("POST", "/v1/projects", json={"name": "shop"})
    assert shop.status_code == 201, shop.text
    with db.connection_context():
        from service.records.summary import project_id
        shop_id = project_id(get_organization("acme"), "shop")
        insert_call_records([record(acme, T0 + 10, "a", project=shop_id), record(acme, T0 + 20, "b"),
                             record(acme, T0 + HOUR + 10, "a"), record(acme, T0 + 3 * HOUR, "a", project=shop_id)])
    window = f"since={T0}&until={T0 + 2 * HOUR}"
    assert [t["tool"] for t in summary(api, f"?{window}")["tools"]] == ["a", "b"]
    by_tool = summary(api, f"?{window}&tool=a")
    assert [b["counts"] for b in by_tool["buckets"]] == [{"ok": 1}, {"ok": 1}]
    assert [(t["tool"], t["calls"]) for t in by_tool["tools"]] == [("a", 2)]
    by_project = summary(api, f"?{window}&project=shop")
    assert [b["counts"] for b in by_project["buckets"]] == [{"ok": 1}, {}]
    # With no window: from the first call rolled up to now, in whole days past 100 hours.
    everything = summary(api, "")
    assert everything["since"] == T0 and everything["bucket_seconds"] == DAY
    assert sum(sum(b["counts"].values()) for b in everything["buckets"]) == 4


def test_another_organizations_calls_are_not_summarized(api, other_api, acme):
    with db.connection_context():
        insert_call_records([record(acme, T0 + 10)])
    assert summary(other_api, f"?since={T0}&until={T0 + HOUR}")["tools"] == []
    # With no call and no window: the last day, by the hour.
    empty = summary(other_api)
    assert (empty["until"] - empty["since"], empty["bucket_seconds"]) in ((DAY, HOUR), (DAY + HOUR, HOUR))


#: Each bad filter, the field its refusal names and the rule (None: marshmallow's own word for a field it cannot read).
BAD_FILTERS = [
    (f"?since={T0 + 10}&until={T0}", "until", "time-order"),
    (f"?since={T0}&until={T0}", "until", "time-order"),
    ("?since=yesterday", "since", None),
    ("?since=-1", "since", "number-range"),
    ("?until=1e300", "until", "number-range"),
    ("?colour=blue", "colour", None),
    ("?subject=alice", "subject", None),  # the rollups hold no subject: refused, never silently ignored
    ("?project=nowhere", "project", "project-unknown"),
]


def test_a_bad_filter_is_refused_naming_its_field(api, acme):
    # One database for every case (each is refused before anything is read): a fresh one a case cost a second.
    for query, field, rule in BAD_FILTERS:
        response = api("GET", f"/v1/calls/summary{query}")
        assert response.status_code == 422, (query, response.text)
        errors = response.json["errors"]
        assert [e["field"] for e in errors] == [field], query
        if rule:
            assert errors[0]["rule"] == rule, query


def test_an_agent_key_may_not_read_the_summary_and_no_key_is_told_so_before_its_times(api, keys, acme):
    assert api("GET", "/v1/calls/summary", key=keys["agent"]).status_code == 403
    assert api("GET", "/v1/calls/summary?since=5&until=1", key="not-a-key").status_code == 401


def test_retention_takes_the_rollups_of_hours_and_days_wholly_past_it(api, acme):
    now = time.time()
    with db.connection_context():
        insert_call_records([record(acme, now - 40 * DAY), record(acme, now - HOUR)])
        purge(30, now=now)
    found = summary(api, f"?since={now - 50 * DAY}&until={now}")
    assert sum(t["calls"] for t in found["tools"]) == 1


@pytest.mark.parametrize("span, width", [(HOUR, HOUR), (100 * HOUR, HOUR), (100 * HOUR + 1, DAY),
                                          (100 * DAY, DAY), (101 * DAY, 2 * DAY), (3 * 365 * DAY, 14 * DAY)])
def test_the_bucket_width_keeps_a_window_within_100_buckets(span, width):
    assert bucket_width(span) == width
    assert span / width <= 100


def test_real_steps_are_rolled_up_with_their_project(database_url, tmp_path):
    with live_service(tmp_path, database_url=database_url) as service, mock_backend([service.issuer]) as backend:
        steps_then_summary(service, backend)


def steps_then_summary(service, backend):
    publish_project(service, [tool("search", backend + "/tools/search/echo"),
                              tool("broken", backend + "/tools/broken/status/500")])
    conversation = Conversation(service, service.session_token("alice"))
    turn = conversation.turn()
    for _ in range(3):
        conversation.step(turn, ("search", {}), ("broken", {}))
    found = service.api("GET", "/v1/calls/summary?project=shop")
    assert found.status_code == 200, found.text
    tools = {t["tool"]: t for t in found.json()["tools"]}
    assert tools["search"]["kinds"] == {"ok": 3} and tools["broken"]["kinds"] == {"refused": 3}
    assert all(t["p50_ms"] is not None and t["p95_ms"] >= t["p50_ms"] for t in tools.values())
    assert sum(b["counts"].get("ok", 0) for b in found.json()["buckets"]) == 3


def test_the_tools_are_a_page_of_the_most_called_with_how_many_there_were(api, acme):
    with db.connection_context():
        insert_call_records([record(acme, T0 + 60 + i, f"tool_{n}", latency=float(n + 1))
                             for n in range(3) for i in range(n + 1)])  # tool_2 three calls, tool_1 two, tool_0 one
    found = summary(api, f"?since={T0}&until={T0 + HOUR}&limit=2")
    assert [t["tool"] for t in found["tools"]] == ["tool_2", "tool_1"] and found["tools_total"] == 3
    assert all(t["p50_ms"] is not None for t in found["tools"])  # the page's own histograms were summed
    assert summary(api, f"?since={T0}&until={T0 + HOUR}")["tools_total"] == 3
    refused = api("GET", f"/v1/calls/summary?since={T0}&limit=501")
    assert refused.status_code == 422 and [e["field"] for e in refused.json["errors"]] == ["limit"]


def test_the_charts_most_failing_tools_are_ranked_among_all_the_windows_tools_not_the_page(app, acme):
    from service.records.summary import SummaryQuery, summarize

    with db.connection_context():
        insert_call_records([record(acme, T0 + 60 + i, "busy") for i in range(3)]
                            + [record(acme, T0 + 60, "rare", kind="timed-out")])
        found = summarize(get_organization("acme"), SummaryQuery(since=T0, until=T0 + HOUR, limit=1), T0 + HOUR,
                          failing=5)
    assert [t["tool"] for t in found["tools"]] == ["busy"]  # the page: the most called
    assert found["failing"] == [{"tool": "rare", "calls": 1, "kinds": {"timed-out": 1}}]
