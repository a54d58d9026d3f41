"""The Calls screen's charts: calls over time by kind, latency per tool, the tools failing most, for its filters."""
import re
import time

import pytest

from service.conversations.records import insert_call_records
from service.database import open_database
from service.registry import get_organization
from tests.dashboard.client import Person

HOUR = 3_600
#: Three days ago at the top of an hour: the charts' window in these tests is whole hours around it.
T0 = (int(time.time()) // HOUR - 72) * HOUR


def record(org, at, tool, kind=None, latency=20.0):
    return {"organization": org, "conversation_id": "c", "turn": "t", "tool": tool, "subject": "s",
            "anonymous": False, "kind": kind, "latency_ms": latency, "session_start": False, "created_at": at}


@pytest.fixture
def admin_with_calls(service):
    database = open_database(service.config.database_url)
    with database.connection_context():
        org = get_organization(service.org).id
        insert_call_records([record(org, T0 + 60, "lookup") for _ in range(8)]
                            + [record(org, T0 + HOUR + 60, "lookup", "timed-out", 10_000.0)]
                            + [record(org, T0 + 2 * HOUR + 60, "charge", "refused", 300.0) for _ in range(3)]
                            + [record(org, T0 + 2 * HOUR + 90, "charge", latency=150.0)])
    person = Person(service.url)
    assert person.sign_in(service.admin_key).status == 200
    return person


def window(**more):
    start = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(T0))
    end = time.strftime("%Y-%m-%dT%H:%M", time.gmtime(T0 + 3 * HOUR))
    return "&".join([f"from={start}", f"to={end}", *(f"{k}={v}" for k, v in more.items())])


def test_the_charts_show_calls_by_kind_latency_and_failures_with_their_text(admin_with_calls):
    page = admin_with_calls.get(f"/calls?{window()}")
    assert page.status == 200
    time_chart = page.text_of("chart-time")
    assert "Calls over time, by kind" in time_chart
    # Three hours: a bar a kind in each hour that had calls, each with its count in words.
    assert re.findall(r'class="kind-([a-z-]+)"><title>[^<]*: ([\d,]+) ', page.text) == [
        ("ok", "8"), ("timed-out", "1"), ("ok", "1"), ("refused", "3")]
    assert 'aria-label="13 calls from' in page.text
    latency = " ".join(page.text_of("chart-latency").split())
    assert latency.index("lookup") < latency.index("charge")  # the most called first
    failing = " ".join(page.text_of("chart-failing").split())
    assert "charge 3 of 4 failed (75.0%): 3 refused" in failing
    assert failing.index("charge") < failing.index("lookup")  # the most failing first


def test_the_charts_narrow_to_the_tool_and_say_what_they_do_not_cover(admin_with_calls):
    page = admin_with_calls.get(f"/calls?{window(tool='charge', subject='s')}")
    assert page.status == 200
    assert "lookup" not in page.text_of("chart-latency")
    assert re.findall(r'class="kind-([a-z-]+)"><title>', page.text) == ["ok", "refused"]
    assert "the charts do not narrow by subject" in " ".join(page.text.split())


def test_refused_filters_draw_no_chart(admin_with_calls):
    page = admin_with_calls.get("/calls?from=yesterday")
    assert page.status == 422
    assert 'id="chart-time"' not in page.text


def test_a_kind_narrows_the_counts_and_the_latencies_say_they_are_of_every_kind(admin_with_calls):
    page = admin_with_calls.get(f"/calls?{window(kind='refused')}")
    assert page.status == 200
    assert re.findall(r'class="kind-([a-z-]+)"><title>[^<]*: ([\d,]+) ', page.text) == [("refused", "3")]
    assert "over calls of every kind" in " ".join(page.text_of("chart-latency").split())
