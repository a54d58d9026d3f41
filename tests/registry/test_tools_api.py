"""Registering and saving tools over the REST API: every rule, with its message, rule id and field."""
import pytest

from tests.registry.vectors import ACCEPTED, REFUSED, as_set

ORDERS = {
    "name": "get_orders", "display_name": "Customer orders", "description": "The signed-in customer's orders.",
    "method": "GET", "url": "https://api.example.com/users/{subject}/orders", "scope": "per_user",
    "parameters": [{"name": "subject", "type": "string", "location": "path"},
                   {"name": "status", "type": "string", "location": "query", "required": False}],
}


@pytest.mark.parametrize("vector", REFUSED, ids=[v["id"] for v in REFUSED])
def test_register_refuses_with_every_violation(api, vector):
    response = api("POST", "/v1/tools", vector["definition"])
    assert response.status_code == 422
    assert as_set(response.json["errors"]) == as_set(vector["violations"])
    assert api("GET", "/v1/tools").json["tools"] == []  # nothing changed


SAVE_REFUSED = [v for v in REFUSED if any(e["field"] != "name" for e in v["violations"])]


@pytest.mark.parametrize("vector", SAVE_REFUSED, ids=[v["id"] for v in SAVE_REFUSED])
def test_save_refuses_with_every_violation_and_keeps_the_draft(api, vector):
    definition = {**vector["definition"], "name": "get_orders"}
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    before = api("GET", "/v1/tools/get_orders").json
    response = api("PUT", "/v1/tools/get_orders/draft", definition)
    assert response.status_code == 422
    expected = [v for v in vector["violations"] if v["field"] != "name"]
    assert as_set(v for v in response.json["errors"] if v["field"] != "name") == as_set(expected)
    assert api("GET", "/v1/tools/get_orders").json == before


@pytest.mark.parametrize("vector", ACCEPTED, ids=[v["id"] for v in ACCEPTED])
def test_nearest_valid_definitions_are_registered(api, vector):
    response = api("POST", "/v1/tools", vector["definition"])
    assert response.status_code == 201, response.json
    assert response.json["draft"]["definition"]["name"] == vector["definition"]["name"]
    assert response.json["display_name"] == vector["definition"]["name"]  # blank label defaults to the name


def test_taken_name_is_409_with_the_spec_sentence(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    response = api("POST", "/v1/tools", {**ORDERS, "display_name": "Another"})
    assert response.status_code == 409
    assert response.json["errors"] == [
        {"field": "name", "rule": "name-taken", "message": "A tool with this name already exists."}]


def test_name_is_unique_across_org_wide_and_project_tools(api):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("POST", "/v1/tools", {**ORDERS, "project": "shop"}).status_code == 201
    response = api("POST", "/v1/tools", ORDERS)
    assert response.status_code == 409
    assert response.json["errors"][0]["rule"] == "name-taken"


def test_unknown_project_is_refused(api):
    response = api("POST", "/v1/tools", {**ORDERS, "project": "nowhere"})
    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "project"


def test_body_that_is_not_json_is_400(api):
    response = api.client.post("/v1/tools", data="{not json", headers={
        "Authorization": f"Bearer {api.key}", "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json["errors"][0]["rule"] == "malformed-body"


def test_name_cannot_change_on_save(api):
    api("POST", "/v1/tools", ORDERS)
    response = api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "name": "get_orders_v2"})
    assert response.status_code == 422
    assert [(e["field"], e["rule"]) for e in response.json["errors"]] == [("name", "name-immutable")]


def test_openapi_document_lists_the_registry(client):
    document = client.get("/openapi.json").json
    assert "/v1/tools/{name}/draft" in document["paths"]
    assert document["paths"]["/v1/tools/{name}/publish"]["post"]["summary"].startswith("Publish the draft")


def test_interactive_api_page_uses_no_cdn(client):
    page = client.get("/api").get_data(as_text=True)
    assert "/api/assets/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower() and "unpkg" not in page.lower()
    assert client.get("/api/assets/swagger-ui-bundle.js").status_code == 200
