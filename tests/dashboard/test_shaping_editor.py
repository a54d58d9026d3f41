"""The editor's part on what the model sees: the three fields saved and shown again, their violations next to their
inputs, and *Try it*, which shapes a pasted sample before anything is saved."""
import json

import pytest

from tests.dashboard.test_editor import VALID, register

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

SHAPE = "orders[*].{id: id, status: status}"
SAMPLE = json.dumps({"orders": [{"id": "o-1", "status": "open", "address": {"city": "London"}},
                                {"id": "o-2", "status": "shipped", "address": {"city": "Leeds"}}]})


def editor_form(**fields):
    return {"op": "save", **VALID, "scope": "shared", **fields}


def draft(service, name):
    return service.api("GET", f"/v1/tools/{name}").json()["draft"]["definition"]


def test_the_three_fields_are_saved_and_shown_again(service, admin):
    assert register(admin, "shaped_save").status == 200
    page = admin.post("/tools/shaped_save/draft", editor_form(
        response_shape=SHAPE, error_fields="code, message",
        outcome_messages="refused:404 = There is no such order.\n\nempty = There are no orders.\n"))
    assert page.url.endswith("/tools/shaped_save/draft"), page.errors()
    saved = draft(service, "shaped_save")
    assert (saved["response_shape"], saved["error_fields"], saved["outcome_messages"]) == (
        SHAPE, ["code", "message"], {"refused:404": "There is no such order.", "empty": "There are no orders."})
    shown = admin.get("/tools/shaped_save/draft").text
    assert 'value="code, message"' in shown
    assert "empty = There are no orders.\nrefused:404 = There is no such order.</textarea>" in shown  # stored sorted
    assert "orders[*].{id: id, status: status}</textarea>" in shown


def test_a_tool_that_sets_none_saves_none(service, admin):
    assert register(admin, "shaped_none").status == 200
    admin.post("/tools/shaped_none/draft", editor_form())
    assert not {"response_shape", "error_fields", "outcome_messages"} & set(draft(service, "shaped_none"))


def test_each_violation_stands_next_to_its_input_naming_the_item(service, admin):
    assert register(admin, "shaped_bad").status == 200
    page = admin.post("/tools/shaped_bad/draft", editor_form(
        response_shape="orders[*].{id: id", error_fields="code error.code",
        outcome_messages="refused:404 = Fine.\nnot-a-kind = Something happened.\nno equals sign"))
    assert page.status == 422
    assert page.errors() == {
        "f-response_shape": "Error: A response shape must be a JMESPath expression that parses, such as "
                            "orders[*].{id: id, status: status}.",
        "f-error_fields": "Error: error.code: An error field names one top-level field of the error body: letters, "
                          "digits, underscores, and hyphens, not starting with a digit or a hyphen.",
        "f-outcome_messages": "Error: not-a-kind: An outcome is a failure kind, such as refused, or a kind and a "
                              "status, such as refused:404; empty names a successful answer with no body."
                              "Error: no equals sign: An outcome is a failure kind, such as refused, or a kind and "
                              "a status, such as refused:404; empty names a successful answer with no body."}
    assert "response_shape" not in draft(service, "shaped_bad")  # nothing saved


def test_try_it_shows_what_the_model_would_get_and_saves_nothing(service, admin):
    assert register(admin, "shaped_try").status == 200
    page = admin.post("/tools/shaped_try/draft", editor_form(op="try-shape", response_shape=SHAPE,
                                                             shape_sample=SAMPLE))
    assert page.status == 200
    output = '[{"id":"o-1","status":"open"},{"id":"o-2","status":"shipped"}]'
    assert page.text_of("shape-preview") == f"The model would get {len(output)} of 16,384 characters: {output}"
    assert "London" not in page.text_of("shape-preview")
    assert 'data-dirty="true"' in page.text  # the typed shape is unsaved work, kept on the page
    assert "response_shape" not in draft(service, "shaped_try")


@pytest.mark.parametrize(("shape", "sample", "expected"), [
    (SHAPE, "<html>not json</html>", "The model would get the failure shape-failed: the body is not JSON."),
    ("abs(name)", '{"name": "Ada"}',
     "The model would get the failure shape-failed: the shape does not apply to this body: JMESPathTypeError."),
    ("[*]", json.dumps(["x" * 100] * 200),
     "The model would get the failure response-too-big: the shaped result is more than 16,384 characters."),
    ("orders[*", "{}", "A response shape must be a JMESPath expression that parses, such as "
                      "orders[*].{id: id, status: status}."),
    ("", "{}", "Write a response shape first: without one the model gets the answer as it came."),
])
def test_try_it_names_the_failure_the_model_would_get(service, admin, shape, sample, expected):
    name = f"shaped_try_{abs(hash(shape)) % 10_000}"
    assert register(admin, name).status == 200
    page = admin.post(f"/tools/{name}/draft", editor_form(op="try-shape", response_shape=shape, shape_sample=sample))
    assert page.text_of("shape-preview") == expected
