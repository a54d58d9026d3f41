"""The MCP tools an agent gets: each a name, a description written for a model, a JSON Schema input and a handler.

Every handler is a thin call into `service.registry`, the same functions the REST API calls, so the rules and the
sentences are the same. Every write passes the key's `Principal.actor`, which the registry records on the draft.

There is no publish tool, and nothing here calls the registry's publishing functions: publishing freezes what
projects rely on, so it stays a person's deliberate step (spec, "Editing with an agent"), whatever the key's role.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Callable

from peewee import IntegrityError

from service import importing, registry
from service.catalogue import Violation, violation
from service.database import write_transaction
from service.errors import PIN, REQUEST, ServiceError, concurrent_change, invalid, refusal
from service.http import DISPATCHER_KEY, client_left
from service.limits import DEFAULT_PAGE
from service.mcp import schemas
from service.mcp.protocol import INVALID_PARAMS, ProtocolError
from service.registry import REGISTRATION_FIELDS
from service.roles import READ, WRITE_DRAFTS, require

Handler = Callable[[registry.Principal, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class AgentTool:
    """One MCP tool. `strict` tools have their arguments checked against the schema first; the definition tools
    are not, because the registry checks a definition whole and lists every violation at once."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    power: str
    read_only: bool
    strict: bool = True

    def listing(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {"title": self.title, "readOnlyHint": self.read_only,
                            "destructiveHint": False, "openWorldHint": False},
        }



def _summary(view: dict[str, Any]) -> dict[str, Any]:
    draft = view["draft"]
    return {
        "name": view["name"],
        "display_name": view["display_name"],
        "project": view["project"],
        "draft": None if draft is None else {key: draft[key] for key in ("revision", "etag", "updated_at",
                                                                       "updated_by")},
        "versions": [v["version"] for v in view["versions"]],
    }


def _cursor(kind: str, after: str | None) -> str | None:
    """The opaque `nextCursor` MCP clients hand back: which list, and the name the next page starts after."""
    if after is None:
        return None
    return base64.urlsafe_b64encode(json.dumps([kind, after]).encode("utf-8")).decode("ascii")


def _after(kind: str, arguments: dict[str, Any]) -> str | None:
    """The name a `cursor` argument pages after; a cursor this list did not give is refused, naming it."""
    cursor = arguments.get("cursor")
    if cursor is None:
        return None
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        decoded = None
    if not (isinstance(decoded, list) and len(decoded) == 2 and decoded[0] == kind and isinstance(decoded[1], str)
            and not registry.check_page(1, decoded[1])):
        raise invalid([violation("cursor", "cursor-invalid")], REQUEST)
    return decoded[1]


def _list_tools(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    page = registry.tool_page(principal.organization, limit=arguments.get("limit", DEFAULT_PAGE),
                              after=_after("tools", arguments), q=arguments.get("q"), project=arguments.get("project"))
    return {"tools": [_summary(view) for view in registry.tool_views(page.rows)],
            "nextCursor": _cursor("tools", page.next)}


def _get_tool(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    if arguments.get("version") is not None:
        version = registry.get_version(principal.organization, arguments["name"], arguments["version"])
        return registry.version_view(version)
    return registry.tool_view(registry.get_tool(principal.organization, arguments["name"]))


def _validate_definition(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    definition, found = registry.check_definition(arguments, extra_fields=REGISTRATION_FIELDS)
    if found:
        raise invalid(found)
    assert definition is not None  # no violations: the definition
    return {"valid": True, "definition": definition.to_dict()}


def _register_tool(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    tool = registry.register_tool(principal.organization, arguments, principal.actor)
    return registry.tool_view(tool)


def _save_draft(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    data = dict(arguments)
    etag = data.pop("etag", None)
    found = schemas.check_arguments({"properties": {"name": {"type": "string"}, "etag": {"type": "string"}},
                                     "required": ["name"]}, {"name": data.get("name"), "etag": etag})
    if found:
        raise schemas.invalid_arguments(found)
    registry.save_draft(principal.organization, data["name"], data, principal.actor, if_match=etag)
    return registry.tool_view(registry.get_tool(principal.organization, data["name"]))


def _start_draft(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    registry.start_draft(principal.organization, arguments["name"], principal.actor)
    return registry.tool_view(registry.get_tool(principal.organization, arguments["name"]))


def _import_openapi(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    from flask import current_app  # the deployment's address guard and call deadline, as the REST API uses

    dispatcher = current_app.extensions[DISPATCHER_KEY]
    return importing.run_import(principal.organization, arguments, principal.actor, guard=dispatcher.guard,
                                deadline=dispatcher.config.call_deadline_seconds, gone=client_left)


def _list_projects(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    page = registry.project_page(principal.organization, limit=arguments.get("limit", DEFAULT_PAGE),
                                 after=_after("projects", arguments))
    return {"projects": registry.project_views(page.rows), "nextCursor": _cursor("projects", page.next)}


def _own_arguments(error: ServiceError, at: int) -> ServiceError:
    """A refused pin as the agent sent it: `pins[at].version` is its own argument `version`, `pins[at].tool` its
    `tool`; a problem with another pin of the draft keeps its place in the list."""
    prefix = f"pins[{at}]."
    found = [Violation(v.field[len(prefix):], v.rule, v.message)
             if v.field in (prefix + "tool", prefix + "version") else v for v in error.violations]
    return invalid(found, PIN) if error.status == 422 else error


def _pin_tool(principal: registry.Principal, arguments: dict[str, Any]) -> dict[str, Any]:
    """Add the pin, or replace this tool's pin, keeping every other pin of the project's draft as it was."""
    organization, name = principal.organization, arguments["project"]
    version = arguments.get("version")
    pin = {"tool": arguments["tool"], "version": "draft" if version is None else version}
    with write_transaction():
        before = registry.project_view(registry.get_project(organization, name))["draft"]
        if before is None:
            raise refusal("project-no-draft")
        pins = [p for p in before["pins"] if p.get("tool") != pin["tool"]]
        at = next((i for i, p in enumerate(before["pins"]) if p.get("tool") == pin["tool"]), len(pins))
        pins.insert(at, pin)
        try:
            registry.save_project_draft(organization, name, pins, principal.actor)
        except ServiceError as error:
            raise _own_arguments(error, at) from None
        after = registry.project_view(registry.get_project(organization, name))
        # Read, change, write: if another save slipped in between, its pins would be lost, so undo ours instead.
        if after["draft"]["revision"] != before["revision"] + 1:
            raise concurrent_change()
    return after


TOOLS: tuple[AgentTool, ...] = (
    AgentTool(
        "list_tools", "List tools",
        "Lists the HTTP tools registered in your organization, each with its display name, the project it belongs "
        "to (null for an organization-wide tool), its draft if it has one (revision, etag, who saved it last and "
        "when) and the numbers of its published versions. Call this first to see what exists before registering "
        "something new, since tool names are unique across the organization. Give a project to see only that "
        "project's own tools, or q to find tools whose name or display name holds that text. Tools come in name "
        "order a page at a time: when the result has a nextCursor, call again with it as cursor for the next page.",
        schemas.LIST_TOOLS, _list_tools, READ, read_only=True),
    AgentTool(
        "get_tool", "Read a tool",
        "Reads one tool by name: its draft's full definition (description, method, URL, scope, parameters) with "
        "the etag to pass when you save it, and the list of its published versions. Give a version number to read "
        "that published, read-only definition instead. Read a tool before saving its draft, because saving "
        "replaces the whole definition.",
        schemas.READ_TOOL, _get_tool, READ, read_only=True),
    AgentTool(
        "validate_definition", "Validate a definition",
        "Checks a tool definition against every rule of the platform without saving anything, and returns the "
        "definition as it would be stored. If it breaks rules, the result is an error listing every violation "
        "with the field, a stable rule id and the exact sentence, so you can fix them all in one go. It does not "
        "check whether the name is already taken; list_tools does.",
        schemas.DEFINITION, _validate_definition, READ, read_only=True, strict=False),
    AgentTool(
        "register_tool", "Register a tool",
        "Registers a new tool in your organization and creates its draft from the definition you give. The name "
        "is what the model will call, is unique across the organization and can never change. A per-user tool "
        "needs a string parameter named subject, which the platform fills from the session; an array parameter "
        "needs an element_type. A refused registration lists every violation at once. Registering never publishes: "
        "a person publishes the tool later from the dashboard.",
        schemas.DEFINITION, _register_tool, WRITE_DRAFTS, read_only=False, strict=False),
    AgentTool(
        "save_draft", "Save a tool's draft",
        "Saves a tool's draft in place, replacing its whole definition with the one you give and validating "
        "everything together; send every field, not only the ones you change. The name says which tool and cannot "
        "change. Pass the etag from get_tool to be refused rather than overwrite an edit made since you read it. "
        "Only drafts can be saved; if the tool has none, start one with start_draft. Saving never publishes.",
        schemas.SAVED_DRAFT, _save_draft, WRITE_DRAFTS, read_only=False, strict=False),
    AgentTool(
        "start_draft", "Start a new draft",
        "Starts a new draft of a tool as a copy of its latest published version, so you can change a tool that has "
        "been published. A tool has at most one draft: if it already has one, save that draft instead. The new "
        "draft changes nothing that projects use until a person publishes it.",
        schemas.TOOL_NAME, _start_draft, WRITE_DRAFTS, read_only=False),
    AgentTool(
        "import_openapi", "Import tools from an OpenAPI document",
        "Turns the operations of an OpenAPI 3.0 or 3.1 document (the text, or its http or https address) into tool "
        "drafts, one tool per operation. By default it is a preview that writes nothing: each operation comes back "
        "ready (with the definition it would become), refused (with every rule it breaks, in the platform's "
        "sentences) or skipped, and not_carried lists the optional parts a tool cannot send (headers, cookies, "
        "nested objects, the operation's own auth), and approval says whether each call would wait for the person's "
        "approval and why (as GPT Actions decides: x-openai-isConsequential, else GET reads freely and every other "
        "method waits). Name subject_parameter (such as userId) to make the tools that "
        "take it per-user. Call again with apply true, and operations to choose, to write the drafts. Importing "
        "never publishes, and a name already taken is refused unless update_existing asks for a new draft, which "
        "keeps the person's approval choice and the entitlement (each listed in kept).",
        schemas.IMPORT, _import_openapi, WRITE_DRAFTS, read_only=False, strict=False),
    AgentTool(
        "list_projects", "List projects",
        "Lists your organization's projects, each with its draft version's pins (which tool, and which published "
        "version or \"draft\") and its published versions with theirs. Use it to find the project to pin a tool "
        "into. Projects come in name order a page at a time: when the result has a nextCursor, call again with it "
        "as cursor for the next page.",
        schemas.LIST_PROJECTS, _list_projects, READ, read_only=True),
    AgentTool(
        "pin_tool", "Pin a tool into a project's draft",
        "Pins a tool into a project's draft version, so the project's test environment serves it, and returns the "
        "project. The version is \"draft\" (the default) to pin the tool's draft, or a published version number; a "
        "tool already pinned has its pin replaced and every other pin stays as it was. Only the project's draft "
        "changes: a person decides when to publish the project.",
        schemas.PIN, _pin_tool, WRITE_DRAFTS, read_only=False),
)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def listing() -> list[dict[str, Any]]:
    """Every tool as `tools/list` shows it."""
    return [tool.listing() for tool in TOOLS]


def tool_result(data: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    """A `tools/call` result: the data as JSON text for any client, and as structured content."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": is_error}


def call_tool(principal: registry.Principal, name: Any, arguments: Any) -> dict[str, Any]:
    """Run one tool. A refusal is a result with isError and every violation; only an unknown tool or arguments
    that are not an object are protocol errors."""
    tool = _BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        raise ProtocolError(200, INVALID_PARAMS, f"Unknown tool: {name}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ProtocolError(200, INVALID_PARAMS, "A tool's arguments are a JSON object.")
    try:
        require(principal, tool.power)
        found = schemas.check_arguments(tool.input_schema, arguments) if tool.strict else []
        if found:
            raise schemas.invalid_arguments(found)
        return tool_result(tool.handler(principal, arguments))
    except ServiceError as error:
        return tool_result(error.to_dict(), is_error=True)
    except IntegrityError:
        return tool_result(concurrent_change().to_dict(), is_error=True)
