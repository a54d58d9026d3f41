"""JMESPath's commonest expressions as Python closures: the hot path of every shaped call.

jmespath's own interpreter visits its tree node by node through a method lookup each time; for a projection of a few
fields over a hundred orders that is most of a shaped call's cost (bench/shaping.py). The node types a response shape
mostly uses (fields, sub-expressions, indexes, slices, projections, flattening, multi-selects, pipes, literals) are
compiled here once into closures with jmespath's exact semantics (its TreeInterpreter, mirrored line by line); an
expression with any other node (a filter, a function, a comparison, `||`, `&&`, `!`) is left to jmespath whole.
tests/dispatch/test_evaluate.py holds the two to the same answers.
"""
from __future__ import annotations

from typing import Any, Callable

Evaluate = Callable[[Any], Any]


class Unsupported(Exception):
    """A node type this module does not compile: the caller uses jmespath's interpreter for the whole expression."""


def compile_tree(node: dict[str, Any]) -> Evaluate:
    """The closure computing what jmespath's TreeInterpreter would for `node` (a parsed expression's `parsed`)."""
    kind = node["type"]
    build = _BUILDERS.get(kind)
    if build is None:
        raise Unsupported(kind)
    return build(node)


def _field(node: dict[str, Any]) -> Evaluate:
    name = node["value"]
    return lambda value: value.get(name) if type(value) is dict else None


def _chain(node: dict[str, Any]) -> Evaluate:  # subexpression, index_expression and pipe: each child in turn
    steps = [compile_tree(child) for child in node["children"]]
    if len(steps) == 2:
        first, second = steps
        return lambda value: second(first(value))

    def run(value: Any) -> Any:
        for step in steps:
            value = step(value)
        return value
    return run


def _itself(node: dict[str, Any]) -> Evaluate:  # identity and current
    return lambda value: value


def _index(node: dict[str, Any]) -> Evaluate:
    at = node["value"]

    def index(value: Any) -> Any:
        if type(value) is not list:
            return None
        try:
            return value[at]
        except IndexError:
            return None
    return index


def _slice(node: dict[str, Any]) -> Evaluate:
    cut = slice(*node["children"])
    return lambda value: value[cut] if type(value) is list else None


def _literal(node: dict[str, Any]) -> Evaluate:
    constant = node["value"]
    return lambda value: constant


def _flatten(node: dict[str, Any]) -> Evaluate:
    base = compile_tree(node["children"][0])

    def flatten(value: Any) -> Any:
        found = base(value)
        if type(found) is not list:
            return None
        merged: list[Any] = []
        for element in found:
            if type(element) is list:
                merged.extend(element)
            else:
                merged.append(element)
        return merged
    return flatten


def _projection(node: dict[str, Any]) -> Evaluate:
    base, each = compile_tree(node["children"][0]), compile_tree(node["children"][1])

    def project(value: Any) -> Any:
        found = base(value)
        if type(found) is not list:
            return None
        return [current for current in map(each, found) if current is not None]
    return project


def _value_projection(node: dict[str, Any]) -> Evaluate:
    base, each = compile_tree(node["children"][0]), compile_tree(node["children"][1])

    def project(value: Any) -> Any:
        found = base(value)
        if type(found) is not dict:
            return None
        return [current for current in map(each, found.values()) if current is not None]
    return project


def _multi_select_dict(node: dict[str, Any]) -> Evaluate:
    pairs = [(child["value"], compile_tree(child["children"][0])) for child in node["children"]]
    return lambda value: None if value is None else {key: get(value) for key, get in pairs}


def _multi_select_list(node: dict[str, Any]) -> Evaluate:
    items = [compile_tree(child) for child in node["children"]]
    return lambda value: None if value is None else [get(value) for get in items]


_BUILDERS: dict[str, Callable[[dict[str, Any]], Evaluate]] = {
    "field": _field, "subexpression": _chain, "index_expression": _chain, "pipe": _chain, "identity": _itself,
    "current": _itself, "index": _index, "slice": _slice, "literal": _literal, "flatten": _flatten,
    "projection": _projection, "value_projection": _value_projection, "multi_select_dict": _multi_select_dict,
    "multi_select_list": _multi_select_list,
}
