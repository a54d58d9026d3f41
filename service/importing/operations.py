"""One OpenAPI operation → one tool definition, with every part that cannot be carried said out loud.

The mapping fills a definition as the editor would and then asks the registry's own rules (`check_definition`),
so what the preview says is what registering would say, in the spec's sentences. Nothing is dropped silently: a
part the platform cannot send (a header, a cookie, a nested object, a non-JSON body, the operation's own auth) is
reported on the operation's `not_carried` when it is optional, and refuses the operation when it is required.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from service import limits
from service.catalogue import Violation, violation
from service.definition import METHODS as TOOL_METHODS
from service.definition import SUBJECT, ToolDefinition
from service.importing.refs import RefError, Resolver
from service.importing.schemas import NotCarried, Shape, flatten, object_fields, shape_of
from service.registry import REGISTRATION_FIELDS
from service.registry.rules import check_definition

#: The methods of a path item, in the order the preview lists them.
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: Header parameters OpenAPI itself says to ignore ("SHALL be ignored"): the platform sets these.
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_JSON_MEDIA = re.compile(r"application/([\w.-]+\+)?json(;.*)?", re.IGNORECASE)
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_PARAMETER_FIELD = re.compile(r"parameters\[(\d+)\]")
_ELLIPSIS = "…"
#: OpenAI's mark of an operation that changes something, which its assistants confirm with the person first: a tool
#: that requires the person's approval of each call (docs/approvals.md).
CONSEQUENTIAL = "x-openai-isConsequential"
#: Methods that only read: with no mark, GPT Actions calls them without asking, and so does an imported tool. Every
#: other method is consequential unless marked false.
READING_METHODS = frozenset({"GET", "HEAD"})
#: The rule (service.catalogue) that says why an operation does or does not wait for the person's approval.
APPROVAL_RULES = {(True, True): "approval-marked", (True, False): "approval-marked-off",
                  (False, True): "approval-by-method", (False, False): "approval-reading-method"}
APPROVAL_CHOSEN = "approval-chosen"


@dataclass(frozen=True)
class Operation:
    """One operation of the document, as found under its path."""

    method: str  # upper case
    path: str
    operation_id: str | None
    node: dict[str, Any]
    path_item: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class Mapped:
    """What an operation becomes: the registration data (or None), and what stops it or is left out."""

    tool: str
    registration: dict[str, Any] | None = None
    definition: ToolDefinition | None = None  # the checked definition, when no rule is broken
    errors: list[Violation] = field(default_factory=list)
    not_carried: list[Violation] = field(default_factory=list)
    #: Whether each call waits for the person's approval, and why (the rule whose sentence says so): the mark
    #: `x-openai-isConsequential`, else the method, as GPT Actions decides it.
    approval: Violation | None = None
    #: The operation asks for credentials of its own (its `security`), which no tool carries.
    needs_auth: bool = False

    @property
    def requires_approval(self) -> bool:
        """What the importer sets: the registration's value (a re-import may keep the person's instead)."""
        return bool((self.registration or {}).get("requires_approval"))

    @property
    def approval_chosen(self) -> bool:
        """Whether the person chose the approval in this import's request (`choose_approval`)."""
        return self.approval is not None and self.approval.rule == APPROVAL_CHOSEN

    def choose_approval(self, required: bool) -> None:
        """The person's choice in place of the importer's, checked by the registry's rules like the rest."""
        if self.registration is None:
            return
        registration = {k: v for k, v in self.registration.items() if k != "requires_approval"}
        if required:
            registration["requires_approval"] = True
        self.registration = registration
        self.definition, found = check_definition(registration, extra_fields=REGISTRATION_FIELDS)
        self.errors.extend(found)
        self.approval = violation("requires_approval", APPROVAL_CHOSEN)


@dataclass(frozen=True)
class Context:
    """What every operation of one import shares."""

    resolver: Resolver
    base: str | None  # where the document was fetched from, against which a relative server URL is read
    chosen_url: str | None  # the server chosen for every operation, or None
    default_url: str | None  # the document's own first server, for operations that name none
    server_of: Callable[[Any], str | None]  # an operation's or path's own `servers` → its base URL, if any
    subject_parameter: str | None
    security: Any  # the document's default security requirements
    project: str | None


@dataclass
class _Param:
    """A parameter on its way into the definition, with where it came from in the document."""

    data: dict[str, Any]
    source: str  # "query.limit", "path.petId", "body.tags"
    required: bool


def tool_name(operation: Operation) -> str:
    """The operationId made to fit the name rule (other characters become `_`), or one made from method and path."""
    raw = operation.operation_id or f"{operation.method.lower()} {operation.path}"
    name = _NOT_NAME.sub("_", raw).strip("_") or operation.method.lower()
    if name[0].isdigit():
        name = f"_{name}"
    return name[: limits.MAX_TOOL_NAME_CHARS]


def describe(*parts: Any, separator: str = "\n\n") -> str:
    """Non-empty parts joined, within the description limit (cut with an ellipsis)."""
    text = separator.join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    if len(text) > limits.MAX_DESCRIPTION_CHARS:
        text = text[: limits.MAX_DESCRIPTION_CHARS - 1].rstrip() + _ELLIPSIS
    return text


def display_name(summary: Any) -> str | None:
    """A summary as a display name: one line, without its closing period, at most
    MAX_IMPORTED_DISPLAY_NAME_CHARS characters cut at a word (the description keeps the whole summary)."""
    if not isinstance(summary, str) or not summary.strip():
        return None
    name = " ".join(summary.split())
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1].rstrip()
    if len(name) > limits.MAX_IMPORTED_DISPLAY_NAME_CHARS:
        cut = name[: limits.MAX_IMPORTED_DISPLAY_NAME_CHARS - 1]
        if " " in cut and not name[len(cut)].isspace():
            cut = cut[: cut.rindex(" ")]  # end at a word, never inside one
        name = cut.rstrip(" ,;:-") + _ELLIPSIS
    return name or None


def map_operation(operation: Operation, context: Context) -> Mapped:
    """The registration data `operation` becomes, checked by the registry's rules."""
    mapped = Mapped(tool=tool_name(operation))
    if operation.method not in TOOL_METHODS:
        mapped.errors.append(violation("method", "method-unsupported"))
        return mapped
    params: list[_Param] = []
    try:
        _parameters(operation, context, params, mapped)
        _body(operation, context, params, mapped)
    except RefError as error:
        mapped.errors.append(Violation(f"$ref {error.ref}", error.rule, violation("", error.rule).message))
        return mapped
    _security(operation, context, mapped)
    url = _url(operation, context)
    if url is None:
        mapped.errors.append(violation("server", "server-required"))
        return mapped
    summary, details = operation.node.get("summary"), operation.node.get("description")
    if isinstance(summary, str) and isinstance(details, str) and details.strip().startswith(summary.strip()):
        summary = None  # the description already opens with the summary
    data: dict[str, Any] = {
        "name": mapped.tool,
        "display_name": display_name(operation.node.get("summary")),
        "description": describe(summary, details),
        "method": operation.method,
        "url": url,
        "scope": "shared",
        "project": context.project,
    }
    _consequential(operation, data, mapped)
    _subject(data, params, context.subject_parameter)
    mapped.registration = _checked(data, params, mapped)
    return mapped


def _consequential(operation: Operation, data: dict[str, Any], mapped: Mapped) -> None:
    """Whether each call waits for the person's approval, as GPT Actions decides it: `x-openai-isConsequential`
    where the operation has it (true or false, on any method), else not for GET and HEAD and so for every other
    method. Any other value of the mark refuses the operation rather than guess which was meant: a consequential
    call must never go out unasked because its mark was misspelt. An import never makes a session-start tool, so
    the flag can always be carried; the registry's rules check it all the same, like everything else mapped."""
    mark = operation.node.get(CONSEQUENTIAL)
    if mark is not None and not isinstance(mark, bool):
        mapped.errors.append(violation(CONSEQUENTIAL, "field-type"))
        return
    marked = mark is not None
    required = mark if isinstance(mark, bool) else operation.method not in READING_METHODS
    mapped.approval = violation(CONSEQUENTIAL if marked else "method", APPROVAL_RULES[(marked, required)])
    if required:
        data["requires_approval"] = True


def _parameters(operation: Operation, context: Context, params: list[_Param], mapped: Mapped) -> None:
    """Path-level parameters, then the operation's own, which replace a path-level one of the same name and place."""
    declared: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*_list(operation.path_item.get("parameters")), *_list(operation.node.get("parameters"))]:
        parameter = context.resolver.resolve(raw)
        if isinstance(parameter, dict) and isinstance(parameter.get("name"), str):
            declared[(str(parameter.get("in")), parameter["name"])] = parameter
    for (place, name), parameter in declared.items():
        source = f"{place}.{name}"
        required = place == "path" or parameter.get("required") is True
        if place == "header" and name.lower() in _IGNORED_HEADERS:
            continue
        if place in ("header", "cookie"):
            _not_carried(mapped, source, f"{place}-not-carried", required)
            continue
        if place not in ("path", "query"):
            _not_carried(mapped, source, "schema-not-carried", required)
            continue
        try:
            if "schema" not in parameter:
                raise NotCarried("schema-not-carried")  # `content` instead: a serialized structure
            shape = shape_of(parameter["schema"], context.resolver)
        except NotCarried as problem:
            _not_carried(mapped, source, problem.rule, required)
            continue
        if shape.type is None:
            shape = Shape("string", description=shape.description, notes=shape.notes)  # on the wire it is text
        params.append(_Param(_parameter(name, place, shape, required, parameter.get("description")), source,
                             required))


def _body(operation: Operation, context: Context, params: list[_Param], mapped: Mapped) -> None:
    """A JSON request body's top-level fields, each a body parameter."""
    if "requestBody" not in operation.node:
        return
    body = context.resolver.resolve(operation.node["requestBody"])
    if not isinstance(body, dict):
        return
    required = body.get("required") is True
    content = body.get("content")
    if not isinstance(content, dict):
        content = {}
    json_type = next((m for m in content if isinstance(m, str) and _JSON_MEDIA.fullmatch(m)), None)
    if json_type is None:
        _body_lost(mapped, "body-not-json", required, _required_fields(content.values(), context.resolver))
        return
    media = content[json_type] if isinstance(content[json_type], dict) else {}
    try:
        fields, required_fields = object_fields(media.get("schema", {}), context.resolver)
    except NotCarried as problem:
        _body_lost(mapped, problem.rule, required, _required_fields([media], context.resolver))
        return
    for name, schema in fields.items():
        source, needed = f"body.{name}", name in required_fields
        try:
            resolved = context.resolver.resolve(schema)
            if isinstance(resolved, dict) and resolved.get("readOnly") is True:
                continue  # a value the server sets, never sent in a request
            shape = shape_of(schema, context.resolver)
            if shape.type is None:
                raise NotCarried("schema-not-carried")
        except NotCarried as problem:
            _not_carried(mapped, source, problem.rule, needed)
            continue
        params.append(_Param(_parameter(name, "body", shape, needed, None), source, needed))


def _body_lost(mapped: Mapped, rule: str, required: bool, required_fields: list[str]) -> None:
    """A body the tool cannot send: the operation is refused when the body is required or its schema requires fields
    (no call the tool makes would be accepted), each such field named; otherwise the tool is made without it, and
    the preview marks it partial (`Planned.partial`)."""
    if required_fields and not required:
        mapped.errors.append(violation("body", rule))
        mapped.errors.extend(violation(f"body.{name}", "body-field-required") for name in required_fields)
        return
    _not_carried(mapped, "body", rule, required)


def _required_fields(media: Any, resolver: Resolver) -> list[str]:
    """The fields any of a body's media types requires (a form's `criteria`), as far as its schema says."""
    found: set[str] = set()
    for entry in media:
        if not isinstance(entry, dict) or "schema" not in entry:
            continue
        try:
            flat = flatten(entry["schema"], resolver)
        except (NotCarried, RefError):
            continue  # what cannot be read requires nothing this can name; the body is not carried either way
        found.update(str(name) for name in _list(flat.get("required")) if isinstance(name, str))
    return sorted(found)


def _parameter(name: str, location: str, shape: Shape, required: bool, description: Any) -> dict[str, Any]:
    own = description.strip() if isinstance(description, str) and description.strip() else shape.description
    if own and shape.notes and own[-1] not in ".!?…":
        own += "."  # the notes that follow are sentences
    data: dict[str, Any] = {"name": name, "type": shape.type, "location": location, "required": required,
                            "description": describe(own, shape.notes, separator=" ")}
    if shape.type == "array" and shape.element_type is not None:
        data["element_type"] = shape.element_type
    return data


def _security(operation: Operation, context: Context, mapped: Mapped) -> None:
    """Whether the operation needs credentials of its own, which the tool does not carry: said once for the whole
    document (`plan.notes`), not on every operation."""
    requirements = operation.node.get("security", context.security)
    # An empty requirement ({}) among the alternatives means the operation may also be called without credentials.
    mapped.needs_auth = isinstance(requirements, list) and bool(requirements) and all(r for r in requirements)


def _url(operation: Operation, context: Context) -> str | None:
    base = (context.chosen_url or context.server_of(operation.node.get("servers"))
            or context.server_of(operation.path_item.get("servers")) or context.default_url)
    if base is None:
        return None
    return base.rstrip("/") + operation.path


def _subject(data: dict[str, Any], params: list[_Param], subject_parameter: str | None) -> None:
    """The named parameter becomes the reserved subject (its placeholder renamed with it) and the tool per-user."""
    if not subject_parameter:
        return
    for param in params:
        if param.data["name"] == subject_parameter:
            param.data = {"name": SUBJECT, "type": "string", "location": param.data["location"], "required": True}
            param.required = True
            data["scope"] = "per_user"
            if param.data["location"] == "path":
                data["url"] = _PLACEHOLDER.sub(
                    lambda m: "{subject}" if m.group(1) == subject_parameter else m.group(0), data["url"])
            return


def _checked(data: dict[str, Any], params: list[_Param], mapped: Mapped) -> dict[str, Any]:
    """Ask the registry's rules. A rule broken by an optional parameter leaves that parameter out (reported, with
    the rule's own sentence); any other broken rule refuses the operation."""
    kept = list(params)
    while True:  # each round leaves out at least one parameter, so it ends
        candidate = {**data, "parameters": [p.data for p in kept]}
        mapped.definition, found = check_definition(candidate, extra_fields=REGISTRATION_FIELDS)
        indexes = (_parameter_index(v.field) for v in found)
        optional = {i for i in indexes if i is not None and not kept[i].required}
        if not optional:
            mapped.errors.extend(_with_sources(found, kept))
            return candidate
        for v in found:
            index = _parameter_index(v.field)
            if index in optional:
                mapped.not_carried.append(Violation(kept[index].source, v.rule, v.message))
        kept = [p for i, p in enumerate(kept) if i not in optional]


def _with_sources(found: list[Violation], kept: list[_Param]) -> list[Violation]:
    """Violations as the definition names them; a parameter's also says where it came from in the document."""
    named = []
    for v in found:
        index = _parameter_index(v.field)
        named.append(v if index is None else Violation(f"{v.field} ({kept[index].source})", v.rule, v.message))
    return named


def _parameter_index(field_name: str) -> int | None:
    match = _PARAMETER_FIELD.match(field_name)
    return int(match.group(1)) if match else None


def _not_carried(mapped: Mapped, source: str, rule: str, required: bool) -> None:
    (mapped.errors if required else mapped.not_carried).append(violation(source, rule))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

