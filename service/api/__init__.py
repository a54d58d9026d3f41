"""The REST API: flask-smorest blueprints per resource, OpenAPI at /openapi.json. Errors leave in the one shape
through the app-wide handlers of `service.http`."""
from __future__ import annotations

from flask import Flask, send_from_directory
from flask_smorest import Api

from service.http import WITHOUT_DATABASE

API_SETTINGS = {
    "API_TITLE": "Toolgate",
    "API_VERSION": "v1",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "OPENAPI_SWAGGER_UI_PATH": "/api",
    # Served by the service itself: no CDN (swagger-ui-bundle ships the assets).
    "OPENAPI_SWAGGER_UI_URL": "/api/assets/",
}


def register_api(app: Flask) -> Api:
    """Mount every resource's blueprint on `app`, with its OpenAPI document."""
    from swagger_ui_bundle import swagger_ui_path

    from service.api.conversations.routes import blp as conversations
    from service.api.conversations.routes import prepare_model_adapter
    from service.api.conversations.step_route import install_step_route
    from service.api.converters import document_converters
    from service.api.document import make_api
    from service.api.identity.routes import blp as identity
    from service.api.keys.routes import blp as keys
    from service.api.ops.routes import blp as ops
    from service.api.projects.routes import blp as projects
    from service.api.tools.routes import blp as tools

    app.config.update({k: v for k, v in API_SETTINGS.items() if k not in app.config})
    api = make_api(app, WITHOUT_DATABASE)
    document_converters(api)
    for blueprint in (tools, projects, keys, conversations, ops, identity):
        api.register_blueprint(blueprint)
    prepare_model_adapter(app)
    install_step_route(app)  # last: its rule is in the URL map

    @app.get("/api/assets/<path:filename>")
    def swagger_assets(filename):
        return send_from_directory(str(swagger_ui_path), filename, max_age=86400)

    return api
