"""`parallel/…`: the calls of one model step run together and come back in the calls' order."""
from __future__ import annotations

from conformance.case import Check, Verdict
from conformance.platform.budgets import SLOW_FIRST_CALL_SECONDS
from conformance.platform.client import PlatformTarget, brief, expect_status, tool
from conformance.platform.gathering import expect_met, expect_overlapping, gathering
from conformance.platform.suite import SUITE, contract, running


@SUITE.case(
    "parallel/calls-overlap",
    title="The calls of one step run in parallel",
    requirement="Two calls in one step are at the endpoint at the same time: each waits there for the other, and "
                "both answer that they met.",
    spec=(running("When it requests several calls in a single step, the platform runs them in parallel rather "
                  "than one after another."),
          running("So two calls that each take a second cost about a second together, not two.")),
)
def calls_overlap(target: PlatformTarget) -> Verdict:
    names = [target.name("parallel_overlap", str(i)) for i in range(2)]
    project = target.project("parallel-overlap")
    meet = gathering(target, "parallel_overlap", len(names))
    target.publish_project(project, [tool(n, target.mock(n, meet)) for n in names])
    conversation = target.conversation(project)
    reply = expect_status(conversation.step_reply(conversation.turn(), *[(n, {}) for n in names]), 200,
                          "running the step")
    check = Check()
    expect_met(check, reply.body.get("results") or [], len(names))
    expect_overlapping(check, target, names)
    return check.verdict()


@SUITE.case(
    "parallel/results-in-order",
    title="A step's results come back whole, in the calls' order",
    requirement="A step whose first call finishes last answers once every call is done, with one result per "
                "call, in the calls' order, each with its call's id and name.",
    spec=(running("It fires all of them together, waits for the last one to come back, and hands the whole set "
                  "to the model to continue."),
          contract("one model step: all calls in parallel, `{\"results\": [...]}` in the calls' order")),
)
def results_in_order(target: PlatformTarget) -> Verdict:
    slow, fast = target.name("parallel_order_slow"), target.name("parallel_order_fast")
    project = target.project("parallel-order")
    target.publish_project(project, [tool(slow, target.mock(slow, f"delay/{SLOW_FIRST_CALL_SECONDS:g}")),
                                     tool(fast, target.mock(fast, "echo"))])
    conversation = target.conversation(project)
    calls = [(slow, {}), (fast, {}), (fast, {})]
    reply = expect_status(conversation.step_reply(conversation.turn(), *calls), 200, "running the step")
    results = reply.body.get("results") or []
    check = Check()
    check.equal("(id, name) of each result", [("0", slow), ("1", fast), ("2", fast)],
                [(r.get("id"), r.get("name")) for r in results])
    check.expect(all("output" in r for r in results), "every result", "an output", [brief(r) for r in results])
    return check.verdict()
