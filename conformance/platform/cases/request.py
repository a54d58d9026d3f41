"""`request/…`: the request the platform builds from a definition and the model's arguments.

Echo tools of every method show the request exactly as it arrived: where each parameter went,
how a value was written, and that a path value stayed one segment of the path.
"""
from __future__ import annotations

from conformance.case import Check, Verdict
from conformance.platform.cases.failure import error, expect_error
from conformance.platform.client import PlatformTarget, brief, echoed, tool
from conformance.platform.suite import SUITE, defining, running, threats

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: A path value holding every character that could end or leave a path segment.
HOSTILE_SEGMENT = "a/b?c#d %é"
HOSTILE_ENCODED = "a%2Fb%3Fc%23d%20%25%C3%A9"


def _parameters(method: str) -> list[dict]:
    """A path value, scalars in the query, and (where the method carries a body) JSON fields."""
    found = [{"name": "order_id", "type": "string", "location": "path"},
             {"name": "status", "type": "string", "location": "query"},
             {"name": "limit", "type": "number", "location": "query"},
             {"name": "express", "type": "boolean", "location": "query"}]
    if method in ("POST", "PUT", "PATCH"):
        found += [{"name": "product_ids", "type": "array", "element_type": "string", "location": "body"},
                  {"name": "note", "type": "object", "location": "body"},
                  {"name": "quantity", "type": "number", "location": "body"},
                  {"name": "gift", "type": "boolean", "location": "body"}]
    return found


ARGUMENTS = {"order_id": "o-1001", "status": "open", "limit": 5, "express": True,
             "product_ids": ["p1", "p2"], "note": {"wrap": "paper"}, "quantity": 2.5, "gift": False}


@SUITE.case(
    "request/parameters-placed",
    title="Each parameter goes where its location says, with the method set",
    requirement="For each of GET, POST, PUT, PATCH and DELETE, the endpoint receives that method, the path "
                "value in its {placeholder}, query values as ?name=value, body values as fields of one JSON "
                "object; the model is offered an array with its element type.",
    spec=(running("the platform builds the HTTP request from the tool’s definition: the method and URL you set, "
                  "and each parameter placed where you told it to go, in the query string, the URL path, or the "
                  "JSON body."),
          defining("Query string — appended as ?name=value."),
          defining("Request body — sent as a JSON field."),
          defining("The model needs to know it is filling a list of, say, product IDs rather than a single one, "
                   "and the element type is how it is told.")),
)
def parameters_placed(target: PlatformTarget) -> Verdict:
    names = {method: target.name("request_placed", method.lower()) for method in METHODS}
    project = target.project("request-placed")
    target.publish_project(project, [
        tool(names[m], target.mock(names[m], "echo/orders/{order_id}"), method=m, parameters=_parameters(m))
        for m in METHODS])
    conversation = target.conversation(project)
    calls = [(names[m], {p["name"]: ARGUMENTS[p["name"]] for p in _parameters(m)}) for m in METHODS]
    results = conversation.step(conversation.turn(), *calls)
    check = Check()
    for method, result in zip(METHODS, results):
        seen = echoed(result)
        if not check.expect(seen is not None, f"{method}: the call", "an echo of the request", brief(result)):
            continue
        check.equal(f"{method}: method", method, seen.get("method"))
        check.equal(f"{method}: path", f"/tools/{names[method]}/echo/orders/o-1001", seen.get("path"))
        check.equal(f"{method}: query", {"status": ["open"], "limit": ["5"], "express": ["true"]},
                    (seen.get("query") or {}).get("parsed"))
        body = {k: ARGUMENTS[k] for k in ("product_ids", "note", "quantity", "gift")} if method in (
            "POST", "PUT", "PATCH") else None
        check.equal(f"{method}: JSON body", body, seen.get("json"))
    offered = {t.get("name"): t for t in conversation.tools()}
    schema = ((offered.get(names["POST"]) or {}).get("parameters") or {}).get("properties") or {}
    check.equal("the offered array parameter", {"type": "array", "items": {"type": "string"}},
                {k: v for k, v in (schema.get("product_ids") or {}).items() if k in ("type", "items")})
    return check.verdict()


@SUITE.case(
    "request/path-value-one-segment",
    title="A path value fills exactly one segment of the path",
    requirement=f"A path value {HOSTILE_SEGMENT!r} reaches the endpoint percent-encoded as one segment "
                f"({HOSTILE_ENCODED}); the values .. and . are refused as invalid-arguments, nothing called.",
    spec=(defining("URL path — substituted into a {placeholder} in your URL, so "
                   "https://api.example.com/orders/{orderId} becomes /orders/12345."),
          threats("A path value is one segment: `/`, `?`, `#`, `%`, CR/LF and spaces are percent-encoded; `.`, "
                  "`..` and the empty string are refused")),
)
def path_value_one_segment(target: PlatformTarget) -> Verdict:
    name, project = target.name("request_segment"), target.project("request-segment")
    target.publish_project(project, [tool(name, target.mock(name, "echo/orders/{order_id}"),
                                          parameters=[{"name": "order_id", "type": "string", "location": "path"}])])
    conversation = target.conversation(project)
    hostile, *dots = conversation.step(conversation.turn(), (name, {"order_id": HOSTILE_SEGMENT}),
                                       (name, {"order_id": ".."}), (name, {"order_id": "."}))
    check = Check()
    seen = echoed(hostile) or {}
    check.equal("the path the endpoint received", f"/tools/{name}/echo/orders/{HOSTILE_ENCODED}",
                seen.get("path", brief(hostile)))
    check.equal("the query the endpoint received", "", (seen.get("query") or {}).get("raw"))
    for value, result in zip(("..", "."), dots):
        expect_error(check, f"the path value {value!r}", result, error("invalid-arguments"))
    check.equal("calls the endpoint received", 1, len(target.calls_to(name)))
    return check.verdict()
