"""A trusted provider's access token acts as a session token wherever one is taken, through the one credential path:
opening a conversation, turns, steps, approvals; its subject and entitlements from the configured claims; refused
(401, the reason logged and not told) by every rule; refused at once when its provider is removed; and one
organization's provider grants nothing in another."""
import json
import time

import jwt
import pytest
import requests

from tests.identity.stub_provider import AUDIENCE, StubProvider
from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import make_org, tool
from tests.support.live import Conversation, publish_project
from tests.support.logs import captured_logs, log_lines

REFUSED = {"code": "invalid-session-token", "message": "The access token was refused.",
           "errors": [{"field": "", "rule": "invalid-session-token", "message": "The access token was refused."}]}


@pytest.fixture
def shop(service, backend, provider):
    """acme trusts the stub provider and publishes `shop`: a per-user tool, an entitled one, a consequential one."""
    answer = service.api("PUT", "/v1/identity-providers/corp", json=provider.settings())
    assert answer.status_code == 200, answer.text
    publish_project(service, [
        tool("get_orders", backend + "/users/{subject}/orders", scope="per_user", parameters=[SUBJECT_IN_PATH]),
        tool("add_to_cart", backend + "/tools/add_to_cart/echo", required_entitlement="cart:write"),
        tool("place_order", backend + "/tools/place_order/echo", method="POST", requires_approval=True),
    ])
    return provider


def test_a_provider_token_opens_a_conversation_and_runs_a_step_as_its_subject(service, shop):
    conversation = Conversation(service, shop.token("alice"))
    results = conversation.step(conversation.turn(), ("get_orders", {"subject": "bob"}))
    assert json.loads(results[0]["output"])["subject"] == "alice"


def test_entitlements_come_from_the_named_claim_as_a_string_or_an_array(service, shop):
    offered = lambda token: sorted(t["name"] for t in Conversation(service, token).opened["tools"])  # noqa: E731
    assert "add_to_cart" not in offered(shop.token(scope="orders:read"))
    assert "add_to_cart" in offered(shop.token(scope="orders:read cart:write"))
    service.api("PUT", "/v1/identity-providers/corp", json=shop.settings(entitlements_claim="roles"))
    assert "add_to_cart" in offered(shop.token(scope="", roles=["cart:write"]))


def test_the_person_holding_a_provider_token_decides_an_approval(service, shop):
    token = shop.token("alice")
    conversation = Conversation(service, token)
    held = conversation.step(conversation.turn(), ("place_order", {}))[0]["approval"]
    path = f"/v1/conversations/{conversation.id}/approvals/{held['id']}"
    decided = service.as_session("POST", path, token, json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    someone_else = service.as_session("GET", f"/v1/conversations/{conversation.id}/approvals", shop.token("bob"))
    assert someone_else.status_code == 404


def test_removing_the_provider_refuses_its_tokens_at_once(service, shop):
    token = shop.token("alice")
    conversation = Conversation(service, token)  # verified, and remembered
    assert service.api("DELETE", "/v1/identity-providers/corp").status_code == 204
    answer = service.as_session("POST", f"/v1/conversations/{conversation.id}/turns", token)
    assert answer.status_code == 401


def test_changing_the_provider_verifies_its_tokens_again(service, shop):
    token = shop.token("alice")
    conversation = Conversation(service, token)
    service.api("PUT", "/v1/identity-providers/corp", json=shop.settings(algorithms=["ES256"]))
    assert service.as_session("POST", f"/v1/conversations/{conversation.id}/turns", token).status_code == 401


def test_one_organizations_provider_grants_nothing_in_another(service, shop, backend):
    globex = make_org(service.config, "globex")
    as_globex = lambda method, path, **kw: requests.request(  # noqa: E731
        method, service.url + path, headers={"Authorization": f"Bearer {globex['admin']}"}, timeout=10, **kw)
    assert as_globex("POST", "/v1/projects", json={"name": "vault"}).status_code == 201
    token = shop.token("alice")
    assert service.as_session("POST", "/v1/conversations", token, json={"project": "vault"}).status_code == 404
    globex_token = requests.post(service.url + "/v1/session-tokens", timeout=10, json={"subject": "alice"},
                                 headers={"Authorization": f"Bearer {globex['backend']}"}).json()["token"]
    assert service.as_session("POST", "/v1/conversations", globex_token, json={"project": "shop"}).status_code == 404
    # globex trusting the same provider for its own audience does not let acme's tokens in, nor globex's into acme.
    assert as_globex("PUT", "/v1/identity-providers/corp", json=shop.settings(audience=AUDIENCE + "/globex")).ok
    acme_conversation = Conversation(service, token)
    globex_side = shop.token("alice", audience=AUDIENCE + "/globex")
    answer = service.as_session("GET", f"/v1/conversations/{acme_conversation.id}/tools", globex_side)
    assert answer.status_code == 404


def _refusal(service, token) -> tuple[requests.Response, list[dict]]:
    with captured_logs() as logs:
        answer = service.as_session("POST", "/v1/conversations", token, json={"project": "shop"})
    return answer, [line for line in log_lines(logs) if line.get("message") == "access token refused"]


def _forged_none(provider: StubProvider) -> str:
    return jwt.encode({"iss": provider.issuer, "aud": AUDIENCE, "sub": "alice", "iat": int(time.time()),
                       "exp": int(time.time()) + 60}, None, algorithm="none", headers={"typ": "at+jwt", "kid": "rsa-1"})


@pytest.mark.parametrize("forge, reason", [
    (_forged_none, "bad-algorithm"),
    (lambda p: p.token(audience="https://elsewhere.example/api"), "wrong-audience"),
    (lambda p: p.token(issued_at=time.time() - 3600), "expired"),
    (lambda p: StubProvider.token(p, issuer="https://idp.evil.example"), "untrusted-issuer"),
    (lambda p: p.token(kid="never-published"), "unknown-key"),
], ids=["alg-none", "other-audience", "expired", "untrusted-issuer", "unknown-key"])
def test_each_refusal_is_a_401_with_the_reason_in_the_log_not_the_answer(service, shop, forge, reason):
    answer, logged = _refusal(service, forge(shop))
    assert answer.status_code == 401
    assert answer.json() == REFUSED
    assert [line["reason"] for line in logged] == [reason]


def test_cached_keys_keep_verifying_while_the_provider_is_down(service, shop):
    shop.down = True
    assert Conversation(service, shop.token("alice", kid="ec-1")).id


def test_a_provider_whose_keys_were_never_read_and_cannot_be_is_a_503(service, shop):
    from service.dispatch import AddressGuard
    from service.identity import key_sets

    key_sets(AddressGuard(service.config.allowed_networks)).forget(f"{shop.issuer}/jwks")
    shop.down = True
    answer = service.as_session("POST", "/v1/conversations", shop.token("alice"), json={"project": "shop"})
    assert answer.status_code == 503
    assert answer.headers["Retry-After"] == "5"


def test_twenty_tokens_with_unknown_kids_cost_the_provider_at_most_two_key_set_fetches(service, shop):
    assert shop.key_set_fetches == 1  # read when the provider was added
    for n in range(20):
        answer = service.as_session("POST", "/v1/conversations", shop.token(kid=f"forged-{n}"), json={"project": "shop"})
        assert answer.status_code == 401
    assert shop.key_set_fetches <= 2


def test_a_nul_in_the_issuer_or_audience_is_refused_not_a_500_on_either_engine(tmp_path, database_url, provider):
    from tests.support.live import live_service

    with live_service(tmp_path, database_url=database_url) as service:
        assert service.api("PUT", "/v1/identity-providers/corp", json=provider.settings()).status_code == 200
        for token in (provider.token(issuer="https://idp.example/\x00"), provider.token(audience="x\x00")):
            answer, logged = _refusal(service, token)
            assert answer.status_code == 401
            assert [line["reason"] for line in logged] == ["untrusted-issuer"]
