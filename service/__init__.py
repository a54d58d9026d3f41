"""Toolgate: the platform between a language model and a business's own HTTP APIs.

`create_app(config)` is the one place an app is assembled.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .config import Config
from .limits import CALL_DEADLINE_SECONDS

if TYPE_CHECKING:  # Flask is imported only by whoever builds an app, not by the domain packages
    from flask import Flask


def create_app(config: Config | None = None) -> "Flask":
    """Build the WSGI app on the configured database; refuses a database whose schema is behind."""
    from flask import Flask, request

    from .api import register_api
    from .database import connect, open_database, release
    from .errors import request_too_large
    from .migrations import check_current

    config = config or Config.from_env()
    if config.call_deadline_seconds < CALL_DEADLINE_SECONDS:
        logging.getLogger(__name__).warning(
            "tool calls are cut off after %g s, not the spec's %g s: a setting for tests only",
            config.call_deadline_seconds, CALL_DEADLINE_SECONDS)
    app = Flask(__name__)
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
    def _refuse_a_large_body():
        # From the declared length alone, before a byte of the body is read (MCP answers its own, in JSON-RPC).
        if (request.content_length or 0) > config.max_request_bytes and request.endpoint != "mcp.post":
            raise request_too_large(config.max_request_bytes)

    # A request takes its pooled connection before its work starts and gives it back here, or earlier, before
    # any wait on the network (database.released). Taking it first makes the pool an admission gate: under a
    # burst, requests wait for a connection before spending CPU, so the few that hold one are scheduled promptly
    # and hand it back (measured: bench/load.py on PostgreSQL). Liveness, metrics, static files and a path that
    # matches no route take none.
    app.before_request(lambda: None if request.endpoint in WITHOUT_DATABASE or request.endpoint is None else connect())
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


def app_config(app: "Flask") -> Config:
    """The Config an app was built with."""
    return app.extensions["toolgate_config"]
