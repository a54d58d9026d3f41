"""`entitlement/…`: a tool that requires an entitlement is offered only to tokens that carry it."""
from __future__ import annotations

from conformance.case import Check, Verdict
from conformance.platform.cases.failure import error, expect_error
from conformance.platform.client import PlatformTarget, brief, tool
from conformance.platform.suite import SUITE, defining, running

#: The claim the kit's entitled tools require.
CLAIM = "reports:read"


def _publish(target: PlatformTarget, slug: str) -> tuple[str, str, str]:
    """A project with a free tool and one requiring CLAIM; (project, free, entitled)."""
    free, gated = target.name(slug, "free"), target.name(slug, "gated")
    project = target.project(slug)
    target.publish_project(project, [tool(free, target.mock(free, "echo")),
                                     tool(gated, target.mock(gated, "echo"), required_entitlement=CLAIM)])
    return project, free, gated


@SUITE.case(
    "entitlement/unentitled-not-offered",
    title="A tool is offered only to tokens carrying its entitlement",
    requirement=f"A tool requiring {CLAIM} is missing from the tools offered to a token without it, and "
                "offered to a token of the same person that carries it.",
    spec=(running("When a turn’s token does not carry that claim, the platform never offers the tool to the "
                  "model"),
          defining("An optional claim such as products:write that the user’s session token must carry for "
                   "the tool to be available to the model.")),
)
def unentitled_not_offered(target: PlatformTarget) -> Verdict:
    project, free, gated = _publish(target, "entitlement_offered")
    conversation = target.conversation(project)
    check = Check()
    check.equal("tools offered without the entitlement", [free],
                sorted(t.get("name") for t in conversation.tools()))
    entitled = target.session_token(entitlements=[CLAIM])
    check.equal("tools offered with the entitlement", sorted([free, gated]),
                sorted(t.get("name") for t in conversation.tools(entitled)))
    return check.verdict()


@SUITE.case(
    "entitlement/unentitled-not-callable",
    title="A tool the token is not entitled to cannot be called",
    requirement="Calling a tool the session's token is not entitled to gives {status: error, kind: "
                "unknown-tool}, and the endpoint is never called.",
    spec=running("the platform never offers the tool to the model, so the model cannot call it and cannot "
                 "mention it"),
)
def unentitled_not_callable(target: PlatformTarget) -> Verdict:
    project, _, gated = _publish(target, "entitlement_callable")
    result = target.conversation(project).call(gated)
    check = Check()
    expect_error(check, "calling it", result, error("unknown-tool"))
    check.equal("calls the endpoint received", 0, len(target.calls_to(gated)))
    return check.verdict()


@SUITE.case(
    "entitlement/no-requirement-for-everyone",
    title="A tool with no required entitlement is offered to everyone",
    requirement="A tool without a required entitlement is offered to a token with no entitlements, to one "
                "with unrelated entitlements, and in an anonymous session, and can be called in each.",
    spec=(running("A tool with no required entitlement is available to everyone."),
          defining("Leave blank to make it available to all users.")),
)
def no_requirement_for_everyone(target: PlatformTarget) -> Verdict:
    project, free, _ = _publish(target, "entitlement_everyone")
    check = Check()
    tokens = {"no entitlements": target.session_token(),
              "an unrelated entitlement": target.session_token(entitlements=["orders:write"]),
              "an anonymous session": target.session_token(anonymous=True)}
    for label, token in tokens.items():
        conversation = target.conversation(project, token)
        check.expect(free in [t.get("name") for t in conversation.tools()], f"{label}: offered tools",
                     f"including {free}", [t.get("name") for t in conversation.tools()])
        result = conversation.call(free)
        check.expect("output" in result, f"{label}: calling it", "an output", brief(result))
    return check.verdict()
