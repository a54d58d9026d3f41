"""The rules of what a tool lets the model see (issue 39, docs/shaping.md): its response shape, its error fields and
its outcome messages, each checked with the rest of the definition (rules.check_definition), every violation at once.

Each field is optional, and absent, null or empty means the spec's behaviour. The sentences are the catalogue's.
"""
from __future__ import annotations

import json
import re
from typing import Any

from service import limits
from service.catalogue import Violation, violation
from service.dispatch import compile_shape
from service.dispatch.failures import EMPTY, KINDS_WITH_STATUS, WORDABLE_OUTCOMES
from service.text import is_blank, text_problem

SHAPING_FIELDS = ("response_shape", "error_fields", "outcome_messages")

#: A plain key of a JSON object: what an API names its error fields with (`code`, `error_code`, `trace-id`).
ERROR_FIELD_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_OUTCOME_KEY = re.compile(r"([a-z-]+)(?::([1-5][0-9][0-9]))?")


def check_shaping(data: dict[str, Any], found: list[Violation]
                  ) -> tuple[str | None, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The definition's response shape, error fields and outcome messages as given, each violation added to `found`."""
    return _check_shape(data, found), _check_error_fields(data, found), _check_outcome_messages(data, found)


def _check_shape(data: dict[str, Any], found: list[Violation]) -> str | None:
    expression = data.get("response_shape")
    if expression is None or expression == "":
        return None
    if not isinstance(expression, str):
        found.append(violation("response_shape", "field-type"))
        return None
    if len(expression) > limits.MAX_RESPONSE_SHAPE_CHARS:
        found.append(violation("response_shape", "field-too-long"))
        return None
    # An expression may be written over several lines, as JMESPath allows white space between its tokens.
    problem = text_problem(expression, description=True)
    if problem is not None:
        found.append(violation("response_shape", problem))
        return None
    if is_blank(expression):
        return None
    try:
        compile_shape(expression)
    except ValueError:
        found.append(violation("response_shape", "shape-unparsable"))
        return None
    return expression


def _check_error_fields(data: dict[str, Any], found: list[Violation]) -> tuple[str, ...]:
    names = data.get("error_fields")
    if names is None:
        return ()
    if not isinstance(names, list):
        found.append(violation("error_fields", "field-type"))
        return ()
    if len(names) > limits.MAX_ERROR_FIELDS:
        found.append(violation("error_fields", "too-many-error-fields"))
        return ()
    kept: list[str] = []
    for i, name in enumerate(names):
        field = f"error_fields[{i}]"
        if not isinstance(name, str):
            found.append(violation(field, "field-type"))
        elif not ERROR_FIELD_PATTERN.fullmatch(name):
            found.append(violation(field, "error-field-format"))
        elif name in kept:
            found.append(violation(field, "error-field-duplicate"))
        else:
            kept.append(name)
    return tuple(kept)


def _check_outcome_messages(data: dict[str, Any], found: list[Violation]) -> tuple[tuple[str, str], ...]:
    messages = data.get("outcome_messages")
    if messages is None:
        return ()
    if not isinstance(messages, dict):
        found.append(violation("outcome_messages", "field-type"))
        return ()
    if len(messages) > limits.MAX_OUTCOME_MESSAGES:
        found.append(violation("outcome_messages", "too-many-outcome-messages"))
        return ()
    kept: list[tuple[str, str]] = []
    for key, sentence in messages.items():
        field = f"outcome_messages[{json.dumps(key)}]"
        if not is_outcome_key(key):
            found.append(violation(field, "outcome-key-format"))
        elif not isinstance(sentence, str):
            found.append(violation(field, "field-type"))
        elif (len(sentence) > limits.MAX_OUTCOME_MESSAGE_CHARS or is_blank(sentence)
              or text_problem(sentence) is not None):
            found.append(violation(field, "outcome-message-format"))
        else:
            kept.append((key, sentence))
    return tuple(kept)


def is_outcome_key(key: str) -> bool:
    """Whether `key` names an outcome a call of the tool can end in: a kind (`refused`), a kind that carries the
    endpoint's status with one (`refused:404`), or `empty` (a 2xx with no body; `empty:204` too)."""
    match = _OUTCOME_KEY.fullmatch(key)
    if match is None or match.group(1) not in WORDABLE_OUTCOMES:
        return False
    kind, status = match.group(1), match.group(2)
    if status is None:
        return True
    if kind == EMPTY:
        return status.startswith("2")
    return kind in KINDS_WITH_STATUS
