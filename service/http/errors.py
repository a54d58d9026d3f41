"""Every error leaves the app in the one shape, from one set of handlers: JSON, or the dashboard's HTML page on the
dashboard's own paths; a query string webargs refused names each field and its rule."""
from __future__ import annotations

from typing import Any

import orjson
from flask import Flask, Response, request
from marshmallow import fields
from peewee import IntegrityError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge

from service.catalogue import RULES, Violation
from service.database import UNAVAILABLE, unavailable_error
from service.errors import ServiceError, concurrent_change, method_not_allowed, no_route, request_too_large

#: The rule of an argument marshmallow itself refused: missing, or any other (not a number, not one of those listed).
_MARSHMALLOW_RULES = {fields.Field.default_error_messages["required"]: "field-required"}
FIELD_INVALID = "field-invalid"
#: marshmallow's type refusals all read "Not a valid integer." / "Not a valid boolean." and so on.
FIELD_TYPE = "field-type"


def error_response(error: ServiceError) -> Response:
    """The one JSON error shape, with `Retry-After` where the refusal says when to try again."""
    response = Response(error_body(error), status=error.status, mimetype="application/json")
    response.headers.extend(retry_headers(error))
    return response


def error_body(error: ServiceError) -> bytes:
    """The one JSON error shape as bytes: what every path writes, Flask's views and the step route's alike."""
    return orjson.dumps(error.to_dict())


def retry_headers(error: ServiceError) -> list[tuple[str, str]]:
    """`Retry-After`, where the refusal says when to try again."""
    return [] if error.retry_after is None else [("Retry-After", str(error.retry_after))]


def from_http_exception(error: HTTPException) -> ServiceError:
    """werkzeug's error (a 404, a 405, the 500 of an exception no handler took) as the one error shape; a path no
    route matches and a method its routes do not take in the service's own sentences."""
    if isinstance(error, NotFound):
        return no_route()
    if isinstance(error, MethodNotAllowed) and error.valid_methods:
        return method_not_allowed(request.method, list(error.valid_methods))
    code = (error.name or "error").lower().replace(" ", "-")
    return ServiceError(error.code or 500, code, error.description or error.name)


#: The exceptions answered in the one error shape as they are raised: ours, a write a concurrent one won, and the
#: database unable to serve.
ANSWERED = (ServiceError, IntegrityError, *UNAVAILABLE)


def error_for(app: Flask, failure: Exception) -> ServiceError:
    """The one error shape for an exception of ANSWERED: ours as it is; a write a concurrent one won, a clean conflict
    (409), never a 500; the database unable to serve (down, connection lost, pool exhausted), logged, and 503, try
    again, never a 500."""
    if isinstance(failure, IntegrityError):
        return concurrent_change()
    if isinstance(failure, UNAVAILABLE):
        app.logger.warning("the database could not serve a request: %s: %s", type(failure).__name__, failure)
        return unavailable_error()
    assert isinstance(failure, ServiceError)  # the rest of ANSWERED
    return failure


#: Where another part of the service (the dashboard) puts its renderer of errors on its own paths: it answers with a
#: response, or None to leave the error to the API's JSON.
ERROR_PAGE = "toolgate_error_page"


def install_error_handlers(app: Flask) -> None:
    """Every error, ours or Flask's, leaves in the one shape: JSON, or the dashboard's page on the dashboard's paths."""

    def answer(error: ServiceError):
        page = app.extensions.get(ERROR_PAGE)
        response = page(error) if page is not None else None
        return response if response is not None else error_response(error)

    for kind in ANSWERED:
        app.register_error_handler(kind, lambda error: answer(error_for(app, error)))

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_error):
        return answer(request_too_large(app.config["MAX_CONTENT_LENGTH"]))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        data = getattr(error, "data", None)  # webargs puts its refusal of a query string here
        if error.code == 422 and isinstance(data, dict) and isinstance(data.get("messages"), dict):
            return answer(arguments_refused(data["messages"]))
        response = answer(from_http_exception(error))
        if isinstance(error, MethodNotAllowed) and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response


def arguments_refused(messages: dict[str, Any]) -> ServiceError:
    """webargs' refusal of a request's arguments (messages by location, then by field) as the one error shape, each
    field with its rule: ours where a field above refused it, marshmallow's own otherwise."""
    found: list[Violation] = []
    for by_field in messages.values():
        _flatten("", by_field, found)
    return ServiceError(422, "invalid", "The request's arguments break one or more rules.", found)


def _flatten(field: str, messages: Any, found: list[Violation]) -> None:
    if isinstance(messages, list):
        for message in messages:
            _flatten(field, message, found)
    elif isinstance(messages, dict) and "rule" in messages:  # one of ours (`_broken`)
        found.append(Violation(field, messages["rule"], messages["message"]))
    elif isinstance(messages, dict):  # marshmallow nests a field's messages by name, a list's by index
        for key, inner in messages.items():
            _flatten(f"{field}[{key}]" if isinstance(key, int) else f"{field}.{key}" if field else str(key), inner,
                     found)
    else:
        rule = _MARSHMALLOW_RULES.get(messages) or (
            FIELD_TYPE if str(messages).startswith("Not a valid") else FIELD_INVALID)
        found.append(Violation(field, rule, RULES[rule]))
