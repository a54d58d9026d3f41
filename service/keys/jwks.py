"""An organization's key set: which key signs, which keys are published, and rotation.

A key signs from its creation until it is retired. It stays published (and accepted by
`verify_session_token`) for as long as anything it signed may still verify: a session token it
signed just before retirement lives SESSION_TOKEN_MAX_SECONDS, and a verifier tolerates
CLOCK_SKEW_SECONDS past `exp`. Assertions live only ASSERTION_LIFETIME_SECONDS, well inside that.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from service.keys.signing_key import SigningKey, generate_signing_key, public_jwk
from service.limits import CLOCK_SKEW_SECONDS, SESSION_TOKEN_MAX_SECONDS

#: How long a retired key stays published after its retirement.
RETIRED_KEY_PUBLISHED_SECONDS = SESSION_TOKEN_MAX_SECONDS + CLOCK_SKEW_SECONDS


def _newest_first(key: SigningKey) -> tuple[int, str]:
    # kid breaks ties so two keys created in the same second still come out in one fixed order.
    return (-key.created_at, key.kid)


def is_published(key: SigningKey, now: float) -> bool:
    """Whether `key` may still verify something at `now`: unretired, or retired recently enough."""
    return key.retired_at is None or now - key.retired_at < RETIRED_KEY_PUBLISHED_SECONDS


def published_keys(keys: Iterable[SigningKey], now: float) -> list[SigningKey]:
    """Every key that may still verify something at `now`, newest first."""
    return sorted((key for key in keys if is_published(key, now)), key=_newest_first)


def active_key(keys: Iterable[SigningKey]) -> SigningKey:
    """The key that signs: the newest unretired one. Raises LookupError when there is none."""
    unretired = sorted((key for key in keys if key.retired_at is None), key=_newest_first)
    if not unretired:
        raise LookupError("The organization has no unretired signing key.")
    return unretired[0]


def jwks_document(keys: Iterable[SigningKey], now: float) -> dict[str, list[dict[str, str]]]:
    """The JWKS served at `{issuer}/.well-known/jwks.json`: `{"keys": [...]}`, newest first."""
    return {"keys": [public_jwk(key) for key in published_keys(keys, now)]}


def rotate(keys: Iterable[SigningKey], alg: str, now: float) -> tuple[SigningKey, list[SigningKey]]:
    """A new `alg` key that signs at once, and the key set after rotation.

    The returned set holds every given key, with each unretired one retired at `now`, followed by
    the new key. Storage writes the new key and the changed `retired_at`s in one transaction.
    Because a JWKS is always computed from the whole set, the new key is published the moment
    it is stored, and a verifier that meets its unknown kid refetches the JWKS and finds it.
    """
    new_key = generate_signing_key(alg, now)
    retired = [
        dataclasses.replace(key, retired_at=int(now)) if key.retired_at is None else key
        for key in keys
    ]
    return new_key, [*retired, new_key]
