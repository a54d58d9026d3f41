"""The web dashboard at `/`: server-rendered pages over the registry and the conversation functions.

A person signs in with an organization API key and works with the role that key has (`service.roles`):
admin keys do everything, agent keys edit drafts but see no publish button, backend keys cannot sign in.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask


def register(app: "Flask") -> None:
    """Mount the dashboard at / on `app`. With no secret configured, its pages say why no one can sign in."""
    # Each module adds its views to the blueprint.
    from service.dashboard import (  # noqa: F401
        account,
        call_charts,
        call_log,
        history,
        identity,
        openapi,
        playground,
        projects,
        tools,
    )
    from service.dashboard.signin import configure
    from service.dashboard.web import blp, error_page
    from service.http import ERROR_PAGE, app_config

    configure(app, app_config(app).secret_key)
    # A pasted document rides in one form field; the request's own bound (TOOLGATE_MAX_REQUEST_BYTES) is the limit
    # that matters, not werkzeug's 500 kB default for a field.
    app.config["MAX_FORM_MEMORY_SIZE"] = app_config(app).max_request_bytes
    app.register_blueprint(blp)
    app.extensions[ERROR_PAGE] = error_page  # errors on the dashboard's paths are pages, not the API's JSON
