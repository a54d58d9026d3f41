"""A compiled dump answers exactly what marshmallow's dump of the same schema does: the same members, in the same
order, the same values of the same types; and it refuses a field kind it does not compile."""
import json

import pytest
from marshmallow import Schema, fields

from service.api.dumping import compile_dump
from service.api.tools.schemas import ToolListSchema

FULL = {"name": "get_orders", "description": "Orders.", "method": "GET", "url": "https://api.example.com/o",
        "scope": "per_user", "runs_at_session_start": False, "requires_approval": 1, "required_entitlement": None,
        "parameters": [{"name": "subject", "type": "string", "location": "path", "required": True,
                        "description": "who", "element_type": None},
                       {"required": 0, "name": "ids", "type": "array", "location": "query", "element_type": "integer"}],
        "response_shape": "orders[*].id", "error_fields": ["code", None], "outcome_messages": {"refused:404": "No."},
        "not_in_the_schema": "left out"}
PAGE = {"next": "tool_b", "tools": [
    {"name": "tool_a", "display_name": "A \u2713", "project": None, "versions": [],
     "draft": {"definition": FULL, "revision": 3, "etag": '"1.3"', "based_on": None, "updated_at": 5,
               "updated_by": "person:admin:k"}},
    {"versions": [{"version": 1, "published_at": 1.5, "published_by": "p"}, {"version": 2, "published_at": 2.0,
                                                                           "published_by": "q"}],
     "name": "tool_b", "display_name": "B", "project": "shop", "draft": None},
    {"name": "tool_c", "display_name": "C", "versions": [], "draft": {
        "definition": {"url": "https://x.example", "name": "tool_c", "method": "POST", "description": "d"},
        "revision": 1, "etag": '"3.1"', "updated_at": 1.0, "updated_by": "u"}},
]}


def test_a_page_of_tools_dumps_as_marshmallow_dumps_it():
    expected = ToolListSchema().dump(PAGE)
    got = compile_dump(ToolListSchema())(PAGE)
    assert json.dumps(got) == json.dumps(expected)  # members, order, values and their types
    assert isinstance(got["tools"][0]["draft"]["updated_at"], float)  # 5 made 5.0, as a Float field does
    assert "not_in_the_schema" not in got["tools"][0]["draft"]["definition"] and "based_on" not in got["tools"][2][
        "draft"]


def test_a_field_kind_it_does_not_compile_is_refused_when_compiled():
    class Computed(Schema):
        total = fields.Function(lambda obj: obj["a"] + obj["b"])

    class AsText(Schema):
        count = fields.Integer(as_string=True)

    for schema in (Computed(), AsText()):
        with pytest.raises(TypeError):
            compile_dump(schema)
