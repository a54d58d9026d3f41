"""`shaping/…`: what the model sees of a tool that shapes it (docs/shaping.md): a response shape, error fields and
outcome messages, each opt-in per tool.

Each case publishes its tools, pointed at the mock's answers shaped as real APIs shape them (`orders/<count>`, about
40 KB for 100 orders; `problem/<code>`, an error body with a `trace` the model must never read), and makes one model
step calling them all. A tool that sets none of the three is the failure cases' business: they run unchanged.
"""
from __future__ import annotations

import json
from typing import Any

from conformance.case import Check, Verdict
from conformance.platform.cases.failure import error, expect_error, expect_quiet
from conformance.platform.client import PlatformTarget, expect_status, tool
from conformance.platform.suite import SUITE, contract, running

ON_THE_WAY = ("Shaping a successful response into exactly what the model sees, mapping each outcome to your own "
              "wording, choosing which fields of an error response the model may see, and grounding what the model "
              "renders against the records a tool returned are all on the way.")
SHAPE_CONTRACT = contract("`response_shape`, a JMESPath expression applied to a 2xx JSON body, whose result is what "
                          "the model gets")
ERROR_FIELDS_CONTRACT = contract("`error_fields`, top-level fields of a JSON error body the model may read, carried "
                                 "as the failure object's `details`")
MESSAGES_CONTRACT = contract("`outcome_messages`, `{\"<kind>\" or \"<kind>:<status>\": \"sentence\"}`, carried as "
                             "the failure object's `message`.")
#: 100 of the mock's orders are about 40 KB: well past the 16,384 characters, while their ids and statuses fit.
ORDERS = 100
SHAPE = "orders[*].{id: id, status: status}"
TRACE_MARK = "Traceback"


def step(target: PlatformTarget, slug: str, tools: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Publish one tool per label (a mock behaviour and the definition's shaping fields), call them all in one step;
    the results by label."""
    names = {label: target.name(slug, label) for label in tools}
    definitions = [tool(names[label], target.mock(names[label], behaviour), **fields)
                   for label, (behaviour, fields) in tools.items()]
    project = target.project(slug)
    target.publish_project(project, definitions)
    conversation = target.conversation(project)
    reply = expect_status(conversation.step_reply(conversation.turn(), *[(names[label], {}) for label in tools]),
                          200, "running the step")
    by_id = {r.get("id"): r for r in reply.body.get("results", []) if isinstance(r, dict)}
    return {label: by_id.get(str(i), {}) for i, label in enumerate(tools)}


@SUITE.case(
    "shaping/response-shape",
    title="A 40 KB answer shaped to a few fields reaches the model as they are",
    requirement=f"A tool whose response_shape is {SHAPE} gives the model exactly that expression's result over "
                f"{ORDERS} orders (about 40 KB) as compact JSON; the same tool without a shape fails "
                "{status: error, kind: response-too-big, httpCode: 200}.",
    spec=(running(ON_THE_WAY), SHAPE_CONTRACT,
          contract("the raw body may then be up to `TOOLGATE_MAX_SHAPED_RESPONSE_BYTES`, the shaped result must fit "
                   "16,384 characters")),
)
def response_shape(target: PlatformTarget) -> Verdict:
    results = step(target, "shaping_shape", {"shaped": (f"orders/{ORDERS}", {"response_shape": SHAPE}),
                                             "plain": (f"orders/{ORDERS}", {})})
    wanted = [{"id": f"o-{i}", "status": "shipped" if i % 2 else "open"} for i in range(ORDERS)]
    check = Check()
    check.expect("error" not in results["shaped"], "shaped: error", "none", results["shaped"].get("error"))
    check.equal("shaped: output", json.dumps(wanted, separators=(",", ":")), results["shaped"].get("output"))
    expect_error(check, "without a shape", results["plain"], error("response-too-big", 200))
    return check.verdict()


@SUITE.case(
    "shaping/shape-failed",
    title="A shape on a body that is not JSON fails shape-failed, body withheld",
    requirement="A tool with a response_shape answered 200 with a body that is not JSON gives {status: error, "
                "kind: shape-failed, httpCode: 200}, and none of the body reaches the model.",
    spec=(running(ON_THE_WAY), SHAPE_CONTRACT,
          running("Your endpoint’s own response body is never forwarded on a failure")),
)
def shape_failed(target: PlatformTarget) -> Verdict:
    results = step(target, "shaping_failed", {"text": ("chars/64?char=z", {"response_shape": "orders[*].id"})})
    check = Check()
    expect_error(check, "a text body under a shape", results["text"], error("shape-failed", 200))
    expect_quiet(check, "a text body under a shape", results["text"], "zzzz")
    return check.verdict()


@SUITE.case(
    "shaping/error-fields",
    title="Error fields give the model the fields it may read, and never the rest",
    requirement="A tool with error_fields [code, message] answered 404 {code, message, trace} gives {status: error, "
                "kind: refused, httpCode: 404, details: {code, message}}, and never the trace.",
    spec=(running(ON_THE_WAY), ERROR_FIELDS_CONTRACT),
)
def error_fields(target: PlatformTarget) -> Verdict:
    results = step(target, "shaping_fields", {"fields": ("problem/404", {"error_fields": ["code", "message"]}),
                                              "plain": ("problem/404", {})})
    check = Check()
    expect_error(check, "with error fields", results["fields"], {
        **error("refused", 404), "details": {"code": "no_such_order", "message": "Order o-404 does not exist."}})
    expect_error(check, "without error fields", results["plain"], error("refused", 404))
    for label in ("fields", "plain"):
        expect_quiet(check, label, results[label], TRACE_MARK)
    return check.verdict()


@SUITE.case(
    "shaping/outcome-messages",
    title="Outcome messages reach the model in the business's own words",
    requirement="A tool's outcome_messages ride in the failure object as message, kind:status before kind "
                "(refused:404 and refused at 404 and 500); empty is the output of an empty 2xx; an outcome the "
                "tool does not word carries no message.",
    spec=(running(ON_THE_WAY), MESSAGES_CONTRACT),
)
def outcome_messages(target: PlatformTarget) -> Verdict:
    messages = {"refused:404": "There is no such order.", "refused": "The order service refused.",
                "empty": "There are no orders."}
    worded = {"outcome_messages": messages}
    results = step(target, "shaping_words", {"404": ("problem/404", worded), "500": ("status/500", worded),
                                             "204": ("status/204", worded), "503": ("status/503/empty", worded)})
    check = Check()
    expect_error(check, "HTTP 404", results["404"], {**error("refused", 404), "message": messages["refused:404"]})
    expect_error(check, "HTTP 500", results["500"], {**error("refused", 500), "message": messages["refused"]})
    check.equal("HTTP 204: output", messages["empty"], results["204"].get("output"))
    expect_error(check, "HTTP 503, empty (not worded)", results["503"], error("returned-nothing", 503))
    return check.verdict()
