"""The reference verifier: one test per rejection reason, and the tokens it must accept.

The mock runs in-process through Flask's test mock_client (HTTP to the mock is not the point here);
its key sets still come over real HTTP from the test's JWKS server on 127.0.0.1.
"""
from __future__ import annotations

import time

import jwt
import pytest

from mock_backend import create_app
from mock_backend.jwks import REFETCH_COOLDOWN_SECONDS
from mock_backend.limits import CLOCK_SKEW_SECONDS
from mock_backend.verify import REASONS, REQUIRED_CLAIMS, Rejected, reason_for
from tests.mock_backend.conftest import generate_key


def rejected_with(response, reason: str) -> bool:
    assert reason in REASONS
    assert response.status_code == 401, response.get_data(as_text=True)
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    return response.get_json() == {"error": "invalid_token", "reason": reason}


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256"])
def test_valid_assertion_is_accepted_for_each_pinned_algorithm(mock_client, harness, alg):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(alg=alg))
    assert response.status_code == 200
    assert [order["id"] for order in response.get_json()["orders"]] == ["o-1001", "o-1002"]


def test_expiry_within_the_leeway_is_accepted(mock_client, harness):
    now = int(time.time())
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(iat=now - 32, exp=now - 2))
    assert response.status_code == 200


def test_missing_token_is_rejected(mock_client):
    assert rejected_with(mock_client.get("/users/alice/orders"), "missing-token")


def test_other_authorization_schemes_count_as_missing_token(mock_client):
    response = mock_client.get("/users/alice/orders", headers={"Authorization": "Basic YWxpY2U6eA=="})
    assert rejected_with(response, "missing-token")


@pytest.mark.parametrize("token", ["abc", "a.b.c", "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln", "x y"])
def test_malformed_token_is_rejected(mock_client, token):
    response = mock_client.get("/users/alice/orders", headers={"Authorization": f"Bearer {token}"})
    assert rejected_with(response, "malformed")


def test_bad_signature_is_rejected(mock_client, harness, attacker_key):
    # Signed by another key under the organization's kid.
    forged = jwt.encode(harness.claims(), attacker_key.private, algorithm="ES256",
                        headers={"kid": harness.keys["ES256"].kid})
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(forged)), "bad-signature")


def test_tampered_payload_is_rejected(mock_client, harness):
    token = harness.tampered(harness.token(sub="bob"), sub="alice")
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "bad-signature")


def test_unknown_kid_is_rejected_after_one_fetch(mock_client, harness, attacker_key):
    token = jwt.encode(harness.claims(), attacker_key.private, algorithm="ES256", headers={"kid": "rotated-9"})
    for _ in range(3):
        assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "unknown-key")
    # One fetch for the cold cache; the cooldown stops the unknown kid from refetching each time.
    assert harness.key_server.hits == 1


@pytest.mark.parametrize("kid", ["../../../etc/passwd", "x' OR '1'='1", "a/b", "", "k" * 200])
def test_path_or_sql_kid_is_rejected_without_fetching(mock_client, harness, kid):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(headers={"kid": kid}))
    assert rejected_with(response, "unknown-key")
    assert harness.key_server.hits == 0


@pytest.mark.parametrize("alg", ["none", "None", "NONE", "nOnE"])
def test_alg_none_is_rejected(mock_client, harness, alg):
    token = harness.forged(alg=alg)
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "bad-algorithm")
    assert harness.key_server.hits == 0


def test_hs256_with_public_key_is_rejected(mock_client, harness):
    token = harness.forged(alg="HS256", secret=harness.keys["ES256"].public_pem())
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "bad-algorithm")


def test_header_alg_must_equal_the_keys_alg(mock_client, harness):
    # A genuine RS256 signature, but presented under the ES256 key's kid: the JWK decides.
    token = harness.token(alg="RS256", headers={"kid": harness.keys["ES256"].kid})
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "bad-algorithm")


@pytest.mark.parametrize("member", ["jwk", "jku", "x5u", "x5c"])
def test_embedded_key_headers_are_rejected_without_fetching(mock_client, harness, member):
    value = {"jwk": harness.keys["ES256"].jwk(), "x5c": ["MIIB"]}.get(
        member, f"{harness.evil_issuer}/.well-known/jwks.json")
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(headers={member: value}))
    assert rejected_with(response, "forbidden-header")
    assert harness.key_server.hits == 0


def test_wrong_issuer_is_rejected(mock_client, harness, attacker_key):
    # Correctly signed by the key that `evil` really publishes: trust still comes from configuration.
    token = harness.token(key=attacker_key, iss=harness.evil_issuer)
    assert rejected_with(mock_client.get("/users/alice/orders", headers=harness.auth(token)), "wrong-issuer")
    assert harness.key_server.hits == 0


def test_wrong_audience_is_rejected(mock_client, harness):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer("get_profile"))
    assert rejected_with(response, "wrong-audience")


def test_audience_list_containing_the_tool_is_rejected(mock_client, harness):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(aud=["get_orders", "get_profile"]))
    assert rejected_with(response, "wrong-audience")


def test_session_token_is_not_a_call_assertion(mock_client, harness):
    # A session token's audience is the issuer itself, never a tool.
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(aud=harness.issuer))
    assert rejected_with(response, "wrong-audience")


@pytest.mark.parametrize("typ", ["toolgate-session+jwt", "at+jwt", None])
def test_a_token_typed_other_than_an_assertion_is_rejected(mock_client, harness, typ):
    # A session token carries its own typ: even minted with the tool's audience it is no assertion.
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(headers={"typ": typ}))  # None: no typ
    assert rejected_with(response, "wrong-type")
    assert harness.key_server.hits == 0


def test_an_assertion_expired_past_the_leeway_is_rejected(mock_client, harness):
    # A few seconds past the leeway, not a minute: a backend with 59 s of leeway would take it.
    now = int(time.time())
    late = CLOCK_SKEW_SECONDS + 7
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(iat=now - 30 - late, exp=now - late))
    assert rejected_with(response, "expired")


def test_a_next_key_is_picked_up_once_the_refetch_cooldown_has_passed(harness):
    now = [0.0]
    client = create_app([harness.issuer], clock=lambda: now[0]).test_client()
    assert client.get("/users/alice/orders", headers=harness.bearer()).status_code == 200
    next_key = generate_key("ES256", "es256-2")
    harness.key_server.publish(harness.issuer, [key.jwk() for key in harness.keys.values()] + [next_key.jwk()])
    now[0] += REFETCH_COOLDOWN_SECONDS  # the real cooldown has passed, on the app's clock, without waiting for it
    response = client.get("/users/alice/orders", headers=harness.bearer(key=next_key))
    assert response.status_code == 200, response.get_json()
    assert harness.key_server.hits == 2


def test_expired_assertion_is_rejected(mock_client, harness):
    now = int(time.time())
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(iat=now - 60, exp=now - 30))
    assert rejected_with(response, "expired")


def test_assertion_issued_in_the_future_is_rejected(mock_client, harness):
    now = int(time.time())
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(iat=now + 60, exp=now + 90))
    assert rejected_with(response, "not-yet-valid")


@pytest.mark.parametrize("claim", REQUIRED_CLAIMS)
def test_missing_claim_is_rejected(mock_client, harness, claim):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(drop=(claim,)))
    assert rejected_with(response, "missing-claim")


def test_lifetime_too_long_is_rejected(mock_client, harness):
    now = int(time.time())
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(iat=now, exp=now + 3600))
    assert rejected_with(response, "lifetime-too-long")


@pytest.mark.parametrize("claims", [{"turn": 7}, {"anon": "false"}, {"sub": 42}, {"iat": "now"}])
def test_claim_of_the_wrong_type_is_malformed(mock_client, harness, claims):
    response = mock_client.get("/users/alice/orders", headers=harness.bearer(**claims))
    assert rejected_with(response, "malformed")


def test_rejection_is_recorded_with_its_reason(mock_client, harness):
    mock_client.get("/users/alice/orders", headers=harness.bearer("get_profile"))
    (call,) = mock_client.get("/_calls").get_json()["calls"]
    assert (call["tool"], call["status"], call["reason"]) == ("get_orders", 401, "wrong-audience")


def test_pyjwt_errors_map_most_specific_first():
    # InvalidSignatureError is also a DecodeError: it must not be reported as malformed.
    assert reason_for(jwt.InvalidSignatureError()) == "bad-signature"
    assert reason_for(jwt.DecodeError()) == "malformed"
    assert reason_for(jwt.MissingRequiredClaimError("turn")) == "missing-claim"
    assert reason_for(jwt.InvalidIssuedAtError()) == "malformed"


def test_every_reason_is_a_rejection():
    assert len(set(REASONS)) == len(REASONS)
    with pytest.raises(ValueError):
        Rejected("no-such-reason")


# Tools that require the person's approval: a call is refused unless its assertion carries an `approval` claim.

ORDER = "place_order"


@pytest.fixture
def approving(harness):
    """A strict mock told that place_order requires the person's approval."""
    return create_app([harness.issuer], requires_approval=[ORDER]).test_client()


def test_an_approved_call_of_a_tool_that_requires_approval_is_accepted(approving, harness):
    response = approving.post(f"/tools/{ORDER}/echo", json={"item": "milk"},
                              headers=harness.bearer(ORDER, approval="apr-1"))
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["claims"]["approval"] == "apr-1"


@pytest.mark.parametrize("approval", [None, "", 7, True, ["apr-1"]], ids=["absent", "empty", "number", "true", "list"])
def test_a_call_without_approval_is_rejected_for_a_tool_that_requires_it(approving, harness, approval):
    claims = {} if approval is None else {"approval": approval}
    response = approving.post(f"/tools/{ORDER}/echo", json={}, headers=harness.bearer(ORDER, **claims))
    assert rejected_with(response, "missing-approval")


def test_a_null_approval_is_no_approval(approving, harness):
    response = approving.post(f"/tools/{ORDER}/echo", json={}, headers=harness.bearer(ORDER, approval=None))
    assert rejected_with(response, "missing-approval")


def test_other_tools_need_no_approval(approving, harness):
    assert approving.get("/users/alice/orders", headers=harness.bearer()).status_code == 200
    assert approving.get("/tools/look/echo", headers=harness.bearer("look")).status_code == 200


def test_an_approval_does_not_excuse_any_other_check(approving, harness):
    # The approval is checked last: an expired or misdirected assertion is refused for what is wrong with it.
    now = int(time.time())
    expired = harness.bearer(ORDER, approval="apr-1", iat=now - 100, exp=now - 70)
    assert rejected_with(approving.post(f"/tools/{ORDER}/echo", headers=expired), "expired")
    elsewhere = harness.bearer("look", approval="apr-1")
    assert rejected_with(approving.post(f"/tools/{ORDER}/echo", headers=elsewhere), "wrong-audience")


def test_a_missing_approval_is_recorded_with_its_reason(approving, harness):
    approving.post(f"/tools/{ORDER}/echo", json={}, headers=harness.bearer(ORDER))
    (call,) = approving.get("/_calls").get_json()["calls"]
    assert (call["tool"], call["status"], call["reason"], call["sub"]) == (ORDER, 401, "missing-approval", None)


def test_a_mock_not_told_takes_a_call_without_approval(mock_client, harness):
    assert mock_client.post(f"/tools/{ORDER}/echo", json={}, headers=harness.bearer(ORDER)).status_code == 200


# Tools that take each assertion once: a `jti` taken before is refused until its assertion has expired.

def test_a_single_use_tool_refuses_an_assertion_taken_before_and_forgets_it_once_expired(harness, monkeypatch):
    client = create_app([harness.issuer], single_use=["refund"]).test_client()
    token = harness.auth(harness.token("refund"))
    assert client.post("/tools/refund/echo", headers=token).status_code == 200
    assert rejected_with(client.post("/tools/refund/echo", headers=token), "replayed")
    assert client.get("/users/alice/orders", headers=token).status_code == 401  # another tool: another audience
    plain = harness.auth(harness.token())
    assert [client.get("/users/alice/orders", headers=plain).status_code for _ in range(2)] == [200, 200]
    verifier = client.application.extensions["mock_backend.verifier"]
    assert len(verifier._taken) == 1
    later = time.time() + 3600  # an hour on: the taken jti has expired, and is forgotten at the next call
    monkeypatch.setattr("mock_backend.verify.time.time", lambda: later)
    verifier._take({"jti": "fresh", "exp": later + 30})
    assert list(verifier._taken) == ["fresh"]


def test_an_algorithm_outside_the_pinned_ones_is_refused_and_an_unknown_pin_is_a_value_error(harness):
    client = create_app([harness.issuer], algorithms=["RS256"]).test_client()
    assert rejected_with(client.get("/users/alice/orders", headers=harness.bearer()), "bad-algorithm")
    assert client.get("/users/alice/orders", headers=harness.bearer(alg="RS256")).status_code == 200
    with pytest.raises(ValueError, match="an algorithm to pin is one of ES256, EdDSA, RS256"):
        create_app([harness.issuer], algorithms=["HS256"])
