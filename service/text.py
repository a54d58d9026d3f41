"""What text the service takes into a name, a filter, a label or a description: one decision, used by every edge.

PostgreSQL's text cannot hold NUL and neither engine can store an unpaired surrogate (a JSON "\\ud800" decodes to
one), so either used to reach the database as a 500. Beyond storage, a control character in an identifier, a filter,
a subject or a label is never meant (a "\\n" makes a second, look-alike name), so only a description, prose written
for the model, may hold tabs and line breaks. Data a client or a model supplies (a call's arguments, a person's
message) is theirs to shape, control characters included, but must still be text: `json_text_problems` finds every
key and string in it that is not. docs/decisions.md records the choice. No Flask, no database.
"""
from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

import orjson

#: The rule ids a text breaks; their sentences are in `service.catalogue.RULES`.
CONTROL_CHARACTER = "control-character"
DESCRIPTION_CONTROL_CHARACTER = "description-control-character"
UNPAIRED_SURROGATE = "unpaired-surrogate"

#: Unicode's control characters (category Cc): C0, DEL and C1. As a regex character class's inside.
CONTROL_CHARACTERS = "\x00-\x1f\x7f-\x9f"
#: The same, as a JSON Schema (ECMA-262) pattern's character class inside, for the OpenAPI document.
CONTROL_CHARACTERS_ECMA = "\\u0000-\\u001f\\u007f-\\u009f"
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")
#: A description may hold tab, line feed and carriage return (a browser's textarea sends CR LF), nothing else.
_CONTROL_IN_DESCRIPTION = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: What a blank text is made of: Unicode's white space (every space separator, the line and paragraph separators, tab,
#: line feed and carriage return) and the characters that show nothing at all (zero-width space and joiners,
#: direction marks and embeddings, word joiner, BOM, soft hyphen, the Hangul fillers). Not str.isspace(), which
#: misses the invisible ones and counts controls such as NEL (U+0085) and the file separators as blanks: a text of
#: those is refused as a control character instead.
BLANK_CHARACTERS = ("\t\n\r \xa0\xad\u034f\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064"
                    "\u2066-\u206f\u3000\u3164\ufeff\uffa0")
_BLANK = re.compile(f"[{BLANK_CHARACTERS}]*")


def text_problem(value: str, *, description: bool = False) -> str | None:
    """The rule `value` breaks as text, or None: it holds no unpaired surrogate and no control character (a
    description may hold tabs and line breaks)."""
    if _SURROGATE.search(value):
        return UNPAIRED_SURROGATE
    if description:
        return DESCRIPTION_CONTROL_CHARACTER if _CONTROL_IN_DESCRIPTION.search(value) else None
    return CONTROL_CHARACTER if _CONTROL.search(value) else None


def json_text_problems(value: Any, field: str) -> list[tuple[str, str]]:
    """Each (field, rule) where a JSON value holds what is not text: a key or a string, at any depth, with an unpaired
    surrogate, which no database stores and no answer can encode. `field` names the value; below it an object's key
    is `.key` (or `["key"]` when it is not a plain name), an array's item `[i]`. Control characters are data here:
    JSON columns store them escaped, and a request carries them encoded."""
    try:
        orjson.dumps(value)  # refuses any surrogate, in a key or a string: the usual value costs a fraction of a µs
        return []
    except orjson.JSONEncodeError:  # a surrogate, or what orjson alone refuses (past 64 bits, very deep): look
        pass
    problems: list[tuple[str, str]] = []
    # Depth first, in the document's order, and not recursive: a value as deep as the JSON parser takes is walked
    # without Python's stack. Each entry is (field, value, whether the key naming it is text).
    stack: list[tuple[str, Any, bool]] = [(field, value, True)]
    while stack:
        where, item, key_is_text = stack.pop()
        if not key_is_text:
            problems.append((where, UNPAIRED_SURROGATE))
            if isinstance(item, str):
                continue  # the member is named once
        if isinstance(item, str):
            if _SURROGATE.search(item):
                problems.append((where, UNPAIRED_SURROGATE))
        elif isinstance(item, dict):
            stack.extend(reversed([(_member(where, key), inner, not _SURROGATE.search(key))
                                   for key, inner in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{where}[{index}]", inner, True) for index, inner in enumerate(item)]))
    return problems


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _member(where: str, key: str) -> str:
    """The field of an object's member: `.key`, or the key as a JSON string in brackets, escaped to ASCII when it is
    not text (an error naming it must itself be text)."""
    if _PLAIN_NAME.fullmatch(key):
        return f"{where}.{key}"
    return f"{where}[{json.dumps(key, ensure_ascii=bool(_SURROGATE.search(key)))}]"


def is_blank(value: str) -> bool:
    """Whether `value` shows nothing: empty, or only BLANK_CHARACTERS. The one notion of blank of every field that
    defaults or is required when blank (a display name, a description), on every edge."""
    return _BLANK.fullmatch(value) is not None


def is_text(value: object) -> TypeGuard[str]:
    """Whether `value` is a string that could name something stored: text with no control character."""
    return isinstance(value, str) and text_problem(value) is None


def whole_number(text: str, maximum: int) -> int | None:
    """The number ASCII digits spell, when it is 1 to `maximum`; None for anything else: a sign, a space, another
    script's digits, or a number past `maximum` (never parsed whole, so thousands of digits cost nothing)."""
    digits = text.lstrip("0")
    if not (text.isascii() and text.isdigit()) or len(digits) > len(str(maximum)):
        return None
    number = int(digits or "0")
    return number if 0 < number <= maximum else None


def recordable(value: str) -> str:
    """`value` with each control character and unpaired surrogate replaced by U+FFFD: for recording text the service
    was given but does not validate (a tool name a model called), which must never fail the write."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("\ufffd", value))
