"""Selection and running: never throws, declaration order, parallel where independent."""
from __future__ import annotations

import gevent
import gevent.event
import pytest

from conformance.case import Case, Outcome, Verdict
from conformance.runner import CouldNotRun, Selection, run, run_case, select
from tests.conformance.helpers import SPEC, sample_suite

#: How long a check waits for another case it expects beside it: only a run that fails waits it out.
ALONE_SECONDS = 2.0


def _case(case_id: str, check=lambda target: Verdict.passed(), **kwargs) -> Case:
    return Case(case_id, "T", "R.", (SPEC,), check, **kwargs)


def test_a_check_that_raises_becomes_an_errored_verdict_with_the_exception_text():
    result = run_case(_case("area/raises", lambda target: 1 / 0), target=None)
    assert result.verdict.outcome is Outcome.ERRORED
    assert result.verdict.error == "ZeroDivisionError: division by zero"


def test_a_check_that_answers_something_else_than_a_verdict_is_errored():
    result = run_case(_case("area/forgets", lambda target: True), target=None)
    assert result.verdict.outcome is Outcome.ERRORED
    assert "not a verdict" in result.verdict.error


def test_a_check_that_hangs_is_errored_once_its_budget_is_spent():
    result = run_case(_case("area/hangs", lambda target: gevent.sleep(5), budget_seconds=0.05), None)
    assert result.verdict.outcome is Outcome.ERRORED
    assert result.verdict.error == "the check did not finish within 0.05 s"


def test_a_timeout_that_is_not_the_budget_is_not_swallowed():
    own = gevent.Timeout(0.05)

    def check(target):
        own.start()
        gevent.sleep(1)

    with pytest.raises(gevent.Timeout) as raised:
        run_case(_case("area/own-timeout", check), None)
    assert raised.value is own


def test_the_target_is_handed_to_every_check():
    seen = []
    run_case(_case("area/sees", lambda target: seen.append(target) or Verdict.passed()), "the target")
    assert seen == ["the target"]


@pytest.mark.parametrize("selection, expected", [
    (Selection(), ["alpha/passes", "beta/fails-twice", "gamma/raises"]),
    (Selection(case_prefixes=("beta/",)), ["beta/fails-twice"]),
    (Selection(case_prefixes=("gamma/rai", "alpha/passes")), ["alpha/passes", "gamma/raises"]),
    (Selection(areas=("gamma",)), ["gamma/raises"]),
    (Selection(areas=("alpha/", "beta")), ["alpha/passes", "beta/fails-twice"]),
    (Selection(case_prefixes=("alpha/",), areas=("gamma",)), ["alpha/passes", "gamma/raises"]),
])
def test_selection_by_case_prefix_and_area_keeps_declaration_order(selection, expected):
    assert [case.id for case in select(sample_suite(), selection)] == expected


def test_an_area_matches_whole_segments_only():
    with pytest.raises(CouldNotRun, match="--area alph"):
        select(sample_suite(), Selection(areas=("alph",)))


def test_selecting_nothing_is_an_error():
    with pytest.raises(CouldNotRun, match="no case matches --case nope"):
        select(sample_suite(), Selection(case_prefixes=("nope",)))


def test_results_come_in_declaration_order_while_independent_cases_overlap():
    # Each case waits for the next one to finish, so they finish in reverse declaration order, and only
    # because they overlap: one at a time, the first would wait alone and error.
    finished = [gevent.event.Event() for _ in range(3)]
    finishing: list[int] = []

    def waits_for_next(i):
        def check(target):
            met = i + 1 == len(finished) or finished[i + 1].wait(ALONE_SECONDS)
            finishing.append(i)
            finished[i].set()
            return Verdict.passed() if met else Verdict.errored(f"case {i + 1} never finished beside it")
        return check

    cases = [_case(f"area/c{i}", waits_for_next(i)) for i in range(3)]
    results = list(run(cases, target=None, jobs=8))

    assert finishing == [2, 1, 0]
    assert [r.case.id for r in results] == ["area/c0", "area/c1", "area/c2"]
    assert [r.verdict.outcome for r in results] == [Outcome.PASSED] * 3


def test_an_exclusive_case_runs_with_nothing_else_in_flight():
    running: set[str] = set()
    overlapped: dict[str, set[str]] = {}

    def check_for(case_id):
        def check(target):
            running.add(case_id)
            gevent.sleep(0.01)  # a moment for whatever runs beside it to be running
            overlapped[case_id] = set(running) - {case_id}
            running.discard(case_id)
            return Verdict.passed()
        return check

    ids = ["area/a", "area/b", "area/alone", "area/c", "area/d"]
    cases = [_case(i, check_for(i), exclusive=(i == "area/alone")) for i in ids]
    results = list(run(cases, target=None, jobs=8))

    assert [r.case.id for r in results] == ids
    assert overlapped["area/alone"] == set()
    assert overlapped["area/a"] == {"area/b"}  # the others still overlap


def test_jobs_below_one_cannot_run():
    with pytest.raises(CouldNotRun):
        list(run(sample_suite().cases, target=None, jobs=0))
