"""The Bearer credential of a request, which every edge reads (whose key or token it is, each edge asks its own
domain: the API and the dashboard the registry, a conversation's routes the session tokens)."""
from __future__ import annotations

from flask import request

from service.errors import unauthorized


def bearer_token() -> str:
    """The Bearer credential of this request, or 401."""
    return bearer_in(request.headers.get("Authorization", ""))


def bearer_in(header: str) -> str:
    """The Bearer credential an Authorization header holds, or 401."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized()
    return token.strip()
