"""The spec's story at the dashboard, walked in a real browser: Playwright driving Debian's Chromium, headless.

test_browser.py starts this file as a subprocess (Playwright's sync API runs its own event loop, kept apart from the
test process's gevent patching) ahead of its tests: it launches the browser, says so, then waits for the story's
settings, one JSON object on stdin, which the test sends once it has started the service and the mock backend and seeded
published tools (and 196 more, so that the organization has 200: the Tools screen pages, a project's pins are a
search, the playground folds the tools a version does not pin). It prints what each
step saw as one JSON line as soon as the step is done, so the test of each step waits for that step only; an `end`
line last. It saves a screenshot of each screen; the tests assert.

One browser and one window: a pass at 1280 px, then the same window narrowed to 390 px for a pass over each screen.
A screen that exists only after a form was sent (the refused register form and save, the publish confirmation, the
playground's results) is looked at in both widths where it stands, by resizing the window. Every screen is checked
with axe-core (`axe-playwright-python` bundles it), and every violation found, of any impact, is reported per
screen: at 1280 px with every WCAG 2 A and AA rule and axe's best practices (landmark-unique among them); at 390 px
without the colour contrast rule (the colours are the same at every width; what changes there is the layout).
Nothing waits a fixed time: every step waits for what it expects to see.

    echo '{"url": URL, "admin_key": KEY, "agent_key": KEY, "backend": URL, "shots": DIR}' | \
        python tests/dashboard/browser_story.py
"""
from __future__ import annotations

import json
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

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
#: The name the story first tries to register: a word the dashboard's own pages use, refused.
RESERVED = "new"

#: The document the story previews on the import page: an operation that reads and one that deletes.
IMPORTED = """openapi: 3.0.3
info: {title: Orders, version: "1"}
servers: [{url: "https://api.shop.example.com"}]
paths:
  /orders/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: showOrder, summary: Show one order with everything the shop knows of it, responses: {"200": {description: ok}}}
    delete: {operationId: cancelOrder, summary: Cancel an order, responses: {"200": {description: ok}}}
"""
#: The rows of a long table axe leaves out: all but the first five, which show every kind of cell the rest do.
REPEATED_ROWS = "table.tools tbody.tool:nth-of-type(n+6), ul.matches > li:nth-child(n+6)"
#: The screens whose narrow layout is one of their own, which axe checks at 390 px too.
PHONE_LAYOUTS = ("tools", "calls", "compare")
#: What axe checks: WCAG 2.0 to 2.2, A and AA, and its best practices; every finding counts, whatever its impact.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]

# What every control on a page lacks when it has no label (an empty list is the pass).
UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => !e.labels.length && !e.getAttribute('aria-label')).map(e => e.id || e.name)"""
CONTROLS_FIXED = """() => [...document.querySelectorAll('form.editor input, form.editor select, form.editor textarea')]
  .map(e => ({id: e.id, fixed: e.matches(':disabled') || e.readOnly}))"""
OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"
# How far the page or any of its tables' boxes scrolls sideways, the most of them (0 is the pass).
SIDEWAYS = """() => Math.max(document.documentElement.scrollWidth - document.documentElement.clientWidth,
  ...[...document.querySelectorAll('.table-wrap')].map(w => w.scrollWidth - w.clientWidth))"""
# The bottom of an element, from the top of the page, in CSS pixels.
BOTTOM = "s => document.querySelector(s).getBoundingClientRect().bottom + window.scrollY"
HEIGHT = "document.documentElement.scrollHeight"
# The parts of a selector's elements that stand outside the window, sideways (an empty list is the pass).
OFF_SCREEN = """s => [...document.querySelectorAll(s)].filter(e => e.getBoundingClientRect().right > window.innerWidth)
  .map(e => e.textContent.trim())"""


@dataclass(frozen=True)
class Settings:
    """What the test sends: the service's URL and keys, the mock backend's URL, where the screenshots go."""

    url: str
    admin_key: str
    agent_key: str
    backend: str
    shots: str


class Story:
    def __init__(self, args: Settings, browser, page: "Page"):
        """`page`: the wide window the story walks, opened while the browser waited for the settings."""
        self.args, self.browser, self.offsite = args, browser, []
        self.shots = Path(args.shots)
        self.shots.mkdir(parents=True, exist_ok=True)
        self.page = self._watched(page)
        self.agent_page: "Page | None" = None  # the agent's own window, from `agent` to `agent_publish`
        self.axe_found: dict[str, list] = {}
        self.axe_seconds: dict[str, float] = {}
        from axe_playwright_python.base import AXE_SCRIPT
        self.axe_script = AXE_SCRIPT

    def new_page(self, viewport) -> "Page":
        return self._watched(self.browser.new_context(viewport=viewport).new_page())

    def _watched(self, page: "Page") -> "Page":
        """`page`, held to the step timeout, with every request it makes off the service noted."""
        page.set_default_timeout(STEP_TIMEOUT_MS)
        page.on("request", lambda r: None if r.url.startswith((self.args.url, "data:")) else self.offsite.append(r.url))
        return page

    def url(self, path: str) -> str:
        return self.args.url + path

    def path(self, page: "Page | None" = None) -> str:
        return (page or self.page).url[len(self.args.url):]

    def shot(self, name: str, page: "Page | None" = None, *, start: str | None = None,
             most: int = MAX_SHOT_HEIGHT) -> None:
        """A screenshot of the whole page width, from the top or from the element `start` names, cut short."""
        page = page or self.page
        top = page.locator(start).bounding_box()["y"] + page.evaluate("window.scrollY") if start else 0
        height = min(page.evaluate("document.documentElement.scrollHeight") - top, most)
        page.screenshot(path=str(self.shots / name), full_page=True,
                        clip={"x": 0, "y": top, "width": page.viewport_size["width"], "height": height})

    def axe(self, screen: str, page: "Page | None" = None) -> None:
        """Check the page as it stands with axe-core; keep its violations, of any impact, under `screen`.

        A long list's rows come from one template, so past the first few of them (`REPEATED_ROWS`) axe looks no
        further: fifty rows of the Tools screen took it a second and a half, five take a tenth."""
        page = page or self.page
        wide = page.viewport_size["width"] >= WIDE["width"]
        options = {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]}
        if not wide:
            options["rules"] = {"color-contrast": {"enabled": False}}
        began = time.monotonic()
        if not page.evaluate("typeof window.axe !== 'undefined'"):
            page.evaluate(self.axe_script)
        found = page.evaluate("([context, options]) => axe.run(context, options)",
                              [{"exclude": [[REPEATED_ROWS]]}, options])["violations"]
        label = f"{screen} at {page.viewport_size['width']} px"
        self.axe_seconds[label] = round(time.monotonic() - began, 2)
        self.axe_found[label] = [{"rule": v["id"], "impact": v["impact"], "where": [n["target"] for n in v["nodes"]]}
                                 for v in found]

    def both_widths(self, screen: str | None = None, shot: str | None = None) -> dict:
        """The page as it stands at phone width too: nothing sideways, a screenshot if named, axe where the narrow
        layout is one of its own (`screen`); then wide again."""
        page = self.page
        page.set_viewport_size(PHONE)
        seen = {"overflow": page.evaluate(OVERFLOW)}
        if shot:
            self.shot(shot)
        if screen:
            self.axe(screen)
        page.set_viewport_size(WIDE)
        return seen

    def error_at(self, field_id: str, page: "Page | None" = None) -> str | None:
        found = (page or self.page).locator(f"#{field_id}-error")
        return " ".join(found.inner_text().split()) if found.count() else None

    def sign_in(self, page: "Page", key: str, *, opened: bool = False, then: str = "/tools") -> None:
        """Sign in from the page `then` asks for (the sign-in page comes first; `opened`: it is already on `page`),
        landing back on it."""
        if not opened:
            page.goto(self.url(then))
        page.fill("#f-api_key", key)
        page.press("#f-api_key", "Enter")  # the keyboard submits the form
        page.wait_for_url(lambda url: urlsplit(url).path == then)

    def rows(self) -> "list":
        return self.page.locator("[data-rows=parameters] > [data-row]")

    def names(self) -> list[str]:
        return self.page.locator("[data-rows=parameters] [data-field=name]").evaluate_all("es => es.map(e => e.value)")

    # The steps of the story, in order; each records what a person would see.

    def signin_page(self):
        """The Tools screen asked for signed out: the sign-in page, checked by axe."""
        page = self.page
        page.goto(self.url("/tools"))
        self.axe("sign-in", page)
        return {"path": urlsplit(page.url).path, "h1": page.inner_text("h1")}

    def signin(self):
        """The key typed on that page: signed in, back on the Tools screen."""
        self.sign_in(self.page, self.args.admin_key, opened=True)
        return {"path": self.path(), "h1": self.page.inner_text("h1")}

    def register_refused(self):
        """A first try named with a word the dashboard's pages use, and with a {placeholder} in the URL and no
        parameter for it: refused, the name with its sentence, and with the parameter added."""
        page = self.page
        page.click("text=Register a tool")
        page.fill("#f-name", RESERVED)
        page.fill("#f-display_name", "Customer orders")
        page.fill("#f-description", "The signed-in customer's orders, filtered by status.")
        page.select_option("#f-method", "GET")
        page.fill("#f-url", f"{self.args.backend}/tools/{TOOL}/echo/users/{{subject}}/orders")
        page.click("button.primary:has-text('Register and open the editor')")
        page.wait_for_selector("#register-note")
        refused = {"url_error": self.error_at("f-url"), "name_error": self.error_at("f-name"),
                   "note": page.inner_text("#register-note"), "added": self.names(),
                   "scope": page.input_value("#f-scope"),
                   "summary": page.locator("[data-error-summary] li").all_inner_texts()}
        self.axe("register, refused")
        return {**refused, "phone": self.both_widths("register, refused")}

    def register(self):
        """The refused form sent again with another name: it registers, and the draft's editor opens."""
        page = self.page
        page.fill("#f-name", TOOL)
        page.click("button.primary:has-text('Register and open the editor')")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        return {"path": self.path(), "h1": page.inner_text("h1"), "flash": page.inner_text(".flash"),
                "names": self.names(), "name_readonly": page.eval_on_selector("#f-name", "e => e.readOnly")}

    def invalid_save(self):
        page, rows = self.page, self.rows()
        page.click("text=Add parameter")
        statuses = rows.nth(1)
        statuses.locator("[data-field=name]").fill("statuses")
        statuses.locator("[data-field=type]").select_option("array")
        locked = {"location": statuses.locator("[data-field=location]").input_value(),
                  "location_disabled": statuses.locator("[data-field=location]").is_disabled(),
                  "element_type_visible": statuses.locator("[data-field=element_type]").is_visible()}
        page.click("text=Add parameter")
        order = rows.nth(2)
        order.locator("[data-field=name]").fill("order_id")
        order.locator("[data-field=location]").select_option("path")
        page.fill("#f-url", f"{self.args.backend}/tools/{TOOL}/echo/users/{{subject}}/orders/{{order}}")
        page.click("button:has-text('Save draft')")
        page.wait_for_selector("[data-error-summary]")
        fields = ["f-url", "f-parameters-1-element_type", "f-parameters-1-location", "f-parameters-2-location"]
        seen = {"locked": locked, "errors": {f: self.error_at(f) for f in fields},
                "summary": page.locator("[data-error-summary] li").all_inner_texts(),
                "summary_links": page.locator("[data-error-summary] a").evaluate_all(
                    "as => as.map(a => a.getAttribute('href'))"),
                "summary_focused": page.evaluate("document.activeElement.hasAttribute('data-error-summary')"),
                "unsaved_note": page.is_visible("[data-unsaved-note]"),
                # An error sits under its row, across the table, and the row's inputs stay on one line.
                "error_width": page.locator("tbody.param").nth(1).locator(".row-error").first.bounding_box()["width"],
                "table_width": page.locator("table.params").bounding_box()["width"],
                "row_tops": sorted({round(box["y"]) for box in (statuses.locator(f"[data-field={f}]").bounding_box()
                                                                for f in ("name", "type", "description"))}),
                "kept": self.names()}
        return seen

    def invalid_save_checked(self):
        """The refused editor kept as a screenshot and checked by axe, wide and at phone width: a step of its own,
        so that no step is long."""
        self.shot("editor-errors.png")
        self.axe("editor, refused save")
        return self.both_widths("editor, refused save")

    def fix_and_save(self):
        """Fix each problem; move a row by dragging its handle, and back by the keyboard; save."""
        page, rows = self.page, self.rows()
        page.select_option("#f-method", "POST")
        rows.nth(1).locator("[data-field=element_type]").select_option("string")
        rows.nth(2).locator("button[data-op=remove]").click()
        page.fill("#f-url", f"{self.args.backend}/tools/{TOOL}/echo/users/{{subject}}/orders")
        subject = rows.nth(0)
        subject_type = {"value": subject.locator("[data-field=type]").input_value(),
                        "disabled": subject.locator("[data-field=type]").is_disabled()}
        rows.nth(1).locator("[data-handle]").drag_to(rows.nth(0).locator("[data-field=name]"),
                                                     target_position={"x": 5, "y": 2})
        dragged = self.names()
        page.locator("[data-rows=parameters] [data-field=name]").nth(0).press("Alt+ArrowDown")
        by_keyboard = self.names()
        page.click("button:has-text('Save draft')")
        page.wait_for_selector(".flash")
        self.shot("editor.png")
        return {"flash": page.inner_text(".flash"), "subject_type": subject_type, "dragged": dragged,
                "by_keyboard": by_keyboard, "names": self.names(), "errors": page.locator(".field-error").count(),
                "unlabelled": page.evaluate(UNLABELLED)}

    def shape_try(self):
        """*Try it* beside the response shape: a pasted sample shaped as a call's answer would be, before saving;
        checked by axe wide and at phone width."""
        page = self.page
        page.fill("#f-response_shape", "orders[*].id")
        page.fill("#f-shape_sample", json.dumps({"orders": [{"id": "o-1", "lines": [1, 2]}, {"id": "o-2"}]}))
        page.click("button:has-text('Try it')")
        page.wait_for_selector("#shape-preview pre")
        seen = {"preview": " ".join(page.inner_text("#shape-preview").split()), "path": self.path(),
                "kept": page.input_value("#f-response_shape"), "unsaved": page.is_visible("[data-unsaved-note]")}
        self.axe("editor, try it")
        return {**seen, **self.both_widths("editor, try it")}

    def unsaved_warning(self):
        page, dialogs = self.page, []

        def answer(dialog):
            dialogs.append(dialog.type)
            dialog.dismiss()  # stay on the page

        page.on("dialog", answer)
        page.click("#f-description")
        page.keyboard.type(" More.")
        with page.expect_event("dialog"):
            page.click("nav >> text=Tools")
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
        self.axe("published version")
        facts = {name: " ".join(page.inner_text(f"[data-fact={name}]").split())
                 for name in ("required_entitlement", "requires_approval")}
        # As plainly as the method and URL: the same colour of text, and not smaller.
        look = "s => { const e = document.querySelector(s), c = getComputedStyle(e); return [c.color, c.fontSize]; }"
        plain = {"approval": page.evaluate(look, "[data-fact=requires_approval]"),
                 "url": page.evaluate(look, "#f-url")}
        phone = self.both_widths("published version")
        # A fixed value reads as text: no box drawn around it.
        look = page.eval_on_selector("#f-url", "e => getComputedStyle(e).borderTopColor")
        return {"facts": facts, "plain": plain, "phone": phone,
                "controls": page.evaluate(CONTROLS_FIXED), "save_buttons": page.locator("text=Save draft").count(),
                "notice": page.inner_text("[data-read-only]"), "url_border": look,
                "start_draft": page.locator("button:has-text('Start a new draft')").count()}

    def new_draft(self):
        """A new draft, with a required parameter added: a change that breaks the model."""
        page = self.page
        page.click("button:has-text('Start a new draft')")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        seen = {"path": self.path(), "flash": page.inner_text(".flash"), "status": page.inner_text(".status"),
                "names": self.names()}
        page.click("text=Add parameter")
        limit = self.rows().nth(2)
        limit.locator("[data-field=name]").fill("limit")
        limit.locator("[data-field=type]").select_option("number")
        page.click("button:has-text('Save draft')")
        page.wait_for_selector(".flash")
        seen["saved"] = self.names()
        return seen

    def project(self):
        """A new project's pins: none listed, and no control per tool of the organization's 200; each tool added by
        a search and its Add button, one version chosen beside its pin, then saved."""
        page = self.page
        page.click("nav >> text=Projects")
        page.fill("#f-name", "shop")
        with page.expect_navigation():
            page.click("text=Create project")
        page.wait_for_url("**/projects/shop")
        seen = {"selects": page.locator("select").count()}
        self._search_pins("o")  # in all three names (get_profile, product_search, search_orders), among the first 20
        for name in (TOOL, "get_profile", "product_search"):
            with page.expect_navigation():  # the search is kept: the next match is on the page it comes back to
                page.click(f"#pin-matches button[name=add][value={name}]")
        seen["added"] = page.inner_text(".flash")
        seen["badges"] = page.locator("#pin-matches .badge").count()
        page.select_option(f"#f-pin-{TOOL}", "draft")
        with page.expect_navigation():
            page.click("text=Save pins")
        seen["saved"] = page.inner_text(".flash")
        self.axe("project")
        seen["pins"] = page.locator("#pins-form select").evaluate_all("es => es.map(e => [e.name, e.value])")
        return seen

    def project_search(self):
        """The pins page searched for a word 196 tools share: a page of matches, the search at the top of the first
        screen at both widths, nothing sideways; checked by axe at both."""
        page = self.page
        self._search_pins("warehouse")
        seen = {"matches": page.locator("#pin-matches li").count(), "more": page.locator("#more-matches").count()}
        self.shot("project.png", most=WIDE["height"])
        for size in (WIDE, PHONE):
            page.set_viewport_size(size)
            seen[size["width"]] = {"height": page.evaluate(HEIGHT), "search_bottom": page.evaluate(BOTTOM, "#add-pin"),
                                   "sideways": page.evaluate(SIDEWAYS), "screen": size["height"]}
            self.axe("project, search")
        self.shot("project-phone.png", most=PHONE["height"])
        page.set_viewport_size(WIDE)
        return seen

    def _search_pins(self, words: str) -> None:
        page = self.page
        page.fill("#f-q", words)
        with page.expect_navigation():
            page.click("#add-pin button[type=submit]")

    def project_publish(self):
        page = self.page
        page.click("text=Publish…")
        page.wait_for_selector("[data-confirm]")
        self.axe("project publish confirmation")
        page.locator("[data-confirm]").screenshot(path=str(self.shots / "project-publish.png"))
        phone = self.both_widths()
        seen = {"phone": phone, "drafts_listed": page.inner_text("[data-drafts]"),
                "freeze": page.inner_text("#freeze-summary"),
                "impact": page.inner_text(f"[data-impact={TOOL}]"),
                "fixed": page.inner_text("#publish-fixed")}
        page.click("button:has-text('Publish project version 1')")
        page.wait_for_selector(".flash")
        return {**seen, "flash": page.inner_text(".flash"),
                "versions": page.inner_text("[aria-labelledby=versions-title]")}

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
        typed = [(TOOL, '{"statuses": ["open"], "limit": 5}'), ("product_search", '{"q": "milk"}'),
                 (TOOL, '{"statuses": "open"}')]
        while calls.count() < len(typed):
            page.click("text=Add call")
        for i, (name, arguments) in enumerate(typed):
            calls.nth(i).locator("input").fill(name)
            calls.nth(i).locator("textarea").fill(arguments)
        page.click("button:has-text('Run step')")
        page.wait_for_selector("[data-results]")
        results = page.locator("[data-results] [data-result]")
        unpinned = page.locator("#why-unpinned")
        seen = {"context": context, "offered": offered, "calls": calls.count(),
                "unpinned": {"summary": unpinned.locator("summary").inner_text(),
                             "open": unpinned.evaluate("e => e.open"),
                             "names": unpinned.locator("li").count()},
                "step_top": page.evaluate(BOTTOM, "#step-title"),
                "width": page.locator("[data-result]").first.bounding_box()["width"],
                "results": [{"text": results.nth(i).inner_text(),
                             "kind": results.nth(i).locator("[data-kind]").inner_text(),
                             "assertions": results.nth(i).get_by_text("Assertion the platform signed").count(),
                             "problems": results.nth(i).locator("[data-problems] tbody tr").all_inner_texts()}
                            for i in range(results.count())]}
        return seen

    def playground_checked(self):
        """The step's results kept as a screenshot and checked by axe, wide and at phone width: a step of its own,
        so that no step is long."""
        self.shot("playground.png", start="[aria-labelledby=results-title]")
        self.axe("playground, results")
        return self.both_widths("playground, results", "playground-phone.png")

    def call_log(self):
        page = self.page
        page.click("nav >> text=Calls")
        page.wait_for_url("**/calls")
        page.fill("#f-tool", TOOL)
        page.click("button:has-text('Filter')")
        page.wait_for_url(re.compile(rf"/calls\?.*tool={TOOL}"))
        self.shot("calls.png")
        self.axe("calls")
        rows, more = page.locator("table.calls tr[data-call]"), page.locator("table.calls tr.more")
        # Each call's cells, then the facts its details row folds (read closed, as their text).
        return {"headers": page.locator("table.calls thead th").all_inner_texts(), "sideways": page.evaluate(SIDEWAYS),
                "rows": [rows.nth(i).inner_text().split("\t") + more.nth(i).locator("dd").all_text_contents()
                         for i in range(rows.count())],
                "filters_shown": page.is_visible("#f-conversation"), "unlabelled": page.evaluate(UNLABELLED),
                "charts": page.locator(".call-charts figcaption h3").all_inner_texts(),
                "time_chart": page.locator("#chart-time svg").get_attribute("aria-label")}

    def agent(self):
        page = self.new_page(WIDE)
        # Published by the project: no draft until someone starts one, so the tool opens on its version.
        self.sign_in(page, self.args.agent_key, then=f"/tools/{TOOL}/versions/2")
        page.click("button:has-text('Start a new draft')")
        page.wait_for_url(f"**/tools/{TOOL}/draft")
        self.agent_page = page
        return {"publish_buttons": page.locator("a:has-text('Publish'), button:has-text('Publish')").count(),
                "save_buttons": page.locator("button:has-text('Save draft')").count(),
                "nav": page.inner_text("nav")}

    def agent_publish(self):
        """The agent goes to the publish page by its URL: not allowed."""
        page = self.agent_page
        page.goto(self.url(f"/tools/{TOOL}/publish"))
        seen = {"h1": page.inner_text("h1")}
        page.context.close()
        return seen

    def error_page(self):
        """A URL no page has, under the dashboard: its own error page, not the API's JSON."""
        page = self.page
        response = page.goto(self.url("/tools/no_such_tool/nowhere"))
        self.axe("error page")
        seen = {"status": response.status, "type": response.headers["content-type"].split(";")[0],
                "h1": page.inner_text("h1"), "message": page.inner_text("[data-error-message]"),
                "nav": page.locator("nav[aria-label=Main] a").all_inner_texts()}
        return {**seen, "phone": self.both_widths("error page")}

    def tools_screen(self):
        """The Tools screen's first page, sorted by tool name."""
        page = self.page
        page.click("nav >> text=Tools")
        page.wait_for_selector("#tools-count")
        tools = page.locator("table.tools tbody.tool")
        rows = [tools.nth(i).locator("tr").first.inner_text().split("\t") +
                tools.nth(i).locator("tr.more dd").all_text_contents() for i in range(4)]
        return {"count": page.inner_text("#tools-count"), "rows": tools.count(), "names": self._tool_names(),
                "next": page.get_attribute("#next-page", "href"), "sideways": page.evaluate(SIDEWAYS),
                "cells": {r[0].strip(): [" ".join(c.split()) if i > 4 else c.strip() for i, c in enumerate(r)]
                          for r in rows}}

    def tools_screen_checked(self):
        """The Tools screen kept as a screenshot and checked by axe."""
        self.shot("tools.png", most=WIDE["height"])
        self.axe("tools")
        return {}

    def tools_search(self):
        """The Tools screen searched, then sorted by another column, both on the server."""
        page = self.page
        page.fill("#filter-q", "customer")
        page.click("button:has-text('Filter')")
        page.wait_for_url("**/tools?q=customer*")
        searched = {"count": page.inner_text("#tools-count"), "names": self._tool_names()}
        page.click("table.tools thead >> text=Draft")  # tools with a draft first
        page.wait_for_url(re.compile(r"sort=draft"))
        by_draft = {"names": self._tool_names(), "sorted": page.get_attribute("th[aria-sort]", "aria-sort")}
        page.goto(self.url("/tools?sort=latest&order=desc"))  # newest first: the 196 unpublished tools last
        return {"searched": searched, "by_draft": by_draft, "newest_first": self._tool_names()[:5]}

    def import_screen(self):
        """The import page previewing a document: the width it uses at 1280 px, and its table at 390 px."""
        page = self.page
        page.goto(self.url("/tools/new/import"))
        page.fill("#f-document", IMPORTED)
        page.click("button:has-text('Preview')")
        page.wait_for_selector("#operations")
        # The preview is a new page: measured before its stylesheet had loaded (a loaded machine), the document's box
        # was a bare textarea's 182 px.
        page.wait_for_load_state("load")
        main = page.evaluate("document.querySelector('main').clientWidth")
        seen = {"document_width": page.evaluate("document.querySelector('#f-document').offsetWidth"), "main": main,
                "approval_ticked": page.locator("input[name=approval]:checked").evaluate_all(
                    "es => es.map(e => e.value)")}
        self.axe("import")
        page.set_viewport_size(PHONE)
        seen["phone_overflow"] = page.evaluate(OVERFLOW)
        seen["phone_off_screen"] = page.evaluate(OFF_SCREEN, "table.import tbody td, table.import tbody th")
        seen["phone_status_visible"] = page.locator("#op-1 td[data-label=Status]").is_visible()
        self.axe("import", page)
        page.set_viewport_size(WIDE)
        return seen

    def _tool_names(self) -> list[str]:
        return self.page.locator("table.tools tbody th").all_inner_texts()

    def phone(self):
        """The pass at 390 px, in the same window, narrowed: the tools, the editor and a project."""
        return self._at_phone({"/tools": "tools", f"/tools/{TOOL}/draft": "editor", "/projects/shop": "project"})

    def phone_calls_and_keyboard(self):
        """The pass at 390 px goes on (a step of its own, so that no step is long): the calls and a comparison;
        then the keyboard."""
        seen = self._at_phone({"/calls": "calls", f"/tools/{TOOL}/compare?from=1&to=draft": "compare"})
        page = self.page
        page.goto(self.url("/tools"))
        page.keyboard.press("Tab")
        first = page.evaluate("document.activeElement.textContent.trim()")
        page.keyboard.press("Tab")
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        return {**seen, "first_tab": first, "focus_outline": outline}

    def _at_phone(self, screens: dict[str, str]) -> dict:
        """Each screen (path: name) at phone width, nothing sideways; axe where the narrow layout is a layout of its
        own (the refused editor and the playground's results were checked where they stood)."""
        page = self.page
        page.set_viewport_size(PHONE)
        overflow, seen = {}, {}
        for path, screen in screens.items():
            page.goto(self.url(path))
            overflow[path] = page.evaluate(OVERFLOW)
            if screen in PHONE_LAYOUTS:
                self.axe(screen, page)
            if screen == "editor":
                self.shot("editor-phone.png", page, start="#f-parameters")
                seen["editor_cards"] = page.locator("tbody.param").nth(0).evaluate("e => getComputedStyle(e).display")
                seen["editor_labels"] = page.locator("tbody.param .cell-label").first.is_visible()
            if screen == "calls":
                seen["filters_folded"] = not page.is_visible("#f-tool")
                page.click("details.fold > summary")
                seen["filters_unfold"] = page.is_visible("#f-tool")
                seen["calls_off_screen"] = page.evaluate(OFF_SCREEN, "table.calls tbody td, table.calls tbody th")
                seen["calls_row"] = page.locator("table.calls tbody tr").first.inner_text().split("\n")
                self.shot("calls-phone.png", page)
        return {**seen, "overflow": overflow}


STEPS = ["signin_page", "signin", "register_refused", "register", "invalid_save", "invalid_save_checked",
         "fix_and_save", "shape_try", "unsaved_warning", "publish", "read_only", "new_draft", "project", "project_search",
         "project_publish",
         "playground", "playground_checked", "call_log", "agent", "agent_publish", "tools_screen",
         "tools_screen_checked", "tools_search", "error_page", "import_screen", "phone", "phone_calls_and_keyboard"]


def main() -> int:
    """Launch the browser and say so; then walk the story with the settings read from stdin, printing each step's
    part as it is done. Nothing on stdin (the run ended without needing the story) ends it quietly."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        print(json.dumps({"launched": browser.version}), flush=True)
        page = browser.new_context(viewport=WIDE).new_page()  # while the tests before the story run
        settings = sys.stdin.readline()
        if settings:
            walk(Story(Settings(**json.loads(settings)), browser, page))
        browser.close()
    return 0


def walk(story: Story) -> None:
    """Each step in order, its part printed as one line: `seen`, or `failed` (and no step after it); then `end`."""
    for step in STEPS:
        began = time.monotonic()
        part: dict = {"step": step}
        try:
            part["seen"] = getattr(story, step)()
        except Exception:  # reported to the test, which fails on it
            part["failed"] = {"error": traceback.format_exc(limit=4), "path": story.path()}
            story.shot("failure.png")
        part["seconds"] = round(time.monotonic() - began, 2)
        print(json.dumps(part), flush=True)
        if "failed" in part:
            return
    print(json.dumps({"step": "end", "axe": story.axe_found, "axe_seconds": story.axe_seconds,
                      "offsite_requests": story.offsite}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
