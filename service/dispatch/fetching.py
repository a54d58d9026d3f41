"""One GET of a document the platform reads for itself (an OpenAPI document to import, a provider's discovery
document or key set), held to what a tool call is held to.

The dispatcher's own client: every address connected to checked against the AddressGuard and the operator's
allow-list, no proxy, no cookie, no credential (no Authorization at all: a document is fetched as anyone would
fetch it), no redirect followed, TLS verified; one deadline over resolving, connecting and the whole body, which is
read and decoded a chunk at a time and cut off past the cap. The caller words the outcome for its own answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.dispatch.build import BuiltRequest
from service.dispatch.client import AddressDenied
from service.dispatch.failures import REFUSED, RESPONSE_TOO_BIG
from service.dispatch.reading import charset_of, decoded_chunks, raw_chunks, read_text
from service.dispatch.transport import CallOutcome, client_for, within_deadline


@dataclass(frozen=True)
class Fetched:
    """What a fetch came to: the outcome (its `output` the text, when `kind` is None) and, when the guard refused an
    address, what it said of it."""

    outcome: CallOutcome
    denied: str | None = None


def fetch_text(url: str, guard: Any, *, accept: str, deadline: float, cap: int) -> Fetched:
    """GET `url` under the call's guards; a 2xx body's text up to `cap`, or the failure kind. Raises ValueError for
    an address no request line can be formed for."""
    denied: list[str] = []

    def exchange() -> CallOutcome:
        try:
            response = client_for(guard).open(BuiltRequest("GET", url, {"Accept": accept}), None)
        except AddressDenied as exc:
            denied.append(str(exc).split(" may not be reached: ", 1)[-1])
            raise
        try:
            if not 200 <= response.status_code < 300:
                return CallOutcome(REFUSED, http_code=response.status_code)
            chunks = decoded_chunks(raw_chunks(response.read), _header(response, "Content-Encoding"))
            text = read_text(chunks, charset_of(_header(response, "Content-Type")), cap)
            if text is None:
                return CallOutcome(RESPONSE_TOO_BIG, http_code=response.status_code)
            return CallOutcome(None, http_code=response.status_code, output=text)
        finally:
            response.release()

    outcome = within_deadline(exchange, deadline)
    return Fetched(outcome, denied[0] if denied else None)


def _header(response: Any, name: str) -> str | None:
    value = response.get(name)
    return ", ".join(value) if isinstance(value, list) else value  # a repeated header comes as a list
