"""End to end in a real browser: the spec's story, from registering a tool to a step of two calls in the playground.

The browser runs in a subprocess (browser_story.py) against the service this test starts; its JSON report is
asserted on here, one test per part of the story. Screenshots of each screen land in artifacts/screenshots (not
tracked), or in $TOOLGATE_SCREENSHOTS when set: `TOOLGATE_SCREENSHOTS=docs/screenshots` refreshes the README's.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dashboard.browser_story import CHROMIUM, TOOL

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("TOOLGATE_SCREENSHOTS") or ROOT / "artifacts" / "screenshots")
SCREENS = ("tools.png", "editor.png", "editor-errors.png", "published.png", "project.png", "playground.png",
           "calls.png")
STORY_TIMEOUT_SECONDS = 180


def _browser_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is missing"
    return None


MISSING = _browser_missing()
if MISSING and not os.environ.get("CI"):
    pytest.skip(f"{MISSING}: run tests/dashboard/ensure_browser.sh", allow_module_level=True)


def seed(service, backend) -> None:
    """Two published tools the story pins next to the one it registers itself."""
    tools = [
        {"name": "get_profile", "display_name": "Loyalty profile", "description": "The customer's loyalty tier.",
         "method": "GET", "url": f"{backend}/tools/get_profile/echo/users/{{subject}}/profile", "scope": "per_user",
         "runs_at_session_start": True, "parameters": [{"name": "subject", "type": "string", "location": "path"}]},
        {"name": "product_search", "display_name": "Products", "description": "Products matching a search term.",
         "method": "GET", "url": f"{backend}/tools/product_search/echo/products",
         "parameters": [{"name": "q", "type": "string", "location": "query"}]},
        {"name": "stock_levels", "description": "Stock levels per warehouse.", "method": "GET",
         "url": f"{backend}/tools/stock_levels/echo", "required_entitlement": "staff:read"},
    ]
    for tool in tools:
        assert service.api("POST", "/v1/tools", json=tool).status_code == 201
        assert service.api("POST", f"/v1/tools/{tool['name']}/publish").status_code == 201


@pytest.fixture(scope="module")
def story(module_service, module_backend):
    """Run the whole story once; every test below reads its part of the report."""
    service, backend = module_service, module_backend
    if MISSING:
        pytest.fail(f"{MISSING}: run tests/dashboard/ensure_browser.sh")
    seed(service, backend)
    for name in SCREENS:
        (SCREENSHOTS / name).unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).with_name("browser_story.py")), "--url", service.url,
               "--admin-key", service.admin_key, "--agent-key", service.agent_key, "--backend", backend,
               "--shots", str(SCREENSHOTS)]
    # gevent's subprocess waits cooperatively, so this process's service keeps answering the browser.
    done = subprocess.run(command, capture_output=True, text=True, timeout=STORY_TIMEOUT_SECONDS, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert "failed" not in report, json.dumps(report["failed"], indent=2)
    return report


def test_signing_in_opens_the_tools_screen(story):
    assert story["signin"] == {"path": "/tools", "h1": "Tools"}


def test_registering_creates_a_draft_and_opens_its_editor(story):
    seen = story["register"]
    assert seen["path"] == f"/tools/{TOOL}/draft"
    assert seen["h1"] == "Customer orders"
    assert "This is its draft" in seen["flash"]
    assert seen["name_readonly"] is True  # the tool name is shown but cannot change


def test_choosing_array_pins_the_location_to_the_body_and_asks_for_the_element_type(story):
    assert story["invalid_save"]["locked"] == {"location": "body", "location_disabled": True,
                                               "element_type_visible": True}


def test_an_invalid_save_shows_each_violation_next_to_its_field(story):
    seen = story["invalid_save"]
    assert seen["errors"] == {
        "f-parameters": "Error: A per-user tool needs a subject parameter.",
        "f-parameters-0-element_type": "Error: An array parameter must say what its elements are.",
        "f-parameters-0-location": "Error: A GET or DELETE request cannot carry a body parameter.",
        "f-parameters-1-location": "Error: A path parameter needs a matching placeholder in the URL.",
    }
    assert seen["summary_focused"] is True
    # Nothing typed is lost: the refused edits are still on the page, marked unsaved.
    assert seen["kept"] == ["statuses", "order_id"]
    assert seen["unsaved_note"] is True


def test_fixing_and_saving_keeps_the_reordered_parameters(story):
    seen = story["fix_and_save"]
    assert seen["flash"] == "Saved."
    assert seen["errors"] == 0
    assert seen["names"] == ["subject", "statuses"]  # the subject was added last and moved up
    assert seen["subject_type"] == {"value": "string", "disabled": True}
    assert seen["unlabelled"] == []


def test_unsaved_changes_are_not_lost_silently(story):
    seen = story["unsaved_warning"]
    assert seen["dialogs"] == ["beforeunload"]
    assert seen["stayed_on"] == f"/tools/{TOOL}/draft"


def test_publishing_says_what_freezes_then_opens_the_version(story):
    seen = story["publish"]
    assert "freezes the saved draft" in seen["confirm"]
    assert "can never change again" in seen["confirm"]
    assert seen["path"] == f"/tools/{TOOL}/versions/1"
    assert seen["flash"].startswith("Published version 1.")


def test_a_published_version_opens_read_only(story):
    seen = story["read_only"]
    assert seen["controls"] and all(c["fixed"] for c in seen["controls"]), seen["controls"]
    assert seen["save_buttons"] == 0
    assert "read-only" in seen["notice"]
    assert seen["start_draft"] == 1


def test_starting_a_new_draft_copies_the_published_version(story):
    seen = story["new_draft"]
    assert seen["path"] == f"/tools/{TOOL}/draft"
    assert "from version 1" in seen["flash"]
    assert "started from version 1" in seen["status"]
    assert seen["names"] == ["subject", "statuses"]


def test_publishing_a_project_lists_and_publishes_the_tool_drafts_it_pins(story):
    seen = story["project"]
    assert seen["saved"] == "Saved the draft version's pins."
    assert TOOL in seen["drafts_listed"] and "becomes version 2" in seen["drafts_listed"]
    assert seen["flash"] == "Published project version 1."
    assert f"{TOOL} version 2" in seen["versions"]
    assert "get_profile version 1" in seen["versions"]


def test_the_tools_screen_lists_every_tool_and_filters_by_project(story):
    rows = {row[1].strip(): [cell.strip() for cell in row] for row in story["tools_screen"]["all"]}
    assert sorted(rows) == sorted(["get_profile", TOOL, "product_search", "stock_levels"])
    # display name, name, project, scope, session start, entitlement, latest version, draft state
    # The agent started a new draft after the project published version 2.
    assert rows[TOOL] == ["Customer orders", TOOL, "Organization-wide", "Per-user", "No", "None", "Version 2",
                          "Draft from v2"]
    assert rows["get_profile"][3:5] == ["Per-user", "Yes"]
    assert rows["stock_levels"][5:7] == ["staff:read", "Version 1"]
    assert sorted(story["tools_screen"]["shop"]) == sorted(["get_profile", TOOL, "product_search"])


def test_the_playground_shows_context_offered_tools_and_a_step_of_two_results(story):
    seen = story["playground"]
    assert "get_profile" in seen["context"] and '"sub": "alice"' in seen["context"]
    assert TOOL in seen["offered"] and "product_search" in seen["offered"]
    assert "get_profile" not in seen["offered"]  # a session-start tool is context, not offered
    assert [r["kind"] for r in seen["results"]] == ["ok", "ok"]
    for result, tool in zip(seen["results"], (TOOL, "product_search")):
        assert "Assertion the endpoint received" in result["text"]
        assert f'"aud": "{tool}"' in result["text"]
        assert '"sub": "alice"' in result["text"]
        assert " ms" in result["text"]


def test_the_call_log_lists_the_playgrounds_call_filtered_by_tool(story):
    seen = story["call_log"]
    assert seen["headers"][:5] == ["Time (UTC)", "Tool", "Version", "Kind", "Status"]
    [row] = seen["rows"]  # the step's other call was to product_search
    cells = [cell.strip() for cell in row]
    # tool, version (the project published the draft as version 2), kind, status, subject, anonymous, session start
    assert cells[1:5] == [TOOL, "2", "ok", "200"] and cells[7:10] == ["alice", "No", "No"]
    assert seen["unlabelled"] == []


def test_an_agent_key_sees_no_publish_button(story):
    seen = story["agent"]
    assert seen["publish_buttons"] == 0
    assert seen["save_buttons"] == 1
    assert "Playground" not in seen["nav"] and "Calls" not in seen["nav"]
    assert seen["publish_page"] == "Not allowed"


def test_it_works_at_phone_width_and_by_keyboard(story):
    seen = story["phone_and_keyboard"]
    assert seen["overflow"] == {path: 0 for path in seen["overflow"]}
    assert seen["first_tab"] == "Skip to content"
    assert seen["focus_outline"] == "solid"


def test_every_asset_comes_from_the_service(story):
    assert story["offsite_requests"] == []


def test_each_screen_is_saved_as_a_small_screenshot(story):
    for name in SCREENS:
        data = (SCREENSHOTS / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(data[16:20], "big")
        assert width <= 1280, (name, width)
