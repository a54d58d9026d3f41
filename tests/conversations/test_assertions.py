"""What the endpoint receives: a signed assertion an integrator verifies against the published JWKS."""
import json

import jwt
import requests

from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project

ECHO_TOOLS = ["echo_a", "echo_b"]


def echoed(result):
    assert "output" in result, result
    return json.loads(result["output"])


def authorization(backend, result):
    """The Authorization header the echo's request carried, from the mock's call record (the echo never shows it)."""
    calls = requests.get(f"{backend}/_calls", params={"tool": result["name"]}, timeout=5).json()["calls"]
    [call] = [c for c in calls if c["id"] == echoed(result)["call"]]
    return call["authorization"]


def verify_like_an_integrator(service, authorization, tool_name):
    """What a backend does: fetch {iss}/.well-known/jwks.json with PyJWKClient and check every claim."""
    token = authorization.removeprefix("Bearer ")
    client = jwt.PyJWKClient(f"{service.issuer}/.well-known/jwks.json", cache_keys=False)
    signing = client.get_signing_key_from_jwt(token)
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, signing.key, algorithms=["ES256"], audience=tool_name, issuer=service.issuer,
                        options={"require": ["exp", "iat", "iss", "aud", "sub", "jti"], "strict_aud": True})
    return header, claims


def setup(service, backend):
    tools = [tool(name, f"{backend}/tools/{name}/echo") for name in ECHO_TOOLS]
    tools.append(tool("echo_user", backend + "/tools/echo_user/echo/{subject}", scope="per_user",
                      parameters=[SUBJECT_IN_PATH]))
    publish_project(service, tools)


def test_every_call_carries_an_assertion_an_integrator_can_verify(service, backend):
    setup(service, backend)
    conversation = Conversation(service, service.session_token("alice"))
    turn = conversation.turn()
    results = conversation.step(turn, ("echo_a", {}), ("echo_b", {}), ("echo_a", {}))
    seen_jti = set()
    for result in results:
        header, claims = verify_like_an_integrator(service, authorization(backend, result), result["name"])
        assert header == {"alg": "ES256", "kid": header["kid"], "typ": "JWT"}
        assert set(claims) == {"iss", "aud", "sub", "anon", "turn", "iat", "exp", "jti"}
        assert claims["iss"] == service.issuer
        assert claims["aud"] == result["name"]
        assert claims["sub"] == "alice" and claims["anon"] is False
        assert claims["turn"] == turn
        assert claims["exp"] - claims["iat"] == 30
        assert claims["jti"] not in seen_jti
        seen_jti.add(claims["jti"])


def test_jwks_is_public_cacheable_and_complete(service):
    response = service.as_session("GET", "/orgs/acme/.well-known/jwks.json", token="")
    assert response.status_code == 200
    assert "max-age=300" in response.headers["Cache-Control"]
    keys = response.json()["keys"]
    assert keys and all({"kid", "alg", "use"} <= set(k) and k["use"] == "sig" for k in keys)
    assert all("d" not in k for k in keys)  # never the private part
    assert service.as_session("GET", "/orgs/nobody/.well-known/jwks.json", token="").status_code == 404


def test_turn_claim_is_shared_within_a_turn_and_differs_between_turns(service, backend):
    setup(service, backend)
    conversation = Conversation(service, service.session_token("alice"))
    first, second = conversation.turn(), conversation.turn()
    assert first != second
    in_first = [echoed(r)["claims"]["turn"] for r in conversation.step(first, ("echo_a", {}), ("echo_b", {}))]
    in_first += [echoed(r)["claims"]["turn"] for r in conversation.step(first, ("echo_a", {}))]
    in_second = [echoed(r)["claims"]["turn"] for r in conversation.step(second, ("echo_a", {}))]
    assert set(in_first) == {first} and set(in_second) == {second}


def test_rotation_keeps_earlier_assertions_verifiable_and_the_new_key_signs(service, backend):
    setup(service, backend)
    conversation = Conversation(service, service.session_token("alice"))
    turn = conversation.turn()
    before = authorization(backend, conversation.step(turn, ("echo_a", {}))[0])
    rotated = service.api("POST", "/v1/keys/rotate")
    assert rotated.status_code == 201
    after = authorization(backend, conversation.step(turn, ("echo_a", {}))[0])
    old_header, _ = verify_like_an_integrator(service, before, "echo_a")
    new_header, _ = verify_like_an_integrator(service, after, "echo_a")
    assert old_header["kid"] != new_header["kid"] == rotated.json()["kid"]
    # The session token signed by the old key still opens conversations.
    assert Conversation(service, conversation.token).id


def test_rotation_needs_an_admin_key(service):
    assert service.api("POST", "/v1/keys/rotate", key=service.agent_key).status_code == 403
    assert service.api("POST", "/v1/keys/rotate", key=service.backend_key).status_code == 403


def test_the_platform_forwards_no_credential_but_its_assertion(service, backend):
    setup(service, backend)
    token = service.session_token("alice")
    conversation = Conversation(service, token)
    result = conversation.step(conversation.turn(), ("echo_a", {}))[0]
    request = echoed(result)
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert "cookie" not in headers
    everything = json.dumps(request) + authorization(backend, result)
    assert token not in everything and service.admin_key not in everything and service.backend_key not in everything
    # The one credential is the call's own assertion, and the endpoint's answer (the model's input) never holds it.
    assert authorization(backend, result).removeprefix("Bearer ") not in result["output"]
