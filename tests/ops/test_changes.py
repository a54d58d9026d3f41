"""Breaking-change detection over before/after definitions covering every kind of change."""
import copy

import pytest

from service.ops.changes import ENDPOINT, KINDS, MODEL, Change, compare, text_diff

BASE = {
    "name": "find_orders", "description": "Orders.", "method": "POST", "url": "https://api.example.com/orders",
    "scope": "shared", "runs_at_session_start": False, "required_entitlement": None,
    "parameters": [
        {"name": "status", "type": "string", "location": "query", "required": False, "description": "open"},
        {"name": "ids", "type": "array", "element_type": "string", "location": "body", "required": True,
         "description": ""},
    ],
}
PER_USER = {**BASE, "scope": "per_user", "url": "https://api.example.com/users/{subject}/orders",
            "parameters": [{"name": "subject", "type": "string", "location": "path", "required": True,
                            "description": ""}, *BASE["parameters"]]}
BOTH = (MODEL, ENDPOINT)


def edited(base=BASE, **changes):
    definition = copy.deepcopy(base)
    definition.update(changes)
    return definition


def param(definition, which, **changes):
    definition = copy.deepcopy(definition)
    for p in definition["parameters"]:
        if p["name"] == which:
            p.update(changes)
    return definition


def without(definition, name):
    definition = copy.deepcopy(definition)
    definition["parameters"] = [p for p in definition["parameters"] if p["name"] != name]
    return definition


def plus(definition, **parameter):
    definition = copy.deepcopy(definition)
    definition["parameters"].append({"description": "", "required": True, **parameter})
    return definition


# (id, before, after, expected [(kind, parameter, affects)])
VECTORS = [
    ("nothing", BASE, BASE, []),
    ("parameter-removed", BASE, without(BASE, "status"), [("parameter-removed", "status", BOTH)]),
    ("parameter-renamed", BASE, param(BASE, "status", name="state"), [("parameter-renamed", "state", BOTH)]),
    ("parameter-retyped", BASE, param(BASE, "status", type="number"), [("parameter-retyped", "status", BOTH)]),
    ("element-retyped", BASE, param(BASE, "ids", element_type="number"), [("parameter-retyped", "ids", BOTH)]),
    ("parameter-made-required", BASE, param(BASE, "status", required=True),
     [("parameter-made-required", "status", (MODEL,))]),
    ("parameter-made-optional", BASE, param(BASE, "ids", required=False), [("parameter-made-optional", "ids", ())]),
    ("required-parameter-added", BASE, plus(BASE, name="limit", type="number", location="query"),
     [("required-parameter-added", "limit", (MODEL,))]),
    ("parameter-added", BASE, plus(BASE, name="limit", type="number", location="query", required=False),
     [("parameter-added", "limit", ())]),
    ("parameter-moved", BASE, param(BASE, "status", location="body"), [("parameter-moved", "status", (ENDPOINT,))]),
    ("parameter-description-changed", BASE, param(BASE, "status", description="open or shipped"),
     [("parameter-description-changed", "status", ())]),
    ("method-changed", BASE, edited(method="PUT"), [("method-changed", None, (ENDPOINT,))]),
    ("url-changed", BASE, edited(url="https://api.example.com/v2/orders"), [("url-changed", None, (ENDPOINT,))]),
    ("scope-changed", BASE, PER_USER,
     [("url-changed", None, (ENDPOINT,)), ("scope-changed", None, (ENDPOINT,)),
      ("required-parameter-added", "subject", ())]),
    ("subject-moved", PER_USER, param(edited(PER_USER, url="https://api.example.com/orders"), "subject",
                                      location="query"),
     [("url-changed", None, (ENDPOINT,)), ("parameter-moved", "subject", (ENDPOINT,))]),
    ("subject-removed", PER_USER, without(edited(PER_USER, scope="shared", url=BASE["url"]), "subject"),
     [("url-changed", None, (ENDPOINT,)), ("scope-changed", None, (ENDPOINT,)),
      ("parameter-removed", "subject", (ENDPOINT,))]),
    ("session-start-changed", edited(parameters=[]), edited(parameters=[], runs_at_session_start=True),
     [("session-start-changed", None, (MODEL,))]),
    ("approval-required", BASE, edited(requires_approval=True), [("approval-changed", None, BOTH)]),
    ("approval-no-longer-required", edited(requires_approval=True), edited(requires_approval=False),
     [("approval-changed", None, BOTH)]),
    ("stored-before-the-flag-is-not-a-change", BASE, edited(requires_approval=False), []),
    ("description-changed", BASE, edited(description="Recent orders."), [("description-changed", None, ())]),
    ("entitlement-changed", BASE, edited(required_entitlement="orders:read"), [("entitlement-changed", None, ())]),
    ("shape-set", BASE, edited(response_shape="orders[*].id"), [("shape-changed", None, (MODEL,))]),
    ("shape-changed", edited(response_shape="orders[*].id"), edited(response_shape="orders[0]"),
     [("shape-changed", None, (MODEL,))]),
    ("shape-removed", edited(response_shape="orders[*].id"), BASE, [("shape-changed", None, (MODEL,))]),
    ("error-fields-changed", BASE, edited(error_fields=["code"]), [("error-fields-changed", None, (MODEL,))]),
    ("outcome-messages-changed", edited(outcome_messages={"refused": "No."}),
     edited(outcome_messages={"refused": "Not there."}), [("outcome-messages-changed", None, (MODEL,))]),
    ("stored-before-shaping-is-not-a-change", BASE, edited(response_shape=None, error_fields=[],
                                                            outcome_messages={}), []),
    ("removed-and-added-elsewhere-is-not-a-rename", BASE,
     plus(without(BASE, "status"), name="state", type="number", location="query"),
     [("parameter-removed", "status", BOTH), ("required-parameter-added", "state", (MODEL,))]),
    ("renamed-and-moved", BASE, param(BASE, "status", name="state", location="body"),
     [("parameter-renamed", "state", BOTH), ("parameter-moved", "state", (ENDPOINT,))]),
    ("renamed-and-made-required", BASE, param(BASE, "status", name="state", required=True),
     [("parameter-renamed", "state", BOTH), ("parameter-made-required", "state", (MODEL,))]),
]


@pytest.mark.parametrize("before,after,expected", [v[1:] for v in VECTORS], ids=[v[0] for v in VECTORS])
def test_each_change_is_found_and_judged(before, after, expected):
    changes = compare(before, after)
    assert [(c.kind, c.parameter, c.affects) for c in changes] == expected
    assert [c.breaking for c in changes] == [bool(affects) for _, _, affects in expected]


def test_the_vectors_cover_every_kind_of_change():
    covered = {kind for *_, expected in VECTORS for kind, _, _ in expected}
    assert covered == set(KINDS)


def test_messages_are_readable_sentences():
    shaped = compare(BASE, edited(response_shape="orders[*].id"))[0]
    assert shaped.message == ("What the model gets of a successful answer changed: its response shape was none and is "
                              "now orders[*].id.")
    fields = compare(edited(error_fields=["code"]), edited(error_fields=["code", "message"]))[0]
    assert fields.message == "The fields of an error the model may read changed from code to code, message."
    moved = compare(BASE, param(BASE, "status", location="body"))[0]
    assert moved.message == "The parameter status moved from the query string to the request body."
    renamed = compare(BASE, param(BASE, "status", name="state"))[0]
    assert renamed.message == "The parameter status was renamed to state."
    assert renamed.to_dict() == {"change": "parameter-renamed", "parameter": "state", "before": "status",
                                 "after": "state", "breaking": True, "affects": ["model", "endpoint"],
                                 "message": "The parameter status was renamed to state."}
    retyped = compare(BASE, param(BASE, "ids", element_type="number"))[0]
    assert retyped.message == "The parameter ids changed type from array of string to array of number."
    assert Change("session-start-changed", before=True, after=False).message == (
        "The tool no longer runs at session start.")
    assert Change("approval-changed", before=False, after=True).message == (
        "The tool now waits for the person's approval before each call is sent.")
    assert Change("entitlement-changed", before=None, after="a:b").message == (
        "The required entitlement changed from none to a:b.")


def test_text_diff_shows_the_changed_lines_only_as_changes():
    text = text_diff(BASE, edited(method="PUT"), "find_orders v1", "find_orders (draft)")
    lines = text.splitlines()
    assert lines[:2] == ["--- find_orders v1", "+++ find_orders (draft)"]
    assert '-  "method": "POST",' in lines and '+  "method": "PUT",' in lines
    assert not any(line.startswith(("-", "+")) and "url" in line for line in lines)
