"""The dashboard's import page: paste, upload or address; a preview table; the ticked operations imported."""
import re

import requests

from service.catalogue import RULES
from tests.dashboard.client import COOKIE, Page
from tests.importing.conftest import document
from tests.importing.test_fetch import serving
from tests.importing.test_reimport import shop

PAGE = "/tools/new/import"


def rows(page: Page) -> dict[str, str]:
    """Each operation of the table → its status and reasons, as the page reads."""
    found = {}
    for row in re.findall(r'<tr id="(op-\d+)"', page.text):
        text = page.text_of(row)
        operation = re.match(r"(\S+ \S+)", text)[1]
        found[operation] = text
    return found


def ticked(page: Page) -> list[str]:
    return re.findall(r'name="operation" value="([^"]+)" id="op-\d+-choose"[^>]*checked', page.text)


def test_the_tools_screen_leads_to_the_import_page(admin):
    tools = admin.get("/tools")
    assert 'href="/tools/new/import"' in tools.text
    form = admin.get(PAGE)
    assert form.status == 200 and 'enctype="multipart/form-data"' in form.text


def test_a_pasted_document_is_previewed_then_the_ticked_operations_imported(service, admin):
    admin.get(PAGE)
    preview = admin.post(PAGE, {"document": document("petstore.yaml"), "op": "preview"})
    assert preview.status == 200
    table = rows(preview)
    assert list(table) == ["GET /pets", "POST /pets", "GET /pets/{petId}", "PUT /pets/{petId}",
                           "DELETE /pets/{petId}", "HEAD /pets/{petId}"]
    assert "Ready" in table["GET /pets"]
    assert RULES["auth-not-carried"] in preview.text_of("document-notes")  # said once, above the operations
    assert not any(RULES["auth-not-carried"] in row for row in table.values())
    assert "Not carried:" in table["GET /pets"]
    assert "header.X-Request-Id: A header parameter is not carried" in table["GET /pets"]
    assert "Skipped" in table["HEAD /pets/{petId}"]
    assert "method: The method must be one of GET, POST, PUT, PATCH, or DELETE." in table["HEAD /pets/{petId}"]
    assert ticked(preview) == ["GET /pets", "POST /pets", "GET /pets/{petId}", "PUT /pets/{petId}",
                               "DELETE /pets/{petId}"]
    assert service.api("GET", "/v1/tools").json()["tools"] == []  # a preview writes nothing

    done = admin.post(PAGE, [("document", document("petstore.yaml")), ("op", "import"),
                             ("operation", "GET /pets"), ("operation", "GET /pets/{petId}")])
    assert done.status == 200
    assert done.text_of("import-done").startswith("Imported 2 operations as drafts.")
    table = rows(done)
    assert "Created" in table["GET /pets"] and "Skipped" in table["POST /pets"]
    assert 'href="/tools/listPets/draft"' in done.text
    assert [t["name"] for t in service.api("GET", "/v1/tools").json()["tools"]] == ["listPets", "showPetById"]


def test_importing_with_nothing_ticked_says_so(admin):
    admin.get(PAGE)
    page = admin.post(PAGE, {"document": document("petstore.yaml"), "op": "import"})
    assert page.status == 422
    assert "Tick at least one operation to import." in page.text


def test_an_uploaded_file_is_previewed_and_kept_in_the_text_box(service, admin):
    admin.get(PAGE)
    response = requests.post(service.url + PAGE, headers={"Cookie": f"{COOKIE}={admin.cookie}"}, timeout=30,
                             data={"csrf_token": admin.csrf, "op": "preview", "subject_parameter": "userId"},
                             files={"file": ("commerce.json", document("commerce.json").encode(), "application/json")})
    assert response.status_code == 200
    page = Page(response.status_code, response.url, response.text)
    assert "per-user" in rows(page)["GET /users/{userId}/orders"]
    assert "Corner Shop Commerce API" in page.text_of("f-document")


def test_a_refusal_is_shown_beside_its_field_and_nothing_is_written(service, admin):
    admin.get(PAGE)
    page = admin.post(PAGE, {"document": "swagger: '2.0'\npaths: {}\n", "op": "preview"})
    assert page.status == 422
    assert page.error_at("f-document") == ("Error: Swagger 2.0 is not supported: convert the document to OpenAPI "
                                           "3.0 or 3.1 and import that.")
    page = admin.post(PAGE, {"document": document("commerce.json"), "subject_parameter": "customer", "op": "preview"})
    assert page.error_at("f-subject_parameter").startswith("Error: No operation of the document has a parameter")
    assert service.api("GET", "/v1/tools").json()["tools"] == []


def test_a_document_at_an_address_is_fetched_through_the_guard(admin):
    with serving() as base:
        admin.get(PAGE)
        page = admin.post(PAGE, {"url": f"{base}/openapi.json", "op": "preview", "subject_parameter": "userId"})
    assert page.status == 200
    assert f"{base}/shop/v2" in page.text


def test_an_agent_imports_drafts_from_the_page(service, agent):
    agent.get(PAGE)
    done = agent.post(PAGE, [("document", document("cycles.yaml")), ("op", "import"),
                             ("operation", "POST /categories")])
    assert "Created" in rows(done)["POST /categories"]
    tool = service.api("GET", "/v1/tools/createCategory").json()
    assert tool["draft"]["updated_by"].startswith("agent:agent:") and tool["versions"] == []


def test_a_re_import_shows_what_it_keeps_of_the_existing_tool(service, admin):
    definition = {"name": "placeOrder", "description": "Places an order.", "method": "POST",
                  "url": "https://api.shop.example.com/orders", "requires_approval": True}
    assert service.api("POST", "/v1/tools", json=definition).status_code == 201
    assert service.api("POST", "/v1/tools/placeOrder/publish").status_code == 201
    admin.get(PAGE)
    page = admin.post(PAGE, {"document": shop("false"), "op": "preview", "update_existing": "on"})
    assert page.status == 200
    row = rows(page)["POST /orders"]
    assert "(new draft)" in row and "Kept from the existing tool:" in row
    assert f"requires_approval: {RULES['approval-kept']}" in row


def approval_ticked(page: Page) -> list[str]:
    return re.findall(r'name="approval" value="([^"]+)" id="op-\d+-approval"[^>]*checked', page.text)


def test_the_preview_shows_each_approval_and_the_person_changes_it_before_importing(service, admin):
    admin.get(PAGE)
    preview = admin.post(PAGE, {"document": document("petstore.yaml"), "op": "preview"})
    # The importer's choice, as GPT Actions makes it: a GET goes out on its own, every other method asks.
    assert approval_ticked(preview) == ["POST /pets", "PUT /pets/{petId}", "DELETE /pets/{petId}"]
    assert RULES["approval-by-method"] in rows(preview)["DELETE /pets/{petId}"]
    assert RULES["approval-reading-method"] in rows(preview)["GET /pets"]

    # The person unticks DELETE's box and ticks GET's, then imports both.
    done = admin.post(PAGE, [("document", document("petstore.yaml")), ("op", "import"),
                             ("operation", "GET /pets"), ("operation", "DELETE /pets/{petId}"),
                             ("approval", "GET /pets")])
    assert done.status == 200
    definition = {name: service.api("GET", f"/v1/tools/{name}").json()["draft"]["definition"]
                  for name in ("listPets", "deletePet")}
    assert (definition["listPets"]["requires_approval"], definition["deletePet"]["requires_approval"]) == (
        True, False)
