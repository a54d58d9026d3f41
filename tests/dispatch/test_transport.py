"""What comes back from a real endpoint, judged into outcomes: every kind and every boundary."""
import time

import gevent
import pytest

from service.dispatch import BuiltRequest, send
from service.dispatch.transport import client_for
from service.limits import MAX_RESPONSE_HEAD_BYTES, RESPONSE_CAP_CHARS
from tests.support.loopback import wait_for

MIB = 1024


def get(endpoint, guard, path, **kwargs):
    return send(BuiltRequest("GET", endpoint.url(path)), guard=guard, authorization="Bearer t", **kwargs)


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])


def test_a_2xx_body_is_the_output_as_it_came(endpoint, loopback_guard):
    outcome = get(endpoint, loopback_guard, "/text/200/%7B%22tier%22%3A%20%22gold%22%7D")
    assert (outcome.kind, outcome.http_code, outcome.output, outcome.size_chars) == (None, 200, '{"tier": "gold"}', 16)
    assert outcome.latency_ms >= 0 and outcome.detail is None


@pytest.mark.parametrize("path, status", [("/empty/204", 204), ("/empty/200", 200), ("/empty/201", 201)])
def test_an_empty_2xx_is_an_empty_success(endpoint, loopback_guard, path, status):
    outcome = get(endpoint, loopback_guard, path)
    assert (outcome.kind, outcome.http_code, outcome.output, outcome.size_chars) == (None, status, "", 0)


@pytest.mark.parametrize("status", [400, 403, 404, 500, 503])
def test_a_non_2xx_with_a_body_is_refused_and_the_body_goes_nowhere(endpoint, loopback_guard, status):
    outcome = get(endpoint, loopback_guard, f"/text/{status}/Traceback%20secret%20internals")
    assert (outcome.kind, outcome.http_code, outcome.output) == ("refused", status, None)
    assert "secret" not in repr(outcome) and outcome.to_result() == {
        "error": {"status": "error", "kind": "refused", "httpCode": status}}


@pytest.mark.parametrize("status", [404, 500, 401])
def test_a_non_2xx_without_a_body_returned_nothing(endpoint, loopback_guard, status):
    outcome = get(endpoint, loopback_guard, f"/empty/{status}")
    assert (outcome.kind, outcome.http_code, outcome.output) == ("returned-nothing", status, None)


@pytest.mark.parametrize("kind, expected", [("body", "refused"), ("empty", "returned-nothing")])
def test_a_redirect_is_never_followed_and_judged_by_its_body(endpoint, loopback_guard, kind, expected):
    before = len(endpoint.received)
    outcome = get(endpoint, loopback_guard, f"/redirect/{kind}")
    assert (outcome.kind, outcome.http_code) == (expected, 302)
    assert [r.target for r in endpoint.received[before:]] == [f"/redirect/{kind}"]


def test_a_redirect_with_a_gigabyte_body_is_decided_from_one_chunk(endpoint, loopback_guard):
    # requests reads a 3xx body in full to follow it, even with allow_redirects=False, unless told
    # there is no target: reading a gigabyte would blow the deadline and the memory bound.
    get(endpoint, loopback_guard, "/redirect/huge")
    before = rss_kib()
    outcome = get(endpoint, loopback_guard, "/redirect/huge")
    assert (outcome.kind, outcome.http_code) == ("refused", 302)
    assert outcome.latency_ms < 2_000
    assert rss_kib() - before < 4 * MIB


def test_an_error_with_a_gigabyte_body_is_refused_from_one_chunk(endpoint, loopback_guard):
    outcome = get(endpoint, loopback_guard, "/huge/500")
    assert (outcome.kind, outcome.http_code) == ("refused", 500)


@pytest.mark.parametrize("route", ["chars", "chunked-chars", "gzip-chars"])
@pytest.mark.parametrize("char", ["a", "é", "€", "😀"], ids=["1-byte", "2-byte", "3-byte", "4-byte"])
def test_exactly_the_cap_in_characters_passes_and_one_more_is_too_big(endpoint, loopback_guard, route, char):
    at_cap = get(endpoint, loopback_guard, f"/{route}/{RESPONSE_CAP_CHARS}/{char}")
    assert (at_cap.kind, at_cap.size_chars, at_cap.output) == (None, RESPONSE_CAP_CHARS, char * RESPONSE_CAP_CHARS)
    over = get(endpoint, loopback_guard, f"/{route}/{RESPONSE_CAP_CHARS + 1}/{char}")
    assert (over.kind, over.http_code, over.output, over.size_chars) == ("response-too-big", 200, None, None)


def test_a_smaller_cap_is_honoured(endpoint, loopback_guard):
    assert get(endpoint, loopback_guard, "/chars/10/a", cap=10).kind is None
    assert get(endpoint, loopback_guard, "/chars/11/a", cap=10).kind == "response-too-big"


@pytest.mark.parametrize("charset, encode_as", [("ISO-8859-1", "latin-1"), ("utf-16", "utf-16"), ("UTF-8", "utf-8")])
def test_the_charset_of_the_content_type_is_used(endpoint, loopback_guard, charset, encode_as):
    assert get(endpoint, loopback_guard, f"/charset/{charset}/{encode_as}").output == "café"


@pytest.mark.parametrize("charset", ["rot13", "hex", "base64", "zlib", "idna", "undefined", "no-such-charset", "%22%22"])
def test_a_charset_that_is_not_a_text_encoding_falls_back_to_utf8(endpoint, loopback_guard, charset):
    assert get(endpoint, loopback_guard, f"/charset/{charset}/utf-8").output == "café"


def test_a_body_its_charset_cannot_decode_at_all_is_a_transport_error(endpoint, loopback_guard):
    outcome = get(endpoint, loopback_guard, "/charset/utf-16/utf-16-le")  # UTF-16 without its byte-order mark
    assert (outcome.kind, outcome.http_code) == ("transport-error", None)


def test_undecodable_bytes_become_replacement_characters(endpoint, loopback_guard):
    outcome = get(endpoint, loopback_guard, "/charset/utf-8/latin-1")
    assert (outcome.output, outcome.size_chars) == ("caf\ufffd", 4)


def test_a_gigabyte_body_is_cut_off_with_bounded_memory(endpoint, loopback_guard):
    get(endpoint, loopback_guard, "/huge")
    before = rss_kib()
    outcome = get(endpoint, loopback_guard, "/huge")
    assert (outcome.kind, outcome.http_code) == ("response-too-big", 200)
    assert rss_kib() - before < 4 * MIB


def test_a_gzip_bomb_is_cut_off_by_its_decoded_size(endpoint, loopback_guard):
    assert len(endpoint.bomb) < 1024 * 1024  # well under the cap in bytes on the wire...
    get(endpoint, loopback_guard, "/bomb")
    before = rss_kib()
    outcome = get(endpoint, loopback_guard, "/bomb")
    assert (outcome.kind, outcome.http_code) == ("response-too-big", 200)  # ...32 MiB once decoded
    assert rss_kib() - before < 4 * MIB


@pytest.mark.parametrize("how", ["reset", "close"])
def test_a_body_cut_off_mid_way_is_a_transport_error(endpoint, loopback_guard, how):
    outcome = get(endpoint, loopback_guard, f"/cut/{how}")
    assert (outcome.kind, outcome.http_code, outcome.output) == ("transport-error", None, None)
    assert "xxxxx" not in outcome.detail


def test_a_closed_port_is_a_transport_error(loopback_guard, closed_port):
    outcome = send(BuiltRequest("GET", f"http://127.0.0.1:{closed_port}/"), guard=loopback_guard, authorization="x")
    assert (outcome.kind, outcome.http_code) == ("transport-error", None)
    assert "Connection refused" in outcome.detail


def test_an_unresolvable_host_is_a_transport_error(loopback_guard):
    outcome = send(BuiltRequest("GET", "http://nonexistent.invalid/"), guard=loopback_guard, authorization="x")
    assert outcome.kind == "transport-error" and "NameResolutionError" in outcome.detail


def test_connections_are_reused_until_one_is_cut_off(fresh_endpoint, fresh_guard):
    for _ in range(3):
        assert get(fresh_endpoint, fresh_guard, "/text/200/ok").output == "ok"
    assert fresh_endpoint.connections == 1
    assert get(fresh_endpoint, fresh_guard, "/huge").kind == "response-too-big"
    assert get(fresh_endpoint, fresh_guard, "/text/404/no").kind == "refused"
    assert get(fresh_endpoint, fresh_guard, "/text/200/ok").output == "ok"
    # The cut-off gigabyte's connection was discarded; the refused one (read to its end) was kept.
    assert fresh_endpoint.connections == 2


# -- the response head: capped, under the deadline, never stalling the worker ------------------


@pytest.mark.parametrize("size, kind, output", [
    (MAX_RESPONSE_HEAD_BYTES, None, "ok"),
    (MAX_RESPONSE_HEAD_BYTES + 1, "transport-error", None),
])
def test_a_head_of_exactly_the_cap_passes_and_one_byte_more_fails(endpoint, loopback_guard, size, kind, output):
    outcome = get(endpoint, loopback_guard, f"/head-bytes/{size}")
    assert (outcome.kind, outcome.output) == (kind, output)
    if kind:
        assert "ResponseHeadTooLarge" in outcome.detail


def test_a_16_mib_header_line_fails_at_once_without_stalling_other_greenlets(fresh_endpoint, fresh_guard):
    gaps = []

    def heartbeat():
        last = time.monotonic()
        while True:
            gevent.sleep(0.005)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    beat = gevent.spawn(heartbeat)
    gevent.sleep(0.02)
    try:
        outcome = get(fresh_endpoint, fresh_guard, f"/long-header/{16 * 1024 * 1024}", deadline=5)
    finally:
        beat.kill()
    assert outcome.kind == "transport-error" and "ResponseHeadTooLarge" in outcome.detail
    assert outcome.latency_ms < 1_000  # the cap ended it, not the deadline
    assert gaps and max(gaps) < 0.2


def test_endless_header_lines_fail_at_the_cap_with_bounded_memory(fresh_endpoint, fresh_guard):
    before = rss_kib()
    outcome = get(fresh_endpoint, fresh_guard, "/endless-headers", deadline=5)
    assert outcome.kind == "transport-error" and "ResponseHeadTooLarge" in outcome.detail
    assert outcome.latency_ms < 1_000
    assert rss_kib() - before < 4 * MIB


def test_a_head_that_trickles_in_is_cut_off_by_the_deadline(fresh_endpoint, fresh_guard):
    # A header line every tenth of a second: each read is quick, the whole head would take ten seconds.
    outcome = get(fresh_endpoint, fresh_guard, "/drip-head", deadline=0.25)
    assert (outcome.kind, outcome.http_code, outcome.detail) == ("timed-out", None, "no complete answer within 0.25 s")
    assert outcome.latency_ms < 1_500


def test_interim_answers_are_passed_over_to_the_final_one(fresh_endpoint, fresh_guard):
    for _ in range(2):
        assert get(fresh_endpoint, fresh_guard, "/interim").output == "final"
    assert fresh_endpoint.connections == 1


# -- which connections go back to the pool ------------------------------------------------------


@pytest.mark.parametrize("method, status, expected", [
    ("GET", 204, (None, 204, "")),
    ("GET", 304, ("returned-nothing", 304, None)),
    ("HEAD", 200, (None, 200, "")),
    ("GET", 200, (None, 200, "ok")),
])
@pytest.mark.parametrize("when", ["with-the-answer", "a-moment-later"])
def test_bytes_after_a_complete_answer_are_neither_that_answer_nor_the_next(fresh_endpoint, fresh_guard, method,
                                                                              status, expected, when):
    # What comes after is a whole 404 "poison" response: read as an answer, it would show.
    url = fresh_endpoint.url(f"/after-end/{status}/{when}")
    first = send(BuiltRequest(method, url), guard=fresh_guard, authorization="Bearer t")
    assert (first.kind, first.http_code, first.output) == expected
    wait_for(lambda: fresh_endpoint.after_end_sent == 1)
    second = get(fresh_endpoint, fresh_guard, "/text/200/clean")
    assert (second.kind, second.http_code, second.output) == (None, 200, "clean")
    assert fresh_endpoint.connections == 2  # the first connection was discarded, not reused


def test_a_pooled_connection_the_endpoint_closed_is_not_reused(fresh_endpoint, fresh_guard):
    assert get(fresh_endpoint, fresh_guard, "/hang-up/at-once").output == "ok"
    wait_for(lambda: fresh_endpoint.closed == 1)
    assert get(fresh_endpoint, fresh_guard, "/text/200/fresh").output == "fresh"
    assert fresh_endpoint.connections == 2


def test_a_connection_closed_instead_of_answering_fails_that_call_and_is_never_reused(fresh_endpoint, fresh_guard):
    assert get(fresh_endpoint, fresh_guard, "/hang-up/next-request").output == "ok"
    dropped = get(fresh_endpoint, fresh_guard, "/text/200/dropped")
    assert dropped.kind == "transport-error" and "HTTPConnectionClosed" in dropped.detail
    # Not retried (docs/decisions.md: nothing is): the endpoint had the request and may have acted on it.
    assert fresh_endpoint.connections == 1
    assert client_for(fresh_guard).pool("http", "127.0.0.1", fresh_endpoint.port)._socket_queue.qsize() == 0
    assert get(fresh_endpoint, fresh_guard, "/text/200/fresh").output == "fresh"
    assert fresh_endpoint.connections == 2
