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
    """
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        if schema["$ref"] in within:
            raise RefError("ref-loop", schema["$ref"])
        within = (*within, schema["$ref"])
    if len(within) > _MAX_ALL_OF_DEPTH:
        raise RefError("ref-loop", within[-1])
    schema = resolver.resolve(schema)
    if not isinstance(schema, dict):
        return {}  # a boolean schema (3.1) says nothing about the value's type
    result = {k: v for k, v in schema.items() if k not in ("allOf", "oneOf", "anyOf")}
    for part in _list(schema.get("allOf")):
        _merge(result, flatten(part, resolver, within))
    for key in ("oneOf", "anyOf"):
        if key in schema:
            options = [flatten(o, resolver, within) for o in _list(schema[key])]
            values = [o for o in options if not _is_null(o)]
            if len(values) != 1:
                raise NotCarried("schema-not-carried")
            _merge(result, values[0])
    if "not" in result:
        raise NotCarried("schema-not-carried")
    kind = result.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) > 1:
            raise NotCarried("schema-not-carried")
        result["type"] = kinds[0] if kinds else "null"
    return result


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


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        if key == "properties" and isinstance(value, dict):
            into["properties"] = {**value, **(into.get("properties") or {})}
        elif key == "required":
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
