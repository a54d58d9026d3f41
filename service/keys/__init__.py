"""Key sets, JWKS, session tokens and call assertions. Pure domain: no database, no Flask.

Storage keeps one row per key (kid, alg, sealed private key, created_at, retired_at); it opens
rows with `unseal_private_key` and hands the resulting `SigningKey`s to everything else here.
"""
from service.keys.algorithms import ALGORITHMS, DEFAULT_ALGORITHM, jwk_thumbprint
from service.keys.assertions import ASSERTION_TYPE, mint_assertion, new_turn_id
from service.keys.jwks import (
    RETIRED_KEY_PUBLISHED_SECONDS,
    active_key,
    is_published,
    jwks_document,
    published_keys,
    rotate,
)
from service.keys.sealing import SealError, seal_private_key, unseal_private_key
from service.keys.session_tokens import (
    REASONS,
    SESSION_TOKEN_TYPE,
    SessionClaims,
    TokenError,
    mint_session_token,
    subject_fits,
    verify_session_token,
)
from service.keys.signing_key import (
    SigningKey,
    generate_signing_key,
    public_jwk,
    signing_key_from_private,
)

__all__ = [
    "ALGORITHMS",
    "ASSERTION_TYPE",
    "DEFAULT_ALGORITHM",
    "REASONS",
    "RETIRED_KEY_PUBLISHED_SECONDS",
    "SESSION_TOKEN_TYPE",
    "SealError",
    "SessionClaims",
    "SigningKey",
    "TokenError",
    "active_key",
    "generate_signing_key",
    "is_published",
    "jwk_thumbprint",
    "jwks_document",
    "mint_assertion",
    "mint_session_token",
    "new_turn_id",
    "public_jwk",
    "published_keys",
    "rotate",
    "seal_private_key",
    "signing_key_from_private",
    "subject_fits",
    "unseal_private_key",
    "verify_session_token",
]
