"""The REST API: flask-smorest blueprints per resource, one JSON error shape, OpenAPI at /openapi.json."""
from __future__ import annotations

from flask import Flask, jsonify, send_from_directory
from flask_smorest import Api
from peewee import IntegrityError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from ..database import UNAVAILABLE, unavailable_error
from ..errors import ServiceError, concurrent_change, request_too_large
from .schemas import arguments_refused

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
    """Mount every resource's blueprint and the error handlers on `app`."""
    from swagger_ui_bundle import swagger_ui_path

    from .conversations.routes import blp as conversations
    from .converters import document_converters
    from .keys.routes import blp as keys
    from .ops.routes import blp as ops
    from .projects.routes import blp as projects
    from .tools.routes import blp as tools

    from .. import WITHOUT_DATABASE
    from .document import make_api

    app.config.update({k: v for k, v in API_SETTINGS.items() if k not in app.config})
    api = make_api(app, WITHOUT_DATABASE)
    document_converters(api)
    for blueprint in (tools, projects, keys, conversations, ops):
        api.register_blueprint(blueprint)

    @app.get("/api/assets/<path:filename>")
    def swagger_assets(filename):
        return send_from_directory(str(swagger_ui_path), filename, max_age=86400)

    register_error_handlers(app)
    return api


def error_response(error: ServiceError):
    """The one JSON error shape, with `Retry-After` where the refusal says when to try again."""
    response = jsonify(error.to_dict())
    response.status_code = error.status
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    return response


#: Where another part of the service (the dashboard) puts its renderer of errors on its own paths: it answers with a
#: response, or None to leave the error to the API's JSON.
ERROR_PAGE = "toolgate_error_page"


def register_error_handlers(app: Flask) -> None:
    """Every error, ours or Flask's, leaves in the one shape: JSON, or the dashboard's page on the dashboard's paths."""

    def answer(error: ServiceError):
        page = app.extensions.get(ERROR_PAGE)
        response = page(error) if page is not None else None
        return response if response is not None else error_response(error)

    @app.errorhandler(ServiceError)
    def service_error(error: ServiceError):
        return answer(error)

    @app.errorhandler(IntegrityError)
    def integrity_error(_error):
        # The database refused a write a concurrent one won: a clean conflict, never a 500.
        return answer(concurrent_change())

    for failure in UNAVAILABLE:
        # The database could not serve (down, connection lost, pool exhausted): 503, try again, never a 500.
        app.register_error_handler(failure, lambda error: _database_unavailable(app, error, answer))

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_error):
        return answer(request_too_large(app.config["MAX_CONTENT_LENGTH"]))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        data = getattr(error, "data", None)  # webargs puts its refusal of a query string here
        if error.code == 422 and isinstance(data, dict) and isinstance(data.get("messages"), dict):
            return answer(arguments_refused(data["messages"]))
        code = (error.name or "error").lower().replace(" ", "-")
        response = answer(ServiceError(error.code or 500, code, error.description or error.name))
        if error.code == 405 and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response


def _database_unavailable(app: Flask, error: Exception, answer):
    app.logger.warning("the database could not serve a request: %s: %s", type(error).__name__, error)
    return answer(unavailable_error())
