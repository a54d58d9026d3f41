"""A published project as an MCP server, over raw HTTP: who may use it, the session that is a conversation, what it
lists and what a call does. The official SDK client's run is test_project_sdk.py."""
from __future__ import annotations

import json

import pytest
import requests

from service.conversations.slots import CallSlots
from service.database import db
from service.http import DISPATCHER_KEY
from service.mcp import project_session
from service.models import Conversation, now
from service.registry import get_organization
from tests.mcp.project_client import RawProject, error_of, running_app, shop_tools
from tests.support.definitions import make_org
from tests.support.live import publish_project

pytestmark = pytest.mark.service(per_module=True, mcp_page_size=2)


@pytest.fixture(scope="module")
def shop(module_service, module_backend):
    """The service with project `shop` published; its MCP URL."""
    publish_project(module_service, shop_tools(module_backend))
    return module_service.url + "/mcp/projects/shop"


@pytest.fixture
def alice(module_service, shop):
    return RawProject(shop, module_service.session_token("alice"))


# ---- who ---------------------------------------------------------------------------------------------------------

def test_no_token_is_401_naming_the_resource_metadata(module_service, shop):
    response = RawProject(shop, None).initialize()
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{module_service.url}/.well-known/oauth-protected-resource/mcp/projects/shop"')
    assert error_of(response)["code"] == -32600


def test_a_refused_token_is_401_naming_the_resource_metadata(shop):
    response = RawProject(shop, "not.a.token").initialize()
    assert response.status_code == 401 and "resource_metadata=" in response.headers["WWW-Authenticate"]


@pytest.mark.parametrize("role", ["admin", "agent", "backend"])
def test_an_api_key_is_refused(module_service, shop, role):
    key = {"admin": module_service.admin_key, "agent": module_service.agent_key,
           "backend": module_service.backend_key}[role]
    response = RawProject(shop, key).initialize()
    assert response.status_code == 403 and "session token" in error_of(response)["message"]


def test_an_unknown_project_is_404(module_service, shop):
    response = RawProject(module_service.url + "/mcp/projects/nowhere", module_service.session_token()).initialize()
    assert response.status_code == 404 and error_of(response)["data"]["code"] == "not-found"


def test_an_unknown_version_is_404(module_service, shop):
    response = RawProject(shop + "?version=99", module_service.session_token()).initialize()
    assert response.status_code == 404


def test_another_organizations_token_is_404_and_lists_nothing(module_service, shop):
    keys = make_org(module_service.config, "globex")
    minted = requests.post(module_service.url + "/v1/session-tokens", timeout=30,
                           headers={"Authorization": f"Bearer {keys['backend']}"},
                           json={"subject": "alice", "ttl_seconds": 600})
    stranger = RawProject(shop, minted.json()["token"])
    response = stranger.initialize()
    assert response.status_code == 404 and "result" not in response.json()
    session = RawProject(shop, module_service.session_token("alice")).session()
    listed = stranger.request(session, "tools/list")
    assert listed.status_code == 404 and "result" not in listed.json()


def test_another_subjects_session_id_is_404(module_service, shop, alice):
    session = alice.session()
    bob = RawProject(shop, module_service.session_token("bob"))
    assert bob.request(session, "tools/list").status_code == 404
    assert bob.request(session, "tools/call", {"name": "echo_user", "arguments": {}}).status_code == 404


def test_an_unsigned_session_id_is_404_and_none_is_400(alice):
    assert alice.request("forged", "tools/list").status_code == 404
    response = alice.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 400 and "Mcp-Session-Id" in error_of(response)["message"]


def test_an_agents_session_id_is_not_a_project_session(module_service, shop, alice):
    from tests.mcp.conftest import RawMcp

    agent_session = RawMcp(module_service).initialize()
    assert alice.request(agent_session, "tools/list").status_code == 404


def test_a_foreign_origin_is_403(alice):
    response = alice.initialize(Origin="https://evil.example")
    assert response.status_code == 403


def test_a_version_header_other_than_the_sessions_is_400(alice):
    session = alice.session()
    response = alice.request(session, "tools/list", version="2025-06-18")
    assert response.status_code == 400 and error_of(response)["code"] == -32022


def test_get_is_405(alice):
    response = requests.get(alice.url, headers=alice.headers(), timeout=30)
    assert response.status_code == 405


# ---- the session is a conversation -------------------------------------------------------------------------------

def test_initialize_runs_the_session_start_tools_into_authoritative_instructions(module_service, alice):
    response = alice.initialize()
    assert response.status_code == 200
    instructions = response.json()["result"]["instructions"]
    assert instructions.startswith("Authoritative context")
    context = json.loads(instructions.split("\n\n", 1)[1])["authoritative_context"]
    assert [(c["tool"], c["authoritative"]) for c in context] == [("get_profile", True)]
    assert json.loads(context[0]["output"])["subject"] == "alice"


def test_the_session_is_a_conversation_in_the_call_log(module_service, alice):
    session = alice.session()
    alice.result(session, "tools/call", {"name": "echo_user", "arguments": {"q": "tea"}})
    calls = module_service.api("GET", "/v1/calls?tool=echo_user").json()["calls"]
    conversations = {c["conversation"] for c in calls}
    opened = {c["conversation"] for c in module_service.api("GET", "/v1/calls?tool=get_profile").json()["calls"]}
    assert conversations & opened  # the call and the session start share the session's conversation


def test_delete_ends_the_session(alice):
    session = alice.session()
    ended = requests.delete(alice.url, headers=alice.headers(session=session), timeout=30)
    assert ended.status_code == 204
    assert alice.request(session, "tools/list").status_code == 404
    again = requests.delete(alice.url, headers=alice.headers(session=session), timeout=30)
    assert again.status_code == 404


# ---- tools/list ---------------------------------------------------------------------------------------------------

def test_tools_list_is_the_tokens_offer_in_pages(module_service, shop):
    raw = RawProject(shop, module_service.session_token("alice", entitlements=["reports:read"]))
    session = raw.session()
    pages, cursor = [], None
    while True:
        page = raw.result(session, "tools/list", {"cursor": cursor} if cursor else {})
        pages.append([t["name"] for t in page["tools"]])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert pages == [["echo_user", "broken"], ["report", "place_order"], ["forget_me"]]


def test_tools_list_leaves_out_unentitled_tools_and_the_subject(alice):
    session = alice.session()
    tools = alice.result(session, "tools/list")["tools"] + alice.result(
        session, "tools/list", {"cursor": alice.result(session, "tools/list")["nextCursor"]})["tools"]
    names = [t["name"] for t in tools]
    assert "report" not in names and "get_profile" not in names
    echo = next(t for t in tools if t["name"] == "echo_user")
    assert echo["description"] == "The echo_user tool."
    assert echo["inputSchema"] == {"type": "object", "properties": {
        "q": {"type": "string", "description": "What to look for."}}, "required": [], "additionalProperties": False}
    assert echo["annotations"]["readOnlyHint"] is True


def test_annotations_follow_the_method(module_service, shop):
    raw = RawProject(shop, module_service.session_token("alice", entitlements=["reports:read"]))
    session = raw.session()
    tools = {}
    cursor = None
    for _ in range(3):
        page = raw.result(session, "tools/list", {"cursor": cursor} if cursor else {})
        tools.update({t["name"]: t["annotations"] for t in page["tools"]})
        cursor = page.get("nextCursor")
    assert tools["forget_me"]["destructiveHint"] is True and tools["forget_me"]["readOnlyHint"] is False
    assert tools["place_order"]["readOnlyHint"] is False and "destructiveHint" not in tools["place_order"]
    schema = raw.result(session, "tools/list", {"cursor": "bzoy"})["tools"][1]["inputSchema"]
    assert schema["properties"]["items"] == {"type": "array", "items": {"type": "string"}}


def test_a_cursor_not_given_is_invalid_params(alice):
    session = alice.session()
    response = alice.request(session, "tools/list", {"cursor": "not-ours"})
    assert response.status_code == 200 and error_of(response)["code"] == -32602


# ---- tools/call ---------------------------------------------------------------------------------------------------

def test_a_call_answers_the_body_as_text_and_structured_content(alice):
    result = alice.result(alice.session(), "tools/call", {"name": "echo_user", "arguments": {"q": "tea"}})
    assert result["isError"] is False
    echoed = json.loads(result["content"][0]["text"])
    assert echoed["path"].startswith("/tools/echo_user/echo/alice") and result["structuredContent"] == echoed


def test_a_model_supplied_subject_never_reaches_the_endpoint(alice):
    session = alice.session()
    for arguments in ({"subject": "intruder-bob-7", "q": "x"}, {"Subject": "intruder-bob-7"}):
        result = alice.result(session, "tools/call", {"name": "echo_user", "arguments": arguments})
        assert "intruder-bob-7" not in json.dumps(result), result


def test_a_failure_is_an_error_result_holding_the_failure_object(alice):
    session = alice.session()
    result = alice.result(session, "tools/call", {"name": "broken", "arguments": {}})
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {"status": "error", "kind": "refused", "httpCode": 500}
    unknown = alice.result(session, "tools/call", {"name": "report", "arguments": {}})  # not entitled
    assert json.loads(unknown["content"][0]["text"]) == {"status": "error", "kind": "unknown-tool"}
    invalid = alice.result(session, "tools/call", {"name": "echo_user", "arguments": {"q": 7}})
    assert json.loads(invalid["content"][0]["text"])["kind"] == "invalid-arguments"


def test_a_call_without_a_name_is_invalid_params(alice):
    response = alice.request(alice.session(), "tools/call", {"arguments": {}})
    assert response.status_code == 200 and error_of(response)["code"] == -32602


def test_without_elicitation_a_consequential_call_is_held_and_nothing_is_sent(module_service, module_backend,
                                                                               alice):
    requests.delete(module_backend + "/_calls", timeout=5)
    session = alice.session()
    result = alice.result(session, "tools/call", {"name": "place_order", "arguments": {"items": ["tea"]}})
    assert result["isError"] is False and result["structuredContent"]["approval"]["status"] == "pending"
    approval = result["structuredContent"]["approval"]["id"]
    sent = requests.get(module_backend + "/_calls", timeout=5).json()["calls"]
    assert not [c for c in sent if "place_order" in c.get("path", "")]
    conversation = result["structuredContent"]["message"].split("/v1/conversations/")[1].split("/")[0]
    listed = module_service.as_session("GET", f"/v1/conversations/{conversation}/approvals", alice.token)
    assert [a["id"] for a in listed.json()["approvals"]] == [approval]


def test_past_the_organizations_share_a_call_is_429_with_the_retry_hint(module_service, alice):
    session = alice.session()
    slots: CallSlots = running_app(module_service.config).extensions[DISPATCHER_KEY].slots
    with db.connection_context():
        organization = get_organization(module_service.org).id
    with slots.held(organization, slots.limit):
        response = alice.request(session, "tools/call", {"name": "echo_user", "arguments": {}})
    assert response.status_code == 429 and response.headers["Retry-After"] == "2"
    error = error_of(response)
    assert error["code"] == -32000 and error["data"]["code"] == "too-many-calls" and error["data"]["retryAfter"] == 2


# ---- the plain path ahead of Flask (project_plain.py) ----------------------------------------------------------

def _without_ids(answer: dict) -> dict:
    """A tools/call answer without what differs between two calls (the echoed assertion and call count)."""
    structured = dict(answer["result"].get("structuredContent") or {})
    for varying in ("claims", "call", "headers"):
        structured.pop(varying, None)
    return {"isError": answer["result"]["isError"], "structured": structured, "id": answer["id"]}


def test_the_plain_path_and_the_view_answer_a_call_alike(module_service, alice):
    session = alice.session()
    call = {"name": "echo_user", "arguments": {"q": "tea"}}
    plain = alice.request(session, "tools/call", call)
    # An Origin header (the service's own, so allowed) sends the same request through Flask's view.
    viewed = alice.request(session, "tools/call", call, Origin=module_service.url)
    assert plain.status_code == viewed.status_code == 200
    assert _without_ids(plain.json()) == _without_ids(viewed.json())
    assert plain.headers["X-Request-Id"] and viewed.headers["X-Request-Id"]
    for refused in ({"name": "echo_user", "arguments": {"q": 7}}, {"name": "nothing", "arguments": {}}):
        plain, viewed = (alice.request(session, "tools/call", refused, **extra) for extra in
                         ({}, {"Origin": module_service.url}))
        assert plain.json()["result"] == viewed.json()["result"]


def test_the_plain_path_hands_every_refusal_to_the_view(module_service, shop, alice):
    session = alice.session()
    call = {"name": "echo_user", "arguments": {}}
    bob = RawProject(shop, module_service.session_token("bob"))
    assert bob.request(session, "tools/call", call).status_code == 404  # a stranger's session
    assert alice.request("forged", "tools/call", call).status_code == 404
    assert RawProject(shop, "not.a.token").request(session, "tools/call", call).status_code == 401
    assert alice.request(session, "tools/call", call, version="2025-06-18").status_code == 400
    assert alice.request(session, "tools/call", call, token=module_service.admin_key).status_code == 403


def test_a_session_ended_elsewhere_or_used_by_a_stranger_is_refused_at_once_after_calls(module_service, shop, alice):
    """What a process remembers of a session (its verified id, its conversation's row) never outlives the row: a
    session ended by another instance (its DELETE is this UPDATE of the same row) is refused by the next call."""
    session = alice.session()
    call = {"name": "echo_user", "arguments": {}}
    for _ in range(2):  # the second call is answered from what the first one remembered
        assert alice.result(session, "tools/call", call)["isError"] is False
    bob = RawProject(shop, module_service.session_token("bob"))
    assert bob.request(session, "tools/call", call).status_code == 404
    conversation = project_session.read(module_service.config.secret_key, session).conversation_id
    with db.connection_context():
        assert Conversation.update(ended_at=now()).where(Conversation.id == conversation).execute() == 1
    assert alice.request(session, "tools/call", call).status_code == 404
    assert alice.request(session, "tools/call", call, Origin=module_service.url).status_code == 404  # the view

#: Every request hook of the app that applies to the project server's endpoint (app-wide, or its blueprint's), by
#: kind: the plain path does each one's work itself, as the step route's does (tests/conversations/
#: test_step_route.py). A hook added to the app fails here until the plain path does its work too.
HOOKS_THE_PLAIN_PATH_DOES = {
    "before_request_funcs": ["install_observability.<locals>._begin", "install_admission.<locals>._admit"],
    "after_request_funcs": ["install_observability.<locals>._answer"],
    "teardown_request_funcs": ["install_observability.<locals>._end", "install_admission.<locals>._give_back"],
    "url_value_preprocessors": [],
}


def test_the_plain_path_does_the_work_of_every_hook_the_app_has(module_service):
    app = running_app(module_service.config)
    for kind, expected in HOOKS_THE_PLAIN_PATH_DOES.items():
        found = [f.__qualname__ for blueprint in (None, "mcp_projects") for f in getattr(app, kind).get(blueprint, [])]
        assert sorted(found) == sorted(expected), f"{kind}: a hook the project server's plain path skips"


PLAIN_HEAD = {"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "80", "HTTP_MCP_SESSION_ID": "s",
              "HTTP_AUTHORIZATION": "Bearer eyJ.x.y", "HTTP_ACCEPT": "application/json, text/event-stream"}


@pytest.mark.parametrize(("change", "plain"), [
    ({}, True), ({"HTTP_ORIGIN": "http://127.0.0.1"}, False), ({"HTTP_MCP_SESSION_ID": None}, False),
    ({"HTTP_AUTHORIZATION": "Bearer tgk_a_b"}, False), ({"HTTP_AUTHORIZATION": None}, False),
    ({"HTTP_TRANSFER_ENCODING": "chunked"}, False), ({"CONTENT_TYPE": "text/plain"}, False),
    ({"CONTENT_LENGTH": "²"}, False), ({"CONTENT_LENGTH": str(10**9)}, False),
    ({"HTTP_ACCEPT": "text/event-stream"}, False), ({"HTTP_ACCEPT": None}, True)])
def test_only_a_plain_head_takes_the_plain_path(change, plain):
    from service.mcp.project_plain import _plain_length

    environ = {k: v for k, v in {**PLAIN_HEAD, **change}.items() if v is not None}
    assert (_plain_length(environ, 1_048_576) == 80) is plain


@pytest.mark.parametrize("structured", [{"text": "\ud800"}, {"n": 2**70}, {"a": ["é", 1.5, None, True]}])
def test_the_plain_path_writes_any_answer_the_view_writes(structured):
    """orjson writes the plain path's answers; what it will not write (text that is not Unicode, an integer past 64
    bits, both possible in an endpoint's JSON body) is written as the view writes it, never a failure."""
    from service.mcp.project_plain import _json

    answer = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": structured, "isError": False}}
    assert json.loads(_json(answer)) == json.loads(json.dumps(answer))
