"""The per-algorithm facts: thumbprints and signatures against the RFCs' own vectors, key checks."""
from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from service.keys import ALGORITHMS, DEFAULT_ALGORITHM, jwk_thumbprint
from service.keys.algorithms import (
    check_private_key,
    generate_private_key,
    public_key_members,
    sign,
)
from tests.keys.vectors import RFC8037_A1_ED25519_D, b64url_decode, b64url_encode, fixed_key

# RFC 7638 §3.1: the example RSA key and its thumbprint.
RFC7638_N = (
    "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKR"
    "XjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAt"
    "aSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPk"
    "sINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
)
RFC7638_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
# RFC 8037 A.3 (thumbprint of the A.1 key) and A.4 (its signature over "Example of Ed25519 signing").
RFC8037_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
RFC8037_SIGNING_INPUT = b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
RFC8037_SIGNATURE = (
    "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
)


def test_algorithms_and_default():
    assert ALGORITHMS == ("ES256", "EdDSA", "RS256")
    assert DEFAULT_ALGORITHM == "ES256"


def test_thumbprint_matches_rfc7638_example():
    n = int.from_bytes(b64url_decode(RFC7638_N), "big")
    public_key = rsa.RSAPublicNumbers(e=65537, n=n).public_key()
    assert public_key_members(public_key) == {"e": "AQAB", "kty": "RSA", "n": RFC7638_N}
    assert jwk_thumbprint(public_key) == RFC7638_THUMBPRINT


def test_thumbprint_matches_rfc8037_example():
    private_key = ed25519.Ed25519PrivateKey.from_private_bytes(b64url_decode(RFC8037_A1_ED25519_D))
    assert jwk_thumbprint(private_key.public_key()) == RFC8037_THUMBPRINT


def test_ed25519_signature_matches_rfc8037_example():
    key = fixed_key("EdDSA")
    assert b64url_encode(sign("EdDSA", key.private_key, RFC8037_SIGNING_INPUT)) == RFC8037_SIGNATURE


def test_es256_signature_is_raw_r_and_s_that_verifies():
    key = fixed_key("ES256")
    signature = sign("ES256", key.private_key, b"header.payload")
    assert len(signature) == 64  # RFC 7518 §3.4: R || S, 32 octets each, not DER
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    key.public_key.verify(der, b"header.payload", ec.ECDSA(hashes.SHA256()))


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_generated_key_fits_its_algorithm(alg):
    private_key = generate_private_key(alg)
    check_private_key(alg, private_key)
    if alg == "RS256":
        assert private_key.key_size == 2048
    assert generate_private_key(alg) is not private_key


@pytest.mark.parametrize("alg", ["none", "HS256", "ES384", "Ed25519", "es256", ""])
def test_unknown_algorithm_is_refused(alg):
    with pytest.raises(ValueError, match="choose one of ES256, EdDSA, RS256"):
        generate_private_key(alg)


@pytest.mark.parametrize(
    "alg, make",
    [
        ("ES256", lambda: ec.generate_private_key(ec.SECP384R1())),
        ("ES256", ed25519.Ed25519PrivateKey.generate),
        ("EdDSA", lambda: ec.generate_private_key(ec.SECP256R1())),
        ("RS256", lambda: rsa.generate_private_key(public_exponent=65537, key_size=1024)),
        ("RS256", lambda: b"-----BEGIN PRIVATE KEY-----"),
    ],
    ids=["es256-p384", "es256-ed25519", "eddsa-p256", "rs256-1024", "rs256-pem-text"],
)
def test_key_of_another_kind_is_refused(alg, make):
    with pytest.raises(ValueError, match=f"not a key for {alg}"):
        check_private_key(alg, make())


def test_public_key_members_hold_no_private_member(any_fixed_key):
    members = public_key_members(any_fixed_key.public_key)
    assert set(members) in ({"crv", "kty", "x", "y"}, {"crv", "kty", "x"}, {"e", "kty", "n"})
    assert list(members) == sorted(members)  # RFC 7638's lexicographic order
