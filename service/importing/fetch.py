"""Fetching a document from its address, held to what a tool call is held to.

The same guarded connections as a call (every resolved address checked against the AddressGuard, no proxy, no
cookie, no redirect followed, TLS always verified) and the same one deadline over resolving, connecting and the
whole body, which is read a chunk at a time and cut off past MAX_IMPORT_DOCUMENT_BYTES. No Authorization header is
sent: a document is fetched as anyone would fetch it.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from service import limits
from service.dispatch import AddressGuard, CallOutcome
from service.dispatch.build import BuiltRequest
from service.dispatch.client import AddressDenied
from service.dispatch.failures import REFUSED, RESPONSE_TOO_BIG, RETURNED_NOTHING, TIMED_OUT
from service.dispatch.reading import charset_of, decoded_chunks, raw_chunks, read_text
from service.dispatch.transport import client_for, within_deadline
from service.errors import ServiceError
from service.importing.bounds import refused

_ACCEPT = "application/json, application/yaml, application/x-yaml, text/yaml, text/plain;q=0.5, */*;q=0.1"


def fetch_document(url: Any, *, guard: AddressGuard, deadline: float = limits.CALL_DEADLINE_SECONDS,
                   cap: int = limits.MAX_IMPORT_DOCUMENT_BYTES) -> str:
    """The text at `url`, or 422 on `url` saying why not: a bad address, one the guard refuses, no answer within
    `deadline`, an answer that is not a 2xx, or more than `cap` characters."""
    if not isinstance(url, str) or not _absolute(url):
        raise refused("url-format", field="url")
    denied: list[str] = []

    def exchange() -> CallOutcome:
        # The dispatcher's own client: the guard checks each address connected to, no redirect is followed, no
        # cookie or credential is sent (no Authorization at all), and the body is read in chunks up to the cap.
        try:
            response = client_for(guard).open(BuiltRequest("GET", url, {"Accept": _ACCEPT}), None)
        except AddressDenied as exc:
            denied.append(str(exc).split(" may not be reached: ", 1)[-1])
            raise
        try:
            if not 200 <= response.status_code < 300:
                return CallOutcome(REFUSED, http_code=response.status_code)
            # The platform's own decoder, as a call's body is read: a compressed chunk expands one chunk at a time.
            chunks = decoded_chunks(raw_chunks(response.read), _header(response, "Content-Encoding"))
            text = read_text(chunks, charset_of(_header(response, "Content-Type")), cap)
            if text is None:
                return CallOutcome(RESPONSE_TOO_BIG, http_code=response.status_code)
            return CallOutcome(None, http_code=response.status_code, output=text)
        finally:
            response.release()

    outcome = within_deadline(exchange, deadline)
    if outcome.kind is None:
        return outcome.output or ""
    if denied:
        raise refused("url-address-denied", field="url", detail=f"Here, {denied[0]}.")
    raise _unfetchable(outcome, deadline)


def _absolute(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.username is None and \
        not any(c.isspace() for c in url)


def _header(response: Any, name: str) -> str | None:
    value = response.get(name)
    return ", ".join(value) if isinstance(value, list) else value  # a repeated header comes as a list


def _unfetchable(outcome: CallOutcome, deadline: float) -> ServiceError:
    if outcome.kind == RESPONSE_TOO_BIG:
        return refused("document-too-large", field="url")
    if outcome.kind == TIMED_OUT:
        detail = f"It did not answer in full within {deadline:g} seconds."
    elif outcome.kind in (REFUSED, RETURNED_NOTHING) and outcome.http_code is not None:
        redirect = " (a redirect, which is not followed: give the address it points to)" \
            if 300 <= outcome.http_code < 400 else ""
        detail = f"It answered HTTP {outcome.http_code}{redirect}."
    else:
        detail = "The connection failed, or its answer could not be read."
    return refused("url-unfetchable", field="url", detail=detail)
