"""Projects: pins, publishing cascades through pinned drafts atomically, project-specific tools."""
from service.database import db
from service.models import ProjectDraft, ToolDraft
from tests.registry.test_tools_api import ORDERS

SEARCH = {"name": "search_products", "description": "Products matching a query.", "method": "GET",
          "url": "https://api.example.com/products",
          "parameters": [{"name": "q", "type": "string", "location": "query"}]}


def setup_project(api):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert api("POST", "/v1/tools", SEARCH).status_code == 201


def test_publishing_a_project_publishes_the_drafts_it_pins_first(api):
    setup_project(api)
    api("POST", "/v1/tools/search_products/publish")
    api("POST", "/v1/tools/search_products/draft")
    pins = [{"tool": "get_orders", "version": "draft"}, {"tool": "search_products", "version": 1}]
    assert api("PUT", "/v1/projects/shop/draft", {"pins": pins}).status_code == 200
    assert api("POST", "/v1/projects/shop/publish").json == {
        "version": 1, "published": [{"tool": "get_orders", "version": 1}], "repinned": []}
    project = api("GET", "/v1/projects/shop").json
    assert project["draft"] is None
    assert project["versions"][0]["pins"] == [{"tool": "get_orders", "version": 1},
                                              {"tool": "search_products", "version": 1}]
    assert api("GET", "/v1/tools/get_orders").json["draft"] is None
    assert api("GET", "/v1/tools/search_products").json["draft"] is not None  # pinned by number: untouched


def test_publish_cascade_is_atomic_when_a_pinned_draft_is_invalid(api):
    setup_project(api)
    pins = [{"tool": "search_products", "version": "draft"}, {"tool": "get_orders", "version": "draft"}]
    api("PUT", "/v1/projects/shop/draft", {"pins": pins})
    with db.connection_context():  # a draft saved under an older rule set, now invalid
        draft = ToolDraft.select().join_from(ToolDraft, ToolDraft.tool.rel_model).where(
            ToolDraft.tool.rel_model.name == "get_orders").get()
        broken = {**draft.definition, "parameters": []}
        ToolDraft.update(definition=broken).where(ToolDraft.id == draft.id).execute()
    before = {name: api("GET", f"/v1/tools/{name}").json for name in ("get_orders", "search_products")}
    response = api("POST", "/v1/projects/shop/publish")
    assert response.status_code == 422
    assert {(e["field"], e["rule"]) for e in response.json["errors"]} == {
        ("pins[1].parameters", "per-user-needs-subject"), ("pins[1].url", "placeholder-needs-parameter")}
    for name, view in before.items():
        assert api("GET", f"/v1/tools/{name}").json == view
    project = api("GET", "/v1/projects/shop").json
    assert project["versions"] == [] and project["draft"]["pins"] == pins


def test_a_pinned_draft_that_is_gone_is_reported(api):
    """Publishing moves the pins of a draft it consumes (test_freezing.py); a pin left from before that, pointing at a
    draft that no longer exists, is still reported rather than published."""
    setup_project(api)
    api("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": "draft"}]})
    api("POST", "/v1/tools/get_orders/publish")
    with db.connection_context():
        ProjectDraft.update(pins=[{"tool": "get_orders", "version": "draft"}]).execute()
    response = api("POST", "/v1/projects/shop/publish")
    assert response.status_code == 422
    assert response.json["errors"][0] == {"field": "pins[0].version", "rule": "pin-no-draft",
                                          "message": "This tool has no draft to pin."}


def test_bad_pins_are_all_refused_at_once(api):
    setup_project(api)
    pins = [{"tool": "nope", "version": 1}, {"tool": "get_orders", "version": 7},
            {"tool": "search_products", "version": "latest"}, {"tool": "get_orders", "version": "draft"}]
    response = api("PUT", "/v1/projects/shop/draft", {"pins": pins})
    assert response.status_code == 422
    assert [(e["field"], e["rule"]) for e in response.json["errors"]] == [
        ("pins[0].tool", "pin-unknown-tool"), ("pins[1].version", "pin-unknown-version"),
        ("pins[2].version", "pin-version-format"), ("pins[3].tool", "pin-duplicate")]


def test_a_project_specific_tool_is_pinned_only_by_its_own_project(api):
    api("POST", "/v1/projects", {"name": "shop"})
    api("POST", "/v1/projects", {"name": "blog"})
    api("POST", "/v1/tools", {**SEARCH, "project": "shop"})
    response = api("PUT", "/v1/projects/blog/draft", {"pins": [{"tool": "search_products", "version": "draft"}]})
    assert response.status_code == 422
    assert response.json["errors"][0]["rule"] == "pin-other-project"
    assert api("PUT", "/v1/projects/shop/draft",
               {"pins": [{"tool": "search_products", "version": "draft"}]}).status_code == 200


def test_new_project_draft_copies_the_latest_pins(api):
    setup_project(api)
    api("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": "draft"}]})
    api("POST", "/v1/projects/shop/publish")
    project = api("POST", "/v1/projects/shop/draft").json
    assert project["draft"]["pins"] == [{"tool": "get_orders", "version": 1}]


def test_tools_can_be_listed_by_project(api):
    api("POST", "/v1/projects", {"name": "shop"})
    api("POST", "/v1/tools", {**SEARCH, "project": "shop"})
    api("POST", "/v1/tools", ORDERS)
    assert [t["name"] for t in api("GET", "/v1/tools?project=shop").json["tools"]] == ["search_products"]
    assert len(api("GET", "/v1/tools").json["tools"]) == 2
