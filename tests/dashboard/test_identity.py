"""The Identity screen over HTTP (admins): add a provider (its discovery read first, a refusal beside its field), test
a pasted token (what it maps to, or why it is refused), remove a provider; other roles have no such screen."""
import pytest

from tests.identity.stub_provider import AUDIENCE, stub_provider


@pytest.fixture
def provider():
    with stub_provider() as running:
        yield running


def add(admin, provider, **overrides):
    form = {"name": "corp", "issuer": provider.issuer, "audience": AUDIENCE, "subject_claim": "sub",
            "entitlements_claim": "scope", "algorithms": "RS256, ES256", **overrides}
    return admin.post("/identity", form)


def test_an_admin_adds_tests_and_removes_a_provider(service, admin, provider):
    page = add(admin, provider)
    assert page.text_of("flash") == "Added identity provider corp: its tokens now act as session tokens."
    assert provider.issuer in page.text
    tested = admin.post("/identity/test", {"token": provider.token("alice", scope="orders:read cart:write")})
    shown = " ".join(tested.text_of("tested").split())
    assert "Providercorp" in shown and "Subjectalice" in shown and "Entitlementsorders:read, cart:write" in shown
    refused = admin.post("/identity/test", {"token": provider.token("alice", audience="https://other.example")})
    assert "Refused. Its aud is not this provider's audience" in " ".join(refused.text_of("tested").split())
    page = admin.post("/identity/corp/remove")
    assert page.text_of("flash") == "Removed identity provider corp: its tokens are refused from now on."
    assert service.api("GET", "/v1/identity-providers").json()["identity_providers"] == []


def test_a_provider_that_cannot_be_read_is_refused_beside_its_issuer(admin, provider):
    provider.down = True
    page = add(admin, provider)
    assert page.status == 422
    assert page.error_at("f-issuer").startswith("Error: The provider's discovery document or key set could not be read")
    assert "answered HTTP 503" in page.error_at("f-issuer")


def test_broken_rules_show_beside_their_fields(admin, provider):
    page = add(admin, provider, name="a b", algorithms="HS256")
    assert set(page.errors()) == {"f-name", "f-algorithms"}
    assert provider.fetches == {}


def test_another_organizations_provider_is_untrusted_here(service, admin, provider):
    from tests.support.definitions import make_org

    globex = make_org(service.config, "globex")
    assert service.api("PUT", "/v1/identity-providers/corp", globex["admin"], json=provider.settings()).ok
    tested = admin.post("/identity/test", {"token": provider.token("alice")})
    assert "None of this organization's providers has its issuer" in tested.text_of("tested")


def test_an_empty_token_is_asked_for(admin):
    assert admin.post("/identity/test", {"token": " "}).error_at("f-token") == "Error: Paste an access token to test."


def test_an_agent_has_no_identity_screen(service, agent):
    assert agent.get("/identity").status == 403
    assert "/identity" not in agent.get("/tools").text
