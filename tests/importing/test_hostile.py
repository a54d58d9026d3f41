"""Hostile documents get a clear refusal and nothing is written: no tool, no draft, no audit record."""
import json

import pytest

from service import create_app
from service.config import Config
from service.http import app_config
from tests.importing.conftest import written
from tests.importing.test_document import billion_laughs
from tests.importing.test_fetch import serving
from tests.support.definitions import Api, make_org


def openapi(paths: dict, components: dict | None = None) -> str:
    return json.dumps({"openapi": "3.0.3", "info": {"title": "hostile", "version": "1"},
                       "servers": [{"url": "https://api.example.com"}], "paths": paths,
                       "components": components or {}})


def get(**more) -> dict:
    return {"get": {"operationId": "fetch", "summary": "Fetch", "responses": {"200": {"description": "ok"}},
                    **more}}


REF_LOOP = openapi({"/pets": get(parameters=[{"$ref": "#/components/parameters/A"}]),
                    "/a": {"$ref": "#/paths/~1b"}, "/b": {"$ref": "#/paths/~1a"}},
                   {"parameters": {"A": {"$ref": "#/components/parameters/B"},
                                   "B": {"$ref": "#/components/parameters/A"}}})
REMOTE_REF = openapi({
    "/pets": {"post": {"operationId": "addPet", "summary": "Add a pet", "responses": {"201": {"description": "ok"}},
                       "requestBody": {"content": {"application/json": {
                           "schema": {"$ref": "https://evil.example.com/pet.json#/Pet"}}}}}},
    "/owners": get(parameters=[{"$ref": "http://169.254.169.254/latest/meta-data#/x"}]),
    "/shops": {"$ref": "shops.yaml#/paths/~1shops"}})


@pytest.mark.parametrize("text, rule", [(billion_laughs(), "document-too-complex"),
                                        ("openapi: 3.1.0\npaths: &p {loop: *p}\n", "document-too-complex"),
                                        (json.dumps({"swagger": "2.0", "paths": {}}), "swagger-unsupported")])
def test_a_document_that_cannot_be_read_safely_is_refused_whole(api, text, rule):
    response = api("POST", "/v1/tools/import", json={"document": text, "apply": True})
    assert response.status_code == 422
    assert response.get_json()["errors"][0] == {"field": "document", "rule": rule,
                                                 "message": response.get_json()["errors"][0]["message"]}
    assert response.get_json()["code"] == rule
    assert written(api) == ([], [])


@pytest.mark.parametrize("text, expected", [
    (REF_LOOP, {"GET /pets": ("$ref #/components/parameters/A", "ref-loop"),
                "* /a": ("$ref #/paths/~1b", "ref-loop"), "* /b": ("$ref #/paths/~1a", "ref-loop")}),
    (REMOTE_REF, {"POST /pets": ("$ref https://evil.example.com/pet.json#/Pet", "ref-remote"),
                  "GET /owners": ("$ref http://169.254.169.254/latest/meta-data#/x", "ref-remote"),
                  "* /shops": ("$ref shops.yaml#/paths/~1shops", "ref-remote")}),
])
def test_operations_behind_a_ref_that_loops_or_leaves_the_document_are_refused(api, text, expected):
    response = api("POST", "/v1/tools/import", json={"document": text, "apply": True})
    assert response.status_code == 200
    found = {op["operation"]: (op["status"], [(e["field"], e["rule"]) for e in op["errors"]])
             for op in response.get_json()["operations"]}
    assert found == {key: ("refused", [violation]) for key, violation in expected.items()}
    assert written(api) == ([], [])


def test_fifty_megabytes_are_refused_by_the_body_cap_before_they_are_read(api):
    body = json.dumps({"document": "a" * 50_000_000, "apply": True})
    response = api.client.post("/v1/tools/import", data=body, headers={
        "Authorization": f"Bearer {api.key}", "Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.get_json()["code"] == "request-too-large"
    assert written(api) == ([], [])


def test_fifty_megabytes_under_a_raised_body_cap_are_refused_by_the_document_cap(database_url):
    app = create_app(Config(database_url=database_url, secret_key="s", max_request_bytes=64 * 1024 * 1024,
                            flask={"TESTING": True}))
    api = Api(app.test_client(), make_org(app_config(app), "acme")["admin"])
    response = api("POST", "/v1/tools/import", json={"document": "a" * 50_000_000, "apply": True})
    assert response.status_code == 422
    assert response.get_json()["code"] == "document-too-large"
    assert written(api) == ([], [])


def test_a_loopback_url_without_the_allow_list_is_refused(api):
    with serving() as base:
        response = api("POST", "/v1/tools/import", json={"url": f"{base}/openapi.json", "apply": True})
    assert response.status_code == 422
    assert response.get_json()["code"] == "url-address-denied"
    assert written(api) == ([], [])


def test_a_schema_whose_own_properties_are_not_a_mapping_takes_its_parts_fields(importer):
    """`properties: [1]` beside an `allOf` part with fields was a TypeError, a 500: it says nothing, as `required: x`
    does, and the part's fields are the body's."""
    body = {"properties": [1], "required": "x", "allOf": [{"type": "object", "properties": {"name": {"type": "string"}}}]}
    text = openapi({"/pets": {"post": {"operationId": "addPet", "summary": "Add", "responses": {"201": {
        "description": "ok"}}, "requestBody": {"content": {"application/json": {"schema": body}}}}}})
    operation = importer.preview(text)["POST /pets"]
    assert operation["status"] == "ready"
    assert [p["name"] for p in operation["definition"]["parameters"]] == ["name"]
