"""The app-wide request hooks: a request id and its log line and metric sample; the body bound; the database
connection each request takes and gives back.

Per-request observability: a request id (taken from X-Request-Id or made), echoed back, on every log line of the
request, and one JSON log line and one metric sample per request answered."""
from __future__ import annotations

import time

from flask import Flask, g, request

from ..database import connect, release
from ..errors import request_too_large
from .context import WITHOUT_DATABASE

from ..records import logs, metrics

REQUEST_ID_HEADER = "X-Request-Id"
#: The route label of a request that matched no route, so a scanner cannot grow the metrics' label set.
UNMATCHED = "(unmatched)"
MAX_LOGGED_PATH_CHARS = 512


def install_observability(app: Flask) -> None:
    """Register the id, log and metric hooks on `app`. Install before anything else that may fail a request, so it
    still has an id."""
    logs.configure_logging()

    @app.before_request
    def _begin():
        g.request_started = time.perf_counter()
        g.request_id = logs.accept_request_id(request.headers.get(REQUEST_ID_HEADER))
        g.request_id_token = logs.request_id.set(g.request_id)

    @app.after_request
    def _answer(response):
        if "request_id" not in g:  # failed before our first hook ran
            return response
        response.headers[REQUEST_ID_HEADER] = g.request_id
        seconds = time.perf_counter() - g.request_started
        route = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        metrics.http_request(request.method, route, response.status_code, seconds)
        view_args = request.view_args or {}
        fields = {"method": request.method, "route": route, "status": response.status_code,
                  "duration_ms": round(seconds * 1000, 1)}
        if request.url_rule is not None:  # a path we routed holds ids, never a secret; an unmatched one could
            fields["path"] = request.path[:MAX_LOGGED_PATH_CHARS]
        organization = _organization()
        if organization is not None:
            fields["org"] = organization
        for name, field in (("conversation_id", "conversation"), ("turn_id", "turn")):
            if name in view_args:
                fields[field] = view_args[name]
        logs.log_request(fields)
        return response

    @app.teardown_request
    def _end(_exc):
        token = g.pop("request_id_token", None)
        if token is not None:
            logs.request_id.reset(token)


def _organization() -> str | None:
    """The slug of whoever the request authenticated as, if it got that far."""
    for name in ("principal", "session"):
        holder = g.get(name)
        if holder is not None:
            return holder.organization.slug
    return None


def install_admission(app: Flask, max_request_bytes: int) -> None:
    """Refuse a body past `max_request_bytes` from its declared length, before a byte of it is read; then take the
    request's pooled database connection, given back at teardown (or earlier, before any wait on the network:
    `database.released`)."""

    @app.before_request
    def _refuse_a_large_body():
        # MCP answers its own, in JSON-RPC.
        if (request.content_length or 0) > max_request_bytes and request.endpoint != "mcp.post":
            raise request_too_large(max_request_bytes)

    # Taking the connection first makes the pool an admission gate: under a burst, requests wait for a connection
    # before spending CPU, so the few that hold one are scheduled promptly and hand it back (measured:
    # bench/load.py on PostgreSQL). Liveness, metrics, static files and a path that matches no route take none.
    app.before_request(lambda: None if request.endpoint in WITHOUT_DATABASE or request.endpoint is None else connect())
    app.teardown_request(lambda _exc: release())
