"""An issuer's public keys: fetched from `{iss}/.well-known/jwks.json`, cached, never trusted blindly.

The rules a JWKS client should keep (RFC 8725 and pyjwt's own `PyJWKClient` advice):
- cache the key set with a lifetime, so every call does not hit the key server;
- on a `kid` the cache does not know, refetch at most once per cooldown, so a stream of tokens
  with made-up key ids cannot turn this backend into a flood against the key server;
- cap the size of the response, and bound the whole fetch in time;
- when the key server fails, keep verifying with the keys already cached.

A key is usable only with the algorithm its JWK names (`alg`), and only if that algorithm is one
this backend pins; the token's header never chooses it.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gevent
import jwt
import requests
from cryptography.hazmat.primitives import serialization

log = logging.getLogger("mock_backend.jwks")

#: The signature algorithms this backend accepts, each tied to the key type that carries it.
PINNED_ALGORITHMS = ("ES256", "EdDSA", "RS256")

#: How long a fetched key set is used before it is fetched again (the platform serves the JWKS
#: with `Cache-Control: max-age=300`).
CACHE_LIFETIME_SECONDS = 300.0

#: At most one fetch per this many seconds, however many unknown `kid`s arrive.
REFETCH_COOLDOWN_SECONDS = 10.0

#: A JWKS larger than this is refused: a handful of keys fits in a few KiB.
MAX_JWKS_BYTES = 64 * 1024

#: The whole fetch (connect, headers, body) must finish within this.
FETCH_TIMEOUT_SECONDS = 5.0

#: A fetcher takes the JWKS address and returns the parsed document, or raises.
Fetcher = Callable[[str], Any]


class JwksUnavailable(Exception):
    """The key server could not be reached, or answered something that is not a usable JWKS."""


def jwks_url(issuer: str) -> str:
    """Where an issuer publishes its keys."""
    return f"{issuer}/.well-known/jwks.json"


def fetch_jwks(url: str) -> Any:
    """GET a JWKS document: no proxies from the environment, no redirects, size and time capped."""
    chunks: list[bytes] = []
    size = 0
    # requests' timeout bounds each socket read, not the call; the gevent timeout bounds the call.
    with gevent.Timeout(FETCH_TIMEOUT_SECONDS, JwksUnavailable(f"{url}: timed out")):
        with requests.Session() as session:
            session.trust_env = False
            with session.get(url, timeout=FETCH_TIMEOUT_SECONDS, stream=True,
                             allow_redirects=False) as response:
                if response.status_code != 200:
                    raise JwksUnavailable(f"{url}: HTTP {response.status_code}")
                for chunk in response.iter_content(8192):
                    size += len(chunk)
                    if size > MAX_JWKS_BYTES:
                        raise JwksUnavailable(f"{url}: larger than {MAX_JWKS_BYTES} bytes")
                    chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except ValueError as error:
        raise JwksUnavailable(f"{url}: not JSON") from error


@dataclass(frozen=True)
class TrustedKey:
    """One public key from an issuer's JWKS, with the one algorithm it may verify."""

    kid: str
    alg: str
    key: Any = field(repr=False)

    def public_pem(self) -> bytes:
        """SubjectPublicKeyInfo PEM of the key (only the broken `accept-hs256` mode uses it)."""
        return self.key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def parse_jwks(document: Any) -> dict[str, TrustedKey]:
    """The usable keys of a JWKS by `kid`; keys without a kid, a pinned alg or a sound body are skipped."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise JwksUnavailable("not a JWKS: no 'keys' list")
    keys: dict[str, TrustedKey] = {}
    for jwk in document["keys"]:
        if not isinstance(jwk, dict):
            continue
        kid, alg = jwk.get("kid"), jwk.get("alg")
        if not isinstance(kid, str) or alg not in PINNED_ALGORITHMS or jwk.get("use", "sig") != "sig":
            continue
        try:
            # PyJWK refuses a key whose type does not fit the algorithm (an RSA key named ES256).
            keys[kid] = TrustedKey(kid, alg, jwt.PyJWK(jwk, algorithm=alg).key)
        except jwt.PyJWTError as error:
            log.warning("skipping JWK %r: %s", kid, error)
    return keys


class IssuerKeys:
    """The cached key set of one issuer."""

    def __init__(self, issuer: str, fetcher: Fetcher | None = None, *,
                 lifetime: float = CACHE_LIFETIME_SECONDS, cooldown: float = REFETCH_COOLDOWN_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.issuer = issuer
        self._fetch = fetcher or fetch_jwks
        self._lifetime = lifetime
        self._cooldown = cooldown
        self._clock = clock
        self._keys: dict[str, TrustedKey] = {}
        self._fetched_at: float | None = None  # last successful fetch
        self._tried_at: float | None = None  # last attempt, successful or not
        # One fetch at a time: callers arriving during a fetch wait for its keys instead of
        # finding the cooldown running and an empty cache.
        self._lock = threading.Lock()

    def get(self, kid: str) -> TrustedKey | None:
        """The key named `kid`, refetching once (cooldown permitting) when it is not cached."""
        with self._lock:
            if self._stale():
                self._refresh()
            if kid not in self._keys:
                self._refresh()
            return self._keys.get(kid)

    def all(self) -> list[TrustedKey]:
        """Every cached key (fetching if the cache is stale)."""
        with self._lock:
            if self._stale():
                self._refresh()
            return list(self._keys.values())

    def _stale(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= self._lifetime

    def _refresh(self) -> None:
        now = self._clock()
        if self._tried_at is not None and now - self._tried_at < self._cooldown:
            return
        self._tried_at = now
        try:
            self._keys = parse_jwks(self._fetch(jwks_url(self.issuer)))
            self._fetched_at = now
        except Exception as error:  # any failure of the key server: keep the keys we have
            log.warning("JWKS of %s unavailable, keeping %d cached keys: %s",
                        self.issuer, len(self._keys), error)
