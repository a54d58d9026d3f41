"""The dashboard's inputs that used to crash it (issue 14), on SQLite and PostgreSQL alike: numbers past what the
database stores in paths, paging links and forms, and control characters in filters, labels and the playground's
test subject. Each is a page: a 404, or a 422 with the problem next to its field; never a 500."""
import contextlib

import pytest

from service.catalogue import RULES
from tests.conftest import ENGINES, POSTGRES_URL, fresh_postgres_schema
from tests.dashboard.client import Person
from tests.support.live import live_service

PAST_BIGINT = "9223372036854775808"
THOUSANDS_OF_DIGITS = "9" * 5000


@pytest.fixture(scope="module", params=ENGINES)
def service(request, tmp_path_factory):
    """A live service with get_orders published as version 1 and pinned by project shop's version 1."""
    tmp = tmp_path_factory.mktemp("untrusted")
    with fresh_postgres_schema(POSTGRES_URL) if request.param == "postgres" else contextlib.nullcontext() as url:
        with live_service(tmp, database_url=url) as running:
            definition = {"name": "get_orders", "description": "The orders.", "method": "GET",
                          "url": "https://api.example.com/orders"}
            assert running.api("POST", "/v1/tools", json=definition).status_code == 201
            assert running.api("POST", "/v1/projects", json={"name": "shop"}).status_code == 201
            pins = {"pins": [{"tool": "get_orders", "version": "draft"}]}
            assert running.api("PUT", "/v1/projects/shop/draft", json=pins).status_code == 200
            assert running.api("POST", "/v1/projects/shop/publish").status_code == 201
            assert running.api("POST", "/v1/projects/shop/draft").status_code == 201
            yield running


@pytest.mark.parametrize("number", [PAST_BIGINT, "2147483648", THOUSANDS_OF_DIGITS])
def test_a_paging_link_past_the_database_shows_the_first_page(admin, number):
    history = admin.get(f"/tools/get_orders/history?before={number}")
    assert history.status == 200 and "register" in history.text.lower()
    assert admin.get(f"/calls?before={number}").status == 200


@pytest.mark.parametrize("number", [PAST_BIGINT, "2147483648", THOUSANDS_OF_DIGITS])
def test_a_version_past_the_database_is_not_found_or_not_a_version(admin, number):
    assert admin.get(f"/tools/get_orders/versions/{number}").status == 404
    compared = admin.get(f"/tools/get_orders/compare?from={number}&to=1")
    assert compared.status == 422 and compared.error_at("f-from")


@pytest.mark.parametrize("value", [PAST_BIGINT, THOUSANDS_OF_DIGITS, "²", "٣"])
def test_a_pin_past_the_database_is_refused_next_to_its_tool(service, admin, value):
    page = admin.post("/projects/shop/draft", [("pin-get_orders", value)])
    assert page.status == 422
    assert page.error_at("f-pin-get_orders")
    assert service.api("GET", "/v1/projects/shop").json()["draft"]["pins"] == [{"tool": "get_orders", "version": 1}]


@pytest.mark.parametrize("encoded", ["a%00b", "a%1Bb", "a%C2%85b"])
def test_a_call_log_filter_with_a_control_character_is_refused_next_to_it(admin, encoded):
    for field in ("conversation", "turn", "tool", "subject"):
        page = admin.get(f"/calls?{field}={encoded}")
        assert page.status == 422
        assert page.error_at(f"f-{field}") == f"Error: {RULES['control-character']}"


def test_a_project_filter_with_a_nul_names_no_project(admin):
    assert admin.get("/tools?project=sh%00op").status == 404


def test_a_label_with_a_control_character_is_refused_and_changes_nothing(service, admin):
    for label in ("Orders\x1b[31m", "Orders\x00"):
        page = admin.post("/tools/get_orders/label", {"display_name": label})
        assert page.status == 422 and RULES["control-character"] in page.text
    assert service.api("GET", "/v1/tools/get_orders").json()["display_name"] == "get_orders"


def test_a_description_with_a_nul_is_refused_next_to_it(admin):
    page = admin.post("/tools/new", {"name": "with_nul", "description": "The orders.\x00", "method": "GET",
                                     "url": "https://api.example.com/orders"})
    assert page.status == 422
    assert page.error_at("f-description") == f"Error: {RULES['description-control-character']}"


@pytest.fixture
def player(service):
    person = Person(service.url)
    assert person.sign_in(service.admin_key).status == 200
    return person


@pytest.mark.parametrize("subject", [".", "..", "alice\x00", "ali\x1bce", "x" * 257])
def test_a_playground_subject_that_cannot_stand_as_a_path_segment_is_refused_next_to_it(player, subject):
    page = player.post("/playground", {"version": "shop:1", "subject": subject, "entitlements": ""})
    assert page.status == 422
    assert page.error_at("f-subject") == f"Error: {RULES['subject-format']}"


@pytest.mark.parametrize("version", [f"shop:{PAST_BIGINT}", f"shop:{THOUSANDS_OF_DIGITS}", "shop:²"])
def test_a_playground_version_past_the_database_is_refused_next_to_it(player, version):
    page = player.post("/playground", {"version": version, "subject": "alice", "entitlements": ""})
    assert page.status == 422 and page.error_at("f-version")


def test_a_playground_version_that_does_not_exist_is_not_found(player):
    page = player.post("/playground", {"version": "shop:2147483647", "subject": "alice", "entitlements": ""})
    assert page.status == 404


def test_a_row_index_of_thousands_of_digits_names_no_row(service, admin):
    """Read as a number it was a ValueError (Python refuses to parse past 4,300 digits): a 500."""
    definition = {"description": "The rows.", "method": "GET", "url": "https://api.example.com/rows"}
    assert service.api("POST", "/v1/tools", json={"name": "row_probe", **definition}).status_code == 201
    form = {**definition, f"parameters[{THOUSANDS_OF_DIGITS}].name": "status",
            f"parameters[{THOUSANDS_OF_DIGITS}].type": "string"}
    moved = admin.post("/tools/row_probe/draft", {**form, "op": f"remove-{THOUSANDS_OF_DIGITS}"})
    assert moved.status == 200
    saved = admin.post("/tools/row_probe/draft", {**form, "op": "save"})
    assert saved.status == 200
    assert service.api("GET", "/v1/tools/row_probe").json()["draft"]["revision"] == 2
