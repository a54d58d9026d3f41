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
    from flask import Flask

    from .api import register_api
    from .database import db, open_database
    from .migrations import check_current

    config = config or Config.from_env()
    app = Flask(__name__)
    app.config.update(config.flask)
    app.extensions["toolgate_config"] = config
    from .api.ops.hooks import install as install_observability

    install_observability(app)  # first, so every request has an id and a log line, even one that fails to connect
    database = open_database(config.database_url)
    with database.connection_context():
        check_current(database)

    @app.before_request
    def _connect():
        db.connect(reuse_if_open=True)

    @app.teardown_request
    def _close(_exc):
        if not db.is_closed():
            db.close()

    from .conversations import Dispatcher
    from .dispatch import AddressGuard
    from .server import tune_hub

    tune_hub()  # every way of serving (CLI, gunicorn, tests) builds its app here

    app.extensions["toolgate_dispatcher"] = Dispatcher(config=config, guard=AddressGuard(config.allowed_networks))
    register_api(app)

    from . import dashboard, mcp

    mcp.register(app)
    dashboard.register(app)
    return app


def app_config(app: "Flask") -> Config:
    """The Config an app was built with."""
    return app.extensions["toolgate_config"]
