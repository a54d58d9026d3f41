"""A small OpenID provider of the tests' own, served for real on loopback: its discovery document and key set, each
fetch counted, its keys and its availability set by the test, and tokens signed as a provider would sign them.

The end-to-end tests use a real one (oidc-provider, tests/identity/openid_provider.py); this one lets a test choose
every header and claim, count fetches, and take the provider down.
"""
from __future__ import annotations

import contextlib
import json
import time
from typing import Any, Iterator

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from gevent.pywsgi import WSGIServer

from tests.support.constants import LOOPBACK

AUDIENCE = "https://tools.example/api"


def _public_jwk(key, kid: str, alg: str) -> dict[str, Any]:
    algorithm = jwt.get_algorithm_by_name(alg)
    jwk = json.loads(algorithm.to_jwk(key.public_key()))
    return {**jwk, "kid": kid, "alg": alg, "use": "sig"}


class StubProvider:
    """The provider at `issuer`: `fetches` counts requests by path; `down` makes every request a 503."""

    #: Keys made once per run (an RSA key takes a tenth of a second): a test wanting keys of its own rotates one in.
    _made: dict[str, Any] = {}

    def __init__(self, own_keys: bool = False) -> None:
        if own_keys or not self._made:
            made = {"rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
                    "ec": ec.generate_private_key(ec.SECP256R1())}
            if not self._made:
                StubProvider._made = made
        else:
            made = self._made
        self.rsa, self.ec = made["rsa"], made["ec"]
        self.keys = {"rsa-1": (self.rsa, "RS256"), "ec-1": (self.ec, "ES256")}
        self.published = ["rsa-1", "ec-1"]
        self.fetches: dict[str, int] = {}
        self.down = False
        self.server = WSGIServer((LOOPBACK, 0), self._app, log=None)
        self.server.start()
        self.issuer = f"http://{LOOPBACK}:{self.server.server_port}"

    def _app(self, environ, start_response):
        path = environ["PATH_INFO"]
        self.fetches[path] = self.fetches.get(path, 0) + 1
        if self.down:
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"down"]
        if path == "/.well-known/openid-configuration":
            body: dict[str, Any] = {"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks",
                                    "token_endpoint": f"{self.issuer}/token"}
        elif path == "/jwks":
            body = {"keys": [_public_jwk(self.keys[kid][0], kid, self.keys[kid][1]) for kid in self.published]}
        else:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]

    @property
    def key_set_fetches(self) -> int:
        return self.fetches.get("/jwks", 0)

    def rotate_in(self, kid: str = "rsa-2") -> str:
        """A new RSA key the provider now publishes beside the others."""
        self.keys[kid] = (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")
        self.published.append(kid)
        return kid

    def token(self, subject: str = "alice", *, kid: str = "rsa-1", alg: str | None = None, typ: str = "at+jwt",
              audience: Any = AUDIENCE, issuer: str | None = None, lifetime: int = 600, issued_at: float | None = None,
              scope: Any = "orders:read cart:write", drop: tuple[str, ...] = (), headers: dict | None = None,
              **claims) -> str:
        """A token as this provider signs one; every part can be chosen, `drop` leaves claims out."""
        key, key_alg = self.keys.get(kid, (self.rsa, "RS256"))
        now = int(time.time() if issued_at is None else issued_at)
        payload = {"iss": issuer or self.issuer, "aud": audience, "sub": subject, "iat": now, "exp": now + lifetime,
                   "scope": scope, "jti": f"jti-{time.monotonic_ns()}", **claims}
        for name in drop:
            payload.pop(name, None)
        header = {"typ": typ, "kid": kid, **(headers or {})}
        return jwt.encode(payload, key, algorithm=alg or key_alg, headers=header)

    def settings(self, **overrides) -> dict[str, Any]:
        """A PUT body trusting this provider for AUDIENCE."""
        return {"issuer": self.issuer, "audience": AUDIENCE, "algorithms": ["RS256", "ES256"], **overrides}

    def close(self) -> None:
        self.server.stop(timeout=0.1)


@contextlib.contextmanager
def stub_provider() -> Iterator[StubProvider]:
    provider = StubProvider()
    try:
        yield provider
    finally:
        provider.close()

