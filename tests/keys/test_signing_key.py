"""SigningKey: named by its thumbprint, parsed once, never shown."""
from __future__ import annotations

import dataclasses
import re

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from service.keys import (
    ALGORITHMS,
    SigningKey,
    generate_signing_key,
    public_jwk,
    rotate,
    signing_key_from_private,
)
from tests.keys.vectors import FIXED_NOW, PUBLIC_JWKS, RFC7515_A3_ES256_D, RFC8037_A1_ED25519_D, fixed_key

KID = re.compile(r"^[A-Za-z0-9_-]{43}$")


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_public_jwk_known_answer(alg):
    assert public_jwk(fixed_key(alg)) == PUBLIC_JWKS[alg]


def test_generated_key_is_named_by_a_fresh_url_safe_kid():
    first = generate_signing_key("ES256", FIXED_NOW + 0.9)
    second = generate_signing_key("ES256", FIXED_NOW)
    assert KID.match(first.kid) and KID.match(second.kid)
    assert first.kid != second.kid
    assert (first.alg, first.created_at, first.retired_at) == ("ES256", FIXED_NOW, None)


def _private_texts(key: SigningKey) -> list[str]:
    """Every spelling of the private key a leak could take."""
    pem = key.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    texts = [line for line in pem.splitlines() if "-----" not in line] + ["PRIVATE"]
    if key.alg == "ES256":
        texts += [RFC7515_A3_ES256_D, str(key.private_key.private_numbers().private_value)]
    elif key.alg == "EdDSA":
        texts += [RFC8037_A1_ED25519_D]
    else:
        texts += [str(key.private_key.private_numbers().d)]
    return texts


def test_repr_never_shows_private_material(any_fixed_key):
    new_key, key_set = rotate([any_fixed_key], any_fixed_key.alg, FIXED_NOW)
    shown = " ".join([repr(any_fixed_key), str(any_fixed_key), f"{any_fixed_key}", repr(key_set),
                      repr((new_key, key_set)), repr(dataclasses.replace(any_fixed_key, retired_at=1))])
    assert any_fixed_key.kid in shown
    for text in _private_texts(any_fixed_key) + _private_texts(new_key):
        assert text not in shown
    assert "private_key" not in shown


def test_keys_are_equal_by_identity_not_by_key_object():
    assert fixed_key("ES256") == fixed_key("ES256")
    assert fixed_key("ES256") != fixed_key("ES256", created_at=FIXED_NOW)
    assert len({fixed_key("EdDSA"), fixed_key("EdDSA")}) == 1


def test_public_key_is_derived_once_per_key():
    key = fixed_key("ES256")
    assert key.public_key is key.public_key


@pytest.mark.parametrize(
    "kid, alg, make, message",
    [
        ("k1", "EdDSA", lambda: ec.generate_private_key(ec.SECP256R1()), "not a key for EdDSA"),
        ("k1", "HS256", lambda: ec.generate_private_key(ec.SECP256R1()), "Unknown signing algorithm"),
        ("", "ES256", lambda: ec.generate_private_key(ec.SECP256R1()), "non-empty kid"),
    ],
)
def test_signing_key_refuses_an_inconsistent_row(kid, alg, make, message):
    with pytest.raises(ValueError, match=message):
        SigningKey(kid=kid, alg=alg, private_key=make(), created_at=FIXED_NOW)


def test_wrapping_a_parsed_key_names_it_by_its_thumbprint():
    key = fixed_key("EdDSA")
    again = signing_key_from_private(key.private_key, "EdDSA", FIXED_NOW, retired_at=FIXED_NOW + 5)
    assert again.kid == PUBLIC_JWKS["EdDSA"]["kid"]
    assert (again.created_at, again.retired_at) == (FIXED_NOW, FIXED_NOW + 5)
