"""Session tokens at the platform's door: which organization, which subject, which entitlements."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from functools import cached_property

import jwt

from service.config import Config
from service.database import generation
from service.dispatch import AddressGuard
from service.errors import ServiceError
from service.identity import ProviderTokenError, still_trusted, verify_provider_token
from service.keys import SessionClaims, TokenError, verify_session_token
from service.keys.session_tokens import SESSION_TOKEN_TYPE
from service.keys.store import verification_keys
from service.models import Organization, SigningKeyRow
from service.text import is_text


@dataclass(frozen=True)
class Session:
    """A verified session: the organization whose key signed it and the claims it carries."""

    organization: Organization
    claims: SessionClaims
    #: For a token of the organization's own identity provider: that provider's row id and revision, checked again
    #: on every request (the row is the truth: a removed or changed provider refuses its tokens at once).
    provider: tuple[int, int] | None = None

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


def provider_token_refused() -> ServiceError:
    """A provider's token refused: the reason is in the log, never in the answer."""
    return ServiceError(401, "invalid-session-token", "The access token was refused.")


def _header_of(token: str) -> dict:
    try:
        return jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        return {}


def _kid_in(header: dict) -> str | None:
    """The `kid` in the token's header, read only to find which organization's keys to try."""
    kid = header.get("kid")
    return kid if is_text(kid) and len(kid) <= 128 else None  # a NUL or a surrogate is no kid, and cannot be looked up


_guards: dict[tuple[str, ...], AddressGuard] = {}


def _guard(config: Config) -> AddressGuard:
    # One guard per allow-list, so the provider key-set cache (kept per guard) is the process's one.
    networks = tuple(str(n) for n in config.allowed_networks)
    guard = _guards.get(networks)
    if guard is None:
        guard = _guards[networks] = AddressGuard(networks)
    return guard


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
        if session.provider is None or still_trusted(*session.provider):
            return session
        _verified.pop(key, None)
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
    header = _header_of(token)
    kid = _kid_in(header)
    row = SigningKeyRow.get_or_none(SigningKeyRow.kid == kid) if kid else None
    if row is None:
        if header.get("typ") == SESSION_TOKEN_TYPE or not header:
            raise session_refused("unknown-key")
        return _verify_provider_token(token, config)
    organization = row.organization
    try:
        claims = verify_session_token(token, config.issuer(organization.slug),
                                      verification_keys(organization, config.secret_key))
    except TokenError as error:
        raise session_refused(error.reason) from None
    return Session(organization=organization, claims=claims)


def _verify_provider_token(token: str, config: Config) -> Session:
    """A token of an organization's own identity provider, verified against the one provider its issuer and audience
    name, as a session of that provider's organization; 401 with the reason logged, not told."""
    try:
        verified = verify_provider_token(token, _guard(config))
    except ProviderTokenError:
        raise provider_token_refused() from None
    claims = verified.claims
    session_claims = SessionClaims(subject=claims.subject, anonymous=False, entitlements=claims.entitlements,
                                   issued_at=claims.issued_at, expires_at=claims.expires_at, jti=claims.jti)
    row = verified.provider
    return Session(organization=row.organization, claims=session_claims, provider=(row.id, row.revision))
