"""End to end with a real OpenID provider (oidc-provider under Node, one process per run): the organization trusts
it, the provider issues an RFC 9068 access token for the project's MCP server as the resource, and that token opens a
conversation and runs a step against the mock backend as the person it names."""
import json

import pytest

from service.identity.resource import resource_url
from tests.identity.openid_provider import ProjectMcpSession
from tests.support.constants import SUBJECT_IN_PATH
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project


@pytest.fixture
def trusted(service, backend, openid_provider):
    """acme trusts the provider for its `shop` project's MCP server, the person being the token's `person` claim."""
    audience = resource_url(service.url, "shop", "acme")
    answer = service.api("PUT", "/v1/identity-providers/oidc", json={
        "issuer": openid_provider.issuer, "audience": audience, "subject_claim": "person",
        "entitlements_claim": "scope", "algorithms": ["RS256", "ES256"]})
    assert answer.status_code == 200, answer.text
    publish_project(service, [
        tool("get_orders", backend + "/users/{subject}/orders", scope="per_user", parameters=[SUBJECT_IN_PATH]),
        tool("add_to_cart", backend + "/tools/add_to_cart/echo", required_entitlement="cart:write"),
    ])
    return audience


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_a_token_the_provider_issued_opens_a_conversation_and_runs_a_step(service, openid_provider, trusted, alg):
    token = openid_provider.token(trusted, person="alice", scope="orders:read cart:write", alg=alg)
    conversation = Conversation(service, token)
    assert sorted(t["name"] for t in conversation.opened["tools"]) == ["add_to_cart", "get_orders"]
    results = conversation.step(conversation.turn(), ("get_orders", {"subject": "bob"}))
    assert json.loads(results[0]["output"])["subject"] == "alice"


def test_a_token_for_another_resource_opens_nothing(service, openid_provider, trusted):
    token = openid_provider.token(trusted + "-elsewhere", person="alice")
    assert service.as_session("POST", "/v1/conversations", token, json={"project": "shop"}).status_code == 401


def test_the_protected_resource_metadata_names_the_provider(service, openid_provider, trusted):
    answer = service.api("GET", "/.well-known/oauth-protected-resource/mcp/projects/shop?org=acme")
    assert answer.json()["resource"] == trusted
    assert answer.json()["authorization_servers"] == [openid_provider.issuer]


def test_a_token_the_provider_issued_opens_an_mcp_session(service, openid_provider, trusted):
    token = openid_provider.token(trusted, person="alice", scope="orders:read")
    session = ProjectMcpSession(service, token, "shop")
    assert session.opened.status_code == 200, session.opened.text
    assert [t["name"] for t in session.request("tools/list", {})["tools"]] == ["get_orders"]  # no cart:write
    called = session.request("tools/call", {"name": "get_orders", "arguments": {"subject": "bob"}})
    assert not called["isError"] and called["structuredContent"]["subject"] == "alice"


def test_the_mcp_servers_401_keeps_the_organization_the_client_was_given(service, trusted):
    answer = service.api("POST", "/mcp/projects/shop?org=acme", headers={"Authorization": ""},
                         json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{service.url}/.well-known/oauth-protected-resource/mcp/projects/shop?org=acme"')


def test_a_provider_token_names_no_project_of_another_organization(service, openid_provider, trusted):
    token = openid_provider.token(trusted, person="alice", scope="orders:read")
    assert ProjectMcpSession(service, token, "shop", org="globex").opened.status_code == 404
