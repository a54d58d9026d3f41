"""/openapi.json tells the truth about errors: every error response is the one error shape, and every operation lists
the statuses that follow from how its route is built. (What each route really answers is checked against the running
service by test_schemathesis.py.)"""
import pytest

from service import create_app
from service.config import Config

ERROR_SHAPE = {"$ref": "#/components/schemas/Problem"}
#: Answers that are not errors although their status is 4xx/5xx: readiness reports what it found, in its own shape.
OWN_SHAPE = {("/readyz", "get", "503")}
METHODS = {"get", "put", "post", "patch", "delete"}


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    from service.database import make_database
    from service.migrations import migrate

    url = f"sqlite:///{tmp_path_factory.mktemp('doc') / 'doc.db'}"
    database = make_database(url)
    with database.connection_context():
        migrate(database)
    app = create_app(Config(database_url=url, secret_key="test-secret", flask={"TESTING": True}))
    response = app.test_client().get("/openapi.json")
    assert response.status_code == 200
    return response.json


def operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


def resolve(document, response):
    if "$ref" in response:
        name = response["$ref"].rsplit("/", 1)[-1]
        return document["components"]["responses"][name]
    return response


def test_the_error_schema_is_ours(document):
    problem = document["components"]["schemas"]["Problem"]
    assert problem["properties"]["code"]["type"] == "string"
    assert set(problem["required"]) == {"code", "message", "errors"}
    violation = document["components"]["schemas"]["Violation"]
    assert set(violation["required"]) == {"field", "rule", "message"}
    # flask-smorest's stock schema (an integer code) is gone, and so is the catch-all `default` answer.
    assert "Error" not in document["components"]["schemas"]
    assert not [(p, m) for p, m, op in operations(document) if "default" in op["responses"]]


def test_every_error_response_is_the_one_error_shape(document):
    wrong = []
    for path, method, operation in operations(document):
        for status, response in operation["responses"].items():
            if int(status) < 400 or (path, method, status) in OWN_SHAPE:
                continue
            content = resolve(document, response).get("content", {})
            if list(content) != ["application/json"] or content["application/json"]["schema"] != ERROR_SHAPE:
                wrong.append((method.upper(), path, status))
    assert not wrong, wrong


def test_every_operation_lists_the_statuses_its_route_can_give(document):
    missing = []
    for path, method, operation in operations(document):
        statuses = set(operation["responses"])
        expected = set()
        assert "security" in operation, f"{method.upper()} {path} says nothing of its credential"
        schemes = {name for requirement in operation["security"] for name in requirement}
        if schemes:
            expected.add("401")
        if "apiKey" in schemes:
            expected.add("403")
        if "requestBody" in operation:
            assert operation["requestBody"]["required"] is True
            expected |= {"400", "413", "422"}
        if "{" in path:
            expected.add("404")
        if any(p["in"] == "query" for p in operation.get("parameters", [])):
            expected.add("422")
        if path not in ("/healthz", "/metrics", "/readyz"):  # only these answer without the database
            expected.add("503")
        if expected - statuses:
            missing.append((method.upper(), path, sorted(expected - statuses)))
    assert not missing, missing


def test_refusals_that_wait_name_retry_after(document):
    for name in ("Unavailable", "TooManyCalls"):
        assert document["components"]["responses"][name]["headers"]["Retry-After"]["required"] is True


def test_particular_refusals_are_documented_where_they_happen(document):
    paths = document["paths"]
    assert "409" in paths["/v1/tools"]["post"]["responses"]  # name-taken
    assert {"409", "412"} <= set(paths["/v1/tools/{name}/draft"]["put"]["responses"])  # no-draft, stale If-Match
    assert "429" in paths["/v1/conversations/{conversation_id}/turns/{turn_id}/steps"]["post"]["responses"]
    assert "409" in paths["/v1/conversations/{conversation_id}/messages"]["post"]["responses"]  # turn-in-progress
    streamed = paths["/v1/conversations/{conversation_id}/messages"]["post"]["responses"]["200"]["content"]
    assert set(streamed) == {"application/json", "text/event-stream"}


def test_links_lead_from_a_created_tool_to_its_draft(document):
    links = document["paths"]["/v1/tools"]["post"]["responses"]["201"]["links"]
    assert links["SaveDraft"] == {"operationRef": "#/paths/~1v1~1tools~1{name}~1draft/put",
                                  "parameters": {"name": "$response.body#/name"}}
    for link in links.values():
        pointer = link["operationRef"].removeprefix("#/paths/").rsplit("/", 1)
        assert pointer[0].replace("~1", "/").replace("~0", "~") in document["paths"]
