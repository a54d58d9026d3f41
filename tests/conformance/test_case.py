"""Cases, checks and verdicts: declared once, every violation reported."""
from __future__ import annotations

import pytest

from conformance.case import Case, Check, Outcome, SpecRef, Suite, Verdict, Violation
from tests.conformance.helpers import SPEC


def test_a_check_with_nothing_recorded_passes():
    check = Check()
    assert check.expect(True, "status", 200, 200) is True
    assert check.verdict() == Verdict.passed()


def test_a_failing_check_reports_every_violation_not_the_first():
    check = Check()
    assert check.equal("status", 200, 500) is False
    check.expect(False, "time to answer", "at most 10 s", "12.00 s")
    check.fail("body length", "at most 16,384 characters", "more than 16,384 characters")

    verdict = check.verdict()

    assert verdict.outcome is Outcome.FAILED
    assert verdict.violations == (
        Violation("status", "200", "500"),
        Violation("time to answer", "at most 10 s", "12.00 s"),
        Violation("body length", "at most 16,384 characters", "more than 16,384 characters"),
    )


def test_a_failed_verdict_must_say_why():
    with pytest.raises(ValueError):
        Verdict.failed([])


@pytest.mark.parametrize("bad_id", ["no-area", "Endpoint/upper", "endpoint/", "endpoint/snake_case",
                                    "endpoint//double", "endpoint/trailing-", "/leading"])
def test_a_case_id_is_an_area_and_a_kebab_name(bad_id):
    with pytest.raises(ValueError):
        Case(bad_id, "Title", "Requirement.", (SPEC,), lambda target: Verdict.passed())


def test_a_case_names_its_spec_passage():
    with pytest.raises(ValueError):
        Case("endpoint/x", "Title", "Requirement.", (), lambda target: Verdict.passed())


def test_the_area_is_everything_before_the_last_slash():
    case = Case("rule/parameters/distinct-names", "T", "R.", (SPEC,), lambda target: Verdict.passed())
    assert case.area == "rule/parameters"


def test_a_suite_keeps_declaration_order_and_refuses_a_second_case_with_one_id():
    suite = Suite("s")
    for name in ("zeta", "alpha", "mid"):
        suite.add(Case(f"area/{name}", "T", "R.", (SPEC,), lambda target: Verdict.passed()))
    assert [case.id for case in suite] == ["area/zeta", "area/alpha", "area/mid"]
    with pytest.raises(ValueError, match="declared twice"):
        suite.add(Case("area/alpha", "T", "R.", (SPEC,), lambda target: Verdict.passed()))


def test_the_decorator_declares_the_function_as_the_check():
    suite = Suite("s")

    @suite.case("area/decorated", title="Decorated", requirement="R.",
                spec=SpecRef("THREATS.md", "quoted"), exclusive=True)
    def decorated(target):
        return Verdict.passed()

    (case,) = suite.cases
    assert case.check is decorated
    assert case.spec == (SpecRef("THREATS.md", "quoted"),)
    assert case.exclusive is True
    assert str(case.spec[0]) == 'THREATS.md: "quoted"'
