"""The impact view: which project versions pin a tool version, and what publishing a tool's draft would change.

Publishing never moves a pin (a published project version pins its tool versions for good), so the report says
what the next version breaks for whoever moves to it: the model, the endpoint, or nobody.
"""
from __future__ import annotations

from typing import Any

from service.errors import not_found
from service.models import Organization, Pin, Project, ProjectDraft, ProjectVersion, ToolVersion
from service.ops.changes import compare, text_diff
from service.registry.tools import draft_of, get_tool, get_version, latest_version, refusal

DRAFT = "draft"


def _project_versions(version: ToolVersion) -> list[dict[str, Any]]:
    pins = (Pin.select(Pin, ProjectVersion, Project).join(ProjectVersion).join(Project)
            .where(Pin.tool_version == version).order_by(Project.name, ProjectVersion.number))
    return [{"project": pin.project_version.project.name, "version": pin.project_version.number,
             "published_at": pin.project_version.published_at} for pin in pins]


def _project_drafts(organization: Organization, tool: str, version: int | str) -> list[str]:
    """The projects whose draft version pins `tool` at `version` (a number, or "draft")."""
    drafts = (ProjectDraft.select(ProjectDraft, Project).join(Project)
              .where(Project.organization == organization).order_by(Project.name))
    return [d.project.name for d in drafts if {"tool": tool, "version": version} in d.pins]


def version_impact(organization: Organization, name: str, number: int) -> dict[str, Any]:
    """Every project version that pins this published tool version, and every project draft that would."""
    version = get_version(organization, name, number)
    return {"tool": name, "version": number, "project_versions": _project_versions(version),
            "project_drafts": _project_drafts(organization, name, number)}


def draft_impact(organization: Organization, name: str) -> dict[str, Any]:
    """What publishing the tool's draft would change against its latest version, and who pins what."""
    tool = get_tool(organization, name)
    draft = draft_of(tool)
    if draft is None:
        raise refusal("no-draft")
    latest = latest_version(tool)
    changes = [] if latest is None else compare(latest.definition, draft.definition)
    return {
        "tool": name, "revision": draft.revision, "against": latest.number if latest else None,
        "breaking": any(c.breaking for c in changes), "changes": [c.to_dict() for c in changes],
        "latest_pinned_by": _project_versions(latest) if latest else [],
        "draft_pinned_by": _project_drafts(organization, name, DRAFT),
    }


def _definition(organization: Organization, name: str, ref: int | str) -> dict[str, Any]:
    if ref == DRAFT:
        draft = draft_of(get_tool(organization, name))
        if draft is None:
            raise not_found("draft")
        return draft.definition
    return get_version(organization, name, ref).definition


def diff(organization: Organization, name: str, before: int | str, after: int | str) -> dict[str, Any]:
    """A readable diff between any two versions of a tool (a number each, or "draft")."""
    old, new = _definition(organization, name, before), _definition(organization, name, after)
    changes = compare(old, new)
    return {"tool": name, "from": before, "to": after, "breaking": any(c.breaking for c in changes),
            "changes": [c.to_dict() for c in changes],
            "text": text_diff(old, new, _label(name, before), _label(name, after))}


def _label(name: str, ref: int | str) -> str:
    return f"{name} (draft)" if ref == DRAFT else f"{name} v{ref}"
