"""Reading a JSON request body, with the same error shape as everything else; answering plain JSON quickly."""
from __future__ import annotations

import json
from typing import Any

import orjson
from flask import Response, request

from service.catalogue import violation
from service.errors import ServiceError, request_too_large


def json_body() -> Any:
    """The request's JSON body, or 400 naming the problem (413 past the service's bound)."""
    bound = request.max_content_length
    if request.content_length is None and bound is not None and len(request.get_data(cache=True)) >= bound:
        # A chunked body has no length to refuse up front; werkzeug stops reading it at the bound, and one that
        # reached the bound is taken to go on past it.
        raise request_too_large(bound)
    if not request.is_json:
        raise malformed_body()
    return json_value(request.get_data(cache=True))


def json_value(body: bytes) -> Any:
    """The JSON value of a request body, or 400 `malformed-body`: not JSON, not text, nested past what the parser can
    hold, or `null` (no value at all). Every JSON route reads its body through this, the step route's fast path too,
    so both paths of a step answer any body alike."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise malformed_body() from None
    if data is None:
        raise malformed_body()
    return data


def malformed_body() -> ServiceError:
    """400: the body is not JSON."""
    malformed = violation("", "malformed-body")
    return ServiceError(400, malformed.rule, malformed.message, [malformed])


def json_response(data: Any) -> Response:
    """A 200 answer of `data`, already plain JSON-ready (str keys, no big integers), written by orjson.

    For hot routes (a step): a twentieth of jsonify's encoding CPU, and no sorting of keys (bench/). The JSON is the
    same value; only member order and the escaping of non-ASCII text differ.
    """
    return Response(orjson.dumps(data), mimetype="application/json")
