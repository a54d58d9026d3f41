"""Reading a provider's discovery document and key set, held to what a tool call is held to.

The dispatcher's guarded client (every address connected to checked against the AddressGuard and the operator's
allow-list, no proxy, no cookie, no credential, no redirect followed, TLS verified), one deadline over resolving,
connecting and the whole body, and the body read a chunk at a time and cut off at a cap, as an OpenAPI import reads
its document (service/importing/fetch.py; that one answers as a 422 on `url`, this one as a value, since a key set
is also fetched while verifying a token, where the answer is a 401 or a 503, never a 422).
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from service import limits
from service.dispatch import AddressGuard, CallOutcome
from service.dispatch.build import BuiltRequest
from service.dispatch.client import AddressDenied
from service.dispatch.failures import REFUSED, RESPONSE_TOO_BIG, TIMED_OUT
from service.dispatch.reading import charset_of, decoded_chunks, raw_chunks, read_text
from service.dispatch.transport import client_for, within_deadline


class Unreadable(Exception):
    """A provider's document could not be read; the message says why, in a sentence for the admin."""


def fetch_json(url: str, guard: AddressGuard, *, deadline: float = limits.PROVIDER_FETCH_DEADLINE_SECONDS,
               cap: int = limits.MAX_PROVIDER_DOCUMENT_BYTES) -> dict[str, Any]:
    """The JSON object at `url`, or Unreadable saying why not."""
    denied: list[str] = []

    def exchange() -> CallOutcome:
        try:
            response = client_for(guard).open(BuiltRequest("GET", url, {"Accept": "application/json"}), None)
        except AddressDenied as exc:
            denied.append(str(exc).split(" may not be reached: ", 1)[-1])
            raise
        try:
            if not 200 <= response.status_code < 300:
                return CallOutcome(REFUSED, http_code=response.status_code)
            content_type = response.get("Content-Type")
            encoding = response.get("Content-Encoding")
            chunks = decoded_chunks(raw_chunks(response.read), encoding if isinstance(encoding, str) else None)
            text = read_text(chunks, charset_of(content_type if isinstance(content_type, str) else None), cap)
            if text is None:
                return CallOutcome(RESPONSE_TOO_BIG, http_code=response.status_code)
            return CallOutcome(None, http_code=response.status_code, output=text)
        finally:
            response.release()

    try:
        outcome = within_deadline(exchange, deadline)
    except ValueError as exc:  # an address the client cannot even form a request line for
        raise Unreadable(f"{url} is not an address that can be fetched ({exc}).") from None
    if outcome.kind is None:
        try:
            value = json.loads(outcome.output or "")
        except (ValueError, RecursionError):
            raise Unreadable(f"{url} answered with something that is not JSON.") from None
        if not isinstance(value, dict):
            raise Unreadable(f"{url} answered with JSON that is not an object.")
        return value
    raise Unreadable(_why(url, outcome, denied, deadline, cap))


def _why(url: str, outcome: CallOutcome, denied: list[str], deadline: float, cap: int) -> str:
    if denied:
        return f"{url} may not be reached: {denied[0]} (not public and not in TOOLGATE_ALLOWED_NETWORKS)."
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
