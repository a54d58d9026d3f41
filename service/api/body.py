"""Reading a JSON request body, with the same error shape as everything else."""
from __future__ import annotations

from typing import Any

from flask import request

from ..errors import ServiceError, Violation


def json_body() -> Any:
    """The request's JSON body, or 400 naming the problem."""
    data = request.get_json(silent=True)
    if data is None:
        raise ServiceError(400, "malformed-body", "The request body must be JSON.",
                           [Violation("", "malformed-body", "The request body must be JSON.")])
    return data
