"""The endpoint's JWKS client, seen from the issuer it fetches from: bounded refetches, and keys kept in an outage.

THREATS: "JWKS clients cache with a lifetime, refetch at most once in a cooldown on an unknown `kid`, cap the response
size, and keep verifying with cached keys when the key server fails." The kit's issuer counts every fetch of its key
set, so two of those promises can be watched from outside. A client with no cooldown turns every forged call into a
fetch of the organization's key set (a flood the attacker aims through the backend); one without a cache fetches on
every call; one that drops its keys when a refetch fails refuses every call while the key server is down.

Both cases count, or break, the issuer that every other case relies on, so each runs alone (`exclusive`); they run
before the rotation case, which needs the issuer answering again.
"""
from __future__ import annotations

import secrets
import time

import gevent
from gevent.pool import Pool

from conformance.case import Case, Check, SpecRef, Verdict
from conformance.endpoint.forgeries import THREATS, nothing_accepted
from conformance.endpoint.target import EndpointTarget
from conformance.issuer import JWKS_PATH
from conformance.limits import (
    CACHED_CALLS,
    JWKS_BURST_CALLS,
    JWKS_BURST_MAX_FETCHES,
    OUTAGE_CALLS,
    OUTAGE_PROBE_PAUSE_SECONDS,
    OUTAGE_PROBE_SECONDS,
)
from conformance.tokens import SigningKey

CACHE_AND_COOLDOWN = SpecRef(THREATS, "JWKS clients cache with a lifetime, refetch at most once in a cooldown on an "
                                      "unknown `kid`")
KEPT_IN_OUTAGE = SpecRef(THREATS, "keep verifying with cached keys when the key server fails")


def _unknown_kid() -> str:
    # Well formed, so a careful backend looks it up rather than refusing it on sight (and never seen before).
    return f"unknown-{secrets.token_urlsafe(12)}"


def check_refetch_bounded(target: EndpointTarget) -> Verdict:
    """Correct calls cost no fetch; a burst of forged calls with random unknown kids costs at most two."""
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    issuer, check = target.issuer, Check()
    where = f"{issuer.url}{JWKS_PATH}"
    before = issuer.fetches
    answers = [target.send(issuer.key.sign(target.claims())) for _ in range(CACHED_CALLS)]
    cost = issuer.fetches - before
    check.expect(all(answer.accepted for answer in answers), f"answers to {CACHED_CALLS} correct calls", "2xx each",
                 ", ".join(answer.describe() for answer in answers if not answer.accepted))
    if not check.expect(cost == 0, f"fetches of {where} for {CACHED_CALLS} correct calls signed by a key the endpoint "
                        f"already had", "none: the key set is cached for a lifetime (it is served with max-age=300)",
                        f"{cost}"):
        check.hint("the endpoint fetches the key set for calls whose key it already has: cache the set for a lifetime "
                   "(pyjwt's PyJWKClient does with cache_jwk_set=True, jose's createRemoteJWKSet always does)")
    stranger = SigningKey.generate(target.algorithm)
    forged = [stranger.sign(target.claims(), kid=_unknown_kid()) for _ in range(JWKS_BURST_CALLS)]
    before = issuer.fetches
    # All at once, as a flood would come: the burst lasts far less than any cooldown.
    Pool(JWKS_BURST_CALLS).map(target.send, forged)
    cost = issuer.fetches - before
    if not check.expect(cost <= JWKS_BURST_MAX_FETCHES,
                        f"fetches of {where} for a burst of {JWKS_BURST_CALLS} forged calls, each with an unknown "
                        f"random kid", f"at most {JWKS_BURST_MAX_FETCHES}: one refetch per cooldown", f"{cost}"):
        check.hint("every unknown kid makes the endpoint fetch the organization's key set, so anyone can flood the "
                   "issuer through it: refetch on an unknown kid at most once per cooldown (pyjwt 2.15+'s "
                   "PyJWKClient cooldown_duration, jose's createRemoteJWKSet cooldownDuration; both default to 30 s)")
    return check.verdict()


def check_keys_kept(target: EndpointTarget) -> Verdict:
    """While the issuer answers 503 (after the endpoint has the key), correct calls are still accepted."""
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    issuer, check = target.issuer, Check()
    stranger = SigningKey.generate(target.algorithm)
    with issuer.failing():
        # Unknown kids until the endpoint tries to refetch (its cooldown permitting), so that a client dropping its
        # keys when that fetch fails is caught; then the correct calls.
        deadline = time.monotonic() + OUTAGE_PROBE_SECONDS
        probes = 0
        while issuer.failed_fetches == 0 and time.monotonic() < deadline:
            target.send(stranger.sign(target.claims(), kid=_unknown_kid()))
            probes += 1
            gevent.sleep(OUTAGE_PROBE_PAUSE_SECONDS)
        tried = issuer.failed_fetches
        for index in range(OUTAGE_CALLS):
            answer = target.send(issuer.key.sign(target.claims()))
            check.expect(answer.accepted, f"answer to correct call {index + 1} of {OUTAGE_CALLS} while the issuer "
                         f"answers 503 (after {probes} call(s) with unknown kids)", "2xx, verified with the key "
                         "the endpoint already has", answer.describe())
    if check.violations:
        check.hint(f"the endpoint asked the failing issuer for the key set {issuer.failed_fetches} time(s), "
                   f"{tried} of them before the correct calls: keep the keys you have when a fetch fails, rather "
                   f"than fetching for every call or emptying the cache (pyjwt before 2.15.1 emptied it)"
                   if issuer.failed_fetches else
                   "the endpoint refused keys it had without asking the issuer again")
    return check.verdict()


JWKS_REFETCH_BOUNDED = Case(
    id="endpoint/jwks-refetch-bounded",
    title="Unknown kids cost the issuer at most a refetch per cooldown, known ones none",
    requirement=f"{CACHED_CALLS} correct calls cost the kit's issuer no fetch of its key set, and a burst of "
                f"{JWKS_BURST_CALLS} forged calls, each with an unknown random kid, costs it at most "
                f"{JWKS_BURST_MAX_FETCHES}: the endpoint caches the key set for a lifetime and refetches on an "
                f"unknown kid at most once per cooldown.",
    spec=(CACHE_AND_COOLDOWN,),
    check=check_refetch_bounded,
    exclusive=True,
)

KEYS_KEPT_WHEN_ISSUER_FAILS = Case(
    id="endpoint/keys-kept-when-issuer-fails",
    title="Correct calls are still accepted while the issuer's key server fails",
    requirement="While the kit's issuer answers its key set with 503, after the endpoint has fetched the key, the "
                "endpoint still accepts correct calls, verifying them with the keys it has, even after a refetch "
                "on an unknown kid has failed.",
    spec=(KEPT_IN_OUTAGE,),
    check=check_keys_kept,
    exclusive=True,
)
