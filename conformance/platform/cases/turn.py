"""`turn/…`: whole turns, `POST /v1/conversations/{id}/messages`, run by the platform with a model.

The model is the kit's scripted one (conformance/platform/model.py): each case scripts what it
answers, sends the person's message, and reads back every request the platform made to it. So the
case sees what the model was given: the session-start context, labelled and marked authoritative;
the offered tools, without the subject; each call's result as it came, or the small failure object
and never an error body; and the calls of one step run together at the endpoint.
"""
from __future__ import annotations

import json
from typing import Any

from conformance.case import Check, Verdict
from conformance.limits import EXCERPT_CHARS
from conformance.platform.cases.failure import error
from conformance.platform.cases.session_start import starter
from conformance.platform.client import SUBJECT_IN_PATH, PlatformTarget, echoed, tool
from conformance.platform.gathering import expect_met, expect_overlapping, gathering
from conformance.platform.model import NEEDS_MODEL, answered
from conformance.platform.suite import SUITE, contract, running

CLAIM = "vip"


def _short(text: Any) -> str:
    text = str(text)
    return text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")


def _parsed(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content


def _call(call_id: str, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments or {}}


@SUITE.case(
    "turn/context-authoritative",
    title="Every turn starts from the session-start context, labelled and marked authoritative",
    requirement="In each turn the model is first given, before the person's message, the session-start tool's "
                "result with the tool's name and description, marked authoritative; a second turn still has it, "
                "and the tool has run once.",
    spec=(running("it is placed in the context the model starts the turn with, labeled with the tool’s name "
                  "and the description you wrote for it, and marked as authoritative"),
          running("That context is remembered for the rest of the conversation, so later turns still have it "
                  "without the tool running again."),
          running("The platform assembles the context, calls the model, and the model decides how to respond.")),
)
def context_authoritative(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    name, project = target.name("turn_context"), target.project("turn-context")
    definition = starter(target, name, "echo/{subject}")
    target.publish_project(project, [definition])
    conversation = target.conversation(project)
    check = Check()
    for index in (1, 2):
        turn = target.model.turn(conversation, f"Hello, turn {index}.", [{"text": f"Reply {index}."}])
        body = answered(turn, f"running turn {index}")
        first = turn.seen[0]
        context = first.context()
        for what, expected in (("the tool's name", name), ("the tool's description", definition["description"]),
                               ("the mark", "authoritative"), ("the tool's result", f"/echo/{target.subject}")):
            check.expect(expected in context, f"turn {index}: {what} in what the model is given before the "
                                              f"person's message", expected, _short(context) or "nothing")
        check.equal(f"turn {index}: the person's message", f"Hello, turn {index}.", (first.person() or [None])[-1])
        check.equal(f"turn {index}: the reply", f"Reply {index}.", body.get("reply"))
    check.equal("calls of the session-start tool after two turns", 1, len(target.calls_to(name)))
    return check.verdict()


@SUITE.case(
    "turn/tools-offered-without-subject",
    title="The model is offered the callable tools, never the subject, which the platform fills",
    requirement="The model is offered exactly the tools the token may call (no session-start tool, none it is "
                "not entitled to), with their other parameters and no subject; calling the per-user tool "
                "reaches the endpoint with the session's subject.",
    spec=(running("The platform fills the subject from the session token, never from the model, and the model "
                  "never even sees that the parameter exists."),
          running("When a turn’s token does not carry that claim, the platform never offers the tool to the "
                  "model, so the model cannot call it and cannot mention it."),
          contract("the tools offered to the model")),
)
def tools_offered_without_subject(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    personal, shared = target.name("turn_offered_personal"), target.name("turn_offered_shared")
    gated, starting = target.name("turn_offered_gated"), target.name("turn_offered_start")
    query = {"name": "q", "type": "string", "location": "query", "required": False, "description": "What to find."}
    project = target.project("turn-offered")
    target.publish_project(project, [
        tool(personal, target.mock(personal, "echo/{subject}"), scope="per_user", parameters=[SUBJECT_IN_PATH, query]),
        tool(shared, target.mock(shared, "echo")),
        tool(gated, target.mock(gated, "echo"), required_entitlement=CLAIM),
        starter(target, starting, "echo")])
    turn = target.model.turn(target.conversation(project), "Find my things.",
                             [{"calls": [_call("c1", personal, {"q": "things"})]}, {"text": "Found."}])
    body = answered(turn, "running the turn")
    offered = turn.seen[0].tools()
    check = Check()
    check.equal("the tools offered to the model", sorted([personal, shared]), sorted(offered, key=str))
    for name, spec in offered.items():
        parameters = spec.get("parameters") or {}
        shown = [p for p in (*(parameters.get("properties") or {}), *(parameters.get("required") or []))
                 if str(p).lower() == "subject"]
        check.equal(f"{name}: subject among the parameters the model is shown", [], shown)
    check.expect("q" in ((offered.get(personal) or {}).get("parameters") or {}).get("properties", {}),
                 f"{personal}: its parameter q offered", "present", offered.get(personal))
    results = [r for step in body.get("steps", []) for r in step.get("results", [])]
    seen = echoed(results[0]) if results else None
    check.expect(seen is not None and str(seen.get("path", "")).endswith(f"/echo/{target.subject}"),
                 "the path the endpoint received", f"…/echo/{target.subject}",
                 seen.get("path") if seen else _short(results))
    return check.verdict()


@SUITE.case(
    "turn/failure-object-to-model",
    title="A failed call reaches the model as the small failure object, never the error body",
    requirement="When a call of a whole turn answers 500 with a body, and another names no tool, the model is "
                "given exactly {status: error, kind: refused, httpCode: 500} and {status: error, kind: "
                "unknown-tool}, and the endpoint's body appears nowhere in what it is sent.",
    spec=(running("When a call does not succeed, the model receives a small, fixed object to let it know that "
                  "the call failed"),
          running("Your endpoint’s own response body is never forwarded on a failure, so nothing you put in an "
                  "error, such as a stack trace or an internal message, will reach the model.")),
)
def failure_object_to_model(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    name, project = target.name("turn_failing"), target.project("turn-failing")
    target.publish_project(project, [tool(name, target.mock(name, "status/500"))])
    missing = target.name("turn_no_such_tool")
    turn = target.model.turn(target.conversation(project), "Try it.",
                             [{"calls": [_call("c1", name), _call("c2", missing)]}, {"text": "It failed."}])
    body = answered(turn, "running the turn")
    check = Check()
    if not check.expect(len(turn.seen) >= 2, "requests to the model", "two: the calls, then their results",
                        len(turn.seen)):
        return check.verdict()
    given = dict(turn.seen[1].results())
    check.equal("what the model is given for the call answered 500", error("refused", 500),
                _parsed(given.get("c1", "nothing")))
    check.equal("what the model is given for the call to no tool", error("unknown-tool"),
                _parsed(given.get("c2", "nothing")))
    check.expect("mock status 500" not in turn.seen[1].text(), "the endpoint's error body",
                 "nowhere in what the model is sent", "present")
    results = [r.get("error") for step in body.get("steps", []) for r in step.get("results", [])]
    check.equal("the turn's results", [error("refused", 500), error("unknown-tool")], results)
    return check.verdict()


@SUITE.case(
    "turn/step-calls-parallel",
    title="The calls of one model step run in parallel, their results given back in order",
    requirement="When the model asks for two calls in one step, they are at the endpoint at the same time (each "
                "waits there for the other, and both answer that they met), and the model is then given both "
                "results in its calls' order.",
    spec=(running("When it requests several calls in a single step, the platform runs them in parallel rather "
                  "than one after another."),
          running("It fires all of them together, waits for the last one to come back, and hands the whole set "
                  "to the model to continue.")),
)
def step_calls_parallel(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    names = [target.name("turn_parallel", str(i)) for i in range(2)]
    project = target.project("turn-parallel")
    meet = gathering(target, "turn_parallel", len(names))
    target.publish_project(project, [tool(n, target.mock(n, meet)) for n in names])
    turn = target.model.turn(target.conversation(project), "Both at once, please.",
                             [{"calls": [_call("c1", names[0]), _call("c2", names[1])]}, {"text": "Done."}])
    body = answered(turn, "running the turn")
    steps = body.get("steps") or [{}]
    check = Check()
    expect_met(check, steps[0].get("results") or [], len(names))
    expect_overlapping(check, target, names)
    given = turn.seen[1].results() if len(turn.seen) > 1 else []
    check.equal("the results the model is given, by call id", ["c1", "c2"], [call_id for call_id, _ in given])
    return check.verdict()


@SUITE.case(
    "turn/result-as-is-then-reply",
    title="A successful result reaches the model as it came, and the model's answer is the reply",
    requirement="A call's 2xx body is given to the model exactly as the endpoint sent it; the turn answers "
                "the model's final text as its reply, with the step's calls and results.",
    spec=(running("When your endpoint answers successfully, the platform passes the response as-is back to the "
                  "model to continue the turn."),
          running("The platform then calls your endpoint, waits for the result, and hands it back to the model, "
                  "which continues the turn with the new information in hand."),
          contract("one whole turn run by the platform with the configured model")),
)
def result_as_is_then_reply(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    name, project = target.name("turn_result"), target.project("turn-result")
    target.publish_project(project, [tool(name, target.mock(name, "echo"))])
    turn = target.model.turn(target.conversation(project), "What do you see?",
                             [{"calls": [_call("c1", name)]}, {"text": "I saw: {results}"}])
    body = answered(turn, "running the turn")
    steps = body.get("steps") or [{}]
    results = steps[0].get("results") or [{}]
    output = results[0].get("output")
    check = Check()
    check.equal("the step's calls", [_call("c1", name)], steps[0].get("calls"))
    if not check.expect(echoed(results[0]) is not None, "the call's result", "the endpoint's echo",
                        _short(results[0])):
        return check.verdict()
    given = turn.seen[1].results() if len(turn.seen) > 1 else []
    check.equal("what the model is given for the call", [("c1", output)], given)
    check.equal("the turn's reply", f"I saw: {output}", body.get("reply"))
    return check.verdict()
