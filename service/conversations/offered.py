"""What a conversation's model may call: the pinned tools, filtered for this session, as JSON Schemas.

Published versions never change, so their compiled request templates and schemas are cached for good,
keyed by the version row; a project's draft pins live tool drafts, which are compiled afresh each time.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from service.catalogue import violation
from service.database import generation
from service.definition import ToolDefinition
from service.dispatch import CompiledTool, compile_definition
from service.errors import REQUEST, invalid, not_found, refusal
from service.limits import MAX_STORED_INTEGER
from service.models import Pin, Project, ProjectDraft, ProjectVersion, Tool, ToolDraft, ToolVersion

JSON_TYPES = {"string": "string", "number": "number", "boolean": "boolean", "array": "array", "object": "object"}


@dataclass(frozen=True)
class PinnedTool:
    """One tool as a project version serves it: its definition, compiled once, and its schema."""

    name: str
    version: int | None  # None: the tool's draft, pinned by a project draft
    definition: ToolDefinition
    compiled: CompiledTool
    schema: dict[str, Any]

    def offered_to(self, entitlements: frozenset[str]) -> bool:
        """Offered to the model: not a session-start tool, and the session carries its entitlement."""
        return not self.definition.runs_at_session_start and self.entitled(entitlements)

    def entitled(self, entitlements: frozenset[str]) -> bool:
        required = self.definition.required_entitlement
        return required is None or required in entitlements

    def model_view(self) -> dict[str, Any]:
        """The tool as the model sees it: name, description and a JSON Schema without the subject."""
        return {"name": self.name, "description": self.definition.description, "parameters": self.schema}


def parameters_schema(definition: ToolDefinition) -> dict[str, Any]:
    """A JSON Schema for the model's arguments: types, element types, required, no subject, nothing extra."""
    properties: dict[str, Any] = {}
    for parameter in definition.model_parameters:
        prop: dict[str, Any] = {"type": JSON_TYPES[parameter.type]}
        if parameter.element_type:
            prop["items"] = {"type": JSON_TYPES[parameter.element_type]}
        if parameter.description:
            prop["description"] = parameter.description
        properties[parameter.name] = prop
    required = [p.name for p in definition.model_parameters if p.required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def pinned_tool(name: str, version: int | None, definition: ToolDefinition) -> PinnedTool:
    """One tool served from `definition`: compiled, with its schema for the model."""
    return PinnedTool(name=name, version=version, definition=definition,
                      compiled=compile_definition(definition), schema=parameters_schema(definition))


def _published(tool_version_id: int) -> PinnedTool:
    return _published_cached(generation(), tool_version_id)


@lru_cache(maxsize=4096)
def _published_cached(_generation: int, tool_version_id: int) -> PinnedTool:
    row = ToolVersion.select(ToolVersion, Tool).join(Tool).where(ToolVersion.id == tool_version_id).get()
    return pinned_tool(row.tool.name, row.number, ToolDefinition.from_dict(row.definition))


@lru_cache(maxsize=1024)
def _published_pins(_generation: int, project_version_id: int) -> tuple[PinnedTool, ...]:
    """A published project version's tools: it never changes, so they are read once per process."""
    pins = Pin.select(Pin.tool_version).where(Pin.project_version == project_version_id).order_by(Pin.id)
    return tuple(_published(pin.tool_version_id) for pin in pins)


def resolve_project_version(project: Project, version: Any) -> ProjectVersion | None:
    """The project version a conversation runs on: a number, "draft" (None), or by default the latest."""
    if version == "draft":
        if ProjectDraft.get_or_none(ProjectDraft.project == project) is None:
            raise refusal("project-no-draft")
        return None
    query = ProjectVersion.select().where(ProjectVersion.project == project)
    if version is None:
        found = query.order_by(ProjectVersion.number.desc()).first()
        if found is None:
            raise refusal("project-unpublished")
        return found
    if isinstance(version, bool) or not isinstance(version, int):
        raise invalid([violation("version", "version-format")], REQUEST)
    # A number past what the database stores names no version, and is never sent to it (an overflow on SQLite).
    found = query.where(ProjectVersion.number == version).first() if 0 < version <= MAX_STORED_INTEGER else None
    if found is None:
        raise not_found("project version")
    return found


def pinned_tools(project: Project | None, project_version: ProjectVersion | int | None) -> list[PinnedTool]:
    """Every tool a published project version (a row or its id) pins, in pin order; with no version, every tool
    the project's draft pins."""
    if project_version is not None:
        version_id = project_version if isinstance(project_version, int) else project_version.id
        return list(_published_pins(generation(), version_id))
    assert project is not None  # with no version, the project whose draft it is
    draft = ProjectDraft.get(ProjectDraft.project == project)
    tools: list[PinnedTool] = []
    for pin in draft.pins:
        tool = Tool.get_or_none(Tool.organization == project.organization_id, Tool.name == pin["tool"])
        if tool is None:
            continue
        if pin["version"] == "draft":
            row = ToolDraft.get_or_none(ToolDraft.tool == tool)
            if row is not None:
                tools.append(pinned_tool(tool.name, None, ToolDefinition.from_dict(row.definition)))
        else:
            version = ToolVersion.get_or_none(ToolVersion.tool == tool, ToolVersion.number == pin["version"])
            if version is not None:
                tools.append(_published(version.id))
    return tools


def offered(tools: Iterable[PinnedTool], entitlements: frozenset[str]) -> dict[str, PinnedTool]:
    """The tools offered to the model for these entitlements, by name."""
    return {tool.name: tool for tool in tools if tool.offered_to(entitlements)}
