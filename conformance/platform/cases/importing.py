"""`import/…`: importing tools from an OpenAPI document, held to every rule a registration is.

Each case writes a small OpenAPI document of its own whose server is the mock's echo for the tool it names, so an
imported tool, once published, is called like any other and the echo shows the request it built. An import is a
preview unless asked to apply; applying writes drafts only.
"""
from __future__ import annotations

import json
from typing import Any

from conformance.case import Check, Verdict
from conformance.platform.cases.lifecycle import draft_definition, versions
from conformance.platform.client import PlatformTarget, Reply, brief, echoed
from conformance.platform.suite import SUITE, approvals, contract, defining

NEEDS_AGENT_KEY = "this case needs --agent-key, an agent API key of the same organization"


def document(server: str, paths: dict[str, Any], **components: Any) -> str:
    """An OpenAPI 3.1 document calling `server`."""
    return json.dumps({"openapi": "3.1.0", "info": {"title": "Conformance kit", "version": "1"},
                       "servers": [{"url": server}], "paths": paths, "components": components})


def operation(operation_id: str, **more: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "summary": f"The {operation_id} operation of the conformance kit.",
            "responses": {"200": {"description": "Its answer"}}, **more}


def query(name: str, schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema}


def json_body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "properties": properties, "required": required}}}}


def imported(target: PlatformTarget, body: dict[str, Any], key: str | None = None) -> tuple[Reply, dict[str, dict]]:
    """POST /v1/tools/import; the reply and its operations by operationId."""
    reply = target.api("POST", "/v1/tools/import", body, key)
    operations = reply.body.get("operations") if reply.status == 200 and isinstance(reply.body, dict) else None
    return reply, {op.get("operation_id"): op for op in operations or [] if isinstance(op, dict)}


def rules_of(operation_: dict[str, Any] | None, key: str = "errors") -> list[tuple[Any, Any]]:
    return [(e.get("rule"), e.get("message")) for e in (operation_ or {}).get(key) or []]


def status_of(operation_: dict[str, Any] | None) -> Any:
    return (operation_ or {}).get("status")


@SUITE.case(
    "import/drafts-only",
    title="An import previews first, then writes drafts and never publishes",
    requirement="An import without apply answers each operation ready with the definition it becomes and writes "
                "nothing; with apply, each is created as a tool holding that definition as its draft, with no "
                "published version.",
    spec=(defining("Registering creates a draft and opens the editor, where you fill in the definition and the "
                   "parameters."),
          contract('`"apply"` (default `false`: a preview, nothing written)'),
          contract("Import only creates drafts.")),
)
def drafts_only(target: PlatformTarget) -> Verdict:
    name = target.name("import_drafts")
    text = document(target.mock(name, "echo"), {"/orders": {"get": operation(name, parameters=[
        query("status", {"type": "string", "enum": ["open", "shipped"]})])}})
    check = Check()
    reply, preview = imported(target, {"document": text})
    check.equal("the preview's status", 200, reply.status)
    check.equal("the operation's status in the preview", "ready", status_of(preview.get(name)))
    check.equal("the tool after a preview", 404, target.api("GET", f"/v1/tools/{name}").status)
    reply, applied = imported(target, {"document": text, "apply": True})
    check.equal("the operation's status when applied", "created", status_of(applied.get(name)))
    view = target.api("GET", f"/v1/tools/{name}")
    if check.equal("reading the imported tool", 200, view.status):
        check.equal("the draft's URL", target.mock(name, "echo/orders"), draft_definition(view.body).get("url"))
        check.equal("the draft's parameters", ["status"],
                    [p.get("name") for p in draft_definition(view.body).get("parameters") or []])
        check.equal("the tool's published versions", [], versions(view.body))
    return check.verdict()


@SUITE.case(
    "import/rules-apply",
    title="An imported operation is held to every rule, in the spec's sentences",
    requirement="An operation whose definition would break a rule (a body parameter on a GET) is refused with "
                "that rule's sentence and not written; an optional part breaking one (a list in the query "
                "string) is reported with the sentence and left out.",
    spec=(defining("A few configurations are unsafe or malformed, and the dashboard refuses them."),
          defining("A GET or DELETE request cannot carry a body parameter."),
          defining("This type cannot ride in that location.")),
)
def rules_apply(target: PlatformTarget) -> Verdict:
    refused, listed = target.name("import_rules_body"), target.name("import_rules_list")
    text = document(target.mock(refused, "echo"), {
        "/search": {"get": operation(refused, requestBody=json_body({"q": {"type": "string"}}, ["q"]))},
        "/list": {"get": operation(listed, parameters=[query("ids", {"type": "array", "items": {"type": "string"}})])},
    })
    check = Check()
    _, applied = imported(target, {"document": text, "apply": True})
    check.equal("the GET with a body parameter", "refused", status_of(applied.get(refused)))
    check.expect(("body-needs-body-method", "A GET or DELETE request cannot carry a body parameter.")
                 in rules_of(applied.get(refused)), "its errors", "body-needs-body-method with the spec's sentence",
                 rules_of(applied.get(refused)))
    check.equal("the refused operation's tool", 404, target.api("GET", f"/v1/tools/{refused}").status)
    check.equal("the GET with an optional list in the query", "created", status_of(applied.get(listed)))
    check.equal("what it does not carry", [("type-location-mismatch", "This type cannot ride in that location.")],
                rules_of(applied.get(listed), "not_carried"))
    return check.verdict()


@SUITE.case(
    "import/not-carried-reported",
    title="What a tool cannot carry is never dropped silently",
    requirement="A required header or a required array of objects refuses the operation with the reason; an "
                "optional nested object is reported as not carried, and the tool is imported without it.",
    spec=(defining("Elements are scalars, so an array of lists or an array of objects is not supported; if you "
                   "need to send structured records, send them as separate parameters or wait for nested shapes, "
                   "which are not modelled yet."),),
)
def not_carried_reported(target: PlatformTarget) -> Verdict:
    header, records, nested = (target.name("import_carried", part) for part in ("header", "records", "nested"))
    lines = {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}
    address = {"type": "object", "properties": {"city": {"type": "string"}}}
    text = document(target.mock(nested, "echo"), {
        "/a": {"get": operation(header, parameters=[{"name": "X-Tenant", "in": "header", "required": True,
                                                     "schema": {"type": "string"}}])},
        "/b": {"post": operation(records, requestBody=json_body({"lines": lines}, ["lines"]))},
        "/c": {"post": operation(nested, requestBody=json_body({"name": {"type": "string"}, "address": address},
                                                               ["name"]))},
    })
    check = Check()
    _, applied = imported(target, {"document": text, "apply": True})
    for name, part in ((header, "a required header"), (records, "a required array of objects")):
        check.equal(f"an operation with {part}", "refused", status_of(applied.get(name)))
        check.expect(bool(rules_of(applied.get(name))), f"the reason it gives for {part}", "a rule and a sentence",
                     rules_of(applied.get(name)))
    check.equal("an operation with an optional nested object", "created", status_of(applied.get(nested)))
    check.equal("how many parts it reports not carried", 1, len(rules_of(applied.get(nested), "not_carried")))
    view = target.api("GET", f"/v1/tools/{nested}")
    check.equal("the imported tool's parameters", ["name"],
                [p.get("name") for p in draft_definition(view.body or {}).get("parameters") or []])
    return check.verdict()


@SUITE.case(
    "import/subject-from-session",
    title="The parameter naming the person becomes the subject, filled from the session",
    requirement="Importing with subject_parameter makes an operation taking that path parameter a per-user tool "
                "with {subject} in its place; published and called, its request carries the session's subject.",
    spec=(defining("Per-user tools must have a subject parameter that the portal fills in automatically from the "
                   "session token."),
          defining("Give it a location like any other parameter, often the URL path, as in "
                   "/users/{subject}/orders.")),
)
def subject_from_session(target: PlatformTarget) -> Verdict:
    name, project = target.name("import_subject"), target.project("import-subject")
    user = {"name": "userId", "in": "path", "required": True, "schema": {"type": "integer"}}
    text = document(target.mock(name, "echo"), {"/users/{userId}/orders": {"get": operation(name, parameters=[
        user, query("status", {"type": "string"})])}})
    target.create_project(project)
    check = Check()
    _, applied = imported(target, {"document": text, "subject_parameter": "userId", "project": project,
                                   "apply": True})
    definition = (applied.get(name) or {}).get("definition") or {}
    check.equal("the operation's status", "created", status_of(applied.get(name)))
    check.equal("the imported tool's scope", "per_user", definition.get("scope"))
    check.equal("its URL", target.mock(name, "echo/users/{subject}/orders"), definition.get("url"))
    if check.violations:
        return check.verdict()  # nothing worth calling was imported
    pinned = target.api("PUT", f"/v1/projects/{project}/draft", {"pins": [{"tool": name, "version": "draft"}]})
    published = target.api("POST", f"/v1/projects/{project}/publish")
    if not (check.equal("pinning the imported draft", 200, pinned.status)
            and check.equal("publishing the project", 201, published.status)):
        return check.verdict()
    result = target.conversation(project).call(name, {"status": "open"})
    seen = echoed(result) or {}
    check.equal("the path the endpoint received", f"/tools/{name}/echo/users/{target.subject}/orders",
                seen.get("path", brief(result)))
    return check.verdict()


@SUITE.case(
    "import/agent-drafts",
    title="An agent imports into drafts",
    requirement="With an agent key an import with apply creates the tools as drafts, recorded as the agent's, "
                "with no published version.",
    spec=(defining("An agent only ever writes to a draft."),
          contract("`POST /v1/tools/import` (admin or agent)")),
)
def agent_drafts(target: PlatformTarget) -> Verdict:
    if target.agent_key is None:
        return Verdict.errored(NEEDS_AGENT_KEY)
    name = target.name("import_agent")
    text = document(target.mock(name, "echo"), {"/profile": {"get": operation(name)}})
    check = Check()
    reply, applied = imported(target, {"document": text, "apply": True}, key=target.agent_key)
    check.equal("the agent's import", 200, reply.status)
    check.equal("the operation's status", "created", status_of(applied.get(name)))
    view = target.api("GET", f"/v1/tools/{name}")
    draft = (view.body or {}).get("draft") or {}
    check.expect(str(draft.get("updated_by", "")).startswith("agent:"), "who wrote the draft", "the agent's key",
                 draft.get("updated_by"))
    check.equal("the tool's published versions", [], versions(view.body or {}))
    return check.verdict()


@SUITE.case(
    "import/unreadable-refused",
    title="A document that cannot be read safely is refused whole, and nothing is written",
    requirement="A billion-laughs YAML document and a Swagger 2.0 document each answer 422 on document, and "
                "no tool they name is written.",
    spec=(defining("A few configurations are unsafe or malformed, and the dashboard refuses them."),
          contract("A document that cannot be read is 422 on `document`.")),
)
def unreadable_refused(target: PlatformTarget) -> Verdict:
    name = target.name("import_laughs")
    laughs = [f"openapi: 3.1.0\npaths:\n  /a:\n    get:\n      operationId: {name}\n      summary: Laughs",
              'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    laughs += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    swagger = json.dumps({"swagger": "2.0", "info": {"title": "old", "version": "1"},
                          "paths": {"/a": {"get": {"operationId": name, "summary": "Old"}}}})
    check = Check()
    for what, text in (("a billion-laughs YAML document", "\n".join(laughs) + "\n"), ("a Swagger 2.0 document",
                                                                                      swagger)):
        reply = target.api("POST", "/v1/tools/import", {"document": text, "apply": True})
        check.equal(f"importing {what}", 422, reply.status)
        check.equal(f"the field refused for {what}", ["document"], [v.get("field") for v in reply.violations()])
    check.equal("the tool the documents name", 404, target.api("GET", f"/v1/tools/{name}").status)
    return check.verdict()


@SUITE.case(
    "import/approval-default",
    title="An imported operation requires approval as GPT Actions decides, and the preview says so",
    requirement="With no x-openai-isConsequential, a GET is imported as an ordinary tool and a POST or DELETE as "
                "one whose calls wait for the person's approval; the mark, where present, decides either way (a "
                "GET marked true waits, a DELETE marked false does not). The preview gives each operation's "
                "approval with a reason, as the drafts are then written.",
    spec=(approvals("Imported from an OpenAPI document, an operation requires approval as GPT Actions decides: "
                    "`x-openai-isConsequential` where the operation has it, true or false, on any method; else not "
                    "for GET and HEAD, and so for every other method."),
          approvals("The import's preview says which for each operation, and why, before anything is written."),
          contract("An operation's `requires_approval` follows GPT Actions")),
)
def approval_default(target: PlatformTarget) -> Verdict:
    names = {part: target.name("import_approval", part) for part in ("get", "post", "delete", "get_marked",
                                                                      "delete_marked")}
    mark = "x-openai-isConsequential"
    text = document(target.mock(names["get"], "echo"), {
        "/orders": {"get": operation(names["get"]), "post": operation(names["post"])},
        "/orders/{id}": {"parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                         "delete": operation(names["delete"])},
        "/exports": {"get": operation(names["get_marked"], **{mark: True})},
        "/carts": {"delete": operation(names["delete_marked"], **{mark: False})},
    })
    expected = {"get": False, "post": True, "delete": True, "get_marked": True, "delete_marked": False}
    check = Check()
    reply, preview = imported(target, {"document": text})
    check.equal("the preview's status", 200, reply.status)
    for part, required in expected.items():
        approval = (preview.get(names[part]) or {}).get("approval") or {}
        check.equal(f"the preview's approval of {part.replace('_', ' ')}", required, approval.get("required"))
        check.expect(isinstance(approval.get("why"), str) and bool(approval.get("why")),
                     f"why the preview gives for {part.replace('_', ' ')}", "a sentence", approval.get("why"))
    _, applied = imported(target, {"document": text, "apply": True})
    for part, required in expected.items():
        check.equal(f"{part.replace('_', ' ')} when applied", "created", status_of(applied.get(names[part])))
        view = target.api("GET", f"/v1/tools/{names[part]}")
        check.equal(f"the draft's requires_approval for {part.replace('_', ' ')}", required,
                    draft_definition(view.body or {}).get("requires_approval"))
    return check.verdict()
