"""Session tokens: known answers, and one test per way THREATS.md says a token can be refused."""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from service.keys import (
    REASONS,
    SESSION_TOKEN_TYPE,
    SessionClaims,
    TokenError,
    generate_signing_key,
    mint_assertion,
    mint_session_token,
    public_jwk,
    verify_session_token,
)
from service.keys.algorithms import sign
from service.keys.session_tokens import MAX_SESSION_TOKEN_CHARS, SESSION_CLAIMS
from service.limits import CLOCK_SKEW_SECONDS, MAX_SUBJECT_CHARS, SESSION_TOKEN_MAX_SECONDS
from tests.keys.vectors import FIXED_NOW, ISSUER, b64url_decode, b64url_encode, fixed_key, forge

KEY = fixed_key("ES256")
KEYS = [KEY]
EDDSA_TOKEN = (
    "eyJhbGciOiJFZERTQSIsImtpZCI6ImtQcktfcW14VldhWVZBOXd3QkY2SXVvM3ZWeno3VHhIQ1R3WEJ5Z3JTNGsiLCJ0eXAiOiJ0b29s"
    "Z2F0ZS1zZXNzaW9uK2p3dCJ9.eyJpc3MiOiJodHRwczovL3Rvb2xnYXRlLmV4YW1wbGUvb3Jncy9hY21lIiwiYXVkIjoiaHR0cHM6Ly9"
    "0b29sZ2F0ZS5leGFtcGxlL29yZ3MvYWNtZSIsInN1YiI6InVzZXItNDIiLCJhbm9uIjpmYWxzZSwiZW50aXRsZW1lbnRzIjpbIm9yZGV"
    "yczpyZWFkIl0sImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAxODAwLCJqdGkiOiJqdGktMDAwMiJ9.dbr0gJVLc--ZOZGQ-w6wgJj"
    "TWs4cnr8HRekmOWooV-bVNpO-0E1Ck6gMcUIJZE2uS53OjsiQZ1F_Pfu-rmgdBA"
)


def header(**changes) -> dict:
    """A session token header for KEY, with `changes` applied (None removes a member)."""
    members = {"alg": "ES256", "kid": KEY.kid, "typ": SESSION_TOKEN_TYPE, **changes}
    return {name: value for name, value in members.items() if value is not None}


def claims(**changes) -> dict:
    """Valid session claims at FIXED_NOW, with `changes` applied (None removes a claim)."""
    members = {
        "iss": ISSUER, "aud": ISSUER, "sub": "user-42", "anon": False, "entitlements": ["orders:read"],
        "iat": FIXED_NOW, "exp": FIXED_NOW + 600, "jti": "jti-1", **changes,
    }
    return {name: value for name, value in members.items() if value is not None}


def signed_by(key):
    return lambda signing_input: sign(key.alg, key.private_key, signing_input)


def rejection(token, keys=KEYS, now=FIXED_NOW, issuer=ISSUER) -> str:
    """The reason `token` is refused; fails the test if it is accepted."""
    with pytest.raises(TokenError) as caught:
        verify_session_token(token, issuer, keys, now=now)
    return caught.value.reason


# Known answers and the accepted shape.

def test_session_token_known_answer_eddsa():
    token, expires_at = mint_session_token(
        fixed_key("EdDSA"), ISSUER, "user-42", False, ["orders:read"], 1800, FIXED_NOW, jti="jti-0002"
    )
    assert (token, expires_at) == (EDDSA_TOKEN, FIXED_NOW + 1800)


def test_session_token_known_answer_es256():
    token, _ = mint_session_token(KEY, ISSUER, "user-42", False, ["orders:read"], 1800, FIXED_NOW, jti="jti-0002")
    head, payload, _signature = token.split(".")
    assert head == (
        "eyJhbGciOiJFUzI1NiIsImtpZCI6Im9LSXl3dkdVcFRWVHl4TVEzYndJSWVRVXVkZnJfQ2tMTWpDRTE5RUNELVUiLCJ0eXAiOiJ0b29s"
        "Z2F0ZS1zZXNzaW9uK2p3dCJ9"
    )
    assert json.loads(b64url_decode(head)) == {"alg": "ES256", "kid": KEY.kid, "typ": SESSION_TOKEN_TYPE}
    assert payload == EDDSA_TOKEN.split(".")[1]
    assert verify_session_token(token, ISSUER, KEYS, now=FIXED_NOW).jti == "jti-0002"


def test_session_token_carries_exactly_the_contracts_claims(any_fixed_key):
    token, expires_at = mint_session_token(any_fixed_key, ISSUER, "user-42", True, ["a", "b"], 900, FIXED_NOW)
    decoded = jwt.decode_complete(token, any_fixed_key.public_key, algorithms=[any_fixed_key.alg],
                                  audience=ISSUER, options={"verify_exp": False})
    assert decoded["header"] == {"alg": any_fixed_key.alg, "kid": any_fixed_key.kid, "typ": SESSION_TOKEN_TYPE}
    assert tuple(decoded["payload"]) == SESSION_CLAIMS
    assert decoded["payload"]["aud"] == decoded["payload"]["iss"] == ISSUER
    assert verify_session_token(token, ISSUER, [any_fixed_key], now=FIXED_NOW) == SessionClaims(
        subject="user-42", anonymous=True, entitlements=("a", "b"), issued_at=FIXED_NOW,
        expires_at=expires_at, jti=decoded["payload"]["jti"],
    )


def test_jti_is_random_for_every_token():
    tokens = [mint_session_token(KEY, ISSUER, "u", False, [], 60, FIXED_NOW)[0] for _ in range(200)]
    assert len({verify_session_token(t, ISSUER, KEYS, now=FIXED_NOW).jti for t in tokens}) == 200


def test_reasons_are_the_documented_set():
    assert set(REASONS) == {
        "malformed", "bad-algorithm", "unknown-key", "bad-signature", "wrong-type", "wrong-issuer",
        "wrong-audience", "expired", "not-yet-valid", "missing-claim", "lifetime-too-long", "forbidden-header",
    }


# Algorithms: pinned to our key, never read from the token.

@pytest.mark.parametrize("alg", ["none", "None", "NONE", "nOnE", ""])
def test_alg_none_session_token_is_rejected(alg):
    assert rejection(forge(header(alg=alg), claims())) == "bad-algorithm"
    assert rejection(forge(header(alg=alg), claims(), sign=signed_by(KEY))) == "bad-algorithm"


@pytest.mark.parametrize(
    "public_key_text",
    [
        KEY.public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        KEY.public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo),
        json.dumps(public_jwk(KEY)).encode(),
    ],
    ids=["pem", "der", "jwk"],
)
def test_hs256_with_public_key_is_rejected(public_key_text):
    mac = lambda signing_input: hmac.new(public_key_text, signing_input, hashlib.sha256).digest()  # noqa: E731
    assert rejection(forge(header(alg="HS256"), claims(), sign=mac)) == "bad-algorithm"


def test_algorithm_other_than_the_keys_own_is_rejected():
    # A genuine RS256 signature, under a kid whose key signs ES256: the token does not choose.
    attacker = fixed_key("RS256")
    assert rejection(forge(header(alg="RS256"), claims(), sign=signed_by(attacker))) == "bad-algorithm"


# Headers: nothing but alg, kid and typ; no key or key address is ever taken from a token.

def test_embedded_jwk_header_is_rejected():
    attacker = generate_signing_key("ES256", FIXED_NOW)
    token = forge(header(kid=attacker.kid, jwk=public_jwk(attacker)), claims(), sign=signed_by(attacker))
    assert rejection(token) == "forbidden-header"
    # Even when the embedded key is one of ours, the header itself is refused.
    assert rejection(forge(header(jwk=public_jwk(KEY)), claims(), sign=signed_by(KEY))) == "forbidden-header"


@pytest.mark.parametrize("member", ["jku", "x5u"])
def test_key_url_header_is_rejected_without_a_fetch(member, jwks_server):
    attacker = generate_signing_key("ES256", FIXED_NOW)
    jwks_server.document = {"keys": [public_jwk(attacker)]}
    token = forge(header(kid=attacker.kid, **{member: jwks_server.url}), claims(), sign=signed_by(attacker))
    assert rejection(token) == "forbidden-header"
    assert jwks_server.hits == []


@pytest.mark.parametrize(
    "extra",
    [{"x5c": ["MIIB"]}, {"x5t": "abc"}, {"crit": ["exp"], "exp": 1}, {"b64": False, "crit": ["b64"]},
     {"cty": "JWT"}],
    ids=["x5c", "x5t", "crit", "b64", "cty"],
)
def test_x5c_and_every_other_unexpected_header_is_rejected(extra):
    assert rejection(forge(header(**extra), claims(), sign=signed_by(KEY))) == "forbidden-header"


# Key ids: looked up among our published keys and nowhere else.

@pytest.mark.parametrize("kid", ["no-such-key", None], ids=["unknown", "missing"])
def test_unknown_kid_is_rejected(kid):
    assert rejection(forge(header(kid=kid), claims(), sign=signed_by(KEY))) == "unknown-key"


@pytest.mark.parametrize(
    "kid",
    ["../../../../etc/passwd", "/dev/null", "file:///etc/passwd", "' OR '1'='1", "x'; DROP TABLE signing_key;--",
     KEY.kid + "%00", KEY.kid.lower()],
)
def test_kid_that_is_a_path_or_sql_is_rejected(kid):
    assert rejection(forge(header(kid=kid), claims(), sign=signed_by(KEY))) == "unknown-key"


def test_token_of_a_key_no_longer_published_is_rejected():
    retired = dataclasses.replace(KEY, retired_at=FIXED_NOW - 3600)
    token = forge(header(), claims(), sign=signed_by(KEY))
    assert rejection(token, keys=[retired]) == "unknown-key"


# Type, issuer, audience.

def test_assertion_is_not_accepted_as_session_token():
    # The worst case: an assertion whose aud is the issuer itself, so only its typ tells it apart.
    assertion = mint_assertion(KEY, ISSUER, ISSUER, "user-42", False, "t1", FIXED_NOW)
    assert rejection(assertion) == "wrong-type"


@pytest.mark.parametrize("typ", [None, "JWT", "jwt", "at+jwt", "TOOLGATE-SESSION+JWT"])
def test_wrong_typ_session_token_is_rejected(typ):
    assert rejection(forge(header(typ=typ), claims(), sign=signed_by(KEY))) == "wrong-type"


def test_wrong_issuer_session_token_is_rejected():
    other = "https://toolgate.example/orgs/other"
    token, _ = mint_session_token(KEY, other, "user-42", False, [], 600, FIXED_NOW)
    assert rejection(token) == "wrong-issuer"


def test_wrong_audience_session_token_is_rejected():
    token = forge(header(), claims(aud="https://toolgate.example/orgs/other"), sign=signed_by(KEY))
    assert rejection(token) == "wrong-audience"


def test_audience_list_containing_the_issuer_is_rejected():
    token = forge(header(), claims(aud=[ISSUER, "get_orders"]), sign=signed_by(KEY))
    assert rejection(token) == "wrong-audience"


# Claims and times.

@pytest.mark.parametrize("claim", SESSION_CLAIMS)
def test_session_token_missing_a_claim_is_rejected(claim):
    assert rejection(forge(header(), claims(**{claim: None}), sign=signed_by(KEY))) == "missing-claim"


def test_overlong_session_token_lifetime_is_rejected():
    year = forge(header(), claims(exp=FIXED_NOW + 365 * 86_400), sign=signed_by(KEY))
    assert rejection(year) == "lifetime-too-long"
    just_over = forge(header(), claims(exp=FIXED_NOW + SESSION_TOKEN_MAX_SECONDS + CLOCK_SKEW_SECONDS + 1),
                      sign=signed_by(KEY))
    assert rejection(just_over) == "lifetime-too-long"
    at_limit = forge(header(), claims(exp=FIXED_NOW + SESSION_TOKEN_MAX_SECONDS + CLOCK_SKEW_SECONDS),
                     sign=signed_by(KEY))
    assert verify_session_token(at_limit, ISSUER, KEYS, now=FIXED_NOW).subject == "user-42"


def test_expired_session_token_is_rejected():
    token, expires_at = mint_session_token(KEY, ISSUER, "user-42", False, [], 600, FIXED_NOW)
    assert rejection(token, now=expires_at + CLOCK_SKEW_SECONDS) == "expired"
    assert verify_session_token(token, ISSUER, KEYS, now=expires_at + CLOCK_SKEW_SECONDS - 1).subject == "user-42"


def test_session_token_issued_in_the_future_is_rejected():
    token = forge(header(), claims(iat=FIXED_NOW + 60, exp=FIXED_NOW + 600), sign=signed_by(KEY))
    assert rejection(token) == "not-yet-valid"
    assert verify_session_token(token, ISSUER, KEYS, now=FIXED_NOW + 60 - CLOCK_SKEW_SECONDS).jti == "jti-1"


# Signatures and shape.

def test_tampered_session_token_is_rejected():
    head, _, signature = forge(header(), claims(), sign=signed_by(KEY)).split(".")
    other_payload = forge(header(), claims(sub="admin")).split(".")[1]
    assert rejection(f"{head}.{other_payload}.{signature}") == "bad-signature"


def test_session_token_signed_by_another_key_under_our_kid_is_rejected():
    impostor = generate_signing_key("ES256", FIXED_NOW)
    assert rejection(forge(header(), claims(), sign=signed_by(impostor))) == "bad-signature"


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b", "a.b.c.d", "!!.??.**", forge(header(), {}).split(".")[0] + ".!!.??", b"a.b.c", None,
     "x" * (MAX_SESSION_TOKEN_CHARS + 1), forge(["alg"], claims())],
    ids=["empty", "one-part", "two-parts", "four-parts", "not-base64", "payload-not-base64", "bytes", "none",
         "oversize", "header-not-object"],
)
def test_malformed_session_token_is_rejected(token):
    assert rejection(token) == "malformed"


@pytest.mark.parametrize(
    "changes",
    [{"anon": "false"}, {"anon": 0}, {"entitlements": "orders:read"}, {"entitlements": [1]},
     {"iat": str(FIXED_NOW)}, {"iat": True}, {"exp": FIXED_NOW + 600.5}, {"sub": 42}, {"sub": ""},
     {"jti": 7}, {"exp": FIXED_NOW}],
    ids=lambda changes: "-".join(f"{k}={v!r}" for k, v in changes.items()),
)
def test_wrongly_typed_claim_is_rejected(changes):
    assert rejection(forge(header(), claims(**changes), sign=signed_by(KEY))) == "malformed"


def test_payload_that_is_not_an_object_is_rejected():
    head = forge(header(), {}).split(".")[0]
    body = forge({}, []).split(".")[1]
    signature = b64url_encode(sign(KEY.alg, KEY.private_key, f"{head}.{body}".encode()))
    assert rejection(f"{head}.{body}.{signature}") == "malformed"


def test_verifying_needs_the_issuer_from_configuration():
    token, _ = mint_session_token(KEY, ISSUER, "user-42", False, [], 600, FIXED_NOW)
    for issuer in (None, ""):
        with pytest.raises(ValueError, match="issuer from configuration"):
            verify_session_token(token, issuer, KEYS, now=FIXED_NOW)


# Minting refuses what verification would refuse.

@pytest.mark.parametrize("ttl", [SESSION_TOKEN_MAX_SECONDS + 1, 0, -1, 86_400])
def test_minting_refuses_a_ttl_out_of_range(ttl):
    with pytest.raises(ValueError, match=f"between 1 and {SESSION_TOKEN_MAX_SECONDS}"):
        mint_session_token(KEY, ISSUER, "user-42", False, [], ttl, FIXED_NOW)


@pytest.mark.parametrize("ttl", [True, 60.0, "60", None])
def test_minting_refuses_a_ttl_that_is_not_whole_seconds(ttl):
    with pytest.raises(ValueError, match="whole number of seconds"):
        mint_session_token(KEY, ISSUER, "user-42", False, [], ttl, FIXED_NOW)


def test_minting_accepts_the_longest_ttl():
    _, expires_at = mint_session_token(KEY, ISSUER, "user-42", False, [], SESSION_TOKEN_MAX_SECONDS, FIXED_NOW)
    assert expires_at == FIXED_NOW + SESSION_TOKEN_MAX_SECONDS


@pytest.mark.parametrize(
    "subject, anonymous, entitlements, message",
    [("", False, [], "subject"), (None, False, [], "subject"), (".", False, [], "subject"),
     ("..", False, [], "subject"), ("u\x00", False, [], "subject"), ("u\n", False, [], "subject"),
     ("u" * (MAX_SUBJECT_CHARS + 1), False, [], "subject"), ("u", "no", [], "anonymous"),
     ("u", False, [1], "Entitlements"), ("u", False, ["e" * MAX_SESSION_TOKEN_CHARS], "exceed")],
)
def test_minting_refuses_what_cannot_be_a_session(subject, anonymous, entitlements, message):
    with pytest.raises(ValueError, match=message):
        mint_session_token(KEY, ISSUER, subject, anonymous, entitlements, 60, FIXED_NOW)


@pytest.mark.parametrize("subject", [".", "..", "u\x00", "\x1b", "u" * (MAX_SUBJECT_CHARS + 1)])
def test_a_token_whose_subject_cannot_stand_as_a_path_segment_is_malformed(subject):
    """Never minted so; if one were, every call putting its subject in a path would be the model's fault."""
    assert rejection(forge(header(), claims(sub=subject), sign=signed_by(KEY))) == "malformed"


def test_retired_key_mints_no_session_token():
    with pytest.raises(ValueError, match="is retired"):
        mint_session_token(dataclasses.replace(KEY, retired_at=FIXED_NOW), ISSUER, "u", False, [], 60, FIXED_NOW)
