"""Bounded import work: every `$ref` and `allOf` expansion counts against the document's values, each reference is
expanded once, a deadline holds the rest, and the work stops when its request is gone.

The bombs come from tests/importing/bombs.py, which bench/import_bomb.py times. No test here waits on the real
deadline: where the deadline is the point, it is set small.
"""
import json
import socket
import time
from urllib.parse import urlsplit

import gevent
import pytest
from gevent import monkey

from service import limits
from service.catalogue import RULES
from service.errors import ServiceError
from service.importing import plan
from service.importing.bounds import Abandoned, Budget
from service.importing.document import read_document
from service.importing.options import ImportOptions
from service.importing.refs import Resolver
from service.importing.schemas import flatten, object_fields, shape_of
from tests.dashboard.client import Page
from tests.importing import bombs
from tests.importing.test_document import billion_laughs
from tests.mcp.conftest import RawMcp

#: Far past what any of these takes once bounded (milliseconds), far short of what the unbounded work took (an
#: 11-level chain: 14 s of CPU in-process, 19 s behind HTTP; 16 levels: hours).
GENEROUS_SECONDS = 5.0
TOO_COMPLEX = {"field": "document", "rule": "document-too-complex", "message": RULES["document-too-complex"]}
real_sleep = monkey.get_original("time", "sleep")

BOMBS = {
    "allOf chain, 11 levels of 4 $refs": bombs.allof_chain(11),
    "allOf chain, 16 levels of 4 $refs": bombs.allof_chain(16),
    "YAML aliases, billion laughs": billion_laughs(),
    "YAML aliases, an allOf chain": bombs.alias_chain(9),
    "nesting past the bound": bombs.deep_nesting(60),
}


def import_ok(service, text: str, **more):
    return service.api("POST", "/v1/tools/import", json={"document": text, **more})


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_a_document_bomb_is_refused_as_too_complex_over_rest(service, text):
    started = time.monotonic()
    response = import_ok(service, text, apply=True)
    assert response.status_code == 422, response.text[:300]
    assert response.json()["code"] == "document-too-complex"
    assert response.json()["errors"] == [TOO_COMPLEX]
    assert time.monotonic() - started < GENEROUS_SECONDS
    tools = service.api("GET", "/v1/tools").json()["tools"]
    assert tools == []


def test_a_document_bomb_is_refused_as_too_complex_over_mcp(service):
    mcp = RawMcp(service)
    result = mcp.call_tool(mcp.initialize(), "import_openapi", {"document": bombs.allof_chain(11)})
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == [TOO_COMPLEX]


def test_a_document_bomb_is_refused_as_too_complex_on_the_dashboard(service, admin):
    admin.get("/tools/new/import")
    page: Page = admin.post("/tools/new/import", {"document": bombs.allof_chain(11), "op": "preview"})
    assert page.status == 422
    assert page.error_at("f-document") == f"Error: {RULES['document-too-complex']}"


def test_a_refused_import_prints_no_traceback(service, capfd):
    assert import_ok(service, bombs.allof_chain(11)).status_code == 422
    assert "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------- each reference expanded once

SHARED = {
    "openapi": "3.1.0",
    "components": {"schemas": {
        "Money": {"type": "object", "required": ["amount"], "description": "An amount of money",
                  "properties": {"amount": {"type": "integer"}, "currency": {"$ref": "#/components/schemas/Code"}}},
        "Code": {"type": "string", "enum": ["EUR", "USD"], "default": "EUR"},
        "Priced": {"allOf": [{"$ref": "#/components/schemas/Money"}, {"$ref": "#/components/schemas/Money"},
                             {"properties": {"note": {"type": "string"}}}]},
        **{f"D{i}": {"allOf": [{"$ref": f"#/components/schemas/D{i + 1}"}]} for i in range(15)},
        "D15": {"allOf": [{"$ref": "#/components/schemas/Money"}]},
    }},
}
#: One reference used many ways: bare, with its own description, inside allOf, under oneOf with null, as array
#: items, and at the end of chains that end just inside and just past the depth bound.
USES = [
    {"$ref": "#/components/schemas/Money"},
    {"$ref": "#/components/schemas/Money", "description": "The price to pay"},
    {"$ref": "#/components/schemas/Code", "summary": "Currency"},
    {"allOf": [{"$ref": "#/components/schemas/Priced"}, {"$ref": "#/components/schemas/Money"}]},
    {"oneOf": [{"$ref": "#/components/schemas/Code"}, {"type": "null"}]},
    {"type": "array", "items": {"$ref": "#/components/schemas/Code"}},
    {"$ref": "#/components/schemas/D2"},
    {"$ref": "#/components/schemas/D0"},
    {"allOf": [{"$ref": "#/components/schemas/D0"}]},
    {"$ref": "#/components/schemas/Money"},
]


def outcome(call, *args):
    try:
        return call(*args)
    except Exception as error:  # the comparison is of what each way raises, whatever it is
        return type(error).__name__, getattr(error, "rule", None), getattr(error, "ref", None)


@pytest.mark.parametrize("call", [flatten, shape_of, object_fields])
def test_a_reference_used_many_times_gives_what_expanding_it_at_each_use_gives(call):
    shared = Resolver(SHARED)
    # A resolver of its own for each use expands every reference afresh: what the mapping did before it reused them.
    assert [outcome(call, use, shared) for use in USES] == [outcome(call, use, Resolver(SHARED)) for use in USES]
    assert [outcome(call, use, shared) for use in reversed(USES)] == [
        outcome(call, use, Resolver(SHARED)) for use in reversed(USES)]


def test_a_chain_that_ends_past_the_depth_bound_is_still_a_loop_when_it_was_expanded_nearer_the_top():
    shared = Resolver(SHARED)
    assert flatten({"$ref": "#/components/schemas/D2"}, shared)["properties"]["amount"] == {"type": "integer"}
    assert outcome(flatten, {"$ref": "#/components/schemas/D0"}, shared) == (
        "RefError", "ref-loop", "#/components/schemas/Money")


def test_a_reference_is_expanded_once_however_many_times_it_is_used(monkeypatch):
    followed: list[str] = []
    pointer = Resolver.pointer

    def counted(self, ref):
        followed.append(ref)
        return pointer(self, ref)

    monkeypatch.setattr(Resolver, "pointer", counted)
    resolver = Resolver(SHARED)
    for _ in range(50):
        flatten({"$ref": "#/components/schemas/Priced"}, resolver)
    # Priced merges Money twice; its fields (Money's currency) are read by the mapping only one level down.
    assert sorted(followed) == ["#/components/schemas/Money", "#/components/schemas/Priced"]


# ---------------------------------------------------------------- the budget and the deadline

def test_expansions_past_the_count_are_refused():
    resolver = Resolver(json.loads(bombs.allof_chain(16)), Budget(expansions=1_000))
    with pytest.raises(ServiceError) as raised:
        flatten({"$ref": "#/components/schemas/L1"}, resolver)
    assert raised.value.status == 422 and raised.value.code == "document-too-complex"
    assert resolver.budget.spent == 1_001


def test_the_document_s_own_values_are_spent_from_the_same_count():
    text = bombs.ref_fan(operations=1, fields=1, levels=1)
    budget = Budget()
    plan._read_and_map(text, ImportOptions.parse({"document": text}), budget)
    values_alone = Budget()
    read_document(text, values_alone)
    assert 0 < values_alone.spent < budget.spent


def test_work_past_the_deadline_is_refused():
    ticks = iter(range(1_000_000))
    budget = Budget(seconds=10, clock=lambda: next(ticks))  # each reading of the clock one second later
    text = bombs.ref_fan(operations=20, fields=10, levels=3)
    with pytest.raises(ServiceError) as raised:
        plan._read_and_map(text, ImportOptions.parse({"document": text}), budget)
    assert raised.value.code == "document-too-complex"


def test_an_import_past_its_deadline_is_refused_over_rest(service, monkeypatch):
    text = bombs.ref_fan(operations=50, fields=20, levels=4)
    assert import_ok(service, text).status_code == 200
    monkeypatch.setattr(limits, "IMPORT_DEADLINE_SECONDS", 0.0)
    response = import_ok(service, text, apply=True)
    assert response.status_code == 422
    assert response.json()["errors"] == [TOO_COMPLEX]
    assert service.api("GET", "/v1/tools").json()["tools"] == []


def test_a_request_stops_waiting_at_the_deadline_even_when_the_work_does_not_look(monkeypatch):
    """Inside the YAML parser the work cannot look at its budget: the request answers at the deadline anyway, and
    the work stops at its next step."""
    budget = Budget(seconds=0.2)
    seen: list[type] = []

    def parsing(text, options, budget):
        real_sleep(1.0)  # a parse that does not look at the clock
        try:
            budget.check()
        except BaseException as error:
            seen.append(type(error))
            raise

    monkeypatch.setattr(plan, "_read_and_map", parsing)
    started = time.monotonic()
    with pytest.raises(ServiceError) as raised:
        plan._off_the_hub(budget, None, "{}", ImportOptions.parse({"document": "{}"}))
    assert raised.value.code == "document-too-complex"
    assert time.monotonic() - started < 0.9
    deadline = time.monotonic() + GENEROUS_SECONDS
    while not seen and time.monotonic() < deadline:
        gevent.sleep(0.02)
    assert seen == [Abandoned]


# ---------------------------------------------------------------- nobody waiting: the work stops

def slow_document() -> str:
    """Legitimate under raised bounds, and seconds of mapping: a chain of YAML aliases, each use walked."""
    return bombs.alias_chain(22, fan=2, required=False)


def test_the_work_stops_when_the_client_goes_away(service, monkeypatch):
    monkeypatch.setattr(limits, "MAX_IMPORT_DOCUMENT_VALUES", 10**12)
    monkeypatch.setattr(limits, "IMPORT_DEADLINE_SECONDS", 600.0)
    started, ended = [], []
    read_and_map = plan._read_and_map

    def watched(text, options, budget):
        started.append(time.monotonic())
        try:
            return read_and_map(text, options, budget)
        except BaseException as error:
            ended.append((time.monotonic(), type(error)))
            raise

    monkeypatch.setattr(plan, "_read_and_map", watched)
    body = json.dumps({"document": slow_document()}).encode()
    address = urlsplit(service.url)
    client = socket.create_connection((address.hostname, address.port))
    client.sendall(b"POST /v1/tools/import HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Authorization: Bearer " + service.agent_key.encode() + b"\r\n"
                   b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    wait_until(lambda: started, "the work started")
    real_sleep(0.3)  # well into mapping, which takes seconds
    assert not ended
    client.close()
    gone_at = time.monotonic()
    wait_until(lambda: ended, "the work stopped")
    stopped_at, raised = ended[0]
    assert raised is Abandoned
    assert stopped_at - gone_at < GENEROUS_SECONDS
    assert written_nothing(service)


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + GENEROUS_SECONDS * 4
    while not condition():
        assert time.monotonic() < deadline, f"waited for: {what}"
        gevent.sleep(0.02)


def written_nothing(service) -> bool:
    return service.api("GET", "/v1/tools").json()["tools"] == []


def test_the_slow_document_is_ordinary_work_when_someone_waits(service, monkeypatch):
    """What the test above stops is work that would have finished: under the same bounds, waited for, it imports."""
    monkeypatch.setattr(limits, "MAX_IMPORT_DOCUMENT_VALUES", 10**12)
    text = bombs.alias_chain(10, fan=2, required=False)
    response = import_ok(service, text)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["operations"][0]["status"] == "ready"

