"""Credentials at the HTTP edge: who is calling, and may their role do this."""
from __future__ import annotations

from functools import wraps

from flask import g, request

from ..errors import forbidden, unauthorized
from ..registry import Principal, authenticate_api_key, looks_like_api_key
from .document import API_KEY, authenticated_by

#: What each role may do (CONTRACT "Credentials").
READ, WRITE_DRAFTS, PUBLISH, MANAGE_KEYS, MINT_SESSIONS = "read", "write-drafts", "publish", "manage-keys", "mint"
#: The call log names the organization's users (subjects), so only people with admin keys read it.
READ_CALLS = "read-calls"
POWERS = {
    "admin": {READ, READ_CALLS, WRITE_DRAFTS, PUBLISH, MANAGE_KEYS, MINT_SESSIONS},
    "agent": {READ, WRITE_DRAFTS},
    "backend": {MINT_SESSIONS},
}


def bearer_token() -> str:
    """The Bearer credential of this request, or 401."""
    header = request.headers.get("Authorization", "")
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


def requires(power: str):
    """Refuse with 401/403 unless an API key whose role has `power` is presented (and say so in the OpenAPI
    document)."""

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            principal = current_principal()
            if power not in POWERS[principal.role]:
                raise forbidden(principal.role)
            return view(*args, **kwargs)

        return authenticated_by(API_KEY)(guarded)

    return decorate
