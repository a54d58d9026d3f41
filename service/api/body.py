"""Reading a JSON request body, with the same error shape as everything else."""
from __future__ import annotations

from typing import Any

from flask import request

from ..errors import ServiceError, request_too_large
from ..registry import violation


def json_body() -> Any:
    """The request's JSON body, or 400 naming the problem (413 past the service's bound)."""
    bound = request.max_content_length
    if request.content_length is None and bound is not None and len(request.get_data(cache=True)) >= bound:
        # A chunked body has no length to refuse up front; werkzeug stops reading it at the bound, and one that
        # reached the bound is taken to go on past it.
        raise request_too_large(bound)
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # JSON nested past what the parser can hold: a bad body, not a crash
        data = None
    if data is None:
        malformed = violation("", "malformed-body")
        raise ServiceError(400, malformed.rule, malformed.message, [malformed])
    return data
