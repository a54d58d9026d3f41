"""What the playground shows of a call: the assertion the platform signed, once, and whether the endpoint verified it."""
import base64
import json

from service.dashboard.calls import (
    decode_unverified,
    example_arguments,
    pretty,
    shown_results,
    verified_claims,
)


def _segment(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


TOKEN = f"{_segment({'alg': 'ES256', 'typ': 'JWT'})}.{_segment({'aud': 'get_orders', 'sub': 'alice'})}.c2ln"


def test_a_compact_token_decodes_for_display():
    assert decode_unverified(TOKEN) == {"header": {"alg": "ES256", "typ": "JWT"},
                                        "claims": {"aud": "get_orders", "sub": "alice"}}


def test_what_is_not_a_token_decodes_to_nothing():
    for text in ("", "a.b", "a.b.c.d", "!!!.@@@.x", f"{_segment([1])}.{_segment({})}.x"):
        assert decode_unverified(text) is None


def test_an_echo_answer_gives_the_claims_it_verified():
    assert verified_claims(json.dumps({"headers": {}, "claims": {"sub": "alice"}})) == {"sub": "alice"}


def test_an_answer_that_is_not_an_echo_shows_no_verified_claims():
    for output in (None, "", "plain text", "[1, 2]", json.dumps({"orders": []}), json.dumps({"headers": {}})):
        assert verified_claims(output) is None


def test_results_keep_the_calls_order_with_their_times():
    results = [{"id": "1", "name": "get_orders", "output": '{"a":1}', "latency_ms": 12},
               {"id": "2", "name": "nope", "error": {"status": "error", "kind": "unknown-tool"}, "latency_ms": 0}]
    shown = shown_results(results, [TOKEN, None], [(), ()])
    assert shown[0]["output"] == '{\n  "a": 1\n}' and shown[0]["latency_ms"] == 12 and shown[0]["error"] is None
    assert shown[0]["signed"]["claims"] == {"aud": "get_orders", "sub": "alice"}
    assert json.loads(shown[1]["error"]) == {"status": "error", "kind": "unknown-tool"}
    assert shown[1]["signed"] is None  # nothing was called, so nothing was signed


def test_an_echo_that_verified_the_signed_claims_is_said_to_have_and_differing_claims_are_kept():
    echo = json.dumps({"headers": {}, "claims": {"aud": "get_orders", "sub": "alice"}})
    other = json.dumps({"headers": {}, "claims": {"aud": "get_orders", "sub": "bob"}})
    same, differs = shown_results([{"id": "1", "name": "get_orders", "output": echo, "latency_ms": 1},
                                   {"id": "2", "name": "get_orders", "output": other, "latency_ms": 1}],
                                  [TOKEN, TOKEN], [(), ()])
    assert same["verified_same"] is True and differs["verified_same"] is False
    assert differs["verified"] == {"aud": "get_orders", "sub": "bob"}


def test_the_arguments_that_did_not_fit_are_listed_each_with_what_is_wrong():
    failed = {"id": "1", "name": "get_orders", "error": {"status": "error", "kind": "invalid-arguments"},
              "latency_ms": 0}
    [shown] = shown_results([failed], [None], [(("status", "required"), ("limit", "expected number, got string"))])
    assert shown["problems"] == [{"argument": "status", "problem": "required"},
                                 {"argument": "limit", "problem": "expected number, got string"}]


def test_bodies_are_indented_only_when_they_are_json():
    assert pretty('{"a": [1]}') == '{\n  "a": [\n    1\n  ]\n}'
    assert pretty("not json") == "not json"
    assert pretty(None) == ""


def test_example_arguments_name_each_required_parameter():
    schema = {"properties": {"ids": {"type": "array"}, "q": {"type": "string"}, "n": {"type": "number"}},
              "required": ["ids", "q"]}
    assert json.loads(example_arguments(schema)) == {"ids": [], "q": ""}
