"""What each signing algorithm is: its key type, how a key is made, its public JWK and its signer.

Everything that differs between ES256, EdDSA and RS256 lives here, so the rest of the package
works with any of them without asking which one it holds.
"""
from __future__ import annotations

import base64
import hashlib
import json
from typing import Union

from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from jwt.algorithms import Algorithm, get_default_algorithms

#: The algorithms an organization may sign with, ES256 first because it is the default.
ALGORITHMS: tuple[str, ...] = ("ES256", "EdDSA", "RS256")

#: What a new organization signs with (the contract: "header `alg` (ES256 by default)").
DEFAULT_ALGORITHM = "ES256"

#: RS256 keys are made this size and refused below it (NIST SP 800-131A).
RSA_KEY_BITS = 2048

PrivateKey = Union[ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey, rsa.RSAPrivateKey]
PublicKey = Union[ec.EllipticCurvePublicKey, ed25519.Ed25519PublicKey, rsa.RSAPublicKey]

# pyjwt's signer objects, looked up once: they hold no key, so one per algorithm serves every
# key and every call. Signing through them keeps pyjwt's JOSE encodings (raw r||s for ECDSA).
_SIGNERS: dict[str, Algorithm] = {alg: get_default_algorithms()[alg] for alg in ALGORITHMS}


def check_algorithm(alg: str) -> str:
    """Return `alg` if it is one the platform signs with, else raise ValueError naming the choices."""
    if alg not in ALGORITHMS:
        raise ValueError(f"Unknown signing algorithm {alg!r}: choose one of {', '.join(ALGORITHMS)}.")
    return alg


def generate_private_key(alg: str) -> PrivateKey:
    """A fresh private key for `alg`: P-256 for ES256, Ed25519 for EdDSA, 2048-bit RSA for RS256."""
    check_algorithm(alg)
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)


def check_private_key(alg: str, private_key: object) -> PrivateKey:
    """`private_key`, known to be the kind of key `alg` signs with; ValueError if it is not."""
    check_algorithm(alg)
    if alg == "ES256":
        if isinstance(private_key, ec.EllipticCurvePrivateKey) and isinstance(private_key.curve, ec.SECP256R1):
            return private_key
    elif alg == "EdDSA":
        if isinstance(private_key, ed25519.Ed25519PrivateKey):
            return private_key
    elif isinstance(private_key, rsa.RSAPrivateKey) and private_key.key_size >= RSA_KEY_BITS:
        return private_key
    raise ValueError(f"The private key is not a key for {alg}.")


def sign(alg: str, private_key: PrivateKey, signing_input: bytes) -> bytes:
    """The JWS signature of `signing_input`, in the encoding JOSE expects for `alg`."""
    return _SIGNERS[alg].sign(signing_input, private_key)


def b64url(data: bytes) -> bytes:
    """Base64url without padding, as JOSE writes every segment and key member."""
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _uint(value: int, length: int) -> str:
    return b64url(value.to_bytes(length, "big")).decode("ascii")


def public_key_members(public_key: PublicKey) -> dict[str, str]:
    """The public key as the JWK members RFC 7638 requires, and nothing else, in that RFC's order.

    These are also exactly what a JWKS entry carries as key material.
    """
    if isinstance(public_key, ec.EllipticCurvePublicKey) and isinstance(public_key.curve, ec.SECP256R1):
        point = public_key.public_numbers()
        size = (public_key.curve.key_size + 7) // 8
        return {"crv": "P-256", "kty": "EC", "x": _uint(point.x, size), "y": _uint(point.y, size)}
    if isinstance(public_key, ed25519.Ed25519PublicKey):
        raw = public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw).decode("ascii")}
    if isinstance(public_key, rsa.RSAPublicKey):
        numbers = public_key.public_numbers()
        # RFC 7518 §6.3.1: the unsigned integer in as few octets as it takes.
        return {
            "e": _uint(numbers.e, (numbers.e.bit_length() + 7) // 8),
            "kty": "RSA",
            "n": _uint(numbers.n, (numbers.n.bit_length() + 7) // 8),
        }
    raise ValueError("Not a public key of a supported algorithm.")


def jwk_thumbprint(public_key: PublicKey) -> str:
    """The RFC 7638 JWK thumbprint (SHA-256, base64url) of `public_key`."""
    members = public_key_members(public_key)
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return b64url(hashlib.sha256(canonical).digest()).decode("ascii")
