"""The suite against deliberately broken platforms: each fails exactly the cases of what it breaks.

One real platform serves every mode (see conftest.py); each mode switches faults on in the doubles
and runs the kit's command against them, on the cases of the areas it breaks. Taken together the
modes fail every case of the suite, so no case is one that cannot fail. And each area's cases all
pass with the faults of every mode that claims not to break them switched on, so no mode breaks
more than it names.
"""
from __future__ import annotations

import re

import pytest

from conformance.cli import main
from tests.conformance.helpers import outcomes
from tests.conformance_platform.modes import ALL, AREAS, MODES, SLOW, Mode, aimed_elsewhere


def test_every_case_is_broken_by_some_mode():
    broken = set().union(*(mode.breaks for mode in MODES))
    assert set(ALL) - broken == set()
    assert broken - set(ALL) == set()  # and every expected id is a real case


def _run(mode: Mode, selected: list[str], doubles, tmp_path, capsys) -> tuple[int, str, dict[str, str]]:
    """The kit's command against the platform broken as `mode` is, on the `selected` cases."""
    doubles.switch(mode.front, mode.back, mode.model)
    selection = [arg for case_id in selected for arg in ("--case", case_id)]
    code = main(doubles.arguments() + selection + ["--json", str(tmp_path / "r.json")])
    found = outcomes(tmp_path / "r.json")
    assert list(found) == selected
    return code, capsys.readouterr().out, found


def _parts(mode: Mode) -> list:
    """The mode's runs: its cases but the slow ones, then its slow ones."""
    return [pytest.param(mode, group, id=mode.name + suffix)
            for suffix, group in (("", [c for c in mode.selected if c not in SLOW]),
                                  ("-slow", [c for c in mode.selected if c in SLOW])) if group]


#: The runs of every mode. A slow case runs apart from the rest, so that it waits out the call deadline on top of
#: its own setup only, not one slowed by all the cases beside it.
PARTS = [part for mode in MODES for part in _parts(mode)]


@pytest.mark.parametrize("mode, selected", PARTS)
def test_a_broken_platform_fails_exactly_its_cases(mode, selected, doubles, tmp_path, capsys):
    breaks = mode.breaks & set(selected)
    code, out, found = _run(mode, selected, doubles, tmp_path, capsys)

    # A broken promise is reported as a failure with its violations, never as a check that could not finish.
    assert [case for case, outcome in found.items() if outcome == "errored"] == []
    failing = {case for case, outcome in found.items() if outcome == "failed"}
    assert failing == breaks, (f"failed unexpectedly: {sorted(failing - breaks)}; "
                               f"passed unexpectedly: {sorted(breaks - failing)}")
    assert code == (1 if breaks else 0)
    for case_id in breaks:
        assert re.search(rf"^FAIL  {re.escape(case_id)} ", out, re.MULTILINE)
    assert out.splitlines()[-1] == f"{len(selected) - len(breaks)} passed, {len(breaks)} failed"


@pytest.mark.parametrize("area", AREAS)
def test_no_mode_breaks_a_case_it_does_not_name(area, doubles, tmp_path, capsys):
    broken = aimed_elsewhere(area)
    code, out, found = _run(broken, [i for i in ALL if i.startswith(area + "/") and i not in SLOW], doubles,
                            tmp_path, capsys)

    assert {case for case, outcome in found.items() if outcome != "passed"} == set(), out
    assert code == 0


def test_slow_cases_are_few_and_each_is_targeted():
    assert SLOW <= set(ALL)
    for case_id in SLOW:
        assert any(case_id in mode.breaks for mode in MODES), case_id
