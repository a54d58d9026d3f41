"""The JSON Schemas of the agent tools' inputs, and the shallow check of arguments against them.

The schemas tell the model what to send. They do not decide what makes a definition valid: that is the registry's
own rules (`service.registry.check_definition`), so an agent gets every violation at once with the spec's sentences,
exactly as the REST API gives them. `check_arguments` only checks the top-level arguments of the tools that take
something other than a definition (a name, a version, a project), with the rule table's `argument-…` sentences.
"""
from __future__ import annotations

from typing import Any

from service import limits
from service.catalogue import Violation, violation
from service.definition import ELEMENT_TYPES, LOCATIONS, METHODS, SCOPES, TYPES
from service.errors import ServiceError
from service.text import text_problem

PARAMETER = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": limits.MAX_TOOL_NAME_CHARS,
                 "description": "Letters, digits and underscores, not starting with a digit. The name subject is "
                                "reserved for the per-user subject, which the platform fills from the session."},
        "type": {"type": "string", "enum": list(TYPES),
                 "description": "The subject is always a string."},
        "location": {"type": "string", "enum": list(LOCATIONS),
                     "description": "query; path (needs a {name} placeholder in the URL); or body (POST, PUT or "
                                    "PATCH only). An array or object rides in the body only."},
        "required": {"type": "boolean", "default": True},
        "description": {"type": "string", "maxLength": limits.MAX_DESCRIPTION_CHARS},
        "element_type": {"type": "string", "enum": list(ELEMENT_TYPES),
                         "description": "What an array's elements are. Required on an array, refused on "
                                        "any other type."},
    },
    "required": ["name", "type"],
    "additionalProperties": False,
}

DEFINITION_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "maxLength": limits.MAX_TOOL_NAME_CHARS,
             "description": "The function name the model calls: letters, digits and underscores, not starting with "
                            "a digit, unique in the organization. Set once at registration; it never changes."},
    "display_name": {"type": "string", "maxLength": limits.MAX_DISPLAY_NAME_CHARS,
                     "description": "A label for people; defaults to the tool name."},
    "description": {"type": "string", "maxLength": limits.MAX_DESCRIPTION_CHARS,
                    "description": "Written for the model: what the tool returns and when it is the right one."},
    "method": {"type": "string", "enum": list(METHODS)},
    "url": {"type": "string", "maxLength": limits.MAX_URL_CHARS,
            "description": "Absolute http or https address; {placeholders} in its path take path parameters."},
    "scope": {"type": "string", "enum": list(SCOPES), "default": "shared",
              "description": "per_user tools must declare the subject parameter; shared tools must not."},
    "runs_at_session_start": {"type": "boolean", "default": False,
                              "description": "Runs once before the model's first reply; may declare only the "
                                             "subject parameter."},
    "requires_approval": {"type": "boolean", "default": False,
                          "description": "Each call waits for the person in the conversation to approve it before "
                                         "it is sent; a session-start tool cannot require approval."},
    "required_entitlement": {"type": ["string", "null"],
                             "description": "A claim such as products:write the session token must carry."},
    "project": {"type": ["string", "null"],
                "description": "At registration only: the one project this tool belongs to, or null for an "
                               "organization-wide tool."},
    "parameters": {"type": "array", "items": PARAMETER, "maxItems": limits.MAX_PARAMETERS},
    # What the model sees (docs/shaping.md); absent or null: the spec's behaviour.
    "response_shape": {"type": ["string", "null"], "maxLength": limits.MAX_RESPONSE_SHAPE_CHARS,
                       "description": "A JMESPath expression applied to a 2xx JSON body; the model gets its result "
                                      "as compact JSON, which must fit 16,384 characters (the body may be larger)."},
    "error_fields": {"type": ["array", "null"], "maxItems": limits.MAX_ERROR_FIELDS,
                     "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_-]{0,63}$"},
                     "description": "Top-level fields of a JSON error body the model may read (strings and numbers "
                                    "only), as the failure object's details; the rest of the body never reaches it."},
    "outcome_messages": {"type": ["object", "null"], "maxProperties": limits.MAX_OUTCOME_MESSAGES,
                         "additionalProperties": {"type": "string", "maxLength": limits.MAX_OUTCOME_MESSAGE_CHARS},
                         "description": 'The tool\'s own sentence per outcome, keyed by a failure kind ("refused"), '
                                        'a kind and a status ("refused:404") or "empty" (a 2xx with no body): the '
                                        "failure object's message, or the output of an empty answer."},
}

DEFINITION = {
    "type": "object",
    "properties": DEFINITION_PROPERTIES,
    "required": ["name", "description", "method", "url"],
    "additionalProperties": False,
}

SAVED_DRAFT = {
    "type": "object",
    "properties": {
        **DEFINITION_PROPERTIES,
        "name": {"type": "string", "description": "The tool whose draft to save (the name itself cannot change)."},
        "etag": {"type": "string",
                 "description": "Optional: the draft's etag from get_tool. The save is refused if the draft has "
                                "changed since, so you never overwrite someone else's edit unseen."},
    },
    "required": ["name", "description", "method", "url"],
    "additionalProperties": False,
}

NOTHING = {"type": "object", "properties": {}, "additionalProperties": False}

TOOL_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
             "additionalProperties": False}

READ_TOOL = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "version": {"type": "integer", "minimum": 1, "maximum": limits.MAX_STORED_INTEGER,
                    "description": "Optional: a published version number, to read that frozen definition."},
    },
    "required": ["name"],
    "additionalProperties": False,
}

#: Paging arguments of the list tools: MCP's opaque cursor, and how many on a page.
PAGING = {
    "cursor": {"type": "string", "description": "Optional: the nextCursor of the page before, for the next page."},
    "limit": {"type": "integer", "minimum": 1, "maximum": limits.MAX_PAGE, "default": limits.DEFAULT_PAGE,
              "description": "Optional: how many on a page."},
}

LIST_TOOLS = {
    "type": "object",
    "properties": {
        "project": {"type": "string", "description": "Optional: only this project's own tools."},
        "q": {"type": "string", "maxLength": limits.MAX_SEARCH_CHARS,
              "description": "Optional: only tools whose name or display name holds this text, whatever the case."},
        **PAGING,
    },
    "additionalProperties": False,
}

LIST_PROJECTS = {"type": "object", "properties": dict(PAGING), "additionalProperties": False}

PIN = {
    "type": "object",
    "properties": {
        "project": {"type": "string"},
        "tool": {"type": "string"},
        "version": {"type": ["integer", "string"], "default": "draft",
                    "description": 'The string "draft" (the default) or a published version number.'},
    },
    "required": ["project", "tool"],
    "additionalProperties": False,
}

IMPORT = {
    "type": "object",
    "properties": {
        "document": {"type": "string", "description": "The OpenAPI 3.0 or 3.1 document itself, JSON or YAML."},
        "url": {"type": "string", "description": "Or where to fetch it from (an http or https address)."},
        "server": {"type": ["string", "integer"],
                   "description": "One of the document's servers (its URL or index) or any absolute address; "
                                  "default: each operation's own servers, else the document's first."},
        "subject_parameter": {"type": "string",
                              "description": "The parameter that names the person, such as userId: it becomes the "
                                             "reserved subject, filled from the session, and the tool per-user."},
        "project": {"type": "string", "description": "The project the new tools belong to."},
        "operations": {"type": "array", "items": {"type": "string"},
                       "description": 'The operations to import, by operationId or "METHOD /path"; default: every '
                                      "one that is ready."},
        "apply": {"type": "boolean", "default": False,
                  "description": "false: a preview that writes nothing. true: write the drafts."},
        "update_existing": {"type": "boolean", "default": False,
                            "description": "A tool that already exists gets a new draft instead of being refused."},
        "requires_approval": {"type": "object", "additionalProperties": {"type": "boolean"},
                              "description": 'The person\'s choice, by operationId or "METHOD /path", of whether '
                                             "each call waits for their approval, in place of the importer's."},
    },
    "additionalProperties": False,
}

_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list,
    "null": type(None)}


def invalid_arguments(violations: list[Violation]) -> ServiceError:
    """422 naming every argument that does not fit the tool's input schema."""
    return ServiceError(422, "invalid-arguments", "The arguments do not fit this tool's input schema.",
                        list(violations))


def _has_type(value: Any, type_: str) -> bool:
    if isinstance(value, bool) and type_ != "boolean":
        return False  # JSON's true is not the number 1
    return isinstance(value, _JSON_TYPES[type_])


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> list[Violation]:
    """Every top-level problem with `arguments`: missing, unknown, of the wrong type, a number outside its bounds, or
    a string that is not text a name can hold (a control character: PostgreSQL cannot even be asked about a NUL)."""
    properties = schema.get("properties", {})
    found = [violation(key, "argument-required") for key in schema.get("required", ()) if arguments.get(key) is None]
    if schema.get("additionalProperties") is False:
        found += [violation(key, "argument-unknown") for key in sorted(set(arguments) - set(properties))]
    for key, value in arguments.items():
        declared = properties.get(key, {}).get("type")
        if value is None or declared is None:
            continue
        if not any(_has_type(value, t) for t in ([declared] if isinstance(declared, str) else declared)):
            found.append(violation(key, "argument-type"))
        elif isinstance(value, str) and (problem := text_problem(value)) is not None:
            found.append(violation(key, problem))
        elif _has_type(value, "integer") and not (
                properties[key].get("minimum", value) <= value <= properties[key].get("maximum", value)):
            found.append(violation(key, "number-range"))
    return found
