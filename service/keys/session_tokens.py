"""Session tokens: minted for an organization's backend, presented to open conversations.

Verification follows RFC 8725 and THREATS.md: the algorithm is read from our key, never from the
token; only the headers we write are allowed, so no embedded key or key URL is ever looked at;
an unknown kid is simply unknown (nothing is fetched, no other key is tried); the type, issuer
and audience must match exactly; every claim is required; the lifetime is bounded.
"""
from __future__ import annotations

import base64
import json
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass

import jwt

from service.keys.algorithms import ALGORITHMS
from service.keys.compact import sign_compact
from service.keys.jwks import published_keys
from service.keys.signing_key import SigningKey
from service.limits import CLOCK_SKEW_SECONDS, MAX_SUBJECT_CHARS, SESSION_TOKEN_MAX_SECONDS
from service.text import text_problem

#: The `typ` header of a session token, distinct from an assertion's "JWT" (RFC 8725 §3.11).
SESSION_TOKEN_TYPE = "toolgate-session+jwt"

#: The claims a session token carries, all required, in the order they are written.
SESSION_CLAIMS = ("iss", "aud", "sub", "anon", "entitlements", "iat", "exp", "jti")

#: Longer text is refused before it is parsed, and minting refuses to produce it.
MAX_SESSION_TOKEN_CHARS = 8_192

#: Subjects that cannot stand as a path segment: HTTP clients remove dot segments (`/users/../orders` is `/orders`).
_NOT_A_SEGMENT = ("", ".", "..")

#: The stable reason codes of TokenError.
REASONS = (
    "malformed", "bad-algorithm", "unknown-key", "bad-signature", "wrong-type", "wrong-issuer",
    "wrong-audience", "expired", "not-yet-valid", "missing-claim", "lifetime-too-long",
    "forbidden-header",
)

# The only header members we write; anything else (jwk, jku, x5u, x5c, crit, b64, …) is refused.
_ALLOWED_HEADERS = frozenset({"alg", "kid", "typ"})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")

# pyjwt checks the signature, the presence of every claim, the issuer and the audience (strictly:
# one string, equal). Times are checked below against the caller's clock, which pyjwt cannot take.
_DECODER = jwt.PyJWT(options={
    "require": list(SESSION_CLAIMS),
    "strict_aud": True,
    "verify_exp": False,
    "verify_iat": False,
    "verify_nbf": False,
    "enforce_minimum_key_length": True,
})


class TokenError(Exception):
    """A session token was refused. `reason` is one of REASONS, stable for callers and tests."""

    def __init__(self, reason: str, detail: str = "") -> None:
        if reason not in REASONS:
            raise ValueError(f"Unknown token rejection reason {reason!r}.")
        self.reason = reason
        super().__init__(f"{reason}: {detail}" if detail else reason)


@dataclass(frozen=True)
class SessionClaims:
    """What a verified session token says about its holder."""

    subject: str
    anonymous: bool
    entitlements: tuple[str, ...]
    issued_at: int
    expires_at: int
    jti: str


def subject_fits(subject: object) -> bool:
    """Whether `subject` can be a session token's subject: 1 to MAX_SUBJECT_CHARS characters with no control
    character, and not . or .., so it stands as a path segment wherever a tool puts it (rule `subject-format`)."""
    return (isinstance(subject, str) and subject not in _NOT_A_SEGMENT and len(subject) <= MAX_SUBJECT_CHARS
            and text_problem(subject) is None)


def mint_session_token(
    key: SigningKey,
    issuer: str,
    subject: str,
    anonymous: bool,
    entitlements: Iterable[str],
    ttl_seconds: int,
    now: float,
    *,
    jti: str | None = None,
) -> tuple[str, int]:
    """A session token for `subject`, signed by `key`, and its `exp`.

    `aud` is the issuer itself. `ttl_seconds` must be in 1..SESSION_TOKEN_MAX_SECONDS. `jti` is
    random unless given; pass one only for known-answer vectors.
    """
    if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int):
        raise ValueError("ttl_seconds must be a whole number of seconds.")
    if not 0 < ttl_seconds <= SESSION_TOKEN_MAX_SECONDS:
        raise ValueError(
            f"ttl_seconds must be between 1 and {SESSION_TOKEN_MAX_SECONDS}; got {ttl_seconds}."
        )
    if not isinstance(issuer, str) or not issuer:
        raise ValueError("A session token needs the issuer as a non-empty string.")
    if not subject_fits(subject):
        raise ValueError(f"A session token's subject is 1 to {MAX_SUBJECT_CHARS} characters with no control "
                         "characters, and not . or ..")
    if not isinstance(anonymous, bool):
        raise ValueError("anonymous must be true or false.")
    entitlement_list = list(entitlements)
    if not all(isinstance(item, str) for item in entitlement_list):
        raise ValueError("Entitlements must be strings.")
    issued_at = int(now)
    expires_at = issued_at + ttl_seconds
    claims = {
        "iss": issuer,
        "aud": issuer,
        "sub": subject,
        "anon": anonymous,
        "entitlements": entitlement_list,
        "iat": issued_at,
        "exp": expires_at,
        "jti": jti or secrets.token_urlsafe(16),
    }
    token = sign_compact(key, SESSION_TOKEN_TYPE, claims)
    if len(token) > MAX_SESSION_TOKEN_CHARS:
        raise ValueError(
            f"The session token would exceed {MAX_SESSION_TOKEN_CHARS} characters: "
            "send fewer or shorter entitlements."
        )
    return token, expires_at


def _unverified_header(token: object) -> dict:
    # Parsed here rather than by pyjwt so that our header rules run first: pyjwt would judge some
    # members (crit, b64) itself, and the reason given should be that they are not allowed at all.
    if not isinstance(token, str) or not token or len(token) > MAX_SESSION_TOKEN_CHARS:
        raise TokenError("malformed", "not a token of an acceptable size")
    segments = token.split(".")
    if len(segments) != 3 or not _BASE64URL.fullmatch(segments[0]) or len(segments[0]) % 4 == 1:
        raise TokenError("malformed", "not three base64url segments")
    try:
        header = json.loads(base64.urlsafe_b64decode(segments[0] + "=" * (-len(segments[0]) % 4)))
    except (ValueError, RecursionError):
        raise TokenError("malformed", "the header is not JSON") from None
    if not isinstance(header, dict):
        raise TokenError("malformed", "the header is not a JSON object")
    return header


def _checked_header(token: object) -> dict:
    header = _unverified_header(token)
    extra = sorted(set(header) - _ALLOWED_HEADERS)
    if extra:
        raise TokenError("forbidden-header", f"header members not allowed: {', '.join(extra)}")
    # The token's alg only has to be one we sign with; which one verifies comes from our key.
    if header.get("alg") not in ALGORITHMS:
        raise TokenError("bad-algorithm", "not an algorithm the platform signs with")
    if header.get("typ") != SESSION_TOKEN_TYPE:
        raise TokenError("wrong-type", f"typ is not {SESSION_TOKEN_TYPE}")
    return header


def _decode(token: str, key: SigningKey, issuer: str) -> dict:
    try:
        return _DECODER.decode(
            token, key.public_key, algorithms=[key.alg], audience=issuer, issuer=issuer
        )
    # Most specific first: InvalidSignatureError is a DecodeError, and every one here is an
    # InvalidTokenError.
    except jwt.InvalidAlgorithmError as error:
        raise TokenError("bad-algorithm", str(error)) from None
    except jwt.InvalidSignatureError as error:
        raise TokenError("bad-signature", str(error)) from None
    except jwt.MissingRequiredClaimError as error:
        raise TokenError("missing-claim", str(error)) from None
    except jwt.InvalidIssuerError as error:
        raise TokenError("wrong-issuer", str(error)) from None
    except jwt.InvalidAudienceError as error:
        raise TokenError("wrong-audience", str(error)) from None
    except jwt.InvalidTokenError as error:
        raise TokenError("malformed", str(error)) from None


def _whole_seconds(claims: dict, name: str) -> int:
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TokenError("malformed", f"{name} is not a whole number of seconds")
    return value


def _claims(payload: dict, now: float) -> SessionClaims:
    issued_at = _whole_seconds(payload, "iat")
    expires_at = _whole_seconds(payload, "exp")
    subject, anonymous, entitlements = payload["sub"], payload["anon"], payload["entitlements"]
    if not subject_fits(subject):  # never minted so: it would fail every call that puts it in a path
        raise TokenError("malformed", "sub is not a subject")
    if not isinstance(anonymous, bool):
        raise TokenError("malformed", "anon is not a boolean")
    if not isinstance(entitlements, list) or not all(isinstance(e, str) for e in entitlements):
        raise TokenError("malformed", "entitlements is not a list of strings")
    if expires_at <= issued_at:
        raise TokenError("malformed", "exp is not after iat")
    if expires_at - issued_at > SESSION_TOKEN_MAX_SECONDS + CLOCK_SKEW_SECONDS:
        raise TokenError("lifetime-too-long", f"exp - iat exceeds {SESSION_TOKEN_MAX_SECONDS} s")
    if expires_at + CLOCK_SKEW_SECONDS <= now:
        raise TokenError("expired", "exp has passed")
    if issued_at > now + CLOCK_SKEW_SECONDS:
        raise TokenError("not-yet-valid", "iat is in the future")
    return SessionClaims(
        subject=subject,
        anonymous=anonymous,
        entitlements=tuple(entitlements),
        issued_at=issued_at,
        expires_at=expires_at,
        jti=payload["jti"],
    )


def verify_session_token(
    token: str, issuer: str, keys: Iterable[SigningKey], now: float | None = None
) -> SessionClaims:
    """The claims of `token` if it is a live session token of `issuer` signed by one of `keys`.

    `issuer` comes from configuration (the organization being addressed), never from the token.
    Only keys still published at `now` verify. Raises TokenError with a stable reason otherwise.
    """
    if not isinstance(issuer, str) or not issuer:
        # pyjwt skips the issuer and audience checks when given None: never let that happen.
        raise ValueError("verify_session_token needs the issuer from configuration.")
    now = time.time() if now is None else now
    header = _checked_header(token)
    kid = header.get("kid")
    key = next((k for k in published_keys(keys, now) if k.kid == kid), None)
    if key is None:
        raise TokenError("unknown-key", "no published key has this kid")
    if header["alg"] != key.alg:
        raise TokenError("bad-algorithm", f"the key {key.kid} signs with {key.alg}")
    return _claims(_decode(token, key, issuer), now)
