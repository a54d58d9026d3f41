"""`session-start/…`: tools that run once when a conversation opens and fill the model's context.

A gathering at the mock (conformance/platform/gathering.py) shows that session-start tools ran in
parallel, and its call record that they ran once, and not at all when the token lacks their
entitlement.
"""
from __future__ import annotations

import json
from typing import Any

from conformance.case import Check, Verdict
from conformance.limits import EXCERPT_CHARS
from conformance.platform.cases.failure import error
from conformance.platform.client import SUBJECT_IN_PATH, PlatformTarget, expect_status, tool
from conformance.platform.gathering import expect_met, expect_overlapping, gathering
from conformance.platform.suite import SUITE, contract, running

CLAIM = "vip"


def starter(target: PlatformTarget, name: str, behaviour: str, **extra: Any) -> dict[str, Any]:
    """A session-start tool: per-user with the subject in the path when the behaviour takes one."""
    if "{subject}" in behaviour:
        return tool(name, target.mock(name, behaviour), scope="per_user", parameters=[SUBJECT_IN_PATH],
                    runs_at_session_start=True, **extra)
    return tool(name, target.mock(name, behaviour), runs_at_session_start=True, **extra)


def context_of(opened: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The conversation's context items by tool name."""
    return {item.get("tool"): item for item in opened.get("context") or [] if isinstance(item, dict)}


@SUITE.case(
    "session-start/context-before-first-reply",
    title="A session-start tool's result is in the context the conversation opens with",
    requirement="Opening a conversation runs its session-start tool and answers a context item with the tool's "
                "name, its description, authoritative true, and the output as it came.",
    spec=(running("it is placed in the context the model starts the turn with, labeled with the tool’s name "
                  "and the description you wrote for it, and marked as authoritative"),
          contract("A context item is `{\"tool\", \"description\", \"authoritative\": true}` with `output` or "
                   "`error`.")),
)
def context_before_first_reply(target: PlatformTarget) -> Verdict:
    name, project = target.name("session_context"), target.project("session-context")
    definition = starter(target, name, "echo/{subject}")
    target.publish_project(project, [definition])
    item = context_of(target.conversation(project).opened).get(name, {})
    check = Check()
    check.equal("the item's tool", name, item.get("tool"))
    check.equal("the item's description", definition["description"], item.get("description"))
    check.equal("the item's authoritative", True, item.get("authoritative"))
    try:
        seen = json.loads(item.get("output") or "")
    except ValueError:
        seen = {}
    check.expect(isinstance(seen, dict) and str(seen.get("path", "")).endswith(f"/echo/{target.subject}"),
                 "the item's output", "the endpoint's body as it came",
                 item.get("error") or str(item.get("output"))[:EXCERPT_CHARS])
    return check.verdict()


@SUITE.case(
    "session-start/runs-once",
    title="A session-start tool runs once and is never offered to the model",
    requirement="A session-start tool is called once when the conversation opens, not again when it is read "
                "or a turn runs; it is not offered to the model, and calling it gives unknown-tool.",
    spec=(running("That context is remembered for the rest of the conversation, so later turns still have it "
                  "without the tool running again."),
          running("runs once, automatically, before the model’s first reply in a conversation")),
)
def runs_once(target: PlatformTarget) -> Verdict:
    name, other = target.name("session_once"), target.name("session_once_model")
    project = target.project("session-once")
    target.publish_project(project, [starter(target, name, "echo/{subject}"),
                                     tool(other, target.mock(other, "echo"))])
    conversation = target.conversation(project)
    check = Check()
    check.equal("calls after opening", 1, len(target.calls_to(name)))
    again = conversation.read()
    check.equal("the context when read again", conversation.opened.get("context"), again.get("context"))
    check.equal("offered tools", [other], [t.get("name") for t in conversation.tools()])
    turn = conversation.turn()
    results = conversation.step(turn, (other, {}), (name, {}))
    check.equal("calling the session-start tool", error("unknown-tool"), results[1].get("error"))
    check.equal("calls after reading, a turn and a step", 1, len(target.calls_to(name)))
    return check.verdict()


@SUITE.case(
    "session-start/signed",
    title="A session-start call is signed like any other call",
    requirement="The endpoint of a session-start tool receives an assertion it verifies, for that tool and "
                "the session's subject.",
    spec=running("The call is signed with the same assertion as any other tool call"),
)
def signed(target: PlatformTarget) -> Verdict:
    name, project = target.name("session_signed"), target.project("session-signed")
    target.publish_project(project, [starter(target, name, "echo")])
    item = context_of(target.conversation(project).opened).get(name, {})
    try:
        claims = json.loads(item.get("output") or "").get("claims") or {}
    except (ValueError, AttributeError):
        claims = {}
    check = Check()
    # The mock only echoes once it has verified the assertion; its claims are what it verified.
    check.equal("the verified assertion's aud", name, claims.get("aud", item.get("error")))
    check.equal("the verified assertion's sub", target.subject, claims.get("sub"))
    return check.verdict()


@SUITE.case(
    "session-start/follows-entitlements",
    title="A session-start tool the token is not entitled to is skipped",
    requirement=f"A session-start tool requiring {CLAIM} neither runs nor appears in the context for a token "
                "without it, and runs for a token with it.",
    spec=running("when the person’s token does not carry a tool’s required entitlement, the platform skips "
                 "that tool rather than running it"),
)
def follows_entitlements(target: PlatformTarget) -> Verdict:
    name, project = target.name("session_entitled"), target.project("session-entitled")
    target.publish_project(project, [starter(target, name, "echo", required_entitlement=CLAIM)])
    check = Check()
    plain = target.conversation(project)
    check.expect(name not in context_of(plain.opened), "the context without the entitlement",
                 f"without {name}", list(context_of(plain.opened)))
    check.equal("calls without the entitlement", 0, len(target.calls_to(name)))
    entitled = target.conversation(project, target.session_token(entitlements=[CLAIM]))
    check.expect(name in context_of(entitled.opened), "the context with the entitlement", f"with {name}",
                 list(context_of(entitled.opened)))
    return check.verdict()


@SUITE.case(
    "session-start/failure-summary",
    title="A failed session-start tool leaves the small summary, never its body",
    requirement="A session-start tool answering 500 with a body gives a context item with error {status: "
                "error, kind: refused, httpCode: 500}, no output, and none of the body anywhere.",
    spec=running("If a session-start tool does not succeed, its place in that context carries the same small "
                 "summary of what went wrong described below, never your error body."),
)
def failure_summary(target: PlatformTarget) -> Verdict:
    name, project = target.name("session_failing"), target.project("session-failing")
    target.publish_project(project, [starter(target, name, "status/500")])
    opened = target.conversation(project).opened
    item = context_of(opened).get(name, {})
    check = Check()
    check.equal("the item's error", error("refused", 500), item.get("error"))
    check.expect("output" not in item, "the item's output", "none", item.get("output"))
    check.expect("mock status 500" not in json.dumps(opened), "the endpoint's body", "nowhere in the answer",
                 "present")
    return check.verdict()


@SUITE.case(
    "session-start/in-parallel",
    title="Session-start tools run in parallel",
    requirement="Two session-start tools are at the endpoint at the same time when the conversation opens: each "
                "waits there for the other, and both context items hold the answer that they met.",
    spec=(contract("runs the session-start tools the token is entitled to, in parallel"),
          running("A tool you mark to run at session start runs once, automatically, before the model’s "
                  "first reply")),
)
def in_parallel(target: PlatformTarget) -> Verdict:
    names = [target.name("session_parallel", str(i)) for i in range(2)]
    project = target.project("session-parallel")
    meet = gathering(target, "session_parallel", len(names))
    target.publish_project(project, [starter(target, n, meet) for n in names])
    opened = expect_status(target.open(project, target.session_token()), 201, "opening the conversation")
    context = context_of(opened.body if isinstance(opened.body, dict) else {})
    check = Check()
    expect_met(check, [context.get(n, {"error": "no context item"}) for n in names], len(names))
    expect_overlapping(check, target, names)
    return check.verdict()
