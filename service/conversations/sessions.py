"""Session tokens at the platform's door: which organization, which subject, which entitlements."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from functools import cached_property

import jwt

from service.config import Config
from service.database import generation
from service.errors import ServiceError
from service.keys import SessionClaims, TokenError, verify_session_token
from service.keys.store import verification_keys
from service.models import Organization, SigningKeyRow
from service.text import is_text


@dataclass(frozen=True)
class Session:
    """A verified session: the organization whose key signed it and the claims it carries."""

    organization: Organization
    claims: SessionClaims

    @property
    def subject(self) -> str:
        return self.claims.subject

    @property
    def anonymous(self) -> bool:
        return self.claims.anonymous

    @cached_property
    def entitlements(self) -> frozenset[str]:
        # Made once per session: a remembered session serves every step of its token.
        return frozenset(self.claims.entitlements)


def session_refused(reason: str) -> ServiceError:
    return ServiceError(401, "invalid-session-token", f"The session token was refused ({reason}).")


def _kid_of(token: str) -> str | None:
    """The `kid` in the token's header, read only to find which organization's keys to try."""
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.InvalidTokenError:
        return None
    return kid if is_text(kid) and len(kid) <= 128 else None  # a NUL or a surrogate is no kid, and cannot be looked up


#: Verified session tokens, kept until they expire, by the SHA-256 of the token (a token may be 8 KiB; its digest is
#: 32 bytes, so the cache stays within a few megabytes). A token cannot be revoked, and rotation keeps the key that
#: signed it published for longer than any token lives, so verifying it again on every request would change no
#: answer. Past its `exp` a remembered token is verified again (and refused once past the clock skew allowed). Were a
#: signing key ever withdrawn at once, this cache would have to be emptied with it.
_verified: dict[tuple[int, bytes], Session] = {}
MAX_REMEMBERED_SESSIONS = 10_000


def authenticate_session(token: str, config: Config) -> Session:
    """The verified session of a token (from the cache until its `exp`), or 401."""
    # surrogatepass: any text hashes (a lone surrogate from a JSON body is then refused by verification, not a 500).
    key = (generation(), hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest())
    session = _verified.get(key)
    if session is not None and session.claims.expires_at > time.time():
        return session
    session = _verify(token, config)
    if len(_verified) >= MAX_REMEMBERED_SESSIONS:
        now = time.time()
        for stale in [k for k, s in _verified.items() if s.claims.expires_at <= now] or list(_verified)[:1000]:
            _verified.pop(stale, None)
    _verified[key] = session
    return session


def _verify(token: str, config: Config) -> Session:
    """Verify a session token against the keys of the organization that owns its `kid`, or 401.

    The issuer expected is the one our configuration gives that organization, never the token's own
    claim, and the algorithm is the key's own: everything else is `verify_session_token`'s.
    """
    kid = _kid_of(token)
    row = SigningKeyRow.get_or_none(SigningKeyRow.kid == kid) if kid else None
    if row is None:
        raise session_refused("unknown-key")
    organization = row.organization
    try:
        claims = verify_session_token(token, config.issuer(organization.slug),
                                      verification_keys(organization, config.secret_key))
    except TokenError as error:
        raise session_refused(error.reason) from None
    return Session(organization=organization, claims=claims)
