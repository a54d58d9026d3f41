"""A project server's plain `tools/call` answered ahead of Flask: the MCP counterpart of the REST step's hot path.

Flask's request and app contexts, routing, hooks and response object cost about as much CPU as a one-call step's own
work (issue 15; bench/mcp_call.py measured a tools/call at 1.8 x the REST step's CPU through Flask). So a POST to
`/mcp/projects/<project>` whose head is plain (a declared JSON body within the bound, no transfer coding, no
Origin, a session id, a Bearer that is not an API key) and whose body is a `tools/call` of a tool that needs no
approval is answered here, with the view's functions in the view's order: a place at the work gate, the request id,
the session token, the body, the session and its conversation, the call; then the same log line and metric sample.
Whatever is not that, or is refused before the call is made (nothing sent yet), goes on to Flask with the body
handed back as it came, and the view answers it: every refusal keeps the view's shape, and the view stays the one
place that decides them.
"""
from __future__ import annotations

import io
import json
import re
import time
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs

import orjson
from flask import Flask
from werkzeug.http import HTTP_STATUS_CODES

from service import gate
from service.conversations import authenticate_session
from service.conversations.offered import offered
from service.conversations.runs import conversation_tools
from service.database import UNAVAILABLE, release, unavailable_error
from service.errors import ServiceError
from service.http.context import DISPATCHER_KEY, WORK_GATE_KEY, app_config
from service.http.credentials import bearer_in
from service.http.hooks import REQUEST_ID_ENVIRON, REQUEST_ID_HEADER, answered
from service.mcp import project_server, project_session, protocol
from service.mcp.protocol import INTERNAL_ERROR, Message
from service.mcp.transport import unavailable
from service.records import logs
from service.registry.organizations import looks_like_api_key

#: The view this path stands in for; its rule is the route label of the log line and the metrics.
ENDPOINT = "mcp_projects.post"
#: A project name is a registry name; anything else (an escape, a slash) is left to Flask's routing.
PATH = re.compile(r"/mcp/projects/([A-Za-z0-9_.-]{1,128})")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ToFlask(Exception):
    """Not a plain call, or refused before anything was sent: the view answers it."""


def install_project_route(app: Flask) -> None:
    """Answer plain `tools/call`s of project servers ahead of `app`'s WSGI app, once its routes are added."""
    rule = next(r.rule for r in app.url_map.iter_rules() if r.endpoint == ENDPOINT)
    work_gate = app.extensions[WORK_GATE_KEY]
    dispatcher = app.extensions[DISPATCHER_KEY]
    flask_app: WSGIApp = app.wsgi_app

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        found = PATH.fullmatch(path) if environ.get("REQUEST_METHOD") == "POST" else None
        config = app_config(app) if found is not None else None
        length = _plain_length(environ, config.max_request_bytes) if config is not None else None
        if found is None or config is None or length is None:  # each None when the one before it is
            return flask_app(environ, start_response)
        started, body = time.perf_counter(), b""
        request_id = logs.accept_request_id(environ.get(REQUEST_ID_ENVIRON))
        token = logs.request_id.set(request_id)
        person, conversation = None, None
        try:
            try:
                gate.enter(work_gate)
                person = authenticate_session(bearer_in(environ.get("HTTP_AUTHORIZATION", "")), config)
                query = environ.get("QUERY_STRING", "")
                if query and project_session.names_another_organization(parse_qs(query).get("org", []),
                                                                        person.organization.slug):
                    raise _ToFlask  # the view refuses another organization's `?org=`
                body = environ["wsgi.input"].read(length)
                message = protocol.parse_message(body)
                session = project_session.read(config.secret_key, environ["HTTP_MCP_SESSION_ID"])
                conversation = (project_session.conversation_of(person, found[1], session.conversation_id)
                                if session is not None else None)
                header = environ.get("HTTP_MCP_PROTOCOL_VERSION")
                if (session is None or conversation is None or not _plain_call(message)
                        or (header is not None and header != session.protocol_version)):
                    raise _ToFlask
                tool = offered(conversation_tools(conversation), person.entitlements).get(message.params["name"])
                if tool is not None and tool.definition.requires_approval:
                    raise _ToFlask  # the view asks the person, or holds the call
            except (_ToFlask, protocol.ProtocolError, ServiceError, *UNAVAILABLE):
                release()
                gate.leave()
                environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
                return flask_app(environ, start_response)
            try:
                assert message.id is not None  # _plain_call
                result = project_server.call(person, conversation, str(message.id), message.params, dispatcher)
                answer = protocol.result_message(message.id, project_server.tool_result(result, conversation.id))
                headers: dict[str, str] = {}
                status, payload = 200, _json(answer)
            except Exception as failure:
                status, payload, headers = _failure(failure, message.id, path)
            finally:
                release()
                gate.leave()
            start_response(f"{status} {HTTP_STATUS_CODES[status]}", [
                ("Content-Type", "application/json"), ("Content-Length", str(len(payload))),
                (REQUEST_ID_HEADER, request_id), *headers.items()])
            answered("POST", rule, path, status, time.perf_counter() - started, person.organization.slug,
                     {"conversation_id": conversation.id})
            return [payload]
        finally:
            logs.request_id.reset(token)

    app.wsgi_app = serve  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app


def _json(answer: dict[str, Any]) -> bytes:
    """The answer's JSON, by orjson as the step route writes its own (a fraction of json's CPU); what orjson will not
    write (text that is not Unicode, an integer past 64 bits, from an endpoint's JSON body) as the view writes it."""
    try:
        return orjson.dumps(answer)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(answer).encode()


def _plain_call(message: Message) -> bool:
    params = message.params
    return (message.method == "tools/call" and message.id is not None and isinstance(params.get("name"), str)
            and isinstance(params.get("arguments", {}), (dict, type(None))))


def _failure(failure: Exception, id_: Any, path: str) -> tuple[int, bytes, dict[str, str]]:
    """A call that could not be answered once under way, as the view answers it: the organization's share (429) and
    the database (503) with their retry hint, what is not text (422) as invalid params, a bug as an internal error."""
    if isinstance(failure, UNAVAILABLE):
        failure = unavailable_error()
    if isinstance(failure, ServiceError):
        if failure.status in (429, 503) and failure.retry_after is not None:
            response = unavailable(failure, id_)
            return response.status_code, response.get_data(), {"Retry-After": str(failure.retry_after)}
        message = protocol.error_message(id_, protocol.INVALID_PARAMS, failure.message, failure.to_dict())
        return 200, json.dumps(message).encode(), {}
    if isinstance(failure, protocol.ProtocolError):
        failure.id = id_
        return failure.status, json.dumps(failure.to_message()).encode(), {}
    logs.log_failure(f"Exception on {path} [POST]", failure)
    return 500, json.dumps(protocol.error_message(id_, INTERNAL_ERROR, "Internal error.")).encode(), {}


def _plain_length(environ: dict[str, Any], bound: int) -> int | None:
    """The declared length of a request this path may answer (see the module's docstring); None otherwise."""
    if "HTTP_TRANSFER_ENCODING" in environ or "HTTP_ORIGIN" in environ or "HTTP_MCP_SESSION_ID" not in environ:
        return None
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    if not authorization.lower().startswith("bearer ") or looks_like_api_key(authorization[7:].strip()):
        return None
    if environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower() != "application/json":
        return None
    accept = environ.get("HTTP_ACCEPT")
    if accept is not None and "application/json" not in accept and "*/*" not in accept:
        return None
    declared = environ.get("CONTENT_LENGTH", "")
    if not (declared.isascii() and declared.isdigit()):
        return None
    length = int(declared)
    return length if length <= bound else None
