"""Shaping what the model sees of one call (issue 39, docs/shaping.md): the one function every path uses.

A tool may set a response shape (a JMESPath expression over a 2xx JSON body: the model gets its result as compact
JSON), error fields (top-level fields of a JSON error body the model may read, as the failure object's `details`)
and outcome messages (the business's own sentence per outcome, as the failure object's `message`). A tool that sets
none takes none of these paths: transport.judge decides its outcome exactly as the spec says.

The shape is JMESPath through the `jmespath` library (what the AWS CLI's --query uses) rather than our own path
language: its grammar and its failures are specified, and a business may already know it.
"""
from __future__ import annotations

import codecs
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import jmespath
import orjson
from jmespath.exceptions import JMESPathError

from service.dispatch.evaluate import Unsupported, compile_tree
from service.dispatch.failures import EMPTY
from service.limits import ERROR_FIELD_VALUE_CHARS, MAX_ERROR_BODY_BYTES, RESPONSE_CAP_CHARS


class ShapeFailed(Exception):
    """The body is not JSON, or the expression could not be applied to it. Its text names why, never the body."""


@dataclass(frozen=True)
class Expression:
    """A parsed response shape: `search(data)` is its result over `data`, as jmespath defines it."""

    text: str
    search: Callable[[Any], Any]


@lru_cache(maxsize=1_024)
def compile_shape(expression: str) -> Expression:
    """The parsed expression, compiled to closures where service.dispatch.evaluate can (else jmespath's interpreter);
    raises ValueError when it does not parse (the registry's rule `shape-unparsable`)."""
    try:
        parsed = jmespath.compile(expression)
    except (JMESPathError, RecursionError) as exc:  # nested past Python's stack: no expression a person writes
        raise ValueError(f"not a JMESPath expression: {type(exc).__name__}") from None
    try:
        return Expression(expression, compile_tree(parsed.parsed))
    except (Unsupported, RecursionError):
        return Expression(expression, parsed.search)


def parse_json(body: bytes | str, *, exact: bool = False) -> Any:
    """The JSON value of `body`; raises ShapeFailed for anything else (the empty body included).

    orjson first, at several times the standard parser's speed; it reads an integer past 64 bits as a float, losing
    digits (an order id), so `exact` takes the standard parser, which keeps every integer whole. `shape` asks for
    it only when a result holds such a float.
    """
    if not exact:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass  # the standard parser decides, so both agree on what is JSON
    try:
        text = body if isinstance(body, str) else body.decode("utf-8")
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise ShapeFailed("the body is not JSON") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def shape(expression: Expression, body: bytes | str, cap: int = RESPONSE_CAP_CHARS) -> str | None:
    """What the model gets of a JSON `body`: the expression's result as compact JSON, or None when that passes `cap`
    characters (response-too-big). Raises ShapeFailed when the body is not JSON or the expression fails on it.

    The result is measured before it is written: an expression such as `[@,@] | [@,@] | …` repeats the same value
    without copying it, so a 1 MiB body could be written out millions of times; it is cut off as soon as the
    characters it must take pass `cap`.
    """
    result = _search(expression, parse_json(body))
    least, inexact = _least_chars(result, cap)
    if least > cap:
        return None
    if inexact:  # a float past 2**63 in the result may be an integer orjson could not hold: read it exactly
        result = _search(expression, parse_json(body, exact=True))
        if _least_chars(result, cap)[0] > cap:
            return None
    try:
        text = orjson.dumps(result).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):  # an integer past 64 bits
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text if len(text) <= cap else None


def _search(expression: Expression, data: Any) -> Any:
    try:
        return expression.search(data)
    # Whatever the expression raises on this body is its failure on it: jmespath's own errors, a slice step of 0 (a
    # ValueError it lets through), an expression nested past Python's stack.
    except (Exception, RecursionError) as exc:
        raise ShapeFailed(f"the shape does not apply to this body: {type(exc).__name__}") from None


#: Past this magnitude a float may be an integer orjson read inexactly (2**63).
_INEXACT_FROM = 9.2e18


def _least_chars(value: Any, cap: int) -> tuple[int, bool]:
    """A lower bound on the characters `value` takes as JSON, counted only until it passes `cap`; and whether it
    holds a float orjson may have read inexactly. The hot path of every shaped call: types are compared directly."""
    total = 0
    inexact = False
    stack = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is dict:
            total += 1 + len(item)  # the braces and each colon, at least
            for key, inner in item.items():
                total += len(key) + 3
                push(inner)
        elif kind is list:
            total += 1 + len(item)
            extend(item)
        else:
            total += 1
            if kind is float and not -_INEXACT_FROM < item < _INEXACT_FROM:
                inexact = True
        if total > cap:
            break
    return total, inexact


@dataclass(frozen=True)
class Shaping:
    """What a tool's definition says about what the model sees, compiled once with the rest of it."""

    expression: Expression | None
    error_fields: tuple[str, ...]
    messages: Mapping[str, str]

    def message(self, outcome: str, status: int | None) -> str | None:
        """The tool's sentence for `outcome` (a kind, or `empty`) at `status`: `kind:status` first, then `kind`."""
        if not self.messages:
            return None
        if status is not None:
            found = self.messages.get(f"{outcome}:{status}")
            if found is not None:
                return found
        return self.messages.get(outcome)

    @property
    def empty_message(self) -> str | None:
        return self.messages.get(EMPTY)


def compile_shaping(response_shape: str | None, error_fields: Iterable[str],
                    outcome_messages: Iterable[tuple[str, str]]) -> Shaping:
    """The Shaping of a definition's three fields; raises ValueError for an expression that does not parse."""
    return Shaping(
        expression=compile_shape(response_shape) if response_shape else None,
        error_fields=tuple(error_fields),
        messages=MappingProxyType(dict(outcome_messages)),
    )


def error_details(chunks: Iterable[bytes], charset: str, fields: tuple[str, ...]) -> dict[str, str | int | float]:
    """The `fields` of a JSON error body that are strings or numbers, each string cut to ERROR_FIELD_VALUE_CHARS.

    Only the first MAX_ERROR_BODY_BYTES are read: a larger body, one that is not a JSON object, or a field holding
    anything else (an object, a list, a boolean, null) gives nothing of it. Nothing else of the body is kept.
    """
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > MAX_ERROR_BODY_BYTES:
            return {}
    try:
        # Exactly: an error body is small and rare, and an id past 64 bits must keep its digits.
        data = parse_json(bytes(body) if charset == "utf-8" else codecs.decode(bytes(body), charset, "replace"),
                          exact=True)
    except ShapeFailed:
        return {}
    if not isinstance(data, dict):
        return {}
    details: dict[str, str | int | float] = {}
    for name in fields:
        value = data.get(name)
        if isinstance(value, str):
            details[name] = value[:ERROR_FIELD_VALUE_CHARS]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                continue
            if isinstance(value, int) and abs(value) >= 2 ** 53:  # past what every JSON reader takes exactly
                details[name] = str(value)[:ERROR_FIELD_VALUE_CHARS]
            else:
                details[name] = value
    return details


@dataclass(frozen=True)
class Preview:
    """What the model would get of a sample answer: `output` (its length is what counts against the cap), or the
    failure `kind` and why; `unparsable` when the expression itself does not parse."""

    output: str | None = None
    kind: str | None = None
    reason: str | None = None
    unparsable: bool = False


def preview(expression: str, sample: str, cap: int = RESPONSE_CAP_CHARS) -> Preview:
    """The editor's *Try it*: `sample` (a 2xx body) shaped by `expression` exactly as a call's body would be, by the
    same function, before anything is saved. An empty sample is the spec's empty result."""
    try:
        parsed = compile_shape(expression)
    except ValueError:
        return Preview(unparsable=True)
    if not sample:
        return Preview(output="")
    try:
        text = shape(parsed, sample, cap)
    except ShapeFailed as exc:
        return Preview(kind="shape-failed", reason=str(exc))
    if text is None:
        return Preview(kind="response-too-big", reason=f"the shaped result is more than {cap:,} characters")
    return Preview(output=text)
