"""Per-request observability: a request id (taken from X-Request-Id or made), echoed back, on every log line of the
request, and one JSON log line and one metric sample per request answered."""
from __future__ import annotations

import time

from flask import Flask, g, request

from ...ops import logs, metrics

REQUEST_ID_HEADER = "X-Request-Id"
#: The route label of a request that matched no route, so a scanner cannot grow the metrics' label set.
UNMATCHED = "(unmatched)"
MAX_LOGGED_PATH_CHARS = 512


def install(app: Flask) -> None:
    """Register the hooks on `app`. Install before anything else that may fail a request, so it still has an id."""
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
