"""The suite against deliberately broken platforms: each fails exactly the cases of what it breaks.

One real platform serves every mode (see conftest.py); each mode switches faults on in the doubles
and runs the kit's command against them. Taken together the modes fail every case of the suite, so
no case is one that cannot fail.
"""
from __future__ import annotations

import json
import re

import pytest

from conformance.cli import main

from tests.conformance_platform.modes import ALL, MODES, SLOW


def _outcomes(path) -> dict[str, str]:
    return {case["id"]: case["outcome"] for case in json.loads(path.read_text())["cases"]}


def test_every_case_is_broken_by_some_mode():
    broken = set().union(*(mode.breaks for mode in MODES))
    assert set(ALL) - broken == set()
    assert broken - set(ALL) == set()  # and every expected id is a real case


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_a_broken_platform_fails_exactly_its_cases(mode, doubles, tmp_path, capsys):
    doubles.switch(mode.front, mode.back, mode.model)
    selection = [arg for case_id in mode.selected for arg in ("--case", case_id)]
    code = main(doubles.arguments() + selection + ["--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out

    outcomes = _outcomes(tmp_path / "r.json")
    assert list(outcomes) == mode.selected
    # A broken promise is reported as a failure with its violations, never as a check that could not finish.
    assert [case for case, outcome in outcomes.items() if outcome == "errored"] == []
    failing = {case for case, outcome in outcomes.items() if outcome == "failed"}
    assert failing == mode.breaks, (f"failed unexpectedly: {sorted(failing - mode.breaks)}; "
                                    f"passed unexpectedly: {sorted(mode.breaks - failing)}")
    assert code == (1 if mode.breaks else 0)
    for case_id in mode.breaks:
        assert re.search(rf"^FAIL  {re.escape(case_id)} ", out, re.MULTILINE)
    assert out.splitlines()[-1] == f"{len(mode.selected) - len(mode.breaks)} passed, {len(mode.breaks)} failed"


def test_slow_cases_are_few_and_each_is_targeted():
    assert SLOW <= set(ALL)
    for case_id in SLOW:
        assert any(case_id in mode.breaks for mode in MODES), case_id
