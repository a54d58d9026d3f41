"""RFC 9728 metadata of a project's MCP server: the resource (from the configured public URL) and its organization's
providers as `authorization_servers`; the organization named by `org`, or the only one with such a project."""
import requests

from service.identity.resource import resource_metadata_url, www_authenticate
from tests.support.definitions import make_org

PATH = "/.well-known/oauth-protected-resource/mcp/projects/shop"


def test_the_metadata_names_the_resource_and_the_organizations_providers(service, provider):
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    assert service.api("PUT", "/v1/identity-providers/corp", json=provider.settings()).status_code == 200
    answer = requests.get(service.url + PATH, timeout=10, headers={"Host": "evil.example"})  # no credential needed
    assert answer.status_code == 200
    assert answer.json() == {"resource": f"{service.url}/mcp/projects/shop",
                             "authorization_servers": [provider.issuer], "bearer_methods_supported": ["header"],
                             "resource_name": "shop"}
    named = requests.get(service.url + PATH + "?org=acme", timeout=10).json()
    assert named["resource"] == f"{service.url}/mcp/projects/shop?org=acme"


def test_a_project_two_organizations_have_needs_the_org_named(service, provider):
    globex = make_org(service.config, "globex")
    for key in (service.admin_key, globex["admin"]):
        assert service.api("POST", "/v1/projects", key, json={"name": "shop"}).status_code == 201
    assert service.api("PUT", "/v1/identity-providers/corp", json=provider.settings()).status_code == 200
    assert requests.get(service.url + PATH, timeout=10).status_code == 404
    assert requests.get(service.url + PATH + "?org=globex", timeout=10).json()["authorization_servers"] == []
    assert requests.get(service.url + PATH + "?org=acme", timeout=10).json()["authorization_servers"] == [
        provider.issuer]


def test_an_unknown_project_or_organization_is_404(service):
    assert requests.get(service.url + PATH, timeout=10).status_code == 404
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    assert requests.get(service.url + PATH + "?org=nobody", timeout=10).status_code == 404


def test_the_401_header_of_a_project_mcp_server_points_at_the_metadata():
    assert www_authenticate("https://tools.example.com", "shop") == (
        'Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp/projects/shop"')
    assert resource_metadata_url("https://tools.example.com/", "shop", "acme") == (
        "https://tools.example.com/.well-known/oauth-protected-resource/mcp/projects/shop?org=acme")
