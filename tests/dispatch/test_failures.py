"""The failure kinds and the object the model sees: exactly the spec's words and shape."""
import pytest

from service.dispatch import FAILURE_KINDS, failure_object
from service.dispatch.transport import CallOutcome


def test_the_kinds_are_the_specs_six_plus_invalid_arguments_declined_and_shape_failed():
    assert FAILURE_KINDS == (
        "refused", "returned-nothing", "response-too-big", "timed-out",
        "transport-error", "unknown-tool", "invalid-arguments", "declined", "shape-failed",
    )


@pytest.mark.parametrize("kind", ["refused", "returned-nothing", "response-too-big", "shape-failed"])
def test_kinds_where_the_endpoint_answered_carry_its_status(kind):
    assert failure_object(kind, 404) == {"status": "error", "kind": kind, "httpCode": 404}


@pytest.mark.parametrize("kind", ["timed-out", "transport-error", "unknown-tool", "invalid-arguments", "declined"])
def test_kinds_without_an_answer_have_no_http_code(kind):
    assert failure_object(kind) == {"status": "error", "kind": kind}


def test_an_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        failure_object("exploded")


def test_an_outcome_shows_the_model_its_output_or_only_the_failure_object():
    assert CallOutcome(None, 200, output="", size_chars=0).to_result() == {"output": ""}
    failed = CallOutcome("refused", 500, detail="stack trace here")
    assert failed.to_result() == {"error": {"status": "error", "kind": "refused", "httpCode": 500}}
    assert not failed.succeeded and CallOutcome(None, 204, output="").succeeded
