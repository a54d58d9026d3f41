"""Who is calling, at the HTTP edge: the Bearer credential of a request, and the API key's principal behind it."""
from __future__ import annotations

from flask import g, request

from service.errors import unauthorized
from service.registry import Principal, authenticate_api_key, looks_like_api_key


def bearer_token() -> str:
    """The Bearer credential of this request, or 401."""
    return bearer_in(request.headers.get("Authorization", ""))


def bearer_in(header: str) -> str:
    """The Bearer credential an Authorization header holds, or 401."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized()
    return token.strip()


def current_principal() -> Principal:
    """The API key's principal for this request (authenticated once, then kept on `g`)."""
    if "principal" not in g:
        token = bearer_token()
        if not looks_like_api_key(token):
            raise unauthorized()
        g.principal = authenticate_api_key(token)
    return g.principal
