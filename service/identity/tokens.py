"""A provider's access token, verified by THREATS.md's rules for tokens from an organization's own provider.

The algorithm must be one the provider's configuration names (never the token's choice: `none` and every HMAC are
not even configurable); only the header members a provider writes are read, and an embedded key or key address is
refused unlooked-at; the issuer and the audience must equal the configuration's exactly (`aud` one value, as pyjwt's
`strict_aud` holds it); `exp` and `iat` are required and the lifetime bounded; the `typ` is RFC 9068's `at+jwt` or
the `JWT` Auth0, Okta, Keycloak and Entra ID send; the key is one the provider published under the token's `kid`.
Every refusal has a stable reason, for the log and the tests; the answer never carries it.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

import jwt

from service import limits
from service.identity.key_sets import ProviderKey
from service.identity.rules import ProviderSettings
from service.keys import subject_fits
from service.text import is_text

#: The stable reasons of ProviderTokenError.
REASONS = (
    "malformed", "forbidden-header", "wrong-type", "bad-algorithm", "unknown-key", "bad-signature", "wrong-issuer",
    "wrong-audience", "missing-claim", "expired", "not-yet-valid", "lifetime-too-long", "bad-subject",
    "bad-entitlements", "untrusted-issuer", "provider-unavailable",
)

#: The `typ` values taken, compared without case as media types are (RFC 7515 §4.1.9), with or without
#: `application/`: RFC 9068's, and plain JWT.
ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt", "application/jwt"})

# A key the token brings or points at, or a critical extension we would have to understand: never looked at.
_FORBIDDEN_HEADERS = frozenset({"jwk", "jku", "x5u", "x5c", "crit", "b64"})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")

_DECODER = jwt.PyJWT(options={
    "require": ["iss", "aud", "exp", "iat"],
    "strict_aud": True,
    "verify_exp": False,  # the times are checked below against the caller's clock
    "verify_iat": False,
    "verify_nbf": False,
    "enforce_minimum_key_length": True,
})


class ProviderTokenError(Exception):
    """A provider's token was refused; `reason` is one of REASONS."""

    def __init__(self, reason: str, detail: str = "") -> None:
        if reason not in REASONS:
            raise ValueError(f"Unknown access token rejection reason {reason!r}.")
        self.reason = reason
        super().__init__(f"{reason}: {detail}" if detail else reason)


@dataclass(frozen=True)
class ProviderClaims:
    """What a verified provider token says: the subject and entitlements from the configured claims."""

    subject: str
    entitlements: tuple[str, ...]
    issued_at: int
    expires_at: int
    jti: str


def _segment_json(segment: str) -> Any:
    if not _BASE64URL.fullmatch(segment) or len(segment) % 4 == 1:
        raise ProviderTokenError("malformed", "not base64url")
    try:
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, RecursionError):
        raise ProviderTokenError("malformed", "not JSON") from None


def peek(token: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of `token`, unverified: only to find which configured provider to verify it against."""
    if not isinstance(token, str) or not token or len(token) > limits.MAX_PROVIDER_TOKEN_CHARS:
        raise ProviderTokenError("malformed", "not a token of an acceptable size")
    segments = token.split(".")
    if len(segments) != 3:
        raise ProviderTokenError("malformed", "not three segments")
    header, claims = _segment_json(segments[0]), _segment_json(segments[1])
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise ProviderTokenError("malformed", "not JSON objects")
    return header, claims


def _checked_header(header: dict[str, Any], provider: ProviderSettings) -> tuple[str, str]:
    forbidden = sorted(_FORBIDDEN_HEADERS & set(header))
    if forbidden:
        raise ProviderTokenError("forbidden-header", f"header members not allowed: {', '.join(forbidden)}")
    typ = header.get("typ")
    if not isinstance(typ, str) or typ.lower() not in ACCESS_TOKEN_TYPES:
        raise ProviderTokenError("wrong-type", "typ is neither at+jwt nor JWT")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in provider.algorithms:
        raise ProviderTokenError("bad-algorithm", "not an algorithm the provider's configuration names")
    kid = header.get("kid")
    if not is_text(kid) or not kid or len(kid) > 256:
        raise ProviderTokenError("unknown-key", "no kid")
    return alg, kid


def _decode(token: str, key: ProviderKey, alg: str, provider: ProviderSettings) -> dict[str, Any]:
    try:
        return _DECODER.decode(token, key.key, algorithms=[alg], audience=provider.audience, issuer=provider.issuer)
    except jwt.InvalidAlgorithmError as error:
        raise ProviderTokenError("bad-algorithm", str(error)) from None
    except jwt.InvalidSignatureError as error:
        raise ProviderTokenError("bad-signature", str(error)) from None
    except jwt.MissingRequiredClaimError as error:
        raise ProviderTokenError("missing-claim", str(error)) from None
    except jwt.InvalidIssuerError as error:
        raise ProviderTokenError("wrong-issuer", str(error)) from None
    except jwt.InvalidAudienceError as error:
        raise ProviderTokenError("wrong-audience", str(error)) from None
    except (jwt.InvalidTokenError, ValueError, TypeError) as error:  # a key pyjwt cannot use for this alg included
        raise ProviderTokenError("malformed", str(error)) from None


def _whole_seconds(claims: dict[str, Any], name: str) -> int:
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ProviderTokenError("malformed", f"{name} is not a time")
    return int(value)


def _checked_times(claims: dict[str, Any], now: float) -> tuple[int, int]:
    issued_at, expires_at = _whole_seconds(claims, "iat"), _whole_seconds(claims, "exp")
    skew = limits.CLOCK_SKEW_SECONDS
    if expires_at <= issued_at:
        raise ProviderTokenError("malformed", "exp is not after iat")
    if expires_at - issued_at > limits.PROVIDER_TOKEN_MAX_SECONDS + skew:
        raise ProviderTokenError("lifetime-too-long", f"exp - iat exceeds {limits.PROVIDER_TOKEN_MAX_SECONDS} s")
    if expires_at + skew <= now:
        raise ProviderTokenError("expired", "exp has passed")
    if issued_at > now + skew:
        raise ProviderTokenError("not-yet-valid", "iat is in the future")
    if "nbf" in claims and _whole_seconds(claims, "nbf") > now + skew:
        raise ProviderTokenError("not-yet-valid", "nbf is in the future")
    return issued_at, expires_at


def entitlements_of(value: object) -> tuple[str, ...]:
    """The entitlements a claim grants: a space-separated string (OAuth's `scope`) or an array of strings (Okta's
    `scp`, Entra ID's `roles`); absent, none."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split()
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item for item in value if item]
    else:
        raise ProviderTokenError("bad-entitlements", "neither a string nor an array of strings")
    if len(items) > limits.MAX_ENTITLEMENTS or not all(is_text(i) and " " not in i for i in items):
        raise ProviderTokenError("bad-entitlements", f"more than {limits.MAX_ENTITLEMENTS}, or not claims")
    return tuple(dict.fromkeys(items))


def verify_access_token(token: str, provider: ProviderSettings, key_for: Callable[[str], ProviderKey | None],
                        now: float) -> ProviderClaims:
    """The subject and entitlements of `token` if `provider` issued it for its configured audience and it is live.

    `key_for(kid)` gives the key the provider published under that kid, or None (it may raise
    ProviderUnavailable). Raises ProviderTokenError with a stable reason otherwise.
    """
    header, _ = peek(token)
    alg, kid = _checked_header(header, provider)
    key = key_for(kid)
    if key is None:
        raise ProviderTokenError("unknown-key", "the provider has not published this kid")
    if not key.signs_with(alg):
        raise ProviderTokenError("bad-algorithm", f"the key {kid} does not sign with {alg}")
    claims = _decode(token, key, alg, provider)
    issued_at, expires_at = _checked_times(claims, now)
    subject = claims.get(provider.subject_claim)
    if subject is None:
        raise ProviderTokenError("missing-claim", f"no {provider.subject_claim}")
    if not subject_fits(subject):
        raise ProviderTokenError("bad-subject", f"{provider.subject_claim} is not a subject")
    entitlements = entitlements_of(claims.get(provider.entitlements_claim))
    jti = claims.get("jti")
    if not (is_text(jti) and 0 < len(jti) <= 256):  # not every provider sends one: the token's digest stands in
        jti = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return ProviderClaims(subject=subject, entitlements=entitlements, issued_at=issued_at, expires_at=expires_at,
                          jti=jti)
