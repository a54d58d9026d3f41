"""A small suite for the kit's own tests: one case of each outcome."""
from __future__ import annotations

import json
from pathlib import Path

from conformance.case import Check, SpecRef, Suite, Verdict

SPEC = SpecRef("spec/how-tools-run.txt", "Every tool call is signed")


def outcomes(report: Path) -> dict[str, str]:
    """Each case's outcome in a JSON report the kit wrote, by case id."""
    return {case["id"]: case["outcome"] for case in json.loads(report.read_text())["cases"]}


def sample_suite() -> Suite:
    """Three areas, one case of each outcome: pass, fail with two violations, raise."""
    suite = Suite("sample")

    @suite.case("alpha/passes", title="It passes", requirement="Always holds.", spec=SPEC)
    def passes(target: object) -> Verdict:
        return Verdict.passed()

    @suite.case("beta/fails-twice", title="It fails twice", requirement="Never holds.", spec=SPEC)
    def fails(target: object) -> Verdict:
        check = Check()
        check.equal("status", 200, 500)
        check.equal("body", "[]", "<html>")
        return check.verdict()

    @suite.case("gamma/raises", title="It raises", requirement="Cannot tell.", spec=SPEC)
    def raises(target: object) -> Verdict:
        raise KeyError("no such thing")

    return suite
