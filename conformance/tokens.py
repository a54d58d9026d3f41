"""Signing as the platform signs, and forging as an attacker would.

`SigningKey` is a key of one of the algorithms an organization may sign with (ES256, the default;
EdDSA; RS256), with its `kid` (the RFC 7638 thumbprint) and its public JWK, both as the platform
writes them (service/keys: a P-256, Ed25519 or 2048-bit RSA key; JWK members `kid`, `alg`, `use`,
then the key's own). The call assertion it signs has the contract's shape: header `alg`, `kid`,
`typ: "JWT"`; claims `iss`, `aud` (the tool's name), `sub`, `anon`, `turn`, `iat`, `exp` = `iat` +
30, `jti`.

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
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

from conformance.limits import ASSERTION_LIFETIME_SECONDS

#: The algorithms an organization may sign with (`toolgate org create --algorithm`), the default first.
ALGORITHMS = ("ES256", "EdDSA", "RS256")
ALGORITHM = ALGORITHMS[0]

#: RS256 keys are made this size, as the platform makes them.
RSA_KEY_BITS = 2048

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


def _uint(number: int, length: int | None = None) -> str:
    """An unsigned integer as JWK writes it: `length` octets, or as few as it takes (RFC 7518 §6.3.1)."""
    return b64url(number.to_bytes(length or (number.bit_length() + 7) // 8, "big"))


PrivateKey = Any  # ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey


def _new_private(alg: str) -> PrivateKey:
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    if alg == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)
    raise ValueError(f"not an algorithm an organization signs with: {alg!r} (one of {', '.join(ALGORITHMS)})")


def algorithm_of(private: Any) -> str:
    """The algorithm a private key signs with, as the platform pairs them; ValueError for any other key."""
    if isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp256r1":
        return "ES256"
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    if isinstance(private, rsa.RSAPrivateKey) and private.key_size >= RSA_KEY_BITS:
        return "RS256"
    raise ValueError(f"not a key an organization signs with (EC P-256, Ed25519, or RSA of at least "
                     f"{RSA_KEY_BITS} bits)")


def key_members(public: Any) -> dict[str, str]:
    """The public key as the JWK members RFC 7638 requires, in that RFC's (lexical) order."""
    if isinstance(public, ec.EllipticCurvePublicKey):
        numbers = public.public_numbers()
        return {"crv": "P-256", "kty": "EC", "x": _uint(numbers.x, 32), "y": _uint(numbers.y, 32)}
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw)}
    numbers = public.public_numbers()
    return {"e": _uint(numbers.e), "kty": "RSA", "n": _uint(numbers.n)}


@dataclass(frozen=True)
class SigningKey:
    """A key pair of one of `ALGORITHMS`, and the `kid` under which its public half is published."""

    private: PrivateKey = field(repr=False)
    kid: str
    alg: str = ALGORITHM

    @classmethod
    def generate(cls, alg: str = ALGORITHM) -> SigningKey:
        """A fresh random key for `alg` (ValueError for an algorithm not in ALGORITHMS)."""
        private = _new_private(alg)
        return cls(private, _thumbprint(private.public_key()), alg)

    @classmethod
    def from_pem(cls, pem: bytes, alg: str | None = None) -> SigningKey:
        """A key read back from `to_pem`; ValueError unless it is a key of one of ALGORITHMS (of `alg`, if given)."""
        private = serialization.load_pem_private_key(pem, password=None)
        found = algorithm_of(private)
        if alg is not None and found != alg:
            raise ValueError(f"it holds an {found} key, not an {alg} one")
        return cls(private, _thumbprint(private.public_key()), found)

    def to_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM: a throwaway test key, kept only to reuse."""
        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWKS entry, as the platform writes one: `kid`, `alg`, `use: "sig"`, the key's members."""
        return {"kid": self.kid, "alg": self.alg, "use": "sig", **key_members(self.private.public_key())}

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
            # Ed25519 hashes within its signature, so it takes no hash here.
            .sign(self.private, None if self.alg == "EdDSA" else hashes.SHA256())
        )
        return certificate.public_bytes(serialization.Encoding.PEM)

    def sign(
        self, claims: dict[str, Any], *, kid: str | None = None, headers: dict[str, Any] | None = None,
        alg: str | None = None,
    ) -> str:
        """A correctly signed token in the key's algorithm; `kid`, `headers` and `alg` (another algorithm the key can
        make, such as PS256 for an RSA key) alter it, for forgeries.

        `headers={"typ": None}` leaves `typ` out altogether (pyjwt drops an empty one).
        """
        header = {"kid": self.kid if kid is None else kid, "typ": ASSERTION_TYPE, **(headers or {})}
        return jwt.encode(claims, self.private, algorithm=alg or self.alg, headers=header)

    def sign_raw(self, header: dict[str, Any], claims: dict[str, Any], hash_name: str | None = None) -> str:
        """A token whose header is exactly `header`, signed by this key as the header's `alg` cannot say: an ECDSA
        signature over SHA-384 or SHA-512 by a P-256 key (`hash_name`), or Ed25519's under another name.

        Older pyjwt verified an ES384 header with whatever EC key it was handed; these are what it would take."""
        signing_input = _signing_input(header, claims).encode("ascii")
        if isinstance(self.private, ed25519.Ed25519PrivateKey):
            return compact(header, claims, self.private.sign(signing_input))
        if not isinstance(self.private, ec.EllipticCurvePrivateKey) or hash_name not in ("sha384", "sha512"):
            raise ValueError("sign_raw makes Ed25519 signatures, or ECDSA ones over SHA-384 or SHA-512")
        digest = hashes.SHA384() if hash_name == "sha384" else hashes.SHA512()
        r, s = decode_dss_signature(self.private.sign(signing_input, ec.ECDSA(digest)))
        return compact(header, claims, r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def _thumbprint(public: Any) -> str:
    """RFC 7638: SHA-256 over the required members in lexical order, no whitespace."""
    return b64url(hashlib.sha256(_json(key_members(public))).digest())


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
