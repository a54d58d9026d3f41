"""Call assertions: known answers, the contract's exact shape, and verification as an integrator
does it (pyjwt's PyJWKClient against a JWKS served over real HTTP)."""
from __future__ import annotations

import json
import re
import time

import jwt
import pytest

from service.keys import (
    ASSERTION_TYPE,
    jwks_document,
    mint_assertion,
    new_turn_id,
    rotate,
)
from service.keys.assertions import APPROVAL_CLAIM, ASSERTION_CLAIMS
from service.limits import ASSERTION_LIFETIME_SECONDS, CLOCK_SKEW_SECONDS
from tests.keys.vectors import FIXED_NOW, ISSUER, b64url_decode, fixed_key

URL_SAFE = re.compile(r"^[A-Za-z0-9_-]{22,}$")
ARGS = dict(issuer=ISSUER, tool_name="get_orders", subject="user-42", anonymous=False, turn="turn-7Yk2")

PAYLOAD = (
    "eyJpc3MiOiJodHRwczovL3Rvb2xnYXRlLmV4YW1wbGUvb3Jncy9hY21lIiwiYXVkIjoiZ2V0X29yZGVycyIsInN1YiI6InVzZXItNDIi"
    "LCJhbm9uIjpmYWxzZSwidHVybiI6InR1cm4tN1lrMiIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAwMDMwLCJqdGkiOiJqdGkt"
    "MDAwMSJ9"
)
EDDSA_ASSERTION = (
    "eyJhbGciOiJFZERTQSIsImtpZCI6ImtQcktfcW14VldhWVZBOXd3QkY2SXVvM3ZWeno3VHhIQ1R3WEJ5Z3JTNGsiLCJ0eXAiOiJKV1Qi"
    "fQ." + PAYLOAD + ".HQ5C0WHWxp9ix7fnZ57K7Qi-i4GCUh4UhxUz5YcVV9GlahwTfXbODLCQ2HgSjf9zCnRxXZsMIEhyUS9F685MBQ"
)
RS256_ASSERTION = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEwdmJWU0lGb25SS2o3dkEzaTVsTHNiM09lcWFyM2pINDEyWXNRWExOaEkiLCJ0eXAiOiJKV1Qi"
    "fQ." + PAYLOAD + ".M6HnBHFUHi4XMGeYnHLMn84W9TUIbFJV1qtPxnIzauL1lFvtDEzx8ASSZVGnJy7qhHCnsArqH_UlC9jg7ISxHaHv"
    "YNa5htL5vuh0aA1tGrJCz_W5YBT-pbqGNXscCFii7AoP9UDxnsdyuT0-4ReV1W-5Gh_zoLOPFauksohctbWpeDSv1KuhcXj0SNdw8t0yAV"
    "G5AJHd2pf18WQLpl-fqOeBl7xjQxcfLq1qqrlBi32PVxWlB-CNTBoqDkwim_PBwoTRl6IrhSIb_02ybzSoMos9r6W8ZF7z1gyWgmjYTKZ7"
    "wE1YJuUQNlr0AuoBDJsrscQEd5zQ8fsB6j7ks1GLkA"
)
ES256_HEADER = (
    "eyJhbGciOiJFUzI1NiIsImtpZCI6Im9LSXl3dkdVcFRWVHl4TVEzYndJSWVRVXVkZnJfQ2tMTWpDRTE5RUNELVUiLCJ0eXAiOiJKV1Qi"
    "fQ"
)


def integrator_decode(token, key, audience="get_orders"):
    """What how-tools-run asks of a backend: pinned algorithms, exact audience, every claim."""
    return jwt.decode(
        token, key, algorithms=["ES256", "EdDSA", "RS256"], audience=audience, issuer=ISSUER,
        leeway=CLOCK_SKEW_SECONDS,
        options={"require": list(ASSERTION_CLAIMS), "strict_aud": True},
    )


@pytest.mark.parametrize("alg, expected", [("EdDSA", EDDSA_ASSERTION), ("RS256", RS256_ASSERTION)])
def test_assertion_known_answer_deterministic_signatures(alg, expected):
    assert mint_assertion(fixed_key(alg), **ARGS, now=FIXED_NOW, jti="jti-0001") == expected


def test_assertion_known_answer_es256():
    key = fixed_key("ES256")
    token = mint_assertion(key, **ARGS, now=FIXED_NOW + 0.99, jti="jti-0001")
    head, payload, _signature = token.split(".")
    assert (head, payload) == (ES256_HEADER, PAYLOAD)
    claims = jwt.decode(token, key.public_key, algorithms=["ES256"], audience="get_orders",
                        options={"verify_exp": False})
    assert claims["jti"] == "jti-0001"


def test_assertion_header_and_claims_are_exactly_the_contracts(any_fixed_key):
    token = mint_assertion(any_fixed_key, **ARGS, now=FIXED_NOW)
    head, payload, _ = token.split(".")
    assert json.loads(b64url_decode(head)) == {
        "alg": any_fixed_key.alg, "kid": any_fixed_key.kid, "typ": ASSERTION_TYPE,
    }
    claims = json.loads(b64url_decode(payload))
    assert tuple(claims) == ASSERTION_CLAIMS
    assert claims["aud"] == "get_orders"  # a string, never a list
    assert claims["exp"] - claims["iat"] == ASSERTION_LIFETIME_SECONDS
    identity = (claims["iss"], claims["sub"], claims["anon"], claims["turn"])
    assert identity == (ISSUER, "user-42", False, "turn-7Yk2")


def test_every_assertion_has_its_own_jti():
    key = fixed_key("EdDSA")
    jtis = {json.loads(b64url_decode(mint_assertion(key, **ARGS, now=FIXED_NOW).split(".")[1]))["jti"]
            for _ in range(1000)}
    assert len(jtis) == 1000
    assert all(URL_SAFE.match(jti) for jti in jtis)


def test_turn_id_is_random_and_url_safe():
    turns = [new_turn_id() for _ in range(1000)]
    assert len(set(turns)) == 1000
    assert all(URL_SAFE.match(turn) for turn in turns)
    assert not any(turn.isdigit() for turn in turns)


@pytest.mark.parametrize(
    "change",
    [{"tool_name": ""}, {"tool_name": ["get_orders"]}, {"subject": None}, {"subject": ""}, {"turn": ""},
     {"anonymous": "false"}, {"issuer": None}],
    ids=lambda change: "-".join(f"{k}={v!r}" for k, v in change.items()),
)
def test_assertion_refuses_a_missing_or_mistyped_identity(change):
    with pytest.raises(ValueError, match="non-empty strings"):
        mint_assertion(fixed_key("ES256"), **{**ARGS, **change}, now=FIXED_NOW)


def test_integrator_verifies_assertions_with_pyjwkclient(jwks_server):
    now = time.time()
    first = fixed_key("RS256", created_at=int(now) - 60)
    keys = [first]
    tokens = {"RS256": mint_assertion(first, **ARGS, now=now)}
    # Rotate twice through the other algorithms: every key that signed stays in the JWKS.
    for alg in ("EdDSA", "ES256"):
        new_key, keys = rotate(keys, alg, now)
        tokens[alg] = mint_assertion(new_key, **ARGS, now=now)
    jwks_server.document = jwks_document(keys, now)

    client = jwt.PyJWKClient(jwks_server.url, timeout=5, cooldown_duration=0)
    for alg, token in tokens.items():
        signing_key = client.get_signing_key_from_jwt(token)
        assert signing_key.algorithm_name == alg
        claims = integrator_decode(token, signing_key)
        assert (claims["sub"], claims["turn"]) == ("user-42", "turn-7Yk2")
        # Pointed at another tool, the same assertion is refused.
        with pytest.raises(jwt.InvalidAudienceError):
            integrator_decode(token, signing_key, audience="delete_orders")
    assert jwks_server.hits == ["/.well-known/jwks.json"]  # one fetch, then the cached set


def test_an_approved_call_carries_the_approval_claim_after_the_usual_ones(any_fixed_key):
    token = mint_assertion(any_fixed_key, **ARGS, now=FIXED_NOW, approval="appr-1")
    claims = json.loads(b64url_decode(token.split(".")[1]))
    assert tuple(claims) == (*ASSERTION_CLAIMS, APPROVAL_CLAIM) and claims[APPROVAL_CLAIM] == "appr-1"
