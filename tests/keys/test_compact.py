"""Compact serialization: the header built once, the same bytes pyjwt would write, no retired key."""
from __future__ import annotations

import dataclasses

import jwt
import pytest

from service.keys.compact import header_segment, sign_compact
from tests.keys.vectors import FIXED_NOW, b64url_decode, fixed_key

CLAIMS = {"iss": "https://toolgate.example/orgs/acme", "aud": "get_orders", "sub": "user-42", "iat": FIXED_NOW}


def test_header_segment_is_compact_sorted_json():
    segment = header_segment("ES256", "k1", "JWT").decode()
    assert b64url_decode(segment) == b'{"alg":"ES256","kid":"k1","typ":"JWT"}'


def test_header_segment_is_built_once_per_key_and_type():
    header_segment.cache_clear()
    for _ in range(3):
        header_segment("EdDSA", "k1", "JWT")
    header_segment("EdDSA", "k1", "toolgate-session+jwt")
    info = header_segment.cache_info()
    assert (info.misses, info.hits) == (2, 2)


@pytest.mark.parametrize("alg", ["EdDSA", "RS256"])  # deterministic signatures: whole strings compare
def test_token_is_byte_for_byte_what_pyjwt_writes(alg):
    key = fixed_key(alg)
    ours = sign_compact(key, "JWT", CLAIMS)
    theirs = jwt.encode(CLAIMS, key.private_key, algorithm=alg, headers={"kid": key.kid, "typ": "JWT"})
    assert ours == theirs


def test_retired_key_signs_nothing():
    key = dataclasses.replace(fixed_key("ES256"), retired_at=FIXED_NOW)
    with pytest.raises(ValueError, match="is retired"):
        sign_compact(key, "JWT", CLAIMS)


def test_a_claim_that_is_not_json_is_refused():
    with pytest.raises(ValueError):
        sign_compact(fixed_key("EdDSA"), "JWT", {**CLAIMS, "iat": float("nan")})
