"""The benchmarks' reference engines (bench/engines.py: requests, urllib3) judge every answer as the call path's own
client does and keep its guards, so the side-by-side figures compare like with like."""
import pytest
import requests
import urllib3.exceptions

from bench import engines
from service.dispatch import AddressGuard, BuiltRequest, send, transport
from service.limits import RESPONSE_CAP_CHARS

ROUTES = ["/text/200/hello", "/empty/204", "/text/404/secret", "/empty/500", "/redirect/body",
          f"/chars/{RESPONSE_CAP_CHARS}/é", f"/gzip-chars/{RESPONSE_CAP_CHARS + 1}/a",
          f"/chunked-chars/{RESPONSE_CAP_CHARS}/€", "/huge"]


def outcome(url, guard):
    o = send(BuiltRequest("GET", url), guard=guard, authorization="Bearer t")
    return o.kind, o.http_code, o.output


@pytest.mark.parametrize("engine", ["requests", "urllib3"])
@pytest.mark.parametrize("path", ROUTES)
def test_each_reference_engine_judges_every_answer_as_ours(endpoint, loopback_guard, path, engine, monkeypatch):
    ours = outcome(endpoint.url(path), loopback_guard)
    monkeypatch.setattr(transport, "_exchange", transport._exchange)  # restored after the test
    engines.use(engine)
    assert outcome(endpoint.url(path), loopback_guard) == ours


@pytest.mark.parametrize("engine", ["requests", "urllib3"])
def test_the_guard_holds_on_the_reference_engines_too(fresh_endpoint, engine, monkeypatch):
    monkeypatch.setattr(transport, "_exchange", transport._exchange)
    engines.use(engine)
    refused = send(BuiltRequest("GET", fresh_endpoint.url("/text/200/ok")), guard=AddressGuard(), authorization="t")
    assert refused.kind == "transport-error" and "loopback" in refused.detail and fresh_endpoint.connections == 0


def test_the_requests_session_keeps_no_cookie_and_cannot_skip_tls(endpoint, tls_endpoint, loopback_guard):
    session = engines.session_for(loopback_guard)
    session.get(endpoint.url("/set-cookie"), timeout=5)
    assert len(session.cookies) == 0
    with pytest.raises(requests.exceptions.SSLError):
        session.get(tls_endpoint.url("/text/200/secure", host="localhost"), verify=False, timeout=5)
    assert tls_endpoint.received == []


@pytest.mark.parametrize("exc, kind", [
    (requests.exceptions.ConnectTimeout("connect"), "timed-out"),  # a ConnectionError and a Timeout: a timeout
    (urllib3.exceptions.ReadTimeoutError(None, None, "read"), "timed-out"),
    (requests.exceptions.ChunkedEncodingError("cut off"), "transport-error"),
    (urllib3.exceptions.ProtocolError("Connection broken", ConnectionResetError()), "transport-error"),
])
def test_what_the_reference_libraries_raise_becomes_a_failure_kind(exc, kind):
    def failing(*_args):
        raise exc

    assert engines._mapped(failing)().kind == kind
