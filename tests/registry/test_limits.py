"""Bounds on what one request can make the registry do: pins per project version, problems per answer."""
from service import limits
from service.catalogue import MORE_VIOLATIONS, RULES
from tests.registry.test_tools_api import ORDERS


def test_a_project_draft_past_the_pin_cap_is_refused_before_any_pin_is_looked_up(api):
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    # 10,000 pins once held the process for 7 s; now one violation, found by counting.
    pins = [{"tool": f"tool_{i}", "version": 1} for i in range(10_000)]
    response = api("PUT", "/v1/projects/shop/draft", {"pins": pins})
    assert response.status_code == 422
    assert response.json["errors"] == [{"field": "pins", "rule": "too-many-pins",
                                        "message": RULES["too-many-pins"]}]
    assert str(limits.MAX_PINS) in RULES["too-many-pins"]
    assert api("GET", "/v1/projects/shop").json["draft"]["pins"] == []  # nothing changed


def test_a_project_draft_at_the_pin_cap_is_saved(api, monkeypatch):
    monkeypatch.setattr(limits, "MAX_PINS", 2)  # the bound is read when pins are checked; a small one keeps this quick
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert api("POST", "/v1/tools", {**ORDERS, "name": "get_invoices"}).status_code == 201
    pins = [{"tool": "get_orders", "version": "draft"}, {"tool": "get_invoices", "version": "draft"}]
    assert api("PUT", "/v1/projects/shop/draft", {"pins": pins}).status_code == 200
    response = api("PUT", "/v1/projects/shop/draft", {"pins": [*pins, {"tool": "get_orders", "version": 1}]})
    assert [e["rule"] for e in response.json["errors"]] == ["too-many-pins"]


def test_an_error_list_is_cut_at_the_cap_and_says_so(api):
    # A definition with 5,000 unknown fields breaks 5,000 rules; the answer lists the first and says there are more.
    body = {**ORDERS, **{f"extra_{i:04}": i for i in range(5_000)}}
    response = api("POST", "/v1/tools", body)
    assert response.status_code == 422
    errors = response.json["errors"]
    assert len(errors) == limits.MAX_VIOLATIONS
    assert errors[0] == {"field": "extra_0000", "rule": "field-unknown", "message": RULES["field-unknown"]}
    assert errors[-1] == MORE_VIOLATIONS.to_dict()
    assert str(limits.MAX_VIOLATIONS) in errors[-1]["message"]
    assert api("GET", "/v1/tools/get_orders").status_code == 404  # nothing was registered


def test_an_error_list_at_the_cap_is_whole(api):
    body = {**ORDERS, **{f"extra_{i:04}": i for i in range(limits.MAX_VIOLATIONS)}}
    errors = api("POST", "/v1/tools", body).json["errors"]
    assert len(errors) == limits.MAX_VIOLATIONS
    assert MORE_VIOLATIONS.to_dict() not in errors
