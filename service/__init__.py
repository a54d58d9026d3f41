"""Toolgate: the platform between a language model and a business's own HTTP APIs.

`create_app(config)` is the one place an app is assembled.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from service.config import Config
from service.limits import CALL_DEADLINE_SECONDS

if TYPE_CHECKING:  # Flask is imported only by whoever builds an app, not by the domain packages
    from flask import Flask


def create_app(config: Config | None = None) -> "Flask":
    """Build the WSGI app on the configured database; refuses a database whose schema is behind."""

    from service import http, tracing
    from service.api import register_api
    from service.api.converters import install_converters
    from service.database import open_database
    from service.gate import WorkGate
    from service.http.flask_app import ServiceFlask
    from service.migrations import check_current

    config = config or Config.from_env()
    if config.call_deadline_seconds < CALL_DEADLINE_SECONDS:
        logging.getLogger(__name__).warning(
            "tool calls are cut off after %g s, not the spec's %g s: a setting for tests only",
            config.call_deadline_seconds, CALL_DEADLINE_SECONDS)
    app = ServiceFlask(__name__)
    install_converters(app)  # before any route: every path segment is bounded the same way
    app.config.update(config.flask)
    # werkzeug refuses a body past this while it is read (a chunked one has no length to check up front).
    app.config["MAX_CONTENT_LENGTH"] = config.max_request_bytes
    app.extensions[http.CONFIG_KEY] = config
    http.install_observability(app)  # first, so every request has an id and a log line, even one that fails early
    database = open_database(config.database_url, pool_size=config.database_pool_size,
                             pool_wait_seconds=config.database_pool_wait_seconds,
                             timeout_seconds=config.database_timeout_seconds)
    with database.connection_context():
        check_current(database)
    from service.records.upkeep import keep_partitions_ahead

    keep_partitions_ahead(database)  # PostgreSQL: the call log's day partitions, made now and every hour
    http.install_admission(app, config.max_request_bytes, WorkGate(config.max_requests_at_work,
                                                                   config.work_wait_seconds))

    from service.conversations import CallSlots, Dispatcher
    from service.dispatch import AddressGuard
    from service.server import ARRIVAL_KEY, tune_hub
    from serving import Arrival

    tune_hub()  # every way of serving (CLI, gunicorn, tests) builds its app here
    app.extensions[ARRIVAL_KEY] = Arrival(head_seconds=config.head_timeout_seconds,
                                          body_stall_seconds=config.body_timeout_seconds,
                                          idle_seconds=config.idle_timeout_seconds,
                                          max_connections=config.max_connections)

    app.extensions[http.DISPATCHER_KEY] = Dispatcher(
        config=config, guard=AddressGuard(config.allowed_networks),
        slots=CallSlots(config.max_calls_in_flight_per_org))
    register_api(app)
    http.install_error_handlers(app)

    from service import dashboard, mcp

    mcp.register(app)
    dashboard.register(app)
    http.install_arrival(app)  # every path (the step route's too) reads its body this way
    # Outermost: a request's server span covers all of it. Each process (a gunicorn worker, after its fork) builds
    # its own exporter here, from OpenTelemetry's variables; off, the wrapper only tests that it is.
    tracing.configure()
    app.wsgi_app = tracing.traced_wsgi(app.wsgi_app)  # type: ignore[method-assign]  # Flask's documented way
    return app

