"""The one gate in front of every tool route: verify the assertion for the tool the route serves.

The tool is fixed by the route (or by the `<tool>` in its URL), never taken from the token: a
token minted for one tool and pointed at another route fails its audience check.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import current_app, g, jsonify, request

from mock_backend.calls import CALL_KEY
from mock_backend.verify import Rejected

#: Where create_app keeps the app's Verifier.
VERIFIER_KEY = "mock_backend.verifier"


def serves(tool: str | None = None) -> Callable:
    """Decorate a view serving `tool` (None: the view's `tool` URL argument) so it runs only
    for a verified assertion; its claims are then `verified_claims()`."""

    def decorate(view: Callable) -> Callable:
        @functools.wraps(view)
        def guarded(**kwargs: Any):
            name = tool or kwargs["tool"]
            entry = request.environ.get(CALL_KEY, {})
            entry["tool"] = name
            entry["authorization"] = request.headers.get("Authorization")
            verifier = current_app.extensions[VERIFIER_KEY]
            try:
                claims = verifier.verify(request.headers.get("Authorization"), name)
            except Rejected as rejected:
                entry["reason"] = rejected.reason
                return unauthorized(rejected.reason)
            if claims is not None:
                entry["sub"], entry["turn"] = claims["sub"], claims["turn"]
            g.claims = claims
            return view(**kwargs)

        return guarded

    return decorate


def call_id() -> int | None:
    """This request's number in the call record (`GET /_calls`), where its Authorization header is kept."""
    return request.environ.get(CALL_KEY, {}).get("id")


def verified_claims() -> dict[str, Any] | None:
    """The claims verified for this request (None only in the broken `no-auth` mode)."""
    return g.get("claims")


def unauthorized(reason: str):
    """401 with the one reason the assertion was refused (RFC 6750's header, and a JSON body)."""
    response = jsonify(error="invalid_token", reason=reason)
    response.status_code = 401
    response.headers["WWW-Authenticate"] = f'Bearer error="invalid_token", error_description="{reason}"'
    return response
