"""The rules as plain functions: every vector, and the spec's sentences word for word."""
import re

import pytest

from service.catalogue import RULES
from service.registry.rules import check_definition
from tests.registry.vectors import ACCEPTED, REFUSED, as_set
from tests.support.spec import spec_root

SPEC_WORDED_RULES = [
    "name-taken", "duplicate-parameter", "per-user-needs-subject", "subject-must-be-string",
    "session-start-only-subject", "body-needs-body-method", "path-needs-placeholder", "type-location-mismatch",
    "array-needs-element-type", "element-type-only-on-array",
]


@pytest.mark.parametrize("vector", REFUSED, ids=[v["id"] for v in REFUSED])
def test_refused_definition_reports_every_violation(vector):
    definition, found = check_definition(vector["definition"])
    assert definition is None
    assert as_set(v.to_dict() for v in found) == as_set(vector["violations"])


@pytest.mark.parametrize("vector", ACCEPTED, ids=[v["id"] for v in ACCEPTED])
def test_nearest_valid_definition_is_accepted(vector):
    definition, found = check_definition(vector["definition"])
    assert found == []
    assert definition.to_dict()["parameters"] == [
        {"required": True, "description": "", **p} for p in vector["definition"]["parameters"]]


def _spec() -> str:
    return (spec_root() / "spec" / "defining-a-tool.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", SPEC_WORDED_RULES)
def test_message_is_the_spec_sentence_word_for_word(rule):
    failure_modes = _spec().split("Failure modes", 1)[1]
    quoted = re.findall(r"^• “([^”]+)”", failure_modes, re.MULTILINE)
    assert RULES[rule] in quoted


def test_every_spec_failure_mode_has_a_rule():
    failure_modes = _spec().split("Failure modes", 1)[1].split("Versions and drafts", 1)[0]
    quoted = re.findall(r"^• “([^”]+)”", failure_modes, re.MULTILINE)
    assert len(quoted) == 10
    assert set(quoted) == {RULES[r] for r in SPEC_WORDED_RULES}


def test_subject_type_defaults_to_string_when_left_out():
    definition, found = check_definition({
        "name": "get_profile", "description": "The profile.", "method": "GET", "scope": "per_user",
        "url": "https://api.example.com/users/{subject}", "parameters": [{"name": "subject", "location": "path"}]})
    assert found == []
    assert definition.subject_parameter.type == "string"


def test_array_without_location_is_pinned_to_the_body():
    definition, found = check_definition({
        "name": "add", "description": "Adds.", "method": "POST", "url": "https://api.example.com/cart",
        "parameters": [{"name": "ids", "type": "array", "element_type": "string"}]})
    assert found == []
    assert definition.parameters[0].location == "body"


def test_unknown_field_is_named():
    _, found = check_definition({"name": "t", "description": "d", "method": "GET", "url": "https://a.example/x",
                                 "colour": "red"})
    assert [(v.field, v.rule) for v in found] == [("colour", "field-unknown")]


def test_subject_in_another_case_is_refused():
    _, found = check_definition({"name": "t", "description": "d", "method": "GET", "url": "https://a.example/x",
                                 "parameters": [{"name": "Subject", "type": "string", "location": "query"}]})
    assert [(v.field, v.rule) for v in found] == [("parameters[0].name", "subject-spelling")]


def test_placeholder_in_host_is_refused():
    _, found = check_definition({"name": "t", "description": "d", "method": "GET",
                                 "url": "https://{tenant}.example.com/x",
                                 "parameters": [{"name": "tenant", "type": "string", "location": "path"}]})
    assert ("url", "placeholder-outside-path") in [(v.field, v.rule) for v in found]


@pytest.mark.parametrize("url", ["https://a.example/x/../admin", "https://a.example/./x", "https://a.example/x/{id"])
def test_dot_segments_and_unmatched_braces_in_the_url_path_are_refused(url):
    _, found = check_definition({"name": "t", "description": "d", "method": "GET", "url": url})
    assert [(v.field, v.rule) for v in found] == [("url", "url-path-format")]


def test_a_query_parameter_cannot_repeat_a_key_fixed_in_the_url():
    _, found = check_definition({"name": "t", "description": "d", "method": "GET", "url": "https://a.example/x?v=2",
                                 "parameters": [{"name": "v", "type": "string", "location": "query"}]})
    assert [(v.field, v.rule) for v in found] == [("parameters[0].name", "query-key-in-url")]


def test_every_valid_definition_compiles_into_a_request_template():
    """The registry refuses whatever request building would (it calls the dispatcher's compiler last)."""
    from service.dispatch import compile_definition

    for vector in ACCEPTED:
        definition, found = check_definition(vector["definition"])
        assert found == [] and compile_definition(definition).definition == definition


def test_a_session_start_tool_cannot_require_approval():
    data = {"name": "greet", "description": "Greets.", "method": "GET", "url": "https://a.example/x",
            "runs_at_session_start": True, "requires_approval": True}
    _, found = check_definition(data)
    assert [v.to_dict() for v in found] == [{
        "field": "requires_approval", "rule": "session-start-no-approval",
        "message": "A session-start tool cannot require approval: no person is there to approve before the first "
                   "reply."}]
    definition, found = check_definition({**data, "runs_at_session_start": False})
    assert found == [] and definition.requires_approval is True
    assert definition.to_dict()["requires_approval"] is True
    _, found = check_definition({**data, "runs_at_session_start": False, "requires_approval": "yes"})
    assert [(v.field, v.rule) for v in found] == [("requires_approval", "field-type")]
    definition, _ = check_definition({**data, "runs_at_session_start": False, "requires_approval": False})
    assert definition.requires_approval is False
