"""Each operation of a real-world-shaped document becomes the definition it should, or says exactly why not."""
import json

import pytest

from service import limits
from service.catalogue import RULES
from tests.importing.conftest import document, rules, written

PETSTORE = document("petstore.yaml")
COMMERCE = document("commerce.json")
CYCLES = document("cycles.yaml")
UNSUPPORTED = document("unsupported.json")


def test_the_pet_store_maps_operation_by_operation(importer):
    ops = importer.preview(PETSTORE)
    assert {key: op["status"] for key, op in ops.items()} == {
        "GET /pets": "ready", "POST /pets": "ready", "GET /pets/{petId}": "ready", "PUT /pets/{petId}": "ready",
        "DELETE /pets/{petId}": "ready", "HEAD /pets/{petId}": "skipped"}
    assert ops["GET /pets"]["definition"] == {
        "name": "listPets", "display_name": "List all pets",
        "description": "List all pets\n\nPets in the store, newest first. Use it when the person asks what pets "
                       "are available.",
        "method": "GET", "url": "https://api.petstore.example.com/v1/pets", "scope": "shared", "project": None,
        "parameters": [
            {"name": "limit", "type": "number", "location": "query", "required": False,
             "description": "How many items to return at one time (max 100). Format: int32."},
            {"name": "status", "type": "string", "location": "query", "required": False,
             "description": 'Where the pet is in the adoption process. One of: "available", "pending", "sold".'},
        ]}
    # Nothing left out silently: the header and the query array are each reported (the API key once, for the
    # whole document: test_document_level_notes_are_said_once).
    assert rules(ops["GET /pets"], "not_carried") == [
        ("header.X-Request-Id", "header-not-carried"), ("query.tags", "type-location-mismatch")]
    assert ops["GET /pets"]["not_carried"][1]["message"] == "This type cannot ride in that location."
    assert ops["GET /pets"]["action"] == "register" and ops["GET /pets"]["errors"] == []


def test_a_json_body_becomes_body_parameters_without_the_read_only_ones(importer):
    create = importer.preview(PETSTORE)["POST /pets"]
    assert create["definition"]["parameters"] == [
        {"name": "name", "type": "string", "location": "body", "required": True, "description": "The pet's name"},
        {"name": "tag", "type": "string", "location": "body", "required": False, "description": ""},
        {"name": "photo_urls", "type": "array", "element_type": "string", "location": "body", "required": False,
         "description": ""},
        {"name": "age", "type": "number", "location": "body", "required": False, "description": ""},
    ]


def test_path_level_parameters_and_server_variables_are_used(importer):
    show = importer.preview(PETSTORE)["GET /pets/{petId}"]["definition"]
    assert show["url"] == "https://api.petstore.example.com/v1/pets/{petId}"  # {environment} at its default
    assert show["parameters"] == [{"name": "petId", "type": "string", "location": "path", "required": True,
                                   "description": "The id of the pet"}]


def test_a_method_a_tool_cannot_have_is_skipped_with_the_rule(importer):
    head = importer.preview(PETSTORE)["HEAD /pets/{petId}"]
    assert rules(head) == [("method", "method-unsupported")]
    assert head["errors"][0]["message"] == "The method must be one of GET, POST, PUT, PATCH, or DELETE."


@pytest.mark.parametrize("server, expected", [
    (1, "https://sandbox.petstore.example.com/v1"),
    ("https://sandbox.petstore.example.com/v1/", "https://sandbox.petstore.example.com/v1"),
    ("https://{environment}.petstore.example.com/v1", "https://api.petstore.example.com/v1"),
    ("http://127.0.0.1:9999/mock", "http://127.0.0.1:9999/mock"),
])
def test_the_server_can_be_chosen(importer, server, expected):
    ops = importer.preview(PETSTORE, server=server)
    assert ops["GET /pets"]["definition"]["url"] == expected + "/pets"


@pytest.mark.parametrize("server", [2, -1, "ftp://files.example.com", "/relative"])
def test_a_server_that_is_neither_listed_nor_absolute_is_refused(importer, server):
    response = importer.post(document=PETSTORE, server=server)
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "server"
    assert response.get_json()["code"] == "server-unknown"


def test_the_subject_parameter_makes_a_tool_per_user(importer):
    ops = importer.preview(COMMERCE, subject_parameter="userId")
    orders = ops["GET /users/{userId}/orders"]
    assert orders["status"] == "ready"
    definition = orders["definition"]
    assert (definition["scope"], definition["url"]) == (
        "per_user", "https://api.cornershop.example/v2/users/{subject}/orders")
    assert definition["parameters"] == [
        {"name": "subject", "type": "string", "location": "path", "required": True},
        {"name": "status", "type": "string", "location": "query", "required": False,
         "description": 'open or shipped. One of: "open", "shipped".'},
    ]
    cart = ops["POST /users/{userId}/cart"]["definition"]
    assert cart["parameters"][1] == {"name": "product_ids", "type": "array", "element_type": "string",
                                     "location": "body", "required": True,
                                     "description": "Ids of the products to add, such as p1"}
    assert ops["GET /users/{userId}/profile"]["definition"]["scope"] == "per_user"  # a path item by $ref
    search = ops["GET /products"]
    assert search["definition"]["scope"] == "shared"
    assert search["not_carried"] == []  # `security: []` overrides the document's own
    assert search["definition"]["parameters"][1]["type"] == "number"  # 3.1's ["number", "null"]


def test_without_a_subject_parameter_the_person_is_an_ordinary_parameter(importer):
    orders = importer.preview(COMMERCE)["GET /users/{userId}/orders"]["definition"]
    assert orders["scope"] == "shared"
    assert orders["parameters"][0] == {"name": "userId", "type": "string", "location": "path", "required": True,
                                       "description": "The customer's id"}


def test_a_subject_parameter_no_operation_has_is_refused(importer):
    response = importer.post(document=COMMERCE, subject_parameter="customerId")
    assert response.status_code == 422
    assert response.get_json()["errors"] == [{
        "field": "subject_parameter", "rule": "subject-parameter-unknown",
        "message": "No operation of the document has a parameter of this name to carry the subject."}]


def test_schemas_that_refer_to_themselves_import_and_a_ref_loop_is_refused(importer):
    ops = importer.preview(CYCLES)
    assert ops["GET /categories"]["status"] == ops["GET /categories/{categoryId}"]["status"] == "ready"
    create = ops["POST /categories"]
    assert create["status"] == "ready"
    assert [p["name"] for p in create["definition"]["parameters"]] == ["name", "keywords"]
    assert rules(create, "not_carried") == [("body.parent", "nested-object-not-carried")]
    move = ops["POST /categories/{categoryId}/move"]
    assert move["status"] == "refused"
    assert rules(move) == [("$ref #/components/schemas/Move", "ref-loop")]
    assert move["errors"][0]["message"].startswith("This $ref leads back to itself")


def test_what_the_spec_cannot_express_is_refused_or_reported(importer):
    ops = importer.preview(UNSUPPORTED, server="https://billing.example.com")
    listing = ops["GET /invoices"]
    assert listing["tool"] == "list_invoices"  # made to fit the name rule
    assert (listing["status"], rules(listing)) == ("refused", [("header.X-Tenant", "header-not-carried")])
    assert rules(listing, "not_carried") == [("query.filter", "schema-not-carried"),
                                             ("query.page[size]", "parameter-name-format")]
    create = ops["POST /invoices"]
    assert (create["status"], rules(create)) == ("refused", [("body.lines", "array-of-structures-not-carried")])
    assert rules(create, "not_carried") == [
        ("cookie.session", "cookie-not-carried"), ("body.address", "nested-object-not-carried"),
        ("body.due", "schema-not-carried")]
    assert [p["name"] for p in create["definition"]["parameters"]] == ["customer", "metadata"]
    assert create["definition"]["parameters"][1]["type"] == "object"  # a free-form map is an object
    assert rules(ops["PUT /invoices/{invoiceId}/pdf"]) == [("body", "body-not-json")]
    note = ops["POST /invoices/{invoiceId}/notes"]
    assert (note["status"], rules(note, "not_carried")) == ("ready", [("body", "body-not-json")])
    assert note["partial"] == [{"field": "body", "rule": "body-not-json", "message": RULES["body-not-json"]}]
    assert listing["partial"] == create["partial"] == []  # refused: nothing to mark
    assert rules(ops["GET /customers/{customer-id}"]) == [
        ("parameters[0].name (path.customer-id)", "parameter-name-format")]
    assert rules(ops["GET /customers"]) == [("description", "description-required")]
    assert ops["GET /customers"]["errors"][0]["message"] == "A tool needs a description, written for the model."
    assert rules(ops["POST /customers"]) == [("$ref https://schemas.example.com/crm.json#/Customer", "ref-remote")]
    assert ops["OPTIONS /invoices/{invoiceId}/pdf"]["status"] == "skipped"


def test_a_relative_server_of_a_pasted_document_needs_a_server(importer):
    ops = importer.preview(UNSUPPORTED)
    assert ("server", "server-required") in rules(ops["POST /invoices/{invoiceId}/notes"])


def document_with(paths: dict, **top) -> str:
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
                       "servers": [{"url": "https://api.example.com"}], "paths": paths, **top})


def operation(operation_id: str | None, summary: str = "Does a thing", **more) -> dict:
    return {**({"operationId": operation_id} if operation_id else {}), "summary": summary,
            "responses": {"200": {"description": "ok"}}, **more}


def test_two_chosen_operations_with_one_name_are_both_refused_and_choosing_one_resolves_it(importer):
    text = document_with({"/a": {"get": operation("fetch")}, "/b": {"get": operation("fetch")}})
    ops = importer.preview(text)
    assert [(op["status"], rules(op)) for op in ops.values()] == [
        ("refused", [("name", "operation-name-collision")])] * 2
    ops = importer.preview(text, operations=["get /b"])
    assert (ops["GET /a"]["status"], ops["GET /b"]["status"]) == ("skipped", "ready")
    assert rules(ops["GET /a"]) == [("operation", "operation-not-chosen")]


def test_operations_are_chosen_by_operation_id_or_method_and_path(importer):
    text = document_with({"/a": {"get": operation("one"), "post": operation("two")}, "/b": {"get": operation(None)}})
    ops = importer.preview(text, operations=["two", "GET /b"])
    assert {k: (op["status"], op["tool"]) for k, op in ops.items()} == {
        "GET /a": ("skipped", "one"), "POST /a": ("ready", "two"), "GET /b": ("ready", "get_b")}


def test_a_choice_that_matches_no_operation_is_refused(importer):
    response = importer.post(document=document_with({"/a": {"get": operation("one")}}),
                             operations=["one", "DELETE /a", "nope"])
    assert response.status_code == 422
    body = response.get_json()
    assert (body["code"], body["message"]) == ("operation-unknown", RULES["operation-unknown"])
    assert [(e["field"], e["rule"]) for e in body["errors"]] == [
        ("operations[1]", "operation-unknown"), ("operations[2]", "operation-unknown")]


def test_an_operation_id_is_chosen_as_written_whatever_its_characters(importer):
    # petstore-expanded's ids have spaces; one of them reads like a method and a path.
    text = document_with({"/pets/all": {"get": operation("find pet by id"), "delete": operation("delete /pets")},
                          "/pets": {"get": operation("findPets")}})
    ops = importer.preview(text, operations=["find pet by id", "delete /pets", "get /pets"])
    assert {k: op["status"] for k, op in ops.items()} == {
        "GET /pets/all": "ready", "DELETE /pets/all": "ready", "GET /pets": "ready"}
    response = importer.post(document=text, operations=["Find pet by id", "find  pet by id"])
    assert (response.status_code, response.get_json()["code"]) == (422, "operation-unknown")
    assert [e["field"] for e in response.get_json()["errors"]] == ["operations[0]", "operations[1]"]


def test_a_long_description_is_cut_to_the_limit(importer):
    text = document_with({"/a": {"get": operation("one", description="word " * 2000)}})
    description = importer.preview(text)["GET /a"]["definition"]["description"]
    assert len(description) == limits.MAX_DESCRIPTION_CHARS and description.endswith("…")


def test_names_are_made_to_fit_the_name_rule_once():
    from service.importing.operations import Operation, tool_name

    def name(operation_id, method="GET", path="/x"):
        return tool_name(Operation(method, path, operation_id, {}, {}))

    assert name("pets.list-all") == "pets_list_all"
    assert name("2fa/verify") == "_2fa_verify"
    assert name(None, "DELETE", "/users/{userId}/orders") == "delete_users_userId_orders"
    assert name("x" * 100) == "x" * limits.MAX_TOOL_NAME_CHARS


def test_a_document_with_too_many_operations_is_refused_whole(importer):
    paths = {f"/p{i}": {"get": operation(f"op{i}")} for i in range(limits.MAX_IMPORT_OPERATIONS + 1)}
    response = importer.post(document=document_with(paths))
    assert response.status_code == 422
    assert response.get_json()["code"] == "too-many-operations"


def test_a_preview_writes_nothing(importer, api):
    before = written(api)
    importer.preview(PETSTORE)
    importer.preview(COMMERCE, subject_parameter="userId")
    assert written(api) == before == ([], [])


CONSEQUENTIAL = """
openapi: 3.1.0
info: {title: Orders, version: "1"}
servers: [{url: "https://api.shop.example.com"}]
paths:
  /orders:
    get: {operationId: listOrders, summary: List orders, x-openai-isConsequential: false,
          responses: {"200": {description: ok}}}
    post: {operationId: placeOrder, summary: Place an order, x-openai-isConsequential: true,
           responses: {"200": {description: ok}}}
  /orders/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: showOrder, summary: Show an order, responses: {"200": {description: ok}}}
    delete: {operationId: cancelOrder, summary: Cancel an order, x-openai-isConsequential: "yes",
             responses: {"200": {description: ok}}}
"""


def test_an_operation_marked_consequential_is_a_tool_that_requires_approval(importer, api):
    ops = importer.preview(CONSEQUENTIAL)
    assert ops["POST /orders"]["status"] == "ready"
    assert ops["POST /orders"]["definition"]["requires_approval"] is True
    # Marked false, or not marked: an ordinary tool (the preview names only what differs from the defaults).
    assert "requires_approval" not in ops["GET /orders"]["definition"]
    assert "requires_approval" not in ops["GET /orders/{id}"]["definition"]

    importer.apply(CONSEQUENTIAL, operations=["placeOrder", "listOrders"])
    drafts = {name: api("GET", f"/v1/tools/{name}").get_json()["draft"]["definition"]
              for name in ("placeOrder", "listOrders")}
    assert (drafts["placeOrder"]["requires_approval"], drafts["listOrders"]["requires_approval"]) == (True, False)
    assert drafts["placeOrder"]["runs_at_session_start"] is False  # an import never makes a session-start tool


def test_a_consequential_mark_that_is_not_a_boolean_refuses_the_operation(importer):
    cancel = importer.preview(CONSEQUENTIAL)["DELETE /orders/{id}"]
    assert (cancel["status"], rules(cancel)) == ("refused", [("x-openai-isConsequential", "field-type")])
    assert cancel["errors"][0]["message"] == "This field has the wrong type."


BY_METHOD = """
openapi: 3.0.3
info: {title: Orders, version: "1"}
servers: [{url: "https://api.shop.example.com"}]
paths:
  /orders:
    get: {operationId: listOrders, summary: List orders, responses: {"200": {description: ok}}}
    post: {operationId: placeOrder, summary: Place an order, responses: {"200": {description: ok}}}
  /orders/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: exportOrder, summary: Export, x-openai-isConsequential: true,
          responses: {"200": {description: ok}}}
    put: {operationId: updateOrder, summary: Update, responses: {"200": {description: ok}}}
    patch: {operationId: noteOrder, summary: Note, responses: {"200": {description: ok}}}
    delete: {operationId: cancelOrder, summary: Cancel, x-openai-isConsequential: false,
             responses: {"200": {description: ok}}}
"""


def test_approval_follows_gpt_actions_and_the_preview_says_why(importer, api):
    ops = {op["operation_id"]: op for op in importer.preview(BY_METHOD).values()}
    expected = {"listOrders": (False, "approval-reading-method"), "placeOrder": (True, "approval-by-method"),
                "exportOrder": (True, "approval-marked"), "updateOrder": (True, "approval-by-method"),
                "noteOrder": (True, "approval-by-method"), "cancelOrder": (False, "approval-marked-off")}
    for name, (required, rule) in expected.items():
        assert ops[name]["status"] == "ready", name
        assert ops[name]["approval"] == {"required": required, "rule": rule, "why": RULES[rule]}, name
        assert ops[name]["definition"].get("requires_approval", False) is required, name

    importer.apply(BY_METHOD)
    drafts = {name: api("GET", f"/v1/tools/{name}").get_json()["draft"]["definition"] for name in expected}
    assert {name: d["requires_approval"] for name, d in drafts.items()} == {
        name: required for name, (required, _) in expected.items()}


def test_the_person_may_choose_the_approval_of_each_operation_in_the_request(importer, api):
    ops = importer.apply(BY_METHOD, requires_approval={"DELETE /orders/{id}": True, "placeOrder": False})
    assert ops["DELETE /orders/{id}"]["approval"]["rule"] == ops["POST /orders"]["approval"]["rule"] == (
        "approval-chosen")
    assert api("GET", "/v1/tools/cancelOrder").get_json()["draft"]["definition"]["requires_approval"] is True
    assert api("GET", "/v1/tools/placeOrder").get_json()["draft"]["definition"]["requires_approval"] is False
    assert api("GET", "/v1/tools/updateOrder").get_json()["draft"]["definition"]["requires_approval"] is True


@pytest.mark.parametrize("choice, field", [({"nothing": True}, "requires_approval.nothing"),
                                           ({"placeOrder": "yes"}, "requires_approval"),
                                           (["placeOrder"], "requires_approval")])
def test_an_approval_choice_that_does_not_fit_is_refused_and_nothing_is_written(importer, api, choice, field):
    response = importer.post(document=BY_METHOD, apply=True, requires_approval=choice)
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]
    assert api("GET", "/v1/tools").get_json()["tools"] == []


LOST_BODIES = """
openapi: 3.0.3
info: {title: Lost bodies, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /pet/{petId}/uploadImage:
    post:
      operationId: uploadFile
      summary: uploads an image
      parameters: [{name: petId, in: path, required: true, schema: {type: integer}}]
      requestBody: {content: {application/octet-stream: {schema: {type: string, format: binary}}}}
      responses: {"200": {description: ok}}
  /user/createWithList:
    post:
      operationId: createUsersWithListInput
      summary: Creates list of users with given input array
      requestBody: {content: {application/json: {schema: {type: array, items: {type: object}}}}}
      responses: {"200": {description: ok}}
  /{dataset}/{version}/records:
    post:
      operationId: perform_search
      summary: Provides search capability for the data set
      parameters:
        - {name: dataset, in: path, required: true, schema: {type: string}}
        - {name: version, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [criteria]
              properties: {criteria: {type: string}, start: {type: integer}}
      responses: {"200": {description: ok}}
"""


def test_a_lost_body_is_marked_partial_and_one_with_required_fields_refuses_the_operation(importer):
    ops = {op["operation_id"]: op for op in importer.preview(LOST_BODIES).values()}
    upload, users, search = ops["uploadFile"], ops["createUsersWithListInput"], ops["perform_search"]
    assert (upload["status"], rules(upload, "partial")) == ("ready", [("body", "body-not-json")])
    assert upload["partial"][0]["message"] == RULES["body-not-json"]
    assert (users["status"], rules(users, "partial")) == ("ready", [("body", "body-not-object")])
    assert users["partial"][0]["message"] == RULES["body-not-object"]
    assert (search["status"], rules(search)) == ("refused", [("body", "body-not-json"),
                                                             ("body.criteria", "body-field-required")])
    assert search["errors"][1]["message"] == RULES["body-field-required"]
    assert search["partial"] == []


def test_document_level_notes_are_said_once_above_the_operations(importer):
    answer = importer.post(document=PETSTORE).get_json()
    assert [(n["field"], n["rule"]) for n in answer["document"]["notes"]] == [
        ("security", "auth-not-carried"), ("servers", "servers-ignored")]
    assert answer["document"]["notes"][0]["message"] == RULES["auth-not-carried"]
    assert all(v["rule"] != "auth-not-carried" for op in answer["operations"] for v in op["not_carried"])
    # Only the operations chosen count: one without credentials of its own says nothing of them.
    text = document_with({"/a": {"get": operation("one")}})
    assert importer.post(document=text).get_json()["document"]["notes"] == []


@pytest.mark.parametrize("summary, name", [
    ("Find pet by ID.", "Find pet by ID"),
    ("Wait...", "Wait..."),
    ("Returns  the\n list", "Returns the list"),
    ("Searches the patent applications of the data set by any of the fields it holds, and more",
     "Searches the patent applications of the data set by any of…"),
    ("A" * 70, "A" * 59 + "…"),
])
def test_a_display_name_is_the_summary_without_added_punctuation_within_a_sane_length(importer, summary, name):
    op = importer.preview(document_with({"/a": {"get": operation("one", summary=summary)}}))["GET /a"]
    assert op["definition"]["display_name"] == name
    assert len(name) <= limits.MAX_IMPORTED_DISPLAY_NAME_CHARS
    assert summary.strip() in op["definition"]["description"]  # the whole summary stays for the model
