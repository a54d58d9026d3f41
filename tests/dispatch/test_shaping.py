"""Shaping what the model sees (issue 39), on a real server on 127.0.0.1: a response shape, error fields and outcome
messages reach the model as the definition says, and a tool that sets none is judged exactly as before."""
from __future__ import annotations

import json
import zlib

import pytest
from gevent.pywsgi import WSGIServer

from service.definition import Parameter, ToolDefinition
from service.dispatch import call_tool, compile_definition
from service.dispatch.shaping import ShapeFailed, compile_shape, shape
from service.limits import ERROR_FIELD_VALUE_CHARS, RESPONSE_CAP_CHARS

#: A list of orders of about 40 KB: every address and line item, where the model wants five fields.
ORDERS = {"orders": [
    {"id": f"o-{i}", "status": "shipped" if i % 2 else "open", "total": 12.5 + i, "placed_at": "2026-11-30",
     "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
     "address": {"street": "12 Analytical Row", "city": "London", "postcode": "NW1 2AB", "country": "GB"},
     "lines": [{"sku": f"sku-{i}-{n}", "name": "Oat milk, barista edition", "quantity": 2, "price": 2.75}
               for n in range(3)]}
    for i in range(80)]}
ORDERS_BODY = json.dumps(ORDERS, indent=1).encode()
SHAPE = "orders[*].{id: id, status: status}"

#: path → (status, content type, body, content encoding)
ROUTES: dict[str, tuple[int, str, bytes, str | None]] = {
    "/orders": (200, "application/json", ORDERS_BODY, None),
    "/orders-gzip": (200, "application/json", zlib.compress(ORDERS_BODY, wbits=31), "gzip"),
    "/bomb": (200, "application/json", zlib.compress(b"[" + b"0," * 4_000_000 + b"0]", wbits=31), "gzip"),
    "/missing": (404, "application/json",
                 json.dumps({"code": "no_such_order", "message": "Order o-9 does not exist.",
                             "trace": "Traceback (most recent call last): secret.py line 12"}).encode(), None),
    "/odd-error": (422, "application/json",
                   json.dumps({"code": 42, "message": "x" * 1000, "ok": True, "nested": {"a": 1},
                               "none": None}).encode(), None),
    "/html-error": (500, "text/html", b"<h1>Internal error</h1>", None),
    "/empty-error": (503, "application/json", b"", None),
    "/html": (200, "text/html", b"<html>not json</html>", None),
    "/empty": (204, "application/json", b"", None),
    "/name": (200, "application/json", b'{"name": "Ada"}', None),
}


def _app(environ, start_response):
    status, content_type, body, encoding = ROUTES[environ["PATH_INFO"]]
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body)))]
    if encoding:
        headers.append(("Content-Encoding", encoding))
    start_response(f"{status} X", headers)
    return [body]


@pytest.fixture(scope="module")
def server():
    """A small JSON API on 127.0.0.1, answering each path as ROUTES says."""
    wsgi = WSGIServer(("127.0.0.1", 0), _app, log=None)
    wsgi.start()
    yield f"http://127.0.0.1:{wsgi.server_port}"
    wsgi.stop(timeout=1)


def tool(url: str, **shaping) -> object:
    return compile_definition(ToolDefinition(
        "get_orders", "The customer's orders.", "GET", url, parameters=(Parameter("q", "string", "query",
                                                                                  required=False),),
        **shaping))


def call(server, path, guard, arguments=None, **shaping):
    return call_tool(tool(server + path, **shaping), arguments or {}, subject=None, guard=guard,
                     sign=lambda: "header.claims.signature")


def test_a_40_kb_answer_shaped_to_a_few_fields_reaches_the_model_as_they_are(server, loopback_guard):
    assert len(ORDERS_BODY) > 40_000
    outcome = call(server, "/orders", loopback_guard, response_shape=SHAPE)
    wanted = [{"id": o["id"], "status": o["status"]} for o in ORDERS["orders"]]
    assert outcome.to_result() == {"output": json.dumps(wanted, separators=(",", ":"))}
    assert (outcome.size_chars, outcome.raw_bytes) == (len(outcome.output), len(ORDERS_BODY))


def test_the_same_tool_without_a_shape_fails_response_too_big(server, loopback_guard):
    outcome = call(server, "/orders", loopback_guard)
    assert outcome.to_result() == {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}
    assert outcome.raw_bytes is None


def test_a_compressed_body_is_shaped_once_decoded(server, loopback_guard):
    outcome = call(server, "/orders-gzip", loopback_guard, response_shape="length(orders)")
    assert (outcome.output, outcome.raw_bytes) == ("80", len(ORDERS_BODY))


def test_a_bomb_past_the_shaped_bytes_is_cut_off_as_response_too_big(server, loopback_guard):
    outcome = call_tool(tool(server + "/bomb", response_shape="length(@)"), {}, subject=None, guard=loopback_guard,
                        sign=lambda: "s", shaped_bytes=1_048_576)
    assert (outcome.kind, outcome.http_code) == ("response-too-big", 200)


def test_a_shaped_result_past_the_cap_is_response_too_big(server, loopback_guard):
    outcome = call(server, "/orders", loopback_guard, response_shape="orders[*].lines")
    assert outcome.to_result() == {"error": {"status": "error", "kind": "response-too-big", "httpCode": 200}}
    assert outcome.raw_bytes == len(ORDERS_BODY)


def test_a_shape_on_a_body_that_is_not_json_fails_shape_failed_with_its_status(server, loopback_guard):
    outcome = call(server, "/html", loopback_guard, response_shape="name")
    assert outcome.to_result() == {"error": {"status": "error", "kind": "shape-failed", "httpCode": 200}}
    assert "html" not in json.dumps(outcome.to_result())


def test_an_expression_failing_on_the_body_is_shape_failed(server, loopback_guard):
    outcome = call(server, "/name", loopback_guard, response_shape="abs(name)")  # abs of a string: a type error
    assert (outcome.kind, outcome.http_code, outcome.output) == ("shape-failed", 200, None)


def test_an_empty_2xx_stays_an_empty_result_under_a_shape(server, loopback_guard):
    outcome = call(server, "/empty", loopback_guard, response_shape="name")
    assert outcome.to_result() == {"output": ""}


def test_error_fields_give_the_model_those_fields_and_never_the_rest(server, loopback_guard):
    outcome = call(server, "/missing", loopback_guard, error_fields=("code", "message"))
    assert outcome.to_result() == {"error": {
        "status": "error", "kind": "refused", "httpCode": 404,
        "details": {"code": "no_such_order", "message": "Order o-9 does not exist."}}}
    assert "trace" not in json.dumps(outcome.to_result())


def test_error_fields_keep_strings_and_numbers_only_each_cut_to_the_bound(server, loopback_guard):
    outcome = call(server, "/odd-error", loopback_guard, error_fields=("code", "message", "ok", "nested", "none"))
    assert outcome.to_result()["error"]["details"] == {"code": 42, "message": "x" * ERROR_FIELD_VALUE_CHARS}


@pytest.mark.parametrize(("path", "kind"), [("/html-error", "refused"), ("/empty-error", "returned-nothing")])
def test_an_error_body_that_is_not_json_gives_no_details(server, loopback_guard, path, kind):
    outcome = call(server, path, loopback_guard, error_fields=("code",))
    assert outcome.to_result() == {"error": {"status": "error", "kind": kind, "httpCode": int(ROUTES[path][0])}}


MESSAGES = (("refused:404", "There is no such order."), ("refused", "The order service refused."),
            ("shape-failed", "The order service answered in a form the assistant cannot read."),
            ("invalid-arguments", "Ask for orders by a search term."), ("empty", "There are no orders."))


@pytest.mark.parametrize(("path", "shaping", "expected"), [
    ("/missing", {}, {"error": {"status": "error", "kind": "refused", "httpCode": 404,
                                "message": "There is no such order."}}),
    ("/html-error", {}, {"error": {"status": "error", "kind": "refused", "httpCode": 500,
                                   "message": "The order service refused."}}),
    ("/html", {"response_shape": "name"}, {"error": {
        "status": "error", "kind": "shape-failed", "httpCode": 200,
        "message": "The order service answered in a form the assistant cannot read."}}),
    ("/empty", {}, {"output": "There are no orders."}),
    ("/empty-error", {}, {"error": {"status": "error", "kind": "returned-nothing", "httpCode": 503}}),
    ("/missing", {"error_fields": ("code",)}, {"error": {"status": "error", "kind": "refused", "httpCode": 404,
                                                         "details": {"code": "no_such_order"},
                                                         "message": "There is no such order."}}),
])
def test_outcome_messages_reach_the_model(server, loopback_guard, path, shaping, expected):
    assert call(server, path, loopback_guard, outcome_messages=MESSAGES, **shaping).to_result() == expected


def test_invalid_arguments_are_worded_too_and_nothing_is_sent(server, loopback_guard):
    outcome = call(server, "/orders", loopback_guard, {"q": 5}, outcome_messages=MESSAGES)
    assert outcome.to_result() == {"error": {"status": "error", "kind": "invalid-arguments",
                                             "message": "Ask for orders by a search term."}}


@pytest.mark.parametrize("path", ["/orders", "/missing", "/html-error", "/empty-error", "/html", "/empty", "/name"])
def test_a_tool_that_sets_nothing_is_judged_as_the_spec_says(server, loopback_guard, path):
    compiled = tool(server + path)
    assert compiled.shaping is None
    outcome = call(server, path, loopback_guard)
    status, _, body, _ = ROUTES[path]
    if not 200 <= status < 300:
        assert outcome.to_result() == {"error": {"status": "error", "kind": "refused" if body else "returned-nothing",
                                                 "httpCode": status}}
    elif len(body) > RESPONSE_CAP_CHARS:
        assert outcome.kind == "response-too-big"
    else:
        assert outcome.to_result() == {"output": body.decode()}
    assert (outcome.raw_bytes, outcome.details, outcome.message) == (None, None, None)


def test_a_value_repeated_by_the_expression_is_cut_off_before_it_is_written():
    expression = compile_shape("[" + ",".join(["[@,@,@,@]"] * 8) + "]")
    deep = compile_shape("[[[[[[[[[@,@],[@,@]],[@,@]],[@,@]],[@,@]],[@,@]],[@,@]],[@,@]],[@,@]]")
    body = json.dumps(["y" * 1000] * 1000)  # about a megabyte, repeated 32 (then 512) times by reference
    assert shape(expression, body) is None
    assert shape(deep, body) is None


def test_big_integers_pass_through_a_shape_exactly():
    assert shape(compile_shape("n"), '{"n": 123456789012345678901234567890}') == "123456789012345678901234567890"


@pytest.mark.parametrize("body", ["", "NaN", "{", b"\xff\xfe"])
def test_what_is_not_json_fails_to_shape(body):
    with pytest.raises(ShapeFailed):
        shape(compile_shape("@"), body)
