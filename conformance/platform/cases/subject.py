"""`subject/…`: the reserved subject is filled from the session token, never from the model.

Per-user echo tools show the request exactly as the platform built it, so the kit can see whose
identity went into the path, the query or the body, and whether anything the model said got in.
"""
from __future__ import annotations

import json

from conformance.case import Check, Verdict
from conformance.platform.client import SUBJECT_IN_PATH, PlatformTarget, brief, echoed, tool
from conformance.platform.suite import SUITE, defining, running, threats

#: Whose data a prompt-injected model would like to read.
SOMEONE_ELSE = "mallory"


@SUITE.case(
    "subject/filled-from-session",
    title="The subject is filled from the session token",
    requirement="A per-user tool with {subject} in its URL path is called with the session's subject there.",
    spec=(running("The platform fills the subject from the session token, never from the model"),
          defining("Give it a location like any other parameter, often the URL path, as in "
                   "/users/{subject}/orders.")),
)
def filled_from_session(target: PlatformTarget) -> Verdict:
    name, project = target.name("subject_filled"), target.project("subject-filled")
    target.publish_project(project, [tool(name, target.mock(name, "echo/users/{subject}/orders"),
                                          scope="per_user", parameters=[SUBJECT_IN_PATH])])
    result = target.conversation(project).call(name)
    seen = echoed(result) or {}
    check = Check()
    check.equal("the path the endpoint received", f"/tools/{name}/echo/users/{target.subject}/orders",
                seen.get("path", brief(result)))
    return check.verdict()


@SUITE.case(
    "subject/any-location",
    title="The subject goes wherever its location says",
    requirement="A per-user tool with the subject in the query string gets ?subject=<session subject>; one "
                "with the subject in the JSON body of a POST gets it as the body's subject field.",
    spec=(defining("Give it a location like any other parameter"),
          running("If the tool is per-user, its request carries a subject parameter: the identity of the "
                  "person the turn is for.")),
)
def any_location(target: PlatformTarget) -> Verdict:
    query, body = target.name("subject_query"), target.name("subject_body")
    project = target.project("subject-location")
    target.publish_project(project, [
        tool(query, target.mock(query, "echo"), scope="per_user",
             parameters=[{"name": "subject", "type": "string", "location": "query"}]),
        tool(body, target.mock(body, "echo"), scope="per_user", method="POST",
             parameters=[{"name": "subject", "type": "string", "location": "body"}]),
    ])
    conversation = target.conversation(project)
    in_query, in_body = conversation.step(conversation.turn(), (query, {}), (body, {}))
    check = Check()
    check.equal("the query string's subject", [target.subject],
                ((echoed(in_query) or {}).get("query") or {}).get("parsed", {}).get("subject", brief(in_query)))
    check.equal("the JSON body's subject", target.subject,
                ((echoed(in_body) or {}).get("json") or {}).get("subject", brief(in_body)))
    return check.verdict()


@SUITE.case(
    "subject/model-cannot-supply",
    title="A subject the model supplies never reaches the endpoint",
    requirement=f"A call whose arguments name another subject ({SOMEONE_ELSE!r}, in any case of the word "
                "subject) reaches the endpoint, if at all, with the session's subject and no trace of the "
                "other.",
    spec=(running("So a message crafted to say “fetch someone else’s orders” cannot change whose orders are "
                  "fetched."),
          defining("Because the model can never supply the subject"),
          threats("Any model-supplied `subject`, in any case, is never used")),
)
def model_cannot_supply(target: PlatformTarget) -> Verdict:
    name, project = target.name("subject_model"), target.project("subject-model")
    parameters = [SUBJECT_IN_PATH, {"name": "q", "type": "string", "location": "query", "required": False}]
    target.publish_project(project, [tool(name, target.mock(name, "echo/{subject}"), scope="per_user",
                                          parameters=parameters)])
    conversation = target.conversation(project)
    attempts = [{"subject": SOMEONE_ELSE, "q": "orders"}, {"Subject": SOMEONE_ELSE},
                {"SUBJECT": SOMEONE_ELSE, "q": "orders"}]
    results = conversation.step(conversation.turn(), *[(name, args) for args in attempts])
    check = Check()
    for arguments, result in zip(attempts, results):
        label = f"arguments {json.dumps(arguments)}"
        seen = echoed(result)
        if seen is None:  # refused before any call: the model's subject went nowhere
            check.expect("error" in result, label, "a call for the session's subject, or an error", brief(result))
            continue
        check.equal(f"{label}: path", f"/tools/{name}/echo/{target.subject}", seen.get("path"))
        leaked = [part for part in ("path", "query", "headers", "body")
                  if SOMEONE_ELSE in json.dumps(seen.get(part)).lower()]
        check.equal(f"{label}: parts of the request holding the model's subject", [], leaked)
    return check.verdict()


@SUITE.case(
    "subject/not-offered",
    title="The model never sees the subject parameter",
    requirement="The JSON Schema offered to the model for a per-user tool has no subject property and does "
                "not require one, while its other parameters are there.",
    spec=(defining("the platform fills the subject from the session token, and the model never sees it"),
          running("the model never even sees that the parameter exists")),
)
def not_offered(target: PlatformTarget) -> Verdict:
    name, project = target.name("subject_hidden"), target.project("subject-hidden")
    parameters = [SUBJECT_IN_PATH, {"name": "status", "type": "string", "location": "query"}]
    target.publish_project(project, [tool(name, target.mock(name, "echo/{subject}"), scope="per_user",
                                          parameters=parameters)])
    offered = {t.get("name"): t for t in target.conversation(project).tools()}
    schema = (offered.get(name) or {}).get("parameters") or {}
    check = Check()
    properties = sorted((schema.get("properties") or {}).keys())
    check.equal("the offered tool's properties", ["status"], properties)
    check.expect(not any(str(r).lower() == "subject" for r in schema.get("required") or []),
                 "the offered tool's required list", "without subject", schema.get("required"))
    return check.verdict()
