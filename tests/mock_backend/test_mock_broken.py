"""Each broken mode switches off exactly one check: it accepts its own attack and nothing else.

The whole matrix (every mode, strict included, against every attack) runs, so a mode that
switches off a second check by accident fails here.
"""
from __future__ import annotations

import time

import jwt
import pytest

from mock_backend import create_app
from mock_backend.verify import BROKEN_MODES


def _attacks(harness) -> dict[str, dict[str, str]]:
    """Request headers per attack; "valid" is the genuine article."""
    now = int(time.time())
    org_key = harness.keys["ES256"]
    attacker = harness.attacker
    return {
        "valid": harness.bearer(),
        "no-token": {},
        "wrong-audience": harness.bearer("get_profile"),
        "expired": harness.bearer(iat=now - 90, exp=now - 60),
        "other-issuer": harness.bearer(key=attacker, iss=harness.evil_issuer),
        "bad-signature": harness.auth(jwt.encode(harness.claims(), attacker.private, algorithm="ES256",
                                                 headers={"kid": org_key.kid})),
        "tampered": harness.auth(harness.tampered(harness.token(sub="bob"), sub="alice")),
        "unknown-kid": harness.auth(jwt.encode(harness.claims(), attacker.private, algorithm="ES256",
                                               headers={"kid": "nobody-1"})),
        "alg-none": harness.auth(harness.forged(alg="none")),
        "hs256-with-public-key": harness.auth(harness.forged(alg="HS256", secret=org_key.public_pem())),
    }


#: What each mode lets through besides a valid assertion, and the reason strict mode gives.
ACCEPTS = {
    None: set(),
    "skip-audience": {"wrong-audience"},
    "accept-expired": {"expired"},
    "any-issuer": {"other-issuer"},
    "skip-signature": {"bad-signature", "tampered", "unknown-kid"},
    "accept-alg-none": {"alg-none"},
    "accept-hs256": {"hs256-with-public-key"},
    "no-auth": {"no-token"},
}
STRICT_REASONS = {
    "no-token": "missing-token", "wrong-audience": "wrong-audience", "expired": "expired",
    "other-issuer": "wrong-issuer", "bad-signature": "bad-signature", "tampered": "bad-signature",
    "unknown-kid": "unknown-key", "alg-none": "bad-algorithm", "hs256-with-public-key": "bad-algorithm",
}


def test_every_broken_mode_is_covered():
    assert set(ACCEPTS) - {None} == set(BROKEN_MODES)


@pytest.mark.parametrize("mode", list(ACCEPTS), ids=lambda mode: mode or "strict")
def test_mode_accepts_exactly_its_own_attack(harness, mode):
    client = harness.app(broken=mode).test_client()
    outcomes = {}
    for attack, headers in _attacks(harness).items():
        response = client.get("/users/alice/orders", headers=headers)
        outcomes[attack] = response.status_code if response.status_code == 200 else response.get_json()["reason"]
    expected = {attack: 200 if attack == "valid" or attack in ACCEPTS[mode] else STRICT_REASONS[attack]
                for attack in outcomes}
    assert outcomes == expected


def test_no_auth_still_serves_data_without_a_subject_check(harness):
    # The point of the mode: with no token, nobody checks whose orders these are.
    client = harness.app(broken="no-auth").test_client()
    response = client.get("/users/bob/orders")
    assert response.status_code == 200 and response.get_json()["subject"] == "bob"


def test_accept_hs256_still_rejects_an_hmac_with_another_secret(harness):
    client = harness.app(broken="accept-hs256").test_client()
    token = harness.forged(alg="HS256", secret=b"not the public key")
    response = client.get("/users/alice/orders", headers=harness.auth(token))
    assert response.get_json()["reason"] == "bad-signature"


def test_unknown_broken_mode_refuses_to_start(harness):
    with pytest.raises(ValueError, match="unknown broken mode 'skip-everything'"):
        create_app([harness.issuer], broken="skip-everything")
