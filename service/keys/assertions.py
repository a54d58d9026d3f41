"""Call assertions: the short-lived token on every outbound tool call (how-tools-run, "Every call
is signed").

This is the hot path, one token per tool call. The key is already parsed and its header segment
cached (service.keys.compact), so a call costs one small JSON dump and one signature.
"""
from __future__ import annotations

import secrets

from service.keys.compact import sign_compact
from service.keys.signing_key import SigningKey
from service.limits import ASSERTION_LIFETIME_SECONDS

#: The `typ` header of an assertion, as the contract fixes it; a session token's differs.
ASSERTION_TYPE = "JWT"

#: The claims an assertion carries, in the order they are written.
ASSERTION_CLAIMS = ("iss", "aud", "sub", "anon", "turn", "iat", "exp", "jti")

#: The claim an approved call's assertion carries besides those: the id of the person's approval, so a backend can
#: refuse a consequential request that arrives without one (issue 19).
APPROVAL_CLAIM = "approval"


def new_turn_id() -> str:
    """A random, url-safe identifier for one model turn (not a counter: it says nothing of order)."""
    return secrets.token_urlsafe(16)


def mint_assertion(
    key: SigningKey,
    issuer: str,
    tool_name: str,
    subject: str,
    anonymous: bool,
    turn: str,
    now: float,
    *,
    jti: str | None = None,
    approval: str | None = None,
) -> str:
    """The signed assertion for one call of `tool_name` in `turn`, on behalf of `subject`.

    `aud` is the tool's name as a single string, so an assertion minted for one tool cannot be
    pointed at another; `exp` is `iat` + ASSERTION_LIFETIME_SECONDS. `jti` is random unless
    given; pass one only for known-answer vectors. `approval`, the id of the person's approval of
    this very call, is added as the APPROVAL_CLAIM when given.
    """
    # One combined check: cheap enough for the hot path, and a null aud or sub never goes out.
    if not (
        isinstance(issuer, str) and issuer
        and isinstance(tool_name, str) and tool_name
        and isinstance(subject, str) and subject
        and isinstance(turn, str) and turn
        and isinstance(anonymous, bool)
    ):
        raise ValueError(
            "An assertion needs issuer, tool name, subject and turn as non-empty strings "
            "and anonymous as true or false."
        )
    issued_at = int(now)
    claims = {
        "iss": issuer,
        "aud": tool_name,
        "sub": subject,
        "anon": anonymous,
        "turn": turn,
        "iat": issued_at,
        "exp": issued_at + ASSERTION_LIFETIME_SECONDS,
        "jti": jti or secrets.token_urlsafe(16),
    }
    if approval is not None:
        claims[APPROVAL_CLAIM] = approval
    return sign_compact(key, ASSERTION_TYPE, claims)
