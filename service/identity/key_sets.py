"""Providers' key sets, cached with a lifetime, refetched on an unknown `kid` at most once per cooldown, and kept
while the provider is down (THREATS.md: "JWKS clients cache with a lifetime, refetch at most once in a cooldown on an
unknown kid, cap the response size, and keep verifying with cached keys when the key server fails").

The fetching and the clock are given, so the rules are tested without a network or a wait; the process keeps one
cache (`shared_cache`) whose fetches go through the outbound guard (service/identity/fetch.py).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import jwt
from jwt.exceptions import PyJWKError

from service import limits

#: The curve each ECDSA algorithm signs on; an RSA algorithm needs an RSA key, EdDSA an OKP one.
_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


class ProviderUnavailable(Exception):
    """No key set of this provider has ever been read, and reading it now failed: nothing can verify."""


@dataclass(frozen=True)
class ProviderKey:
    """One published key: its `kid`, its key type and curve, the `alg` it declares (if any) and the key itself."""

    kid: str
    kty: str
    crv: str | None
    alg: str | None
    key: Any

    def signs_with(self, alg: str) -> bool:
        """Whether this key can verify a signature made with `alg` (its type, its curve, its own `alg`)."""
        if self.alg is not None and self.alg != alg:
            return False
        if alg.startswith(("RS", "PS")):
            return self.kty == "RSA"
        if alg in _CURVES:
            return self.kty == "EC" and self.crv == _CURVES[alg]
        return alg == "EdDSA" and self.kty == "OKP" and self.crv in ("Ed25519", "Ed448")


def parse_key_set(document: dict[str, Any]) -> dict[str, ProviderKey]:
    """The signing keys of a JWKS document by `kid`: keys without a `kid`, for encryption, private or unreadable are
    left out, and at most MAX_PROVIDER_KEYS are read."""
    keys: dict[str, ProviderKey] = {}
    entries = document.get("keys")
    if not isinstance(entries, list):
        return keys
    for entry in entries[: limits.MAX_PROVIDER_KEYS]:
        if not isinstance(entry, dict):
            continue
        kid, use = entry.get("kid"), entry.get("use", "sig")
        if not isinstance(kid, str) or not kid or len(kid) > 256 or use != "sig" or "d" in entry:
            continue
        try:
            parsed = jwt.PyJWK(entry)
        except (PyJWKError, ValueError, TypeError):
            continue
        alg = entry.get("alg")
        crv = entry.get("crv")
        keys[kid] = ProviderKey(kid=kid, kty=str(entry.get("kty")), crv=crv if isinstance(crv, str) else None,
                                alg=alg if isinstance(alg, str) else None, key=parsed.key)
    return keys


@dataclass
class _Entry:
    keys: dict[str, ProviderKey] = field(default_factory=dict)
    #: When keys were last read successfully, and when a read was last tried (either way); None: never.
    fetched_at: float | None = None
    tried_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class KeySetCache:
    """Key sets by `jwks_uri`. `fetch(uri)` returns the JWKS document or raises; `clock()` is monotonic seconds."""

    def __init__(self, fetch: Callable[[str], dict[str, Any]], clock: Callable[[], float] = time.monotonic, *,
                 lifetime: float = limits.PROVIDER_KEY_SET_LIFETIME_SECONDS,
                 cooldown: float = limits.PROVIDER_KEY_SET_COOLDOWN_SECONDS) -> None:
        self._fetch = fetch
        self._clock = clock
        self.lifetime = lifetime
        self.cooldown = cooldown
        self._entries: dict[str, _Entry] = {}
        self._guard = threading.Lock()

    def key(self, jwks_uri: str, kid: str) -> ProviderKey | None:
        """The published key named `kid`, or None when the provider has not published it. Raises
        ProviderUnavailable when no key set was ever read and it cannot be read now."""
        entry = self._entry(jwks_uri)
        with entry.lock:  # one fetch at a time per key set: those waiting see its keys, or its cooldown
            now = self._clock()
            stale = entry.fetched_at is None or now - entry.fetched_at >= self.lifetime
            if (stale or kid not in entry.keys) and self._may_try(entry, now):
                self._refresh(jwks_uri, entry, now)
            if entry.fetched_at is None:
                raise ProviderUnavailable(jwks_uri)
            return entry.keys.get(kid)

    def prime(self, jwks_uri: str, document: dict[str, Any]) -> None:
        """Take a key set just read (when a provider is added) as if this cache had fetched it."""
        entry = self._entry(jwks_uri)
        with entry.lock:
            now = self._clock()
            entry.keys, entry.fetched_at, entry.tried_at = parse_key_set(document), now, now

    def forget(self, jwks_uri: str) -> None:
        """Drop a key set (its provider was removed or changed)."""
        with self._guard:
            self._entries.pop(jwks_uri, None)

    def _entry(self, jwks_uri: str) -> _Entry:
        with self._guard:
            entry = self._entries.get(jwks_uri)
            if entry is None:
                entry = self._entries[jwks_uri] = _Entry()
            return entry

    def _may_try(self, entry: _Entry, now: float) -> bool:
        return entry.tried_at is None or now - entry.tried_at >= self.cooldown

    def _refresh(self, jwks_uri: str, entry: _Entry, now: float) -> None:
        entry.tried_at = now
        try:
            document = self._fetch(jwks_uri)
        except Exception:  # any failure to read keeps what was cached (the provider may be down)
            return
        entry.keys, entry.fetched_at = parse_key_set(document), self._clock()
