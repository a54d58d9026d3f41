"""The impact view: who pins a tool version, what publishing a draft would break, and diffs between versions."""
import pytest

from tests.support.definitions import tool

ORDERS = tool("get_orders", "/orders", parameters=[
    {"name": "status", "type": "string", "location": "query", "required": False}])
BREAKING = {**ORDERS, "method": "POST", "parameters": [{"name": "state", "type": "string", "location": "body"}]}


@pytest.fixture
def published(api):
    """get_orders v1, pinned by shop v1 (published) and by kiosk's draft; a new draft with breaking changes."""
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert api("POST", "/v1/tools/get_orders/publish").status_code == 201
    for project in ("shop", "kiosk"):
        assert api("POST", "/v1/projects", {"name": project}).status_code == 201
        assert api("PUT", f"/v1/projects/{project}/draft",
                   {"pins": [{"tool": "get_orders", "version": 1}]}).status_code == 200
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    assert api("POST", "/v1/tools/get_orders/draft").status_code == 201
    assert api("PUT", "/v1/tools/get_orders/draft", BREAKING).status_code == 200
    return api


def test_a_tool_version_lists_the_project_versions_that_pin_it(published):
    impact = published("GET", "/v1/tools/get_orders/versions/1/impact").json
    assert [(p["project"], p["version"]) for p in impact["project_versions"]] == [("shop", 1)]
    assert impact["project_drafts"] == ["kiosk"]
    assert published("POST", "/v1/projects/shop/draft").status_code == 201  # starts from v1's pins
    assert published("POST", "/v1/projects/shop/publish").status_code == 201
    impact = published("GET", "/v1/tools/get_orders/versions/1/impact").json
    assert [(p["project"], p["version"]) for p in impact["project_versions"]] == [("shop", 1), ("shop", 2)]
    assert published("GET", "/v1/tools/get_orders/versions/9/impact").status_code == 404


def test_the_draft_report_marks_every_breaking_change_against_the_latest_version(published):
    report = published("GET", "/v1/tools/get_orders/draft/impact").json
    assert report["against"] == 1 and report["breaking"] is True
    assert [(c["change"], c["parameter"], c["affects"]) for c in report["changes"]] == [
        ("method-changed", None, ["endpoint"]),
        ("parameter-renamed", "state", ["model", "endpoint"]),
        ("parameter-moved", "state", ["endpoint"]),
        ("parameter-made-required", "state", ["model"]),
    ]
    assert [p["project"] for p in report["latest_pinned_by"]] == ["shop"]
    assert report["draft_pinned_by"] == []
    assert published("PUT", "/v1/projects/kiosk/draft",
                     {"pins": [{"tool": "get_orders", "version": "draft"}]}).status_code == 200
    assert published("GET", "/v1/tools/get_orders/draft/impact").json["draft_pinned_by"] == ["kiosk"]


def test_a_safe_draft_reports_no_breaking_change(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    first = api("GET", "/v1/tools/get_orders/draft/impact").json
    assert (first["against"], first["changes"], first["breaking"]) == (None, [], False)
    assert api("POST", "/v1/tools/get_orders/publish").status_code == 201
    assert api("GET", "/v1/tools/get_orders/draft/impact").status_code == 409  # no draft to publish
    assert api("POST", "/v1/tools/get_orders/draft").status_code == 201
    assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": "Newest first."}).status_code == 200
    report = api("GET", "/v1/tools/get_orders/draft/impact").json
    assert report["breaking"] is False
    assert [c["change"] for c in report["changes"]] == ["description-changed"]


def test_a_readable_diff_between_any_two_versions(published):
    assert published("POST", "/v1/tools/get_orders/publish").status_code == 201
    diff = published("GET", "/v1/tools/get_orders/diff?from=1&to=2").json
    assert diff["from"] == 1 and diff["to"] == 2 and diff["breaking"] is True
    assert "--- get_orders v1" in diff["text"] and '+  "method": "POST",' in diff["text"]
    back = published("GET", "/v1/tools/get_orders/diff?from=2&to=1").json
    assert [c["change"] for c in back["changes"]][:2] == ["method-changed", "parameter-renamed"]
    same = published("GET", "/v1/tools/get_orders/diff?from=2&to=2").json
    assert (same["changes"], same["text"]) == ([], "")
    assert published("GET", "/v1/tools/get_orders/diff?from=1&to=draft").status_code == 404  # no draft now
    response = published("GET", "/v1/tools/get_orders/diff?from=one&to=2")
    assert response.status_code == 422 and response.json["errors"][0]["field"] == "from"
    assert published("GET", "/v1/tools/get_orders/diff?from=1&to=3").status_code == 404


def test_another_organizations_tool_is_not_found(published, other_api):
    for path in ("/v1/tools/get_orders/versions/1/impact", "/v1/tools/get_orders/draft/impact",
                 "/v1/tools/get_orders/diff?from=1&to=draft"):
        assert other_api("GET", path).status_code == 404


def test_requiring_approval_is_a_breaking_change_in_the_draft_report(published):
    assert published("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "requires_approval": True}).status_code == 200
    draft = published("GET", "/v1/tools/get_orders").json["draft"]["definition"]
    assert draft["requires_approval"] is True
    report = published("GET", "/v1/tools/get_orders/draft/impact").json
    assert report["breaking"] is True
    assert [(c["change"], c["before"], c["after"], c["affects"]) for c in report["changes"]] == [
        ("approval-changed", False, True, ["model", "endpoint"])]
