"""Tenants never see each other; roles have exactly the powers the contract gives them."""
import hashlib

import pytest

from service.database import db
from service.models import ApiKey
from tests.registry.test_tools_api import ORDERS


def test_another_organizations_tool_is_404_and_never_listed(api, other_api):
    api("POST", "/v1/tools", ORDERS)
    api("POST", "/v1/projects", {"name": "shop"})
    for method, path in [("GET", "/v1/tools/get_orders"), ("PUT", "/v1/tools/get_orders/draft"),
                         ("POST", "/v1/tools/get_orders/publish"), ("PATCH", "/v1/tools/get_orders"),
                         ("GET", "/v1/projects/shop"), ("POST", "/v1/projects/shop/publish")]:
        response = other_api(method, path, ORDERS if method in ("PUT", "PATCH") else None)
        assert response.status_code == 404, (method, path)
    assert other_api("GET", "/v1/tools").json["tools"] == []
    assert other_api("GET", "/v1/projects").json["projects"] == []


def test_another_organizations_published_version_is_404(api, other_api):
    api("POST", "/v1/tools", ORDERS)
    api("POST", "/v1/tools/get_orders/publish")
    assert other_api("GET", "/v1/tools/get_orders/versions/1").status_code == 404


def test_the_same_tool_name_may_exist_in_two_organizations(api, other_api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert other_api("POST", "/v1/tools", ORDERS).status_code == 201


def test_agent_keys_register_save_and_start_drafts_but_never_publish(api, keys):
    agent = keys["agent"]
    assert api("POST", "/v1/tools", ORDERS, key=agent).status_code == 201
    assert api("PUT", "/v1/tools/get_orders/draft", ORDERS, key=agent).status_code == 200
    assert api("POST", "/v1/tools/get_orders/publish", key=agent).status_code == 403
    api("POST", "/v1/projects", {"name": "shop"}, key=agent)
    api("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": "draft"}]}, key=agent)
    assert api("POST", "/v1/projects/shop/publish", key=agent).status_code == 403
    assert api("GET", "/v1/tools/get_orders").json["versions"] == []
    api("POST", "/v1/tools/get_orders/publish")
    assert api("POST", "/v1/tools/get_orders/draft", key=agent).status_code == 201


@pytest.mark.parametrize("method,path", [("GET", "/v1/tools"), ("POST", "/v1/tools"), ("GET", "/v1/projects")])
def test_backend_keys_get_403_on_the_registry(api, keys, method, path):
    assert api(method, path, ORDERS if method == "POST" else None, key=keys["backend"]).status_code == 403


@pytest.mark.parametrize("credential", ["", "tgk_nope_nope", "tgk_", "Basic abc", "not-a-key"])
def test_bad_credentials_are_401(client, credential):
    response = client.get("/v1/tools", headers={"Authorization": f"Bearer {credential}"} if credential else {})
    assert response.status_code == 401
    assert response.json["code"] == "unauthorized"


def test_a_key_with_a_wrong_secret_is_401(api, keys):
    prefix = keys["admin"].rsplit("_", 1)[0]
    assert api("GET", "/v1/tools", key=f"{prefix}_wrongsecret").status_code == 401


def test_keys_are_stored_hashed(api, keys):
    with db.connection_context():
        rows = list(ApiKey.select())
    stored = " ".join(f"{r.key_id} {r.secret_hash}" for r in rows)
    for key in keys.values():
        secret = key.split("_", 2)[2]
        assert secret not in stored
        assert hashlib.sha256(secret.encode()).hexdigest() in stored
