"""`turn/awaits-approval`: a whole turn stops at a call held for the person's approval, and goes on once it is decided
(docs/approvals.md).

It is a turn case (it needs the scripted model, and `--skip turn/` leaves it out with the others), built on the
approval cases' consequential tool. The model is scripted once for the whole turn and kept by the case until the
turn has gone on, since the pause, the decision and the continue are several requests: the case sees what the
endpoint received at each point, and what the model was handed when the turn went on.
"""
from __future__ import annotations

from typing import Any

import jwt

from conformance.case import Check, Verdict
from conformance.platform.cases.approval import Held, arguments_for, consequential, expect_unsent
from conformance.platform.client import PlatformTarget, Reply, bearer, echoed
from conformance.platform.model import NEEDS_MODEL, Script
from conformance.platform.suite import SUITE, approvals

#: The model's call id for the held call: what the model is handed back is found by it.
CALL_ID = "held"
AWAITING = "awaiting-approval"


def _body(reply: Reply) -> dict[str, Any]:
    return reply.body if isinstance(reply.body, dict) else {}


def _first_result(body: dict[str, Any]) -> dict[str, Any]:
    """The result of the paused step's first call ({} when the answer has none)."""
    steps = body.get("steps") if isinstance(body.get("steps"), list) else []
    results = steps[-1].get("results") if steps and isinstance(steps[-1], dict) else None
    return results[0] if isinstance(results, list) and results and isinstance(results[0], dict) else {}


def _expect_pending_refused(check: Check, script: Script, held: Held, what: str, body: dict[str, Any],
                            asked: int) -> None:
    """A message sent while the held call is undecided is refused `approvals-pending`, naming the approval, and
    reaches neither the model nor the endpoint."""
    reply = script.send(held.conversation, body)
    check.expect(reply.status == 409 and _body(reply).get("code") == "approvals-pending", what,
                 "HTTP 409 approvals-pending", reply.describe())
    check.equal(f"{what}: the fields its errors name", [f"approvals/{held.id}"],
                [e.get("field") for e in reply.violations() if isinstance(e, dict)])
    check.equal(f"requests the model received after {what}", asked, len(script.seen()))
    expect_unsent(check, held.conversation.target, held, f"after {what}")


@SUITE.case(
    "turn/awaits-approval",
    title="A whole turn pauses at a call awaiting approval, and goes on with its real result once approved",
    requirement="A turn whose model asks for a call of a tool that requires approval answers 200 with no reply, "
                "stopped awaiting-approval, and the held call's approval, pending, with its arguments; the endpoint "
                "receives nothing, and a message or a continue meanwhile is refused 409 approvals-pending without "
                "reaching the model; approving sends the held call once, its assertion carrying the approval and the "
                "turn; the continue ({}) answers under the same turn id with the decided result, which is what the "
                "model is handed for the call, and the model's reply.",
    spec=(approvals("A whole turn (`POST /v1/conversations/{id}/messages`) stops at a step that holds a call: it "
                    "answers 200 with no reply, `\"stopped\": {\"reason\": \"awaiting-approval\", \"message\"}`, and "
                    "the approvals it awaits as `GET …/approvals` lists them."),
          approvals("A message, or a continue, while one of them is undecided is refused with 409 "
                    "`approvals-pending` and reaches neither the model nor the endpoint."),
          approvals("Once every held call is decided, a message without text (`{}`) continues the turn under the "
                    "same turn id: the model is handed each decided result in place of the pending one, and the "
                    "answer lists them in `decided`.")),
)
def awaits_approval(target: PlatformTarget) -> Verdict:
    if target.model is None:
        return Verdict.errored(NEEDS_MODEL)
    name, project = target.name("turn", "approval"), target.project("turn", "approval")
    target.publish_project(project, [consequential(target, name)])
    conversation, arguments = target.conversation(project), arguments_for(target)
    check = Check()
    with target.model.scripted([{"calls": [{"id": CALL_ID, "name": name, "arguments": arguments}]},
                                {"text": "Placed: {results}"}]) as script:
        paused = script.send(conversation, {"text": "Place my order, please."})
        body = _body(paused)
        held = Held(name, project, conversation, str(body.get("turn") or ""), arguments, _first_result(body))
        if not check.expect(paused.status == 200 and bool(held.id), "the turn whose model asks for the call",
                            "HTTP 200 with the call held", paused.describe()):
            return check.verdict()
        check.equal("the paused turn's reply", None, body.get("reply"))
        check.equal("the paused turn's stop reason", AWAITING, (body.get("stopped") or {}).get("reason"))
        found = [a for a in body.get("approvals") or [] if isinstance(a, dict)]
        check.equal("the approvals the paused turn awaits", [held.id], [a.get("id") for a in found])
        for what, expected in (("status", "pending"), ("tool", name), ("arguments", arguments), ("turn", held.turn)):
            check.equal(f"the awaited approval: its {what}", expected, (found or [{}])[0].get(what))
        expect_unsent(check, target, held, "while the turn is paused")
        asked = len(script.seen())
        _expect_pending_refused(check, script, held, "a message while the call is undecided", {"text": "Hello?"},
                                asked)
        _expect_pending_refused(check, script, held, "a continue while the call is undecided", {}, asked)

        decided = conversation.decide(held.id, "approve")
        result = _body(decided).get("result") or {}
        seen = echoed(result)
        if not check.expect(decided.status == 200 and seen is not None, "approving the held call",
                            "HTTP 200 with the endpoint's echo", decided.describe()):
            return check.verdict()
        check.equal(f"calls of {name} at the endpoint once approved", 1, len(target.calls_to(name)))
        check.equal("the body the endpoint received", arguments, seen.get("json"))
        token = bearer(target, name, seen)
        claims = jwt.decode(token, options={"verify_signature": False}) if token else {}
        check.equal("the assertion's approval claim", held.id, claims.get("approval"))
        check.equal("the assertion's turn claim", held.turn, claims.get("turn"))

        going_on = script.send(conversation, {})
        asked_since = script.seen()[asked:]
    given = asked_since[0].results() if asked_since else []
    answer = _body(going_on)
    if not check.expect(going_on.status == 200, "the continue ({})", "HTTP 200", going_on.describe()):
        return check.verdict()
    output = result.get("output")
    check.equal("the continued turn's id", held.turn, answer.get("turn"))
    check.equal("the continued turn's stop", None, answer.get("stopped"))
    check.equal("what the model is handed for the held call", [(CALL_ID, output)], given)
    decided_list = [d for d in answer.get("decided") or [] if isinstance(d, dict)]
    check.equal("the continued turn's decided approvals", [(held.id, "approved")],
                [((d.get("approval") or {}).get("id"), (d.get("approval") or {}).get("status")) for d in decided_list])
    check.equal("the continued turn's decided result", [output],
                [(d.get("result") or {}).get("output") for d in decided_list])
    check.equal("the continued turn's reply", f"Placed: {output}", answer.get("reply"))
    check.equal(f"calls of {name} at the endpoint after the continue", 1, len(target.calls_to(name)))
    return check.verdict()
