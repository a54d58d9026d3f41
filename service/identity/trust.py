"""Trusting a provider and verifying its tokens: the rules, discovery, the key-set cache and the stored row together.

Adding a provider reads its discovery document (OpenID Connect Discovery, else RFC 8414) and the key set it names,
through the outbound guard, before anything is stored: a provider that cannot be read, whose document names another
issuer, or whose key set has no key for the configured algorithms is refused with the reason, on `issuer`.

A token finds its provider, and so its organization, by its `iss` and `aud` together: the pair is unique across
organizations (the database holds it), so a token is never ambiguous, and one organization's provider grants nothing
in another.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from service.catalogue import violation
from service.dispatch import AddressGuard
from service.errors import ServiceError
from service.identity.fetch import Unreadable, discovery_addresses, fetch_json
from service.identity.key_sets import KeySetCache, ProviderUnavailable, parse_key_set
from service.identity.rules import check_settings, issuer_fits
from service.identity.store import issuer_trusted, provider_for, put_provider
from service.identity.tables import IdentityProviderRow
from service.identity.tokens import ProviderClaims, ProviderTokenError, peek, verify_access_token
from service.models import Organization
from service.text import is_text

log = logging.getLogger("service.identity")

#: Seconds a client is told to wait when a provider's keys cannot be read and none are cached.
PROVIDER_RETRY_AFTER_SECONDS = 5

_caches: dict[tuple[str, ...], KeySetCache] = {}
_caches_lock = threading.Lock()


def key_sets(guard: AddressGuard) -> KeySetCache:
    """The process's key-set cache for fetches through `guard` (one per allow-list: every guard of the same
    configuration shares it, the API's that adds a provider and the sessions' that verify its tokens)."""
    networks = tuple(str(n) for n in guard.allowed_networks)
    with _caches_lock:
        cache = _caches.get(networks)
        if cache is None:
            cache = _caches[networks] = KeySetCache(lambda uri: fetch_json(uri, guard))
        return cache


def _refused_issuer(rule: str, detail: str = "") -> ServiceError:
    v = violation("issuer", rule)
    return ServiceError(422, rule, f"{v.message} {detail}".strip(), [v])


def discover(issuer: str, guard: AddressGuard) -> tuple[str, dict[str, Any]]:
    """The `jwks_uri` the provider's discovery document names, and the key set read from it; 422 on `issuer`."""
    reasons = []
    document = None
    for address in discovery_addresses(issuer):
        try:
            document = fetch_json(address, guard)
            break
        except Unreadable as exc:
            reasons.append(str(exc))
    if document is None:
        raise _refused_issuer("issuer-unreachable", " ".join(reasons))
    jwks_uri = document.get("jwks_uri")
    if document.get("issuer") != issuer or not isinstance(jwks_uri, str) or not issuer_fits(jwks_uri):
        raise _refused_issuer("discovery-invalid")
    try:
        key_set = fetch_json(jwks_uri, guard)
    except Unreadable as exc:
        raise _refused_issuer("issuer-unreachable", str(exc)) from None
    return jwks_uri, key_set


def trust_provider(organization: Organization, name: str, body: Any, actor: str, guard: AddressGuard,
                   platform_issuer_prefix: str) -> tuple[IdentityProviderRow, bool]:
    """Add or change the provider `name` from `body` (the rules, then discovery), and the row and whether it is new;
    422 with every broken rule, or with why the provider cannot be read."""
    settings, found = check_settings(name, body, platform_issuer_prefix)
    if settings is None:
        raise ServiceError(422, "invalid", "The identity provider breaks one or more rules.", found)
    jwks_uri, key_set = discover(settings.issuer, guard)
    keys = parse_key_set(key_set)
    if not any(key.signs_with(alg) for key in keys.values() for alg in settings.algorithms):
        raise _refused_issuer("key-set-invalid")
    cache = key_sets(guard)
    row, created = put_provider(organization, settings, jwks_uri, actor)
    cache.prime(jwks_uri, key_set)
    return row, created


@dataclass(frozen=True)
class ProviderSession:
    """A verified provider token: the row it was verified against (its organization) and what it grants."""

    provider: IdentityProviderRow
    claims: ProviderClaims


def _provider_of(token: str) -> IdentityProviderRow:
    _, claims = peek(token)
    issuer, audience = claims.get("iss"), claims.get("aud")
    if isinstance(audience, list) and len(audience) == 1:
        audience = audience[0]  # found by it; verification still holds `aud` to one value
    # Text only: a NUL cannot even be asked of PostgreSQL, and no stored issuer or audience holds one.
    if not is_text(issuer) or not is_text(audience) or len(issuer) > 512 or len(audience) > 512:
        raise ProviderTokenError("untrusted-issuer", "no iss and aud to find a provider by")
    row = provider_for(issuer, audience)
    if row is None:
        if issuer_trusted(issuer):
            raise ProviderTokenError("wrong-audience", "this issuer is trusted for other audiences only")
        raise ProviderTokenError("untrusted-issuer", "no organization trusts this issuer")
    return row


def verify_provider_token(token: str, guard: AddressGuard, now: float | None = None,
                          provider: IdentityProviderRow | None = None) -> ProviderSession:
    """The provider session of `token`, found by its issuer and audience (or checked against `provider`).
    Raises ProviderTokenError (the reason for the log) or, when the provider's keys were never read and cannot be
    now, ServiceError 503 with Retry-After."""
    try:
        row = provider or _provider_of(token)
    except ProviderTokenError as error:
        log_refusal(error)
        raise
    cache = key_sets(guard)
    try:
        claims = verify_access_token(token, row.settings(), lambda kid: cache.key(row.jwks_uri, kid),
                                     time.time() if now is None else now)
    except ProviderTokenError as error:
        log_refusal(error, row.name)
        raise
    except ProviderUnavailable:
        log.warning("identity provider keys unavailable", extra={"fields": {"provider": row.name}})
        raise ServiceError(503, "identity-provider-unavailable", "The identity provider's keys cannot be read "
                           "right now; try again shortly.", retry_after=PROVIDER_RETRY_AFTER_SECONDS) from None
    return ProviderSession(row, claims)


def log_refusal(error: ProviderTokenError, provider: str | None = None) -> None:
    """The reason a provider's token was refused, in the log (never in the answer)."""
    log.warning("access token refused", extra={"fields": {"reason": error.reason, "provider": provider}})




def verify_for_organization(token: str, organization: Organization, guard: AddressGuard) -> ProviderSession:
    """What `token` maps to among `organization`'s own providers only (the dashboard's test): another
    organization's provider is not looked at, so a test says nothing of what others trust."""
    try:
        _, claims = peek(token)
        issuer, audience = claims.get("iss"), claims.get("aud")
        row = IdentityProviderRow.get_or_none(IdentityProviderRow.organization == organization,
                                              IdentityProviderRow.issuer == issuer,
                                              IdentityProviderRow.audience == audience) \
            if is_text(issuer) and is_text(audience) else None
        if row is None:
            same_issuer = is_text(issuer) and IdentityProviderRow.select().where(
                IdentityProviderRow.organization == organization, IdentityProviderRow.issuer == issuer).exists()
            raise ProviderTokenError("wrong-audience" if same_issuer else "untrusted-issuer")
    except ProviderTokenError as error:
        log_refusal(error)
        raise
    return verify_provider_token(token, guard, provider=row)
