"""`failure/…`: what the model gets back when a call does not succeed, and the boundaries around it.

Each case publishes its own tools, pointed at the mock's misbehaviours, and makes one model step
calling them all; the result of each call must be exactly the spec's small object (or the body as
it came, where the call succeeded). The two cases that wait on the call deadline run side by side
with everything else, so a run waits the deadline out once.
"""
from __future__ import annotations

import json
from typing import Any

from conformance.case import Check, Verdict
from conformance.limits import CALL_DEADLINE_SECONDS, RESPONSE_CAP_CHARS
from conformance.platform.budgets import ABORT_SLACK_SECONDS, IN_TIME_MARGIN_SECONDS, LATE_BY_SECONDS
from conformance.platform.client import PlatformTarget, brief, expect_status, tool
from conformance.platform.suite import SUITE, contract, defining, running, threats

#: A character of two bytes in UTF-8, so the cap is seen to count characters, not bytes.
WIDE_CHAR = "é"
#: A host that never resolves (RFC 6761 reserves .invalid).
UNRESOLVABLE = "http://no-such-host.invalid/conformance"

NOT_FORWARDED = running("Your endpoint’s own response body is never forwarded on a failure")


def error(kind: str, http_code: int | None = None) -> dict[str, Any]:
    """The spec's failure object: httpCode only where the endpoint answered."""
    found: dict[str, Any] = {"status": "error", "kind": kind}
    if http_code is not None:
        found["httpCode"] = http_code
    return found


def publish_and_step(target: PlatformTarget, slug: str, behaviours: dict[str, str],
                     arguments: dict[str, Any] | None = None):
    """Publish one tool per behaviour (a mock path, or a whole URL), call them all in one step.

    Answers (tool names by label, the step's raw reply, its results by label).
    """
    names = {label: target.name(slug, label) for label in behaviours}
    definitions = [tool(names[label], behaviour if "://" in behaviour else target.mock(names[label], behaviour))
                   for label, behaviour in behaviours.items()]
    project = target.project(slug)
    target.publish_project(project, definitions)
    conversation = target.conversation(project)
    calls = [(names[label], (arguments or {}).get(label, {})) for label in behaviours]
    reply = expect_status(conversation.step_reply(conversation.turn(), *calls), 200, "running the step")
    by_id = {r.get("id"): r for r in reply.body.get("results", []) if isinstance(r, dict)}
    return names, reply, {label: by_id.get(str(i), {}) for i, label in enumerate(behaviours)}


def expect_error(check: Check, label: str, result: dict[str, Any], expected: dict[str, Any]) -> None:
    """The result carries exactly `expected` as its error, and no output."""
    check.equal(f"{label}: error", expected, result.get("error"))
    check.expect("output" not in result, f"{label}: output", "none", brief(result))


def expect_quiet(check: Check, label: str, result: dict[str, Any], leaked: str) -> None:
    """Nothing of the endpoint's error body anywhere in the result."""
    check.expect(leaked not in json.dumps(result, ensure_ascii=False), f"{label}: the endpoint's body",
                 "not forwarded", brief(result))


@SUITE.case(
    "failure/refused",
    title="A non-2xx answer with a body is refused, body withheld",
    requirement="A call answered 404 or 500 with a body gives {status: error, kind: refused, httpCode: the "
                "status}, and none of the body reaches the model.",
    spec=(running("Your endpoint answered with a non-2xx status and a body\trefused\tThe status"),
          NOT_FORWARDED),
)
def refused(target: PlatformTarget) -> Verdict:
    _, _, results = publish_and_step(target, "failure_refused", {"404": "status/404", "500": "status/500"})
    check = Check()
    for code in (404, 500):
        expect_error(check, f"HTTP {code} with a body", results[str(code)], error("refused", code))
        expect_quiet(check, f"HTTP {code} with a body", results[str(code)], f"mock status {code}")
    return check.verdict()


@SUITE.case(
    "failure/returned-nothing",
    title="A non-2xx answer with an empty body returned nothing",
    requirement="A call answered 404 or 500 with an empty body gives {status: error, kind: returned-nothing, "
                "httpCode: the status}.",
    spec=running("Your endpoint answered with a non-2xx status and an empty body\treturned-nothing\tThe status"),
)
def returned_nothing(target: PlatformTarget) -> Verdict:
    _, _, results = publish_and_step(target, "failure_nothing",
                                     {"404": "status/404/empty", "500": "status/500/empty"})
    check = Check()
    for code in (404, 500):
        expect_error(check, f"HTTP {code}, empty", results[str(code)], error("returned-nothing", code))
    return check.verdict()


@SUITE.case(
    "failure/response-too-big",
    title=f"A 2xx body of {RESPONSE_CAP_CHARS + 1:,} characters is too big",
    requirement=f"A 200 answer of {RESPONSE_CAP_CHARS + 1:,} characters (two bytes each in UTF-8) gives "
                "{status: error, kind: response-too-big, httpCode: 200}.",
    spec=(running("Over that limit, the response is treated as a failure."),
          running("Your endpoint answered 2xx, but the body was larger than the 16 KB cap\tresponse-too-big\t"
                  "The 2xx status")),
)
def response_too_big(target: PlatformTarget) -> Verdict:
    _, _, results = publish_and_step(
        target, "failure_too_big", {"over": f"chars/{RESPONSE_CAP_CHARS + 1}?char={WIDE_CHAR}"})
    check = Check()
    expect_error(check, f"{RESPONSE_CAP_CHARS + 1:,} characters", results["over"], error("response-too-big", 200))
    return check.verdict()


@SUITE.case(
    "failure/response-at-cap",
    title=f"A 2xx body of exactly {RESPONSE_CAP_CHARS:,} characters passes as-is",
    requirement=f"A 200 answer of exactly {RESPONSE_CAP_CHARS:,} characters (two bytes each in UTF-8) reaches "
                "the model unchanged.",
    spec=(running("Successful responses should stay below 16 KB (16,384 characters)."),
          running("When your endpoint answers successfully, the platform passes the response as-is back to "
                  "the model to continue the turn.")),
)
def response_at_cap(target: PlatformTarget) -> Verdict:
    _, _, results = publish_and_step(
        target, "failure_at_cap", {"cap": f"chars/{RESPONSE_CAP_CHARS}?char={WIDE_CHAR}"})
    result = results["cap"]
    check = Check()
    check.expect("error" not in result, "error", "none", result.get("error"))
    output = result.get("output")
    check.expect(output == WIDE_CHAR * RESPONSE_CAP_CHARS, "output",
                 f"{RESPONSE_CAP_CHARS:,} × {WIDE_CHAR!r}, unchanged",
                 f"{len(output):,} characters" if isinstance(output, str) else repr(output))
    return check.verdict()


@SUITE.case(
    "failure/empty-2xx",
    title="An empty 2xx answer is a valid empty result",
    requirement="A call answered 200 or 204 with an empty body succeeds with an empty output, not an error.",
    spec=running("An empty response with a 2xx status is not a failure: it is a valid empty result, so the "
                 "model just sees nothing there."),
)
def empty_2xx(target: PlatformTarget) -> Verdict:
    _, _, results = publish_and_step(target, "failure_empty", {"200": "status/200/empty",
                                                               "204": "status/204/empty"})
    check = Check()
    for code in ("200", "204"):
        check.equal(f"HTTP {code}, empty: result", {"output": ""},
                    {k: v for k, v in results[code].items() if k in ("output", "error")})
    return check.verdict()


@SUITE.case(
    "failure/timed-out",
    title=f"A call with no answer in {CALL_DEADLINE_SECONDS:g} s is aborted as timed out",
    requirement=f"A call answering {LATE_BY_SECONDS:g} s after the deadline, and one whose body drips a byte "
                "a second, each give {status: error, kind: timed-out} with no httpCode, and the step comes "
                f"back within {CALL_DEADLINE_SECONDS + ABORT_SLACK_SECONDS:g} s.",
    spec=(running("a call that has not answered by then is aborted and treated as a timeout, so a slow tool "
                  "fails rather than stalling the turn"),
          running("Your endpoint did not answer within ten seconds\ttimed-out\tNone"),
          threats("a server sending one byte every half second keeps a \"1 s timeout\" call alive for minutes")),
)
def timed_out(target: PlatformTarget) -> Verdict:
    late = target.deadline + LATE_BY_SECONDS
    _, reply, results = publish_and_step(target, "failure_timed_out",
                                         {"late": f"delay/{late:g}", "drip": "drip?bytes=10000&interval=1"})
    check = Check()
    for label in ("late", "drip"):
        expect_error(check, label, results[label], error("timed-out"))
    check.expect(reply.seconds <= target.deadline + ABORT_SLACK_SECONDS, "the step's time",
                 f"at most {target.deadline + ABORT_SLACK_SECONDS:g} s", f"{reply.seconds:.1f} s")
    return check.verdict()


@SUITE.case(
    "failure/answered-in-time",
    title="A call answering just before the deadline succeeds",
    requirement=f"A call answering {IN_TIME_MARGIN_SECONDS:g} s before the {CALL_DEADLINE_SECONDS:g} s "
                "deadline succeeds with its body as it came.",
    spec=running("Tools should respond within ten seconds"),
)
def answered_in_time(target: PlatformTarget) -> Verdict:
    # Rounded as the path carries it: 2.2 - 1.5 is 0.7000000000000002, which the mock reads back from the path as 0.7.
    slow = round(target.deadline - IN_TIME_MARGIN_SECONDS, 3)
    _, _, results = publish_and_step(target, "failure_in_time", {"slow": f"delay/{slow:g}"})
    result = results["slow"]
    check = Check()
    check.expect("error" not in result, "error", "none", result.get("error"))
    check.equal("output", json.dumps({"slept": slow}, separators=(",", ":")) + "\n", result.get("output"))
    return check.verdict()


@SUITE.case(
    "failure/transport-error",
    title="An endpoint that cannot be reached is a transport error",
    requirement="A connection reset mid-body, a connection closed with no answer, and a host that does not "
                "resolve each give {status: error, kind: transport-error} with no httpCode.",
    spec=running("The platform could not reach your endpoint at all\ttransport-error\tNone"),
)
def transport_error(target: PlatformTarget) -> Verdict:
    behaviours = {"reset": "fault/reset", "closed": "fault/empty-response", "dns": UNRESOLVABLE}
    _, _, results = publish_and_step(target, "failure_transport", behaviours)
    check = Check()
    for label in behaviours:
        expect_error(check, label, results[label], error("transport-error"))
    return check.verdict()


@SUITE.case(
    "failure/unknown-tool",
    title="A tool name that does not exist is unknown, and nothing is called",
    requirement="A call naming a tool the project does not have gives {status: error, kind: unknown-tool} "
                "with no httpCode; the other call of the step still runs.",
    spec=running("The model named a tool that does not exist, so nothing was called\tunknown-tool\tNone"),
)
def unknown_tool(target: PlatformTarget) -> Verdict:
    name, project = target.name("failure_unknown"), target.project("failure-unknown")
    target.publish_project(project, [tool(name, target.mock(name, "echo"))])
    conversation = target.conversation(project)
    invented = target.name("failure_unknown_invented")
    results = conversation.step(conversation.turn(), (invented, {}), (name, {}))
    check = Check()
    expect_error(check, "the invented tool", results[0], error("unknown-tool"))
    check.expect("output" in results[1], "the real tool in the same step", "an output", brief(results[1]))
    check.equal("calls the mock received for the invented name", 0, len(target.calls_to(invented)))
    return check.verdict()


@SUITE.case(
    "failure/invalid-arguments",
    title="Arguments that do not fit are refused before any call",
    requirement="A required argument missing, a string given as a number, an undeclared argument and "
                "arguments that are not an object each give {status: error, kind: invalid-arguments}, and "
                "the endpoint is never called.",
    spec=(contract("plus `invalid-arguments` (arguments that do not fit the declared parameters; nothing is "
                   "called)"),
          defining("Treat those values as untrusted, the same way you would treat anything a user typed.")),
)
def invalid_arguments(target: PlatformTarget) -> Verdict:
    name, project = target.name("failure_invalid"), target.project("failure-invalid")
    parameters = [{"name": "q", "type": "string", "location": "query"},
                  {"name": "max_price", "type": "number", "location": "query", "required": False}]
    target.publish_project(project, [tool(name, target.mock(name, "echo"), parameters=parameters)])
    conversation = target.conversation(project)
    attempts = {"missing q": {}, "q given as a number": {"q": 5}, "an undeclared argument":
                {"q": "tea", "colour": "red"}, "max_price given as text": {"q": "tea", "max_price": "cheap"},
                "arguments that are not an object": "{not json"}
    results = conversation.step(conversation.turn(), *[(name, args) for args in attempts.values()])
    check = Check()
    for label, result in zip(attempts, results):
        expect_error(check, label, result, error("invalid-arguments"))
    check.equal("calls the mock received", 0, len(target.calls_to(name)))
    return check.verdict()


@SUITE.case(
    "failure/redirect-not-followed",
    title="A redirect is refused, not followed",
    requirement="A call answered 302 with a body gives {status: error, kind: refused, httpCode: 302}, and "
                "the redirect's target is never called.",
    spec=(running("Your endpoint answered with a non-2xx status and a body\trefused\tThe status"),
          threats("Redirects are not followed")),
)
def redirect_not_followed(target: PlatformTarget) -> Verdict:
    names, _, results = publish_and_step(target, "failure_redirect", {"302": "redirect?code=302&body=1"})
    check = Check()
    expect_error(check, "HTTP 302 with a body", results["302"], error("refused", 302))
    paths = [call.get("path", "") for call in target.calls_to(names["302"])]
    check.expect(not any("/echo" in path for path in paths), "calls to the redirect's target", "none", paths)
    return check.verdict()
