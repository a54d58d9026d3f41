"""Redirects and links are built from the configured public URL, never from the request's Host (issue 30, point 7).

werkzeug answered `GET /v1//tools` with `Host: attacker.example` by `308 Location: http://attacker.example/v1/tools`:
a client following it sends its next request, its credential included, wherever the Host said. Every kind of
redirect and absolute link the service makes is requested here, on a live service, with a hostile Host.
"""
import re
from urllib.parse import urlsplit

import jwt
import pytest
import requests

from tests.support.databases import app_for
from tests.support.loopback import exchange

HOSTILE = "attacker.example"
#: Paths werkzeug used to redirect to their slashes merged, by method: API, static file, dashboard, a step.
DOUBLED_SLASHES = ["/v1//tools", "//v1//tools", "/v1/tools/get_orders//draft", "/static//dashboard/app.css",
                   "/tools//new", "/v1/conversations/c//turns/t/steps", "/orgs/acme/.well-known//jwks.json"]


def hostile(service, method: str, path: str, **kwargs) -> requests.Response:
    headers = {"Host": HOSTILE, **kwargs.pop("headers", {})}
    return requests.request(method, service.url + path, headers=headers, allow_redirects=False, timeout=30, **kwargs)


def assert_no_host_in(response: requests.Response) -> None:
    assert HOSTILE not in str(response.headers) and HOSTILE not in response.text, (response.status_code,
                                                                                  response.headers)


@pytest.mark.parametrize("method", ["GET", "POST", "PUT"])
@pytest.mark.parametrize("path", DOUBLED_SLASHES)
def test_a_doubled_slash_is_a_plain_404_not_a_redirect_to_the_host(service, path, method):
    response = hostile(service, method, path, headers={"Authorization": f"Bearer {service.admin_key}"})
    assert response.status_code == 404 and "Location" not in response.headers
    assert_no_host_in(response)


def test_the_one_redirect_routing_still_makes_goes_to_the_public_url(service):
    """A rule ending in "/" asked for without it (the root, for an empty path) is still redirected: on the public
    URL's scheme and host."""
    answer = exchange(urlsplit(service.url).port, f"GET ?next=1 HTTP/1.1\r\nHost: {HOSTILE}\r\n"
                                                  "Connection: close\r\n\r\n".encode())
    head = answer.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.1 308")
    assert re.search(r"^Location: (.*)\r$", head, re.MULTILINE)[1] == f"{service.config.public_url}/?next=1"
    assert HOSTILE not in answer.decode()


def test_an_absolute_url_werkzeug_builds_is_on_the_public_url(service):
    from flask import url_for

    app = app_for(service.config)
    with app.test_request_context("/", headers={"Host": HOSTILE}, base_url=f"https://{HOSTILE}"):
        assert url_for("dashboard.tools", _external=True) == f"{service.config.public_url}/tools"
        assert url_for("dashboard.tools") == "/tools"


def test_the_dashboards_redirects_are_paths_on_this_site(service):
    """Sign-in, a form's redirect after it is done, the home page: a relative Location, whatever the Host."""
    home = hostile(service, "GET", "/")
    assert home.status_code == 302 and home.headers["Location"] == "/signin"
    signin = hostile(service, "GET", "/signin")
    cookie = signin.cookies.get("toolgate_dashboard") or re.search(
        r"toolgate_dashboard=([^;]+)", signin.headers["Set-Cookie"])[1]
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', signin.text)[1]
    jar = {"Cookie": f"toolgate_dashboard={cookie}"}
    signed_in = hostile(service, "POST", "/signin", headers=jar,
                        data={"api_key": service.admin_key, "csrf_token": csrf, "next": "/calls"})
    assert signed_in.status_code == 302 and signed_in.headers["Location"] == "/calls"
    jar = {"Cookie": f"toolgate_dashboard={signed_in.cookies.get('toolgate_dashboard') or cookie}"}
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', hostile(service, "GET", "/tools/new", headers=jar).text)[1]
    registered = hostile(service, "POST", "/tools/new", headers=jar, data={
        "name": "get_orders", "description": "The orders.", "method": "GET", "url": "https://api.example.com/o",
        "csrf_token": csrf})
    assert registered.status_code in (302, 303) and registered.headers["Location"].startswith("/tools/get_orders")
    for response in (home, signin, signed_in, registered):
        assert_no_host_in(response)


def test_issuers_come_from_the_public_url(service):
    minted = hostile(service, "POST", "/v1/session-tokens", headers={"Authorization": f"Bearer {service.backend_key}"},
                     json={"subject": "alice", "entitlements": [], "ttl_seconds": 60})
    assert minted.status_code == 201
    assert jwt.decode(minted.json()["token"], options={"verify_signature": False})["iss"] == service.issuer
    assert service.issuer.startswith(service.config.public_url)
    assert_no_host_in(minted)


def test_no_page_document_or_refusal_carries_the_host(service, admin):
    """Every GET route, with an admin's key and an admin's dashboard session: nothing answered names the Host (the
    OpenAPI document has no server built from it, MCP's refusal no resource URL)."""
    assert service.api("POST", "/v1/tools", json={"name": "get_orders", "description": "The orders.", "method": "GET",
                                                  "url": "https://api.example.com/o"}).status_code == 201
    credentials = {"Authorization": f"Bearer {service.admin_key}", "Cookie": f"toolgate_dashboard={admin.cookie}"}
    seen = 0
    for rule in app_for(service.config).url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        path = rule.rule
        for name in rule.arguments:
            path = re.sub(rf"<(?:[^:>]+:)?{name}>", "1" if name in ("number", "version") else {
                "name": "get_orders", "slug": "acme", "filename": "app.css"}.get(name, "x"), path)
        for headers in (credentials, {}):
            assert_no_host_in(hostile(service, "GET", path, headers=headers))
            seen += 1
    mcp = hostile(service, "POST", "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert mcp.status_code == 401
    assert_no_host_in(mcp)
    assert seen > 60
