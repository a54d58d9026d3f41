"""The HTTP side of MCP's Streamable HTTP transport that both servers share (the agents' `/mcp` and a project's
`/mcp/projects/<project>`): JSON answers, the Origin rule, the bounded body, and the service's own refusals (the
database away, the process busy, a body too big) as JSON-RPC errors."""
from __future__ import annotations

import json
from importlib import metadata
from typing import Any

from flask import Response, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from service.database import unavailable_error
from service.errors import ServiceError
from service.http import app_config
from service.mcp import protocol
from service.mcp.protocol import INVALID_REQUEST, SERVER_UNAVAILABLE, ProtocolError

_READ_CHUNK_BYTES = 65_536


def server_version() -> str:
    """The version the servers report in `serverInfo`: the installed package's."""
    try:
        return metadata.version("toolgate")
    except metadata.PackageNotFoundError:
        return "0"


def json_response(message: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(message), status=status, headers=headers or {}, mimetype="application/json")


def check_origin() -> None:
    """403 for a request whose Origin is not the service's own public origin (MCP's DNS-rebinding rule)."""
    allowed = protocol.origin_of(app_config(current_app).public_url)
    if not protocol.origin_allowed(request.headers.get("Origin"), allowed):
        raise ProtocolError(403, INVALID_REQUEST, "Forbidden: this Origin may not reach the MCP server.")


def read_body() -> bytes:
    """The request body, refused unless it is JSON the client accepts back and within the size bound."""
    if request.mimetype != "application/json":
        raise ProtocolError(415, INVALID_REQUEST, "The body must be a JSON-RPC message of type application/json.")
    if "Accept" in request.headers and not request.accept_mimetypes.accept_json:
        raise ProtocolError(406, INVALID_REQUEST, "The client must accept application/json.")
    bound = app_config(current_app).max_request_bytes
    too_big = ProtocolError(413, INVALID_REQUEST, f"The body is larger than {bound} bytes.")
    if (request.content_length or 0) > bound:
        raise too_big
    # Read in chunks and stop past the bound, so a chunked body with no length cannot grow without limit.
    chunks, size = [], 0
    try:
        while chunk := request.stream.read(_READ_CHUNK_BYTES):
            chunks.append(chunk)
            size += len(chunk)
            if size > bound:
                raise too_big
    except RequestEntityTooLarge:  # werkzeug's own stream stops at the same bound
        raise too_big from None
    return b"".join(chunks)


def database_unavailable(failure: Exception) -> Response:
    """The database could not serve (even before the request reached its view): a JSON-RPC server error."""
    current_app.logger.warning("the database could not serve an MCP request: %s: %s", type(failure).__name__, failure)
    return unavailable(unavailable_error())


def unavailable(refusal: ServiceError, id_: str | int | None = None) -> Response:
    """A 429 or 503 of the service's (an organization past its share, the database away, the process busy) as a
    JSON-RPC server error, with Retry-After in the head and `retryAfter` in the error's data."""
    data = {**refusal.to_dict(), "retryAfter": refusal.retry_after}
    message = protocol.error_message(id_, SERVER_UNAVAILABLE, refusal.message, data)
    return json_response(message, refusal.status, {"Retry-After": str(refusal.retry_after)})


def refused_before_the_view(refusal: ServiceError) -> Response:
    """A refusal raised by the app's admission (the work gate's `busy`, a body too big) before a view could answer
    in JSON-RPC, or while its body arrived."""
    if refusal.status in (429, 503) and refusal.retry_after is not None:
        return unavailable(refusal)
    return json_response(protocol.error_message(None, INVALID_REQUEST, refusal.message, refusal.to_dict()),
                         refusal.status)
