"""`lifecycle/…` of a project: a draft version pinning tool drafts, a publish that cascades, a frozen version.

Where the promise is about what a project serves, the case checks which URL the mock was called at.
"""
from __future__ import annotations

from typing import Any

from conformance.case import Check, Verdict
from conformance.platform.cases.lifecycle import versions
from conformance.platform.client import (
    Conversation,
    PlatformTarget,
    echoed,
    expect_status,
    published_number,
    tool,
)
from conformance.platform.suite import SUITE, contract, defining


@SUITE.case(
    "lifecycle/draft-project-pins-draft-tool",
    title="A project draft can pin and serve a tool draft",
    requirement="A project's draft version may pin a tool's draft, and a conversation on that draft version "
                "calls the draft's URL; nothing is published.",
    spec=defining("A project version that is still a draft can pin a draft of a tool, so you can exercise an "
                  "unreleased tool in your test environment before publishing."),
)
def draft_project_pins_draft_tool(target: PlatformTarget) -> Verdict:
    name, project = target.name("lifecycle_draft_pin"), target.project("lifecycle-draft-pin")
    target.create_project(project)
    expect_status(target.register(tool(name, target.mock(name, "echo/unreleased"))), 201, "registering")
    check = Check()
    reply = target.api("PUT", f"/v1/projects/{project}/draft", {"pins": [{"tool": name, "version": "draft"}]})
    check.expect(reply.status == 200, "pinning the tool's draft", "HTTP 200", reply.describe())
    token = target.session_token()
    opened = target.open(project, token, "draft")
    if check.expect(opened.status == 201, "opening a conversation on the draft version", "HTTP 201",
                    opened.describe()):
        result = Conversation(target, token, opened.body).call(name)
        path = (echoed(result) or {}).get("path", result.get("error"))
        check.expect(str(path).endswith("/echo/unreleased"), "the call", "made to the draft's URL", path)
    check.equal("the tool's versions", [], versions(target.read_tool(name)))
    return check.verdict()


@SUITE.case(
    "lifecycle/project-publish-cascade",
    title="Publishing a project version publishes the tool drafts it pins",
    requirement="Publishing a project draft that pins a tool's draft answers 201, publishes that draft as the "
                "tool's version 1 (no draft left), and the project version pins version 1, not a draft.",
    spec=(defining("Publishing the project version publishes any draft tool it pins first, so a published "
                   "project version only ever pins published tools."),
          contract("publishes every tool draft it pins, then freezes itself, in one transaction")),
)
def project_publish_cascade(target: PlatformTarget) -> Verdict:
    name, project = target.name("lifecycle_cascade"), target.project("lifecycle-cascade")
    target.create_project(project)
    expect_status(target.register(tool(name, target.mock(name, "echo"))), 201, "registering")
    target.pin(project, [{"tool": name, "version": "draft"}])
    check = Check()
    reply = target.api("POST", f"/v1/projects/{project}/publish")
    check.expect(reply.status == 201 and published_number(reply) == 1, "publishing the project",
                 'HTTP 201 {"version": 1}', reply.describe())
    view = target.read_tool(name)
    check.equal("the tool's versions", [1], versions(view))
    check.equal("the tool's draft", None, view.get("draft"))
    published = (target.api("GET", f"/v1/projects/{project}").body or {}).get("versions") or [{}]
    check.equal("the project version's pins", [{"tool": name, "version": 1}], published[-1].get("pins"))
    return check.verdict()


@SUITE.case(
    "lifecycle/published-project-frozen",
    title="A published project version keeps serving what it pinned",
    requirement="After a tool's next version and a new draft change its URL, a conversation on the project "
                "version that pinned version 1 still calls version 1's URL.",
    spec=(defining("A published tool version is what a project version pins and freezes into what your "
                   "project serves."),
          defining("a published project version pins a tool and serves it under this name, so renaming it "
                   "would change what a frozen version calls")),
)
def published_project_frozen(target: PlatformTarget) -> Verdict:
    name, project = target.name("lifecycle_frozen"), target.project("lifecycle-frozen")
    version = target.publish_project(project, [tool(name, target.mock(name, "echo/v1"))])
    expect_status(target.api("POST", f"/v1/tools/{name}/draft"), 201, "starting a new draft")
    expect_status(target.api("PUT", f"/v1/tools/{name}/draft", tool(name, target.mock(name, "echo/v2"))),
                  200, "saving the new draft")
    expect_status(target.api("POST", f"/v1/tools/{name}/publish"), 201, "publishing version 2")
    expect_status(target.api("POST", f"/v1/tools/{name}/draft"), 201, "starting another draft")
    expect_status(target.api("PUT", f"/v1/tools/{name}/draft", tool(name, target.mock(name, "echo/v3"))),
                  200, "saving that draft")
    result = target.conversation(project, version=version).call(name)
    path = (echoed(result) or {}).get("path", result.get("error"))
    check = Check()
    check.expect(str(path).endswith("/echo/v1"), f"the call on project version {version}",
                 "made to version 1's URL", path)
    return check.verdict()


FREEZES_FOR_EVERY_PROJECT = defining("A tool can be shared across your whole organization, so publishing it, whether "
                                     "on its own or as part of publishing a project version, freezes it for every "
                                     "project that pins it.")


def _draft_pins(target: PlatformTarget, project: str) -> list[Any]:
    draft = (target.api("GET", f"/v1/projects/{project}").body or {}).get("draft") or {}
    return draft.get("pins")


def _still_serves(check: Check, target: PlatformTarget, project: str, name: str, path: str) -> None:
    """A conversation on the project's draft offers the tool and calls it at `path`; the draft then publishes."""
    token = target.session_token()
    opened = target.open(project, token, "draft")
    if check.expect(opened.status == 201, f"opening a conversation on {project}'s draft", "HTTP 201",
                    opened.describe()):
        offered = [t.get("name") for t in opened.body.get("tools", [])]
        check.expect(name in offered, f"the tools offered on {project}'s draft", f"including {name}", offered)
        result = Conversation(target, token, opened.body).call(name)
        echo = (echoed(result) or {}).get("path", result.get("error"))
        check.expect(str(echo).endswith(path), "the call", f"made to {path}", echo)
    reply = target.api("POST", f"/v1/projects/{project}/publish")
    check.expect(reply.status == 201, f"publishing {project}", "HTTP 201", reply.describe())


@SUITE.case(
    "lifecycle/project-publish-freezes-for-every-project",
    title="Publishing a project freezes its pinned tool drafts for every other project that pins them",
    requirement="Two project drafts pin one tool's draft. Publishing the first answers 201 and names the second's "
                "pin in `repinned`; the second project's draft then pins the tool's version 1, still serves the tool "
                "in a conversation on it, and publishes.",
    spec=(FREEZES_FOR_EVERY_PROJECT,
          contract("publishes every tool draft it pins, then freezes itself, in one transaction")),
)
def project_publish_freezes_for_every_project(target: PlatformTarget) -> Verdict:
    name = target.name("lifecycle_freeze_shared")
    first, second = target.project("lifecycle-freeze-a"), target.project("lifecycle-freeze-b")
    expect_status(target.register(tool(name, target.mock(name, "echo/shared"))), 201, "registering")
    for project in (first, second):
        target.create_project(project)
        target.pin(project, [{"tool": name, "version": "draft"}])
    check = Check()
    reply = target.api("POST", f"/v1/projects/{first}/publish")
    body = reply.body if isinstance(reply.body, dict) else {}
    check.expect(reply.status == 201, f"publishing {first}", "HTTP 201", reply.describe())
    check.equal("the publish answer's repinned", [{"project": second, "tool": name, "version": 1}],
                body.get("repinned"))
    check.equal(f"{second}'s draft pins afterwards", [{"tool": name, "version": 1}], _draft_pins(target, second))
    _still_serves(check, target, second, name, "/echo/shared")
    return check.verdict()


@SUITE.case(
    "lifecycle/tool-publish-freezes-for-every-project",
    title="Publishing a tool on its own freezes it for every project that pins its draft",
    requirement="A project draft pins a tool's draft. Publishing the tool on its own answers 201 and names the "
                "project's pin in `repinned`; the project's draft then pins the tool's version 1, still serves the "
                "tool in a conversation on it, and publishes.",
    spec=(FREEZES_FOR_EVERY_PROJECT,
          contract("freezes the draft into the next version")),
)
def tool_publish_freezes_for_every_project(target: PlatformTarget) -> Verdict:
    name, project = target.name("lifecycle_freeze_alone"), target.project("lifecycle-freeze-alone")
    expect_status(target.register(tool(name, target.mock(name, "echo/alone"))), 201, "registering")
    target.create_project(project)
    target.pin(project, [{"tool": name, "version": "draft"}])
    check = Check()
    reply = target.api("POST", f"/v1/tools/{name}/publish")
    body = reply.body if isinstance(reply.body, dict) else {}
    check.expect(reply.status == 201 and published_number(reply) == 1, "publishing the tool",
                 'HTTP 201 {"version": 1}', reply.describe())
    check.equal("the publish answer's repinned", [{"project": project, "tool": name, "version": 1}],
                body.get("repinned"))
    check.equal(f"{project}'s draft pins afterwards", [{"tool": name, "version": 1}], _draft_pins(target, project))
    _still_serves(check, target, project, name, "/echo/alone")
    return check.verdict()
