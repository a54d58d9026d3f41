"""Drafts and published versions: save in place, publish freezes, read-only versions, new drafts copy."""
from service.database import db
from service.models import ToolDraft, ToolVersion
from tests.registry.test_tools_api import ORDERS


def register(api, definition=ORDERS):
    response = api("POST", "/v1/tools", definition)
    assert response.status_code == 201, response.json
    return response


def test_saving_edits_the_one_draft_in_place(api):
    register(api)
    for description in ("First words.", "Second words.", "Third words."):
        assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": description}).status_code == 200
    with db.connection_context():
        assert ToolDraft.select().count() == 1
    tool = api("GET", "/v1/tools/get_orders").json
    assert tool["draft"]["definition"]["description"] == "Third words."
    assert tool["draft"]["revision"] == 4
    assert tool["versions"] == []


def test_publish_freezes_the_draft_into_version_one_then_two(api):
    register(api)
    assert api("POST", "/v1/tools/get_orders/publish").json == {"version": 1, "repinned": []}
    tool = api("GET", "/v1/tools/get_orders").json
    assert tool["draft"] is None
    assert [v["version"] for v in tool["versions"]] == [1]
    assert api("POST", "/v1/tools/get_orders/draft").status_code == 201
    assert api("POST", "/v1/tools/get_orders/publish").json == {"version": 2, "repinned": []}


def test_publish_without_a_draft_is_refused(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    response = api("POST", "/v1/tools/get_orders/publish")
    assert response.status_code == 409
    assert response.json["errors"][0]["rule"] == "no-draft"


def test_saving_after_publish_needs_a_new_draft(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    response = api("PUT", "/v1/tools/get_orders/draft", ORDERS)
    assert response.status_code == 409
    assert response.json["errors"][0]["message"] == "This tool has no draft. Start a new draft to change it."


def test_every_write_to_a_published_version_is_refused_and_the_row_is_unchanged(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    before = api("GET", "/v1/tools/get_orders/versions/1").json
    for method in ("PUT", "PATCH", "DELETE"):
        response = api(method, "/v1/tools/get_orders/versions/1", {**ORDERS, "description": "Changed."})
        assert response.status_code == 409
        assert response.json["errors"][0]["rule"] == "published-read-only"
    assert api("GET", "/v1/tools/get_orders/versions/1").json == before
    assert before["read_only"] is True


def test_the_database_itself_refuses_to_update_a_published_version(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    with db.connection_context():
        try:
            ToolVersion.update(definition={"tampered": True}).execute()
        except Exception as error:  # the engine's own error type differs between SQLite and PostgreSQL
            assert "immutable" in str(error)
        else:
            raise AssertionError("an UPDATE of a published version went through")
        assert ToolVersion.get().definition["description"] == ORDERS["description"]


def test_new_draft_copies_the_latest_published_version(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    api("POST", "/v1/tools/get_orders/draft")
    api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Version two."})
    api("POST", "/v1/tools/get_orders/publish")
    draft = api("POST", "/v1/tools/get_orders/draft").json["draft"]
    assert draft["definition"]["description"] == "Version two."
    assert draft["based_on"] == 2


def test_only_one_draft_at_a_time(api):
    register(api)
    response = api("POST", "/v1/tools/get_orders/draft")
    assert response.status_code == 409
    assert response.json["errors"][0]["rule"] == "draft-exists"


def test_display_name_changes_on_a_published_tool_without_a_new_version(api):
    register(api)
    api("POST", "/v1/tools/get_orders/publish")
    response = api("PATCH", "/v1/tools/get_orders", {"display_name": "Orders (all)"})
    assert response.status_code == 200
    assert response.json["display_name"] == "Orders (all)"
    assert [v["version"] for v in response.json["versions"]] == [1]
    assert api("GET", "/v1/tools/get_orders/versions/1").json["definition"]["name"] == "get_orders"


def test_blank_display_name_defaults_to_the_tool_name(api):
    register(api)
    assert api("PATCH", "/v1/tools/get_orders", {"display_name": ""}).json["display_name"] == "get_orders"


def test_stale_if_match_is_412_and_changes_nothing(api):
    first = register(api)
    stale = first.headers["ETag"]
    fresh = api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Newer."}, headers={"If-Match": stale})
    assert fresh.status_code == 200
    response = api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Lost update."},
                   headers={"If-Match": stale})
    assert response.status_code == 412
    assert api("GET", "/v1/tools/get_orders").json["draft"]["definition"]["description"] == "Newer."
    assert fresh.headers["ETag"] != stale


def test_save_without_if_match_goes_through(api):
    register(api)
    assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Blind save."}).status_code == 200
