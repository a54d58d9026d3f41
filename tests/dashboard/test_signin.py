"""Signing in with an API key, the session cookie, signing out, and CSRF on every write."""
import base64
import json
import zlib

import pytest
import requests
from flask import Flask
from flask.sessions import SecureCookieSessionInterface

from service.dashboard.account import NO_DASHBOARD
from service.dashboard.signin import _SIGNING_INFO, COOKIE_NAME, derive, safe_next
from service.dashboard.web import CONTENT_SECURITY_POLICY, CSRF_FAILED
from service.database import db
from service.models import ApiKey, now
from service.registry import create_api_key, get_organization
from tests.dashboard.client import Person
from tests.support.constants import SECRET

pytestmark = pytest.mark.service(per_module=True)  # each test names its own tools


def cookie_payload(cookie: str) -> bytes:
    """The readable part of a Flask session cookie (signed, optionally compressed, never encrypted)."""
    compressed = cookie.startswith(".")
    data = cookie.lstrip(".").split(".")[0]
    raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    return zlib.decompress(raw) if compressed else raw


def test_a_visitor_is_sent_to_sign_in_and_back(service):
    person = Person(service.url)
    page = person.get("/projects")
    assert page.url.endswith("/signin?next=/projects")
    assert person.post("/signin", {"api_key": service.admin_key, "next": "/projects"}).url.endswith("/projects")


OFF_SITE = ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "/%09/evil.example",
            "/\n/evil.example", "/\r\n/evil.example", "/ /evil.example", "\t//evil.example", "/\x0b/evil.example",
            "/%2F%2Fevil.example", "/%5Cevil.example", "/%2f/evil.example", "//x", "/\\x", "https://x", "/%2F%2Fx",
            "javascript:alert(1)", "evil.example", "/tools\r\nSet-Cookie: planted=1", "/tools\nX: y", "/tools\x00"]


def signing_in_to(service, target):
    """The answer to signing in with `next` = `target`, not followed."""
    person = Person(service.url)
    person.get("/signin")
    return requests.post(service.url + "/signin", data={"api_key": service.admin_key, "next": target,
                                                         "csrf_token": person.csrf},
                         headers={"Cookie": f"{COOKIE_NAME}={person.cookie}"}, allow_redirects=False, timeout=10)


@pytest.mark.parametrize("target", OFF_SITE)
def test_sign_in_never_sends_a_person_to_another_site(service, target):
    """CR or LF in `next` was a 500 (a header cannot hold them); `/%09/evil.example` led to //evil.example, since
    browsers drop tabs and line breaks from a URL. Anything but a plain path on this site goes to the Tools screen."""
    response = signing_in_to(service, target)
    assert response.status_code == 302
    assert response.headers["Location"] == "/tools"
    assert safe_next(target) is None


@pytest.mark.parametrize("target", ["/tools", "/projects/shop", "/calls?subject=al%C3%AFce&kind=ok",
                                    "/tools/get_orders/compare?from=1&to=draft", "/tools/a%20b"])
def test_a_path_on_this_site_is_where_signing_in_goes_next(service, target):
    response = signing_in_to(service, target)
    assert response.status_code == 302
    assert response.headers["Location"] == target


@pytest.mark.parametrize("key", ["", "not-a-key", "tgk_0000000000000000_wrong"])
def test_a_wrong_key_is_refused_next_to_its_field(service, key):
    page = Person(service.url).sign_in(key)
    assert page.status == 401
    assert page.error_at("f-api_key") == "Error: That API key was not accepted."


def test_a_backend_key_cannot_sign_in(service):
    person = Person(service.url)
    page = person.sign_in(service.backend_key)
    assert page.status == 403
    assert page.error_at("f-api_key") == f"Error: {NO_DASHBOARD}"
    assert person.get("/tools").url.endswith("/signin?next=/tools")


def test_the_session_cookie_is_secure_http_only_and_same_site(admin):
    cookie = [c for c in admin.set_cookies if c.startswith(COOKIE_NAME + "=")][-1]
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"secure", "httponly", "samesite", "path", "expires"} <= attributes
    assert "SameSite=Lax" in cookie


def test_the_cookie_never_discloses_the_api_key(service, admin):
    payload = cookie_payload(admin.cookie)
    _, key_id, secret = service.admin_key.split("_", 2)
    assert secret.encode() not in payload and key_id.encode() not in payload
    assert set(json.loads(payload)) == {"_permanent", "csrf", "key"}


def test_the_cookie_is_signed_with_a_derived_key_never_the_raw_secret(admin):
    def loads(secret_key):
        app = Flask("check")
        app.secret_key = secret_key
        return SecureCookieSessionInterface().get_signing_serializer(app).loads(admin.cookie)

    assert "key" in loads(derive(SECRET, _SIGNING_INFO))
    with pytest.raises(Exception, match="Signature"):
        loads(SECRET)


def test_a_tampered_cookie_signs_nobody_in(service, admin):
    admin.cookie = admin.cookie[:-2] + ("AA" if not admin.cookie.endswith("AA") else "BB")
    assert admin.get("/tools").url.endswith("/signin?next=/tools")


def test_signing_out_ends_the_session(admin):
    page = admin.post("/signout")
    assert page.url.endswith("/signin") and "Signed out." in page.text
    assert admin.get("/tools").url.endswith("/signin?next=/tools")


def test_a_revoked_key_is_out_at_once(service):
    with db.connection_context():
        key = create_api_key(get_organization(service.org), "admin")
    person = Person(service.url)
    person.sign_in(key)
    assert person.get("/tools").url.endswith("/tools")
    with db.connection_context():
        ApiKey.update(revoked_at=now()).where(ApiKey.key_id == key.split("_")[1]).execute()
    assert person.get("/tools").url.endswith("/signin?next=/tools")


WRITES = ["/signin", "/signout", "/tools/new", "/tools/t/draft", "/tools/t/draft/new", "/tools/t/label",
          "/tools/t/publish", "/projects", "/projects/p/draft", "/projects/p/draft/new", "/projects/p/publish",
          "/playground", "/playground/step"]


@pytest.mark.parametrize("path", WRITES)
@pytest.mark.parametrize("token", [None, "forged"])
def test_every_write_without_this_sessions_csrf_token_is_refused(service, admin, path, token):
    data = {"name": "csrf_probe", "description": "d", "method": "GET", "url": "https://api.example.com/x"}
    if token:
        data["csrf_token"] = token
    page = admin.post(path, data, csrf=False)
    assert page.status == 400
    assert CSRF_FAILED in page.text
    assert service.api("GET", "/v1/tools/csrf_probe").status_code == 404  # nothing was written


def test_pages_carry_the_security_headers(service, admin):
    import requests

    response = requests.get(service.url + "/tools", headers={"Cookie": f"{COOKIE_NAME}={admin.cookie}"},
                            timeout=10, allow_redirects=False)
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"
