"""Inputs schemathesis found answered wrongly, each now a clear 4xx in the one error shape that names its field."""
from tests.registry.test_tools_api import ORDERS


def test_a_relabel_body_that_is_not_an_object_is_refused(api):
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    response = api("PATCH", "/v1/tools/get_orders", [None, None])  # was a 500
    assert response.status_code == 422
    assert [(e["field"], e["rule"]) for e in response.json["errors"]] == [("", "field-type")]
    assert api("GET", "/v1/tools/get_orders").json["display_name"] == ORDERS["display_name"]  # unchanged


def test_a_bad_query_string_names_each_parameter_and_its_rule(api):
    response = api("GET", "/v1/calls?limit=abc&since=yesterday")
    assert response.status_code == 422
    assert response.json["code"] == "invalid"
    assert sorted((e["field"], e["rule"]) for e in response.json["errors"]) == [
        ("limit", "field-type"), ("since", "field-type")]
    response = api("GET", "/v1/calls?limit=0")
    assert [(e["field"], e["rule"]) for e in response.json["errors"]] == [("limit", "field-invalid")]
    response = api("GET", "/v1/tools/get_orders/diff")
    assert sorted((e["field"], e["rule"]) for e in response.json["errors"]) == [
        ("from", "field-required"), ("to", "field-required")]


def test_a_message_whose_stream_is_not_a_boolean_is_refused(api, keys):
    api("POST", "/v1/projects", {"name": "shop"})
    api("PUT", "/v1/projects/shop/draft", {"pins": []})
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    token = api("POST", "/v1/session-tokens", {"subject": "alice"}, key=keys["backend"]).json["token"]
    opened = api("POST", "/v1/conversations", {"project": "shop"}, key=token)
    assert opened.status_code == 201, opened.json
    response = api("POST", f"/v1/conversations/{opened.json['id']}/messages", {"text": "hi", "stream": {}},
                   key=token)
    assert response.status_code == 422  # was taken as "do not stream"
    assert [(e["field"], e["rule"]) for e in response.json["errors"]] == [("stream", "field-type")]
