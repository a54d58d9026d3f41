"""`/mcp/projects/<project>`: a published project as an MCP server for the person holding a session token.

The checks run in the order of trust, as `/mcp`'s do: the Origin, then the person (a session token, taken exactly as
the conversation routes take one; an API key is refused, this server is for a person), the body, the envelope, then
the session (a conversation of this subject, of this project, not ended). Each refusal is an HTTP status with a
JSON-RPC error body; without a token, 401 names the resource's metadata (RFC 9728) in `WWW-Authenticate`.
"""
from __future__ import annotations

from typing import Any, Iterator

from flask import Blueprint, Response, current_app, g, request, stream_with_context

from service.catalogue import violation
from service.conversations import Session, authenticate_session, open_conversation
from service.database import UNAVAILABLE, unavailable_error
from service.errors import REQUEST, ServiceError, invalid, not_found
from service.http import DISPATCHER_KEY, app_config, bearer_token
from service.identity.resource import www_authenticate
from service.mcp import elicitation, project_server, project_session, protocol
from service.mcp.project_session import ProjectSession
from service.mcp.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Message,
    ProtocolError,
    Reply,
)
from service.mcp.transport import (
    check_origin,
    database_unavailable,
    json_response,
    read_body,
    refused_before_the_view,
    server_version,
    unavailable,
)
from service.models import Conversation
from service.registry.organizations import looks_like_api_key
from service.text import is_text

blp = Blueprint("mcp_projects", __name__)

PATH = "/mcp/projects/<project>"
#: Methods that expect an answer, so sending one as a notification (no id) is a mistake worth refusing.
REQUESTS = frozenset({"initialize", "ping", "tools/list", "tools/call"})
API_KEY_REFUSED = ("This MCP server is for a person: present a session token (or your identity provider's access "
                   "token), not an API key.")


def _dispatcher():
    return current_app.extensions[DISPATCHER_KEY]


def _person(project: str) -> Session:
    """The session token's person; 401 (naming the resource's metadata) without one, 403 for an API key."""
    try:
        token = bearer_token()
    except ServiceError as error:
        raise _unauthorized(error.message) from None
    if looks_like_api_key(token):
        raise ProtocolError(403, INVALID_REQUEST, API_KEY_REFUSED)
    try:
        g.session = authenticate_session(token, app_config(current_app))  # the conversation routes' very path
    except ServiceError as error:
        raise _unauthorized(error.message) from None
    if project_session.names_another_organization(request.args.getlist("org"), g.session.organization.slug):
        raise not_found("project")
    return g.session


def _unauthorized(message: str) -> ProtocolError:
    return ProtocolError(401, INVALID_REQUEST, message)


def _named_organization() -> str | None:
    """The organization the request's `?org=` names (the resource identifier's, RFC 9728); None when absent."""
    org = request.args.get("org")
    return org if org and is_text(org) else None


def _www_authenticate(project: str) -> dict[str, str]:
    """The 401's header: where the resource's metadata is, the `?org=` the client was given kept (identity.resource)."""
    public_url = app_config(current_app).public_url
    return {"WWW-Authenticate": www_authenticate(public_url, project, _named_organization())}


def _session(person: Session, project: str) -> tuple[ProjectSession, Conversation]:
    """The MCP session of this request and the conversation it is; 400 without an id, 404 for one that is not this
    subject's conversation of this project, or has ended (MCP: initialize again)."""
    protocol.check_version_header(request.headers.get(protocol.VERSION_HEADER))
    session_id = request.headers.get(protocol.SESSION_HEADER)
    if not session_id:
        raise ProtocolError(400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id; initialize first.")
    session = project_session.read(app_config(current_app).secret_key, session_id)
    conversation = (project_session.conversation_of(person, project, session.conversation_id)
                    if session is not None else None)
    if session is None or conversation is None:
        raise ProtocolError(404, INVALID_REQUEST, "Not Found: unknown session; initialize a new one.")
    protocol.check_version_header(request.headers.get(protocol.VERSION_HEADER), session.protocol_version)
    # The session's conversation on the request's log line, as a conversation route's is.
    if request.view_args is not None:
        request.view_args["conversation_id"] = conversation.id
    return session, conversation


def _version() -> Any:
    """`?version=N`, a published version's number; None (the latest) when absent."""
    given = request.args.get("version")
    if given is None:
        return None
    if not (given.isascii() and given.isdigit()) or len(given) > 12:
        raise invalid([violation("version", "version-format")], REQUEST)
    return int(given)


def _initialize(person: Session, project: str, message: Message) -> Response:
    requested = message.params.get("protocolVersion")
    if not isinstance(requested, str):
        raise ProtocolError(200, INVALID_PARAMS, "initialize needs params.protocolVersion, a string.")
    version = protocol.negotiate(requested)
    conversation = open_conversation(person, project, _version(), _dispatcher())
    asks = elicitation.can_elicit(message.params.get("capabilities"))
    session_id = project_session.issue(app_config(current_app).secret_key, conversation.id, version, asks)
    if request.view_args is not None:
        request.view_args["conversation_id"] = conversation.id
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": f"toolgate-{project}", "title": project, "version": server_version()},
        "instructions": project_server.instructions(conversation),
    }
    assert message.id is not None  # initialize is one of REQUESTS: refused without an id
    return json_response(protocol.result_message(message.id, result), headers={protocol.SESSION_HEADER: session_id})


def _accepts_events() -> bool:
    return "Accept" not in request.headers or request.accept_mimetypes["text/event-stream"] > 0


def _call(person: Session, session: ProjectSession, conversation: Conversation, message: Message) -> Response:
    assert message.id is not None
    id_ = message.id
    result = project_server.call(person, conversation, str(id_), message.params, _dispatcher())
    if "approval" in result and session.elicitation and _accepts_events():
        def finish(decided: dict[str, Any]) -> str:
            return elicitation.event(protocol.result_message(id_, project_server.tool_result(decided,
                                                                                             conversation.id)))

        events = elicitation.ask_and_wait(person, conversation, result, session.protocol_version, finish)
        return Response(stream_with_context(_guarded(events, id_)), mimetype="text/event-stream",
                        headers={"Cache-Control": "no-cache"})
    return json_response(protocol.result_message(id_, project_server.tool_result(result, conversation.id)))


def _guarded(events: Iterator[str], id_: str | int) -> Iterator[str]:
    """A stream that ends with a JSON-RPC error for the call when the service fails mid-wait (the database away)."""
    try:
        yield from events
    except (ServiceError, *UNAVAILABLE) as failure:
        error = failure if isinstance(failure, ServiceError) else unavailable_error()
        yield elicitation.event(protocol.error_message(id_, protocol.SERVER_UNAVAILABLE, error.message,
                                                       error.to_dict()))


def _answer(person: Session, project: str, incoming: Message | Reply) -> Response:
    if isinstance(incoming, Reply):  # the person's answer to an elicitation
        _, conversation = _session(person, project)
        try:
            elicitation.answer(person, conversation, incoming, _dispatcher())
        except ServiceError as refusal:  # as the approvals route refuses it: 404, 409 decided or expired, 403
            if refusal.status in (429, 503):
                raise
            raise ProtocolError(refusal.status, INVALID_REQUEST, refusal.message, incoming.id,
                                refusal.to_dict()) from None
        return Response(status=202)
    message = incoming
    if message.method in REQUESTS and not message.is_request:
        raise ProtocolError(400, INVALID_REQUEST, f"{message.method} is a request: give it an id.")
    if message.method == "initialize":
        return _initialize(person, project, message)
    session, conversation = _session(person, project)
    if message.id is None:  # notifications/initialized, notifications/cancelled, …: nothing to answer
        return Response(status=202)
    if message.method == "ping":
        return json_response(protocol.result_message(message.id, {}))
    if message.method == "tools/list":
        page = project_server.list_tools(person, conversation, message.params.get("cursor"),
                                         app_config(current_app).mcp_page_size)
        return json_response(protocol.result_message(message.id, page))
    if message.method == "tools/call":
        return _call(person, session, conversation, message)
    raise ProtocolError(200, METHOD_NOT_FOUND, f"Method not found: {message.method}")


def _refused(error: ServiceError, id_: str | int | None, project: str) -> Response:
    """A refusal of the service's as a JSON-RPC error: 429 and 503 with the retry hint; 401, 403 and 404 with their
    status; any other (a call or version that breaks a rule, a project not published) as invalid params."""
    if error.status in (429, 503) and error.retry_after is not None:
        return unavailable(error, id_)
    status = error.status if error.status in (401, 403, 404) else 200
    headers = _www_authenticate(project) if error.status == 401 else {}
    code = INVALID_REQUEST if status != 200 else INVALID_PARAMS
    return json_response(protocol.error_message(id_, code, error.message, error.to_dict()), status, headers)


@blp.post(PATH)
def post(project: str):
    """One JSON-RPC message in; one JSON answer out, an event stream for a call awaiting the person, or 202."""
    id_: str | int | None = None
    try:
        check_origin()
        person = _person(project)
        incoming = protocol.parse_incoming(read_body())
        id_ = incoming.id
        return _answer(person, project, incoming)
    except ProtocolError as error:
        error.id = error.id if error.id is not None else id_
        headers = _www_authenticate(project) if error.status == 401 else {}
        return json_response(error.to_message(), error.status, headers)
    except ServiceError as refusal:
        return _refused(refusal, id_, project)
    except UNAVAILABLE as failure:
        return database_unavailable(failure)
    except Exception:  # a bug, not a refusal: log it, and still answer in JSON-RPC
        current_app.logger.exception("MCP project request failed")
        return json_response(protocol.error_message(id_, INTERNAL_ERROR, "Internal error."), 500)


@blp.delete(PATH)
def delete(project: str):
    """End the MCP session: its conversation ends, and its id is refused from now on."""
    try:
        check_origin()
        _, conversation = _session(_person(project), project)
        project_session.end(conversation)
        return Response(status=204)
    except ProtocolError as error:
        headers = _www_authenticate(project) if error.status == 401 else {}
        return json_response(error.to_message(), error.status, headers)
    except ServiceError as refusal:
        return _refused(refusal, None, project)


@blp.route(PATH, methods=["GET", "PUT", "PATCH"])
def not_offered(project: str):
    """No server-to-client stream outside a call (GET); the rest is not MCP."""
    try:
        check_origin()
    except ProtocolError as error:
        return json_response(error.to_message(), error.status)
    message = ("This server offers no event stream outside a call: POST each JSON-RPC message instead."
               if request.method == "GET" else "Send JSON-RPC messages with POST.")
    return json_response(protocol.error_message(None, INVALID_REQUEST, message), 405, {"Allow": "POST, DELETE"})


for _failure in UNAVAILABLE:
    blp.register_error_handler(_failure, database_unavailable)
blp.register_error_handler(ServiceError, refused_before_the_view)
