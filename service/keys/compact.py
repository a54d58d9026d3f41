"""JWS compact serialization for the tokens the platform mints, with the per-key work done once.

A token's header depends only on the key and the token type, so its encoded segment is built
once per (alg, kid, typ) and reused; per call only the claims are serialized and signed.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from service.keys.algorithms import b64url, sign
from service.keys.signing_key import SigningKey

# A handful of live keys per organization, two token types each: this bounds the cache
# without ever evicting a key that is still signing.
_HEADER_CACHE_SIZE = 1024

# Built once: json.dumps with any non-default option builds a new encoder on every call.
_CLAIMS_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


@lru_cache(maxsize=_HEADER_CACHE_SIZE)
def header_segment(alg: str, kid: str, typ: str) -> bytes:
    """The encoded JOSE header {alg, kid, typ}, in that (sorted) order, as pyjwt would write it."""
    header = {"alg": alg, "kid": kid, "typ": typ}
    return b64url(json.dumps(header, separators=(",", ":")).encode("utf-8"))


def encode_claims(claims: dict[str, Any]) -> bytes:
    """The encoded payload segment: compact JSON, claims in the order given."""
    return b64url(_CLAIMS_ENCODER.encode(claims).encode("utf-8"))


def sign_compact(key: SigningKey, typ: str, claims: dict[str, Any]) -> str:
    """A signed compact JWS `header.payload.signature` of `claims` under `key`.

    Raises ValueError for a retired key: everything a key signs must expire inside the window in
    which the JWKS still publishes it, and that window starts at retirement.
    """
    if key.retired_at is not None:
        raise ValueError(f"Signing key {key.kid} is retired and signs nothing more.")
    signing_input = header_segment(key.alg, key.kid, typ) + b"." + encode_claims(claims)
    signature = sign(key.alg, key.private_key, signing_input)
    return (signing_input + b"." + b64url(signature)).decode("ascii")
