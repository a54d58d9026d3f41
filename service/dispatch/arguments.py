"""Strict checks of the values a model supplies, one parameter at a time.

Values arrive from the model's JSON, so they are Python `str`, `int`, `float`, `bool`, `None`,
`list` and `dict`. The checks are strict on purpose (THREATS, "Values from the model"): the string
"true" is not a boolean, a boolean is not a number, NaN and infinities (JSON's 1e400 parses as one)
are not numbers, and every size is bounded so a hostile value cannot grow a request without limit.
"""
from __future__ import annotations

import json
import math
import sys

from service.definition import Parameter
from service.limits import MAX_ARRAY_ARGUMENT_ITEMS, MAX_BODY_BYTES, MAX_STRING_ARGUMENT_CHARS

_JSON_NAMES = {str: "string", int: "number", float: "number", bool: "boolean",
               list: "array", dict: "object", type(None): "null"}


def json_type_name(value: object) -> str:
    """The JSON name of a value's type, for problem messages (never the value itself)."""
    return _JSON_NAMES.get(type(value), type(value).__name__)


def check_value(parameter: Parameter, value: object) -> str | None:
    """Why `value` does not fit `parameter`, or None when it fits."""
    if parameter.type == "array":
        return _check_array(value, parameter.element_type)
    if parameter.type == "object":
        return _check_object(value)
    return check_scalar(parameter.type, value)


def check_scalar(expected: str, value: object) -> str | None:
    """Why `value` is not a valid `expected` ("string", "number" or "boolean"), or None."""
    # `type(...) is` rather than isinstance: bool is a subclass of int, and True is not a number.
    if expected == "string" and type(value) is str:
        if len(value) > MAX_STRING_ARGUMENT_CHARS:
            return f"longer than {MAX_STRING_ARGUMENT_CHARS} characters"
        if not _is_utf8_encodable(value):
            return "contains an unpaired surrogate, which is not text"
        return None
    if expected == "number" and (type(value) is int or type(value) is float):
        if not _is_finite_number(value):
            return "not a finite number"
        return None
    if expected == "boolean" and type(value) is bool:
        return None
    return f"expected {expected}, got {json_type_name(value)}"


def render_scalar(value: str | int | float | bool) -> str:
    """A checked scalar as text for a query string or a path: numbers and booleans as JSON writes them."""
    return value if type(value) is str else json.dumps(value)


def to_json_bytes(value: object) -> bytes:
    """The one way a body (or an object argument) is serialised: compact UTF-8 JSON, no NaN.

    Raises ValueError (NaN or infinity anywhere, unpaired surrogates), TypeError (a value JSON cannot
    hold) or RecursionError (absurd nesting).
    """
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _check_array(value: object, element_type: str | None) -> str | None:
    if type(value) is not list:
        return f"expected array, got {json_type_name(value)}"
    if len(value) > MAX_ARRAY_ARGUMENT_ITEMS:
        return f"more than {MAX_ARRAY_ARGUMENT_ITEMS} items"
    if element_type is None:  # the registry refuses this; fail closed rather than guess
        return "the array parameter declares no element type"
    for index, element in enumerate(value):
        problem = check_scalar(element_type, element)
        if problem is not None:
            return f"item {index}: {problem}"
    return None


def _check_object(value: object) -> str | None:
    if type(value) is not dict:
        return f"expected object, got {json_type_name(value)}"
    try:
        size = len(to_json_bytes(value))
    except (ValueError, TypeError, RecursionError):
        return "not representable as JSON (NaN, infinity, unpaired surrogate or too deeply nested)"
    if size > MAX_BODY_BYTES:
        return f"larger than {MAX_BODY_BYTES} bytes as JSON"
    return None


def _is_finite_number(value: int | float) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    # An integer too large for a double is 1e400 in another spelling: not a number either.
    return -sys.float_info.max <= value <= sys.float_info.max


def _is_utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
