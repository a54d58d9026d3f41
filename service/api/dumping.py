"""A marshmallow schema's dump compiled once into plain functions, for the pages whose answers are large.

A page of 100 tools is some 2,300 values; marshmallow walks each through its field objects (a quarter of the
request's CPU at 100k tools, bench/JOURNAL.md). The compiled dump does what marshmallow's does for the field kinds
these schemas use (members in the schema's order, an absent member left out, None kept, each value made its field's
type) and refuses, when compiled, any other kind; tests/api/test_dumping.py holds it to marshmallow's output. The
schema stays the one description of the answer: the OpenAPI document is made from it as before.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from marshmallow import Schema, fields

Dump = Callable[[Any], Any]


def _text(value: Any) -> str:
    """marshmallow's String: `utils.ensure_text_type`."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def compile_dump(schema: Schema) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """`schema.dump` for a mapping, as a plain function."""
    steps = []
    for name, field in schema.dump_fields.items():
        if field.attribute is not None and field.attribute != name:
            raise TypeError(f"{type(schema).__name__}.{name}: an attribute other than its name is not compiled")
        steps.append((name, field.data_key or name, _value(field)))

    def dump(obj: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, key, convert in steps:
            if name in obj:
                value = obj[name]
                out[key] = None if value is None else convert(value)
        return out

    return dump


def _value(field: fields.Field) -> Dump:
    """How one field dumps a value that is not None: the same step as its `_serialize`, or TypeError."""
    kind = type(field)
    if isinstance(field, fields.Nested) and kind._serialize is fields.Nested._serialize:
        inner = compile_dump(field.schema)
        return (lambda value: [inner(item) for item in value]) if field.many else inner
    if isinstance(field, fields.List) and kind._serialize is fields.List._serialize:
        item = _value(field.inner)
        return lambda value: [None if each is None else item(each) for each in value]
    if isinstance(field, fields.Dict) and kind._serialize is fields.Mapping._serialize:
        key = (lambda k: k) if field.key_field is None else _value(field.key_field)
        member = (lambda v: v) if field.value_field is None else _value(field.value_field)
        return lambda value: {key(k): None if v is None else member(v) for k, v in value.items()}
    if kind._serialize is fields.Field._serialize:  # the value as it is (Raw, and Boolean in this marshmallow)
        return lambda value: value
    if kind._serialize is fields.String._serialize:
        return _text
    if (isinstance(field, fields.Number) and kind._serialize is fields.Number._serialize
            and type(field)._format_num is fields.Number._format_num and not field.as_string):
        return field.num_type
    raise TypeError(f"{kind.__name__} is not compiled: dump it with marshmallow")
