"""The Streamable HTTP edges of /mcp, with plain HTTP against a live service: versions, sessions, envelopes, bodies,
Origin and credentials. Each refusal is checked for its HTTP status and its JSON-RPC error."""
from __future__ import annotations

import json
import socket

import pytest
import requests

from service.limits import MAX_REQUEST_BYTES
from service.mcp.protocol import issue_session
from tests.mcp.conftest import RawMcp, error_of

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def initialize(mcp, version):
    return mcp.post({**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}})


# Versions and the handshake

@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_initialize_answers_a_supported_version_with_that_version(mcp, version):
    response = initialize(mcp, version)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "toolgate"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2026-07-28", "1999-01-01"])
def test_initialize_answers_an_unsupported_version_with_the_latest(mcp, version):
    assert initialize(mcp, version).json()["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_without_a_version_is_invalid_params(mcp):
    response = mcp.post({**INITIALIZE, "params": {"capabilities": {}}})
    assert response.status_code == 200
    assert error_of(response)["code"] == -32602
    assert response.json()["id"] == 1


def test_every_initialize_issues_a_distinct_session_id_of_visible_ascii(mcp):
    ids = {mcp.initialize() for _ in range(3)}
    assert len(ids) == 3
    assert all(all(0x21 <= ord(ch) <= 0x7E for ch in session) for session in ids)


def test_ping_answers_an_empty_result(mcp):
    response = mcp.request("ping", session=mcp.initialize(), id_="p-1")
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": "p-1", "result": {}}


def test_a_notification_is_accepted_with_202_and_no_body(mcp):
    session = mcp.initialize()
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/anything"):
        response = mcp.post({"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}}, session=session)
        assert response.status_code == 202 and response.content == b""


def test_the_version_header_may_be_left_out_after_initialize(mcp):
    session = mcp.initialize("2025-06-18")
    assert mcp.request("tools/list", session=session).status_code == 200


def test_a_version_header_the_server_does_not_speak_is_400(mcp):
    # The SDK client's `server/discover` probe looks like this; the -32022 it gets sends it to initialize.
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}, version="2026-07-28")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2025-06-18", "2025-11-25"], "requested": "2026-07-28"}


def test_a_version_header_other_than_the_negotiated_one_is_400(mcp):
    session = mcp.initialize("2025-06-18")
    response = mcp.request("tools/list", session=session, version="2025-11-25")
    assert response.status_code == 400
    assert error_of(response)["data"]["supported"] == ["2025-06-18"]
    assert mcp.request("tools/list", session=session, version="2025-06-18").status_code == 200


# Sessions

def test_a_request_without_a_session_is_400(mcp):
    response = mcp.request("tools/list", session=None)
    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def agent(service):
    from service.database import db
    from service.registry import authenticate_api_key

    with db.connection_context():
        return authenticate_api_key(service.agent_key)


@pytest.mark.parametrize("forge", [
    lambda good, who: "made-up",
    lambda good, who: good[:-2] + ("AA" if not good.endswith("AA") else "BB"),
    lambda good, who: issue_session("another-secret", who.organization.id, who.key_id, "2025-11-25"),
    lambda good, who: "x" * 5000,
], ids=["made-up", "tampered", "other-secret", "huge"])
def test_an_unknown_session_is_404(service, mcp, forge):
    response = mcp.request("tools/list", session=forge(mcp.initialize(), agent(service)))
    assert response.status_code == 404
    assert error_of(response)["code"] == -32600


def test_a_session_of_another_key_is_404(service, mcp):
    agent_session = mcp.initialize()
    response = mcp.request("tools/list", session=agent_session, key=service.admin_key)
    assert response.status_code == 404
    assert mcp.request("tools/list", session=agent_session).status_code == 200


def test_a_session_outlives_the_instance_that_issued_it(service, mcp):
    """Stateless: a session id signed with the service's secret is accepted by any instance holding it."""
    principal = agent(service)
    session = issue_session(service.config.secret_key, principal.organization.id, principal.key_id, "2025-11-25")
    assert mcp.request("ping", session=session).json()["result"] == {}


# Envelopes

def test_an_unknown_method_is_method_not_found(mcp):
    response = mcp.request("resources/list", session=mcp.initialize(), id_=42)
    assert response.status_code == 200
    assert error_of(response)["code"] == -32601
    assert response.json()["id"] == 42


def test_a_batch_is_refused(mcp):
    session = mcp.initialize()
    response = mcp.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}],
                        session=session)
    assert response.status_code == 400
    assert error_of(response)["code"] == -32600
    assert response.json()["id"] is None


@pytest.mark.parametrize("method", ["initialize", "ping", "tools/list", "tools/call"])
def test_a_notification_where_a_request_is_expected_is_refused(mcp, method):
    response = mcp.post({"jsonrpc": "2.0", "method": method, "params": {}}, session=mcp.initialize())
    assert response.status_code == 400
    assert error_of(response)["code"] == -32600
    assert "give it an id" in error_of(response)["message"]


def test_a_response_from_the_client_is_refused(mcp):
    response = mcp.post({"jsonrpc": "2.0", "id": 5, "result": {}}, session=mcp.initialize())
    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


@pytest.mark.parametrize("body", [b"{", b"", b"\xff\xfe\x00", b"NaN", b'{"jsonrpc": "2.0", "id": Infinity}',
                                  b"[" * 100_000], ids=["truncated", "empty", "not-utf8", "nan", "infinity", "deep"])
def test_a_malformed_body_is_a_parse_error(mcp, body):
    response = mcp.post(data=body, session=mcp.initialize())
    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


@pytest.mark.parametrize("message, code", [
    ("just a string", -32600),
    ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
    ({"id": 1, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600),
    ({"jsonrpc": "2.0", "id": 1, "method": 5}, -32600),
    ({"jsonrpc": "2.0", "id": 1}, -32600),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}, -32602),
], ids=["not-an-object", "old-version", "no-version", "null-id", "bool-id", "float-id", "method-not-string",
        "no-method", "positional-params"])
def test_an_invalid_envelope_is_refused(mcp, message, code):
    response = mcp.post(message, session=mcp.initialize())
    assert response.status_code == 400
    assert error_of(response)["code"] == code


# Bodies

def test_a_body_over_the_bound_is_413(mcp):
    padding = "x" * MAX_REQUEST_BYTES
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": padding}},
                        session=mcp.initialize())
    assert response.status_code == 413
    assert error_of(response)["code"] == -32600


def test_a_chunked_body_over_the_bound_is_413(mcp):
    def chunks():
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "'
        for _ in range(MAX_REQUEST_BYTES // 65_536 + 2):
            yield b"x" * 65_536
        yield b'"}}'

    response = requests.post(mcp.url, data=chunks(), headers=mcp.headers(session=mcp.initialize()), timeout=30)
    assert response.status_code == 413


def test_a_body_shorter_than_declared_is_a_json_rpc_400_not_a_500(mcp):
    host, port = mcp.url.removeprefix("http://").split("/")[0].split(":")
    head = "".join(f"{k}: {v}\r\n" for k, v in mcp.headers(session=mcp.initialize()).items())
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: test\r\n{head}Content-Length: 100\r\n\r\n{{\"a\"".encode())
        sock.shutdown(socket.SHUT_WR)  # the client is done after 4 bytes of 100
        answer = b""
        while chunk := sock.recv(65_536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(body)["error"]["data"]["code"] == "body-incomplete"


def test_a_chunked_body_within_the_bound_is_read_whole(mcp):
    session = mcp.initialize()
    response = requests.post(mcp.url, data=iter([b'{"jsonrpc": "2.0", ', b'"id": 3, "method": "ping"}']),
                             headers=mcp.headers(session=session), timeout=30)
    assert response.json()["result"] == {}


def test_a_body_that_is_not_json_media_is_415(mcp):
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        headers={**mcp.headers(session=mcp.initialize()), "Content-Type": "text/plain"})
    assert response.status_code == 415


def test_a_client_that_does_not_accept_json_is_406(mcp):
    response = mcp.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        headers={**mcp.headers(session=mcp.initialize()), "Accept": "text/event-stream"})
    assert response.status_code == 406


# What the server does not offer

def test_get_offers_no_stream(mcp):
    response = requests.get(mcp.url, headers=mcp.headers(session=mcp.initialize(), Accept="text/event-stream"),
                            timeout=30)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert error_of(response)["code"] == -32600


def test_delete_of_a_session_is_not_offered(mcp):
    response = requests.delete(mcp.url, headers=mcp.headers(session=mcp.initialize()), timeout=30)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


# Origin and credentials

@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1", "http://127.0.0.1.evil.example"])
@pytest.mark.parametrize("verb", ["POST", "GET", "DELETE"])
def test_a_foreign_origin_is_403(mcp, verb, origin):
    response = requests.request(verb, mcp.url, data=json.dumps(INITIALIZE),
                                headers=mcp.headers(Origin=origin), timeout=30)
    assert response.status_code == 403
    assert error_of(response)["code"] == -32600


def test_the_services_own_origin_is_allowed(service, mcp):
    response = mcp.post(INITIALIZE, headers=mcp.headers(Origin=service.url.upper()))
    assert response.status_code == 200


@pytest.mark.parametrize("authorization", [None, "Bearer tgk_0000000000000000_nope", "Bearer not-a-key",
                                           "Basic dXNlcjpwYXNz"])
def test_an_unknown_key_is_401(mcp, authorization):
    headers = mcp.headers()
    del headers["Authorization"]
    if authorization:
        headers["Authorization"] = authorization
    response = mcp.post(INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert error_of(response)["code"] == -32600


def test_a_backend_key_is_403(service):
    response = RawMcp(service, service.backend_key).post(INITIALIZE)
    assert response.status_code == 403
    assert error_of(response)["message"] == "A backend key may not use the MCP server."  # not "An backend key"


def test_an_admin_key_may_connect(service):
    assert RawMcp(service, service.admin_key).initialize()
