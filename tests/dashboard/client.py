"""A person at the dashboard without a browser: follows redirects, keeps the session cookie, reads CSRF tokens.

`requests` will not send a Secure cookie over plain http (browsers do, to 127.0.0.1), so this keeps the one cookie
itself and records every Set-Cookie header it saw for the cookie tests.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from urllib.parse import urljoin

import requests

COOKIE = "toolgate_dashboard"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class _ById(HTMLParser):
    """The text inside the element with a given id (and its descendants)."""

    VOID = {"input", "br", "img", "meta", "link", "hr", "source", "col", "area", "base", "wbr"}

    def __init__(self, element_id: str):
        super().__init__()
        self.element_id, self.depth, self.parts, self.found = element_id, 0, [], False

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += tag not in self.VOID
        elif dict(attrs).get("id") == self.element_id:
            self.found = True
            self.depth = 0 if tag in self.VOID else 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def text_of(html: str, element_id: str) -> str | None:
    """The whitespace-collapsed text of the element with `element_id`, or None when there is none."""
    parser = _ById(element_id)
    parser.feed(html)
    return " ".join("".join(parser.parts).split()) if parser.found else None


@dataclass
class Page:
    status: int
    url: str
    text: str

    def error_at(self, field_id: str) -> str | None:
        """The error text shown next to the input with this id (None when it shows none)."""
        return text_of(self.text, field_id + "-error")

    def errors(self) -> dict[str, str]:
        """Every error shown next to a field: the field's input id → the text shown."""
        ids = re.findall(r'<div class="field-error" id="([^"]+)-error">', self.text)
        return {i: text_of(self.text, i + "-error") for i in ids}

    def text_of(self, element_id: str) -> str | None:
        return text_of(self.text, element_id)


@dataclass
class Person:
    base: str
    cookie: str | None = None
    set_cookies: list[str] = field(default_factory=list)
    csrf: str | None = None

    def request(self, method: str, path: str, data=None, *, follow: bool = True) -> Page:
        url = urljoin(self.base, path)
        for _ in range(5):
            headers = {"Cookie": f"{COOKIE}={self.cookie}"} if self.cookie else {}
            response = requests.request(method, url, data=data, headers=headers, allow_redirects=False, timeout=30)
            self._keep_cookie(response)
            if not (follow and response.is_redirect):
                break
            method, data, url = "GET", None, urljoin(url, response.headers["Location"])
        token = _CSRF.search(response.text)
        if token:
            self.csrf = token[1]
        return Page(response.status_code, response.url, response.text)

    def _keep_cookie(self, response) -> None:
        for header in response.raw.headers.getlist("Set-Cookie"):
            self.set_cookies.append(header)
            morsel = SimpleCookie(header).get(COOKIE)
            if morsel is not None:
                self.cookie = morsel.value or None

    def get(self, path: str, **kwargs) -> Page:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, data: dict | list | None = None, *, csrf: bool = True, **kwargs) -> Page:
        items = list(data.items()) if isinstance(data, dict) else list(data or [])
        if csrf:
            items.append(("csrf_token", self.csrf or ""))
        return self.request("POST", path, items, **kwargs)

    def sign_in(self, api_key: str) -> Page:
        self.get("/signin")
        return self.post("/signin", {"api_key": api_key})
