"""Every error on the dashboard's paths is its HTML error page, a route's or a path no route matches (404, 405, 413,
500); the REST API, the MCP endpoint and the JWKS keep the JSON error shape (issue 14)."""
import pytest
import requests

from service import create_app, registry
from service.config import Config
from service.dashboard import account
from service.dashboard.web import CONTENT_SECURITY_POLICY
from service.database import make_database
from service.errors import NO_ROUTE
from service.http import app_config
from service.migrations import migrate
from tests.dashboard.client import COOKIE, text_of
from tests.support.definitions import make_org


def is_error_page(response, status, title):
    """The dashboard's error page, with its title and the dashboard's security headers."""
    assert response.status_code == status, response.text[:200]
    assert response.headers["Content-Type"].startswith("text/html")
    assert f"<h1>{title}</h1>" in response.text
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["Cache-Control"] == "no-store"
    return response


def is_json_error(response, status, code):
    assert response.status_code == status, response.text[:200]
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["code"] == code and response.json()["errors"][0]["rule"] == code


@pytest.mark.parametrize("path", ["/nope", "/tools/get_orders/versions/1/edit", "/projects/shop/pins/x",
                                  "/tools/get_orders/versions/2147483648", "/tools/get%00orders", "/signin/"])
def test_a_dashboard_url_that_matches_no_route_is_the_dashboards_404_page(service, admin, path):
    for cookie in ({}, {"Cookie": f"{COOKIE}={admin.cookie}"}):
        response = requests.get(service.url + path, headers=cookie, timeout=10, allow_redirects=False)
        is_error_page(response, 404, "Not found")
        assert text_of(response.text, "main") is not None
        assert NO_ROUTE in response.text and "spelling" not in response.text
        # Signed in, the page keeps the navigation to find one's way back; a visitor's has none to show.
        assert ('<nav aria-label="Main">' in response.text) == bool(cookie)


def test_the_405_page_keeps_the_navigation_while_signed_in_and_names_the_methods(service, admin):
    response = requests.delete(service.url + "/tools", headers={"Cookie": f"{COOKIE}={admin.cookie}"}, timeout=10)
    is_error_page(response, 405, "Not allowed here")
    assert '<nav aria-label="Main">' in response.text
    assert "This address does not take DELETE; it takes GET." in response.text


def test_a_method_a_dashboard_route_does_not_take_is_the_405_page_with_allow(service):
    response = is_error_page(requests.delete(service.url + "/tools", timeout=10), 405, "Not allowed here")
    assert set(response.headers["Allow"].split(", ")) >= {"GET"}


def test_a_form_past_the_bound_is_the_413_page(service, admin):
    response = requests.post(service.url + "/tools/new", data=b"x" * 1_100_000, timeout=30,
                             headers={"Cookie": f"{COOKIE}={admin.cookie}",
                                      "Content-Type": "application/x-www-form-urlencoded"})
    is_error_page(response, 413, "Too large")


def test_a_declared_body_past_the_bound_on_a_path_no_route_matches_is_the_413_page(service):
    response = requests.post(service.url + "/nope", data=b"x" * 1_100_000, timeout=30)
    is_error_page(response, 413, "Too large")


@pytest.mark.parametrize("method, path, status, code", [
    ("GET", "/v1/nope", 404, "not-found"), ("DELETE", "/v1/tools", 405, "method-not-allowed"),
    ("GET", "/v1/tools/get_orders/versions/9223372036854775808", 404, "not-found"),
    ("GET", "/orgs/acme/.well-known/nope", 404, "not-found"), ("GET", "/openapi.json/x", 404, "not-found"),
    ("POST", "/v1/nope", 413, "request-too-large")])
def test_the_api_keeps_its_json_errors(service, method, path, status, code):
    body = b"x" * 1_100_000 if status == 413 else None
    is_json_error(requests.request(method, service.url + path, data=body, timeout=30), status, code)


def test_the_apis_not_found_and_not_allowed_speak_in_the_house_voice(service):
    missing = requests.get(service.url + "/v1/nope", timeout=10).json()
    assert missing["message"] == NO_ROUTE and missing["errors"][0]["message"] == NO_ROUTE
    refused = requests.delete(service.url + "/v1/tools", timeout=10)
    assert refused.json()["message"] == "This address does not take DELETE; it takes GET or POST."
    assert set(refused.headers["Allow"].split(", ")) >= {"GET", "POST"}


@pytest.fixture
def app(tmp_path):
    """An app that answers a crash as production does (not re-raised, as TESTING would)."""
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    database = make_database(url)
    with database.connection_context():
        migrate(database)
    return create_app(Config(database_url=url, secret_key="test-secret"))


def test_a_crash_under_the_dashboard_is_the_500_page_and_under_the_api_json(app, monkeypatch):
    def crash(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(account, "page", crash)
    monkeypatch.setattr(registry, "project_page", crash)
    client = app.test_client()
    response = client.get("/signin")
    assert response.status_code == 500 and response.content_type.startswith("text/html")
    assert "<h1>Something went wrong</h1>" in response.text and "a bug" not in response.text
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    api = client.get("/v1/projects", headers={"Authorization": f"Bearer {make_org(app_config(app), 'acme')['admin']}"})
    assert api.status_code == 500 and api.json["code"] == "internal-server-error"
