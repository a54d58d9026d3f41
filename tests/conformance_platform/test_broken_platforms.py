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
from conformance.platform.budgets import SLOW_FIRST_CALL_SECONDS
from tests.conformance.helpers import outcomes
from tests.conformance_platform.back import SLOW_FROM_SECONDS
from tests.conformance_platform.modes import ALL, AREAS, MODES, SLOW, Mode, aimed_elsewhere
from tests.conformance_platform.state import DEADLINE_SECONDS


def test_every_case_is_broken_by_some_mode():
    broken = set().union(*(mode.breaks for mode in MODES))
    assert set(ALL) - broken == set()
    assert broken - set(ALL) == set()  # and every expected id is a real case


def _run(mode: Mode, selected: list[str], doubles, tmp_path, capsys) -> tuple[int, str, dict[str, str]]:
    """The kit's command against the platform broken as `mode` is, on the `selected` cases."""
    doubles.switch(mode.front, mode.back, mode.model)
    code = main(doubles.arguments() + _exactly(selected) + ["--json", str(tmp_path / "r.json")])
    found = outcomes(tmp_path / "r.json")
    assert list(found) == selected
    return code, capsys.readouterr().out, found


def _exactly(selected: list[str]) -> list[str]:
    """The kit's arguments selecting these cases and no other: `--case` takes a prefix, so a case whose id
    another selected id begins (`rule/name-format-tab` after `rule/name-format`) is skipped by name."""
    pulled_in = [i for i in ALL if i not in selected and any(i.startswith(case_id) for case_id in selected)]
    return [arg for case_id in selected for arg in ("--case", case_id)] + \
        [arg for case_id in pulled_in for arg in ("--skip", case_id)]


#: At most this many cases run in one test: the kit runs them side by side, so a run costs about the CPU of all its
#: cases, and twenty in one test took three seconds beside the rest of the suite.
CASES_PER_RUN = 8


def _parts(mode: Mode) -> list:
    """The mode's runs: its cases but the slow ones, a few at a time in declaration order, then its slow ones."""
    quick = [c for c in mode.selected if c not in SLOW]
    runs = [quick[at:at + CASES_PER_RUN] for at in range(0, len(quick), CASES_PER_RUN)]
    named = [(mode.name if len(runs) == 1 else f"{mode.name}-{index + 1}", run) for index, run in enumerate(runs)]
    slow = [c for c in mode.selected if c in SLOW]
    return [pytest.param(mode, run, id=name) for name, run in named + [(mode.name + "-slow", slow)] if run]


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


def test_the_short_deadline_leaves_room_for_the_suites_own_delays():
    # hold-slow holds calls of at least SLOW_FROM_SECONDS past the deadline; the one shorter delay of the suite must
    # not be among them, or a mode aimed at failure/answered-in-time would break parallel/results-in-order too.
    assert SLOW_FIRST_CALL_SECONDS < SLOW_FROM_SECONDS < DEADLINE_SECONDS


def test_a_selection_by_prefix_is_made_exact():
    assert _exactly(["rule/name-format"]) == ["--case", "rule/name-format"] + [
        arg for i in ALL if i.startswith("rule/name-format") and i != "rule/name-format" for arg in ("--skip", i)]
    assert "--skip" not in _exactly(["rule/name-format", *[i for i in ALL if i.startswith("rule/name-format-")]])
