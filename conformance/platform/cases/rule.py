"""`rule/…`: every validation rule and failure mode of the spec, with its exact message.

The rule vectors (conformance/data/rule_vectors.json) are the data: each is a definition and the
violations a registry must answer with, all at once; an empty list means the definition must be
accepted (the nearest valid definitions). One case per vector, `rule/<vector id>`. Two rules need
more than one request and are cases of their own: a taken name, and a save validated whole.
"""
from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.case import Case, Check, SpecRef, Verdict
from conformance.platform.client import PlatformTarget, expect_status, tool
from conformance.platform.mcp import McpSession, succeeded, summary
from conformance.platform.suite import SUITE, approvals, contract, defining

VECTORS_FILE = Path(__file__).resolve().parents[2] / "data" / "rule_vectors.json"
VECTORS: list[dict[str, Any]] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["vectors"]

ALL_AT_ONCE = contract("Rule violations answer 422 (a taken tool name: 409) with every violated rule at once")
WORD_FOR_WORD = contract("The `message` is the spec's sentence, word for word")

#: Where the spec says each rule (for rules the spec does not word, the passage that implies it).
RULE_SPEC: dict[str, tuple[SpecRef, ...]] = {
    "duplicate-parameter": (defining("“A parameter with this name already exists on this tool.”"),),
    "per-user-needs-subject": (defining("“A per-user tool needs a subject parameter.”"),),
    "subject-must-be-string": (defining("“The subject parameter must be a string.”"),),
    "session-start-only-subject": (
        defining("“A tool that runs at session start may declare only the subject parameter.”"),),
    "session-start-no-approval": (
        approvals("A session-start tool cannot require approval: no person is there to approve before the first "
                  "reply."),),
    "body-needs-body-method": (defining("“A GET or DELETE request cannot carry a body parameter.”"),),
    "path-needs-placeholder": (defining("“A path parameter needs a matching placeholder in the URL.”"),),
    "type-location-mismatch": (defining("“This type cannot ride in that location.”"),),
    "array-needs-element-type": (defining("“An array parameter must say what its elements are.”"),),
    "element-type-only-on-array": (defining("“Only an array parameter has an element type.”"),),
    "name-format": (defining("Use letters, digits, and underscores, with no spaces or symbols, and don’t "
                             "start with a digit."),),
    "name-reserved": (defining("Tool name. The function name the model calls, unique across your organization."),
                      contract("`POST /v1/tools/import` (admin or agent)")),
    "shared-has-no-subject": (defining("Shared tools take no subject parameter, because a shared tool’s "
                                       "response must not depend on who is asking."),),
    "placeholder-needs-parameter": (defining("substituted into a {placeholder} in your URL"),
                                    contract("a placeholder with no parameter")),
    "url-format": (defining("The HTTP method and address the platform calls."), contract("URL and method")),
    "method-unsupported": (defining("The HTTP method and address the platform calls."),
                           contract("URL and method")),
    "scope-unsupported": (contract("`scope`: `shared` | `per_user`."),),
    "type-unsupported": (contract("`type`: `string` `number` `boolean` `array` `object`."),),
    "location-unsupported": (contract("`location`: `query` `path` `body`."),),
    "element-type-unsupported": (defining("pick an element type of string, number, or boolean."),),
    "description-required": (defining("Description. Written for the model."),),
    "parameter-name-format": (defining("The subject is a reserved parameter that names who a per-user tool is "
                                       "acting for."),),
    "entitlement-format": (defining("An optional claim such as products:write that the user’s session token must "
                                    "carry for the tool to be available to the model."),),
}
#: What a tool lets the model see (docs/shaping.md): rules the contract states, the spec announces.
_SHAPE = contract("`response_shape`, a JMESPath expression applied to a 2xx JSON body, whose result is what the model "
                  "gets")
_ERROR_FIELDS = contract("`error_fields`, top-level fields of a JSON error body the model may read, carried as the "
                         "failure object's `details`")
_MESSAGES = contract("`outcome_messages`, `{\"<kind>\" or \"<kind>:<status>\": \"sentence\"}`, carried as the "
                     "failure object's `message`.")
RULE_SPEC.update({
    "shape-unparsable": (_SHAPE,),
    "error-field-format": (_ERROR_FIELDS,),
    "error-field-duplicate": (_ERROR_FIELDS,),
    "too-many-error-fields": (_ERROR_FIELDS,),
    "outcome-key-format": (_MESSAGES,),
    "outcome-message-format": (_MESSAGES,),
    "too-many-outcome-messages": (_MESSAGES,),
})

ACCEPTED_SPEC = (
    defining("A few configurations are unsafe or malformed, and the dashboard refuses them."),
    defining("Registering creates a draft and opens the editor"),
)
#: What else an accepted vector's definition relies on, by vector id.
ACCEPTED_ALSO: dict[str, tuple[SpecRef, ...]] = {
    "valid-requires-approval": (approvals("A tool whose `requires_approval` is true (it is false by default) has "
                                          "each of its calls wait for the person's approval."),),
    "valid-shaping": (_SHAPE, _ERROR_FIELDS, _MESSAGES),
}


def _named(target: PlatformTarget, vector: dict[str, Any]) -> dict[str, Any]:
    """The vector's definition under a name of this run, unless the name is what the vector tests."""
    definition = dict(vector["definition"])
    if not any(v["rule"] in ("name-format", "name-reserved") for v in vector["violations"]):
        definition["name"] = target.name("rule", vector["id"])
    return definition


def _triples(violations: list[Any]) -> Counter:
    return Counter((v.get("field"), v.get("rule"), v.get("message")) if isinstance(v, dict) else repr(v)
                   for v in violations)


def check_vector(vector: dict[str, Any], target: PlatformTarget) -> Verdict:
    """Register the vector's definition; expect exactly its violations (422), or acceptance (201)."""
    definition = _named(target, vector)
    reply = target.register(definition)
    check = Check()
    if not vector["violations"]:
        check.expect(reply.status == 201, "registering a valid definition", "HTTP 201", reply.describe())
        return check.verdict()
    check.expect(reply.status == 422, "status", "HTTP 422", reply.describe())
    expected, actual = _triples(vector["violations"]), _triples(reply.violations())
    for field, rule, message in sorted((expected - actual).elements()):
        check.fail(f"violation {rule} at {field}", f"{{field: {field}, rule: {rule}, message: {message!r}}}",
                   "missing" if not actual else f"only {sorted(actual)}")
    for extra in sorted((actual - expected).elements(), key=repr):
        check.fail("unexpected violation", "none besides the expected ones", extra)
    if reply.status != 201 and definition["name"].startswith(target.run):
        after = target.api("GET", f"/v1/tools/{definition['name']}")
        check.expect(after.status == 404, "the refused tool afterwards", "not registered (HTTP 404)",
                     after.describe())
    return check.verdict()


def _spec_for(vector: dict[str, Any]) -> tuple[SpecRef, ...]:
    if not vector["violations"]:
        return ACCEPTED_SPEC + ACCEPTED_ALSO.get(vector["id"], ())
    refs: list[SpecRef] = []
    for violation in vector["violations"]:
        refs += [ref for ref in RULE_SPEC[violation["rule"]] if ref not in refs]
    return tuple(refs) + (ALL_AT_ONCE, WORD_FOR_WORD)


def _requirement(vector: dict[str, Any]) -> str:
    if not vector["violations"]:
        return f"The registry accepts a valid definition: {vector['title'].lower()} (HTTP 201)."
    listed = "; ".join(f"{v['rule']} at {v['field']}: “{v['message']}”" for v in vector["violations"])
    return (f"The registry refuses {vector['title'].lower()} with HTTP 422 and exactly these "
            f"violations, each with its sentence word for word: {listed}")


for _vector in VECTORS:
    SUITE.add(Case(
        id=f"rule/{_vector['id']}",
        title=("Accepted: " if not _vector["violations"] else "Refused: ") + _vector["title"],
        requirement=_requirement(_vector),
        spec=_spec_for(_vector),
        check=functools.partial(check_vector, _vector),
    ))

NAME_TAKEN = "A tool with this name already exists."
DESCRIPTION_REQUIRED = "A tool needs a description, written for the model."


@SUITE.case(
    "rule/name-taken",
    title="A tool name is unique across org-wide and project tools",
    requirement=f"Registering a second tool under a taken name, org-wide or in a project, is refused with "
                f"HTTP 409 and “{NAME_TAKEN}”; a definition that also breaks another rule gets HTTP 409 listing "
                f"both at once.",
    spec=(defining("“A tool with this name already exists.” Names are unique across your organization, "
                   "spanning both org-wide and project-specific tools."),
          contract("Rule violations answer 422 (a taken tool name: 409) with every violated rule at once")),
)
def name_taken(target: PlatformTarget) -> Verdict:
    """The same name again: org-wide after org-wide, in a project after org-wide, and the reverse."""
    project = target.project("rule-name-taken")
    target.create_project(project)
    shared, local = target.name("rule_name_taken_a"), target.name("rule_name_taken_b")
    url = target.mock(shared, "echo")
    expect_status(target.register(tool(shared, url)), 201, "registering the first tool")
    expect_status(target.register(tool(local, url, project=project)), 201, "registering a project tool")
    check = Check()
    for label, definition in [("org-wide again", tool(shared, url)),
                              ("in a project, taken org-wide", tool(shared, url, project=project)),
                              ("org-wide, taken in a project", tool(local, url))]:
        reply = target.register(definition)
        check.expect(reply.status == 409, f"{label}: status", "HTTP 409", reply.describe())
        check.expect(("name", "name-taken", NAME_TAKEN) in _triples(reply.violations()),
                     f"{label}: violation", f"{{field: name, rule: name-taken, message: {NAME_TAKEN!r}}}",
                     reply.violations())
    reply = target.register({**tool(shared, url), "description": ""})
    check.expect(reply.status == 409, "taken, and with no description: status", "HTTP 409", reply.describe())
    both = [("description", "description-required", DESCRIPTION_REQUIRED), ("name", "name-taken", NAME_TAKEN)]
    check.equal("taken, and with no description: violations", both,
                sorted(_triples(reply.violations()).elements()))
    return check.verdict()


PATH_NEEDS_PLACEHOLDER = "A path parameter needs a matching placeholder in the URL."


@SUITE.case(
    "rule/save-validates-together",
    title="Saving a draft validates the whole definition together",
    requirement="A save that adds a {placeholder} and moves the parameter to the path in one edit is "
                "accepted; a save that breaks a rule is refused with the rule's sentence and leaves the "
                "draft as it was.",
    spec=(defining("Add the {placeholder} to the URL and set the parameter’s location to the path in the "
                   "same edit; Save validates them together."),
          defining("A few configurations are unsafe or malformed, and the dashboard refuses them.")),
)
def save_validates_together(target: PlatformTarget) -> Verdict:
    """Register with a query parameter; move it to the path in one save; then try to break it."""
    name = target.name("rule_save_together")
    query = {"name": "id", "type": "string", "location": "query"}
    expect_status(target.register(tool(name, target.mock(name, "echo"), parameters=[query])), 201,
                  "registering the tool")
    moved = tool(name, target.mock(name, "echo/{id}"), parameters=[{**query, "location": "path"}])
    check = Check()
    reply = target.api("PUT", f"/v1/tools/{name}/draft", moved)
    check.expect(reply.status == 200, "placeholder and path parameter saved in one edit", "HTTP 200",
                 reply.describe())
    broken = tool(name, target.mock(name, "echo"), parameters=[{**query, "location": "path"}])
    reply = target.api("PUT", f"/v1/tools/{name}/draft", broken)
    check.expect(reply.status == 422, "a save breaking a rule: status", "HTTP 422", reply.describe())
    check.expect(("parameters[0].location", "path-needs-placeholder", PATH_NEEDS_PLACEHOLDER)
                 in _triples(reply.violations()), "a save breaking a rule: violation",
                 f"path-needs-placeholder at parameters[0].location: {PATH_NEEDS_PLACEHOLDER!r}",
                 reply.violations())
    draft = (target.read_tool(name).get("draft") or {}).get("definition", {})
    check.equal("the draft's URL after the refused save", moved["url"], draft.get("url"))
    return check.verdict()


#: The rules the spec says are refused for tools registered over MCP.
OVER_MCP = ("subject-must-be-string", "array-needs-element-type", "element-type-only-on-array")


@SUITE.case(
    "rule/mcp-same-rules",
    title="A tool registered over MCP is refused by the same rules",
    requirement="MCP's register_tool refuses a non-string subject, an array with no element type and an element "
                "type on a non-array, each as a tool error listing exactly the vector's violations.",
    spec=(defining("a tool registered over MCP with a non-string subject is refused"),
          defining("a tool registered over MCP without one is refused"),
          defining("A non-array parameter carries an element type, usually from a tool registered over MCP.")),
)
def mcp_same_rules(target: PlatformTarget) -> Verdict:
    session = McpSession(target, target.agent_key or target.admin_key)
    check = Check()
    for vector in (v for v in VECTORS if v["id"] in OVER_MCP):
        answer = session.call("register_tool", _named(target, vector))
        content = (answer.get("result") or {}).get("structuredContent") or {}
        check.expect(not succeeded(answer), f"{vector['id']}: register_tool", "a tool error", summary(answer))
        check.equal(f"{vector['id']}: violations", sorted(_triples(vector["violations"]).elements(), key=repr),
                    sorted(_triples(content.get("errors") or []).elements(), key=repr))
    return check.verdict()
