"""The impact view: which project versions pin a tool version, and what publishing a tool's draft would change.

Publishing never moves a pin (a published project version pins its tool versions for good), so the report says
what the next version breaks for whoever moves to it: the model, the endpoint, or nobody.
"""
from __future__ import annotations

from typing import Any

from service.errors import not_found, refusal
from service.models import Organization, Pin, Project, ProjectDraft, ProjectVersion, ToolVersion
from service.ops.changes import compare, text_diff
from service.registry.projects import get_project, project_view
from service.registry.tools import draft_of, get_tool, get_version, latest_version

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


def project_impact(organization: Organization, name: str) -> dict[str, Any]:
    """What publishing a project's draft version freezes, pin by pin, and what breaks.

    Each pin becomes a published tool version: a pinned tool draft becomes its tool's next version, a pinned version
    stays as it is. Each is compared with what the project's consumers had: the version its latest published version
    pinned (`against_source` "project"); or, for a tool the project did not pin before whose draft is published now,
    the tool's latest version, as the tool's own publish shows it (`against_source` "tool"). Tools the latest version
    pinned and the draft does not are `unpinned`: the model is no longer offered them.
    """
    project = get_project(organization, name)
    view = project_view(project)
    if view["draft"] is None:
        raise refusal("project-no-draft")
    had = {p["tool"]: p["version"] for p in view["versions"][-1]["pins"]} if view["versions"] else {}
    pins = []
    for pin in view["draft"]["pins"]:
        tool = get_tool(organization, pin["tool"])
        latest = latest_version(tool)
        if pin["version"] == DRAFT:
            draft = draft_of(tool)
            frozen, becomes = (draft.definition if draft else None), (latest.number if latest else 0) + 1
        else:
            frozen, becomes = get_version(organization, tool.name, pin["version"]).definition, pin["version"]
        against, source = had.get(tool.name), "project"
        if against is None and pin["version"] == DRAFT and latest is not None:
            against, source = latest.number, "tool"
        changes = []
        if against is not None and frozen is not None and not (against == becomes and pin["version"] != DRAFT):
            changes = [c.to_dict() for c in compare(get_version(organization, tool.name, against).definition,
                                                    frozen)]
        pins.append({"tool": tool.name, "display_name": tool.display_name, "pinned": pin["version"],
                     "becomes": becomes, "against": against, "against_source": source if against else None,
                     "changes": changes, "breaking": any(c["breaking"] for c in changes)})
    drafted = {p["tool"] for p in view["draft"]["pins"]}
    return {"project": name, "version": (view["versions"][-1]["version"] if view["versions"] else 0) + 1,
            "against": view["versions"][-1]["version"] if view["versions"] else None, "pins": pins,
            "unpinned": [tool for tool in had if tool not in drafted]}


def _definition(organization: Organization, name: str, ref: int | str) -> dict[str, Any]:
    if ref == DRAFT:
        draft = draft_of(get_tool(organization, name))
        if draft is None:
            raise not_found("draft")
        return draft.definition
    assert isinstance(ref, int)  # the one other kind of ref: a version number
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
