"""The Identity screen in a real browser at 1280 px and 390 px, axe-core checking each state (identity_story.py):
add (refused first, the error beside its field), test a pasted token, remove."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dashboard.browser_story import CHROMIUM
from tests.identity.stub_provider import AUDIENCE, stub_provider

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("TOOLGATE_SCREENSHOTS") or ROOT / "artifacts" / "screenshots")
MISSING = next((why for why in (
    None if Path(CHROMIUM).exists() else f"{CHROMIUM} is missing",
    *(None if importlib.util.find_spec(p) else f"the {p} package is missing (a test extra: make install)"
      for p in ("playwright", "axe_playwright_python"))) if why), None)
if MISSING and not os.environ.get("CI"):
    pytest.skip(f"{MISSING}: run tests/dashboard/ensure_browser.sh", allow_module_level=True)

#: The whole walk takes seconds; past this the test fails rather than hangs.
WALK_SECONDS = 120


@pytest.fixture
def walked(service):
    if MISSING:
        pytest.fail(f"{MISSING}: run tests/dashboard/ensure_browser.sh")
    with stub_provider() as provider:
        settings = {"url": service.url, "admin_key": service.admin_key, "issuer": provider.issuer,
                    "audience": AUDIENCE, "token": provider.token("alice", scope="orders:read cart:write"),
                    "shots": str(SCREENSHOTS)}
        # gevent's subprocess waits cooperatively, so this process's service and provider keep answering the browser.
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("identity_story.py"))],
                              input=json.dumps(settings) + "\n", capture_output=True, text=True,
                              timeout=WALK_SECONDS, env={**os.environ})
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if "failed" in result:
        pytest.fail(f"the walk failed on {result['path']}:\n{result['failed']}")
    return result


def test_the_identity_screen_adds_tests_and_removes_at_both_widths_with_no_axe_finding(walked):
    seen = walked["seen"]
    assert seen["empty"].startswith("No identity providers yet")
    assert seen["refused"].startswith("Error: A provider name uses letters, digits")
    assert seen["focused_summary"] == "error-summary"
    assert seen["added"] == "Added identity provider corp: its tokens now act as session tokens."
    assert seen["rows"] == 1
    assert "Subject alice" in seen["tested"] and "orders:read, cart:write" in seen["tested"]
    assert seen["unlabelled"] == []
    assert seen["phone_overflow"] <= 0, seen["wide_elements"]
    assert seen["removed"].startswith("Removed identity provider corp")
    assert seen["rows_after"] == 0
    assert walked["axe"] and all(found == [] for found in walked["axe"].values()), walked["axe"]
    assert walked["offsite"] == []
    assert (SCREENSHOTS / "identity.png").stat().st_size > 0
