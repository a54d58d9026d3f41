"""The endpoint suite: one correct call that must be accepted, then the table of forgeries.

The kit stands in for the platform and calls an integrator's endpoint the way a published tool
would be called, so the integrator can see, before going live, that their backend accepts the
platform's assertions and refuses everything else.
"""
from __future__ import annotations

import functools

from conformance.case import Case, Check, SpecRef, Suite, Verdict
from conformance.endpoint.forgeries import FORGERIES, HOW_TOOLS_RUN, check_refused
from conformance.endpoint.target import EndpointTarget
from conformance.limits import CALL_DEADLINE_SECONDS, RESPONSE_CAP_CHARS

SUITE = Suite("endpoint")


@SUITE.case(
    "endpoint/valid-call-accepted",
    title="A correctly signed call is accepted",
    requirement=f"An endpoint answers a call carrying a correct assertion with a 2xx within "
                f"{CALL_DEADLINE_SECONDS:g} s and a body of at most {RESPONSE_CAP_CHARS:,} characters.",
    spec=(
        SpecRef(HOW_TOOLS_RUN, "Every tool call the platform makes to your endpoint comes with a "
                               "short-lived signed assertion"),
        SpecRef(HOW_TOOLS_RUN, "Successful responses should stay below 16 KB (16,384 characters)."),
        SpecRef(HOW_TOOLS_RUN, "Tools should respond within ten seconds"),
    ),
)
def valid_call_accepted(target: EndpointTarget) -> Verdict:
    """One call as the platform makes it; every way the answer falls short is reported."""
    answer = target.send(target.issuer.key.sign(target.claims()))
    check = Check()
    if not check.expect(answer.problem is None, "answer",
                        f"an HTTP answer within {CALL_DEADLINE_SECONDS:g} s", answer.describe()):
        return check.verdict()
    check.expect(200 <= answer.status < 300, "status", "2xx", answer.describe())
    check.expect(answer.seconds <= CALL_DEADLINE_SECONDS, "time to answer",
                 f"at most {CALL_DEADLINE_SECONDS:g} s", f"{answer.seconds:.2f} s")
    check.expect(not answer.too_big, "body length", f"at most {RESPONSE_CAP_CHARS:,} characters",
                 f"more than {RESPONSE_CAP_CHARS:,} characters")
    return check.verdict()


for _forgery in FORGERIES:
    SUITE.add(Case(
        id=f"endpoint/{_forgery.name}-rejected",
        title=_forgery.title,
        requirement=_forgery.requirement,
        spec=_forgery.spec,
        check=functools.partial(check_refused, _forgery),
    ))
