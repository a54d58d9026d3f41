"""Fixtures for the mock backend: real keys, a real JWKS server, tokens minted as the platform does.

Everything listens on 127.0.0.1 on ephemeral ports and is stopped when its test ends.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from gevent.pywsgi import WSGIServer

from mock_backend import create_app
from mock_backend.limits import ASSERTION_LIFETIME_SECONDS
from mock_backend.server import make_server


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class SigningKey:
    """A private key, the algorithm it signs with and the kid its public half is published under."""

    alg: str
    kid: str
    private: Any = field(repr=False)

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        return {**algorithm.to_jwk(self.private.public_key(), as_dict=True),
                "kid": self.kid, "alg": self.alg, "use": "sig"}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def generate_key(alg: str, kid: str) -> SigningKey:
    private = {
        "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
        "EdDSA": ed25519.Ed25519PrivateKey.generate,
        "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    }[alg]()
    return SigningKey(alg, kid, private)


@pytest.fixture(scope="session")
def org_keys() -> dict[str, SigningKey]:
    """The organization's keys, one per pinned algorithm."""
    return {alg: generate_key(alg, f"{alg.lower()}-1") for alg in ("ES256", "EdDSA", "RS256")}


@pytest.fixture(scope="session")
def attacker_key() -> SigningKey:
    """A key nobody trusts, under a kid the organization does not publish."""
    return generate_key("ES256", "attacker-1")


class KeyServer:
    """A tiny real JWKS server: serves each issuer's key set, counts fetches, can fail on demand."""

    def __init__(self) -> None:
        self.documents: dict[str, Any] = {}
        self.raw: dict[str, bytes] = {}
        self.hits = 0
        self.status = 200  # what it answers; set to 503 to take it "down"
        self._server = WSGIServer(("127.0.0.1", 0), self._app, log=None)
        self._server.start()
        self.base = f"http://127.0.0.1:{self._server.server_port}"

    def issuer(self, slug: str) -> str:
        return f"{self.base}/orgs/{slug}"

    def publish(self, issuer: str, jwks: list[dict[str, Any]]) -> None:
        self.documents[issuer[len(self.base):] + "/.well-known/jwks.json"] = {"keys": jwks}

    def publish_raw(self, issuer: str, body: bytes) -> None:
        self.raw[issuer[len(self.base):] + "/.well-known/jwks.json"] = body

    def stop(self) -> None:
        self._server.stop(timeout=1)

    def _app(self, environ, start_response):
        self.hits += 1
        path = environ["PATH_INFO"]
        if self.status != 200:
            start_response(f"{self.status} Unavailable", [("Content-Type", "text/plain")])
            return [b"down"]
        if path in self.raw:
            body = self.raw[path]
        elif path in self.documents:
            body = json.dumps(self.documents[path]).encode()
        else:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"no such issuer"]
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


@pytest.fixture
def key_server():
    server = KeyServer()
    yield server
    server.stop()


class Harness:
    """The trusted issuer (publishing `keys`), an attacker's issuer, and a token minter."""

    def __init__(self, key_server: KeyServer, keys: dict[str, SigningKey], attacker: SigningKey) -> None:
        self.key_server = key_server
        self.keys = keys
        self.attacker = attacker
        self.issuer = key_server.issuer("acme")
        self.evil_issuer = key_server.issuer("evil")
        key_server.publish(self.issuer, [key.jwk() for key in keys.values()])
        key_server.publish(self.evil_issuer, [attacker.jwk()])

    def claims(self, tool: str = "get_orders", **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": tool, "sub": "alice", "anon": False,
                  "turn": secrets.token_hex(16), "iat": now, "exp": now + ASSERTION_LIFETIME_SECONDS, "jti": str(uuid.uuid4())}
        claims.update(overrides)
        return claims

    def token(self, tool: str = "get_orders", *, key: SigningKey | None = None, alg: str | None = None,
              headers: dict[str, Any] | None = None, drop: tuple[str, ...] = (), **overrides: Any) -> str:
        """A token signed as the platform signs (ES256 by default), with any claim overridden."""
        key = key or self.keys[alg or "ES256"]
        claims = {k: v for k, v in self.claims(tool, **overrides).items() if k not in drop}
        return jwt.encode(claims, key.private, algorithm=key.alg,
                          headers={"kid": key.kid, "typ": "JWT", **(headers or {})})

    def forged(self, tool: str = "get_orders", *, alg: str = "none", secret: bytes | None = None,
               kid: str | None = "es256-1", **overrides: Any) -> str:
        """A token pyjwt refuses to make: unsigned (`alg: none`), or HMAC-signed with `secret`."""
        header = {"alg": alg, "typ": "JWT", **({"kid": kid} if kid else {})}
        signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(self.claims(tool, **overrides)).encode())}"
        signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest() if secret else b""
        return f"{signing_input}.{b64url(signature)}"

    def tampered(self, token: str, **overrides: Any) -> str:
        """The same header and signature around a changed payload."""
        header, payload, signature = token.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return f"{header}.{b64url(json.dumps({**claims, **overrides}).encode())}.{signature}"

    def auth(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def bearer(self, tool: str = "get_orders", **kwargs: Any) -> dict[str, str]:
        return self.auth(self.token(tool, **kwargs))

    def app(self, broken: str | None = None, issuers: list[str] | None = None):
        return create_app(issuers or [self.issuer], broken=broken)


@pytest.fixture
def harness(key_server, org_keys, attacker_key) -> Harness:
    return Harness(key_server, org_keys, attacker_key)


@pytest.fixture
def mock_client(harness):
    """A Flask test client of a strict mock (where HTTP itself is not the point)."""
    return harness.app().test_client()


@pytest.fixture
def serve():
    """Start apps on real sockets: `serve(app)` returns the base URL; all stop at teardown."""
    servers = []

    def start(app) -> str:
        server = make_server(app, "127.0.0.1", 0, log=None)
        server.start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.stop(timeout=1)


@pytest.fixture
def live(harness, serve) -> str:
    """The base URL of a strict mock on a real socket."""
    return serve(harness.app())


@pytest.fixture
def http():
    """A requests session that ignores proxy settings from the environment (all traffic is local)."""
    with requests.Session() as session:
        session.trust_env = False
        yield session
