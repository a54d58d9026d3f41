"""The REST API: flask-smorest blueprints per resource, one JSON error shape, OpenAPI at /openapi.json."""
from __future__ import annotations

from flask import Flask, jsonify, send_from_directory
from flask_smorest import Api
from peewee import IntegrityError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from ..database import UNAVAILABLE, unavailable_error
from ..errors import ServiceError, Violation, concurrent_change, request_too_large
from ..registry.rules import violation

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
    from .keys.routes import blp as keys
    from .ops.routes import blp as ops
    from .projects.routes import blp as projects
    from .tools.routes import blp as tools

    from .. import WITHOUT_DATABASE
    from .document import make_api

    app.config.update({k: v for k, v in API_SETTINGS.items() if k not in app.config})
    api = make_api(app, WITHOUT_DATABASE)
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


def register_error_handlers(app: Flask) -> None:
    """Every error, ours or Flask's, leaves in the one JSON shape."""

    @app.errorhandler(ServiceError)
    def service_error(error: ServiceError):
        return error_response(error)

    @app.errorhandler(IntegrityError)
    def integrity_error(_error):
        # The database refused a write a concurrent one won: a clean conflict, never a 500.
        return error_response(concurrent_change())

    for failure in UNAVAILABLE:
        # The database could not serve (down, connection lost, pool exhausted): 503, try again, never a 500.
        app.register_error_handler(failure, lambda error: _database_unavailable(app, error))

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_error):
        return error_response(request_too_large(app.config["MAX_CONTENT_LENGTH"]))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        messages = (getattr(error, "data", None) or {}).get("messages")
        if error.code == 422 and isinstance(messages, dict):
            return error_response(query_refusal(messages))
        code = (error.name or "error").lower().replace(" ", "-")
        response = error_response(ServiceError(error.code or 500, code, error.description or error.name))
        if error.code == 405 and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response


def _database_unavailable(app: Flask, error: Exception):
    app.logger.warning("the database could not serve a request: %s: %s", type(error).__name__, error)
    return error_response(unavailable_error())


def query_refusal(messages: dict) -> ServiceError:
    """422 for a query string the route's schema refused (flask-smorest parses it): each parameter at fault."""
    found = []
    for parameters in messages.values():
        for name, problems in (parameters.items() if isinstance(parameters, dict) else []):
            for problem in (problems if isinstance(problems, list) else [str(problems)]):
                found.append(_query_violation(str(name), str(problem)))
    return ServiceError(422, "invalid", "The query string breaks one or more rules.", found)


def _query_violation(name: str, problem: str) -> Violation:
    if problem.startswith("Not a valid"):
        return violation(name, "field-type")
    if problem == "Missing data for required field.":
        return violation(name, "field-required")
    # A range or a choice: marshmallow's sentence names the values the parameter takes.
    return Violation(name, "query-value", problem)
