"""A document at an address: fetched through the dispatcher's guard and deadline, size-capped, on 127.0.0.1."""
import gzip
import json
from contextlib import contextmanager

import gevent
import pytest
from gevent.pywsgi import WSGIServer

from service import create_app
from service.config import Config
from service.dispatch import AddressGuard
from service.errors import ServiceError
from service.http import app_config
from service.importing import fetch_document
from tests.importing.conftest import document
from tests.support.definitions import Api, make_org

COMMERCE = json.loads(document("commerce.json"))
RELATIVE = {**COMMERCE, "servers": [{"url": "/shop/v2"}]}
LOOPBACK = AddressGuard(["127.0.0.0/8"])
CAP = 10_000


def documents(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/openapi.json":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(RELATIVE).encode()]
    if path == "/openapi.yaml.gz":
        start_response("200 OK", [("Content-Type", "application/yaml"), ("Content-Encoding", "gzip")])
        return [gzip.compress(document("petstore.yaml").encode())]
    if path == "/moved":
        start_response("302 Found", [("Location", "/openapi.json")])
        return [b""]
    if path == "/big":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (b"a" * 1_000 for _ in range(CAP // 1_000 + 1))
    if path == "/bomb":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")])
        return [gzip.compress(b"a" * 50_000_000)]
    if path == "/slow":
        gevent.sleep(5)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]


@contextmanager
def serving():
    server = WSGIServer(("127.0.0.1", 0), documents, log=None)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.stop(timeout=1)


@pytest.fixture
def site():
    with serving() as base:
        yield base


def fetch_refusal(url, guard=LOOPBACK, **options) -> ServiceError:
    with pytest.raises(ServiceError) as raised:
        fetch_document(url, guard=guard, **options)
    assert raised.value.status == 422
    assert [v.field for v in raised.value.violations] == ["url"]
    return raised.value


def test_a_document_is_fetched_and_its_encoding_undone(site):
    assert json.loads(fetch_document(f"{site}/openapi.json", guard=LOOPBACK)) == RELATIVE
    assert fetch_document(f"{site}/openapi.yaml.gz", guard=LOOPBACK) == document("petstore.yaml")


def test_a_loopback_address_without_the_allow_list_is_refused(site):
    error = fetch_refusal(f"{site}/openapi.json", guard=AddressGuard())
    assert error.code == "url-address-denied"
    assert error.message == ("The platform may not reach this address: it is neither public nor in the allowed "
                             "networks. Here, 127.0.0.1 is loopback.")


@pytest.mark.parametrize("url", ["ftp://example.com/a", "/openapi.json", "http://user:pw@example.com/a", 42,
                                 "http://exa mple.com/"])
def test_an_address_that_is_not_absolute_http_is_refused(url):
    assert fetch_refusal(url).code == "url-format"


def test_an_answer_that_is_not_a_success_says_what_it_was(site):
    assert fetch_refusal(f"{site}/nothing-here").message.endswith("It answered HTTP 404.")
    moved = fetch_refusal(f"{site}/moved")
    assert moved.code == "url-unfetchable"
    assert "HTTP 302 (a redirect, which is not followed" in moved.message


def test_a_document_past_the_cap_is_cut_off_while_it_streams(site):
    assert fetch_refusal(f"{site}/big", cap=CAP).code == "document-too-large"
    assert fetch_refusal(f"{site}/bomb", cap=CAP).code == "document-too-large"


def test_a_server_that_does_not_answer_in_time_is_given_up_on(site):
    error = fetch_refusal(f"{site}/slow", deadline=0.3)
    assert error.code == "url-unfetchable"
    assert error.message.endswith("It did not answer in full within 0.3 seconds.")


def test_a_port_where_nobody_listens_is_unfetchable():
    with serving() as base:
        pass
    message = fetch_refusal(f"{base}/openapi.json").message
    assert message.endswith("The connection failed, or its answer could not be read.")


def test_the_api_imports_from_an_address_and_resolves_relative_servers_against_it(database_url, site):
    app = create_app(Config(database_url=database_url, secret_key="s", allowed_networks=("127.0.0.0/8",),
                            flask={"TESTING": True}))
    api = Api(app.test_client(), make_org(app_config(app), "acme")["admin"])
    response = api("POST", "/v1/tools/import", json={"url": f"{site}/openapi.json", "subject_parameter": "userId",
                                                     "apply": True})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["document"]["server"] == f"{site}/shop/v2"
    orders = next(op for op in body["operations"] if op["tool"] == "get_orders")
    assert (orders["status"], orders["definition"]["url"]) == ("created", f"{site}/shop/v2/users/{{subject}}/orders")
