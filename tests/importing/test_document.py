"""Reading a document: JSON or YAML, every bound checked before anything walks it, and OpenAPI 3.0/3.1 only."""
import json

import pytest
import yaml

from service import limits
from service.catalogue import RULES
from service.errors import ServiceError
from service.importing import document as reading
from service.importing import read_document
from tests.importing.conftest import document

SMALL = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}


def refusal(source) -> ServiceError:
    with pytest.raises(ServiceError) as raised:
        read_document(source)
    error = raised.value
    assert error.status == 422
    assert [v.field for v in error.violations] == ["document"]
    assert error.violations[0].message == RULES[error.code]
    return error


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "openapi: 3.1.0\npaths: {}\n" + "\n".join(lines) + "\n"


def test_json_and_yaml_read_to_the_same_document():
    as_json = json.dumps(SMALL)
    as_yaml = yaml.safe_dump(SMALL)
    assert read_document(as_json) == read_document(as_yaml) == SMALL
    assert read_document(as_json.encode("utf-8")) == SMALL
    assert read_document(b"\xef\xbb\xbf" + as_yaml.encode()) == SMALL  # a byte-order mark is not content
    assert read_document(as_json.encode("utf-16")) == SMALL


def test_the_test_documents_read_as_what_they_say():
    assert read_document(document("petstore.yaml"))["openapi"] == "3.0.3"
    assert read_document(document("commerce.json"))["openapi"] == "3.1.0"
    assert read_document(document("cycles.yaml"))["openapi"] == "3.1.0"


def test_an_unquoted_yaml_version_is_still_the_version():
    assert read_document("openapi: 3.0\npaths: {}\n")["openapi"] == 3.0
    assert reading.version_of({"openapi": 3.1}) == "3.1"


def test_flow_style_yaml_that_is_not_json_is_read_as_yaml():
    assert read_document("{openapi: '3.0.0', paths: {}}") == {"openapi": "3.0.0", "paths": {}}


def test_shared_anchors_are_read_when_their_expansion_is_small():
    text = ("openapi: 3.0.0\npaths:\n  /a:\n    get: &op {summary: x}\n  /b:\n    get: *op\n")
    data = read_document(text)
    assert data["paths"]["/a"]["get"] == data["paths"]["/b"]["get"] == {"summary": "x"}


def test_a_document_past_the_size_cap_is_refused_before_it_is_parsed(monkeypatch):
    def parse(*_args, **_kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(reading, "_load_yaml", parse)
    monkeypatch.setattr(reading.json, "loads", parse)
    fifty_mb = "a" * 50_000_000
    assert refusal(fifty_mb).code == "document-too-large"
    assert refusal(fifty_mb.encode()).code == "document-too-large"
    # Exactly at the cap in characters, but past it in bytes: measured in UTF-8.
    assert refusal("é" * (limits.MAX_IMPORT_DOCUMENT_BYTES // 2 + 1)).code == "document-too-large"


def test_a_billion_laughs_is_refused_before_it_is_built(monkeypatch):
    built = []
    monkeypatch.setattr(yaml.constructor.SafeConstructor, "construct_document",
                        lambda self, node: built.append(node))
    error = refusal(billion_laughs())
    assert error.code == "document-too-complex"
    assert built == []


def test_a_billion_laughs_is_refused_without_libyaml(monkeypatch):
    monkeypatch.setattr(reading, "_Loader", yaml.SafeLoader)
    assert refusal(billion_laughs()).code == "document-too-complex"


def test_a_small_expansion_of_the_same_shape_is_read():
    data = read_document(billion_laughs(levels=2))
    assert len(data["a2"]) == 9 and data["a2"][0][0][0] == "lol"


def test_a_recursive_alias_is_refused():
    error = refusal("openapi: 3.1.0\npaths: &p {loop: *p}\n")
    assert error.code == "document-too-complex"
    assert "contains it" in error.message


@pytest.mark.parametrize("kind", ["json", "yaml-flow", "yaml-block"])
def test_nesting_past_the_bound_is_refused(kind):
    depth = limits.MAX_IMPORT_DOCUMENT_DEPTH + 1
    if kind == "json":
        text = '{"openapi": "3.0.0", "x": ' + "[" * depth + "]" * depth + "}"
    elif kind == "yaml-flow":
        text = "openapi: 3.0.0\nx: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "openapi: 3.0.0\nx:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(depth)) + "  " * (
            depth + 1) + "end\n"
    assert refusal(text).code == "document-too-complex"


def test_json_nested_past_what_the_parser_holds_is_too_complex():
    assert refusal("[" * 100_000 + "]" * 100_000).code == "document-too-complex"


def test_yaml_that_cannot_be_read_says_where():
    error = refusal("openapi: 3.0.0\npaths:\n  /a: [\n")
    assert error.code == "document-unreadable"
    assert "line 4" in error.message


def test_bytes_that_are_not_text_are_unreadable():
    assert refusal(b"openapi: \xff\xfe\xfa").code == "document-unreadable"


def test_swagger_two_gets_its_one_line():
    error = refusal(json.dumps({"swagger": "2.0", "info": {}, "paths": {}}))
    assert error.code == "swagger-unsupported"
    assert error.message == "Swagger 2.0 is not supported: convert the document to OpenAPI 3.0 or 3.1 and import that."


@pytest.mark.parametrize("version", ["2.0", "3.2.0", "4.0.0", "3", "banana"])
def test_other_versions_are_refused(version):
    error = refusal(json.dumps({"openapi": version, "paths": {}}))
    assert error.code == "openapi-version-unsupported"
    assert repr(version) in error.message


@pytest.mark.parametrize("text", ["just text", "[1, 2]", "{}", '{"openapi": "3.0.0", "paths": []}', ""])
def test_what_is_not_an_openapi_description_is_refused(text):
    assert refusal(text).code == "document-not-openapi"
