"""Lists of the registry a page at a time: tools and projects in name order, by keyset (`after` the last name seen).

A page is one query that walks the `(organization_id, name)` index from `after` and stops at the page's `limit` (one
row more, to know whether a next page exists), then one query per kind of detail for just that page's rows (drafts,
published versions). However many tools an organization has, a page costs the same.

`q` matches a tool's name or display name (case-insensitive, anywhere in it): both live on the tool row, so the
search walks the same index in name order and stops as soon as the page is full.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Iterable, TypeVar, cast

from service import limits
from service.catalogue import Violation, violation
from service.errors import REQUEST, invalid
from service.models import Organization, Pin, Project, ProjectDraft, ProjectVersion, Tool, ToolDraft, ToolVersion
from service.registry.tools import etag, project_name, version_summary
from service.text import text_problem

Row = TypeVar("Row")


@dataclass(frozen=True)
class Page(Generic[Row]):
    """One page: its rows, and the `after` of the page that follows (None: this is the last)."""

    rows: list[Row]
    next: str | None


def check_page(limit: Any, after: Any, q: Any = None, project: Any = None) -> list[Violation]:
    """Every problem with a page's arguments, each naming its field and rule."""
    found = []
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= limits.MAX_PAGE:
        found.append(violation("limit", "page-limit"))
    for field, value, longest, rule in (("after", after, limits.MAX_TOOL_NAME_CHARS, "after-format"),
                                        ("q", q, limits.MAX_SEARCH_CHARS, "search-too-long"),
                                        ("project", project, limits.MAX_TOOL_NAME_CHARS, "project-name-format")):
        if value is None:
            continue
        if not isinstance(value, str):
            found.append(violation(field, "field-type"))
        elif (problem := text_problem(value)) is not None:
            found.append(violation(field, problem))
        elif len(value) > longest:
            found.append(violation(field, rule))
    return found


def _checked(limit: Any, after: Any, q: Any = None, project: Any = None) -> None:
    found = check_page(limit, after, q, project)
    if found:
        raise invalid(found, REQUEST)


def _page(rows: list[Row], limit: int, name_of) -> Page[Row]:
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, name_of(rows[-1]) if more else None)


def tool_page(organization: Organization, *, limit: int = limits.DEFAULT_PAGE, after: str | None = None,
              q: str | None = None, project: str | None = None, pinnable_in: Project | None = None) -> Page[Tool]:
    """The organization's tools in name order after `after`, at most `limit`; `q` in the name or display name;
    `project` only that project's own tools (an unknown project has none); `pinnable_in` only the tools that
    project may pin (organization-wide ones and its own: what a project's pins page searches)."""
    _checked(limit, after, q, project)
    if project is None:
        chosen = None
    else:
        chosen = Project.get_or_none(Project.organization == organization, Project.name == project)
        if chosen is None:
            return Page([], None)
    tools = list(tool_page_query(organization, limit=limit, after=after, q=q, project=chosen,
                                 pinnable_in=pinnable_in))
    _with_projects(tools)
    return _page(tools, limit, lambda tool: tool.name)


def _with_projects(tools: list[Tool]) -> None:
    """Each tool's project, read in one query for the page (not joined into the page's query: PostgreSQL then
    joined the organization's every tool before it sorted and cut the page)."""
    ids = {tool.project_id for tool in tools if tool.project_id is not None}
    projects = {p.id: p for p in Project.select().where(Project.id.in_(sorted(ids)))} if ids else {}
    for tool in tools:
        if tool.project_id is not None:
            tool.project = projects[tool.project_id]


def tool_page_query(organization: Organization, *, limit: int, after: str | None = None, q: str | None = None,
                    project: Project | None = None, pinnable_in: Project | None = None):
    """The one query of a page of tools: `limit` + 1 rows, so the page knows whether another follows. It walks
    `(organization_id, name)`, or `(project_id, name)` for one project's tools, and stops at the LIMIT."""
    query = Tool.select()
    if project is None:
        query = query.where(Tool.organization == organization).order_by(Tool.name)
    else:  # a project is its organization's: its tools are too
        query = query.where(Tool.project == project.id).order_by(Tool.name)
    if after is not None:
        query = query.where(Tool.name > after)
    if pinnable_in is not None:
        query = query.where(Tool.project.is_null() | (Tool.project == pinnable_in.id))
    if q:
        query = query.where(Tool.name.contains(q) | Tool.display_name.contains(q))
    return query.limit(limit + 1)


def tools_named(organization: Organization, names: Iterable[str]) -> list[Tool]:
    """The organization's tools of those names (a project's pins), in one query whatever the organization holds;
    a name no tool has is left out, and one no tool can have (a control character, which PostgreSQL cannot even be
    asked about) is never sent."""
    wanted = sorted({name for name in names if isinstance(name, str) and text_problem(name) is None})
    if not wanted:
        return []
    tools = list(Tool.select().where(Tool.organization == organization, Tool.name.in_(wanted)))
    _with_projects(tools)
    return tools


def tool_views(tools: list[Tool]) -> list[dict[str, Any]]:
    """Each tool as `GET /v1/tools/{name}` shows it (`registry.tool_view`), in two queries for the whole page: its
    draft and its published versions."""
    ids = [tool.id for tool in tools]
    drafts = {d.tool_id: d for d in ToolDraft.select().where(ToolDraft.tool.in_(ids))} if ids else {}
    versions: dict[int, list[ToolVersion]] = {}
    if ids:
        for version in ToolVersion.select(ToolVersion.id, ToolVersion.tool, ToolVersion.number,
                                          ToolVersion.published_at, ToolVersion.published_by).where(
                ToolVersion.tool.in_(ids)).order_by(ToolVersion.tool, ToolVersion.number):
            versions.setdefault(version.tool_id, []).append(version)
    views = []
    for tool in tools:
        draft = drafts.get(tool.id)
        views.append({
            "name": tool.name, "display_name": tool.display_name,
            "project": project_name(tool),
            "draft": None if draft is None else {
                "definition": draft.definition, "revision": draft.revision, "etag": etag(draft),
                "based_on": draft.based_on, "updated_at": draft.updated_at, "updated_by": draft.updated_by},
            "versions": [version_summary(v) for v in versions.get(tool.id, [])],
        })
    return views


def project_page(organization: Organization, *, limit: int = limits.DEFAULT_PAGE,
                 after: str | None = None) -> Page[Project]:
    """The organization's projects in name order after `after`, at most `limit`."""
    _checked(limit, after)
    query = (Project.select().where(Project.organization == organization).order_by(Project.name)
             .limit(limit + 1))
    if after is not None:
        query = query.where(Project.name > after)
    return _page(list(query), limit, lambda project: project.name)


def project_views(projects: list[Project]) -> list[dict[str, Any]]:
    """Each project as `GET /v1/projects/{name}` shows it (`registry.project_view`), in three queries for the whole
    page: drafts, published versions, and those versions' pins."""
    ids = [project.id for project in projects]
    if not ids:
        return []
    drafts = {d.project_id: d for d in ProjectDraft.select().where(ProjectDraft.project.in_(ids))}
    versions: dict[int, list[ProjectVersion]] = {}
    for version in (ProjectVersion.select().where(ProjectVersion.project.in_(ids))
                    .order_by(ProjectVersion.project, ProjectVersion.number)):
        versions.setdefault(version.project_id, []).append(version)
    pins: dict[int, list[dict[str, Any]]] = {}
    version_ids = [v.id for vs in versions.values() for v in vs]
    if version_ids:
        rows = (Pin.select(Pin.project_version, Tool.name, ToolVersion.number).join(Tool, on=(Pin.tool == Tool.id))
                .switch(Pin).join(ToolVersion, on=(Pin.tool_version == ToolVersion.id))
                .where(Pin.project_version.in_(version_ids)).order_by(Pin.id).tuples())
        for version_id, tool, number in cast(Iterable[tuple[int, str, int]], rows):
            pins.setdefault(version_id, []).append({"tool": tool, "version": number})
    views = []
    for project in projects:
        draft = drafts.get(project.id)
        views.append({
            "name": project.name,
            "draft": None if draft is None else {"pins": draft.pins, "revision": draft.revision,
                                                 "updated_at": draft.updated_at, "updated_by": draft.updated_by},
            "versions": [{"version": v.number, "published_at": v.published_at, "published_by": v.published_by,
                          "pins": pins.get(v.id, [])} for v in versions.get(project.id, [])],
        })
    return views
