"""Reading a provider's discovery document and key set, held to what a tool call is held to.

The fetch is service.dispatch.fetching's, as an OpenAPI import's is (the guarded client, one deadline, the body read
in chunks and cut off at a cap). An import answers a failed fetch as a 422 on `url`; this one as a value, since a key
set is also fetched while verifying a token, where the answer is a 401 or a 503, never a 422.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from service import limits
from service.dispatch import AddressGuard, CallOutcome
from service.dispatch.failures import RESPONSE_TOO_BIG, TIMED_OUT
from service.dispatch.fetching import fetch_text


class Unreadable(Exception):
    """A provider's document could not be read; the message says why, in a sentence for the admin."""


def fetch_json(url: str, guard: AddressGuard, *, deadline: float = limits.PROVIDER_FETCH_DEADLINE_SECONDS,
               cap: int = limits.MAX_PROVIDER_DOCUMENT_BYTES) -> dict[str, Any]:
    """The JSON object at `url`, or Unreadable saying why not."""
    try:
        fetched = fetch_text(url, guard, accept="application/json", deadline=deadline, cap=cap)
    except ValueError as exc:  # an address the client cannot even form a request line for
        raise Unreadable(f"{url} is not an address that can be fetched ({exc}).") from None
    outcome = fetched.outcome
    if outcome.kind is None:
        try:
            value = json.loads(outcome.output or "")
        except (ValueError, RecursionError):
            raise Unreadable(f"{url} answered with something that is not JSON.") from None
        if not isinstance(value, dict):
            raise Unreadable(f"{url} answered with JSON that is not an object.")
        return value
    raise Unreadable(_why(url, outcome, fetched.denied, deadline, cap))


def _why(url: str, outcome: CallOutcome, denied: str | None, deadline: float, cap: int) -> str:
    if denied:
        return f"{url} may not be reached: {denied} (not public and not in TOOLGATE_ALLOWED_NETWORKS)."
    if outcome.kind == RESPONSE_TOO_BIG:
        return f"{url} answered with more than {cap:,} bytes."
    if outcome.kind == TIMED_OUT:
        return f"{url} did not answer in full within {deadline:g} seconds."
    if outcome.http_code is not None:
        redirect = " (a redirect, which is not followed)" if 300 <= outcome.http_code < 400 else ""
        return f"{url} answered HTTP {outcome.http_code}{redirect}."
    return f"{url} could not be reached: the connection failed, or its answer could not be read."


def discovery_addresses(issuer: str) -> list[str]:
    """Where the provider's metadata may be: OpenID Connect Discovery's `{issuer}/.well-known/openid-configuration`,
    then RFC 8414's `/.well-known/oauth-authorization-server` inserted before the issuer's path."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    openid = urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", ""))
    oauth = urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", ""))
    return [openid, oauth]
