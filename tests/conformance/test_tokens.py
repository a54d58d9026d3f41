"""Signing as the platform does, and the forgeries pyjwt will not make."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json

import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from conformance.limits import ASSERTION_LIFETIME_SECONDS
from conformance.tokens import SESSION_TOKEN_TYPE, SigningKey, assertion_claims, compact, hs256, with_payload

# RFC 7515 appendix A.3: the ES256 example key. Its RFC 7638 thumbprint is the published
# vector oKIywvGU… (reproduced independently by several JOSE libraries).
RFC7515_D = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
RFC7515_X = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
RFC7515_Y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
RFC7515_THUMBPRINT = "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _rfc_key() -> SigningKey:
    private = ec.derive_private_key(int.from_bytes(_unb64(RFC7515_D), "big"), ec.SECP256R1())
    return SigningKey.from_pem(
        private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def test_the_public_jwk_and_kid_of_a_known_key():
    assert _rfc_key().public_jwk() == {
        "kty": "EC", "crv": "P-256", "x": RFC7515_X, "y": RFC7515_Y,
        "kid": RFC7515_THUMBPRINT, "alg": "ES256", "use": "sig",
    }


def test_a_key_survives_its_pem():
    key = SigningKey.generate()
    again = SigningKey.from_pem(key.to_pem())
    assert again.kid == key.kid
    assert again.public_jwk() == key.public_jwk()


def test_a_pem_of_a_key_no_organization_signs_with_is_refused():
    p384 = ec.generate_private_key(ec.SECP384R1())
    pem = p384.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    with pytest.raises(ValueError, match="not a key an organization signs with"):
        SigningKey.from_pem(pem)


def test_a_pem_of_another_algorithm_than_asked_is_refused_naming_both():
    rsa_key = SigningKey.generate("RS256")
    assert SigningKey.from_pem(rsa_key.to_pem()).alg == "RS256"
    with pytest.raises(ValueError, match="it holds an RS256 key, not an ES256 one"):
        SigningKey.from_pem(rsa_key.to_pem(), "ES256")


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256"])
def test_the_kits_key_set_and_tokens_look_as_the_platforms_do(alg):
    # The platform's own signing code, for the same private key: the same kid, JWK and header, byte for byte.
    from service.keys.compact import header_segment
    from service.keys.signing_key import public_jwk, signing_key_from_private

    key = SigningKey.generate(alg)
    platform = signing_key_from_private(key.private, alg, 1_700_000_000)
    assert key.public_jwk() == public_jwk(platform)
    assert list(key.public_jwk()) == list(public_jwk(platform))
    token = key.sign(assertion_claims("http://127.0.0.1:9", "get_orders", "alice"))
    assert token.split(".")[0] == header_segment(alg, platform.kid, "JWT").decode()
    assert jwt.decode(token, jwt.PyJWK(key.public_jwk()).key, algorithms=[alg], audience="get_orders")["sub"] == "alice"


@pytest.mark.parametrize("alg, digest", [("ES384", "sha384"), ("ES512", "sha512")])
def test_a_p256_key_signs_under_a_longer_hashs_name_which_pyjwt_refuses(alg, digest):
    key = SigningKey.generate("ES256")
    token = key.sign_raw({"alg": alg, "kid": key.kid, "typ": "JWT"}, {"a": 1}, digest)
    head, payload, signature = token.split(".")
    r, s = int.from_bytes(_unb64(signature)[:32], "big"), int.from_bytes(_unb64(signature)[32:], "big")
    hashed = hashes.SHA384() if digest == "sha384" else hashes.SHA512()
    key.private.public_key().verify(encode_dss_signature(r, s), f"{head}.{payload}".encode(), ec.ECDSA(hashed))
    with pytest.raises(jwt.InvalidKeyError):  # pyjwt 2.10+ checks the curve; older ones verified it
        jwt.decode(token, key.private.public_key(), algorithms=[alg])


def test_an_ed25519_key_signs_under_rfc_9864s_name():
    key = SigningKey.generate("EdDSA")
    token = key.sign_raw({"alg": "Ed25519", "kid": key.kid, "typ": "JWT"}, {"a": 1})
    head, payload, signature = token.split(".")
    key.private.public_key().verify(_unb64(signature), f"{head}.{payload}".encode())
    assert jwt.get_unverified_header(token)["alg"] == "Ed25519"


def test_a_signed_assertion_has_the_contracts_header_and_claims_and_verifies():
    key = SigningKey.generate()
    claims = assertion_claims("http://127.0.0.1:9", "get_orders", "alice", now=1_700_000_000)
    token = key.sign(claims)

    assert jwt.get_unverified_header(token) == {"alg": "ES256", "kid": key.kid, "typ": "JWT"}
    public = jwt.PyJWK(key.public_jwk()).key
    decoded = jwt.decode(token, public, algorithms=["ES256"], audience="get_orders",
                         options={"verify_exp": False})
    assert set(decoded) == {"iss", "aud", "sub", "anon", "turn", "iat", "exp", "jti"}
    assert decoded["iss"] == "http://127.0.0.1:9"
    assert (decoded["sub"], decoded["anon"]) == ("alice", False)
    assert decoded["exp"] - decoded["iat"] == ASSERTION_LIFETIME_SECONDS
    assert decoded["iat"] == 1_700_000_000


def test_turn_and_jti_are_fresh_for_every_assertion():
    first, second = (assertion_claims("i", "t", "s") for _ in range(2))
    assert first["turn"] != second["turn"]
    assert first["jti"] != second["jti"]


def test_pyjwt_refuses_the_hs256_confusion_so_the_kit_builds_it_by_hand():
    key = SigningKey.generate()
    claims = assertion_claims("i", "t", "s")
    with pytest.raises(jwt.InvalidKeyError):
        jwt.encode(claims, key.public_pem(), algorithm="HS256")

    token = hs256({"kid": key.kid, "typ": "JWT"}, claims, key.public_pem())

    head, payload, signature = token.split(".")
    assert json.loads(_unb64(head)) == {"alg": "HS256", "kid": key.kid, "typ": "JWT"}
    assert json.loads(_unb64(payload)) == claims
    expected = hmac.new(key.public_pem(), f"{head}.{payload}".encode(), hashlib.sha256).digest()
    assert _unb64(signature) == expected


def test_an_unsecured_token_has_an_empty_signature():
    token = compact({"alg": "none", "typ": "JWT"}, {"sub": "s"})
    head, payload, signature = token.split(".")
    assert signature == ""
    assert jwt.get_unverified_header(token)["alg"] == "none"


def test_a_tampered_token_keeps_header_and_signature_and_no_longer_verifies():
    key = SigningKey.generate()
    claims = assertion_claims("i", "t", "s")
    token = key.sign(claims)
    tampered = with_payload(token, {**claims, "sub": "mallory"})

    assert tampered.split(".")[0] == token.split(".")[0]
    assert tampered.split(".")[2] == token.split(".")[2]
    assert json.loads(_unb64(tampered.split(".")[1]))["sub"] == "mallory"
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(tampered, jwt.PyJWK(key.public_jwk()).key, algorithms=["ES256"], audience="t")


def test_a_token_can_be_signed_with_another_typ_or_none():
    key = SigningKey.generate()
    typed = key.sign({"a": 1}, headers={"typ": SESSION_TOKEN_TYPE})
    untyped = key.sign({"a": 1}, headers={"typ": None})
    assert jwt.get_unverified_header(typed)["typ"] == "toolgate-session+jwt"
    assert "typ" not in jwt.get_unverified_header(untyped)
    assert jwt.decode(untyped, key.private.public_key(), algorithms=["ES256"]) == {"a": 1}
