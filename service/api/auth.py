"""Credentials on the REST routes: `requires(power)` checks the API key's role and says so in the OpenAPI document."""
from __future__ import annotations

from functools import wraps

from service.api.document import API_KEY, authenticated_by
from service.http import current_principal
from service.roles import require


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
