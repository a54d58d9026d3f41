"""The app-wide request hooks: a request id and its log line and metric sample; the body bound; the place at the
work gate and the database connection each request takes and gives back.

Per-request observability: a request id (taken from X-Request-Id or made), echoed back, on every log line of the
request, and one JSON log line and one metric sample per request answered."""
from __future__ import annotations

import time
from typing import Any

from flask import Flask, g, request

from service import gate, tracing
from service.database import connect, release
from service.errors import ServiceError, request_too_large
from service.http.context import NO_CONNECTION_UP_FRONT, WITHOUT_WORK_GATE, WORK_GATE_KEY
from service.records import logs, metrics

#: Where the gate puts its refusal of a request, for `_admit` to raise once Flask has the request.
REFUSED_KEY = "toolgate.refused"
REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_ENVIRON = "HTTP_X_REQUEST_ID"
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
        rule = current.url_rule
        answered(current.method, rule.rule if rule is not None else None, current.path, response.status_code,
                 time.perf_counter() - context.request_started, _organization(context), current.view_args)
        return response

    @app.teardown_request
    def _end(_exc):
        token = g.pop("request_id_token", None)
        if token is not None:
            logs.request_id.reset(token)


def answered(method: str, route: str | None, path: str, status: int, seconds: float, organization: str | None,
             view_args: dict[str, Any] | None) -> None:
    """A request's metric sample and its log line: `route` is the rule it matched (None: none), `organization` whoever
    it authenticated as, `view_args` the values its path gave the rule."""
    label = route if route is not None else UNMATCHED
    metrics.http_request(method, label, status, seconds)
    tracing.answered(method, route)
    fields = {"method": method, "route": label, "status": status, "duration_ms": round(seconds * 1000, 1)}
    if route is not None:  # a path we routed holds ids, never a secret; an unmatched one could
        fields["path"] = path[:MAX_LOGGED_PATH_CHARS]
    if organization is not None:
        fields["org"] = organization
    if view_args:
        for name, field in (("conversation_id", "conversation"), ("turn_id", "turn")):
            if name in view_args:
                fields[field] = view_args[name]
    logs.log_request(fields)


def _ungated_paths(app: Flask) -> tuple[frozenset[str], tuple[str, ...]]:
    """The paths of the endpoints that take no place at the work gate: exact ones, and the fixed start of those with
    a variable part (a static file's)."""
    exact, prefixes = set(), set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint in WITHOUT_WORK_GATE:
            if rule.arguments:
                prefixes.add(rule.rule.split("<", 1)[0])
            else:
                exact.add(rule.rule)
    return frozenset(exact), tuple(sorted(prefixes))


def _organization(context) -> str | None:
    """The slug of whoever the request authenticated as, if it got that far (`context` is the request's `g`)."""
    for name in ("principal", "session"):
        holder = context.get(name)
        if holder is not None:
            return holder.organization.slug
    return None


def install_admission(app: Flask, max_request_bytes: int, work_gate: gate.WorkGate) -> None:
    """Take each request's place at the work gate before Flask builds the request (the probes, metrics and static
    files excepted); refuse a body past `max_request_bytes` from its declared length, before a byte of it is read; then
    take the request's pooled database connection. Place and connection are given back at teardown, and for the time
    of any wait on the network (`database.released`)."""
    app.extensions[WORK_GATE_KEY] = work_gate
    ungated: list[tuple[frozenset[str], tuple[str, ...]]] = []  # built at the first request, once every route is in
    flask_app = app.wsgi_app

    def gated(environ, start_response):
        # Before Flask: a request's context, routing and hooks are most of what it does before its view, and a burst's
        # arrivals all come in one turn of the event loop, so that work is done only with a place, and a probe
        # arriving meanwhile waits behind at most the gate's few places rather than a thousand requests.
        if not ungated:
            ungated.append(_ungated_paths(app))
        exact, prefixes = ungated[0]
        path = environ.get("PATH_INFO", "")
        if path not in exact and not path.startswith(prefixes):
            try:
                gate.enter(work_gate)
            except ServiceError as refusal:
                environ[REFUSED_KEY] = refusal  # answered by `_admit`, in the shape of the edge it was for
        return flask_app(environ, start_response)

    app.wsgi_app = gated  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app

    @app.before_request
    def _admit():
        refused = request.environ.get(REFUSED_KEY)
        if refused is not None:
            raise refused
        # A body refused from its declared length alone, before a byte of it is read (MCP answers its own, in
        # JSON-RPC); werkzeug parsed none of the headers yet, so the length is read from the environ itself.
        endpoint = request.endpoint
        try:
            declared = int(request.environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0  # not a length: werkzeug reads such a body as having none
        if declared > max_request_bytes and endpoint != "mcp.post":
            raise request_too_large(max_request_bytes)
        # The connection is taken before the view, so a route's first query never waits in the middle of its work;
        # liveness, metrics, static files, a path that matches no route and a step (NO_CONNECTION_UP_FRONT, which
        # usually reads nothing before its calls) take none here.
        if endpoint is not None and endpoint not in NO_CONNECTION_UP_FRONT:
            connect()

    @app.teardown_request
    def _give_back(_exc):
        release()
        gate.leave()
