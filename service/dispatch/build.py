"""From a tool definition and the model's arguments to the HTTP request the platform sends.

A definition is compiled once (published versions never change, so the caller caches the result):
its URL is split into the fixed origin, the literal pieces of the path around each {placeholder},
and any fixed query string. Building a request then only checks the model's values and drops them
into those slots, encoded so that no value can change the URL's shape: scheme, host, the number of
path segments and the query keys all come from the definition alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping
from urllib.parse import quote, urlsplit

from service.definition import BODY_METHODS, LOCATIONS, SCALAR_TYPES, SUBJECT, Parameter, ToolDefinition
from service.dispatch.arguments import check_value, json_type_name, render_scalar, to_json_bytes
from service.dispatch.shaping import Shaping, compile_shaping
from service.limits import MAX_BODY_BYTES, MAX_URL_CHARS

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
#: HTTP clients remove dot segments, so `/users/{id}/orders` with `..` would become `/orders`.
_FORBIDDEN_PATH_VALUES = ("", ".", "..")
_NAME_IN_MESSAGE_CHARS = 64


class DefinitionError(ValueError):
    """A definition the dispatcher cannot build safely from (the registry should have refused it)."""


class InvalidArguments(Exception):
    """The model's arguments do not fit the declared parameters; nothing is called.

    `found` holds each (argument, what is wrong with it), for logs and for the admin's playground; the model only
    ever sees the failure kind. `problems` is each of them as one line.
    """

    def __init__(self, found: list[tuple[str, str]]) -> None:
        self.found = found
        self.problems = [f"{argument}: {problem}" for argument, problem in found]
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True)
class BuiltRequest:
    """One outbound request, ready for the transport (which adds the Authorization header)."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass(frozen=True)
class CompiledTool:
    """What can be worked out from a definition once, before any model value is seen."""

    definition: ToolDefinition
    origin: str  # scheme://host[:port], exactly as the definition wrote it
    path_literals: tuple[str, ...]  # the path's text around the placeholders: one more than names
    path_names: tuple[str, ...]  # the placeholder names, in path order
    fixed_query: str  # the definition's own query string, "" when none
    parameters: Mapping[str, Parameter]  # the model's parameters by name (never the subject)
    subject: Parameter | None
    query_keys: tuple[tuple[str, str], ...]  # (name, name as encoded in the query), in order
    body_names: tuple[str, ...]  # the body's keys, in order; empty when the tool sends no body
    shaping: Shaping | None = None  # None: the spec's behaviour (the tool sets no shape, error fields or messages)


def compile_definition(definition: ToolDefinition) -> CompiledTool:
    """Split the definition's URL into fixed parts and slots; raises DefinitionError if unsafe."""
    origin, literals, names, fixed_query = _split_url(definition.url)
    fixed_keys = {pair.split("=", 1)[0] for pair in fixed_query.split("&") if pair}
    for parameter in definition.parameters:
        _check_parameter(definition, parameter, names, fixed_keys)
    locations = {p.name: p.location for p in definition.parameters}
    for name in names:
        if locations.get(name) != "path":
            raise DefinitionError(f"the placeholder {{{name}}} has no path parameter")
    subject = definition.subject_parameter
    if definition.scope == "per_user" and subject is None:
        raise DefinitionError("a per-user tool needs a subject parameter")
    shaping = None
    if definition.shaped:
        try:
            shaping = compile_shaping(definition.response_shape, definition.error_fields, definition.outcome_messages)
        except ValueError as exc:
            raise DefinitionError(str(exc)) from None
    return CompiledTool(
        definition=definition,
        origin=origin,
        path_literals=literals,
        path_names=names,
        fixed_query=fixed_query,
        parameters=MappingProxyType({p.name: p for p in definition.model_parameters}),
        subject=subject,
        query_keys=tuple((p.name, quote(p.name, safe="")) for p in definition.parameters if p.location == "query"),
        body_names=tuple(p.name for p in definition.parameters if p.location == "body"),
        shaping=shaping,
    )


def build_request(
    tool: ToolDefinition | CompiledTool, arguments: Any, subject: str | None
) -> BuiltRequest:
    """The request for one call: the model's `arguments` checked strictly, the session's `subject`
    placed where the definition declares it. Any model-supplied subject, in any case, is ignored.

    Raises InvalidArguments when the arguments do not fit; ValueError when a tool with a subject
    parameter is built without the session's subject (a caller's mistake, not the model's).
    """
    compiled = tool if isinstance(tool, CompiledTool) else compile_definition(tool)
    values, problems = _checked_values(compiled, arguments)
    if compiled.subject is not None:
        if subject is None:
            raise ValueError("this tool takes the session's subject, and none was given")
        problem = _problem(compiled.subject, subject)
        if problem is None:
            values[SUBJECT] = subject
        else:
            problems.append((f"{SUBJECT} (from the session)", problem))
    if problems:
        raise InvalidArguments(problems)

    url = _url(compiled, values)
    if len(url) > MAX_URL_CHARS:
        raise InvalidArguments([("url", f"longer than {MAX_URL_CHARS} characters once built")])
    if not compiled.body_names:
        return BuiltRequest(compiled.definition.method, url)
    body = to_json_bytes({name: values[name] for name in compiled.body_names if name in values})
    if len(body) > MAX_BODY_BYTES:
        raise InvalidArguments([("body", f"larger than {MAX_BODY_BYTES} bytes")])
    return BuiltRequest(compiled.definition.method, url, {"Content-Type": "application/json"}, body)


def _checked_values(compiled: CompiledTool, arguments: Any) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    if type(arguments) is not dict:
        return {}, [("arguments", f"expected object, got {json_type_name(arguments)}")]
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    answered: set[str] = set()
    for name, value in arguments.items():
        if str(name).casefold() == SUBJECT:
            continue  # the model never chooses whose data is read; dropped, and not an error
        parameter = compiled.parameters.get(name)
        label = str(name)[:_NAME_IN_MESSAGE_CHARS]
        if parameter is None:
            problems.append((label, "not a parameter of this tool"))
            continue
        if value is None:
            continue  # JSON null means "not given": fine when optional, missing when required
        answered.add(name)
        problem = _problem(parameter, value)
        if problem is None:
            values[name] = value
        else:
            problems.append((label, problem))
    for name, parameter in compiled.parameters.items():
        # A path value has nowhere else to go, so a path parameter is needed even if marked optional.
        if (parameter.required or parameter.location == "path") and name not in answered:
            problems.append((name, "required"))
    return values, problems


def _problem(parameter: Parameter, value: Any) -> str | None:
    problem = check_value(parameter, value)
    if problem is None and parameter.location == "path" and render_scalar(value) in _FORBIDDEN_PATH_VALUES:
        return "a path value cannot be empty, '.' or '..'"
    return problem


def _url(compiled: CompiledTool, values: dict[str, Any]) -> str:
    # safe="" percent-encodes every reserved character, '/', '?', '#', '%', spaces and CR/LF included.
    path = [compiled.path_literals[0]]
    for name, literal in zip(compiled.path_names, compiled.path_literals[1:]):
        path.append(quote(render_scalar(values[name]), safe=""))
        path.append(literal)
    query = [compiled.fixed_query] if compiled.fixed_query else []
    for name, key in compiled.query_keys:
        if name in values:
            query.append(f"{key}={quote(render_scalar(values[name]), safe='')}")
    return compiled.origin + "".join(path) + ("?" + "&".join(query) if query else "")


def _split_url(url: str) -> tuple[str, tuple[str, ...], tuple[str, ...], str]:
    """(origin, path literals, placeholder names, fixed query) of a tool URL."""
    parts = urlsplit(url)  # a fragment is never sent, so it is dropped here
    try:
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError as exc:
        raise DefinitionError(f"the tool URL has a bad port: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise DefinitionError("the tool URL must be an absolute http or https URL")
    if "@" in parts.netloc:
        raise DefinitionError("the tool URL may not carry credentials")
    if any(c in parts.netloc + parts.query for c in "{}"):
        raise DefinitionError("a {placeholder} may sit only in the URL path")
    pieces = _PLACEHOLDER.split(parts.path)
    literals, names = tuple(pieces[0::2]), tuple(pieces[1::2])
    if any(c in literal for literal in literals for c in "{}"):
        raise DefinitionError("the URL path has an unbalanced brace")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise DefinitionError("the URL path may not contain '.' or '..' segments")
    return f"{parts.scheme}://{parts.netloc}", literals, names, parts.query


def _check_parameter(
    definition: ToolDefinition, parameter: Parameter, names: tuple[str, ...], fixed_keys: set[str]
) -> None:
    """The registry's rules that request building relies on, checked again: fail closed."""
    if parameter.location not in LOCATIONS:
        raise DefinitionError(f"the parameter {parameter.name!r} has an unknown location")
    if parameter.name != SUBJECT and parameter.name.casefold() == SUBJECT:
        raise DefinitionError(f"the parameter {parameter.name!r} could be mistaken for the subject")
    if parameter.is_subject and parameter.type != "string":
        raise DefinitionError("the subject parameter must be a string")
    if parameter.location == "path" and parameter.name not in names:
        raise DefinitionError(f"the path parameter {parameter.name!r} has no placeholder")
    if parameter.location == "query" and quote(parameter.name, safe="") in fixed_keys:
        raise DefinitionError(f"the query parameter {parameter.name!r} is already fixed in the URL")
    if parameter.location in ("path", "query") and parameter.type not in SCALAR_TYPES:
        raise DefinitionError(f"the parameter {parameter.name!r} cannot ride in the {parameter.location}")
    if parameter.location == "body" and definition.method not in BODY_METHODS:
        raise DefinitionError(f"a {definition.method} request cannot carry a body parameter")
