"""The endpoint target: building the request as the URL template says, and one bounded call."""
from __future__ import annotations

import contextlib
import functools
import json

import gevent
import gevent.event
import pytest
from gevent.pywsgi import WSGIHandler, WSGIServer

from conformance.case import Outcome
from conformance.endpoint.cases import valid_call_accepted
from conformance.endpoint.target import EndpointTarget, ToolCall, parse_param
from conformance.issuer import KitIssuer
from conformance.limits import RESPONSE_CAP_CHARS
from conformance.runner import CouldNotRun
from tests.support.loopback import free_port

#: The call deadline the bounded-call tests give the target: calls that answer never wait it, and one
#: that hung would cost the spec's ten seconds.
DEADLINE = 1.0
#: The deadline of the calls that must run out of it: each costs this long.
SHORT_DEADLINE = 0.2
#: How long the test waits for those calls before calling them hung: no pass ever waits it.
HUNG_SECONDS = 5.0


# ---- building the request (pure) ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("status=open", ("status", "open")),
    ("count:=3", ("count", 3)),
    ("express:=true", ("express", True)),
    ("ids:=[\"p1\",\"p2\"]", ("ids", ["p1", "p2"])),
    ("note=a=b", ("note", "a=b")),
    ("empty=", ("empty", "")),
])
def test_a_param_is_a_string_or_with_colon_equals_json(text, expected):
    assert parse_param(text) == expected


@pytest.mark.parametrize("text", ["novalue", "=v", ":=1", "n:={not json"])
def test_a_malformed_param_cannot_run(text):
    with pytest.raises(CouldNotRun):
        parse_param(text)


def _call(method="GET", url="http://127.0.0.1:9/users/{subject}/orders/{order}", params=(),
          subject="conformance-user") -> ToolCall:
    return ToolCall.from_arguments(method, url, "get_order", subject, params)


def test_get_puts_placeholders_in_the_path_and_the_rest_in_the_query():
    call = _call(params=["order=o-1", "status=open", "limit:=5", "fresh:=false"])
    assert call.build() == (
        "http://127.0.0.1:9/users/conformance-user/orders/o-1",
        {"status": "open", "limit": "5", "fresh": "false"},
        None,
    )


def test_post_puts_the_rest_in_a_json_body_with_its_json_types():
    call = _call("post", params=["order=o-1", "ids:=[\"p1\"]", "note=hi"])
    assert call.method == "POST"
    assert call.build() == (
        "http://127.0.0.1:9/users/conformance-user/orders/o-1",
        {},
        {"ids": ["p1"], "note": "hi"},
    )


def test_a_path_value_is_one_percent_encoded_segment_and_the_subject_can_be_another():
    call = _call(params=["order=a/b c?d#e%f"], subject="al ice/x")
    assert call.build()[0] == "http://127.0.0.1:9/users/al%20ice%2Fx/orders/a%2Fb%20c%3Fd%23e%25f"
    assert call.build("mallory")[0] == "http://127.0.0.1:9/users/mallory/orders/a%2Fb%20c%3Fd%23e%25f"


@pytest.mark.parametrize("method, url, params, message", [
    ("GET", "http://127.0.0.1:9/users/{subject}/orders/{order}", [], "has no --param order"),
    ("GET", "http://127.0.0.1:9/o/{order}", ["order=1", "order=2"], "given twice"),
    ("GET", "http://127.0.0.1:9/o", ["subject=bob"], "comes from --subject"),
    ("GET", "http://127.0.0.1:9/o/{order}", ["order=.."], "cannot be '..'"),
    ("GET", "http://127.0.0.1:9/o/{order}", ["order="], "cannot be ''"),
    ("GET", "http://127.0.0.1:9/o", ["ids:=[1]"], "only a body parameter"),
    ("TRACE", "http://127.0.0.1:9/o", [], "is not one of"),
    ("GET", "ftp://127.0.0.1/o", [], "not an http or https URL"),
])
def test_a_tool_that_cannot_be_called_so_cannot_run(method, url, params, message):
    with pytest.raises(CouldNotRun, match=message):
        ToolCall.from_arguments(method, url, "t", "conformance-user", params)


# ---- one bounded call, against a real server ------------------------------------------------

class _RawPathHandler(WSGIHandler):
    def get_environ(self):
        environ = super().get_environ()
        environ["RAW_URI"] = self.path  # PATH_INFO is decoded; the test needs the bytes as sent
        return environ


class _Held:
    """The slow routes' calls: none is answered before `release`; `arrived` counts them as they come."""

    def __init__(self) -> None:
        self.release = gevent.event.Event()
        self.arrived = 0

    def trickle(self):
        while not self.release.wait(SHORT_DEADLINE / 5):  # each byte in time, the body never
            yield b"x"


def _app(held, environ, start_response):
    path = environ["PATH_INFO"]
    if path.startswith("/big/"):
        chars = int(path.rsplit("/", 1)[1])
        start_response("200 OK", [("Content-Type", "application/json; charset=utf-8")])
        return ["é".encode() * chars]
    if path == "/redirect":
        start_response("302 Found", [("Location", "/elsewhere")])
        return [b"moved"]
    if path == "/slow-headers":
        held.arrived += 1
        held.release.wait(HUNG_SECONDS)
        start_response("200 OK", [])
        return [b"late"]
    if path == "/trickle":
        held.arrived += 1
        start_response("200 OK", [("Content-Type", "text/plain")])
        return held.trickle()
    length = int(environ.get("CONTENT_LENGTH") or 0)
    seen = {
        "method": environ["REQUEST_METHOD"],
        "raw_uri": environ["RAW_URI"],
        "authorization": environ.get("HTTP_AUTHORIZATION"),
        "content_type": environ.get("CONTENT_TYPE"),
        "body": environ["wsgi.input"].read(length).decode() if length else None,
    }
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(seen).encode()]


@pytest.fixture
def held():
    return _Held()


@pytest.fixture
def server(held):
    server = WSGIServer(("127.0.0.1", 0), functools.partial(_app, held), handler_class=_RawPathHandler,
                        log=None, error_log=None)
    server.start()
    yield f"http://127.0.0.1:{server.server_port}"
    held.release.set()
    server.stop(timeout=1)


@contextlib.contextmanager
def _target(url: str, method: str = "GET", params=(), deadline: float = DEADLINE):
    with KitIssuer() as issuer, KitIssuer() as untrusted:
        call = ToolCall.from_arguments(method, url, "echo_tool", "conformance-user", params)
        yield EndpointTarget(call, issuer, untrusted, deadline=deadline)


def test_a_call_carries_the_bearer_the_path_and_the_query(server):
    with _target(f"{server}/users/{{subject}}/x", params=["q=a b"]) as target:
        answer = target.send("tok.en.sig")
    seen = json.loads(answer.body)
    assert answer.status == 200 and answer.problem is None
    assert seen["raw_uri"] == "/users/conformance-user/x?q=a+b"
    assert seen["authorization"] == "Bearer tok.en.sig"


def test_a_call_without_a_token_has_no_authorization_header_and_a_post_has_json(server):
    with _target(f"{server}/tools/{{tool}}/echo", "POST", ["tool=t", "n:=1"]) as target:
        answer = target.send(None)
    seen = json.loads(answer.body)
    assert seen["authorization"] is None
    assert seen["method"] == "POST"
    assert seen["raw_uri"] == "/tools/t/echo"
    assert seen["content_type"] == "application/json"
    assert json.loads(seen["body"]) == {"n": 1}


def test_proxy_variables_do_not_reroute_the_kit(server, monkeypatch):
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    with _target(f"{server}/plain") as target:
        assert target.send(None).status == 200


def test_a_body_of_exactly_the_cap_in_characters_is_not_too_big(server):
    # Two bytes per character: counting bytes would wrongly call this too big.
    with _target(f"{server}/big/{RESPONSE_CAP_CHARS}") as target:
        at_cap = target.send(None)
    with _target(f"{server}/big/{RESPONSE_CAP_CHARS + 1}") as target:
        over = target.send(None)
    assert (at_cap.chars, at_cap.too_big) == (RESPONSE_CAP_CHARS, False)
    assert over.too_big is True


def test_a_huge_body_is_read_only_up_to_just_past_the_cap(server):
    with _target(f"{server}/big/{50 * RESPONSE_CAP_CHARS}") as target:
        answer = target.send(None)
    assert answer.too_big is True
    assert answer.chars < 3 * RESPONSE_CAP_CHARS


def test_a_redirect_is_not_followed(server):
    with _target(f"{server}/redirect") as target:
        answer = target.send(None)
    assert answer.status == 302
    assert answer.describe() == "HTTP 302 with body 'moved'"


def test_an_endpoint_nobody_listens_on_is_a_transport_error():
    with _target(f"http://127.0.0.1:{free_port()}/x") as target:
        answer = target.send(None)
    assert answer.status is None
    assert answer.problem.startswith("transport error:")


def test_slow_answers_end_at_the_deadline_all_at_once(server, held):
    """Every slow shape in one parallel step, on the injected deadline, while the endpoint still holds them all."""
    arrived_by_return = []

    def returning(call, *args):
        result = call(*args)
        arrived_by_return.append(held.arrived)
        return result

    with _target(f"{server}/slow-headers", deadline=SHORT_DEADLINE) as slow, \
            _target(f"{server}/trickle", deadline=SHORT_DEADLINE) as trickle:
        jobs = [gevent.spawn(returning, slow.send, None), gevent.spawn(returning, trickle.send, None),
                gevent.spawn(returning, valid_call_accepted, slow)]
        done = gevent.joinall(jobs, timeout=HUNG_SECONDS, raise_error=True)
    assert len(done) == len(jobs), "a call waited for the endpoint's answer instead of ending at its deadline"
    headers_answer, trickle_answer, verdict = (job.value for job in jobs)

    expected = f"no answer within {SHORT_DEADLINE:g} s"
    assert headers_answer.problem == expected
    assert trickle_answer.problem == expected
    assert verdict.outcome is Outcome.FAILED
    assert verdict.violations[0].actual == expected
    assert arrived_by_return == [3, 3, 3]  # together: none ended before all three were at the endpoint
