"""The step route answered without Flask's per-request machinery: the platform's hot path (issue 15).

A model waits on every step, and on a one-call step Flask's request and app contexts, routing, hooks and response
object cost about as much CPU as the step's own work (bench/profiles/). So a POST to `…/turns/<turn_id>/steps` whose
head is plain (ids of the id alphabet, a declared JSON body within the bound, no transfer coding) is answered here,
in the order and with the functions of the Flask view it stands in for: a place at the work gate, the request id,
the session token, the conversation and turn, the body, the calls; then the same log line and metric sample, and
every refusal in the one error shape. Any other such request (another method, a chunked or non-JSON body, a segment
only Flask's converters can judge) goes on to Flask, whose view stays: documented, and answering those.
"""
from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterable

import orjson
from flask import Flask
from werkzeug.exceptions import InternalServerError
from werkzeug.http import HTTP_STATUS_CODES

from service import gate
from service.api.body import json_value
from service.api.conversations.routes import step_answer
from service.conversations import Session, authenticate_session
from service.database import release
from service.http.context import DISPATCHER_KEY, WORK_GATE_KEY, app_config
from service.http.credentials import bearer_in
from service.http.errors import ANSWERED, error_body, error_for, from_http_exception, retry_headers
from service.http.hooks import REQUEST_ID_ENVIRON, REQUEST_ID_HEADER, answered
from service.records import logs

#: The Flask view this path stands in for; its rule is the route label of the log line and the metrics.
STEP_ENDPOINT = "conversations.StepViews"
#: A step's path with ids of the alphabet conversation and turn ids are made of (URL-safe base64); any other
#: segment is left to the URL map's converters, which decide what a path may hold.
STEP_PATH = re.compile(r"/v1/conversations/([A-Za-z0-9_-]{1,64})/turns/([A-Za-z0-9_-]{1,64})/steps")
JSON_TYPE = "application/json"
#: Where the app keeps the WSGI app behind this path (admission, then Flask), so a test can send a request to both.
FLASK_PATH_KEY = "toolgate_flask_path"

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def install_step_route(app: Flask) -> None:
    """Answer plain step requests ahead of `app`'s WSGI app (its admission and Flask), after every route is added."""
    rule = next(r.rule for r in app.url_map.iter_rules() if r.endpoint == STEP_ENDPOINT)
    work_gate = app.extensions[WORK_GATE_KEY]
    dispatcher = app.extensions[DISPATCHER_KEY]
    flask_app: WSGIApp = app.wsgi_app

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        ids = STEP_PATH.fullmatch(path) if environ.get("REQUEST_METHOD") == "POST" else None
        config = app_config(app) if ids is not None else None
        length = _plain_length(environ, config.max_request_bytes) if config is not None else None
        if ids is None or config is None or length is None:  # each None when the one before it is
            return flask_app(environ, start_response)
        started = time.perf_counter()
        request_id = logs.accept_request_id(environ.get(REQUEST_ID_ENVIRON))
        request_id_token = logs.request_id.set(request_id)
        session: Session | None = None
        try:
            try:
                gate.enter(work_gate)
                session = authenticate_session(bearer_in(environ.get("HTTP_AUTHORIZATION", "")), config)
                answer = step_answer(session, ids[1], ids[2],
                                     lambda: json_value(environ["wsgi.input"].read(length)), dispatcher)
                status, body, headers = 200, orjson.dumps(answer), []
            except Exception as failure:  # each answered as the app's handlers answer it
                if isinstance(failure, ANSWERED):
                    error = error_for(app, failure)
                else:  # what no handler takes: logged as Flask logs it, and its 500 in the one shape
                    logs.log_failure(f"Exception on {path} [POST]", failure)
                    error = from_http_exception(InternalServerError())
                status, body, headers = error.status, error_body(error), retry_headers(error)
            finally:
                release()
                gate.leave()
            start_response(f"{status} {HTTP_STATUS_CODES[status]}", [
                ("Content-Type", JSON_TYPE), ("Content-Length", str(len(body))), (REQUEST_ID_HEADER, request_id),
                *headers])
            answered("POST", rule, path, status, time.perf_counter() - started,
                     session.organization.slug if session is not None else None,
                     {"conversation_id": ids[1], "turn_id": ids[2]})
            return [body]
        finally:
            logs.request_id.reset(request_id_token)

    app.extensions[FLASK_PATH_KEY] = flask_app
    app.wsgi_app = serve  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app


def _plain_length(environ: dict[str, Any], bound: int) -> int | None:
    """The declared length of a body this path answers itself (JSON, declared, within `bound`); None otherwise."""
    if "HTTP_TRANSFER_ENCODING" in environ:
        return None
    if environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower() != JSON_TYPE:
        return None
    declared = environ.get("CONTENT_LENGTH", "")
    # ASCII digits only: str.isdigit takes "²" too, which int() refuses (the server refuses such a head first anyway)
    if not (declared.isascii() and declared.isdigit()):
        return None
    length = int(declared)
    return length if length <= bound else None

