"""Toolgate: the platform between a language model and a business's own HTTP APIs.

`create_app(config)` is the one place an app is assembled.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .config import Config

if TYPE_CHECKING:  # Flask is imported only by whoever builds an app, not by the domain packages
    from flask import Flask


def create_app(config: Config | None = None) -> "Flask":
    """Build the WSGI app on the configured database; refuses a database whose schema is behind."""
    from flask import request

    from .api import register_api
    from .database import connect, open_database, release
    from .errors import request_too_large
    from .flask_app import ServiceFlask
    from .migrations import check_current

    config = config or Config.from_env()
    app = ServiceFlask(__name__)
    app.config.update(config.flask)
    # werkzeug refuses a body past this while it is read (a chunked one has no length to check up front).
    app.config["MAX_CONTENT_LENGTH"] = config.max_request_bytes
    app.extensions["toolgate_config"] = config
    from .api.ops.hooks import install as install_observability

    install_observability(app)  # first, so every request has an id and a log line, even one that fails to connect
    database = open_database(config.database_url, pool_size=config.database_pool_size,
                             pool_wait_seconds=config.database_pool_wait_seconds)
    with database.connection_context():
        check_current(database)

    @app.before_request
    def _admit():
        # A body refused from its declared length alone, before a byte of it is read (MCP answers its own, in
        # JSON-RPC); werkzeug parsed none of the headers yet, so the length is read from the environ itself.
        endpoint = request.endpoint
        try:
            declared = int(request.environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0  # not a length: werkzeug reads such a body as having none
        if declared > config.max_request_bytes and endpoint != "mcp.post":
            raise request_too_large(config.max_request_bytes)
        # A request takes its pooled connection before its work starts and gives it back here, or earlier, before
        # any wait on the network (database.released). Taking it first makes the pool an admission gate: under a
        # burst, requests wait for a connection before spending CPU, so the few that hold one are scheduled promptly
        # and hand it back (measured: bench/load.py on PostgreSQL). Liveness, metrics, static files, a path that
        # matches no route and a step (see NO_CONNECTION_UP_FRONT) take none here.
        if endpoint is not None and endpoint not in NO_CONNECTION_UP_FRONT:
            connect()

    app.teardown_request(lambda _exc: release())

    from .conversations import CallSlots, Dispatcher
    from .dispatch import AddressGuard
    from .server import tune_hub

    tune_hub()  # every way of serving (CLI, gunicorn, tests) builds its app here

    app.extensions["toolgate_dispatcher"] = Dispatcher(
        config=config, guard=AddressGuard(config.allowed_networks),
        slots=CallSlots(config.max_calls_in_flight_per_org))
    register_api(app)

    from . import dashboard, mcp

    mcp.register(app)
    dashboard.register(app)
    return app


#: Endpoints that take no connection up front: liveness, metrics and static files never touch the database, so they
#: answer while it is away or its pool is busy; readiness asks it itself, to report what it finds.
WITHOUT_DATABASE = frozenset({"ops.AliveViews", "ops.MetricsViews", "ops.ReadyViews", "static", "dashboard.static",
                              "swagger_assets", "api-docs.openapi_json", "api-docs.openapi_swagger_ui"})
#: ...and those that take it at their first query instead. A step whose session token, turn and signing key are
#: already known reads nothing before its calls, and gives any connection back before them anyway: it usually takes
#: one only to record its calls, which saves a checkout and a return on every step (bench/profiles/).
NO_CONNECTION_UP_FRONT = WITHOUT_DATABASE | {"conversations.StepViews"}


def app_config(app: "Flask") -> Config:
    """The Config an app was built with."""
    return app.extensions["toolgate_config"]
