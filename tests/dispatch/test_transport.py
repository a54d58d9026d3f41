"""What comes back from a real endpoint, judged into outcomes: every kind and every boundary."""
import pytest

from service.dispatch import BuiltRequest, send
from service.limits import RESPONSE_CAP_CHARS

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
    assert (outcome.kind, outcome.http_code) == ("response-too-big", 200)  # ...128 MiB once decoded
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
