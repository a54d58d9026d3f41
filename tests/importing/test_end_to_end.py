"""Imported drafts publish, are offered to the model with the right JSON Schema, and a step calls them on real
servers on 127.0.0.1, the subject filled from the session."""
import json

import pytest
import requests

from tests.importing.conftest import document
from tests.importing.petstore_server import pet_store
from tests.support.live import Conversation


@pytest.fixture
def store():
    with pet_store() as running:
        yield running


def import_and_publish(service, project: str, **body) -> dict[str, dict]:
    """Import into a new project, pin every created draft, publish the project; the operations by tool name."""
    assert service.api("POST", "/v1/projects", json={"name": project}).status_code == 201
    response = service.api("POST", "/v1/tools/import", json={**body, "project": project, "apply": True})
    assert response.status_code == 200, response.text
    ops = {op["tool"]: op for op in response.json()["operations"] if op["tool"]}
    pins = [{"tool": name, "version": "draft"} for name, op in ops.items() if op["status"] == "created"]
    assert service.api("PUT", f"/v1/projects/{project}/draft", json={"pins": pins}).status_code == 200
    published = service.api("POST", f"/v1/projects/{project}/publish")
    assert published.status_code == 201, published.text
    for pin in pins:
        assert [v["version"] for v in service.api("GET", f"/v1/tools/{pin['tool']}").json()["versions"]] == [1]
    return ops


def test_an_imported_commerce_api_is_per_user_end_to_end(service, backend):
    ops = import_and_publish(service, "shop", document=document("commerce.json"), server=backend,
                             subject_parameter="userId",
                             requires_approval={"POST /users/{userId}/cart": False})  # called without asking below
    assert {name for name, op in ops.items() if op["status"] == "created"} == {
        "search_products", "get_orders", "get_order", "get_profile", "add_to_cart"}
    alice = Conversation(service, service.session_token("alice"), project="shop")
    offered = {tool["name"]: tool for tool in alice.tools()}
    assert offered["get_orders"] == {
        "name": "get_orders",
        "description": "The customer's orders\n\nThe signed-in customer's recent orders, optionally only the open "
                       "or the shipped ones.",
        "parameters": {"type": "object", "additionalProperties": False, "required": [], "properties": {
            "status": {"type": "string", "description": 'open or shipped. One of: "open", "shipped".'}}}}
    assert offered["add_to_cart"]["parameters"] == {
        "type": "object", "additionalProperties": False, "required": ["product_ids"], "properties": {
            "product_ids": {"type": "array", "items": {"type": "string"},
                            "description": "Ids of the products to add, such as p1"}}}
    assert offered["search_products"]["parameters"]["properties"] == {
        "q": {"type": "string", "description": "Words to look for"},
        "max_price": {"type": "number", "description": "Highest price, in euros"}}
    assert all("subject" not in json.dumps(t["parameters"]) for t in offered.values())

    results = alice.step(alice.turn(),
                         ("get_orders", {"status": "open", "subject": "bob"}),
                         ("get_order", {"order_id": "o-2001"}),
                         ("get_profile", {}),
                         ("add_to_cart", {"product_ids": ["p1", "p1", "p4"]}),
                         ("search_products", {"q": "milk", "max_price": 2.5}))
    orders = json.loads(results[0]["output"])
    assert orders["subject"] == "alice" and [o["id"] for o in orders["orders"]] == ["o-1001"]
    assert results[1]["error"] == {"status": "error", "kind": "refused", "httpCode": 403}  # bob's order
    assert json.loads(results[2]["output"])["loyalty_tier"] == "gold"
    cart = json.loads(results[3]["output"])
    assert (cart["subject"], cart["total"]) == ("alice", 11.88)
    assert [p["id"] for p in json.loads(results[4]["output"])["products"]] == ["p1"]
    calls = requests.get(f"{backend}/_calls", timeout=5).json()["calls"]
    assert {(c["tool"], c.get("sub")) for c in calls} == {
        ("get_orders", "alice"), ("get_order", "alice"), ("get_profile", "alice"), ("add_to_cart", "alice"),
        ("search_products", "alice")}


def test_an_imported_pet_store_is_called_as_its_document_says(service, store):
    base, app = store
    ops = import_and_publish(service, "pets", document=document("petstore.yaml"), server=f"{base}/v1",
                             requires_approval={"createPets": False, "updatePet": False})
    assert ops["petExists"]["status"] == "skipped"
    bob = Conversation(service, service.session_token("bob"), project="pets")
    offered = {tool["name"]: tool["parameters"] for tool in bob.tools()}
    assert sorted(offered) == ["createPets", "deletePet", "listPets", "showPetById", "updatePet"]
    assert offered["createPets"] == {
        "type": "object", "additionalProperties": False, "required": ["name"], "properties": {
            "name": {"type": "string", "description": "The pet's name"}, "tag": {"type": "string"},
            "photo_urls": {"type": "array", "items": {"type": "string"}}, "age": {"type": "number"}}}
    assert offered["showPetById"]["required"] == ["petId"]

    results = bob.step(bob.turn(),
                       ("listPets", {"limit": 1, "status": "sold"}),
                       ("createPets", {"name": "Nibbles", "tag": "hamster", "photo_urls": ["https://p.example/n"]}),
                       ("showPetById", {"petId": "1"}),
                       ("updatePet", {"petId": "2", "vaccinated": True}),
                       ("listPets", {"tags": ["x"]}))
    assert json.loads(results[0]["output"]) == [{"id": 2, "name": "Rex", "tag": "dog", "status": "sold"}]
    assert json.loads(results[1]["output"])["name"] == "Nibbles"
    assert json.loads(results[2]["output"])["name"] == "Tom"
    assert json.loads(results[3]["output"])["vaccinated"] is True
    assert results[4]["error"]["kind"] == "invalid-arguments"  # `tags` was reported as not carried
    seen = {(r["method"], r["path"]): r for r in app.requests}
    assert seen[("GET", "/v1/pets")]["query"] == {"limit": ["1"], "status": ["sold"]}
    assert seen[("POST", "/v1/pets")]["json"] == {"name": "Nibbles", "tag": "hamster",
                                                  "photo_urls": ["https://p.example/n"]}
    assert seen[("POST", "/v1/pets")]["content_type"] == "application/json"
    assert seen[("PUT", "/v1/pets/2")]["json"] == {"vaccinated": True}
    assert {(r["claims"]["aud"], r["claims"]["sub"]) for r in app.requests} == {
        ("listPets", "bob"), ("createPets", "bob"), ("showPetById", "bob"), ("updatePet", "bob")}


def test_an_imported_catalogue_with_ref_cycles_is_called(service, store):
    base, app = store
    ops = import_and_publish(service, "catalogue", document=document("cycles.yaml"), server=f"{base}/v1",
                             operations=["createCategory"], requires_approval={"createCategory": False})
    assert ops["createCategory"]["status"] == "created"
    carol = Conversation(service, service.session_token("carol"), project="catalogue")
    result = carol.step(carol.turn(), ("createCategory", {"name": "Fish", "keywords": ["wet"]}))[0]
    assert json.loads(result["output"]) == {"id": 1, "name": "Fish", "keywords": ["wet"]}
    assert (app.requests[-1]["method"], app.requests[-1]["path"]) == ("POST", "/v1/categories")
    assert app.requests[-1]["claims"]["aud"] == "createCategory"
