"""The spec's rules exact (issue 14), each with the input that used to get through or crash."""
import pytest

from service.catalogue import RULES
from tests.registry.test_tools_api import ORDERS


def triples(response):
    return sorted((e["field"], e["rule"], e["message"]) for e in response.json["errors"])


def rule(field, rule_id):
    return (field, rule_id, RULES[rule_id])


def test_a_taken_name_is_reported_with_every_other_violation_and_stays_409(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    response = api("POST", "/v1/tools", {**ORDERS, "description": " ", "method": "FETCH"})
    assert response.status_code == 409  # used to be 422 without the taken name, which only a second try revealed
    assert response.json["code"] == "name-taken"
    assert triples(response) == [rule("description", "description-required"), rule("method", "method-unsupported"),
                                 rule("name", "name-taken")]
    alone = api("POST", "/v1/tools", ORDERS)
    assert (alone.status_code, triples(alone)) == (409, [rule("name", "name-taken")])
    free = api("POST", "/v1/tools", {**ORDERS, "name": "free_name", "method": "FETCH"})
    assert (free.status_code, triples(free)) == (422, [rule("method", "method-unsupported")])


#: Text that shows nothing though str.strip() keeps some of it (issue 30): NBSP, em space, ideographic space, line
#: separator, zero-width space, BOM, and a mix.
UNICODE_BLANKS = ["\u00a0", "\u2003", "\u3000", "\u2028", "\u200b", "\ufeff", " \u200b\u00a0\ufeff\u3000 "]


@pytest.mark.parametrize("blank", [" ", "\t", "  \n ", *UNICODE_BLANKS])
def test_a_display_name_of_only_whitespace_is_blank(api, blank):
    registered = api("POST", "/v1/tools", {**ORDERS, "display_name": blank})
    assert registered.status_code == 201 and registered.json["display_name"] == "get_orders"
    assert api("PATCH", "/v1/tools/get_orders", {"display_name": "Orders"}).json["display_name"] == "Orders"
    # A save with a blank label keeps the label, as an empty one does.
    assert api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "display_name": blank}).status_code == 200
    assert api("GET", "/v1/tools/get_orders").json["display_name"] == "Orders"
    relabelled = api("PATCH", "/v1/tools/get_orders", {"display_name": blank})
    assert relabelled.status_code == 200 and relabelled.json["display_name"] == "get_orders"


@pytest.mark.parametrize("blank", UNICODE_BLANKS)
def test_a_description_of_unicode_blanks_is_refused_as_the_display_name_is_defaulted(api, blank):
    """One notion of blank: what makes a display name default to the tool name makes a description missing."""
    response = api("POST", "/v1/tools", {**ORDERS, "description": blank, "display_name": blank})
    assert (response.status_code, triples(response)) == (422, [rule("description", "description-required")])


def test_visible_text_among_unicode_blanks_is_kept_as_given(api):
    label = "\u200bOrders\u00a0"
    registered = api("POST", "/v1/tools", {**ORDERS, "description": "\u3000The orders.", "display_name": label})
    assert registered.status_code == 201 and registered.json["display_name"] == label


@pytest.mark.parametrize("project", [["shop"], [None, None], 7, {"name": "shop"}, True])
def test_a_project_that_is_not_a_string_is_refused_on_its_field(api, project):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    response = api("POST", "/v1/tools", {**ORDERS, "project": project})  # [null, null] was a 500
    assert (response.status_code, triples(response)) == (422, [rule("project", "field-type")])
    assert api("GET", "/v1/tools").json["tools"] == []


def test_an_empty_scope_is_refused_not_taken_for_shared(api):
    response = api("POST", "/v1/tools", {**ORDERS, "scope": ""})  # was registered as a shared tool
    assert (response.status_code, triples(response)) == (422, [rule("scope", "scope-unsupported")])


@pytest.mark.parametrize("body, expected", [
    ({"display_name": "Renamed", "name": "other_name"}, [rule("name", "name-immutable")]),
    ({"display_name": "Renamed", "colour": "red"}, [rule("colour", "field-unknown")]),
    ({"display_name": "Renamed", "description": "New."}, [rule("description", "field-in-draft")]),
    ({"display_name": "Renamed", "project": "shop"}, [rule("project", "project-immutable")]),
    ({}, [rule("display_name", "field-required")]),
    ({"name": "other_name"}, [rule("display_name", "field-required"), rule("name", "name-immutable")]),
    (["Renamed"], [rule("", "field-type")]),
])
def test_relabelling_refuses_every_field_but_the_display_name(api, body, expected):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    before = api("GET", "/v1/tools/get_orders").json
    response = api("PATCH", "/v1/tools/get_orders", body)  # used to answer 200 and ignore all but display_name
    assert (response.status_code, triples(response)) == (422, sorted(expected))
    assert api("GET", "/v1/tools/get_orders").json == before


def test_relabelling_accepts_the_tools_own_name_and_project(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    response = api("PATCH", "/v1/tools/get_orders", {"display_name": "Orders", "name": "get_orders",
                                                     "project": None})
    assert response.status_code == 200 and response.json["display_name"] == "Orders"


def test_a_conversation_on_a_missing_draft_gets_the_rule_tables_one_sentence(api, keys):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    token = api("POST", "/v1/session-tokens", {"subject": "alice"}, key=keys["backend"]).json["token"]
    opened = api("POST", "/v1/conversations", {"project": "shop", "version": "draft"}, key=token)
    assert (opened.status_code, opened.json["code"], opened.json["message"]) == (
        409, "project-no-draft", RULES["project-no-draft"])
    pins = api("PUT", "/v1/projects/shop/draft", {"pins": []})
    assert (pins.status_code, pins.json["message"]) == (409, RULES["project-no-draft"])
    bad = api("POST", "/v1/conversations", {"project": "shop", "version": "latest"}, key=token)
    assert (bad.status_code, triples(bad)) == (422, [rule("version", "version-format")])


def test_a_backend_key_is_refused_with_the_right_article(api, keys):
    response = api("GET", "/v1/tools", key=keys["backend"])
    assert (response.status_code, response.json["message"]) == (403, "A backend key may not do that.")
    response = api("POST", "/v1/tools/get_orders/publish", key=keys["agent"])
    assert (response.status_code, response.json["message"]) == (403, "An agent key may not do that.")
