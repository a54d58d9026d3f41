"""The key set: which key signs, what the JWKS publishes, and rotation's publication window."""
from __future__ import annotations

import dataclasses

import pytest

from service.keys import (
    RETIRED_KEY_PUBLISHED_SECONDS,
    TokenError,
    active_key,
    jwks_document,
    mint_session_token,
    published_keys,
    rotate,
    verify_session_token,
)
from service.limits import CLOCK_SKEW_SECONDS, SESSION_TOKEN_MAX_SECONDS
from tests.keys.vectors import FIXED_NOW, ISSUER, PUBLIC_JWKS, fixed_key

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}


def retired(key, at):
    return dataclasses.replace(key, retired_at=at)


def test_jwks_document_known_answer():
    active = fixed_key("ES256", created_at=FIXED_NOW - 100)
    recently_retired = retired(fixed_key("EdDSA", created_at=FIXED_NOW - 5000), FIXED_NOW - 100)
    long_retired = retired(fixed_key("RS256", created_at=FIXED_NOW - 9000), FIXED_NOW - 5000)
    document = jwks_document([long_retired, recently_retired, active], FIXED_NOW)
    assert document == {"keys": [PUBLIC_JWKS["ES256"], PUBLIC_JWKS["EdDSA"]]}


def test_jwks_carries_no_private_member(any_fixed_key):
    (entry,) = jwks_document([any_fixed_key], FIXED_NOW)["keys"]
    assert not PRIVATE_MEMBERS & set(entry)
    assert (entry["use"], entry["alg"], entry["kid"]) == ("sig", any_fixed_key.alg, any_fixed_key.kid)


def test_active_key_is_the_newest_unretired_key():
    older, newer = fixed_key("RS256", created_at=1), fixed_key("EdDSA", created_at=2)
    newest_but_retired = dataclasses.replace(fixed_key("ES256", created_at=3), retired_at=3)
    assert active_key([older, newest_but_retired, newer]) is newer


def test_no_unretired_key_means_no_active_key():
    with pytest.raises(LookupError, match="no unretired signing key"):
        active_key([dataclasses.replace(fixed_key("ES256"), retired_at=FIXED_NOW)])


def test_retired_key_stays_published_as_long_as_a_session_token_may_live():
    assert RETIRED_KEY_PUBLISHED_SECONDS == SESSION_TOKEN_MAX_SECONDS + CLOCK_SKEW_SECONDS


def test_rotation_signs_with_the_new_key_at_once_and_keeps_the_old_one_published():
    old = fixed_key("ES256")
    new_key, keys = rotate([old], "EdDSA", FIXED_NOW)
    assert (new_key.alg, new_key.created_at, new_key.retired_at) == ("EdDSA", FIXED_NOW, None)
    assert active_key(keys) is new_key
    assert keys == [dataclasses.replace(old, retired_at=FIXED_NOW), new_key]
    assert [entry["kid"] for entry in jwks_document(keys, FIXED_NOW)["keys"]] == [new_key.kid, old.kid]


def test_rotation_leaves_already_retired_keys_alone():
    retired = dataclasses.replace(fixed_key("RS256", created_at=1), retired_at=5)
    _, keys = rotate([retired, fixed_key("ES256", created_at=6)], "ES256", FIXED_NOW)
    assert keys[0] is retired
    assert keys[1].retired_at == FIXED_NOW


def test_rotated_out_key_is_published_until_everything_it_signed_expired_then_dropped():
    old = fixed_key("ES256")
    # The longest-lived thing the old key can sign: a full-length session token, minted at the
    # very second of rotation.
    token, expires_at = mint_session_token(old, ISSUER, "user-42", False, [], SESSION_TOKEN_MAX_SECONDS, FIXED_NOW)
    _, keys = rotate([old], "ES256", FIXED_NOW)
    last_accepted = expires_at + CLOCK_SKEW_SECONDS - 1

    assert old.kid in {key.kid for key in published_keys(keys, last_accepted)}
    assert verify_session_token(token, ISSUER, keys, now=last_accepted).subject == "user-42"

    assert old.kid not in {key.kid for key in published_keys(keys, last_accepted + 1)}
    assert old.kid not in {entry["kid"] for entry in jwks_document(keys, last_accepted + 1)["keys"]}
    with pytest.raises(TokenError):
        verify_session_token(token, ISSUER, keys, now=last_accepted + 1)
