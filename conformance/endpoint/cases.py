"""The endpoint suite: one correct call that must be accepted (and not echo its assertion), the tables of
forgeries, the subject binding, approval and replay, the JWKS client seen from the issuer, and a key rotation within
the run.

The kit stands in for the platform and calls an integrator's endpoint the way a published tool
would be called, so the integrator can see, before going live, that their backend accepts the
platform's assertions and refuses everything else. Every case but the first needs that first call
accepted: a refusal proves something only from an endpoint that accepts a correct call.
"""
from __future__ import annotations

import functools

from conformance.case import Case, Check, SpecRef, Suite, Verdict
from conformance.endpoint.approval import NO_APPROVAL_REJECTED
from conformance.endpoint.claims import CLAIM_FORGERIES
from conformance.endpoint.credential import NO_CREDENTIAL_ECHOED, REPLAY_REJECTED
from conformance.endpoint.forgeries import (
    HOW_TOOLS_RUN,
    REFUSALS,
    SIGNATURE_FORGERIES,
    THREATS,
    check_refused,
    nothing_accepted,
)
from conformance.endpoint.keyset import JWKS_REFETCH_BOUNDED, KEYS_KEPT_WHEN_ISSUER_FAILS
from conformance.endpoint.rotation import key_rotation_picked_up
from conformance.endpoint.target import EndpointTarget
from conformance.issuer import JWKS_PATH
from conformance.limits import CALL_DEADLINE_SECONDS, RESPONSE_CAP_CHARS

SUITE = Suite("endpoint")

#: What the subject-binding case takes for a refusal: 404 too, as many backends hide what is not
#: yours (then a control call shows the other person's data does exist).
SUBJECT_REFUSALS = (*REFUSALS, 404)


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
    answer = target.valid_answer()
    check = Check()
    if not check.expect(answer.problem is None, "answer",
                        f"an HTTP answer within {target.deadline:g} s", answer.describe()):
        return check.verdict()
    if not check.expect(answer.accepted, "status", "2xx", answer.describe()) and answer.status in REFUSALS:
        check.hint(_why_refused(target))
        if not target.requires_approval and "approval" in answer.body.lower():
            check.hint("the endpoint's answer mentions an approval: if the tool requires the person's approval, "
                       "say --requires-approval, so the kit's calls carry an approval claim")
    check.expect(answer.seconds <= target.deadline, "time to answer",
                 f"at most {target.deadline:g} s", f"{answer.seconds:.2f} s")
    check.expect(not answer.too_big, "body length", f"at most {RESPONSE_CAP_CHARS:,} characters",
                 f"more than {RESPONSE_CAP_CHARS:,} characters")
    return check.verdict()


def _why_refused(target: EndpointTarget) -> str:
    """The likely cause of a refused correct call, from whether the endpoint fetched our keys."""
    issuer, kid = target.issuer.url, target.issuer.key.kid
    if target.issuer.fetches == 0:
        return (f"the endpoint never fetched {issuer}{JWKS_PATH} during this run, and this run's key "
                f"(kid {kid}) is new unless --key-file keeps it: a backend that cached an earlier run's "
                f"key set refuses it until it refetches (refetch on an unknown kid, at most once per "
                f"cooldown), and a backend trusting another issuer never fetches it at all")
    return (f"the endpoint fetched this run's key set ({target.issuer.fetches} time(s)) and still refused: "
            f"check that it trusts the issuer {issuer} exactly and takes the aud {target.call.tool!r}")


for _forgery in CLAIM_FORGERIES + SIGNATURE_FORGERIES:
    SUITE.add(Case(
        id=f"endpoint/{_forgery.name}-rejected",
        title=_forgery.title,
        requirement=_forgery.requirement,
        spec=_forgery.spec,
        check=functools.partial(check_refused, _forgery),
    ))


@SUITE.case(
    "endpoint/other-subject-rejected",
    title="An assertion for one person does not open another person's URL",
    requirement="When the tool's URL carries {subject}, an endpoint refuses (401, 403, or 404 while the "
                "other person's own assertion is accepted) a valid assertion whose sub is one person, "
                "sent to another person's URL.",
    spec=(SpecRef(HOW_TOOLS_RUN, "sub, the subject: the same opaque user identifier your backend asserted "
                                 "when it minted the session token, so you can map it back to a person and "
                                 "apply your own authorization."),
          SpecRef(THREATS, "the endpoint's subject is the session's")),
)
def other_subject_rejected(target: EndpointTarget) -> Verdict:
    """Alice's assertion on Bob's URL; a 404 counts only if Bob's own assertion is accepted there."""
    if not target.binds_subject:
        return Verdict.skipped("the tool's URL carries no {subject}, so no assertion can be pointed at "
                               "another person's URL")
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    subject, other = target.call.subject, target.other_subject
    crossed = target.send(target.issuer.key.sign(target.claims()), subject=other)
    check = Check()
    what = f"answer to an assertion for {subject!r} on the URL of {other!r}"
    if not check.expect(crossed.status in SUBJECT_REFUSALS, what, "401, 403 or 404", crossed.describe()):
        return check.verdict()
    if crossed.status == 404:
        own = target.send(target.issuer.key.sign(target.claims(other)), subject=other)
        if not own.accepted:
            return Verdict.errored(
                f"the endpoint answered 404 on the URL of {other!r}, and {own.describe()} to {other!r}'s own "
                f"assertion there, so that 404 proves nothing: name a second person it knows with "
                f"--other-subject")
    return check.verdict()


SUITE.add(NO_CREDENTIAL_ECHOED)
SUITE.add(NO_APPROVAL_REJECTED)
SUITE.add(REPLAY_REJECTED)
# Alone, each in turn (they count the issuer's fetches, or make it fail), and before the rotation, which needs it.
SUITE.add(JWKS_REFETCH_BOUNDED)
SUITE.add(KEYS_KEPT_WHEN_ISSUER_FAILS)
SUITE.add(key_rotation_picked_up)
