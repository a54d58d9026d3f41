"""`approval/…`: a call of a tool that requires the person's approval waits for the person (docs/approvals.md).

Each case publishes a consequential tool of its own (a POST to the mock's echo, with body parameters), has a model
step call it, and reads the mock's call record to see what reached the endpoint: nothing while the call is held;
exactly the held call, once, after the conversation's own subject approves it, its assertion carrying the approval's
id; and nothing for a decline, an expired approval, a second decision, another person's token or another
conversation's id.

`hold` is the setup every case shares: a case of a whole turn that stops at a held call starts from the same
consequential tool (`consequential`, `arguments_for`) and reads the same approvals.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import gevent
import jwt

from conformance.case import Check, Verdict
from conformance.platform.budgets import CLOCK_TOLERANCE_SECONDS, EXPIRING_TOKEN_SECONDS, EXPIRY_POLL_SECONDS
from conformance.platform.client import (
    Conversation,
    PlatformTarget,
    Reply,
    SetupRefused,
    bearer,
    brief,
    echoed,
    tool,
)
from conformance.platform.suite import SUITE, approvals

ITEM = {"name": "item", "type": "string", "location": "body"}
COUNT = {"name": "count", "type": "number", "location": "body"}
#: What a declined call's result carries: the small failure object, of the kind beside the spec's six.
DECLINED = {"status": "error", "kind": "declined"}

NOTHING_UNTIL_APPROVED = approvals("A tool can require the person's approval of each call, so the model may ask "
                                   "for such a call but never make one on its own say-so.")
DECIDES = approvals("`POST /v1/conversations/{id}/approvals/{approval}` with `{\"decision\": \"approve\"}` or "
                    "`{\"decision\": \"decline\"}` decides one.")


def consequential(target: PlatformTarget, name: str) -> dict[str, Any]:
    """A tool each of whose calls waits for the person's approval: a POST to the mock's echo, so what is sent
    shows."""
    return tool(name, target.mock(name, "echo"), method="POST", parameters=[ITEM, COUNT], requires_approval=True)


def arguments_for(target: PlatformTarget) -> dict[str, Any]:
    """The arguments a case's model asks the consequential tool to be called with."""
    return {"item": f"{target.run} oolong", "count": 3}


@dataclass(frozen=True)
class Held:
    """A call held for the person's approval: the tool, where it was asked for, its arguments, its step result."""

    name: str
    project: str
    conversation: Conversation
    turn: str
    arguments: dict[str, Any]
    result: dict[str, Any]

    @property
    def approval(self) -> dict[str, Any]:
        """The result's `approval` ({} when the call was not held)."""
        approval = self.result.get("approval")
        return approval if isinstance(approval, dict) else {}

    @property
    def id(self) -> str:
        return str(self.approval.get("id") or "")

    def required(self) -> Held:
        """This, when the call was held; SetupRefused otherwise, since nothing a decision case checks can follow."""
        if not self.id:
            raise SetupRefused(f"a call of {self.name}, which requires approval, was not held: {brief(self.result)}")
        return self


def hold(target: PlatformTarget, case: str, token: str | None = None,
         beside: tuple[dict[str, Any], ...] = ()) -> tuple[Held, list[dict[str, Any]]]:
    """Publish the case's consequential tool (and the tools `beside` it), open a conversation (with `token`, or a
    fresh session token) and run one step calling it with `arguments_for`, then each tool beside it with no
    arguments: the held call, and the other calls' results."""
    name, project = target.name("approval", case), target.project("approval", case)
    target.publish_project(project, [consequential(target, name), *beside])
    conversation = target.conversation(project, token)
    turn, arguments = conversation.turn(), arguments_for(target)
    results = conversation.step(turn, (name, arguments), *[(definition["name"], {}) for definition in beside])
    return Held(name, project, conversation, turn, arguments, results[0]), results[1:]


def listed(reply: Reply) -> list[dict[str, Any]] | None:
    """The approvals a listing answered, or None when it did not answer a list."""
    found = reply.body.get("approvals") if reply.status == 200 and isinstance(reply.body, dict) else None
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else None


def status_listed(held: Held, token: str | None = None) -> Any:
    """The held call's approval's status as its conversation lists it (None when it is not listed)."""
    return next((a.get("status") for a in listed(held.conversation.approvals(token)) or [] if a.get("id") == held.id),
                None)


def expect_refused(check: Check, what: str, reply: Reply, status: int) -> None:
    """The reply is `status` in the one error shape (a `code` and a `message`)."""
    shaped = isinstance(reply.body, dict) and isinstance(reply.body.get("code"), str) and "message" in reply.body
    check.expect(reply.status == status and shaped, what, f"HTTP {status} with the one error shape", reply.describe())


def expect_unsent(check: Check, target: PlatformTarget, held: Held, when: str) -> None:
    """The endpoint has received no call of the held tool."""
    check.equal(f"calls of {held.name} at the endpoint {when}", 0, len(target.calls_to(held.name)))


@SUITE.case(
    "approval/held-until-approved",
    title="A call that requires approval is held: the endpoint receives nothing, the model learns only that",
    requirement="A step's call of a tool that requires approval answers only {id, name, approval: {id, status: "
                "pending, expires_at}} and reaches the endpoint not at all, while the step's other call runs; a call "
                "whose arguments do not fit fails at once and holds nothing; the conversation's approvals list the "
                "held call, pending, with its tool, display name, description, exact arguments, turn and expiry.",
    spec=(NOTHING_UNTIL_APPROVED,
          approvals("A call of such a tool is checked as every call is, so one naming an unknown tool or with "
                    "arguments that do not fit fails at once, but a call that fits is not sent."),
          approvals("Its result tells the model only that the call awaits the person's approval: `{\"id\", "
                    "\"name\", \"approval\": {\"id\", \"status\": \"pending\", \"expires_at\"}}`."),
          approvals("The other calls of the step run as usual."),
          approvals("`GET /v1/conversations/{id}/approvals`, with a session token of the conversation's subject, "
                    "lists its approvals, pending and decided, each with the tool, its display name and description, "
                    "the exact arguments, the turn and the expiry.")),
)
def held_until_approved(target: PlatformTarget) -> Verdict:
    look = target.name("approval", "held", "look")
    held, [other] = hold(target, "held", beside=(tool(look, target.mock(look, "echo")),))
    check = Check()
    check.equal("the held call's result: its members", ["approval", "id", "name"], sorted(held.result))
    check.equal("its approval: its members", ["expires_at", "id", "status"], sorted(held.approval))
    check.equal("its approval: its status", "pending", held.approval.get("status"))
    check.expect("output" in other, "the step's other call", "run as usual, with its output", brief(other))
    check.equal(f"calls of the step's other tool ({look}) at the endpoint", 1, len(target.calls_to(look)))
    unfit = held.conversation.step(held.conversation.turn(), (held.name, {"item": 7}))[0]
    check.expect("error" in unfit and "approval" not in unfit, "a call whose arguments do not fit (item: 7)",
                 "an error at once, nothing held", brief(unfit))
    reply = held.conversation.approvals()
    found = listed(reply)
    if check.expect(found is not None, "GET …/approvals", "HTTP 200 with a list of approvals", reply.describe()):
        check.equal("the approvals listed", [held.id], [a.get("id") for a in found])
        entry = found[0] if found else {}
        for what, expected in (("status", "pending"), ("tool", held.name), ("display_name", held.name),
                               ("description", consequential(target, held.name)["description"]),
                               ("arguments", held.arguments), ("turn", held.turn),
                               ("expires_at", held.approval.get("expires_at"))):
            check.equal(f"the listed approval: its {what}", expected, entry.get(what))
    expect_unsent(check, target, held, "while the call is held")
    return check.verdict()


@SUITE.case(
    "approval/approved-sent-once",
    title="An approved call is sent exactly as held, once, its assertion carrying the approval's id",
    requirement="Approving a held call answers 200 with the approval, approved, and the call's result; the "
                "endpoint receives exactly one call, with the held arguments, for the session's subject, whose "
                "assertion's approval claim is the approval's id.",
    spec=(DECIDES,
          approvals("Approving sends exactly the held call, once: the same tool version and arguments, for the "
                    "session's subject, under the usual deadline and cap."),
          approvals("The answer is the approval, now approved, and the call's result as a step gives it."),
          approvals("The assertion of an approved call carries, beside the usual claims, `approval`: the approval's "
                    "id.")),
)
def approved_sent_once(target: PlatformTarget) -> Verdict:
    held = hold(target, "approved")[0].required()
    answer = held.conversation.decide(held.id, "approve")
    check = Check()
    if not check.expect(answer.status == 200, "approving the held call", "HTTP 200", answer.describe()):
        return check.verdict()
    approval, result = answer.body.get("approval") or {}, answer.body.get("result") or {}
    check.equal("the answer's approval: its id", held.id, approval.get("id"))
    check.equal("the answer's approval: its status", "approved", approval.get("status"))
    seen = echoed(result)
    if check.expect(seen is not None, "the answer's result", "the endpoint's answer: the echo of the call",
                    brief(result)):
        check.equal("the body the endpoint received", held.arguments, seen.get("json"))
        check.equal("the method the endpoint received", "POST", seen.get("method"))
    check.equal(f"calls of {held.name} at the endpoint", 1, len(target.calls_to(held.name)))
    token = bearer(target, held.name, seen or {})
    claims = jwt.decode(token, options={"verify_signature": False}) if token else {}
    check.equal("the assertion's approval claim", held.id, claims.get("approval"))
    check.equal("the assertion's sub", target.subject, claims.get("sub"))
    check.equal("the assertion's aud", held.name, claims.get("aud"))
    return check.verdict()


@SUITE.case(
    "approval/declined-not-sent",
    title="A declined call is never sent, and fails declined",
    requirement="Declining a held call answers 200 with the approval, declined, and the result {status: error, "
                "kind: declined}; the endpoint receives nothing.",
    spec=(DECIDES,
          approvals("Declining sends nothing, and the call's result is the failure `{\"status\": \"error\", "
                    "\"kind\": \"declined\"}`.")),
)
def declined_not_sent(target: PlatformTarget) -> Verdict:
    held = hold(target, "declined")[0].required()
    answer = held.conversation.decide(held.id, "decline")
    check = Check()
    if check.expect(answer.status == 200, "declining the held call", "HTTP 200", answer.describe()):
        result = answer.body.get("result") or {}
        check.equal("the answer's approval: its status", "declined", (answer.body.get("approval") or {}).get("status"))
        check.equal("the answer's result: its error", DECLINED, result.get("error"))
        check.expect("output" not in result, "the answer's result: its output", "none", brief(result))
    expect_unsent(check, target, held, "after the decline")
    return check.verdict()


@SUITE.case(
    "approval/decided-once",
    title="An approval is decided once: a second decision is refused and sends nothing",
    requirement="Once a held call is approved, approving or declining it again answers 409 in the one error shape; "
                "the endpoint has received exactly the one call, and the approval is listed as approved.",
    spec=(approvals("An approval is decided once: a second decision is refused with 409 and sends nothing."),
          approvals("`GET /v1/conversations/{id}/approvals`, with a session token of the conversation's subject, "
                    "lists its approvals, pending and decided")),
)
def decided_once(target: PlatformTarget) -> Verdict:
    held = hold(target, "replay")[0].required()
    first = held.conversation.decide(held.id, "approve")
    check = Check()
    if not check.expect(first.status == 200, "the first decision (approve)", "HTTP 200", first.describe()):
        return check.verdict()
    for decision in ("approve", "decline"):
        expect_refused(check, f"a second decision ({decision})", held.conversation.decide(held.id, decision), 409)
    check.equal(f"calls of {held.name} at the endpoint", 1, len(target.calls_to(held.name)))
    check.equal("the approval's listed status", "approved", status_listed(held))
    return check.verdict()


@SUITE.case(
    "approval/expired-refused",
    title="An approval expires with its session token at the latest, and then sends nothing",
    requirement=f"A call held with a session token living {EXPIRING_TOKEN_SECONDS} s expires no later than the "
                "token; once it has, it is no longer listed as pending and approving it (with another token of the "
                "same person) answers 409 in the one error shape; the endpoint receives nothing.",
    spec=(approvals("An approval expires after five minutes (`TOOLGATE_APPROVAL_LIFETIME_SECONDS` changes it), and "
                    "never later than the session token that made it; deciding it afterwards is refused with 409 and "
                    "sends nothing."),),
)
def expired_refused(target: PlatformTarget) -> Verdict:
    # The token's expiry, not the platform's approval lifetime (five minutes unless its operator changed it), is
    # what the kit can choose: so the case waits a second at most, on any deployment.
    token = target.session_token(ttl_seconds=EXPIRING_TOKEN_SECONDS)
    token_expiry = jwt.decode(token, options={"verify_signature": False})["exp"]
    held = hold(target, "expired", token)[0].required()
    expires = held.approval.get("expires_at")
    check = Check()
    check.expect(isinstance(expires, (int, float)) and expires <= token_expiry, "the approval's expires_at",
                 f"at most the session token's exp, {token_expiry}", expires)
    gevent.sleep(max(0.0, token_expiry - time.time()))
    fresh = target.session_token()
    status = status_listed(held, fresh)
    until = time.time() + CLOCK_TOLERANCE_SECONDS  # the platform's clock may run behind the kit's
    while status == "pending" and time.time() < until:
        gevent.sleep(EXPIRY_POLL_SECONDS)
        status = status_listed(held, fresh)
    check.expect(status not in ("pending", None), "the approval's listed status once the session token has expired",
                 "expired", status)
    expect_refused(check, "approving it then", held.conversation.decide(held.id, "approve", fresh), 409)
    expect_unsent(check, target, held, "after its expiry")
    return check.verdict()


ONLY_ITS_SUBJECT = approvals("Only the conversation's own subject sees and decides its approvals: another person's "
                             "session token, or another conversation's id, is answered 404 and sends nothing.")


@SUITE.case(
    "approval/other-subject-refused",
    title="Another person can neither see nor decide an approval",
    requirement="Listing a conversation's approvals, or approving its held call, with another person's session "
                "token answers 404 in the one error shape; the endpoint receives nothing and the approval stays "
                "pending.",
    spec=ONLY_ITS_SUBJECT,
)
def other_subject_refused(target: PlatformTarget) -> Verdict:
    held = hold(target, "other_subject")[0].required()
    stranger = target.session_token(f"{target.run}-mallory")
    check = Check()
    expect_refused(check, "listing the approvals with another person's token", held.conversation.approvals(stranger),
                   404)
    expect_refused(check, "approving with another person's token", held.conversation.decide(held.id, "approve",
                                                                                             stranger), 404)
    expect_unsent(check, target, held, "after another person's decision")
    check.equal("the approval's listed status", "pending", status_listed(held))
    return check.verdict()


@SUITE.case(
    "approval/other-conversation-refused",
    title="An approval is decided only through its own conversation",
    requirement="Approving or declining a held call through another conversation of the same person answers 404 in "
                "the one error shape; the endpoint receives nothing and the approval stays pending.",
    spec=ONLY_ITS_SUBJECT,
)
def other_conversation_refused(target: PlatformTarget) -> Verdict:
    held = hold(target, "other_conversation")[0].required()
    elsewhere = target.conversation(held.project, held.conversation.token)
    check = Check()
    for decision in ("approve", "decline"):
        expect_refused(check, f"deciding ({decision}) through another conversation",
                       held.conversation.decide(held.id, decision, conversation=elsewhere.id), 404)
    expect_unsent(check, target, held, "after a decision through another conversation")
    check.equal("the approval's listed status", "pending", status_listed(held))
    return check.verdict()
