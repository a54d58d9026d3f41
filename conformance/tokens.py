"""Signing as the platform signs, and forging as an attacker would.

`SigningKey` is an ES256 key with its `kid` (the RFC 7638 thumbprint) and its public JWK. The
call assertion it signs has the contract's shape: header `alg` ES256, `kid`, `typ: "JWT"`;
claims `iss`, `aud` (the tool's name), `sub`, `anon`, `turn`, `iat`, `exp` = `iat` + 30, `jti`.

The forgeries pyjwt refuses to make (`alg: none`, HS256 keyed with a public key PEM, a payload
swapped after signing) are assembled here by hand from the compact serialization.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conformance.limits import ASSERTION_LIFETIME_SECONDS

ALGORITHM = "ES256"

#: The `typ` header of a call assertion (CONTRACT: header `typ: "JWT"`).
ASSERTION_TYPE = "JWT"

#: The `typ` header of the platform's session tokens: an endpoint must never take one for an
#: assertion (THREATS: "different `aud`, and a distinct `typ`").
SESSION_TOKEN_TYPE = "toolgate-session+jwt"

#: The claim an approved call's assertion carries besides the usual ones: the id of the person's approval
#: (docs/approvals.md), so a backend can refuse a consequential call that arrives without one.
APPROVAL_CLAIM = "approval"


def b64url(data: bytes) -> str:
    """Base64url without padding, as JWS uses."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _signing_input(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """The part of a compact JWS its signature covers: `header.payload`."""
    return f"{b64url(_json(header))}.{b64url(_json(claims))}"


def compact(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A JWS compact serialization from its parts; with no signature, an unsecured JWS."""
    return f"{_signing_input(header, claims)}.{b64url(signature)}"


def hs256(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    """An HS256 token keyed with any bytes at all, which pyjwt rightly refuses when they are a PEM."""
    header = {**header, "alg": "HS256"}
    mac = hmac.new(secret, _signing_input(header, claims).encode("ascii"), hashlib.sha256)
    return compact(header, claims, mac.digest())


def with_payload(token: str, claims: dict[str, Any]) -> str:
    """The same header and signature around a different payload: tampering after signing."""
    header, _, signature = token.split(".")
    return f"{header}.{b64url(_json(claims))}.{signature}"


def _uint(number: int) -> str:
    return b64url(number.to_bytes(32, "big"))


@dataclass(frozen=True)
class SigningKey:
    """An ES256 (P-256) key pair and the `kid` under which its public half is published."""

    private: ec.EllipticCurvePrivateKey = field(repr=False)
    kid: str

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh random key."""
        private = ec.generate_private_key(ec.SECP256R1())
        return cls(private, _thumbprint(private.public_key()))

    @classmethod
    def from_pem(cls, pem: bytes) -> SigningKey:
        """A key read back from `to_pem`; ValueError unless it is a P-256 private key."""
        private = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(private, ec.EllipticCurvePrivateKey) or private.curve.name != "secp256r1":
            raise ValueError("not an EC P-256 private key")
        return cls(private, _thumbprint(private.public_key()))

    def to_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM: a throwaway test key, kept only to reuse."""
        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWKS entry: `kid`, `alg`, `use: "sig"`, as the contract says."""
        numbers = self.private.public_key().public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": _uint(numbers.x), "y": _uint(numbers.y),
                "kid": self.kid, "alg": ALGORITHM, "use": "sig"}

    def public_pem(self) -> bytes:
        """The public key as SubjectPublicKeyInfo PEM: what an HS256 confusion attack keys with."""
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def certificate_pem(self) -> bytes:
        """A self-signed X.509 certificate for the public key: what an `x5u` header points to."""
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"conformance kit {self.kid[:8]}")])
        now = datetime.datetime.now(datetime.timezone.utc)
        certificate = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(self.private.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(self.private, hashes.SHA256())
        )
        return certificate.public_bytes(serialization.Encoding.PEM)

    def sign(
        self, claims: dict[str, Any], *, kid: str | None = None, headers: dict[str, Any] | None = None
    ) -> str:
        """A correctly signed ES256 token; `kid` and `headers` alter the header (for forgeries).

        `headers={"typ": None}` leaves `typ` out altogether (pyjwt drops an empty one).
        """
        header = {"kid": self.kid if kid is None else kid, "typ": ASSERTION_TYPE, **(headers or {})}
        return jwt.encode(claims, self.private, algorithm=ALGORITHM, headers=header)


def _thumbprint(public: ec.EllipticCurvePublicKey) -> str:
    """RFC 7638: SHA-256 over the required members in lexical order, no whitespace."""
    numbers = public.public_numbers()
    members = {"crv": "P-256", "kty": "EC", "x": _uint(numbers.x), "y": _uint(numbers.y)}
    return b64url(hashlib.sha256(_json(members)).digest())


def assertion_claims(issuer: str, tool: str, subject: str, now: int | None = None,
                     approved: bool = False) -> dict[str, Any]:
    """The claims of a fresh call assertion, as the platform mints one for one tool call; `approved`, as it mints
    one for a call the person approved (an `approval` claim with a new random id, as each approval has)."""
    issued = int(time.time()) if now is None else now
    claims = {
        "iss": issuer,
        "aud": tool,
        "sub": subject,
        "anon": False,
        # A turn is a random identifier shared by the calls of one model turn, not a counter.
        "turn": secrets.token_hex(16),
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME_SECONDS,
        "jti": str(uuid.uuid4()),
    }
    if approved:
        claims[APPROVAL_CLAIM] = secrets.token_urlsafe(16)
    return claims
