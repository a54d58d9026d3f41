"""A provider's access token, verified by THREATS.md's rules: one test per refusal, named for it, and what a good
token grants (the subject and entitlements from the configured claims)."""
import time

import jwt
import pytest

from service.identity import ProviderSettings, ProviderTokenError, verify_access_token
from service.identity.key_sets import parse_key_set
from tests.identity.stub_provider import AUDIENCE, StubProvider, _public_jwk


@pytest.fixture(scope="module")
def stub():
    provider = StubProvider()
    yield provider
    provider.close()


def settings(stub, **overrides) -> ProviderSettings:
    return ProviderSettings(**{"name": "corp", "issuer": stub.issuer, "audience": AUDIENCE,
                               "algorithms": ("RS256", "ES256"), **overrides})


def verify(stub, token, now=None, **overrides):
    keys = parse_key_set({"keys": [_public_jwk(stub.keys[kid][0], kid, stub.keys[kid][1]) for kid in stub.published]})
    return verify_access_token(token, settings(stub, **overrides), keys.get, time.time() if now is None else now)


def refused(stub, token, **overrides) -> str:
    with pytest.raises(ProviderTokenError) as caught:
        verify(stub, token, **overrides)
    return caught.value.reason


def test_a_good_token_grants_its_subject_and_scope_as_entitlements(stub):
    claims = verify(stub, stub.token("alice", scope="orders:read cart:write"))
    assert (claims.subject, claims.entitlements) == ("alice", ("orders:read", "cart:write"))


def test_entitlements_may_be_an_array_under_another_claim(stub):
    claims = verify(stub, stub.token("alice", roles=["reports:read", "cart:write"]), entitlements_claim="roles")
    assert claims.entitlements == ("reports:read", "cart:write")


def test_the_subject_comes_from_the_named_claim(stub):
    assert verify(stub, stub.token("client-1", person="bob"), subject_claim="person").subject == "bob"


@pytest.mark.parametrize("typ", ["at+jwt", "application/at+jwt", "JWT", "jwt"])
def test_rfc_9068_and_plain_jwt_types_are_taken(stub, typ):
    assert verify(stub, stub.token(typ=typ)).subject == "alice"


def test_an_ec_key_verifies_es256(stub):
    assert verify(stub, stub.token(kid="ec-1")).subject == "alice"


def test_alg_none_is_refused(stub):
    unsigned = jwt.encode({"iss": stub.issuer, "aud": AUDIENCE, "sub": "alice", "iat": int(time.time()),
                           "exp": int(time.time()) + 60}, None, algorithm="none",
                          headers={"typ": "at+jwt", "kid": "rsa-1"})
    assert refused(stub, unsigned) == "bad-algorithm"
    assert refused(stub, unsigned.replace(unsigned.split(".")[0], jwt.utils.base64url_encode(
        b'{"alg":"None","typ":"at+jwt","kid":"rsa-1"}').decode())) == "bad-algorithm"


def test_hs256_keyed_with_the_public_key_is_refused(stub):
    import base64
    import hashlib
    import hmac

    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public_pem = stub.rsa.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    header = jwt.utils.base64url_encode(b'{"alg":"HS256","typ":"at+jwt","kid":"rsa-1"}').decode()
    signing_input = header + "." + stub.token().split(".")[1]
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    forged = signing_input + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
    assert refused(stub, forged) == "bad-algorithm"


def test_an_algorithm_the_configuration_does_not_name_is_refused(stub):
    assert refused(stub, stub.token(kid="ec-1"), algorithms=("RS256",)) == "bad-algorithm"


def test_a_key_used_for_another_algorithm_is_refused(stub):
    header = jwt.utils.base64url_encode(b'{"alg":"RS256","typ":"at+jwt","kid":"ec-1"}').decode()
    assert refused(stub, header + "." + stub.token().split(".", 1)[1]) == "bad-algorithm"


def test_another_audience_is_refused(stub):
    assert refused(stub, stub.token(audience="https://elsewhere.example/api")) == "wrong-audience"


def test_an_audience_list_is_refused(stub):
    assert refused(stub, stub.token(audience=[AUDIENCE, "https://elsewhere.example/api"])) == "wrong-audience"


def test_expired_token_is_refused(stub):
    assert refused(stub, stub.token(issued_at=time.time() - 700, lifetime=600)) == "expired"


def test_a_token_issued_in_the_future_is_refused(stub):
    assert refused(stub, stub.token(issued_at=time.time() + 600)) == "not-yet-valid"


def test_another_issuer_is_refused(stub):
    assert refused(stub, stub.token(issuer="https://evil.example")) == "wrong-issuer"


def test_unknown_key_is_refused(stub):
    other = StubProvider(own_keys=True)
    try:
        assert refused(stub, other.token(kid="never-published")) == "unknown-key"
    finally:
        other.close()


def test_a_token_without_a_kid_is_refused(stub):
    token = jwt.encode({"sub": "alice"}, stub.rsa, algorithm="RS256", headers={"typ": "at+jwt"})
    assert refused(stub, token) == "unknown-key"


def test_a_token_signed_by_another_key_under_a_published_kid_is_refused(stub):
    other = StubProvider(own_keys=True)
    try:
        assert refused(stub, other.token(kid="rsa-1")) == "bad-signature"
    finally:
        other.close()


@pytest.mark.parametrize("claim", ["exp", "iat", "aud", "iss"])
def test_a_missing_required_claim_is_refused(stub, claim):
    assert refused(stub, stub.token(drop=(claim,))) == "missing-claim"


def test_a_missing_subject_is_refused(stub):
    assert refused(stub, stub.token(drop=("sub",))) == "missing-claim"


def test_a_lifetime_over_a_day_is_refused(stub):
    assert refused(stub, stub.token(lifetime=86_400 * 2)) == "lifetime-too-long"


@pytest.mark.parametrize("typ", ["toolgate-session+jwt", "id_token+jwt", "dpop+jwt"])
def test_another_type_is_refused(stub, typ):
    assert refused(stub, stub.token(typ=typ)) == "wrong-type"


@pytest.mark.parametrize("member", ["jwk", "jku", "x5u", "x5c", "crit"])
def test_an_embedded_or_pointed_to_key_is_refused(stub, member):
    assert refused(stub, stub.token(headers={member: "https://evil.example/keys"})) == "forbidden-header"


@pytest.mark.parametrize("subject", ["..", "", "a\nb", "x" * 257])
def test_a_subject_that_breaks_the_subject_rule_is_refused(stub, subject):
    assert refused(stub, stub.token(subject)) == "bad-subject"


@pytest.mark.parametrize("scope", [7, {"a": 1}, ["ok", 3]])
def test_entitlements_that_are_not_claims_are_refused(stub, scope):
    assert refused(stub, stub.token(scope=scope)) == "bad-entitlements"


@pytest.mark.parametrize("token", ["", "a.b", "a.b.c", "x" * 20_000])
def test_what_is_not_a_token_is_refused(stub, token):
    assert refused(stub, token) == "malformed"
