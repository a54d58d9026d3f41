"""`endpoint/key-rotation-picked-up`: the kit rotates its key within the run, as the platform does.

The platform publishes its next key before signing with it (THREATS), so an endpoint that cached
the key set sees a `kid` it does not know. A correct JWKS client refetches then, at most once per
cooldown; one that cached the set for good refuses every call until it restarts. The case publishes
a next key beside the current one, then calls with it until the endpoint accepts, for up to the
rotation wait: the endpoint's cooldown may still be running from its first fetch of the run (jose's
is 30 s; see ROTATION_WAIT_SECONDS). Its calls come quickly at first, then back off to one a second
(`retry_pauses`). It runs beside the other cases, so the run waits it out once.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

import gevent

from conformance.case import Case, Check, SpecRef, Verdict
from conformance.endpoint.forgeries import HOW_TOOLS_RUN, THREATS, nothing_accepted
from conformance.endpoint.target import Answer, EndpointTarget
from conformance.issuer import JWKS_PATH
from conformance.limits import (
    CALL_DEADLINE_SECONDS,
    ROTATION_RETRY_FIRST_SECONDS,
    ROTATION_RETRY_SECONDS,
    ROTATION_WAIT_MAX_SECONDS,
)
from conformance.tokens import SigningKey


def retry_pauses() -> Iterator[float]:
    """The pauses between calls with the next key: short at first, doubling up to ROTATION_RETRY_SECONDS.

    Quick against an endpoint that refetches at once, gentle against one whose cooldown runs on.
    """
    pause = ROTATION_RETRY_FIRST_SECONDS
    while True:
        yield pause
        pause = min(2 * pause, ROTATION_RETRY_SECONDS)


def _calls_with(target: EndpointTarget, key: SigningKey, clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], object] = gevent.sleep) -> tuple[Answer, int, float]:
    """Call with `key` until accepted or the wait is over: (last answer, calls made, seconds taken).

    The last call starts once the rotation wait is over, however long the calls before it took, so
    an endpoint whose cooldown is shorter than the wait always gets a call after it has run out.
    """
    started = clock()
    deadline = started + target.rotation_wait
    pauses = retry_pauses()
    calls = 0
    while True:
        called_at = clock()
        answer = target.send(key.sign(target.claims()))
        calls += 1
        if answer.accepted or called_at >= deadline:
            return answer, calls, clock() - started
        left = deadline - clock()
        if left > 0:
            sleep(min(next(pauses), left))


def _why(target: EndpointTarget, published_at: float, kid: str) -> str:
    """The likely cause of a refused next key, from when the endpoint fetched the key set."""
    fetches = target.issuer.fetch_times()
    after = [t for t in fetches if t >= published_at]
    where = f"{target.issuer.url}{JWKS_PATH}"
    if not fetches:
        return (f"the endpoint never fetched {where} during this run: it verifies with a key set it "
                f"cached before, and does not refetch on an unknown kid")
    if not after:
        return (f"a new kid this run, and an endpoint that cached the last key set: it fetched {where} "
                f"{len(fetches)} time(s), last {published_at - fetches[-1]:.1f} s before the next key "
                f"({kid}) was published, and never again. Refetch on an unknown kid (at most once per "
                f"a short cooldown) instead of keeping the set for good")
    return (f"the endpoint fetched the key set again ({len(after)} time(s) after the next key was "
            f"published) and still refused: check that it verifies with whichever published key the kid "
            f"names, not only the first")


def check_rotation(target: EndpointTarget) -> Verdict:
    """Publish a next key, then call with it until the endpoint takes it or the wait is over."""
    unproven = nothing_accepted(target)
    if unproven is not None:
        return unproven
    next_key = SigningKey.generate(target.algorithm)
    target.issuer.publish(next_key)
    published_at = time.monotonic()
    answer, calls, seconds = _calls_with(target, next_key)
    found = Check()
    if not found.expect(answer.accepted, f"a call signed with the next key (kid {next_key.kid}), "
                          f"published beside the current one",
                          f"a 2xx within {target.rotation_wait:g} s",
                          f"{answer.describe()}, {calls} call(s) over {seconds:.1f} s"):
        found.hint(_why(target, published_at, next_key.kid))
    return found.verdict()


key_rotation_picked_up = Case(
    id="endpoint/key-rotation-picked-up",
    title="A key published during the run is taken once the endpoint refetches",
    requirement="After the issuer publishes a next key beside the current one, an endpoint accepts calls "
                "signed with it, refetching the key set on the unknown kid (at most once per cooldown) "
                "rather than keeping the old set for good.",
    spec=(SpecRef(THREATS, "JWKS clients cache with a lifetime, refetch at most once in a cooldown on an "
                           "unknown `kid`"),
          SpecRef(THREATS, "Key rotation publishes the next key before it signs"),
          SpecRef(HOW_TOOLS_RUN, "Your backend fetches that organization’s public keys from "
                                 "{iss}/.well-known/jwks.json")),
    check=check_rotation,
    # Beside the wait: the run's correct call, a call running past the wait, the one after it, and a spare.
    budget_seconds=ROTATION_WAIT_MAX_SECONDS + 4 * CALL_DEADLINE_SECONDS,
)
