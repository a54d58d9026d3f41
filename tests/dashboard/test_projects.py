"""Projects over HTTP: create, pin (a draft too), refuse bad pins next to their tool, publish the drafts first."""
import re

import pytest

from service.dashboard import projects
from tests.dashboard.test_editor import VALID, register

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools


def pinned(page) -> dict[str, str]:
    """Each pin select's chosen value on a project page."""
    found = {}
    for name, options in re.findall(r'<select id="[^"]+" name="pin-(\w+)"[^>]*>(.*?)</select>', page.text, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        found[name] = chosen[1] if chosen else ""
    return found


def test_a_project_name_is_checked_next_to_its_field(service, admin):
    page = admin.post("/projects", {"name": "no spaces allowed"})
    assert page.status == 422
    assert page.error_at("f-name").startswith("Error: A project name uses letters, digits")
    assert admin.post("/projects", {"name": "dup"}).url.endswith("/projects/dup")
    assert admin.post("/projects", {"name": "dup"}).error_at("f-name") == \
        "Error: A project with this name already exists."


def test_pins_are_saved_and_shown_as_chosen(service, admin):
    register(admin, "pin_a")
    register(admin, "pin_b")
    admin.post("/tools/pin_b/publish")
    admin.post("/projects", {"name": "pinning"})
    page = admin.post("/projects/pinning/draft", [("pin-pin_b", "1"), ("pin-pin_a", "draft")])
    assert page.text_of("flash") == "Saved the draft version's pins."
    assert service.api("GET", "/v1/projects/pinning").json()["draft"]["pins"] == [
        {"tool": "pin_b", "version": 1}, {"tool": "pin_a", "version": "draft"}]
    assert {k: v for k, v in pinned(page).items() if v} == {"pin_b": "1", "pin_a": "draft"}
    assert list(pinned(page))[:2] == ["pin_b", "pin_a"]  # pinned tools first, in pin order


def test_a_bad_pin_is_refused_next_to_its_tool_and_nothing_is_saved(service, admin):
    register(admin, "pin_c")
    admin.post("/projects", {"name": "bad_pins"})
    page = admin.post("/projects/bad_pins/draft", [("pin-pin_c", "7"), ("pin-ghost", "1")])
    assert page.status == 422
    assert page.error_at("f-pin-pin_c") == "Error: This tool has no published version with that number."
    assert "Pin of ghost: No tool with this name exists in this organization." in page.text_of("error-summary")
    assert service.api("GET", "/v1/projects/bad_pins").json()["draft"]["pins"] == []


def test_a_project_offers_only_its_own_and_organization_wide_tools(service, admin):
    admin.post("/projects", {"name": "own"})
    admin.post("/projects", {"name": "elsewhere"})
    register(admin, "own_tool", project="own")
    assert 'name="add" value="own_tool"' in admin.get("/projects/own?q=own_tool").text
    assert 'name="add" value="own_tool"' not in admin.get("/projects/elsewhere?q=own_tool").text
    assert admin.get("/projects/elsewhere?q=own_tool").text_of("no-matches") == (
        "No tool this project can pin has “own_tool” in its name or display name.")
    page = admin.get("/tools?project=own")
    assert "own_tool" in page.text and "pin_a" not in page.text
    assert "own_tool" not in admin.get("/tools?project=-").text


def test_publishing_a_project_lists_then_publishes_the_tool_drafts_it_pins(service, admin):
    register(admin, "cascade_a")
    register(admin, "cascade_b")
    admin.post("/tools/cascade_b/publish")
    admin.post("/projects", {"name": "cascade"})
    admin.post("/projects/cascade/draft", [("pin-cascade_a", "draft"), ("pin-cascade_b", "1")])
    confirm = admin.get("/projects/cascade/publish")
    drafts = confirm.text_of("publish-drafts")
    assert "cascade_a" in drafts and "becomes version 1" in drafts and "cascade_b" not in drafts
    page = admin.post("/projects/cascade/publish")
    assert page.text_of("flash") == "Published project version 1."
    assert service.api("GET", "/v1/tools/cascade_a").json()["versions"][0]["version"] == 1
    versions = service.api("GET", "/v1/projects/cascade").json()["versions"]
    assert versions[0]["pins"] == [{"tool": "cascade_a", "version": 1}, {"tool": "cascade_b", "version": 1}]
    # The draft version is consumed; a new one starts from the published pins.
    page = admin.post("/projects/cascade/draft/new")
    assert pinned(page)["cascade_a"] == "1"


def test_publishing_says_which_other_project_drafts_move_to_the_new_versions(service, admin):
    """Publishing a project's pinned draft freezes it for every project that pins it: the confirmation says which
    other project drafts will move, and the flash which did."""
    register(admin, "shared_draft")
    for project in ("freeze_a", "freeze_b"):
        admin.post("/projects", {"name": project})
        admin.post(f"/projects/{project}/draft", [("pin-shared_draft", "draft")])
    drafts = admin.get("/projects/freeze_a/publish").text_of("publish-drafts")
    assert "its draft becomes version 1, and the draft version of freeze_b moves from its draft to version 1" in drafts
    page = admin.post("/projects/freeze_a/publish")
    assert page.text_of("flash") == ("Published project version 1. "
                                     "The draft version of freeze_b now pins shared_draft version 1.")
    assert pinned(admin.get("/projects/freeze_b"))["shared_draft"] == "1"


def test_the_confirmation_shows_what_each_frozen_tool_version_breaks_against_the_last_project_version(service, admin):
    register(admin, "impact_a", method="POST")
    register(admin, "impact_b")
    register(admin, "impact_gone")
    admin.post("/projects", {"name": "impacted"})
    admin.post("/projects/impacted/draft", [("pin-impact_a", "draft"), ("pin-impact_b", "draft"),
                                            ("pin-impact_gone", "draft")])
    first = admin.get("/projects/impacted/publish")
    assert first.text_of("freeze-summary") == ("Project version 1 freezes 3 tool versions. None of them breaks the "
                                               "model or the endpoint.")
    assert "New to this project, and the tool's first version: nothing to break." in first.text_of("publish-drafts")
    admin.post("/projects/impacted/publish")
    # Version 2: impact_a's draft gains a required body parameter, impact_b stays at version 1, impact_gone goes.
    service.api("POST", "/v1/tools/impact_a/draft")
    definition = service.api("GET", "/v1/tools/impact_a").json()["draft"]["definition"]
    definition["parameters"] = [{"name": "qty", "type": "number", "location": "body"}]
    assert service.api("PUT", "/v1/tools/impact_a/draft", json=definition).status_code == 200
    admin.post("/projects/impacted/draft/new")
    admin.post("/projects/impacted/draft", [("pin-impact_a", "draft"), ("pin-impact_b", "1")])
    confirm = admin.get("/projects/impacted/publish")
    assert confirm.text_of("freeze-summary") == ("Project version 2 freezes 2 tool versions. 1 of them breaks the "
                                                 "model or the endpoint against what version 1 had: impact_a.")
    assert confirm.text_of("breaking-impact_a") == "Breaking A required parameter qty was added. Breaks the model."
    assert "Against version 1, which project version 1 pins: 1 breaking change." in confirm.text_of("publish-drafts")
    assert confirm.text_of("publish-fixed") == ("impact_b version 1 Pinned by project version 1 too: nothing "
                                                "changes.")
    assert confirm.text_of("publish-unpinned") == ("No longer pinned, so no longer offered to the model: "
                                                   "impact_gone.")


def test_an_agent_cannot_publish_a_project(service, agent):
    agent.post("/projects", {"name": "agents_project"})
    assert "/projects/agents_project/publish" not in agent.get("/projects/agents_project").text
    assert agent.post("/projects/agents_project/publish").status == 403
    assert service.api("GET", "/v1/projects/agents_project").json()["versions"] == []


def test_the_registration_form_lists_projects(service, admin):
    admin.post("/projects", {"name": "listed"})
    assert '<option value="listed"' in admin.get("/tools/new").text
    assert VALID["method"] == "GET"


def test_a_project_lists_only_its_pins_and_adds_one_by_a_search_without_script(service, admin, monkeypatch):
    """No select per tool of the organization: the pins, and a GET search whose matches each have an Add button
    (sending the pins form, so a version chosen but not saved is kept)."""
    monkeypatch.setattr(projects, "PIN_SEARCH_PAGE", 2)  # the service runs in this process
    for name in ("add_a", "add_b", "add_c", "other_x"):
        register(admin, name)
    admin.post("/tools/add_b/publish")
    admin.post("/projects", {"name": "adding"})
    page = admin.get("/projects/adding")
    assert "<select" not in page.text and page.text_of("no-pins").startswith("This draft version pins no tool yet.")
    found = admin.get("/projects/adding?q=add_")
    assert re.findall(r'name="add" value="(\w+)"', found.text) == ["add_a", "add_b"]  # a page of the matches
    assert 'href="/projects/adding?q=add_&amp;after=add_b#add-pin"' in found.text
    assert re.findall(r'name="add" value="(\w+)"', admin.get("/projects/adding?q=add_&after=add_b").text) == [
        "add_c"]
    added = admin.post("/projects/adding/draft", {"add": "add_b", "q": "add_"})
    assert added.text_of("flash") == "Pinned add_b at version 1; choose another version beside it if needed."
    assert added.url.endswith("/projects/adding?q=add_")  # the search kept, to add another
    assert pinned(added) == {"add_b": "1"}
    assert "badge ok\">Pinned</span>" in added.text  # add_b's match says so instead of its button
    again = admin.post("/projects/adding/draft", [("pin-add_b", ""), ("add", "add_a")])  # removed, and one added
    assert again.text_of("flash") == "Pinned add_a at its draft; choose another version beside it if needed."
    assert service.api("GET", "/v1/projects/adding").json()["draft"]["pins"] == [{"tool": "add_a", "version": "draft"}]


def test_a_search_past_its_length_is_refused_beside_it(service, admin):
    admin.post("/projects", {"name": "long_search"})
    page = admin.get("/projects/long_search?q=" + "x" * 201)
    assert page.status == 422
    assert page.error_at("f-q").startswith("Error: ")


@pytest.mark.parametrize("query", ["q=%00", "q=a%0D%0Ab", "q=x&after=%00", "q=x&after=" + "a" * 65])
def test_a_hostile_search_is_refused_beside_it_never_a_500(service, admin, query):
    admin.post("/projects", {"name": "hostile_search"})
    page = admin.get("/projects/hostile_search?" + query)
    assert page.status == 422 and "error-summary" in page.text
