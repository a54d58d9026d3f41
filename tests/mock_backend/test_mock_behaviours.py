"""Misbehaviour routes, over a real socket to the mock on 127.0.0.1."""
from __future__ import annotations

import time
import zlib

import gevent
import pytest

from mock_backend import behaviours, gathering


def get(http, harness, live, path, tool="slow_tool", **kwargs):
    return http.get(f"{live}/tools/{tool}/{path}", headers=harness.bearer(tool), **kwargs)


@pytest.mark.parametrize("code", [201, 404, 429, 500, 503])
def test_status_answers_that_code_with_a_body(http, harness, live, code):
    response = get(http, harness, live, f"status/{code}")
    assert response.status_code == code
    assert set(response.json()) == {"error"}


def test_status_204_has_no_body(http, harness, live):
    response = get(http, harness, live, "status/204")
    assert (response.status_code, response.content) == (204, b"")


@pytest.mark.parametrize("code", [404, 500, 200])
def test_status_empty_has_no_body(http, harness, live, code):
    response = get(http, harness, live, f"status/{code}/empty")
    assert (response.status_code, response.content, response.headers["Content-Length"]) == (code, b"", "0")


@pytest.mark.parametrize("code", [99, 600, 101])
def test_status_outside_the_range_is_refused(http, harness, live, code):
    assert get(http, harness, live, f"status/{code}").status_code == 400


def test_delay_sleeps_then_answers(http, harness, live):
    started = time.monotonic()
    response = get(http, harness, live, "delay/0.3")
    assert response.json() == {"slept": 0.3}
    assert time.monotonic() - started >= 0.3


def test_delay_is_capped(http, harness, live, monkeypatch):
    monkeypatch.setattr(behaviours, "MAX_DELAY_SECONDS", 0.2)
    assert get(http, harness, live, "delay/1000").json() == {"slept": 0.2}


@pytest.mark.parametrize("seconds", ["-1", "nan", "soon"])
def test_delay_refuses_a_bad_duration(http, harness, live, seconds):
    assert get(http, harness, live, f"delay/{seconds}").status_code == 400


def test_drip_sends_one_byte_per_interval(http, harness, live):
    with get(http, harness, live, "drip?bytes=3&interval=0.2", stream=True) as response:
        assert response.headers["Content-Length"] == "3"
        headers_at = time.monotonic()
        (sending,) = http.get(f"{live}/_calls").json()["calls"]
        body = response.raw.read()
    assert body == b"***"
    # Headers come at once, while the body is still being sent; the two intervals between its three bytes follow.
    assert sending["ended"] is None
    assert time.monotonic() - headers_at >= 0.35


def test_drip_is_capped_in_time(http, harness, live, monkeypatch):
    monkeypatch.setattr(behaviours, "MAX_DRIP_SECONDS", 0.2)
    response = get(http, harness, live, "drip?bytes=1000&interval=0.1")
    assert response.content == b"***"  # 1 + 0.2 / 0.1 bytes


def test_chars_sends_exactly_n_multibyte_characters(http, harness, live):
    response = get(http, harness, live, "chars/70000", params={"char": "é"})
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert len(response.content) == 140_000
    text = response.content.decode("utf-8")
    assert len(text) == 70_000 and set(text) == {"é"}


@pytest.mark.parametrize("n", [0, 1, 16_384, 16_385])
def test_chars_counts_exactly_at_the_edges(http, harness, live, n):
    assert len(get(http, harness, live, f"chars/{n}").text) == n


def test_chars_is_capped_and_never_built_whole(http, harness, live):
    with get(http, harness, live, "chars/5000000000", params={"char": "€"}, stream=True) as response:
        assert response.headers["Content-Length"] == str(behaviours.MAX_CHARS * 3)
        assert response.raw.read(9) == "€€€".encode()


def test_chars_refuses_more_than_one_character(http, harness, live):
    assert get(http, harness, live, "chars/3", params={"char": "ab"}).status_code == 400


def test_gzip_bomb_is_small_on_the_wire_and_huge_decoded(http, harness, live):
    with get(http, harness, live, "gzip-bomb", stream=True) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        wire = response.raw.read(decode_content=False)
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    decoded = 0
    data = wire
    while data:
        decoded += len(decoder.decompress(data, 1 << 20))
        data = decoder.unconsumed_tail
    assert len(wire) < 1_000_000
    assert decoded == behaviours.GZIP_BOMB_DECODED_BYTES > 100_000_000


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirect_points_at_echo_with_a_body(http, harness, live, code):
    response = get(http, harness, live, f"redirect?code={code}&body=1", allow_redirects=False)
    assert response.status_code == code
    assert response.headers["Location"] == f"{live}/tools/slow_tool/echo"
    assert response.json()["location"] == response.headers["Location"]


def test_redirect_without_a_body(http, harness, live):
    response = get(http, harness, live, "redirect?body=0", allow_redirects=False)
    assert (response.status_code, response.content) == (302, b"")


@pytest.mark.parametrize("query", ["code=200", "code=302&body=2"])
def test_redirect_refuses_bad_knobs(http, harness, live, query):
    assert get(http, harness, live, f"redirect?{query}").status_code == 400


def test_echo_shows_what_was_sent(http, harness, live):
    token = harness.token("lookup", sub="bob")
    response = http.post(f"{live}/tools/lookup/echo/a%2Fb%20c?x=1&x=2&y=%C3%A9",
                         json={"ids": [1, 2]}, headers={**harness.auth(token), "X-Trace": "t-1"})
    body = response.json()
    assert body["method"] == "POST"
    assert body["path"] == "/tools/lookup/echo/a%2Fb%20c"
    assert body["query"] == {"raw": "x=1&x=2&y=%C3%A9", "parsed": {"x": ["1", "2"], "y": ["é"]}}
    assert body["headers"]["X-Trace"] == "t-1"
    assert body["body"] == '{"ids": [1, 2]}' and body["json"] == {"ids": [1, 2]}
    assert (body["claims"]["aud"], body["claims"]["sub"]) == ("lookup", "bob")


def test_echo_never_reflects_the_assertion_and_names_its_call_record_instead(http, harness, live):
    """Whatever an endpoint answers goes to the model: a live assertion in the echo would be handed to it."""
    token = harness.token("lookup", sub="bob")
    response = http.get(f"{live}/tools/lookup/echo?q=1", headers=harness.auth(token))
    assert token not in response.text and "authorization" not in {k.lower() for k in response.json()["headers"]}
    [call] = [c for c in http.get(f"{live}/_calls").json()["calls"] if c["id"] == response.json()["call"]]
    assert (call["path"], call["authorization"]) == ("/tools/lookup/echo", f"Bearer {token}")


@pytest.mark.parametrize("rest", ["", "/", "//x", "/a//b", "/a%2Fb%3Fc%23d"])
def test_echo_takes_any_path_after_it_as_sent(http, harness, live, rest):
    response = get(http, harness, live, f"echo{rest}", tool="t")
    assert response.json()["path"] == f"/tools/t/echo{rest}"


def test_echo_of_a_body_that_is_not_json(http, harness, live):
    response = http.put(f"{live}/tools/t/echo", data="plain words", headers=harness.bearer("t"))
    assert (response.json()["body"], response.json()["json"]) == ("plain words", None)


def test_a_misbehaviour_route_serves_the_tool_in_its_url(http, harness, live):
    response = http.get(f"{live}/tools/other_tool/status/500", headers=harness.bearer("slow_tool"))
    assert (response.status_code, response.json()["reason"]) == (401, "wrong-audience")


def _together(http, harness, live, group, count, wait, tool="slow_tool"):
    return get(http, harness, live, f"together/{group}/{count}?wait={wait}", tool=tool)


def test_calls_of_a_gathering_answer_together_once_all_are_there(http, harness, live):
    # Each call waits for the other two; only three at the endpoint at once can meet, whatever the timing.
    calls = [gevent.spawn(_together, http, harness, live, "g", 3, 5, tool) for tool in ("a", "b", "c")]
    gevent.joinall(calls, raise_error=True)

    for call in calls:
        body = call.value.json()
        assert (body["met"], body["most_present"], body["count"], body["group"]) == (True, 3, 3, "g")


def test_a_call_alone_answers_unmet_when_its_wait_is_over(http, harness, live):
    body = _together(http, harness, live, "alone", 2, 0.05).json()
    assert (body["met"], body["most_present"]) == (False, 1)
    assert body["waited"] >= 0.05


def test_calls_one_after_another_never_meet_and_the_group_starts_anew(http, harness, live):
    first = _together(http, harness, live, "seq", 2, 0.05).json()
    second = _together(http, harness, live, "seq", 2, 0.05).json()
    assert [(b["met"], b["most_present"]) for b in (first, second)] == [(False, 1), (False, 1)]


@pytest.mark.parametrize("path, reason", [
    ("together/g/1", "count must be between 2 and 100"),
    ("together/g/101", "count must be between 2 and 100"),
    (f"together/{'g' * 101}/2", "group must be at most 100 characters"),
    ("together/g/2?wait=-1", "wait must be a non-negative number"),
])
def test_a_gathering_out_of_bounds_is_refused(http, harness, live, path, reason):
    response = get(http, harness, live, path)
    assert (response.status_code, response.json()) == (400, {"error": reason})


def test_past_the_open_groups_bound_a_call_is_refused_503(http, harness, serve, monkeypatch):
    monkeypatch.setattr(gathering, "MAX_OPEN_GROUPS", 1)
    app = harness.app()
    live = serve(app)
    waiting = gevent.spawn(_together, http, harness, live, "first", 2, 5, "a")
    with gevent.Timeout(5):
        while "first" not in app.extensions[behaviours.GATHERINGS_KEY]:
            gevent.sleep(0.01)

    refused = _together(http, harness, live, "second", 2, 5)
    assert (refused.status_code, refused.json()) == (503, {"error": "too many gatherings are open (at most 1)"})
    # The open group still gathers: its second call meets the first.
    assert _together(http, harness, live, "first", 2, 5, "b").json()["met"] is True
    assert waiting.get().json()["met"] is True


def test_a_wait_is_capped(http, harness, live, monkeypatch):
    monkeypatch.setattr(behaviours, "MAX_DELAY_SECONDS", 0.05)
    assert _together(http, harness, live, "capped", 2, 1000).json()["waited"] < 1
