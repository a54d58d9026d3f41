"""Every rule a tool definition must hold, as plain functions over plain data.

The rules are here; their ids and sentences are the error catalogue's (`service.catalogue`), below every layer that
raises or renders a violation.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_plus, urlsplit

from service import limits
from service.catalogue import Violation, violation
from service.definition import (
    BODY_METHODS,
    ELEMENT_TYPES,
    LOCATIONS,
    METHODS,
    RESERVED_TOOL_NAMES,
    SCALAR_TYPES,
    SCOPES,
    SUBJECT,
    TYPES,
    Parameter,
    ToolDefinition,
)
from service.dispatch import DefinitionError, compile_definition
from service.registry.shaping import SHAPING_FIELDS, check_shaping
from service.text import is_blank, text_problem

# Matched with fullmatch: `$` also matches before a final line break, so "x\n" would pass as "x".
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENTITLEMENT_PATTERN = re.compile(r"[\x21-\x7e]+")
PLACEHOLDER_PATTERN = re.compile(r"\{([^{}]*)\}")

DEFINITION_FIELDS = {
    "name", "description", "method", "url", "scope", "runs_at_session_start", "requires_approval",
    "required_entitlement", "parameters", *SHAPING_FIELDS,
}
PARAMETER_FIELDS = {"name", "type", "location", "required", "description", "element_type"}


def placeholders(url: str) -> list[str]:
    """The `{name}` placeholders of a URL, in order."""
    return PLACEHOLDER_PATTERN.findall(url)


def check_definition(data: Any, *, extra_fields: frozenset[str] = frozenset(), registered: bool = False,
                     ) -> tuple[ToolDefinition | None, list[Violation]]:
    """Validate raw definition data; return the definition and every violation at once (the definition only if none).

    `extra_fields` names keys the caller handles itself (display_name, project) so they are not reported unknown.
    `registered`: the definition is an existing tool's (a draft saved or published), whose name was chosen before;
    a reserved name is refused only where a name is being chosen, so a tool registered under one before it was
    reserved can still be edited.
    """
    if not isinstance(data, dict):
        return None, [violation("", "field-type")]
    found: list[Violation] = []
    for key in sorted(set(data) - DEFINITION_FIELDS - extra_fields):
        found.append(violation(key, "field-unknown"))

    name = _string(data, "name", found, required=True, max_chars=limits.MAX_TOOL_NAME_CHARS)
    if name is not None and not NAME_PATTERN.fullmatch(name):  # "" too: a tool must have a name to be called by
        found.append(violation("name", "name-format"))
    elif name in RESERVED_TOOL_NAMES and not registered:
        found.append(violation("name", "name-reserved"))
    description = _text(_string(data, "description", found, required=False, max_chars=limits.MAX_DESCRIPTION_CHARS),
                        "description", found, description=True)
    if is_blank(description or "") and not _has(found, "description"):
        found.append(violation("description", "description-required"))
    method = _string(data, "method", found, required=True)
    if method is not None and method not in METHODS:
        found.append(violation("method", "method-unsupported"))
    url = _text(_string(data, "url", found, required=True, max_chars=limits.MAX_URL_CHARS), "url", found)
    if url is not None:
        found.extend(_check_url(url))
    scope = _check_scope(data, found)
    session_start, requires_approval = _check_flags(data, found)
    entitlement = _check_entitlement(data, found)
    parameters = _check_parameters(data, found)
    given = [p for p in parameters if p is not None]
    response_shape, error_fields, outcome_messages = check_shaping(data, found)

    found.extend(_check_together(method, url, scope, session_start, given, parameters))
    if found:
        return None, found
    assert description is not None and url is not None  # each missing one is a violation above
    definition = ToolDefinition(
        name=name,
        description=description,
        method=method,
        url=url,
        scope=scope,
        runs_at_session_start=session_start,
        requires_approval=requires_approval,
        required_entitlement=entitlement,
        parameters=tuple(given),
        response_shape=response_shape,
        error_fields=error_fields,
        outcome_messages=outcome_messages,
    )
    try:
        # Fail closed: whatever request building would refuse, the registry refuses first.
        compile_definition(definition)
    except DefinitionError:
        return None, [violation("", "unbuildable")]
    return definition, []


def _check_scope(data: dict[str, Any], found: list[Violation]) -> str:
    """The tool's scope: shared when it is missing."""
    scope = _string(data, "scope", found, required=False)
    if scope is None:
        return "shared"
    if scope not in SCOPES:  # "" too: only a missing scope defaults
        found.append(violation("scope", "scope-unsupported"))
    return scope


def _check_flags(data: dict[str, Any], found: list[Violation]) -> tuple[bool, bool]:
    """Whether the tool runs at session start and whether it requires approval (each False unless a boolean says
    so); a session-start tool cannot require approval."""
    flags = []
    for key in ("runs_at_session_start", "requires_approval"):
        value = data.get(key, False)
        if not isinstance(value, bool):
            found.append(violation(key, "field-type"))
            value = False
        flags.append(value)
    session_start, requires_approval = flags
    if session_start and requires_approval:
        found.append(violation("requires_approval", "session-start-no-approval"))
    return session_start, requires_approval


def _check_entitlement(data: dict[str, Any], found: list[Violation]) -> str | None:
    """The entitlement a tool requires, if any ("" is none)."""
    entitlement = _string(data, "required_entitlement", found, required=False,
                          max_chars=limits.MAX_ENTITLEMENT_CHARS)
    if not entitlement:
        return None
    if not ENTITLEMENT_PATTERN.fullmatch(entitlement):
        found.append(violation("required_entitlement", "entitlement-format"))
    return entitlement


def _check_parameters(data: dict[str, Any], found: list[Violation]) -> list[Parameter | None]:
    """Each parameter as given, checked alone (None where one cannot be read); the list itself a list, and short."""
    raw_parameters = data.get("parameters", [])
    if raw_parameters is None:
        raw_parameters = []
    if not isinstance(raw_parameters, list):
        found.append(violation("parameters", "field-type"))
        raw_parameters = []
    if len(raw_parameters) > limits.MAX_PARAMETERS:
        found.append(violation("parameters", "too-many-parameters"))
    return [_check_parameter(i, p, found) for i, p in enumerate(raw_parameters)]


def _check_together(method, url, scope, session_start, given, parameters) -> list[Violation]:
    """The rules that relate fields to each other (the spec's 'Save validates them together')."""
    index = {id(p): i for i, p in enumerate(parameters) if p is not None}

    def field(p: Parameter, name: str) -> str:
        """A parameter's field as the definition holds it: its place among the parameters given."""
        return f"parameters[{index[id(p)]}].{name}"

    found: list[Violation] = []
    seen: set[str] = set()
    for p in given:
        if p.name in seen:
            found.append(violation(field(p, "name"), "duplicate-parameter"))
        seen.add(p.name)
        found += _check_in_place(p, method, url, field)
    found += _check_subjects(scope, session_start, given, field)
    if url is not None:
        path_names = {p.name for p in given if p.location == "path"}
        for name in dict.fromkeys(placeholders(url)):
            if name not in path_names and not _placeholder_outside_path(url, name):
                found.append(violation("url", "placeholder-needs-parameter"))
    return found


def _check_in_place(p: Parameter, method, url, field) -> list[Violation]:
    """One parameter against the request it rides in: its location under this method and URL."""
    found: list[Violation] = []
    if p.name != SUBJECT and p.name.casefold() == SUBJECT:
        found.append(violation(field(p, "name"), "subject-spelling"))
    if p.location == "body" and method in METHODS and method not in BODY_METHODS:
        found.append(violation(field(p, "location"), "body-needs-body-method"))
    if p.location != "body" and p.type not in SCALAR_TYPES:
        found.append(violation(field(p, "location"), "type-location-mismatch"))
    if p.location == "path":
        if url is not None and p.name not in placeholders(url):
            found.append(violation(field(p, "location"), "path-needs-placeholder"))
        if not p.required:
            found.append(violation(field(p, "required"), "path-parameter-required"))
    if p.location == "query" and url is not None and p.name in _fixed_query_keys(url):
        found.append(violation(field(p, "name"), "query-key-in-url"))
    return found


def _check_subjects(scope, session_start, given, field) -> list[Violation]:
    """The subject parameter against the scope, and what a session-start tool may declare."""
    found: list[Violation] = []
    subjects = [p for p in given if p.is_subject]
    for p in subjects:
        if p.type != "string":
            found.append(violation(field(p, "type"), "subject-must-be-string"))
        if scope == "shared":
            found.append(violation(field(p, "name"), "shared-has-no-subject"))
    if scope == "per_user" and not subjects:
        found.append(violation("parameters", "per-user-needs-subject"))
    if session_start:
        for p in given:
            if not p.is_subject:
                found.append(violation(field(p, "name"), "session-start-only-subject"))
    return found


def _check_parameter(i: int, data: Any, found: list[Violation]) -> Parameter | None:
    prefix = f"parameters[{i}]"
    if not isinstance(data, dict):
        found.append(violation(prefix, "field-type"))
        return None
    before = len(found)
    for key in sorted(set(data) - PARAMETER_FIELDS):
        found.append(violation(f"{prefix}.{key}", "field-unknown"))
    name = _string(data, "name", found, required=True, prefix=prefix, max_chars=limits.MAX_TOOL_NAME_CHARS)
    if name is not None and not NAME_PATTERN.fullmatch(name):
        found.append(violation(f"{prefix}.name", "parameter-name-format"))
    is_subject = name == SUBJECT
    # The editor fixes the subject's type to string; a definition that leaves it out gets that type.
    type_ = _string(data, "type", found, required=not is_subject, prefix=prefix)
    if type_ is None and is_subject:
        type_ = "string"
    if type_ is not None and type_ not in TYPES:  # "" too
        found.append(violation(f"{prefix}.type", "type-unsupported"))
    location = _string(data, "location", found, required=False, prefix=prefix)
    if location is None:
        # The editor pins an array or object to the body; anything else defaults to the query string.
        location = "body" if type_ in TYPES and type_ not in SCALAR_TYPES else "query"
    elif location not in LOCATIONS:
        found.append(violation(f"{prefix}.location", "location-unsupported"))
    element_type = _string(data, "element_type", found, required=False, prefix=prefix)
    if type_ == "array" and element_type is None and not _has(found, f"{prefix}.element_type"):
        found.append(violation(f"{prefix}.element_type", "array-needs-element-type"))
    if element_type is not None:
        if type_ != "array":
            found.append(violation(f"{prefix}.element_type", "element-type-only-on-array"))
        elif element_type not in ELEMENT_TYPES:
            found.append(violation(f"{prefix}.element_type", "element-type-unsupported"))
    required = data.get("required", True)
    if not isinstance(required, bool):
        found.append(violation(f"{prefix}.required", "field-type"))
    description = _text(_string(data, "description", found, required=False, prefix=prefix,
                                max_chars=limits.MAX_DESCRIPTION_CHARS), f"{prefix}.description", found,
                        description=True) or ""
    if len(found) > before and (name is None or type_ not in TYPES or location not in LOCATIONS):
        return None
    return Parameter(
        name=name,
        type=type_,
        location=location,
        required=required if isinstance(required, bool) else True,
        description=description,
        element_type=element_type if type_ == "array" else None,
    )


def _check_url(url: str) -> list[Violation]:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return [violation("url", "url-format")]
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or "#" in url
        or any(ch.isspace() for ch in url)
    ):
        return [violation("url", "url-format")]
    if PLACEHOLDER_PATTERN.search(parts.netloc) or PLACEHOLDER_PATTERN.search(parts.query):
        return [violation("url", "placeholder-outside-path")]
    unbalanced = PLACEHOLDER_PATTERN.sub("", parts.path)
    if "{" in unbalanced or "}" in unbalanced or any(s in (".", "..") for s in parts.path.split("/")):
        return [violation("url", "url-path-format")]
    return []


def _fixed_query_keys(url: str) -> set[str]:
    return {unquote_plus(pair.split("=", 1)[0]) for pair in urlsplit(url).query.split("&") if pair}


def _placeholder_outside_path(url: str, name: str) -> bool:
    return f"{{{name}}}" not in urlsplit(url).path


def _string(data, key, found, *, required, prefix="", max_chars=None):
    field = f"{prefix}.{key}" if prefix else key
    value = data.get(key)
    if value is None:
        if required:
            found.append(violation(field, "field-required"))
        return None
    if not isinstance(value, str):
        found.append(violation(field, "field-type"))
        return None
    if max_chars is not None and len(value) > max_chars:
        found.append(violation(field, "field-too-long"))
        return None
    return value


def _text(value: str | None, field: str, found: list[Violation], *, description: bool = False) -> str | None:
    """`value` if it is text this field may hold (service.text), else None with the violation added."""
    problem = None if value is None else text_problem(value, description=description)
    if problem is not None:
        found.append(violation(field, problem))
        return None
    return value


def _has(found: list[Violation], field: str) -> bool:
    return any(v.field == field for v in found)

