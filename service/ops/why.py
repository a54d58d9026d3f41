"""Why not offered: for a project version and a session's claims, each tool, whether it is offered and why not.

The answer is computed by the same code that decides what a conversation offers (`PinnedTool.offered_to` and
`PinnedTool.entitled` over `pinned_tools`), so it cannot drift from what a real session sees.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.conversations.offered import PinnedTool, pinned_tools, resolve_project_version
from service.models import Organization, ProjectDraft, Tool
from service.registry import get_project

NOT_PINNED = "not-pinned"
PINNED_DRAFT_MISSING = "pinned-draft-missing"
ENTITLEMENT_MISSING = "entitlement-missing"
SESSION_START_ONLY = "session-start-only"

REASONS = {
    NOT_PINNED: "This project version does not pin the tool.",
    PINNED_DRAFT_MISSING: "The project's draft pins this tool's draft, which no longer exists (it was published); "
                          "pin a published version or start a new draft.",
    ENTITLEMENT_MISSING: "The session token does not carry the entitlement {entitlement} that this tool requires.",
    SESSION_START_ONLY: "The tool runs at session start: its result is in the model's initial context, "
                        "and the model is never offered it as a call.",
}


@dataclass(frozen=True)
class Claims:
    """What a session token would say about the person: the same three claims that decide what is offered."""

    subject: str
    entitlements: frozenset[str] = frozenset()
    anonymous: bool = False


@dataclass(frozen=True)
class Explanation:
    """One tool's answer."""

    tool: str
    pinned: int | str | None  # the pinned version, "draft", or None when not pinned
    offered: bool
    runs_at_session_start: bool  # for these claims: a session-start tool the session is entitled to
    required_entitlement: str | None
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool, "pinned": self.pinned, "offered": self.offered,
            "runs_at_session_start": self.runs_at_session_start, "required_entitlement": self.required_entitlement,
            "reasons": [{"reason": r, "message": REASONS[r].format(entitlement=self.required_entitlement)}
                        for r in self.reasons],
        }


def _explain_pinned(tool: PinnedTool, claims: Claims) -> Explanation:
    entitled = tool.entitled(claims.entitlements)
    reasons = []
    if not entitled:
        reasons.append(ENTITLEMENT_MISSING)
    if tool.definition.runs_at_session_start:
        reasons.append(SESSION_START_ONLY)
    return Explanation(
        tool=tool.name, pinned=tool.version if tool.version is not None else "draft",
        offered=tool.offered_to(claims.entitlements),
        runs_at_session_start=tool.definition.runs_at_session_start and entitled,
        required_entitlement=tool.definition.required_entitlement, reasons=tuple(reasons))


def explain(organization: Organization, project_name: str, version: Any, claims: Claims) -> dict[str, Any]:
    """Every tool the project could pin (organization-wide ones and its own), pinned ones first, in pin order."""
    project = get_project(organization, project_name)
    project_version = resolve_project_version(project, version)
    served = pinned_tools(project, project_version)
    answers = [_explain_pinned(tool, claims) for tool in served]
    seen = {tool.name for tool in served}
    draft_pins: set[str] = set()
    if project_version is None:
        draft = ProjectDraft.get(ProjectDraft.project == project)
        draft_pins = {pin["tool"] for pin in draft.pins if pin["version"] == "draft"}
    candidates = (Tool.select().where(Tool.organization == organization,
                                      Tool.project.is_null() | (Tool.project == project)).order_by(Tool.name))
    for tool in candidates:
        if tool.name not in seen:
            reason = PINNED_DRAFT_MISSING if tool.name in draft_pins else NOT_PINNED
            answers.append(Explanation(tool=tool.name, pinned=None, offered=False, runs_at_session_start=False,
                                       required_entitlement=None, reasons=(reason,)))
    return {
        "project": project.name,
        "version": project_version.number if project_version is not None else "draft",
        "claims": {"subject": claims.subject, "entitlements": sorted(claims.entitlements),
                   "anonymous": claims.anonymous},
        "tools": [a.to_dict() for a in answers],
    }
