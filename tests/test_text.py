"""`service.text`: what text data a client or a model supplies may hold (every key and string of it, at any depth,
must be text; each one that is not is named by its field), and the one notion of blank text, used by the display
name and the description alike."""
import json
import sys
import unicodedata

import pytest

from service.text import UNPAIRED_SURROGATE, is_blank, json_text_problems, text_problem


@pytest.mark.parametrize("value", [
    {"note": "a line\nanother\ttab \x00 nul \x7f", "n": 2 ** 70, "f": 1.5, "b": True, "z": None, "emoji": "🥛"},
    ["", [], {}],
    "plain",
], ids=["control-characters-and-numbers-past-64-bits", "empty", "a-string"])
def test_text_of_any_kind_is_no_problem(value):
    assert json_text_problems(value, "arguments") == []


def test_each_key_and_string_that_is_not_text_is_named_in_the_documents_order():
    value = json.loads('{"a": [1, {"b\\ud800": "x", "c": "\\ud800"}], "n o": "\\udc00ok", "fine": "yes",'
                       ' "\\udfff": "\\ud800", "d": {"\\ud801": ["\\ud802"]}}')
    assert json_text_problems(value, "calls[0].arguments") == [(field, UNPAIRED_SURROGATE) for field in (
        'calls[0].arguments.a[1]["b\\ud800"]',  # a key that is not text, escaped so the error itself is text
        "calls[0].arguments.a[1].c",
        'calls[0].arguments["n o"]',  # a key that is no plain name, in brackets
        'calls[0].arguments["\\udfff"]',  # its value is the same field: named once
        'calls[0].arguments.d["\\ud801"]',
        'calls[0].arguments.d["\\ud801"][0]',
    )]
    assert json_text_problems("\ud800", "text") == [("text", UNPAIRED_SURROGATE)]


def test_a_value_as_deep_as_any_parser_takes_is_walked_without_recursion():
    deep: list = ["\ud800"]
    for _ in range(100_000):
        deep = [deep]
    [(field, rule)] = json_text_problems(deep, "v")
    assert field == "v" + "[0]" * 100_001 and rule == UNPAIRED_SURROGATE




def test_every_unicode_separator_is_blank():
    separators = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp")]
    assert len(separators) == 19 and all(is_blank(c) for c in separators)


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u3164"])
def test_a_character_that_shows_nothing_is_blank(invisible):
    assert is_blank(invisible) and is_blank(f" {invisible}\u00a0")


@pytest.mark.parametrize("control", ["\x85", "\x1c", "\x0b", "\x0c", "\x00"])
def test_a_control_character_is_not_taken_for_a_blank_but_refused(control):
    """str.isspace() takes NEL and the separators of the C0 set for white space: here they stay controls."""
    assert not is_blank(control) and text_problem(control) == "control-character"


@pytest.mark.parametrize("text", ["a", " a ", "\u200bx", "\u3000。"])
def test_text_with_anything_visible_is_not_blank(text):
    assert not is_blank(text)
