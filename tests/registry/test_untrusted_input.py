"""Inputs that used to crash the service (issue 14), on SQLite and PostgreSQL alike: integers past what the database
stores, a project that is a list, and control characters or unpaired surrogates in names, filters, labels,
descriptions and subjects. Each is a clear 404 or a 422 naming its field and rule, and changes nothing."""
import base64
import json

import pytest

from service.catalogue import RULES
from service.limits import MAX_ROW_ID, MAX_STORED_INTEGER, MAX_SUBJECT_CHARS

PAST_INTEGER = MAX_STORED_INTEGER + 1  # 2,147,483,648: past PostgreSQL's INTEGER
PAST_BIGINT = MAX_ROW_ID + 1  # 9,223,372,036,854,775,808: past SQLite's INTEGER (an OverflowError there)
ORDERS = {"name": "get_orders", "description": "The customer's orders.", "method": "GET",
          "url": "https://api.example.com/orders"}


@pytest.fixture
def shop(api):
    """get_orders published as version 1 and pinned into the published version 1 of project shop."""
    assert api("POST", "/v1/tools", ORDERS).status_code == 201
    assert api("POST", "/v1/projects", {"name": "shop"}).status_code == 201
    assert api("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": "draft"}]}).status_code == 200
    assert api("POST", "/v1/projects/shop/publish").status_code == 201
    assert api("POST", "/v1/projects/shop/draft").status_code == 201
    return api


def refused(response, field, rule, status=422):
    """The response is the one error shape with exactly this violation, the rule's own sentence."""
    assert response.status_code == status, response.json
    assert response.json["errors"] == [{"field": field, "rule": rule, "message": RULES[rule]}]
    return response


def not_found(response):
    assert response.status_code == 404, response.json
    assert response.json["code"] == "not-found" and set(response.json) == {"code", "message", "errors"}


# Integers past the database's range

@pytest.mark.parametrize("number", [PAST_INTEGER, PAST_BIGINT, 0, 10 ** 40])
def test_a_version_number_in_a_path_past_the_database_is_not_found(shop, number):
    for method, path in [("GET", "/v1/tools/get_orders/versions/{n}"), ("PUT", "/v1/tools/get_orders/versions/{n}"),
                         ("DELETE", "/v1/tools/get_orders/versions/{n}"),
                         ("GET", "/v1/tools/get_orders/versions/{n}/impact")]:
        not_found(shop(method, path.format(n=number)))


def test_the_largest_version_number_the_database_stores_is_simply_not_there(shop):
    not_found(shop("GET", f"/v1/tools/get_orders/versions/{MAX_STORED_INTEGER}"))
    assert shop("GET", "/v1/tools/get_orders/versions/1").status_code == 200


def test_a_paging_cursor_past_the_database_is_refused_with_its_field(shop):
    for path, number in [("/v1/calls?before={n}", PAST_BIGINT), ("/v1/calls?before={n}", 0),
                         ("/v1/audit?before={n}", PAST_INTEGER), ("/v1/audit?before={n}", PAST_BIGINT),
                         ("/v1/audit?before={n}", -1)]:
        refused(shop("GET", path.format(n=number)), "before", "number-range")


def test_cursors_within_the_database_page_as_before(shop):
    assert shop("GET", f"/v1/calls?before={MAX_ROW_ID}").json == {"calls": [], "next": None}
    records = shop("GET", f"/v1/audit?before={MAX_STORED_INTEGER}").json["records"]
    assert [r["seq"] for r in records] == sorted((r["seq"] for r in records), reverse=True) and records


def test_a_diff_or_an_explanation_for_a_version_past_the_database_is_refused_with_its_field(shop):
    for query, field in [(f"from={PAST_BIGINT}&to=1", "from"), (f"from=1&to={PAST_INTEGER}", "to"),
                         (f"from=draft&to={'9' * 5000}", "to")]:
        refused(shop("GET", f"/v1/tools/get_orders/diff?{query}"), field, "number-range")
    for number in [PAST_INTEGER, PAST_BIGINT, "9" * 5000]:
        refused(shop("GET", f"/v1/projects/shop/why-not-offered?version={number}"), "version", "number-range")
    not_found(shop("GET", f"/v1/tools/get_orders/diff?from={MAX_STORED_INTEGER}&to=1"))


def test_a_pin_past_the_database_is_an_unknown_version_and_changes_nothing(shop):
    before = shop("GET", "/v1/projects/shop").json
    for number in [PAST_INTEGER, PAST_BIGINT, -PAST_BIGINT]:
        response = shop("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders", "version": number}]})
        refused(response, "pins[0].version", "pin-unknown-version")
    assert shop("GET", "/v1/projects/shop").json == before


def test_a_conversation_on_a_project_version_past_the_database_is_not_found(shop, client, keys):
    token = session_token(client, keys, "alice").json["token"]
    for number in [PAST_INTEGER, PAST_BIGINT]:
        response = client.post("/v1/conversations", json={"project": "shop", "version": number},
                               headers={"Authorization": f"Bearer {token}"})
        not_found(response)


# A project that is not a name

def test_a_project_of_two_nulls_is_refused_on_project(api):
    """It was a 500 (`row value misused` on SQLite, no operator on PostgreSQL)."""
    refused(api("POST", "/v1/tools", {**ORDERS, "project": [None, None]}), "project", "field-type")
    assert api("GET", "/v1/tools").json["tools"] == []


# Control characters and unpaired surrogates

@pytest.mark.parametrize("character", ["%00", "%09", "%0A", "%1B", "%7F", "%C2%85"])
def test_a_name_in_a_path_with_a_control_character_names_nothing(shop, character):
    """A NUL in a path used to be a 500 on PostgreSQL ("A string literal cannot contain NUL")."""
    for method, path in [
            ("GET", "/v1/tools/get{c}orders"), ("PATCH", "/v1/tools/get{c}orders"),
            ("PUT", "/v1/tools/get{c}orders/draft"), ("GET", "/v1/tools/get{c}orders/history"),
            ("GET", "/v1/tools/get{c}orders/diff?from=1&to=draft"), ("GET", "/v1/projects/sh{c}op"),
            ("GET", "/v1/projects/sh{c}op/why-not-offered"), ("POST", "/v1/projects/sh{c}op/publish")]:
        not_found(shop(method, path.format(c=character), {}))


FILTERS = [("/v1/tools?project={v}", "project"), ("/v1/calls?conversation={v}", "conversation"),
           ("/v1/calls?turn={v}", "turn"), ("/v1/calls?tool={v}", "tool"), ("/v1/calls?subject={v}", "subject"),
           ("/v1/audit?object={v}", "object"), ("/v1/projects/shop/why-not-offered?subject={v}", "subject"),
           ("/v1/projects/shop/why-not-offered?entitlement=a:b&entitlement={v}", "entitlement[1]")]


@pytest.mark.parametrize("encoded", ["a%00b", "a%0Ab", "a%09b", "a%1Bb", "%C2%85"])
def test_a_filter_with_a_control_character_is_refused_with_its_field(shop, encoded):
    for path, field in FILTERS:
        refused(shop("GET", path.format(v=encoded)), field, "control-character")


def test_filters_of_plain_text_still_filter(shop):
    assert [t["name"] for t in shop("GET", "/v1/tools?project=shop").json["tools"]] == []
    assert shop("GET", "/v1/calls?tool=get_orders&subject=al%C3%AFce").json == {"calls": [], "next": None}
    assert shop("GET", "/v1/audit?object=get_orders").json["records"]


def raw(api, method, path, text):
    """A request whose JSON body is given as text, to send what json.dumps cannot write (an unpaired surrogate)."""
    return api.client.open(path, method=method, data=text, content_type="application/json",
                           headers={"Authorization": f"Bearer {api.key}"})


def test_a_display_name_with_a_control_character_is_refused_and_changes_nothing(shop):
    before = shop("GET", "/v1/tools/get_orders").json
    for label in ["Orders\x00", "Orders\x1b[31m", "Two\nlines", "\x85"]:
        refused(shop("PATCH", "/v1/tools/get_orders", {"display_name": label}), "display_name", "control-character")
        refused(shop("POST", "/v1/tools", {**ORDERS, "name": "other", "display_name": label}), "display_name",
                "control-character")
    assert shop("GET", "/v1/tools/get_orders").json == before
    assert shop("GET", "/v1/tools/other").status_code == 404


def test_an_unpaired_surrogate_is_refused_with_its_field(shop):
    """A JSON "\\ud800" decodes to a string neither engine can store: it was a UnicodeEncodeError 500 on both."""
    for method, path, body, field in [
            ("PATCH", "/v1/tools/get_orders", '{"display_name": "\\ud800"}', "display_name"),
            ("PUT", "/v1/projects/shop/draft", '{"pins": [{"tool": "get_orders\\udfff", "version": 1}]}',
             "pins[0].tool"),
            ("POST", "/v1/tools", json.dumps({**ORDERS, "name": "other", "description": "@"}).replace("@", "\\ud83d"),
             "description"),
            ("POST", "/v1/tools", json.dumps({**ORDERS, "name": "other", "project": "@"}).replace("@", "\\udc00"),
             "project")]:
        refused(raw(shop, method, path, body), field, "unpaired-surrogate")


def test_a_description_holds_tabs_and_line_breaks_but_no_other_control_character(api):
    prose = "Returns the orders.\r\n\tNewest first.\n"
    parameter = {"name": "status", "type": "string", "location": "query", "description": prose}
    response = api("POST", "/v1/tools", {**ORDERS, "description": prose, "parameters": [parameter]})
    assert response.status_code == 201, response.json
    assert response.json["draft"]["definition"]["description"] == prose
    for bad in ("Orders\x00", "Orders\x07", "Orders\x1b[2J"):
        refused(api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "description": bad}), "description",
                "description-control-character")
        refused(api("PUT", "/v1/tools/get_orders/draft", {**ORDERS, "parameters": [{**parameter, "description": bad}]}),
                "parameters[0].description", "description-control-character")
    assert api("GET", "/v1/tools/get_orders").json["draft"]["revision"] == 1


def test_a_url_or_project_with_a_control_character_is_refused_with_its_field(shop):
    for field, value in [("url", "https://api.example.com/orders\x00"), ("project", "shop\x00"),
                         ("project", "shop\n")]:
        refused(shop("POST", "/v1/tools", {**ORDERS, "name": "other", field: value}), field, "control-character")


def test_a_pin_naming_a_tool_with_a_nul_is_refused_on_the_pin(shop):
    response = shop("PUT", "/v1/projects/shop/draft", {"pins": [{"tool": "get_orders\x00", "version": 1}]})
    refused(response, "pins[0].tool", "control-character")


# A session token's subject

def session_token(client, org, subject, **body):
    return client.post("/v1/session-tokens", json={"subject": subject, **body},
                       headers={"Authorization": f"Bearer {org['backend']}"})


def test_a_subject_that_cannot_stand_as_a_path_segment_is_refused_when_minted(client, keys):
    for subject in [".", "..", "", "alice\x00", "alice\n", "\talice", "\x85", "x" * (MAX_SUBJECT_CHARS + 1), None, 7]:
        refused(session_token(client, keys, subject), "subject", "subject-format")
    assert str(MAX_SUBJECT_CHARS) in RULES["subject-format"]
    response = client.post("/v1/session-tokens", data='{"subject": "\\ud800"}', content_type="application/json",
                           headers={"Authorization": f"Bearer {keys['backend']}"})
    refused(response, "subject", "subject-format")


def test_any_other_subject_is_minted(client, keys):
    for subject in ["x" * MAX_SUBJECT_CHARS, "a/b", "...", "alïce", "a b", "%2e%2e"]:
        assert session_token(client, keys, subject).status_code == 201


def test_an_entitlement_with_a_control_character_is_refused_when_minted(client, keys):
    response = session_token(client, keys, "alice", entitlements=["orders:read", "orders:write\x00"])
    assert response.status_code == 422 and [e["field"] for e in response.json["errors"]] == ["entitlements"]


def test_a_step_calling_a_name_with_a_nul_is_refused_on_the_call(shop, client, keys):
    """The call log could not record the name on PostgreSQL: the step was a 500."""
    headers = {"Authorization": f"Bearer {session_token(client, keys, 'alice').json['token']}"}
    conversation = client.post("/v1/conversations", json={"project": "shop"}, headers=headers).json["id"]
    turn = client.post(f"/v1/conversations/{conversation}/turns", headers=headers).json["turn"]
    response = client.post(f"/v1/conversations/{conversation}/turns/{turn}/steps", headers=headers,
                           json={"calls": [{"id": "1", "name": "get_orders\x00", "arguments": {}}]})
    refused(response, "calls[0].name", "control-character")
    assert shop("GET", "/v1/calls").json["calls"] == []


# Credentials: an API key id or a session token's kid is looked up, so it must be text too

@pytest.mark.parametrize("key", ["tgk_a\x00b_secret", "tgk_\x01_secret", "tgk_a\udc80_secret"])
def test_an_api_key_with_a_control_character_is_simply_not_a_key(client, keys, key):
    """A NUL in the key id reached PostgreSQL: a 500 on every route, the dashboard's sign-in too."""
    response = client.get("/v1/tools", environ_overrides={"HTTP_AUTHORIZATION": f"Bearer {key}"})
    assert response.status_code == 401 and response.json["code"] == "unauthorized"


@pytest.mark.parametrize("kid", ['"a\\u0000b"', '"\\ud800"', '"\\u001b"'])
def test_a_session_token_whose_kid_is_not_text_is_refused(client, keys, kid):
    header = base64.urlsafe_b64encode(f'{{"alg":"ES256","kid":{kid},"typ":"toolgate-session+jwt"}}'.encode())
    token = f"{header.decode().rstrip('=')}.e30.c2ln"
    response = client.get("/v1/conversations/c1", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401 and response.json["code"] == "invalid-session-token"
