"""A small suite for the kit's own tests: one case of each outcome."""
from __future__ import annotations

from conformance.case import Check, SpecRef, Suite, Verdict

SPEC = SpecRef("spec/how-tools-run.txt", "Every tool call is signed")


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
