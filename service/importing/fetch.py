"""Fetching a document from its address, held to what a tool call is held to (service.dispatch.fetching: the
guarded connections, one deadline, the body read in chunks and cut off past MAX_IMPORT_DOCUMENT_BYTES), and the
answer a fetch that fails is: 422 on `url`, saying why.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from service import limits
from service.dispatch import AddressGuard, CallOutcome
from service.dispatch.failures import REFUSED, RESPONSE_TOO_BIG, RETURNED_NOTHING, TIMED_OUT
from service.dispatch.fetching import fetch_text
from service.errors import ServiceError
from service.importing.bounds import refused

_ACCEPT = "application/json, application/yaml, application/x-yaml, text/yaml, text/plain;q=0.5, */*;q=0.1"


def fetch_document(url: Any, *, guard: AddressGuard, deadline: float = limits.CALL_DEADLINE_SECONDS,
                   cap: int = limits.MAX_IMPORT_DOCUMENT_BYTES) -> str:
    """The text at `url`, or 422 on `url` saying why not: a bad address, one the guard refuses, no answer within
    `deadline`, an answer that is not a 2xx, or more than `cap` characters."""
    if not isinstance(url, str) or not _absolute(url):
        raise refused("url-format", field="url")
    fetched = fetch_text(url, guard, accept=_ACCEPT, deadline=deadline, cap=cap)
    outcome = fetched.outcome
    if outcome.kind is None:
        return outcome.output or ""
    if fetched.denied:
        raise refused("url-address-denied", field="url", detail=f"Here, {fetched.denied}.")
    raise _unfetchable(outcome, deadline)


def _absolute(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.username is None and \
        not any(c.isspace() for c in url)


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
