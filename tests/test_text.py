"""`service.text`: the one notion of blank text, used by the display name and the description alike."""
import sys
import unicodedata

import pytest

from service.text import is_blank, text_problem


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
