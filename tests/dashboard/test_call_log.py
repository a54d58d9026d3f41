"""The Calls page over HTTP: every field of each call, each filter, paging, no body or token, admin keys only."""
import base64
import html
import json
import re
import time
from datetime import datetime, timezone

import pytest
import requests

from service.dashboard import call_log
from service.dashboard.web import when
from service.limits import RESPONSE_CAP_CHARS
from tests.dashboard.client import Person
from tests.support import live as helpers

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

#: Travels in a call's arguments to the echo endpoint and back in its body: it must never reach the log.
BODY_MARKER = "body-marker-5f1c0e"
NOTHING_SIGNED = "none: nothing was signed"


def cells(page, call_id: int) -> list[str]:
    """The text of each cell of one call's row, then of each fact its details row folds (subject, anonymous,
    session start, conversation, turn, jti)."""
    row = re.search(rf'<tr id="call-{call_id}"[^>]*>(.*?)</tr>', page.text, re.S)[1]
    more = re.search(rf'<tr class="more" id="call-{call_id}-more">(.*?)</tr>', page.text, re.S)[1]
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())
            for cell in re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", row, re.S) + re.findall(r"<dd>(.*?)</dd>", more, re.S)]


def row_ids(page) -> list[int]:
    return [int(i) for i in re.findall(r'<tr id="call-(\d+)" data-call>', page.text)]


def utc_input(timestamp: float) -> str:
    """A time as a datetime-local input sends it."""
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def converse(service, token: str, *calls):
    """Open a conversation on `logged` (its session-start tool runs), then one step of `calls`."""
    conversation, turn, step = helpers.converse(service, token, *calls, project="logged")
    return conversation, turn, step.json()["results"]


@pytest.fixture(scope="module")
def logged(module_service, module_backend):
    """Two conversations on the mock backend: alice's with a call of several kinds, an anonymous visitor's."""
    service, backend = module_service, module_backend
    tools = [
        {"name": "log_start", "url": f"{backend}/tools/log_start/echo/users/{{subject}}", "scope": "per_user",
         "runs_at_session_start": True, "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
        {"name": "log_echo", "url": f"{backend}/tools/log_echo/echo",
         "parameters": [{"name": "note", "type": "string", "location": "query", "required": False}]},
        {"name": "log_refused", "url": f"{backend}/tools/log_refused/status/404"},
        {"name": "log_big", "url": f"{backend}/tools/log_big/chars/{RESPONSE_CAP_CHARS + 1}"},
    ]
    for tool in tools:
        response = service.api("POST", "/v1/tools", json={"description": "Logged.", "method": "GET", **tool})
        assert response.status_code == 201, response.text
    assert service.api("POST", "/v1/projects", json={"name": "logged"}).status_code == 201
    pins = [{"tool": t["name"], "version": "draft"} for t in tools]
    assert service.api("PUT", "/v1/projects/logged/draft", json={"pins": pins}).status_code == 200
    assert service.api("POST", "/v1/projects/logged/publish").status_code == 201
    started = time.time()
    alice_token = service.session_token("alice")
    alice, turn, results = converse(service, alice_token, ("log_echo", {"note": BODY_MARKER}), ("log_refused", {}),
                                    ("log_big", {}), ("made_up", {}))
    echoed = json.loads(results[0]["output"])
    assert BODY_MARKER in results[0]["output"]  # the body did reach the model
    visitor_token = service.session_token("visitor-9", anonymous=True)
    visitor, _, _ = converse(service, visitor_token, ("log_echo", {}))
    # The echo never shows the assertion it got; the mock's call record, which the echo names, keeps it.
    [record] = [c for c in requests.get(f"{backend}/_calls", params={"tool": "log_echo"}, timeout=5).json()["calls"]
                if c["id"] == echoed["call"]]
    return {"alice": alice, "turn": turn, "visitor": visitor, "started": started,
            "tokens": [alice_token, visitor_token], "assertion": record["authorization"].split(" ", 1)[1]}


def api_calls(service, query: str) -> list[dict]:
    response = service.api("GET", f"/v1/calls?{query}")
    assert response.status_code == 200, response.text
    return response.json()["calls"]


def test_each_call_shows_every_field_the_api_gives(service, admin, logged):
    page = admin.get(f"/calls?conversation={logged['alice']}")
    assert page.status == 200
    records = api_calls(service, f"conversation={logged['alice']}")
    assert row_ids(page) == [c["id"] for c in records] and len(records) == 5  # session start + four in one step
    for c in records:
        assert cells(page, c["id"]) == [
            when(c["at"], seconds=True), c["tool"], str(c["version"]) if c["version"] else "none", c["kind"],
            str(c["status"]) if c["status"] else "none", f"{c['latency_ms']:.0f} ms",
            "none" if c["size"] is None else str(c["size"]), c["subject"], "No", "Yes" if c["session_start"] else "No",
            c["conversation"], c["turn"], c["jti"] or NOTHING_SIGNED]
    shown = {c["tool"]: cells(page, c["id"]) for c in records}
    # tool, version, kind, status, size, session start
    assert [shown["log_start"][i] for i in (2, 3, 4, 9)] == ["1", "ok", "200", "Yes"]
    assert [shown["log_big"][i] for i in (3, 4, 6)] == ["response-too-big", "200", "over the cap"]
    assert [shown["log_refused"][i] for i in (3, 4, 6)] == ["refused", "404", "none"]
    assert [shown["made_up"][i] for i in (2, 3, 4, 12)] == ["none", "unknown-tool", "none", NOTHING_SIGNED]
    assert int(shown["log_echo"][6]) > len(BODY_MARKER)  # the size in characters, not the body
    assert shown["log_start"][11] != logged["turn"] == shown["log_echo"][11]


def test_an_anonymous_session_is_marked_anonymous(admin, logged):
    page = admin.get(f"/calls?conversation={logged['visitor']}")
    assert len(row_ids(page)) == 2  # its session-start call and its step's
    for call in row_ids(page):
        assert cells(page, call)[7:9] == ["visitor-9", "Yes"]


def test_no_body_and_no_token_is_ever_shown(service, admin, logged):
    page = admin.get("/calls")
    assert len(row_ids(page)) == 7
    secrets = [BODY_MARKER, logged["assertion"], logged["assertion"].rsplit(".", 1)[1], *logged["tokens"],
               service.admin_key, service.backend_key]
    for secret in secrets:
        assert secret not in page.text
    payload = logged["assertion"].split(".")[1]
    jti = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["jti"]
    assert f"<code>{jti}</code>" in page.text  # the assertion is identified by its jti alone


@pytest.mark.parametrize("query, expected", [
    ("conversation={visitor}", 2),
    ("turn={turn}", 4),
    ("tool=log_refused", 1),
    ("subject=alice", 5),
    ("subject=nobody", 0),
    ("kind=ok", 4),
    ("kind=response-too-big", 1),
    ("kind=unknown-tool&subject=alice", 1),
    ("from={an_hour_ago}&to={in_an_hour}", 7),
    ("from={in_an_hour}", 0),
    ("to={an_hour_ago}", 0),
])
def test_each_filter_narrows_the_log_as_the_api_does(service, admin, logged, query, expected):
    query = query.format(an_hour_ago=utc_input(logged["started"] - 3600), in_an_hour=utc_input(time.time() + 3600),
                         **logged)
    page = admin.get(f"/calls?{query}")
    assert page.status == 200
    assert len(row_ids(page)) == expected
    api = query.replace("from=", "since=").replace("to=", "until=")
    for _name, value in re.findall(r"(since|until)=([^&]+)", api):
        api = api.replace(value, str(datetime.fromisoformat(value).replace(tzinfo=timezone.utc).timestamp()))
    assert row_ids(page) == [c["id"] for c in api_calls(service, api)]


def test_the_form_shows_the_filters_again_and_rows_narrow_the_filter(admin, logged):
    page = admin.get("/calls?subject=alice&kind=ok")
    assert 'name="subject" value="alice"' in page.text
    assert '<option value="ok" selected>' in page.text
    link = f'/calls?subject=alice&amp;kind=ok&amp;conversation={logged["alice"]}'
    assert link in page.text  # a conversation's id filters to it, keeping the other filters


@pytest.mark.parametrize("query, field, message", [
    ("from=yesterday", "f-from", "Error: Enter a time as YYYY-MM-DD HH:MM, in UTC."),
    ("from=2026-01-02T10:00&to=2026-01-02T09:00", "f-to",
     "Error: The end of the time range must come after its start."),
    ("kind=exploded", "f-kind", "Error: Choose one of the listed kinds."),
])
def test_a_filter_that_cannot_be_read_is_shown_next_to_its_field(admin, logged, query, field, message):
    page = admin.get(f"/calls?{query}")
    assert page.status == 422
    assert page.errors() == {field: message}
    assert row_ids(page) == []


def test_the_log_pages_through_older_calls_keeping_the_filters(service, admin, logged, monkeypatch):
    monkeypatch.setattr(call_log, "PAGE_SIZE", 2)
    page, seen = admin.get("/calls?subject=alice"), []
    while True:
        assert len(row_ids(page)) <= 2
        seen += row_ids(page)
        older = re.search(r'href="([^"]+)" id="older-calls"', page.text)
        if not older:
            break
        assert "subject=alice" in older[1]
        page = admin.get(html.unescape(older[1]))
        assert "Newest calls" in page.text
    assert seen == [c["id"] for c in api_calls(service, "subject=alice")] and len(seen) == 5


@pytest.mark.parametrize("bound, heading", [
    (3, "More than 3 calls matching the filters, 2 on this page"),
    (5, "5 calls matching the filters, 2 on this page"),
])
def test_the_count_of_matching_calls_is_bounded(admin, logged, monkeypatch, bound, heading):
    monkeypatch.setattr(call_log, "PAGE_SIZE", 2)
    monkeypatch.setattr(call_log, "COUNT_BOUND", bound)
    for path in ("/calls?subject=alice", f"/calls?subject=alice&before={row_ids(admin.get('/calls?subject=alice'))[-1]}"):
        assert re.search(r'<h2 id="calls-title">([^<]*)</h2>', admin.get(path).text)[1] == heading


def test_only_admin_keys_read_the_call_log(service, admin, agent, logged):
    assert service.api("GET", "/v1/calls", service.agent_key).status_code == 403  # as the API answers
    page = agent.get("/calls")
    assert page.status == 403 and "An agent key may not do that." in page.text
    assert 'href="/calls"' not in agent.get("/tools").text
    assert 'href="/calls"' in admin.get("/tools").text
    visitor = Person(service.url)
    assert visitor.get("/calls?subject=alice").url.endswith("/signin?next=/calls?subject%3Dalice")
