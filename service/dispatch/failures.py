"""The coarse failure kinds a model sees when a call does not succeed, each named once.

The six kinds and the object's shape are the spec's ("What comes back to the model"); the seventh,
`invalid-arguments`, is the contract's: arguments that do not fit the declared parameters, so
nothing is called. The eighth, `declined`, is a call of a tool that requires approval which the
person declined (issue 19): nothing is called either. The ninth, `shape-failed`, is a tool's own response shape
failing on a 2xx answer (issue 39, docs/shaping.md): the body was not JSON, or the expression could not be applied to
it; like every kind, it carries the status and never the body.
"""
from __future__ import annotations

REFUSED = "refused"
RETURNED_NOTHING = "returned-nothing"
RESPONSE_TOO_BIG = "response-too-big"
TIMED_OUT = "timed-out"
TRANSPORT_ERROR = "transport-error"
UNKNOWN_TOOL = "unknown-tool"
INVALID_ARGUMENTS = "invalid-arguments"
DECLINED = "declined"
SHAPE_FAILED = "shape-failed"

FAILURE_KINDS = (
    REFUSED,
    RETURNED_NOTHING,
    RESPONSE_TOO_BIG,
    TIMED_OUT,
    TRANSPORT_ERROR,
    UNKNOWN_TOOL,
    INVALID_ARGUMENTS,
    DECLINED,
    SHAPE_FAILED,
)

#: The kinds that carry the endpoint's status, and so may be worded per status (`refused:404`) by a tool's
#: outcome messages; `empty` is no failure, but a 2xx with an empty body, which a tool may word as well.
KINDS_WITH_STATUS = (REFUSED, RETURNED_NOTHING, RESPONSE_TOO_BIG, SHAPE_FAILED)
EMPTY = "empty"
#: What a tool's outcome messages may name: every kind a call of a known tool can end in, and `empty`.
WORDABLE_OUTCOMES = tuple(k for k in FAILURE_KINDS if k != UNKNOWN_TOOL) + (EMPTY,)


def failure_object(kind: str, http_code: int | None = None) -> dict[str, object]:
    """The small fixed object the model receives for a failed call.

    `httpCode` is present only when the endpoint answered with a status; it is absent on
    timeouts, transport errors, unknown tools, invalid arguments and declined calls. A tool that shapes what the
    model sees adds `details` and `message` to it (CallOutcome.to_result); one that does not, never.
    """
    if kind not in FAILURE_KINDS:
        raise ValueError(f"not a failure kind: {kind!r}")
    failure: dict[str, object] = {"status": "error", "kind": kind}
    if http_code is not None:
        failure["httpCode"] = http_code
    return failure
