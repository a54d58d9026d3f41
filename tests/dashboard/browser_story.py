"""The spec's story at the dashboard, walked in a real browser: Playwright driving Debian's Chromium, headless.

test_browser.py starts the service and the mock backend, seeds two published tools, and runs this file as a
subprocess (Playwright's sync API runs its own event loop, kept apart from the test process's gevent patching).
It prints one JSON object of what it saw, step by step, and saves a screenshot of each screen; the test asserts.

    python tests/dashboard/browser_story.py --url URL --admin-key KEY --agent-key KEY --backend URL --shots DIR
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: Screenshots stay small: full pages, cut at this height.
MAX_SHOT_HEIGHT = 1400
STEP_TIMEOUT_MS = 15_000
TOOL = "search_orders"

# What every control on a page lacks when it has no label (an empty list is the pass).
UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !e.labels.length && !e.getAttribute('aria-label')).map(e => e.id || e.name)"""
CONTROLS_FIXED = """() => [...document.querySelectorAll('form.editor input, form.editor select, form.editor textarea')]
  .map(e => ({id: e.id, fixed: e.matches(':disabled') || e.readOnly}))"""


class Story:
    def __init__(self, args, browser):
        self.args, self.browser, self.seen, self.offsite = args, browser, {}, []
        self.shots = Path(args.shots)
        self.shots.mkdir(parents=True, exist_ok=True)
        self.page = self.new_page(WIDE)

    def new_page(self, viewport) -> "Page":
        context = self.browser.new_context(viewport=viewport)
        page = context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        page.on("request", lambda r: None if r.url.startswith((self.args.url, "data:")) else self.offsite.append(r.url))
        return page

    def url(self, path: str) -> str:
        return self.args.url + path

    def path(self, page: "Page | None" = None) -> str:
        return (page or self.page).url[len(self.args.url):]

    def shot(self, name: str, page: "Page | None" = None, *, start: str | None = None) -> None:
        """A screenshot of the whole page width, from the top or from the element `start` names, cut short."""
        page = page or self.page
        top = page.locator(start).bounding_box()["y"] + page.evaluate("window.scrollY") if start else 0
        height = min(page.evaluate("document.documentElement.scrollHeight") - top, MAX_SHOT_HEIGHT)
        page.screenshot(path=str(self.shots / name), full_page=True,
                        clip={"x": 0, "y": top, "width": page.viewport_size["width"], "height": height})

    def error_at(self, field_id: str, page: "Page | None" = None) -> str | None:
        found = (page or self.page).locator(f"#{field_id}-error")
        return " ".join(found.inner_text().split()) if found.count() else None

    def sign_in(self, page: "Page", key: str) -> None:
        page.goto(self.url("/"))
        page.fill("#f-api_key", key)
        page.press("#f-api_key", "Enter")  # the keyboard submits the form
        page.wait_for_url("**/tools")

    # The steps of the story, in order; each records what a person would see.

    def signin(self):
        self.sign_in(self.page, self.args.admin_key)
        return {"path": self.path(), "h1": self.page.inner_text("h1")}

    def register(self):
        page = self.page
        page.click("text=Register a tool")
        page.fill("#f-name", TOOL)
        page.fill("#f-display_name", "Customer orders")
        page.fill("#f-description", "The signed-in customer's orders, filtered by status.")
        page.select_option("#f-method", "GET")
        page.fill("#f-url", f"{self.args.backend}/tools/{TOOL}/echo/users")
        page.click("text=Register and open the editor")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        return {"path": self.path(), "h1": page.inner_text("h1"), "flash": page.inner_text(".flash"),
                "name_readonly": page.eval_on_selector("#f-name", "e => e.readOnly")}

    def invalid_save(self):
        page = self.page
        page.select_option("#f-scope", "per_user")
        page.click("text=Add parameter")
        first = page.locator("[data-rows=parameters] > li").nth(0)
        first.locator("[data-field=name]").fill("statuses")
        first.locator("[data-field=type]").select_option("array")
        locked = {"location": first.locator("[data-field=location]").input_value(),
                  "location_disabled": first.locator("[data-field=location]").is_disabled(),
                  "element_type_visible": first.locator("[data-field=element_type]").is_visible()}
        page.click("text=Add parameter")
        second = page.locator("[data-rows=parameters] > li").nth(1)
        second.locator("[data-field=name]").fill("order_id")
        second.locator("[data-field=location]").select_option("path")
        page.click("button:has-text('Save draft')")
        page.wait_for_selector("[data-error-summary]")
        self.shot("editor-errors.png")
        fields = ["f-parameters", "f-parameters-0-element_type", "f-parameters-0-location", "f-parameters-1-location"]
        return {"locked": locked, "errors": {f: self.error_at(f) for f in fields},
                "summary": page.inner_text("[data-error-summary]"),
                "summary_focused": page.evaluate("document.activeElement.hasAttribute('data-error-summary')"),
                "unsaved_note": page.is_visible("[data-unsaved-note]"),
                "kept": [page.locator("[data-rows=parameters] [data-field=name]").nth(i).input_value() for i in (0, 1)]}

    def fix_and_save(self):
        page = self.page
        rows = page.locator("[data-rows=parameters] > li")
        page.select_option("#f-method", "POST")
        rows.nth(0).locator("[data-field=element_type]").select_option("string")
        rows.nth(1).locator("button[data-op=remove]").click()
        page.click("text=Add parameter")
        subject = rows.nth(1)
        subject.locator("[data-field=name]").fill("subject")
        subject_type = {"value": subject.locator("[data-field=type]").input_value(),
                        "disabled": subject.locator("[data-field=type]").is_disabled()}
        subject.locator("[data-field=location]").select_option("path")
        subject.locator("button[data-op=up]").click()
        page.fill("#f-url", f"{self.args.backend}/tools/{TOOL}/echo/users/{{subject}}/orders")
        page.click("button:has-text('Save draft')")
        page.wait_for_selector(".flash")
        self.shot("editor.png")
        names = page.locator("[data-rows=parameters] [data-field=name]")
        return {"flash": page.inner_text(".flash"), "subject_type": subject_type,
                "names": [names.nth(i).input_value() for i in range(names.count())],
                "errors": page.locator(".field-error").count(), "unlabelled": page.evaluate(UNLABELLED)}

    def unsaved_warning(self):
        page, dialogs = self.page, []

        def answer(dialog):
            dialogs.append(dialog.type)
            dialog.dismiss()  # stay on the page

        page.on("dialog", answer)
        page.click("#f-description")
        page.keyboard.type(" More.")
        page.click("nav >> text=Tools")
        page.wait_for_timeout(300)
        stayed = self.path()
        page.remove_listener("dialog", answer)
        page.once("dialog", lambda d: d.accept())
        page.reload()
        return {"dialogs": dialogs, "stayed_on": stayed}

    def publish(self):
        page = self.page
        page.click("text=Publish…")
        page.wait_for_selector("[data-confirm]")
        confirm = page.inner_text("[data-confirm]")
        page.click("button:has-text('Publish version 1')")
        page.wait_for_url(f"**/tools/{TOOL}/versions/1")
        return {"confirm": confirm, "path": self.path(), "flash": page.inner_text(".flash")}

    def read_only(self):
        page = self.page
        self.shot("published.png")
        return {"controls": page.evaluate(CONTROLS_FIXED), "save_buttons": page.locator("text=Save draft").count(),
                "notice": page.inner_text("[data-read-only]"),
                "start_draft": page.locator("button:has-text('Start a new draft')").count()}

    def new_draft(self):
        page = self.page
        page.click("button:has-text('Start a new draft')")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        names = page.locator("[data-rows=parameters] [data-field=name]")
        return {"path": self.path(), "flash": page.inner_text(".flash"), "status": page.inner_text(".status"),
                "names": [names.nth(i).input_value() for i in range(names.count())]}

    def project(self):
        page = self.page
        page.click("nav >> text=Projects")
        page.fill("#f-name", "shop")
        page.click("text=Create project")
        page.wait_for_url("**/projects/shop")
        page.select_option(f"#f-pin-{TOOL}", "draft")
        page.select_option("#f-pin-get_profile", "1")
        page.select_option("#f-pin-product_search", "1")
        page.click("text=Save pins")
        page.wait_for_selector(".flash")
        self.shot("project.png")
        saved = page.inner_text(".flash")
        page.click("text=Publish…")
        page.wait_for_selector("[data-confirm]")
        drafts = page.inner_text("[data-drafts]")
        page.click("button:has-text('Publish project version 1')")
        page.wait_for_selector(".flash")
        return {"saved": saved, "drafts_listed": drafts, "flash": page.inner_text(".flash"),
                "versions": page.inner_text("[aria-labelledby=versions-title]")}

    def tools_screen(self):
        page = self.page
        page.click("nav >> text=Tools")
        self.shot("tools.png")
        rows = lambda: [page.locator("table.tools tbody tr").nth(i).inner_text().split("\t")  # noqa: E731
                        for i in range(page.locator("table.tools tbody tr").count())]
        everything = rows()
        page.select_option("#filter-project", "shop")
        page.click("button:has-text('Filter')")
        page.wait_for_url("**/tools?project=shop")
        return {"all": everything, "shop": [r[1].strip() for r in rows()]}

    def playground(self):
        page = self.page
        page.click("nav >> text=Playground")
        page.select_option("#f-version", "shop:1")
        page.fill("#f-subject", "alice")
        page.fill("#f-entitlements", "orders:read")
        page.click("text=Start a conversation")
        page.wait_for_selector("[data-context]")
        context = page.inner_text("[data-context]")
        offered = page.inner_text("[data-offered]")
        calls = page.locator("[data-rows=calls] > li")
        calls.nth(0).locator("input").fill(TOOL)
        calls.nth(0).locator("textarea").fill('{"statuses": ["open"]}')
        calls.nth(1).locator("input").fill("product_search")
        calls.nth(1).locator("textarea").fill('{"q": "milk"}')
        page.click("button:has-text('Run step')")
        page.wait_for_selector("[data-results]")
        self.shot("playground.png", start="[aria-labelledby=step-title]")
        results = page.locator("[data-results] [data-result]")
        return {"context": context, "offered": offered, "calls": calls.count(),
                "results": [{"text": results.nth(i).inner_text(),
                             "kind": results.nth(i).locator("[data-kind]").inner_text()}
                            for i in range(results.count())]}

    def call_log(self):
        page = self.page
        page.click("nav >> text=Calls")
        page.wait_for_url("**/calls")
        page.fill("#f-tool", TOOL)
        page.click("button:has-text('Filter')")
        page.wait_for_url(re.compile(rf"/calls\?.*tool={TOOL}"))
        self.shot("calls.png")
        rows = page.locator("table.calls tbody tr")
        return {"headers": page.locator("table.calls thead th").all_inner_texts(),
                "rows": [rows.nth(i).inner_text().split("\t") for i in range(rows.count())],
                "unlabelled": page.evaluate(UNLABELLED)}

    def agent(self):
        page = self.new_page(WIDE)
        self.sign_in(page, self.args.agent_key)
        page.goto(self.url(f"/tools/{TOOL}"))  # published by the project: no draft until someone starts one
        page.click("button:has-text('Start a new draft')")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        seen = {"publish_buttons": page.locator("a:has-text('Publish'), button:has-text('Publish')").count(),
                "save_buttons": page.locator("button:has-text('Save draft')").count(),
                "nav": page.inner_text("nav")}
        page.goto(self.url(f"/tools/{TOOL}/publish"))
        seen["publish_page"] = page.inner_text("h1")
        return seen

    def phone_and_keyboard(self):
        page = self.new_page(PHONE)
        self.sign_in(page, self.args.admin_key)
        overflow = {}
        for path in ("/tools", f"/tools/{TOOL}/draft", "/projects/shop", "/playground", "/calls",
                     f"/tools/{TOOL}/compare?from=1&to=draft"):
            page.goto(self.url(path))
            overflow[path] = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        page.goto(self.url(f"/tools/{TOOL}/draft"))
        self.shot("editor-phone.png", page)
        page.keyboard.press("Tab")
        first = page.evaluate("document.activeElement.textContent.trim()")
        page.keyboard.press("Tab")
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        return {"overflow": overflow, "first_tab": first, "focus_outline": outline}


STEPS = ["signin", "register", "invalid_save", "fix_and_save", "unsaved_warning", "publish", "read_only",
         "new_draft", "project", "playground", "call_log", "agent", "tools_screen", "phone_and_keyboard"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--url", "--admin-key", "--agent-key", "--backend", "--shots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        story = Story(args, browser)
        for step in STEPS:
            try:
                story.seen[step] = getattr(story, step)()
            except Exception:  # noqa: BLE001 - reported to the test, which fails on it
                story.seen["failed"] = {"step": step, "error": traceback.format_exc(limit=4),
                                        "path": story.path()}
                story.shot("failure.png")
                break
        story.seen["offsite_requests"] = story.offsite
        browser.close()
    json.dump(story.seen, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
