"""No input of the dashboard answers 500 (issue 30, point 8): every field of every form of every POST route, one at a
time, set to values that broke forms before: `²` (str.isdigit() takes it, int() refuses it), 5,000 digits (past
int()'s limit), a lone surrogate, NUL, a line break, a very long string. The import page's `server` field did.

The forms are read from the pages themselves, so a field added to a page is fuzzed without changing this file; a
POST route no page shows a form for is posted every field name seen anywhere."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import quote, urlsplit

import pytest
import requests

from service.dashboard.web import blp
from tests.dashboard.client import COOKIE, Person
from tests.support.databases import app_for

#: Each hostile value as it goes on the wire, percent-encoded (a lone surrogate cannot be encoded from a str).
HOSTILE = {"superscript two": quote("²"), "5,000 digits": "9" * 5000, "lone surrogate": "%ED%A0%80", "NUL": "%00",
           "line break": "a%0D%0Ab", "100,000 characters": "x" * 100_000, "past a 64-bit integer": "9" * 20,
           "negative": "-1"}
#: Pages whose forms are fuzzed, once a tool with a draft, a published version and a project exist.
PAGES = ["/signin", "/tools", "/tools/new", "/tools/new/import", "/tools/orders", "/tools/orders/draft",
         "/tools/orders/publish", "/tools/orders/versions/1", "/projects", "/projects/shop", "/projects/shop/publish",
         "/playground", "/calls", "/identity"]
DOCUMENT = ('{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "servers": [{"url": "https://api.example.com"}],'
            ' "paths": {"/a": {"get": {"operationId": "a", "responses": {"200": {"description": "ok"}}}}}}')


class Forms(HTMLParser):
    """Every POST form of a page: its action and the names and values of its fields."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []
        self._open: dict[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and (attrs.get("method") or "").lower() == "post":
            self._open = {}
            self.forms.append((attrs.get("action") or "", self._open))
        elif self._open is not None and tag in ("input", "textarea", "select", "button") and attrs.get("name"):
            self._open.setdefault(attrs["name"], attrs.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "form":
            self._open = None


@pytest.fixture
def ready(service, admin):
    definition = {"name": "orders", "description": "The orders.", "method": "GET", "url": "https://api.example.com/o"}
    assert service.api("POST", "/v1/tools", json=definition).status_code == 201
    assert service.api("POST", "/v1/tools/orders/publish").status_code == 201
    assert service.api("POST", "/v1/tools/orders/draft").status_code == 201
    assert service.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
    return admin


#: One kept-alive connection for the thousands of posts (a new one each cost a third of the test's time).
_HTTP = requests.Session()
_HTTP.trust_env = False


def post(service, person: Person, path: str, fields: dict[str, str], name: str, value: str) -> int:
    """`fields` with `name` set to the raw (already encoded) `value`, posted as the person's browser would, with the
    session's CSRF token (one a session, read from a page once: reading a page a post doubled the test's time)."""
    if person.csrf is None:
        person.get("/tools")
    fields = {**fields, "csrf_token": person.csrf or ""}
    body = "&".join(f"{quote(k)}={value if k == name else quote(v)}" for k, v in fields.items())
    if name not in fields:
        body += f"&{quote(name)}={value}"
    response = _HTTP.post(service.url + path, data=body, allow_redirects=False, timeout=30, headers={
        "Cookie": f"{COOKIE}={person.cookie}", "Content-Type": "application/x-www-form-urlencoded"})
    return response.status_code


def test_no_value_of_any_field_of_any_dashboard_form_answers_500(service, ready):
    forms: dict[str, dict[str, str]] = {}
    for page in PAGES:
        parser, shown = Forms(), ready.get(page)
        parser.feed(shown.text)
        for action, fields in parser.forms:
            path = urlsplit(action).path or urlsplit(shown.url).path
            forms.setdefault(path, {}).update(fields)
    forms.setdefault("/tools/new/import", {}).update(document=DOCUMENT, op="preview")
    # A pins page's Add buttons stand outside its form (`form="pins-form"`), and its pins only once there are some.
    forms.setdefault("/projects/shop/draft", {}).update({"add": "orders", "pin-orders": "1", "q": ""})
    adapter = app_for(service.config).url_map.bind("x")
    for path in [p for p in forms if not adapter.test(p, "POST")]:  # a version's editor, shown read-only
        del forms[path]
    posted = {adapter.match(path, method="POST")[0] for path in forms}
    every = {rule.endpoint for rule in adapter.map.iter_rules()
             if rule.endpoint.startswith(f"{blp.name}.") and "POST" in rule.methods}
    assert {"dashboard.import_openapi_submit", "dashboard.register_submit", "dashboard.editor_submit",
            "dashboard.relabel", "dashboard.save_pins", "dashboard.signin_submit"} <= posted
    # A POST route no page above shows a form for now (a playground step, an approval, starting a draft of what has
    # one) gets every field name seen anywhere.
    seen = {name for fields in forms.values() for name in fields} | {"calls[0].name", "calls[0].arguments", "decision"}
    for rule in adapter.map.iter_rules():
        if rule.endpoint in every - posted:
            path = re.sub(r"<[^>]+>", "shop" if rule.rule.startswith("/projects") else "orders", rule.rule)
            forms[path] = {name: "" for name in seen}
            posted.add(rule.endpoint)
    assert posted == every
    failures = []
    for path in sorted(forms, key=lambda p: (p == "/signout", p)):  # signing out last
        for name in sorted(set(forms[path]) - {"csrf_token"}):
            for label, value in HOSTILE.items():
                status = post(service, ready, path, forms[path], name, value)
                if status >= 500:
                    failures.append((path, name, label, status))
        if path == "/signout":
            break
    assert not failures, failures


@pytest.mark.parametrize("server", ["²", "9" * 5000, "١", "0" * 30 + "1"])
def test_the_import_pages_server_field_that_names_no_server_is_refused_on_it(ready, server):
    page = ready.post("/tools/new/import", {"document": DOCUMENT, "server": server, "op": "preview"})
    assert page.status == 422 and page.error_at("f-server")


def test_the_import_pages_server_field_takes_an_index(ready):
    page = ready.post("/tools/new/import", {"document": DOCUMENT, "server": "0", "op": "preview"})
    assert page.status == 200 and page.error_at("f-server") is None and "GET /a" in page.text
