"""The Tools screen's lines, searched, sorted and paged by the database: only one page of rows ever reaches Python.

A line is a tool with the definition being worked on (its draft's, else its latest published version's), its latest
version number and whether it has a draft. Sorting by the name walks no more than the page; sorting by any other
column is the database's own top-N sort of the matching tools (an index cannot order by a definition's field), and
the count is bounded (`COUNTED`), so neither grows into Python with the organization.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import JOIN, Case, Cast, Expression, fn

from service.database import is_postgres
from service.models import Organization, Project, Tool, ToolDraft, ToolVersion

#: A count of matching tools stops here: past it, the screen says "more than" this many.
COUNTED = 10_000
#: The columns lines sort by (the screen's `sort`), each ordered as the screen always did: blanks and "none" last
#: going up, ties by tool name.
#: The columns whose blank lines stay last going down too (their first key says "blank"): an unpublished tool has no
#: latest version, and sorting by it, newest first, is asking for the published ones (issue 36).
LAST_BOTH_WAYS = ("latest",)
SORTS = ("name", "display_name", "project", "scope", "session_start", "entitlement", "latest", "draft")


@dataclass(frozen=True)
class LineFilter:
    """Which tools: a search in the name, display name or description; only organization-wide tools; or only the
    tools of a project (its own, and those named in `pinned`)."""

    search: str = ""
    organization_wide: bool = False
    project: Project | None = None
    pinned: frozenset[str] = frozenset()


@dataclass(frozen=True)
class LinePage:
    lines: list[dict[str, Any]]
    #: Matching tools, counted up to COUNTED + 1 (more than COUNTED: `total` is COUNTED + 1).
    total: int


def _shown_definition():
    return fn.COALESCE(ToolDraft.definition, Latest.definition)


Latest = ToolVersion.alias("latest")
Newest = ToolVersion.alias("newest")


def _field(key: str):
    """One field of the shown definition, as text (SQLite's json_extract, PostgreSQL's ->>)."""
    if is_postgres():
        return Expression(Cast(_shown_definition(), "json"), "->>", key)
    return fn.json_extract(_shown_definition(), f"$.{key}")


def _true(key: str):
    if is_postgres():
        return _field(key) == "true"
    return _field(key) == 1


def _blank_last(value) -> list:
    return [Case(None, [(value.is_null() | (value == ""), 1)], 0), fn.LOWER(value)]


def _order(sort: str) -> list:
    """The ORDER BY keys of a column, as the screen has always sorted it."""
    if sort == "display_name":
        return _blank_last(Tool.display_name)
    if sort == "project":
        return _blank_last(Project.name)
    if sort == "scope":
        return [fn.COALESCE(_field("scope"), "") == "per_user"]
    if sort == "session_start":
        return [Case(None, [(_true("runs_at_session_start"), 1)], 0)]
    if sort == "entitlement":
        return _blank_last(_field("required_entitlement"))
    if sort == "latest":
        return [Case(None, [(Latest.number.is_null(), 1)], 0), fn.COALESCE(Latest.number, 0)]
    if sort == "draft":
        return [Case(None, [(ToolDraft.id.is_null(), 1)], 0), fn.COALESCE(ToolDraft.based_on, 0)]
    return []


def _matching(organization: Organization, which: LineFilter):
    newest = (Newest.select(fn.MAX(Newest.number)).where(Newest.tool == Tool.id))
    query = (Tool.select(Tool, Project, ToolDraft, Latest)
             .join(Project, JOIN.LEFT_OUTER).switch(Tool)
             .join(ToolDraft, JOIN.LEFT_OUTER, on=(ToolDraft.tool == Tool.id), attr="draft_row").switch(Tool)
             .join(Latest, JOIN.LEFT_OUTER, on=((Latest.tool == Tool.id) & (Latest.number == newest)),
                   attr="latest_row"))
    return _narrowed(query, organization, which)


def _counted(organization: Organization, which: LineFilter) -> int:
    """The matching tools, counted up to COUNTED + 1: off the tool rows alone unless the search looks in the
    definitions (each LEFT JOIN above finds at most one row a tool, so it changes no count)."""
    query = _matching(organization, which) if which.search else _narrowed(Tool.select(), organization, which)
    return query.select(Tool.id).limit(COUNTED + 1).count()


def _narrowed(query, organization: Organization, which: LineFilter):
    query = query.where(Tool.organization == organization)
    if which.organization_wide:
        query = query.where(Tool.project.is_null())
    elif which.project is not None:
        own = Tool.project == which.project.id
        query = query.where(own | Tool.name.in_(sorted(which.pinned)) if which.pinned else own)
    if which.search:
        query = query.where(Tool.name.contains(which.search) | Tool.display_name.contains(which.search)
                            | _field("description").contains(which.search))
    return query


def line_page(organization: Organization, which: LineFilter, *, sort: str, descending: bool, offset: int,
              limit: int) -> LinePage:
    """One page of lines: `limit` from `offset`, sorted by `sort` (ties by name, up), and the bounded count."""
    sort = sort if sort in SORTS else "name"
    keys = _order(sort)
    ordering = [key.asc() if i == 0 and sort in LAST_BOTH_WAYS else key.desc() if descending else key.asc()
                for i, key in enumerate(keys)]
    name = [fn.LOWER(Tool.name), Tool.name]
    ordering += [key.desc() if descending and sort in ("name", "") else key.asc() for key in name]
    rows = list(_matching(organization, which).order_by(*ordering).offset(offset).limit(limit))
    total = _counted(organization, which)
    return LinePage([_line(tool) for tool in rows], total)


def _present(row: Any) -> Any:
    """A LEFT JOIN's row, or None where nothing joined (peewee hands an empty row, or none)."""
    return row if row is not None and row.id is not None else None


def _line(tool: Tool) -> dict[str, Any]:
    draft = _present(getattr(tool, "draft_row", None))
    latest = _present(getattr(tool, "latest_row", None))
    shown = draft or latest
    assert shown is not None  # a tool is created with its draft, and a draft is only ever published or replaced
    return {"name": tool.name, "display_name": tool.display_name,
            "project": None if tool.project is None else tool.project.name,
            "latest": latest.number if latest else None, "draft": draft is not None,
            "based_on": draft.based_on if draft else None, "definition": shown.definition}
