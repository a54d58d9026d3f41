"""Request building: strict arguments, the session's subject, and URLs whose shape no value can change."""
import json
import math
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import requests

from service.definition import Parameter, ToolDefinition
from service.dispatch import DefinitionError, InvalidArguments, build_request, compile_definition
from service.limits import MAX_ARRAY_ARGUMENT_ITEMS, MAX_BODY_BYTES, MAX_STRING_ARGUMENT_CHARS, MAX_URL_CHARS

ORDERS = ToolDefinition(
    name="get_order",
    description="One order of the signed-in customer.",
    method="GET",
    url="https://api.example.com:8443/users/{subject}/orders/{orderId}?v=2",
    scope="per_user",
    parameters=(
        Parameter("subject", "string", "path"),
        Parameter("orderId", "string", "path"),
        Parameter("q", "string", "query", required=False),
        Parameter("limit", "number", "query", required=False),
        Parameter("open", "boolean", "query", required=False),
    ),
)

UPDATE = ToolDefinition(
    name="update_cart",
    description="Replace the cart.",
    method="POST",
    url="https://api.example.com/cart",
    parameters=(
        Parameter("items", "array", "body", element_type="string"),
        Parameter("quantities", "array", "body", required=False, element_type="number"),
        Parameter("gift", "boolean", "body", required=False),
        Parameter("note", "string", "body", required=False),
        Parameter("extra", "object", "body", required=False),
    ),
)

HOSTILE = [
    "../admin", "..", "a/b?c#d", "x\r\nHost: evil.example", " spaced out ", "%2e%2e", "%2F",
    "@evil.example", "\\..\\admin", "日本語/ü", "a/" * 2_000, "?", "#", "&x=y", ";jsessionid=1",
]


def shape(url: str):
    parts = urlsplit(url)
    return parts.scheme, parts.netloc, parts.path.count("/"), sorted(parse_qs(parts.query, keep_blank_values=True))


def build_orders(order_id, **more):
    return build_request(ORDERS, {"orderId": order_id, **more}, "user-1")


def label(value: object) -> str:
    return repr(value)[:30]


@pytest.mark.parametrize("value", [v for v in HOSTILE if v != ".."], ids=label)
def test_a_hostile_path_value_stays_one_segment(value):
    url = build_orders(value).url
    expected = ("https", "api.example.com:8443", 4, ["v"])
    assert shape(url) == expected
    # What requests actually puts on the wire keeps the same shape too.
    assert shape(requests.Request("GET", url).prepare().url) == expected
    assert unquote(urlsplit(url).path.split("/")[-1]) == value


@pytest.mark.parametrize("value", HOSTILE, ids=label)
def test_a_hostile_query_value_adds_no_query_key(value):
    url = build_orders("1", q=value).url
    assert shape(url) == ("https", "api.example.com:8443", 4, ["q", "v"])
    assert shape(requests.Request("GET", url).prepare().url)[3] == ["q", "v"]
    assert parse_qs(urlsplit(url).query, keep_blank_values=True)["q"] == [value]


def test_every_reserved_character_and_control_is_percent_encoded_in_a_path():
    url = build_orders("a/b?c#d%e f\r\n:@!$&'()*+,;=[]").url
    assert url.endswith("/orders/a%2Fb%3Fc%23d%25e%20f%0D%0A%3A%40%21%24%26%27%28%29%2A%2B%2C%3B%3D%5B%5D?v=2")


@pytest.mark.parametrize("value", ["", ".", ".."])
def test_empty_and_dot_path_values_are_invalid_arguments(value):
    with pytest.raises(InvalidArguments) as refused:
        build_orders(value)
    assert refused.value.problems == ["orderId: a path value cannot be empty, '.' or '..'"]


def test_numbers_and_booleans_are_rendered_as_json_writes_them():
    assert build_orders("7", limit=3, open=False).url.endswith("?v=2&limit=3&open=false")
    assert build_orders("7", limit=1.5, open=True).url.endswith("?v=2&limit=1.5&open=true")


def test_the_session_subject_fills_the_path_and_any_model_subject_is_ignored():
    arguments = {"orderId": "9", "subject": "victim", "Subject": "victim", "SUBJECT": "victim", "ſubject": "x"}
    url = build_request(ORDERS, arguments, "alice@example.com").url
    assert url == "https://api.example.com:8443/users/alice%40example.com/orders/9?v=2"
    assert "victim" not in url


def test_the_subject_goes_wherever_the_definition_puts_it():
    in_body = ToolDefinition("who", "d", "POST", "https://api.example.com/me", scope="per_user",
                             parameters=(Parameter("subject", "string", "body"), Parameter("n", "number", "body")))
    built = build_request(in_body, {"n": 1, "subject": "mallory"}, "alice")
    assert json.loads(built.body) == {"subject": "alice", "n": 1}
    in_query = ToolDefinition("who2", "d", "GET", "https://api.example.com/me", scope="per_user",
                              parameters=(Parameter("subject", "string", "query"),))
    assert build_request(in_query, {"SUBJECT": "mallory"}, "a b").url == "https://api.example.com/me?subject=a%20b"


def test_the_model_never_sees_the_subject_parameter():
    assert "subject" not in compile_definition(ORDERS).parameters


def test_a_per_user_tool_built_without_the_session_subject_is_a_caller_error():
    with pytest.raises(ValueError):
        build_request(ORDERS, {"orderId": "1"}, None)


def test_a_dot_subject_from_the_session_is_refused_too():
    with pytest.raises(InvalidArguments):
        build_request(ORDERS, {"orderId": "1"}, "..")


def test_a_body_is_one_json_object_of_only_the_keys_given():
    built = build_request(UPDATE, {"items": ["a", "é"], "gift": False}, None)
    assert built.method == "POST" and built.url == "https://api.example.com/cart"
    assert built.headers == {"Content-Type": "application/json"}
    assert built.body == '{"items":["a","é"],"gift":false}'.encode("utf-8")


def test_a_tool_without_body_parameters_sends_no_body():
    built = build_orders("1")
    assert built.body is None and built.headers == {}


def test_null_means_not_given():
    assert build_orders("1", q=None).url.endswith("?v=2")
    with pytest.raises(InvalidArguments) as refused:
        build_orders(None)
    assert refused.value.problems == ["orderId: required"]


WRONG_TYPES = [
    ("open", "true", "expected boolean, got string"),
    ("open", 1, "expected boolean, got number"),
    ("limit", True, "expected number, got boolean"),
    ("limit", "3", "expected number, got string"),
    ("limit", math.nan, "not a finite number"),
    ("limit", math.inf, "not a finite number"),
    ("limit", json.loads("1e400"), "not a finite number"),
    ("limit", 10 ** 400, "not a finite number"),
    ("q", 5, "expected string, got number"),
    ("q", ["a"], "expected string, got array"),
    ("q", "\ud800", "contains an unpaired surrogate, which is not text"),
    ("q", "x" * (MAX_STRING_ARGUMENT_CHARS + 1), f"longer than {MAX_STRING_ARGUMENT_CHARS} characters"),
]


@pytest.mark.parametrize("name, value, reason", WRONG_TYPES, ids=label)
def test_a_value_of_the_wrong_type_or_size_is_refused(name, value, reason):
    with pytest.raises(InvalidArguments) as refused:
        build_orders("1", **{name: value})
    assert refused.value.problems == [f"{name}: {reason}"]


WRONG_BODIES = [
    ({"items": "a"}, "items: expected array, got string"),
    ({"items": [1]}, "items: item 0: expected string, got number"),
    ({"items": ["a"], "quantities": [1, True]}, "quantities: item 1: expected number, got boolean"),
    ({"items": ["a"], "quantities": [math.nan]}, "quantities: item 0: not a finite number"),
    ({"items": [["nested"]]}, "items: item 0: expected string, got array"),
    ({"items": ["a"] * (MAX_ARRAY_ARGUMENT_ITEMS + 1)}, f"items: more than {MAX_ARRAY_ARGUMENT_ITEMS} items"),
    ({"items": [], "extra": []}, "extra: expected object, got array"),
    ({"items": [], "extra": {"x": math.nan}}, "extra: not representable as JSON (NaN, infinity, "
                                              "unpaired surrogate or too deeply nested)"),
    ({"items": [], "extra": {"x": "y" * MAX_BODY_BYTES}}, f"extra: larger than {MAX_BODY_BYTES} bytes as JSON"),
    ({"items": [], "secret": 1}, "secret: not a parameter of this tool"),
    ({"gift": True}, "items: required"),
]


@pytest.mark.parametrize("arguments, problem", WRONG_BODIES, ids=label)
def test_a_body_argument_that_does_not_fit_is_refused(arguments, problem):
    with pytest.raises(InvalidArguments) as refused:
        build_request(UPDATE, arguments, None)
    assert refused.value.problems == [problem]


def test_every_problem_is_reported_at_once():
    with pytest.raises(InvalidArguments) as refused:
        build_request(UPDATE, {"items": 1, "gift": "yes", "bogus": 0}, None)
    assert refused.value.problems == [
        "items: expected array, got number", "gift: expected boolean, got string", "bogus: not a parameter of this tool",
    ]


def test_arguments_that_are_not_an_object_are_refused():
    with pytest.raises(InvalidArguments) as refused:
        build_request(UPDATE, ["items"], None)
    assert refused.value.problems == ["arguments: expected object, got array"]


def test_the_whole_body_and_url_are_bounded():
    note = "n" * MAX_STRING_ARGUMENT_CHARS
    extra = {f"k{i}": note for i in range(MAX_BODY_BYTES // MAX_STRING_ARGUMENT_CHARS - 1)}
    with pytest.raises(InvalidArguments) as refused:
        build_request(UPDATE, {"items": [note] * 2, "note": note, "extra": extra}, None)
    assert refused.value.problems == [f"body: larger than {MAX_BODY_BYTES} bytes"]
    with pytest.raises(InvalidArguments) as refused:
        build_orders("1", q="/" * (MAX_URL_CHARS // 3 + 1))
    assert refused.value.problems == [f"url: longer than {MAX_URL_CHARS} characters once built"]


def test_a_ten_kilobyte_value_fits_a_body_but_not_a_url():
    value = "v" * 10_240
    assert build_request(UPDATE, {"items": [value]}, None).body == b'{"items":["%s"]}' % value.encode()
    with pytest.raises(InvalidArguments):
        build_orders(value)


def test_a_compiled_tool_builds_the_same_request_as_its_definition():
    compiled = compile_definition(ORDERS)
    assert build_request(compiled, {"orderId": "1", "q": "x"}, "u") == build_request(ORDERS, {"orderId": "1", "q": "x"}, "u")


UNSAFE_DEFINITIONS = [
    ("https://{tenant}.example.com/x", (), "a {placeholder} may sit only in the URL path"),
    ("https://user:pw@api.example.com/x", (), "the tool URL may not carry credentials"),
    ("ftp://api.example.com/x", (), "the tool URL must be an absolute http or https URL"),
    ("/relative/{id}", (Parameter("id", "string", "path"),), "the tool URL must be an absolute http or https URL"),
    ("https://api.example.com/{id}", (), "the placeholder {id} has no path parameter"),
    ("https://api.example.com/x", (Parameter("id", "string", "path"),), "the path parameter 'id' has no placeholder"),
    ("https://api.example.com/a/../{id}", (Parameter("id", "string", "path"),),
     "the URL path may not contain '.' or '..' segments"),
    ("https://api.example.com/x", (Parameter("Subject", "string", "query"),),
     "the parameter 'Subject' could be mistaken for the subject"),
    ("https://api.example.com/x", (Parameter("tags", "array", "query", element_type="string"),),
     "the parameter 'tags' cannot ride in the query"),
    ("https://api.example.com/x?v=2", (Parameter("v", "string", "query"),),
     "the query parameter 'v' is already fixed in the URL"),
    ("https://api.example.com/x", (Parameter("b", "string", "body"),), "a GET request cannot carry a body parameter"),
    ("https://api.example.com:99999/x", (), "the tool URL has a bad port: Port out of range 0-65535"),
]


@pytest.mark.parametrize("url, parameters, message", UNSAFE_DEFINITIONS)
def test_a_definition_that_cannot_be_built_safely_is_refused_at_compile_time(url, parameters, message):
    with pytest.raises(DefinitionError) as refused:
        compile_definition(ToolDefinition("t", "d", "GET", url, parameters=parameters))
    assert str(refused.value) == message
