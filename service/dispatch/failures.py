"""The coarse failure kinds a model sees when a call does not succeed, each named once.

The six kinds and the object's shape are the spec's ("What comes back to the model"); the seventh,
`invalid-arguments`, is the contract's: arguments that do not fit the declared parameters, so
nothing is called. The eighth, `declined`, is a call of a tool that requires approval which the
person declined (issue 19): nothing is called either.
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

FAILURE_KINDS = (
    REFUSED,
    RETURNED_NOTHING,
    RESPONSE_TOO_BIG,
    TIMED_OUT,
    TRANSPORT_ERROR,
    UNKNOWN_TOOL,
    INVALID_ARGUMENTS,
    DECLINED,
)


def failure_object(kind: str, http_code: int | None = None) -> dict[str, object]:
    """The small fixed object the model receives for a failed call.

    `httpCode` is present only when the endpoint answered with a status; it is absent on
    timeouts, transport errors, unknown tools, invalid arguments and declined calls.
    """
    if kind not in FAILURE_KINDS:
        raise ValueError(f"not a failure kind: {kind!r}")
    failure: dict[str, object] = {"status": "error", "kind": kind}
    if http_code is not None:
        failure["httpCode"] = http_code
    return failure
