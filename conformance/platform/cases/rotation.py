"""`assertion/key-rotation`: a new key signs at once, and what the old key signed stays verifiable.

Rotation changes the organization's signing key for every conversation at once, so this case runs
alone (exclusive) and last. The endpoint (the mock) caches the key set and refetches it at most
once per cooldown; until it has, it may refuse the new key's assertions as signed by an unknown
key. That is the endpoint's caching, not the platform's promise, so the case retries the call
until the endpoint picks the new key up, within `KEY_PICKUP_SECONDS`.
"""
from __future__ import annotations

import time

import gevent

from conformance.case import Check, Verdict
from conformance.platform.assertions import Inspected, fetch_jwks, verify_signature
from conformance.platform.budgets import KEY_PICKUP_FIRST_RETRY_SECONDS, KEY_PICKUP_RETRY_SECONDS, KEY_PICKUP_SECONDS
from conformance.platform.cases.assertion import echo_project, received
from conformance.platform.client import Conversation, PlatformTarget, echoed, expect_status
from conformance.platform.suite import SUITE, contract, threats

#: The mock's reason for refusing a `kid` it does not know (yet).
UNKNOWN_KEY = "unknown-key"


def _published_kids(target: PlatformTarget) -> list[str]:
    response = fetch_jwks(target.issuer)
    return [k.get("kid") for k in response.json().get("keys", [])] if response.status_code == 200 else []


def _call_after_rotation(target: PlatformTarget, conversation: Conversation, name: str) -> dict:
    """Call until the endpoint takes the new key (or refuses for another reason, or time runs out)."""
    deadline = time.monotonic() + KEY_PICKUP_SECONDS
    pause = KEY_PICKUP_FIRST_RETRY_SECONDS
    while True:
        result = conversation.call(name)
        if echoed(result) is not None or time.monotonic() > deadline:
            return result
        calls = target.calls_to(name)
        if not calls or calls[-1].get("reason") != UNKNOWN_KEY:
            return result
        gevent.sleep(pause)
        pause = min(2 * pause, KEY_PICKUP_RETRY_SECONDS)


@SUITE.case(
    "assertion/key-rotation",
    title="After a key rotation the new key signs and the old one stays published",
    requirement="After POST /v1/keys/rotate, calls and new session tokens are signed by a new published "
                "key; the old key stays in the JWKS, so an assertion it signed still verifies, and a session "
                "token it signed still opens a conversation.",
    spec=(contract("`POST /v1/keys/rotate` (admin): a new signing key takes over at once; the old one stays "
                   "in the JWKS until every token it signed has expired."),
          threats("Key rotation publishes the next key before it signs and keeps the old one until "
                  "everything it signed has expired.")),
    exclusive=True,
)
def key_rotation(target: PlatformTarget) -> Verdict:
    [name] = echo_project(target, "assertion_rotation")
    project = target.project("assertion_rotation")
    old_session = target.session_token()
    conversation = target.conversation(project, old_session)
    _, before = received(target, conversation.call(name))
    expect_status(target.api("POST", "/v1/keys/rotate"), 201, "rotating the signing key")
    check = Check()
    result = _call_after_rotation(target, conversation, name)
    _, after = received(target, result)
    old_kid, new_kid = before.header.get("kid"), after.header.get("kid")
    check.expect(new_kid != old_kid, "kid of an assertion after rotating", f"a new key, not {old_kid}", new_kid)
    verify_signature(check, after, target.issuer, what="the assertion after rotating")
    check.expect(old_kid in _published_kids(target), "the old key after rotating", "still published",
                 _published_kids(target))
    verify_signature(check, before, target.issuer, what="the assertion from before rotating")
    new_session = Inspected.parse(target.session_token())
    check.equal("kid of a session token minted after rotating", new_kid,
                new_session.header.get("kid") if new_session else None)
    reopened = target.open(project, old_session)
    check.expect(reopened.status == 201, "a session token from before rotating", "still opens (HTTP 201)",
                 reopened.describe())
    return check.verdict()
