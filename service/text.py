"""What text the service takes into a name, a filter, a label or a description: one decision, used by every edge.

PostgreSQL's text cannot hold NUL and neither engine can store an unpaired surrogate (a JSON "\\ud800" decodes to
one), so either used to reach the database as a 500. Beyond storage, a control character in an identifier, a filter,
a subject or a label is never meant (a "\\n" makes a second, look-alike name), so only a description, prose written
for the model, may hold tabs and line breaks. docs/decisions.md records the choice. No Flask, no database.
"""
from __future__ import annotations

import re

#: The rule ids a text breaks; their sentences are in `service.registry.rules.RULES`.
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


def is_blank(value: str) -> bool:
    """Whether `value` shows nothing: empty, or only BLANK_CHARACTERS. The one notion of blank of every field that
    defaults or is required when blank (a display name, a description), on every edge."""
    return _BLANK.fullmatch(value) is not None


def is_text(value: object) -> bool:
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
