"""`mcp-project/…`: every published project is an MCP server for the person holding a session token.

The kit speaks to `/mcp/projects/{project}` as an MCP client would (`McpSession`, with the session token as the
Bearer and no elicitation capability), and reads what reached the mock as the other cases do.
"""
from __future__ import annotations

import json

from conformance.case import Check, Verdict
from conformance.platform.client import SUBJECT_IN_PATH, PlatformTarget, tool
from conformance.platform.mcp import McpSession, summary
from conformance.platform.suite import SUITE, contract, threats

#: Whose data a prompt-injected model would like to read.
SOMEONE_ELSE = "mallory"
METADATA = "/.well-known/oauth-protected-resource/mcp/projects/"


def _path(project: str) -> str:
    return f"/mcp/projects/{project}"


def _initialize(target: PlatformTarget, project: str, credential: str | None):
    return target.request("POST", f"{target.url}{_path(project)}", credential, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "kit", "version": "1"}}},
        {"Accept": "application/json, text/event-stream"})


def _result(answer: dict) -> dict:
    result = answer.get("result")
    return result if isinstance(result, dict) else {}


@SUITE.case(
    "mcp-project/person-only",
    title="A project's MCP server is for a person: no token is 401 naming the resource metadata, an API key is "
          "refused",
    requirement="initialize without a token is answered 401 with WWW-Authenticate: Bearer resource_metadata=\"…"
                "/.well-known/oauth-protected-resource/mcp/projects/{project}\"; with an admin API key it is 401 or "
                "403, and neither opens a session.",
    spec=(contract("with a session token (or a trusted provider's access token) as the Bearer; API keys are "
                   "refused."),
          contract('Without a token: 401 with `WWW-Authenticate: Bearer resource_metadata="{public_url}/'
                   '.well-known/oauth-protected-resource/mcp/projects/{project}"` (RFC 9728)'),
          threats("Redirects and links are built from the configured public URL, never from the `Host` header.")),
)
def person_only(target: PlatformTarget) -> Verdict:
    name, project = target.name("mcp_project_person"), target.project("mcp-project-person")
    target.publish_project(project, [tool(name, target.mock(name, "echo"))])
    check = Check()
    anonymous = _initialize(target, project, None)
    check.equal("initialize without a token", 401, anonymous.status)
    # The link is the configured public URL's, which is the URL the kit reaches the platform at.
    check.equal("its WWW-Authenticate", f'Bearer resource_metadata="{target.url}{METADATA}{project}"',
                anonymous.headers.get("WWW-Authenticate"))
    keyed = _initialize(target, project, target.admin_key)
    check.expect(keyed.status in (401, 403), "initialize with an admin API key", "HTTP 401 or 403",
                 keyed.describe())
    check.expect("Mcp-Session-Id" not in keyed.headers, "a session for the API key", "none",
                 keyed.headers.get("Mcp-Session-Id"))
    return check.verdict()


@SUITE.case(
    "mcp-project/offer-and-call",
    title="tools/list is the token's offer without the subject; tools/call is a step for the token's subject",
    requirement="A per-user tool is listed with an inputSchema that has no subject, and a tools/call naming another "
                "subject reaches the endpoint with the session's subject in the path and nobody else's.",
    spec=(contract("`tools/list` is what that token is offered (no subject, JSON Schema inputs); `tools/call` is a "
                   "step of one call"),
          threats("Any model-supplied `subject`, in any case, is never used; the endpoint's subject is the "
                  "session's.")),
)
def offer_and_call(target: PlatformTarget) -> Verdict:
    name, project = target.name("mcp_project_call"), target.project("mcp-project-call")
    target.publish_project(project, [tool(name, target.mock(name, "echo/users/{subject}"), scope="per_user",
                                          parameters=[SUBJECT_IN_PATH])])
    session = McpSession(target, target.session_token(), _path(project))
    check = Check()
    listed = _result(session.request("tools/list")).get("tools", [])
    offered = next((t for t in listed if isinstance(t, dict) and t.get("name") == name), None)
    check.expect(offered is not None, "the tool in tools/list", name, [t.get("name") for t in listed])
    schema = (offered or {}).get("inputSchema", {})
    check.expect("subject" not in json.dumps(schema), "its inputSchema", "no subject", schema)
    answer = session.call(name, {"subject": SOMEONE_ELSE})
    check.expect(_result(answer).get("isError") is False, "the call", "a result, not an error", summary(answer))
    paths = [c.get("path") for c in target.calls_to(name)]
    check.equal("the paths the endpoint received", [f"/tools/{name}/echo/users/{target.subject}"], paths)
    return check.verdict()


@SUITE.case(
    "mcp-project/failure-is-error-result",
    title="A failed call is an isError result holding the failure object, never the endpoint's body",
    requirement="A tools/call of a tool whose endpoint answers 500 is a result with isError true whose text is "
                '{"status": "error", "kind": "refused", "httpCode": 500}.',
    spec=(contract("a failure an `isError` result holding the failure object"),),
)
def failure_is_error_result(target: PlatformTarget) -> Verdict:
    name, project = target.name("mcp_project_failure"), target.project("mcp-project-failure")
    target.publish_project(project, [tool(name, target.mock(name, "status/500"))])
    session = McpSession(target, target.session_token(), _path(project))
    result = _result(session.call(name, {}))
    check = Check()
    check.equal("isError", True, result.get("isError"))
    content = result.get("content") or [{}]
    text = content[0].get("text") if isinstance(content[0], dict) else None
    try:
        failure = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        failure = text
    check.equal("the result's text", {"status": "error", "kind": "refused", "httpCode": 500}, failure)
    return check.verdict()


@SUITE.case(
    "mcp-project/held-without-elicitation",
    title="Without elicitation, a call needing approval is held pending and nothing is sent",
    requirement="A tools/call of a tool that requires approval, from a client that declared no elicitation, is a "
                "result (not an error) holding an approval with status pending, and the endpoint receives nothing.",
    spec=(contract("otherwise the call is held as a pending approval and nothing is sent."),),
)
def held_without_elicitation(target: PlatformTarget) -> Verdict:
    name, project = target.name("mcp_project_held"), target.project("mcp-project-held")
    target.publish_project(project, [tool(name, target.mock(name, "echo"), method="POST", requires_approval=True)])
    session = McpSession(target, target.session_token(), _path(project))
    answer = session.call(name, {})
    result = _result(answer)
    approval = (result.get("structuredContent") or {}).get("approval") or {}
    check = Check()
    check.expect(result.get("isError") is False, "the call", "a result, not an error", summary(answer))
    check.equal("the approval's status", "pending", approval.get("status"))
    check.equal("calls the endpoint received", 0, len(target.calls_to(name)))
    return check.verdict()
