"""POST /v1/tools/import: preview, apply as drafts in one transaction with one audit record, never publish."""
import pytest

from service.catalogue import RULES
from service.database import db
from service.http import app_config
from service.models import Tool
from service.records import audit
from tests.importing.conftest import document, rules, written
from tests.support.definitions import Api, make_org

PETSTORE = document("petstore.yaml")
COMMERCE = document("commerce.json")
READY_PETS = ["listPets", "createPets", "showPetById", "updatePet", "deletePet"]


def test_apply_writes_each_ready_operation_as_a_draft_and_never_publishes(importer, api):
    ops = importer.apply(PETSTORE)
    assert [op["tool"] for op in ops.values() if op["status"] == "created"] == READY_PETS
    assert ops["HEAD /pets/{petId}"]["status"] == "skipped"
    for name in READY_PETS:
        tool = api("GET", f"/v1/tools/{name}").get_json()
        assert tool["versions"] == [] and tool["draft"]["revision"] == 1
        created = next(op for op in ops.values() if op["tool"] == name)["definition"]
        registration = {k: v for k, v in created.items() if k not in ("display_name", "project")}
        assert tool["draft"]["definition"] == {"requires_approval": False, **registration,
                                               "runs_at_session_start": False, "required_entitlement": None}
        assert tool["display_name"] == created["display_name"]


def test_the_audit_trail_records_one_import(importer, api, app):
    importer.apply(PETSTORE)
    _, records = written(api)
    assert [(r["action"], r["object"]["type"], r["object"]["name"]) for r in records] == [
        ("import", "openapi-document", "Swagger Petstore 1.0.0")]
    assert records[0]["actor"]["role"] == "admin"
    with db.connection_context():
        assert audit.verify().ok


def test_only_the_chosen_operations_are_written(importer, api):
    ops = importer.apply(PETSTORE, operations=["listPets", "GET /pets/{petId}"])
    assert sorted(op["tool"] for op in ops.values() if op["status"] == "created") == ["listPets", "showPetById"]
    assert written(api)[0] == ["listPets", "showPetById"]


def test_a_taken_name_is_refused_and_the_rest_is_written(importer, api):
    registered = api("POST", "/v1/tools", json={"name": "listPets", "description": "Mine.", "method": "GET",
                                                "url": "https://example.com/pets"})
    assert registered.status_code == 201
    ops = importer.apply(PETSTORE)
    assert (ops["GET /pets"]["status"], rules(ops["GET /pets"])) == ("refused", [("name", "name-taken")])
    assert ops["GET /pets"]["errors"][0]["message"] == "A tool with this name already exists."
    assert ops["POST /pets"]["status"] == "created"
    assert api("GET", "/v1/tools/listPets").get_json()["draft"]["definition"]["url"] == "https://example.com/pets"


def test_importing_again_refuses_every_taken_name_and_writes_nothing(importer, api):
    importer.apply(PETSTORE)
    before = written(api)
    ops = importer.apply(PETSTORE)
    assert {op["status"] for op in ops.values() if op["operation"] != "HEAD /pets/{petId}"} == {"refused"}
    assert written(api) == before


def test_update_existing_starts_a_new_draft_of_a_published_tool(importer, api):
    importer.apply(PETSTORE, operations=["listPets", "deletePet"])
    assert api("POST", "/v1/tools/listPets/publish").status_code == 201
    ops = importer.apply(PETSTORE, operations=["listPets", "deletePet"], update_existing=True, server=1)
    listing, deleting = ops["GET /pets"], ops["DELETE /pets/{petId}"]
    assert (listing["status"], listing["action"]) == ("created", "new-draft")
    tool = api("GET", "/v1/tools/listPets").get_json()
    assert tool["draft"]["based_on"] == 1
    assert tool["draft"]["definition"]["url"] == "https://sandbox.petstore.example.com/v1/pets"
    # A tool that still has its draft keeps it: the import refuses rather than overwrite work in progress.
    assert (deleting["status"], rules(deleting)) == ("refused", [("name", "draft-exists")])
    assert api("GET", "/v1/tools/deletePet").get_json()["draft"]["definition"]["url"].startswith("https://api.")


def test_update_existing_does_not_move_a_tool_between_projects(importer, api):
    assert api("POST", "/v1/projects", json={"name": "pets"}).status_code == 201
    importer.apply(PETSTORE, operations=["listPets"])
    api("POST", "/v1/tools/listPets/publish")
    ops = importer.preview(PETSTORE, operations=["listPets"], update_existing=True, project="pets")
    assert rules(ops["GET /pets"]) == [("project", "project-immutable")]


def test_drafts_can_belong_to_a_project(importer, api):
    assert api("POST", "/v1/projects", json={"name": "pets"}).status_code == 201
    importer.apply(PETSTORE, project="pets")
    assert [t["name"] for t in api("GET", "/v1/tools?project=pets").get_json()["tools"]] == sorted(READY_PETS)


def test_an_unknown_project_is_refused(importer, api):
    response = importer.post(document=PETSTORE, project="nope", apply=True)
    assert response.status_code == 422
    assert response.get_json()["errors"] == [{"field": "project", "rule": "project-unknown",
                                              "message": "No project with this name exists in this organization."}]
    assert written(api) == ([], [])


def test_an_agent_may_import_drafts_and_a_backend_key_may_not(importer, api, keys):
    response = importer.post(key=keys["backend"], document=PETSTORE)
    assert response.status_code == 403
    response = importer.post(key=keys["agent"], document=PETSTORE, apply=True)
    assert response.status_code == 200
    _, records = written(api)
    assert [(r["action"], r["actor"]["kind"]) for r in records] == [("import", "agent")]
    assert api("POST", "/v1/tools/listPets/publish", key=keys["agent"]).status_code == 403


def test_another_organizations_tools_are_not_taken_names(app, importer, api):
    other = Api(app.test_client(), make_org(app_config(app), "globex")["admin"])
    assert other("POST", "/v1/tools/import", json={"document": PETSTORE, "apply": True}).status_code == 200
    ops = importer.apply(PETSTORE)
    assert ops["GET /pets"]["status"] == "created"


@pytest.mark.parametrize("body, expected", [
    ({}, [("document", "document-required")]),
    ({"document": "x", "url": "https://example.com/openapi.json"}, [("document", "document-required")]),
    ({"document": 42}, [("document", "field-type")]),
    ({"document": "x", "apply": "yes", "operations": "listPets", "server": True, "subject": "userId"},
     [("subject", "field-unknown"), ("apply", "field-type"), ("server", "field-type"),
      ("operations", "field-type")]),
    ({"document": "x", "operations": ["a", 1]}, [("operations", "field-type")]),
])
def test_a_request_that_does_not_fit_names_every_field(importer, api, body, expected):
    response = api("POST", "/v1/tools/import", json=body)
    assert response.status_code == 422
    assert [(e["field"], e["rule"]) for e in response.get_json()["errors"]] == expected
    assert written(api) == ([], [])


def test_a_body_that_is_not_json_is_a_400(api):
    response = api.client.post("/v1/tools/import", data="openapi: 3.0.0", headers={
        "Authorization": f"Bearer {api.key}", "Content-Type": "application/yaml"})
    assert response.status_code == 400


def test_a_document_that_cannot_be_read_is_a_422_on_document(importer):
    response = importer.post(document="openapi: [")
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "document-unreadable"
    assert body["errors"] == [{"field": "document", "rule": "document-unreadable",
                               "message": "The document is neither JSON nor YAML that can be read."}]


def test_the_answer_names_the_document_and_its_server(importer):
    body = importer.post(document=COMMERCE).get_json()
    assert body["document"] == {"openapi": "3.1.0", "title": "Corner Shop Commerce API", "version": "2025-05",
                                "server": "https://api.cornershop.example/v2", "notes": [
                                    {"field": "security", "rule": "auth-not-carried",
                                     "message": RULES["auth-not-carried"]}]}


def test_the_openapi_document_describes_the_route(api):
    spec = api.client.get("/openapi.json").get_json()
    route = spec["paths"]["/v1/tools/import"]["post"]
    assert set(route["responses"]) >= {"200", "422"}
    body = spec["components"]["schemas"]["Import"]["properties"]
    assert set(body) == {"document", "url", "server", "subject_parameter", "project", "operations", "apply",
                         "update_existing", "requires_approval"}


def test_a_tool_named_import_is_refused_but_one_registered_before_is_still_read_at_its_own_address(api):
    """`import` is a reserved name now (issue 36): /v1/tools/import is the import's route. A tool registered under it
    earlier keeps its name and is still read there (the import takes only POST)."""
    definition = {"description": "Imports.", "method": "GET", "url": "https://example.com/import"}
    refused = api("POST", "/v1/tools", json={"name": "import", **definition})
    assert refused.status_code == 422 and rules(refused.get_json()) == [("name", "name-reserved")]
    assert api("POST", "/v1/tools", json={"name": "old_import", **definition}).status_code == 201
    with db.connection_context():
        Tool.update(name="import").where(Tool.name == "old_import").execute()
    assert api("GET", "/v1/tools/import").get_json()["name"] == "import"
