"""A tool's History, Compare versions, the project versions that pin a version, and breaking changes at publish."""
import html
import re

import pytest

from service.dashboard import history
from tests.dashboard.client import Person
from tests.dashboard.test_editor import register

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

V1 = {
    "name": "hist_orders", "description": "Orders by id.", "method": "GET",
    "url": "https://api.example.com/orders/{order_id}",
    "parameters": [
        {"name": "order_id", "type": "string", "location": "path"},
        {"name": "status", "type": "string", "location": "query", "required": False},
        {"name": "limit", "type": "number", "location": "query"},
        {"name": "note", "type": "string", "location": "query"},
        {"name": "page", "type": "boolean", "location": "query", "required": False},
    ],
}
#: Every breaking change the issue names, and two that break nothing.
DRAFT = {
    **V1, "description": "Orders by id, newest first.", "method": "POST",
    "url": "https://api.example.com/v2/orders/{order}",
    "parameters": [
        {"name": "order", "type": "string", "location": "path"},  # renamed
        {"name": "status", "type": "string", "location": "body", "required": False},  # moved
        {"name": "limit", "type": "string", "location": "query"},  # retyped
        {"name": "page", "type": "boolean", "location": "query"},  # made required
        {"name": "extra", "type": "number", "location": "query", "required": False},  # added, optional
    ],  # note: removed
}
BREAKING = {"method-changed", "url-changed", "parameter-removed", "parameter-renamed", "parameter-moved",
            "parameter-retyped", "parameter-made-required"}
SAFE = {"parameter-added", "description-changed"}


def text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def listed(page, list_id: str) -> dict[str, str]:
    """A change list on a page: each change's kind → the text shown for it."""
    block = re.search(rf'<ul class="changes" id="{list_id}">(.*?)</ul>', page.text, re.S)[1]
    return {kind: text(item) for kind, item in
            re.findall(r'<li data-change-kind="([\w-]+)"[^>]*>(.*?)</li>', block, re.S)}


def history_rows(page) -> list[str]:
    return [text(row) for row in re.findall(r"<tr data-change=\"\d+\">(.*?)</tr>", page.text, re.S)]


@pytest.fixture(scope="module")
def orders(module_service, agent_module):
    """hist_orders: registered and published by an admin key, then a draft started and saved by an agent key;
    project hist_shop v1 pins version 1, and hist_shop's draft pins it too."""
    service = module_service
    assert service.api("POST", "/v1/tools", json=V1).status_code == 201
    assert service.api("POST", "/v1/tools/hist_orders/publish").status_code == 201
    assert agent_module.post("/tools/hist_orders/draft/new").status == 200
    etag = service.api("GET", "/v1/tools/hist_orders").json()["draft"]["etag"]
    saved = service.api("PUT", "/v1/tools/hist_orders/draft", service.agent_key, json=DRAFT,
                        headers={"If-Match": etag})
    assert saved.status_code == 200, saved.text
    assert service.api("POST", "/v1/projects", json={"name": "hist_shop"}).status_code == 201
    pins = {"pins": [{"tool": "hist_orders", "version": 1}]}
    assert service.api("PUT", "/v1/projects/hist_shop/draft", json=pins).status_code == 200
    assert service.api("POST", "/v1/projects/hist_shop/publish").status_code == 201
    assert service.api("POST", "/v1/projects/hist_shop/draft").status_code == 201
    return "hist_orders"


@pytest.fixture(scope="module")
def agent_module(module_service):
    person = Person(module_service.url)
    assert person.sign_in(module_service.agent_key).status == 200
    return person


def expected_history(service, tool: str) -> list[str]:
    """Who did what to the tool, newest first, as the rows should read after their time."""
    records = service.api("GET", f"/v1/tools/{tool}/history").json()["records"]
    keys = {r["actor"]["kind"]: r["actor"]["key_id"] for r in records}
    return [f"Agent agent key {keys['agent']} Saved the draft",
            f"Agent agent key {keys['agent']} Started a new draft from version 1",
            f"Person admin key {keys['person']} Published version 1",
            f"Person admin key {keys['person']} Registered the tool"]


def after_time(rows: list[str]) -> list[str]:
    return [row.split(" UTC ", 1)[1] for row in rows]


def test_a_tools_page_shows_who_did_what_and_when_newest_first(service, admin, orders):
    page = admin.get(f"/tools/{orders}/draft")
    assert after_time(history_rows(page)) == expected_history(service, orders)
    assert 'class="badge agent"' in page.text and 'class="badge person"' in page.text
    assert f'href="/tools/{orders}/history"' not in page.text  # every change is already on the page


def test_the_history_pages_through_every_change(service, admin, orders, monkeypatch):
    monkeypatch.setattr(history, "HISTORY_ON_TOOL_PAGE", 2)
    monkeypatch.setattr(history, "HISTORY_PAGE", 3)
    tool_page = admin.get(f"/tools/{orders}/draft")
    assert len(history_rows(tool_page)) == 2
    assert f'href="/tools/{orders}/history"' in tool_page.text  # there is more than the page shows
    page = admin.get(f"/tools/{orders}/history")
    older = re.search(r'href="([^"]+)" id="older-changes"', page.text)[1]
    last = admin.get(html.unescape(older))
    assert "Newest changes" in last.text and 'id="older-changes"' not in last.text
    assert [len(history_rows(page)), len(history_rows(last))] == [3, 1]
    assert after_time(history_rows(page) + history_rows(last)) == expected_history(service, orders)


def test_compare_shows_the_change_list_breaking_ones_flagged(service, admin, orders):
    page = admin.get(f"/tools/{orders}/compare?from=1&to=draft")
    assert page.status == 200
    api = service.api("GET", f"/v1/tools/{orders}/diff?from=1&to=draft").json()
    shown = listed(page, "change-list")
    assert set(shown) == BREAKING | SAFE
    for change in api["changes"]:
        assert change["message"] in shown[change["change"]]
        assert shown[change["change"]].startswith("Breaking" if change["breaking"] else "Safe")
    assert shown["parameter-removed"].endswith("Breaks the model and the endpoint.")
    assert shown["method-changed"].endswith("Breaks the endpoint.")
    assert shown["parameter-made-required"].endswith("Breaks the model.")
    assert "7 breaking changes" in page.text_of("compare-verdict")


def test_compare_shows_each_definition_line_by_line_with_added_and_removed_lines_marked(service, admin, orders):
    page = admin.get(f"/tools/{orders}/compare?from=1&to=draft")
    removed = [text(x) for x in re.findall(r'<del class="line removed">(.*?)</del>', page.text, re.S)]
    added = [text(x) for x in re.findall(r'<ins class="line added">(.*?)</ins>', page.text, re.S)]
    assert 'Removed: - "method": "GET",' in removed and 'Added: + "method": "POST",' in added
    assert 'Removed: - "name": "note",' in removed and 'Added: + "name": "extra",' in added
    # The page shows the API's unified diff whole, every line in order.
    api = service.api("GET", f"/v1/tools/{orders}/diff?from=1&to=draft").json()["text"]
    assert page.text_of("diff").replace("Added: ", "").replace("Removed: ", "") == " ".join(api.split())
    assert page.text_of("diff").startswith("--- hist_orders v1 +++ hist_orders (draft)")


def test_the_compare_form_starts_on_the_latest_version_against_the_draft(admin, orders):
    page = admin.get(f"/tools/{orders}/draft")
    form = re.search(r'<section aria-labelledby="compare-title".*?</section>', page.text, re.S)[0]
    assert re.search(r'name="from".*?<option value="1" selected>', form, re.S)
    assert re.search(r'name="to".*?<option value="draft" selected>', form, re.S)


def test_comparing_a_version_with_itself_shows_no_change(admin, orders):
    page = admin.get(f"/tools/{orders}/compare?from=1&to=1")
    assert page.text_of("compare-verdict") == "The two definitions are the same."
    assert 'id="diff"' not in page.text


@pytest.mark.parametrize("query, errors", [
    ("from=one&to=draft", {"f-from": 'Error: A version is a published version number or "draft".'}),
    ("from=1", {"f-to": 'Error: A version is a published version number or "draft".'}),
    ("from=1&to=9", {"f-to": "Error: This tool has no such version."}),
])
def test_a_version_that_cannot_be_compared_is_shown_next_to_its_field(admin, orders, query, errors):
    page = admin.get(f"/tools/{orders}/compare?{query}")
    assert page.status == 422
    assert page.errors() == errors


def test_a_version_page_lists_the_project_versions_that_pin_it(admin, orders):
    page = admin.get(f"/tools/{orders}/versions/1")
    pinned = page.text_of("pinned-by")
    assert pinned.startswith("Project versions that pin version 1")
    assert "hist_shop Version 1" in pinned
    assert page.text_of("pinned-drafts") == "The draft versions of hist_shop pin it too."


def test_a_version_no_project_pins_says_so(admin):
    register(admin, "hist_lonely")
    admin.post("/tools/hist_lonely/publish")
    page = admin.get("/tools/hist_lonely/versions/1")
    assert "No published project version pins this version." in page.text_of("pinned-by")
    assert "Nothing to compare yet" in page.text_of("compare")


def test_publishing_lists_the_breaking_changes_against_the_latest_version(service, admin, orders):
    page = admin.get(f"/tools/{orders}/publish")
    impact = service.api("GET", f"/v1/tools/{orders}/draft/impact").json()
    breaking, safe = listed(page, "breaking-changes"), listed(page, "safe-changes")
    assert set(breaking) == BREAKING and set(safe) == SAFE
    for change in impact["changes"]:
        assert change["message"] in (breaking if change["breaking"] else safe)[change["change"]]
    impact_text = page.text_of("impact")
    assert impact_text.startswith("Changes against version 1 7 breaking changes")
    assert page.text_of("latest-pinned-by") == "A published pin never moves: hist_shop version 1 keeps version 1."


def test_publishing_a_first_version_has_nothing_to_break(admin):
    register(admin, "hist_first")
    assert "This is the tool's first version" in admin.get("/tools/hist_first/publish").text_of("impact")


def test_an_agent_reads_history_and_compares_but_never_sees_publish(agent, orders):
    assert len(history_rows(agent.get(f"/tools/{orders}/draft"))) == 4
    assert agent.get(f"/tools/{orders}/compare?from=1&to=draft").status == 200
    assert agent.get(f"/tools/{orders}/publish").status == 403
