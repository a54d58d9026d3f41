"""Every setting is declared once (service/config.py): read from its variable, refused out of its range in one sentence
naming it, and listed in README.md's configuration table with its default and range."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.config import Config, settings

README = Path(__file__).resolve().parents[1] / "README.md"
NUMBERS = {name: s for name, s in settings().items() if s.allowed}


def _shown(value: object) -> str:
    """A default as README.md shows it."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _readme_rows() -> dict[str, list[str]]:
    """README's configuration table: each variable a row's first cell names, to that row's cells."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| variable | default | allowed | meaning |"):].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        for variable in re.findall(r"`(TOOLGATE_\w+)`", cells[0]):
            rows[variable] = cells
    return rows


def test_every_default_lies_in_its_range():
    defaults = Config()
    assert NUMBERS, "no numeric setting declared"
    for name, declared in NUMBERS.items():
        assert declared.within(getattr(defaults, name)), declared.variable


@pytest.mark.parametrize("name", sorted(settings()))
def test_every_setting_is_read_from_its_variable(name):
    declared = settings()[name]
    default = getattr(Config(), name)
    if declared.allowed:
        value = declared.highest if declared.highest != default else declared.highest / 2  # never its default
        text = str(value)
    else:
        text, value = "127.0.0.0/8" if name == "allowed_networks" else "http://example.test", None
    read = getattr(Config.from_env({declared.variable: text}), name)
    assert read != default
    if value is not None:
        assert read == value


@pytest.mark.parametrize("name", sorted(NUMBERS))
@pytest.mark.parametrize("where", ["below", "above", "nonsense"])
def test_a_value_out_of_range_is_refused_in_one_sentence_naming_its_variable(name, where):
    declared = NUMBERS[name]
    text = {"below": f"{declared.lowest - 1:g}", "above": f"{declared.highest * 2:g}", "nonsense": "soon"}[where]
    with pytest.raises(ValueError) as refused:
        Config.from_env({declared.variable: text})
    sentence = str(refused.value)
    assert sentence.startswith(f"{declared.variable} must be a ") and sentence.endswith(f"; got {text!r}.")
    assert sentence.count(". ") == 0


def test_a_seconds_setting_refuses_zero_and_a_whole_one_takes_its_lowest():
    for name, declared in NUMBERS.items():
        if declared.allowed.startswith("above"):
            with pytest.raises(ValueError, match=declared.variable):
                Config.from_env({declared.variable: "0"})
        else:
            assert getattr(Config.from_env({declared.variable: str(declared.lowest)}), name) == declared.lowest


def test_readme_lists_every_setting_with_its_default_and_range():
    rows = _readme_rows()
    missing = [s.variable for s in settings().values() if s.variable not in rows]
    assert not missing, f"README.md's configuration table lacks {missing}"
    defaults = Config()
    for name, declared in NUMBERS.items():
        cells = rows[declared.variable]
        assert cells[1:3] == [_shown(getattr(defaults, name)), declared.allowed], declared.variable
