"""The step route's two ways in answer alike: a plain request is answered without Flask's per-request machinery
(service/api/conversations/step_route.py), any other by Flask's view. Each request below is sent both ways: plain,
and with a `+json` media type, which Flask reads as JSON and the lean route leaves to it."""
from __future__ import annotations

import json

import pytest
import requests
from werkzeug.exceptions import InternalServerError

from service.api.conversations import step_route
from service.http.errors import from_http_exception
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project
from tests.support.logs import captured_logs, log_lines

STEP_RULE = "/v1/conversations/<conversation_id>/turns/<turn_id>/steps"
#: The two ways in: the lean route takes exactly this media type; Flask takes any JSON one.
LEAN, FLASK = "application/json", "application/step+json"


@pytest.fixture
def chat(service, backend):
    # the mock's delay route answers the same body every time: the two ways' answers can be compared whole
    publish_project(service, [tool("echo", f"{backend}/tools/echo/delay/0")])
    return Conversation(service, service.session_token())


def _post(service, chat, turn, body: bytes, media_type: str, **headers) -> requests.Response:
    return requests.post(f"{service.url}/v1/conversations/{chat.id}/turns/{turn}/steps", data=body, timeout=30,
                         headers={"Content-Type": media_type, "Authorization": f"Bearer {chat.token}", **headers})


def _both(service, chat, body: bytes, **headers) -> list[requests.Response]:
    return [_post(service, chat, chat.turn(), body, media_type, **headers) for media_type in (LEAN, FLASK)]


def _answer(response: requests.Response) -> tuple:
    """What a client reads of an answer: status, its JSON (less each call's latency) and the headers that matter."""
    data = response.json()
    for result in data.get("results", []):
        result.pop("latency_ms")
    return (response.status_code, data, response.headers["Content-Type"], response.headers.get("Retry-After"))


def test_a_step_is_answered_alike_both_ways_and_logged_alike(service, chat):
    body = json.dumps({"calls": [{"id": "1", "name": "echo", "arguments": {}}]}).encode()
    with captured_logs() as logged:
        lean, flask = _both(service, chat, body, **{"X-Request-Id": "step-7"})
    assert _answer(lean) == _answer(flask)
    assert lean.status_code == 200 and lean.json()["results"][0]["output"]
    assert lean.headers["X-Request-Id"] == flask.headers["X-Request-Id"] == "step-7"
    lines = [line for line in log_lines(logged) if line["logger"] == "service.request" and line["route"] == STEP_RULE]
    assert len(lines) == 2
    for line in lines:
        line.pop("duration_ms"), line.pop("ts"), line.pop("turn"), line.pop("path")
    assert lines[0] == lines[1]
    assert lines[0]["route"] == STEP_RULE and lines[0]["org"] == "acme" and lines[0]["conversation"] == chat.id
    assert lines[0]["request_id"] == "step-7"


@pytest.mark.parametrize("body, status, code", [
    (b"{not json", 400, "malformed-body"),
    (b"\xff\xfe\x00", 400, "malformed-body"),
    (b"[" * 100_000, 400, "malformed-body"),
    (b'{"calls": "all of them"}', 422, "invalid"),
    (b'{"calls": [{"id": "1", "name": 7}]}', 422, "invalid"),
], ids=["not-json", "not-text", "nested-too-deep", "calls-not-a-list", "call-malformed"])
def test_a_bad_body_is_refused_alike_both_ways(service, chat, body, status, code):
    lean, flask = _both(service, chat, body)
    assert _answer(lean) == _answer(flask)
    assert (lean.status_code, lean.json()["code"]) == (status, code)


def test_a_missing_or_bad_token_and_someone_elses_turn_are_refused_alike(service, chat):
    body = json.dumps({"calls": [{"id": "1", "name": "echo", "arguments": {}}]}).encode()
    turn = chat.turn()
    for headers, status in (({"Authorization": ""}, 401), ({"Authorization": "Bearer not-a-token"}, 401)):
        lean, flask = (_post(service, chat, turn, body, media_type, **headers) for media_type in (LEAN, FLASK))
        assert _answer(lean) == _answer(flask) and lean.status_code == status
    other = Conversation(service, service.session_token(subject="mallory"))
    lean, flask = (_post(service, other, turn, body, media_type) for media_type in (LEAN, FLASK))
    assert _answer(lean) == _answer(flask) and lean.status_code == 404


def test_a_failure_no_handler_expects_is_a_logged_500_in_the_one_shape(service, chat, monkeypatch):
    # Compared with the 500 Flask's handlers give, not with this service's Flask view: the tests' apps run with
    # TESTING set, so Flask hands the exception to the server instead.
    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(step_route, "step_answer", broken)
    body = json.dumps({"calls": [{"id": "1", "name": "echo", "arguments": {}}]}).encode()
    with captured_logs() as logged:
        lean = _post(service, chat, chat.turn(), body, LEAN)
    assert lean.status_code == 500
    assert lean.json() == from_http_exception(InternalServerError()).to_dict()
    assert lean.json()["code"] == "internal-server-error"
    lines = log_lines(logged)
    assert [line["status"] for line in lines if line["logger"] == "service.request" and line["route"] == STEP_RULE] \
        == [500]
    assert any(line["level"] == "error" and "a bug" in line.get("exception", json.dumps(line)) for line in lines)


def test_a_body_past_the_bound_or_chunked_goes_to_flask(service, chat):
    bound = service.config.max_request_bytes
    too_big = _post(service, chat, chat.turn(), b" " * (bound + 1), LEAN)
    assert (too_big.status_code, too_big.json()["code"]) == (413, "request-too-large")
    body = json.dumps({"calls": [{"id": "1", "name": "echo", "arguments": {}}]}).encode()
    chunked = requests.post(f"{service.url}/v1/conversations/{chat.id}/turns/{chat.turn()}/steps",
                            data=iter([body]), timeout=30,
                            headers={"Content-Type": LEAN, "Authorization": f"Bearer {chat.token}"})
    assert chunked.status_code == 200 and chunked.json()["results"][0]["output"]


@pytest.mark.parametrize("environ, served_here", [
    ({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "12"}, True),
    ({"CONTENT_TYPE": "Application/JSON; charset=utf-8", "CONTENT_LENGTH": "12"}, True),
    ({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "²"}, False),
    ({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "+12"}, False),
    ({"CONTENT_TYPE": "application/json"}, False),
    ({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "12", "HTTP_TRANSFER_ENCODING": "chunked"}, False),
    ({"CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": "12"}, False),
    ({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "101"}, False),
], ids=["plain", "type-with-charset", "superscript-digit", "signed", "no-length", "chunked", "not-json", "over-bound"])
def test_only_a_plain_head_is_answered_ahead_of_flask(environ, served_here):
    length = step_route._plain_length(environ, bound=100)
    assert (length is not None) is served_here
    assert length in (None, 12)


#: Every request hook of the app that applies to the step's endpoint (app-wide, or the conversations blueprint's), by
#: kind: the plain path does each one's work itself (the request id, the log line and metric sample, the work gate,
#: the connection given back). A hook added to the app fails here until the plain path does its work too, and is
#: then added to this list.
HOOKS_THE_PLAIN_PATH_DOES = {
    "before_request_funcs": ["install_observability.<locals>._begin", "install_admission.<locals>._admit"],
    "after_request_funcs": ["install_observability.<locals>._answer"],
    "teardown_request_funcs": ["install_observability.<locals>._end", "install_admission.<locals>._give_back"],
    "url_value_preprocessors": [],
}
#: The exceptions the app answers in the one shape, which the plain path answers with the same `error_for`.
ERRORS_THE_PLAIN_PATH_ANSWERS = {"ServiceError", "IntegrityError", "OperationalError", "InterfaceError",
                                 "MaxConnectionsExceeded", "DatabaseTimeout", "RequestEntityTooLarge", "HTTPException"}
#: The WSGI layers a request passes, outermost first: every request's server span while tracing (service.tracing)
#: around all of them, and the plain paths (a project server's tools/call's, mcp/project_plain.py, and the step's)
#: between the body's arrival and admission.
WSGI_LAYERS = ["traced_wsgi.<locals>.serve", "with_arrival.<locals>.arriving", "install_project_route.<locals>.serve",
               "install_step_route.<locals>.serve", "install_admission.<locals>.gated", "Flask.wsgi_app"]


def test_the_plain_path_does_the_work_of_every_hook_the_app_has(service):
    from tests.support.databases import app_for

    app = app_for(service.config)
    endpoint_blueprints = (None, "conversations")
    for kind, expected in HOOKS_THE_PLAIN_PATH_DOES.items():
        found = [f.__qualname__ for blueprint in endpoint_blueprints for f in getattr(app, kind).get(blueprint, [])]
        assert sorted(found) == sorted(expected), f"{kind}: a hook the plain step path (step_route.py) skips"
    answered = {kind.__name__ for blueprint in endpoint_blueprints
                for by_code in app.error_handler_spec.get(blueprint, {}).values() for kind in by_code}
    assert "ServiceError" in answered and answered <= ERRORS_THE_PLAIN_PATH_ANSWERS, \
        "an error handler the plain step path does not apply"
    layers, layer = [], app.wsgi_app
    while layer is not None:
        layers.append(layer.__qualname__)
        cells = dict(zip(layer.__code__.co_freevars, layer.__closure__ or ())) if hasattr(layer, "__code__") else {}
        layer = next((cell.cell_contents for name, cell in cells.items() if name in ("inner", "flask_app")), None)
    assert layers == WSGI_LAYERS
