"""Credentials on the REST routes: the API key's principal behind a request, and `requires(power)`, which checks the
key's role and says so in the OpenAPI document."""
from __future__ import annotations

from functools import wraps

from flask import g

from service.api.document import API_KEY, authenticated_by
from service.errors import unauthorized
from service.http import bearer_token
from service.registry import Principal, authenticate_api_key, looks_like_api_key
from service.roles import require


def current_principal() -> Principal:
    """The API key's principal for this request (authenticated once, then kept on `g`)."""
    if "principal" not in g:
        token = bearer_token()
        if not looks_like_api_key(token):
            raise unauthorized()
        g.principal = authenticate_api_key(token)
    return g.principal


def requires(power: str):
    """Refuse with 401/403 unless an API key whose role has `power` is presented (and say so in the OpenAPI
    document)."""

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            require(current_principal(), power)
            return view(*args, **kwargs)

        return authenticated_by(API_KEY)(guarded)

    return decorate
