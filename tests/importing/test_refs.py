"""Local $refs: followed on demand, loops and long chains refused, another document never fetched."""
import pytest

from service import limits
from service.importing.refs import RefError, Resolver
from service.importing.schemas import NotCarried, flatten, shape_of

DOCUMENT = {
    "components": {
        "schemas": {
            "Pet": {"type": "object", "description": "A pet", "properties": {"name": {"type": "string"}}},
            "Alias": {"$ref": "#/components/schemas/Pet"},
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"$ref": "#/components/schemas/A"},
            "Self": {"$ref": "#/components/schemas/Self"},
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}},
            "Both": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"$ref": "#/components/schemas/Both"}]},
        },
        "odd/name~key": {"type": "string"},
    },
    "paths": {"/pets/{id}": {"get": {"responses": {200: {"description": "ok"}}}}},
}


def resolve(node):
    return Resolver(DOCUMENT).resolve(node)


def test_a_chain_of_local_refs_reaches_its_value():
    assert resolve({"$ref": "#/components/schemas/Alias"}) == DOCUMENT["components"]["schemas"]["Pet"]


def test_a_ref_keeps_its_own_description_over_the_targets():
    value = resolve({"$ref": "#/components/schemas/Pet", "description": "The pet to adopt"})
    assert value["description"] == "The pet to adopt"
    assert value["properties"] == {"name": {"type": "string"}}


def test_json_pointer_escapes_and_numeric_keys_are_followed():
    assert resolve({"$ref": "#/components/odd~1name~0key"}) == {"type": "string"}
    assert resolve({"$ref": "#/paths/~1pets~1%7Bid%7D/get/responses/200"}) == {"description": "ok"}


@pytest.mark.parametrize("ref, rule", [
    ("https://example.com/pet.json#/Pet", "ref-remote"),
    ("pet.yaml#/Pet", "ref-remote"),
    ("pet.yaml", "ref-remote"),
    ("#/components/schemas/A", "ref-loop"),
    ("#/components/schemas/Self", "ref-loop"),
    ("#/components/schemas/Missing", "ref-unresolved"),
    ("#Pet", "ref-unresolved"),
])
def test_a_ref_that_cannot_be_followed_says_why(ref, rule):
    with pytest.raises(RefError) as raised:
        resolve({"$ref": ref})
    assert raised.value.rule == rule


def test_a_chain_longer_than_the_bound_is_taken_to_loop():
    hops = limits.MAX_IMPORT_REF_HOPS + 1
    schemas = {f"S{i}": {"$ref": f"#/components/schemas/S{i + 1}"} for i in range(hops)}
    schemas[f"S{hops}"] = {"type": "string"}
    resolver = Resolver({"components": {"schemas": schemas}})
    with pytest.raises(RefError) as raised:
        resolver.resolve({"$ref": "#/components/schemas/S0"})
    assert raised.value.rule == "ref-loop"
    assert Resolver({"components": {"schemas": schemas}}).resolve({"$ref": "#/components/schemas/S2"}) == {
        "type": "string"}


def test_a_schema_that_refers_to_itself_through_its_fields_is_ordinary():
    resolver = Resolver(DOCUMENT)
    node = flatten({"$ref": "#/components/schemas/Node"}, resolver)
    assert node["type"] == "object"
    with pytest.raises(NotCarried) as raised:
        shape_of({"$ref": "#/components/schemas/Node"}, resolver)
    assert raised.value.rule == "nested-object-not-carried"


def test_an_all_of_that_includes_itself_is_a_loop():
    with pytest.raises(RefError) as raised:
        flatten({"$ref": "#/components/schemas/Both"}, Resolver(DOCUMENT))
    assert (raised.value.rule, raised.value.ref) == ("ref-loop", "#/components/schemas/Both")


@pytest.mark.parametrize("schema, expected", [
    ({"type": "integer"}, ("number", None)),
    ({"type": ["string", "null"]}, ("string", None)),
    ({"type": "boolean", "nullable": True}, ("boolean", None)),
    ({"anyOf": [{"type": "number"}, {"type": "null"}]}, ("number", None)),
    ({"type": "array", "items": {"type": "integer"}}, ("array", "number")),
    ({"type": "array"}, ("array", None)),
    ({"type": "object", "additionalProperties": {"type": "string"}}, ("object", None)),
    ({"enum": ["a", "b"]}, ("string", None)),
    ({}, (None, None)),
])
def test_shapes_a_parameter_can_take(schema, expected):
    shape = shape_of(schema, Resolver(DOCUMENT))
    assert (shape.type, shape.element_type) == expected


@pytest.mark.parametrize("schema, rule", [
    ({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
     "array-of-structures-not-carried"),
    ({"type": "array", "items": {"type": "array", "items": {"type": "string"}}}, "array-of-structures-not-carried"),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, "nested-object-not-carried"),
    ({"oneOf": [{"type": "string"}, {"type": "number"}]}, "schema-not-carried"),
    ({"type": ["string", "number"]}, "schema-not-carried"),
    ({"not": {"type": "string"}}, "schema-not-carried"),
    ({"type": "null"}, "schema-not-carried"),
    ({"type": "file"}, "schema-not-carried"),
])
def test_shapes_a_parameter_cannot_take(schema, rule):
    with pytest.raises(NotCarried) as raised:
        shape_of(schema, Resolver(DOCUMENT))
    assert raised.value.rule == rule


def test_notes_tell_the_model_the_allowed_values_format_and_default():
    shape = shape_of({"type": "string", "enum": ["open", "shipped"], "format": "slug", "default": "open"},
                     Resolver(DOCUMENT))
    assert shape.notes == 'One of: "open", "shipped". Format: slug. Default: "open".'
