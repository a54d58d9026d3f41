"""From an OpenAPI schema to what a tool parameter can say: a type, an element type, and notes for the model.

A tool parameter is a scalar, an array of scalars or a free-form object (spec, "The parameters"). A schema that
needs more (an object with fields of its own, an array of objects, a choice of shapes) raises NotCarried with the
rule that says why; the caller decides whether that refuses the operation or only that parameter.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from service.definition import SCALAR_TYPES
from service.importing.refs import KEPT_SIBLINGS as _KEPT_SIBLINGS
from service.importing.refs import RefError, Resolver

#: How many references deep `allOf`, `oneOf` and `anyOf` parts may nest before the schema is taken to loop.
_MAX_ALL_OF_DEPTH = 16
#: Enum values listed for the model at most; a longer enum ends with "…".
_MAX_ENUM_SHOWN = 20
_TYPES = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "array": "array",
          "object": "object"}


class NotCarried(Exception):
    """The schema needs something a tool parameter cannot say; `rule` names it."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


@dataclass(frozen=True)
class Shape:
    """What a parameter can say of a schema. `type` is None when the schema names no type at all."""

    type: str | None
    element_type: str | None = None
    description: str = ""
    notes: str = ""


def flatten(schema: Any, resolver: Resolver, within: tuple[str, ...] = ()) -> dict[str, Any]:
    """The schema with its `$ref`s followed, its `allOf` parts merged and a null alternative dropped.

    A 3.0 `nullable` or a 3.1 `type: [x, "null"]` is the type x: the model leaves an optional value out instead.
    `within` is the chain of references being merged, so a schema that is one of its own parts is a loop.
    Every step is spent from the resolver's budget, and each reference is expanded once per document (`_Known`):
    the answer is the same as expanding it at every use, without the cost that grows with each level.
    The result may be shared with other uses: read it, never change it.
    """
    return _flatten(schema, resolver, within)[0]


@dataclass(frozen=True)
class _Known:
    """A reference already expanded: its schema flattened, and how many references deep its expansion went
    (itself included), so a use nearer the depth bound can tell whether expanding it again would have passed it."""

    flat: dict[str, Any]
    height: int
    is_object: bool  # the reference ends at a schema object (not a boolean schema), so kept siblings apply


def _flatten(schema: Any, resolver: Resolver, within: tuple[str, ...]) -> tuple[dict[str, Any], int]:
    """flatten, and how many references deep below `within` its expansion went."""
    resolver.budget.spend()
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str):
        flat, height, _ = _expand(schema, resolver, within)
        return flat, height
    if ref in within:
        raise RefError("ref-loop", ref)
    key = ("flatten", ref)
    known = resolver.memo.get(key)
    # Expanding it here would pass the depth bound: do so, so it fails as it always has, naming the same reference.
    if known is None or len(within) + known.height > _MAX_ALL_OF_DEPTH:
        within = (*within, ref)
        if len(within) > _MAX_ALL_OF_DEPTH:
            raise RefError("ref-loop", ref)
        flat, height, is_object = _expand({"$ref": ref}, resolver, within)
        known = resolver.memo[key] = _Known(flat, height + 1, is_object)
    kept = {k: schema[k] for k in _KEPT_SIBLINGS if k in schema}
    if kept and known.is_object:
        resolver.budget.spend(len(known.flat))
        return {**known.flat, **kept}, known.height
    return known.flat, known.height


def _expand(schema: Any, resolver: Resolver, within: tuple[str, ...]) -> tuple[dict[str, Any], int, bool]:
    """The schema's own keywords with its parts merged in; how deep its parts' references went; whether it is an
    object at all."""
    schema = resolver.resolve(schema)
    if not isinstance(schema, dict):
        return {}, 0, False  # a boolean schema (3.1) says nothing about the value's type
    result = {k: v for k, v in schema.items() if k not in ("allOf", "oneOf", "anyOf")}
    height = 0
    for part in _list(schema.get("allOf")):
        flat, below = _flatten(part, resolver, within)
        _merge(result, flat, resolver)
        height = max(height, below)
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = []
            for option in _list(schema[key]):
                flat, below = _flatten(option, resolver, within)
                options.append(flat)
                height = max(height, below)
            values = [o for o in options if not _is_null(o)]
            if len(values) != 1:
                raise NotCarried("schema-not-carried")
            _merge(result, values[0], resolver)
    if "not" in result:
        raise NotCarried("schema-not-carried")
    kind = result.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) > 1:
            raise NotCarried("schema-not-carried")
        result["type"] = kinds[0] if kinds else "null"
    return result, height, True


def shape_of(schema: Any, resolver: Resolver) -> Shape:
    """What a parameter of this schema is; raises NotCarried or RefError."""
    flat = flatten(schema, resolver)
    kind = _kind(flat)
    description = _text(flat.get("description"))
    notes = _notes(flat)
    if kind in SCALAR_TYPES or kind is None:
        return Shape(kind, description=description, notes=notes)
    if kind == "array":
        items = flat.get("items")
        if items is None:
            return Shape("array", None, description, notes)  # the registry's rule asks for the element type
        element = _kind(flatten(items, resolver))
        if element in ("object", "array"):
            raise NotCarried("array-of-structures-not-carried")
        return Shape("array", element, description, notes)
    if kind == "object":
        if flat.get("properties"):
            raise NotCarried("nested-object-not-carried")
        return Shape("object", description=description, notes=notes)
    raise NotCarried("schema-not-carried")


def object_fields(schema: Any, resolver: Resolver) -> tuple[dict[str, Any], set[str]]:
    """A JSON body's declared fields and which are required; raises NotCarried("body-not-object") otherwise."""
    flat = flatten(schema, resolver)
    properties = flat.get("properties")
    if _kind(flat) != "object" or not isinstance(properties, dict) or not properties:
        raise NotCarried("body-not-object")
    required = {str(name) for name in _list(flat.get("required"))}
    return {str(k): v for k, v in properties.items()}, required


def _kind(flat: dict[str, Any]) -> str | None:
    kind = flat.get("type")
    if kind is None:
        if "properties" in flat:
            return "object"
        if "items" in flat:
            return "array"
        enum = flat.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            return "string"
        return None
    if not isinstance(kind, str) or kind not in _TYPES:
        raise NotCarried("schema-not-carried")  # "null" alone, or a type OpenAPI does not have
    return _TYPES[kind]


def _merge(into: dict[str, Any], part: dict[str, Any], resolver: Resolver) -> None:
    resolver.budget.spend(len(part))
    for key, value in part.items():
        if key == "properties" and isinstance(value, dict):
            merged = into.get("properties")
            merged = merged if isinstance(merged, dict) else {}  # `properties: [1]` says nothing, as `required: x`
            resolver.budget.spend(len(value) + len(merged))
            into["properties"] = {**value, **merged}
        elif key == "required":
            resolver.budget.spend(len(_list(into.get("required"))) + len(_list(value)))
            into["required"] = [*_list(into.get("required")), *_list(value)]
        else:
            into.setdefault(key, value)


def _is_null(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "null" or schema.get("enum") == [None]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:100]
    except (ValueError, RecursionError):  # a value nested past what the encoder holds, or containing itself
        return "…"


def _notes(flat: dict[str, Any]) -> str:
    """What the schema says about good values, for the model: allowed values, format, default."""
    notes = []
    enum = flat.get("enum")
    if isinstance(enum, list) and enum:
        shown = ", ".join(_shown(v) for v in enum[:_MAX_ENUM_SHOWN])
        notes.append(f"One of: {shown}{', …' if len(enum) > _MAX_ENUM_SHOWN else ''}.")
    if isinstance(flat.get("format"), str):
        notes.append(f"Format: {flat['format'][:60]}.")
    if "default" in flat:
        notes.append(f"Default: {_shown(flat['default'])}.")
    return " ".join(notes)
