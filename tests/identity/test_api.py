"""PUT, GET and DELETE /v1/identity-providers on both engines: the rules, discovery through the outbound guard, a
provider that cannot be read refused with the reason on `issuer`, uniqueness in the database, and every change an
audit record."""
import pytest

from service.config import Config
from tests.identity.stub_provider import AUDIENCE
from tests.support.constants import SECRET
from tests.support.databases import app_for
from tests.support.definitions import Api, make_org


@pytest.fixture
def allowed_config(database_url):
    """The service's config with loopback allowed, as `make run` allows it, so the stub provider can be reached."""
    return Config(database_url=database_url, secret_key=SECRET, flask={"TESTING": True},
                  allowed_networks=("127.0.0.0/8",))


@pytest.fixture
def admin(allowed_config):
    client = app_for(allowed_config).test_client()
    keys = make_org(allowed_config, "acme")
    api = Api(client, keys["admin"])
    api.keys = keys
    api.other = Api(client, make_org(allowed_config, "globex")["admin"])
    return api


def test_a_provider_is_added_listed_changed_and_removed_each_an_audit_record(admin, provider):
    added = admin("PUT", "/v1/identity-providers/corp", provider.settings())
    assert added.status_code == 200, added.json
    assert added.json["jwks_uri"] == f"{provider.issuer}/jwks"
    assert (added.json["subject_claim"], added.json["entitlements_claim"]) == ("sub", "scope")
    changed = admin("PUT", "/v1/identity-providers/corp", provider.settings(entitlements_claim="roles"))
    assert changed.json["revision"] == 2
    listed = admin("GET", "/v1/identity-providers").json["identity_providers"]
    assert [(p["name"], p["entitlements_claim"]) for p in listed] == [("corp", "roles")]
    assert admin("DELETE", "/v1/identity-providers/corp").status_code == 204
    assert admin("GET", "/v1/identity-providers").json["identity_providers"] == []
    assert admin("DELETE", "/v1/identity-providers/corp").status_code == 404
    records = admin("GET", "/v1/audit?object_type=provider").json["records"]
    assert [(r["action"], r["object"]["name"]) for r in records] == [
        ("provider-remove", "corp"), ("provider-change", "corp"), ("provider-add", "corp")]


def test_another_organization_sees_none_of_them(admin, provider):
    admin("PUT", "/v1/identity-providers/corp", provider.settings())
    assert admin.other("GET", "/v1/identity-providers").json["identity_providers"] == []
    assert admin.other("GET", "/v1/identity-providers/corp").status_code == 404
    assert admin.other("DELETE", "/v1/identity-providers/corp").status_code == 404


def test_only_an_admin_key_manages_providers(admin, provider):
    for role in ("agent", "backend"):
        assert admin("PUT", "/v1/identity-providers/corp", provider.settings(), key=admin.keys[role]).status_code == 403
        assert admin("GET", "/v1/identity-providers", key=admin.keys[role]).status_code == 403


def test_every_broken_rule_is_named_at_once_and_nothing_is_fetched(admin, provider):
    answer = admin("PUT", "/v1/identity-providers/a%20b", {
        "issuer": "ftp://x", "audience": "", "subject_claim": "has space", "entitlements_claim": 3,
        "algorithms": ["HS256", "none"]})
    assert answer.status_code == 422
    assert {(e["field"], e["rule"]) for e in answer.json["errors"]} == {
        ("name", "provider-name-format"), ("issuer", "issuer-format"), ("audience", "audience-format"),
        ("subject_claim", "claim-name-format"), ("entitlements_claim", "claim-name-format"),
        ("algorithms", "algorithms-format")}
    assert provider.fetches == {}


def test_the_platforms_own_issuer_cannot_be_a_provider(admin, allowed_config):
    answer = admin("PUT", "/v1/identity-providers/self", {"issuer": allowed_config.issuer("acme"), "audience": "x"})
    assert [(e["field"], e["rule"]) for e in answer.json["errors"]] == [("issuer", "issuer-platform")]


def test_a_provider_that_cannot_be_reached_is_refused_with_the_reason(admin, provider):
    provider.down = True
    answer = admin("PUT", "/v1/identity-providers/corp", provider.settings())
    assert answer.status_code == 422
    assert [(e["field"], e["rule"]) for e in answer.json["errors"]] == [("issuer", "issuer-unreachable")]
    assert "answered HTTP 503" in answer.json["message"]
    assert admin("GET", "/v1/identity-providers").json["identity_providers"] == []


def test_a_provider_outside_the_allowed_networks_is_refused_with_the_reason(database_url, provider):
    config = Config(database_url=database_url, secret_key=SECRET, flask={"TESTING": True})
    api = Api(app_for(config).test_client(), make_org(config, "acme")["admin"])
    answer = api("PUT", "/v1/identity-providers/corp", provider.settings())
    assert answer.status_code == 422
    assert answer.json["errors"][0]["field"] == "issuer"
    assert "127.0.0.1 is loopback" in answer.json["message"]
    assert provider.fetches == {}


def test_a_discovery_document_naming_another_issuer_is_refused(admin, provider):
    answer = admin("PUT", "/v1/identity-providers/corp", provider.settings(issuer=provider.issuer + "/"))
    assert [(e["field"], e["rule"]) for e in answer.json["errors"]] == [("issuer", "discovery-invalid")]


def test_a_key_set_without_a_key_for_the_configured_algorithms_is_refused(admin, provider):
    answer = admin("PUT", "/v1/identity-providers/corp", provider.settings(algorithms=["PS512"]))
    assert [(e["field"], e["rule"]) for e in answer.json["errors"]] == [("issuer", "key-set-invalid")]


def test_one_issuer_and_audience_is_trusted_once_across_organizations(admin, provider):
    assert admin("PUT", "/v1/identity-providers/corp", provider.settings()).status_code == 200
    for api, name in ((admin, "again"), (admin.other, "corp")):
        answer = api("PUT", f"/v1/identity-providers/{name}", provider.settings())
        assert answer.status_code == 409
        assert answer.json["errors"][0]["rule"] == "provider-taken"
    other_audience = admin.other("PUT", "/v1/identity-providers/corp", provider.settings(audience=AUDIENCE + "/globex"))
    assert other_audience.status_code == 200
