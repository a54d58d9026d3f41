"""Per-request observability: a request id (taken from X-Request-Id or made), echoed back, on every log line of the
request, and one JSON log line and one metric sample per request answered."""
from __future__ import annotations

import time

from flask import Flask, g, request

from ...ops import logs, metrics

REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_ENVIRON = "HTTP_X_REQUEST_ID"
#: The route label of a request that matched no route, so a scanner cannot grow the metrics' label set.
UNMATCHED = "(unmatched)"
MAX_LOGGED_PATH_CHARS = 512


def install(app: Flask) -> None:
    """Register the hooks on `app`. Install before anything else that may fail a request, so it still has an id."""
    logs.configure_logging()

    @app.before_request
    def _begin():
        g.request_started = time.perf_counter()
        g.request_id = logs.accept_request_id(request.environ.get(REQUEST_ID_ENVIRON))
        g.request_id_token = logs.request_id.set(g.request_id)

    @app.after_request
    def _answer(response):
        # Runs on every request: the proxies `request` and `g` are resolved once each (bench/profiles/).
        context = g._get_current_object()
        if "request_id" not in context:  # failed before our first hook ran
            return response
        current = request._get_current_object()
        response.headers[REQUEST_ID_HEADER] = context.request_id
        seconds = time.perf_counter() - context.request_started
        rule = current.url_rule
        route = rule.rule if rule is not None else UNMATCHED
        status = response.status_code
        metrics.http_request(current.method, route, status, seconds)
        fields = {"method": current.method, "route": route, "status": status, "duration_ms": round(seconds * 1000, 1)}
        if rule is not None:  # a path we routed holds ids, never a secret; an unmatched one could
            fields["path"] = current.path[:MAX_LOGGED_PATH_CHARS]
        organization = _organization(context)
        if organization is not None:
            fields["org"] = organization
        view_args = current.view_args
        if view_args:
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


def _organization(context) -> str | None:
    """The slug of whoever the request authenticated as, if it got that far (`context` is the request's `g`)."""
    for name in ("principal", "session"):
        holder = context.get(name)
        if holder is not None:
            return holder.organization.slug
    return None
