"""`/mcp` over HTTP: the Streamable HTTP transport's checks, then the JSON-RPC methods this server offers.

The order of the checks is the order of trust: the Origin (before anything is read), the API key, the body's size
and media type, the envelope, then the session. Each refusal is an HTTP status with a JSON-RPC error body.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, request

from service.database import UNAVAILABLE
from service.errors import ServiceError, role_key
from service.http import app_config, bearer_token
from service.mcp import protocol, tools
from service.mcp.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Message,
    ProtocolError,
)
from service.mcp.transport import check_origin as _check_origin
from service.mcp.transport import database_unavailable
from service.mcp.transport import json_response as _json
from service.mcp.transport import read_body as _body
from service.mcp.transport import refused_before_the_view as _refused_before_the_view
from service.mcp.transport import server_version as _server_version
from service.registry import Principal, authenticate_api_key
from service.roles import READ, may

blp = Blueprint("mcp", __name__)

#: Methods that expect an answer, so sending one as a notification (no id) is a mistake worth refusing.
REQUESTS = frozenset({"initialize", "ping", "tools/list", "tools/call"})

INSTRUCTIONS = (
    "Toolgate keeps your organization's HTTP tools: the definitions a model calls. With these tools you can read "
    "tools and projects, validate a definition, register a tool, save its draft, start a new draft from the latest "
    "published version, import an OpenAPI document's operations as drafts and pin a tool into a project's draft. "
    "Everything you write goes to a draft and is recorded as done by your key. Publishing is a person's deliberate "
    "step in the dashboard and cannot be done here."
)


def _principal() -> Principal:
    """The caller's API key, which must be an agent or admin key."""
    try:
        principal = authenticate_api_key(bearer_token())
    except ServiceError as error:
        raise ProtocolError(error.status, INVALID_REQUEST, error.message) from None
    if not may(principal.role, READ):
        raise ProtocolError(403, INVALID_REQUEST, f"{role_key(principal.role)} may not use the MCP server.")
    return principal


def _session(principal: Principal) -> protocol.Session:
    """The session this request belongs to, which must be one this service signed for this very key."""
    header = request.headers.get(protocol.VERSION_HEADER)
    if header is not None and header not in protocol.SUPPORTED_VERSIONS:
        raise protocol.unsupported_version(header)
    session_id = request.headers.get(protocol.SESSION_HEADER)
    if not session_id:
        raise ProtocolError(400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id; initialize first.")
    session = protocol.open_session(app_config(current_app).secret_key, session_id)
    if session is None or (session.organization_id, session.key_id) != (principal.organization.id,
                                                                         principal.key_id):
        # 404 tells the client to start a new session (MCP, Streamable HTTP "Session Management").
        raise ProtocolError(404, INVALID_REQUEST, "Not Found: unknown session; initialize a new one.")
    if header is not None and header != session.protocol_version:
        raise protocol.unsupported_version(header, (session.protocol_version,))
    return session


def _initialize(principal: Principal, message: Message) -> Response:
    requested = message.params.get("protocolVersion")
    if not isinstance(requested, str):
        raise ProtocolError(200, INVALID_PARAMS, "initialize needs params.protocolVersion, a string.")
    version = protocol.negotiate(requested)
    session_id = protocol.issue_session(app_config(current_app).secret_key, principal.organization.id,
                                        principal.key_id, version)
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "toolgate", "title": "Toolgate", "version": _server_version()},
        "instructions": INSTRUCTIONS,
    }
    assert message.id is not None  # initialize is one of REQUESTS: _answer refused it without an id
    return _json(protocol.result_message(message.id, result), headers={protocol.SESSION_HEADER: session_id})


def _result(principal: Principal, message: Message) -> dict[str, Any]:
    """The result of a request other than initialize."""
    if message.method == "ping":
        return {}
    if message.method == "tools/list":
        if message.params.get("cursor") is not None:
            raise ProtocolError(200, INVALID_PARAMS, "Invalid cursor: the tool list comes in one page.")
        return {"tools": tools.listing()}
    if message.method == "tools/call":
        return tools.call_tool(principal, message.params.get("name"), message.params.get("arguments"))
    raise ProtocolError(200, METHOD_NOT_FOUND, f"Method not found: {message.method}")


def _answer(principal: Principal, message: Message) -> Response:
    if message.method in REQUESTS and not message.is_request:
        raise ProtocolError(400, INVALID_REQUEST, f"{message.method} is a request: give it an id.")
    try:
        if message.method == "initialize":
            return _initialize(principal, message)
        _session(principal)
        if message.id is None:  # not `is_request`, spelled so the type checker sees the id below
            # notifications/initialized, notifications/cancelled and any other notification: nothing to answer.
            return Response(status=202)
        return _json(protocol.result_message(message.id, _result(principal, message)))
    except ProtocolError as error:
        error.id = message.id
        raise


@blp.post("/mcp")
def post():
    """One JSON-RPC message in, one JSON answer out (or 202 for a notification)."""
    try:
        _check_origin()
        principal = _principal()
        return _answer(principal, protocol.parse_message(_body()))
    except ProtocolError as error:
        headers = {"WWW-Authenticate": 'Bearer realm="toolgate"'} if error.status == 401 else {}
        return _json(error.to_message(), error.status, headers)
    except UNAVAILABLE as failure:
        return database_unavailable(failure)
    except ServiceError as refusal:  # the body's arrival (408, 400 body-incomplete), or the gate on its way back
        return _refused_before_the_view(refusal)
    except Exception:  # a bug, not a refusal: log it, and still answer in JSON-RPC rather than in the REST shape
        current_app.logger.exception("MCP request failed")
        return _json(protocol.error_message(None, INTERNAL_ERROR, "Internal error."), 500)


for _failure in UNAVAILABLE:
    blp.register_error_handler(_failure, database_unavailable)


blp.register_error_handler(ServiceError, _refused_before_the_view)


@blp.route("/mcp", methods=["GET", "DELETE", "PUT", "PATCH"])
def not_offered():
    """What the server does not offer: an event stream (GET) and ending a session (DELETE)."""
    try:
        _check_origin()
    except ProtocolError as error:
        return _json(error.to_message(), error.status)
    if request.method == "GET":
        message = "This server offers no event stream: POST each JSON-RPC message instead."
    elif request.method == "DELETE":
        message = "Sessions here are signed, not stored, so there is none to end: simply stop using the id."
    else:
        message = "Send JSON-RPC messages with POST."
    return _json(protocol.error_message(None, INVALID_REQUEST, message), 405, {"Allow": "POST"})
