"""`lifecycle/…` of agents: an agent edits drafts, over the REST API and over MCP, and never publishes.

An agent key is needed (`--agent-key`; the kit makes one when it starts its own platform).
"""
from __future__ import annotations

from conformance.case import Check, Verdict
from conformance.platform.cases.lifecycle import draft_definition, versions
from conformance.platform.client import PlatformTarget, tool
from conformance.platform.mcp import McpSession, succeeded, summary
from conformance.platform.suite import SUITE, contract, defining

NEEDS_AGENT_KEY = "this case needs --agent-key, an agent API key of the same organization"


@SUITE.case(
    "lifecycle/agent-cannot-publish",
    title="An agent writes drafts but never publishes",
    requirement="An agent key may register and save drafts, but publishing a tool or a project with it is "
                "refused with 403, and nothing is published.",
    spec=(defining("An agent only ever writes to a draft."),
          defining("it stays a person’s deliberate step and is never something an agent does"),
          contract("`agent` keys get 403")),
)
def agent_cannot_publish(target: PlatformTarget) -> Verdict:
    if target.agent_key is None:
        return Verdict.errored(NEEDS_AGENT_KEY)
    name, project = target.name("lifecycle_agent"), target.project("lifecycle-agent")
    agent = target.agent_key
    check = Check()
    reply = target.register(tool(name, target.mock(name, "echo")), key=agent)
    check.expect(reply.status == 201, "the agent registering a tool", "HTTP 201", reply.describe())
    reply = target.api("PUT", f"/v1/tools/{name}/draft", tool(name, target.mock(name, "echo/saved")), key=agent)
    check.expect(reply.status == 200, "the agent saving the draft", "HTTP 200", reply.describe())
    target.create_project(project)
    target.pin(project, [{"tool": name, "version": "draft"}])
    check.equal("the agent publishing the tool", 403,
                target.api("POST", f"/v1/tools/{name}/publish", key=agent).status)
    check.equal("the agent publishing the project", 403,
                target.api("POST", f"/v1/projects/{project}/publish", key=agent).status)
    check.equal("the tool's versions", [], versions(target.read_tool(name)))
    check.equal("the project's versions", [],
                (target.api("GET", f"/v1/projects/{project}").body or {}).get("versions"))
    return check.verdict()


@SUITE.case(
    "lifecycle/agent-drafts-over-mcp",
    title="Over MCP an agent registers and saves drafts, and has no way to publish",
    requirement="With an agent key, MCP's register_tool and save_draft succeed and the tool holds the saved "
                "draft and no version; tools/list offers no tool that publishes, and calling one fails.",
    spec=(defining("You can manage tools using an agent."), defining("An agent only ever writes to a draft."),
          contract("Tools to list, read, validate, register and edit drafts; there is no way to publish.")),
)
def agent_drafts_over_mcp(target: PlatformTarget) -> Verdict:
    if target.agent_key is None:
        return Verdict.errored(NEEDS_AGENT_KEY)
    name = target.name("lifecycle_mcp")
    session = McpSession(target, target.agent_key)
    check = Check()
    registered = session.call("register_tool", tool(name, target.mock(name, "echo")))
    check.expect(succeeded(registered), "register_tool", "a result, not an error", summary(registered))
    saved_url = target.mock(name, "echo/saved")
    saved = session.call("save_draft", tool(name, saved_url))
    check.expect(succeeded(saved), "save_draft", "a result, not an error", summary(saved))
    publishing = [n for n in session.tool_names() if "publish" in str(n).lower()]
    check.equal("tools offered that publish", [], publishing)
    refused = session.call("publish_tool", {"name": name})
    check.expect(not succeeded(refused), "calling publish_tool", "an error", summary(refused))
    view = target.read_tool(name)
    check.equal("the draft's URL", saved_url, draft_definition(view).get("url"))
    check.equal("the tool's versions", [], versions(view))
    return check.verdict()
