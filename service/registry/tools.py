"""Tools: register, save the one draft in place, publish immutable versions, start a new draft, relabel.

Every write runs in one transaction; races are settled by the database's unique indexes (one winner, a clean 409).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from peewee import IntegrityError, fn

from service import limits
from service.catalogue import Violation, violation
from service.database import retry_transient, write_transaction
from service.definition import ToolDefinition
from service.errors import REQUEST, ServiceError, conflict, invalid, not_found, precondition_failed, refusal
from service.models import Organization, Project, Tool, ToolDraft, ToolVersion, now
from service.records import audit
from service.registry.freezing import Publication, audit_moves, move_pins
from service.registry.rules import DEFINITION_FIELDS, NAME_PATTERN, check_definition
from service.text import is_blank, is_text, text_problem

REGISTRATION_FIELDS = frozenset({"display_name", "project"})


@contextmanager
def unique_or(refusal: Violation | ServiceError) -> Iterator[None]:
    """Turn the database's unique-index refusal into the 409 this write means: a rule's, or a given refusal."""
    try:
        yield
    except IntegrityError:
        raise (refusal if isinstance(refusal, ServiceError) else conflict(refusal)) from None


def get_tool(organization: Organization, name: str) -> Tool:
    """The organization's tool of that name, or 404 (another organization's tool is simply not found)."""
    if not is_text(name):  # a control character names nothing, and PostgreSQL cannot even be asked
        raise not_found("tool")
    tool = Tool.get_or_none(Tool.organization == organization, Tool.name == name)
    if tool is None:
        raise not_found("tool")
    return tool


def list_tools(organization: Organization, project: str | None = None) -> list[Tool]:
    query = Tool.select().where(Tool.organization == organization).order_by(Tool.name)
    if project is not None:
        if not is_text(project):
            return []
        query = query.join(Project).where(Project.name == project)
    return list(query)


def project_name(tool: Tool) -> str | None:
    """The name of the project the tool belongs to; None for an organization-wide tool."""
    project = tool.project  # None without a query when the tool has no project
    return None if project is None else project.name


def draft_of(tool: Tool) -> ToolDraft | None:
    return ToolDraft.get_or_none(ToolDraft.tool == tool)


def latest_version(tool: Tool) -> ToolVersion | None:
    return tool.versions.order_by(ToolVersion.number.desc()).first()


def get_version(organization: Organization, name: str, number: int) -> ToolVersion:
    """A published version, or 404."""
    tool = get_tool(organization, name)
    # A number past what the database stores names no version, and is never sent to it (an overflow on SQLite).
    in_range = 0 < number <= limits.MAX_STORED_INTEGER
    version = ToolVersion.get_or_none(ToolVersion.tool == tool, ToolVersion.number == number) if in_range else None
    if version is None:
        raise not_found("version")
    return version


def etag(draft: ToolDraft) -> str:
    """The draft's entity tag: changes on every save."""
    return f'"{draft.tool_id}.{draft.revision}"'


def _display_name(value: Any, default: str, found: list[Violation]) -> str:
    """The label to store: `default` for a blank one (missing, or `is_blank`: what a description may not be), else the
    label as given."""
    if value is None:
        return default
    if not isinstance(value, str) or len(value) > limits.MAX_DISPLAY_NAME_CHARS:
        found.append(violation("display_name", "display-name-format"))
        return default
    if is_blank(value):  # shows nothing (spaces of any script, zero-width ones, line breaks): like an empty label
        return default
    if (problem := text_problem(value)) is not None:
        found.append(violation("display_name", problem))
        return default
    return value


def _project(organization: Organization, name: Any, found: list[Violation]) -> Project | None:
    """The project a registration names (None: organization-wide), or a violation on `project`."""
    if name is None:
        return None
    if not isinstance(name, str):  # a list would reach the database as a row value
        found.append(violation("project", "field-type"))
        return None
    if (problem := text_problem(name)) is not None:
        found.append(violation("project", problem))
        return None
    project = Project.get_or_none(Project.organization == organization, Project.name == name)
    if project is None:
        found.append(violation("project", "project-unknown"))
    return project


def _name_taken(organization: Organization, data: Any) -> bool:
    name = data.get("name") if isinstance(data, dict) else None
    return (isinstance(name, str) and NAME_PATTERN.fullmatch(name) is not None
            and Tool.select().where(Tool.organization == organization, Tool.name == name).exists())


def _refuse(found: list[Violation], taken: bool) -> ServiceError:
    """Every violation at once: 409 when the name is taken (listed first, with the rest), otherwise 422."""
    if not taken:
        return invalid(found)
    error = conflict(violation("name", "name-taken"))
    error.violations.extend(found)
    return error


def register_tool(organization: Organization, data: dict[str, Any], actor: str) -> Tool:
    """Create the tool and its draft from a valid definition; every violation at once, 409 if the name is taken."""
    definition, found = check_definition(data, extra_fields=REGISTRATION_FIELDS)
    display_name = _display_name(data.get("display_name") if isinstance(data, dict) else None,
                                 (definition.name if definition else ""), found)
    project = _project(organization, data.get("project") if isinstance(data, dict) else None, found)
    if found:
        raise _refuse(found, _name_taken(organization, data))
    assert definition is not None  # no violations: the definition
    with unique_or(violation("name", "name-taken")), write_transaction():
        if _name_taken(organization, data):
            raise _refuse([], True)
        tool = create_tool_in_transaction(organization, definition, display_name, project, actor)
        audit.record(organization, actor, audit.REGISTER, audit.TOOL, tool.name, after=definition.to_dict())
    return tool


def create_tool_in_transaction(organization: Organization, definition: ToolDefinition, display_name: str,
                               project: Project | None, actor: str) -> Tool:
    """Create the tool and its draft from a checked definition. The caller holds the transaction, has found the
    name free and records the change."""
    tool = Tool.create(organization=organization, name=definition.name, display_name=display_name, project=project,
                       created_at=now())
    tool.new_draft = ToolDraft.create(tool=tool, definition=definition.to_dict(), revision=1, updated_at=now(),
                                      updated_by=actor)
    return tool


def save_draft(organization: Organization, name: str, data: dict[str, Any], actor: str,
               if_match: str | None = None) -> ToolDraft:
    """Save the one draft in place, validating everything together. `if_match` (an ETag) makes it conditional."""
    tool = get_tool(organization, name)
    if isinstance(data, dict):
        data = {"name": tool.name, **data}
    definition, found = check_definition(data, extra_fields=REGISTRATION_FIELDS, registered=True)
    if isinstance(data, dict):
        if data.get("name") != tool.name:
            found.append(violation("name", "name-immutable"))
        own_project = project_name(tool)
        if "project" in data and data["project"] != own_project:
            found.append(violation("project", "project-immutable"))
        display_name = _display_name(data.get("display_name"), tool.display_name, found)
    if found:
        raise invalid(found)
    assert definition is not None  # no violations: the definition
    with write_transaction():
        draft = draft_of(tool)
        if draft is None:
            raise refusal("no-draft")
        query = ToolDraft.update(definition=definition.to_dict(), revision=ToolDraft.revision + 1,
                                 updated_at=now(), updated_by=actor).where(ToolDraft.id == draft.id)
        if if_match is not None:
            # The check and the write are one statement, so two concurrent saves cannot both pass.
            if if_match.strip() != etag(draft):
                raise precondition_failed()
            query = query.where(ToolDraft.revision == draft.revision)
        if query.execute() != 1:
            raise precondition_failed()
        if "display_name" in data and display_name != tool.display_name:
            Tool.update(display_name=display_name).where(Tool.id == tool.id).execute()
            audit.record(organization, actor, audit.RELABEL, audit.TOOL, tool.name,
                         before={"display_name": tool.display_name}, after={"display_name": display_name})
        audit.record(organization, actor, audit.SAVE, audit.TOOL, tool.name, before=draft.definition,
                     after=definition.to_dict())
        # Read back inside the transaction: the row just written, which a publish right after could remove.
        saved = draft_of(tool)
    assert saved is not None  # written above, in the same transaction
    return saved


def start_draft(organization: Organization, name: str, actor: str) -> ToolDraft:
    """A new draft as a copy of the latest published version; at most one draft per tool."""
    tool = get_tool(organization, name)
    with unique_or(violation("", "draft-exists")), write_transaction():
        if draft_of(tool) is not None:
            raise refusal("draft-exists")
        draft = start_draft_in_transaction(tool, actor)
        audit.record(organization, actor, audit.START_DRAFT, audit.TOOL, tool.name, version=draft.based_on,
                     after=draft.definition)
        return draft


def start_draft_in_transaction(tool: Tool, actor: str, definition: ToolDefinition | None = None) -> ToolDraft:
    """A new draft based on the latest published version: a copy of it, or `definition` (checked) in its place.
    The caller holds the transaction, has found the tool without a draft and records the change."""
    latest = latest_version(tool)
    if latest is None:
        raise refusal("no-published-version")
    return ToolDraft.create(tool=tool, definition=latest.definition if definition is None else definition.to_dict(),
                            revision=1, based_on=latest.number, updated_at=now(), updated_by=actor)


def publish_draft_in_transaction(tool: Tool, actor: str) -> ToolVersion:
    """Freeze the tool's draft into its next version. The caller holds the transaction."""
    draft = draft_of(tool)
    if draft is None:
        raise refusal("no-draft")
    _, found = check_definition(draft.definition, registered=True)
    if found:
        raise invalid(found)
    number = (ToolVersion.select(fn.MAX(ToolVersion.number)).where(ToolVersion.tool == tool).scalar() or 0) + 1
    version = ToolVersion.create(tool=tool, number=number, definition=draft.definition, published_at=now(),
                                 published_by=actor)
    # Only the draft that was read may be consumed: a save or publish that slipped in makes this a conflict.
    if ToolDraft.delete().where(ToolDraft.id == draft.id, ToolDraft.revision == draft.revision).execute() != 1:
        raise refusal("no-draft")
    return version


@retry_transient
def publish_tool(organization: Organization, name: str, actor: str) -> Publication:
    """Publish the draft as the next immutable version, and move every project draft that pinned the draft to it;
    of two concurrent publishes exactly one wins."""
    tool = get_tool(organization, name)
    with unique_or(violation("", "no-draft")), write_transaction():
        version = publish_draft_in_transaction(tool, actor)
        repinned, moved = move_pins(organization, {tool.name: version.number}, actor)
        audit_publish(organization, tool, version, actor)
        audit_moves(organization, moved, actor)
        return Publication(version.number, ((tool.name, version.number),), tuple(repinned))


def audit_publish(organization: Organization, tool: Tool, version: ToolVersion, actor: str) -> None:
    """Record a publish: the tool's published definition before (the previous version's) and after."""
    previous = ToolVersion.get_or_none(ToolVersion.tool == tool, ToolVersion.number == version.number - 1)
    audit.record(organization, actor, audit.PUBLISH, audit.TOOL, tool.name, version=version.number,
                 before=previous.definition if previous else None, after=version.definition)


def _check_relabel(tool: Tool, data: Any) -> tuple[str, list[Violation]]:
    """The label a relabel body asks for, and every violation: it carries `display_name` (null: the tool name) and
    nothing else but the tool's own name and project; a definition field belongs in a save of the draft."""
    if not isinstance(data, dict):
        return tool.display_name, [violation("", "field-type")]
    found: list[Violation] = []
    if "display_name" not in data:
        found.append(violation("display_name", "field-required"))
    if "name" in data and data["name"] != tool.name:
        found.append(violation("name", "name-immutable"))
    if "project" in data and data["project"] != (project_name(tool)):
        found.append(violation("project", "project-immutable"))
    for key in sorted(set(data) - {"display_name", "name", "project"}):
        found.append(violation(key, "field-in-draft" if key in DEFINITION_FIELDS else "field-unknown"))
    return _display_name(data.get("display_name"), tool.name, found), found


def relabel(organization: Organization, name: str, data: Any, actor: str) -> Tool:
    """Change the display name (`data` is `{"display_name"}`), any time, published or not; it is not versioned."""
    tool = get_tool(organization, name)
    label, found = _check_relabel(tool, data)
    if found:
        raise invalid(found, REQUEST)
    with write_transaction():
        Tool.update(display_name=label).where(Tool.id == tool.id).execute()
        audit.record(organization, actor, audit.RELABEL, audit.TOOL, tool.name,
                     before={"display_name": tool.display_name}, after={"display_name": label})
    return get_tool(organization, name)


def definition_of(row: ToolDraft | ToolVersion) -> ToolDefinition:
    return ToolDefinition.from_dict(row.definition)


def tool_view(tool: Tool) -> dict[str, Any]:
    """A tool as the API shows it: name, label, project, its draft (or null) and its published versions.

    A tool this request created (`create_tool_in_transaction`) is shown from what it wrote: its draft, and no
    versions yet (two reads fewer a registration)."""
    if tool.new_draft is not None:
        return _view(tool, tool.new_draft, [])
    return _view(tool, draft_of(tool), list(tool.versions.order_by(ToolVersion.number)))


def _view(tool: Tool, draft: ToolDraft | None, versions: list[ToolVersion]) -> dict[str, Any]:
    return {
        "name": tool.name,
        "display_name": tool.display_name,
        "project": project_name(tool),
        "draft": None if draft is None else {
            "definition": draft.definition,
            "revision": draft.revision,
            "etag": etag(draft),
            "based_on": draft.based_on,
            "updated_at": draft.updated_at,
            "updated_by": draft.updated_by,
        },
        "versions": [version_summary(v) for v in versions],
    }


def version_summary(version: ToolVersion) -> dict[str, Any]:
    return {"version": version.number, "published_at": version.published_at, "published_by": version.published_by}


def version_view(version: ToolVersion) -> dict[str, Any]:
    return {**version_summary(version), "name": version.tool.name, "definition": version.definition,
            "read_only": True}


def published_read_only() -> ServiceError:
    """The refusal of any write aimed at a published version."""
    return refusal("published-read-only")
