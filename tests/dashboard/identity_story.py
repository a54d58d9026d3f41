"""The Identity screen walked in a real browser (Playwright driving Debian's Chromium, headless), at 1280 px and at
390 px, with axe-core checking it at both: an admin adds a provider (a refused try first), tests a pasted token, and
removes the provider. Run by test_identity_browser.py as a subprocess (Playwright's own event loop kept apart from the
test process's gevent), its settings one JSON object on stdin, what it saw one JSON line on stdout.

    echo '{"url": URL, "admin_key": KEY, "issuer": ISS, "audience": AUD, "token": JWT, "shots": DIR}' | \
        python tests/dashboard/identity_story.py
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.dashboard.browser_story import (
    CHROMIUM,
    CHROMIUM_ARGS,
    OVERFLOW,
    PHONE,
    UNLABELLED,
    WIDE,
    Story,
)


def walk(story: Story, settings: dict) -> dict:
    """Each step a person takes on the screen; what they saw."""
    page, seen = story.page, {}
    story.sign_in(page, settings["admin_key"], then="/identity")
    seen["empty"] = page.inner_text("main .empty")
    story.axe("identity", page)
    page.fill("#f-name", "has space")
    page.fill("#f-issuer", settings["issuer"])
    page.fill("#f-audience", settings["audience"])
    page.fill("#f-algorithms", "RS256, ES256")
    page.click("form.stacked button[type=submit]")
    page.wait_for_selector("#error-summary")
    seen["refused"] = story.error_at("f-name")
    seen["focused_summary"] = page.evaluate("document.activeElement && document.activeElement.id")
    story.axe("identity-refused", page)
    page.fill("#f-name", "corp")
    page.click("form.stacked button[type=submit]")
    page.wait_for_selector("#flash")
    seen["added"] = page.inner_text("#flash")
    seen["rows"] = page.locator("table.providers tbody tr").count()
    page.fill("#f-token", settings["token"])
    page.click("section[aria-labelledby=test-title] button[type=submit]")
    page.wait_for_selector("#tested")
    seen["tested"] = " ".join(page.inner_text("#tested").split())
    seen["unlabelled"] = page.evaluate(UNLABELLED)
    story.axe("identity-tested", page)
    story.shot("identity.png")
    page.set_viewport_size(PHONE)
    seen["phone_overflow"] = page.evaluate(OVERFLOW)
    seen["wide_elements"] = page.evaluate("""() => [...document.querySelectorAll('body *')]
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 8)""")
    story.axe("identity", page)
    story.shot("identity-phone.png")
    page.set_viewport_size(WIDE)
    page.click("table.providers button.danger")
    page.wait_for_selector("#flash")
    seen["removed"] = page.inner_text("#flash")
    seen["rows_after"] = page.locator("table.providers tbody tr").count()
    return seen


def main() -> int:
    from playwright.sync_api import sync_playwright

    settings = json.loads(sys.stdin.readline())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=WIDE).new_page()
        story = Story(SimpleNamespace(url=settings["url"], shots=settings["shots"]), browser, page)
        try:
            result = {"seen": walk(story, settings), "axe": story.axe_found, "offsite": story.offsite}
        except Exception:  # reported to the test, which fails on it
            result = {"failed": traceback.format_exc(limit=4), "path": story.path()}
        browser.close()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
