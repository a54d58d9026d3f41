"""Private keys at rest: sealing round-trips; a wrong secret, a moved row or a bit flip fails."""
from __future__ import annotations

import base64

import jwt
import pytest

from service.keys import SealError, SigningKey, mint_assertion, seal_private_key, unseal_private_key
from tests.keys.vectors import FIXED_NOW, ISSUER, fixed_key

SECRET = "test-secret-0123456789abcdefghijklmnopqrstuvwxyz"


def _unseal(key, sealed, secret=SECRET, kid=None, alg=None):
    return unseal_private_key(kid or key.kid, alg or key.alg, sealed, secret, key.created_at, key.retired_at)


def test_sealed_key_round_trips_and_still_signs(any_fixed_key):
    sealed = seal_private_key(any_fixed_key, SECRET)
    opened = _unseal(any_fixed_key, sealed)
    assert opened == any_fixed_key
    token = mint_assertion(opened, ISSUER, "get_orders", "user-42", False, "t1", FIXED_NOW)
    claims = jwt.decode(token, any_fixed_key.public_key, algorithms=[any_fixed_key.alg],
                        audience="get_orders", options={"verify_exp": False})
    assert claims["sub"] == "user-42"


def test_retirement_survives_unsealing():
    key = fixed_key("EdDSA")
    opened = unseal_private_key(key.kid, key.alg, seal_private_key(key, SECRET), SECRET, 10, 20)
    assert (opened.created_at, opened.retired_at) == (10, 20)


def test_sealed_text_is_fresh_each_time_and_shows_no_key(any_fixed_key):
    first, second = seal_private_key(any_fixed_key, SECRET), seal_private_key(any_fixed_key, SECRET)
    assert first != second  # a fresh nonce every time
    assert first.startswith("v1.")
    assert "PRIVATE" not in first and "BEGIN" not in first


def test_wrong_secret_fails_with_a_clear_error():
    key = fixed_key("ES256")
    sealed = seal_private_key(key, SECRET)
    with pytest.raises(SealError) as caught:
        _unseal(key, sealed, secret=SECRET + "x")
    message = str(caught.value)
    assert "TOOLGATE_SECRET_KEY" in message and key.kid in message
    assert sealed[3:20] not in message


def test_sealed_key_moved_to_another_kid_fails():
    key, other = fixed_key("ES256"), fixed_key("EdDSA")
    with pytest.raises(SealError, match="cannot be opened"):
        _unseal(key, seal_private_key(key, SECRET), kid=other.kid)


def test_sealed_key_relabelled_with_another_algorithm_fails():
    key = fixed_key("ES256")
    with pytest.raises(SealError, match="cannot be opened"):
        _unseal(key, seal_private_key(key, SECRET), alg="RS256")


def test_key_stored_under_a_kid_that_is_not_its_thumbprint_fails():
    key = fixed_key("ES256")
    misnamed = SigningKey(kid="made-up-kid", alg="ES256", private_key=key.private_key, created_at=1)
    with pytest.raises(SealError, match="different thumbprint"):
        _unseal(misnamed, seal_private_key(misnamed, SECRET))


def test_tampered_sealed_text_fails():
    key = fixed_key("RS256")
    blob = bytearray(base64.urlsafe_b64decode(seal_private_key(key, SECRET)[3:]))
    blob[40] ^= 0x01
    with pytest.raises(SealError, match="cannot be opened"):
        _unseal(key, "v1." + base64.urlsafe_b64encode(bytes(blob)).decode())


@pytest.mark.parametrize(
    "sealed",
    ["", "v2.AAAA", "v1.", "v1.%%%", "v1." + base64.urlsafe_b64encode(b"short").decode(), "-----BEGIN"],
)
def test_malformed_sealed_text_fails(sealed):
    with pytest.raises(SealError):
        _unseal(fixed_key("ES256"), sealed)


def test_empty_secret_is_refused():
    key = fixed_key("ES256")
    with pytest.raises(ValueError, match="TOOLGATE_SECRET_KEY is empty"):
        seal_private_key(key, "")
    with pytest.raises(ValueError, match="TOOLGATE_SECRET_KEY is empty"):
        _unseal(key, seal_private_key(key, SECRET), secret="")
