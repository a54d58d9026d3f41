"""Sending one built request and judging what came back, under one deadline.

`send` never raises for anything the endpoint or the network does: every way a call can go wrong
becomes a failure kind on the returned CallOutcome, and the endpoint's body never appears in one.
"""
from __future__ import annotations

import http.client
import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable
from weakref import WeakKeyDictionary

import gevent

from service.dispatch.build import BuiltRequest
from service.dispatch.client import GuardedClient
from service.dispatch.failures import (
    REFUSED,
    RESPONSE_TOO_BIG,
    RETURNED_NOTHING,
    TIMED_OUT,
    TRANSPORT_ERROR,
    failure_object,
)
from service.dispatch.guard import AddressGuard
from service.dispatch.reading import charset_of, decoded_chunks, has_body, raw_chunks, read_text
from service.limits import CALL_DEADLINE_SECONDS, ERROR_DETAIL_CHARS, RESPONSE_CAP_CHARS


@dataclass(frozen=True)
class CallOutcome:
    """Everything the caller records about one call, and what the model is shown.

    `kind` is None on success, when `output` holds the body as text ("" for an empty 2xx) and
    `size_chars` its length. `http_code` is set whenever the endpoint answered with a status.
    `detail` says why a call failed, for logs only; it never holds the endpoint's body. `found` is, for
    invalid-arguments, each (argument, what is wrong with it): for the admin's playground, never the model.
    """

    kind: str | None
    http_code: int | None = None
    output: str | None = None
    latency_ms: int = 0
    size_chars: int | None = None
    detail: str | None = None
    found: tuple[tuple[str, str], ...] = ()

    @property
    def succeeded(self) -> bool:
        return self.kind is None

    def to_result(self) -> dict[str, Any]:
        """The model's view: {"output": text} on success, {"error": the failure object} otherwise."""
        if self.kind is None:
            return {"output": self.output}
        return {"error": failure_object(self.kind, self.http_code)}


_clients: WeakKeyDictionary[AddressGuard, GuardedClient] = WeakKeyDictionary()


def client_for(guard: AddressGuard) -> GuardedClient:
    """The one client (and so the one set of connection pools) kept for `guard`."""
    client = _clients.get(guard)
    if client is None:
        client = _clients[guard] = GuardedClient(guard)
    return client


def send(
    request: BuiltRequest,
    *,
    guard: AddressGuard,
    authorization: str,
    deadline: float = CALL_DEADLINE_SECONDS,
    cap: int = RESPONSE_CAP_CHARS,
) -> CallOutcome:
    """Call the endpoint once with `authorization` as the Authorization header, exactly as given.

    One deadline covers resolution, connecting, the headers and the whole body; a body past `cap`
    characters is cut off as response-too-big.
    """
    started = time.monotonic()
    outcome = within_deadline(lambda: _exchange(guard, request, authorization, deadline, cap), deadline)
    # Built directly: dataclasses.replace costs twice as much, on every call.
    return CallOutcome(outcome.kind, outcome.http_code, outcome.output, round((time.monotonic() - started) * 1000),
                       outcome.size_chars, outcome.detail)


def within_deadline(exchange: Callable[[], CallOutcome], deadline: float) -> CallOutcome:
    """Run `exchange` under one gevent deadline; map what it raises to a failure kind.

    The one place exceptions become kinds. The order of the clauses matters and is tested: a socket
    timeout is an OSError too, and must be a timeout. Anything else (a bug) propagates; the step turns
    it into that call's transport error.
    """
    timer = gevent.Timeout(deadline)
    timer.start()
    try:
        return exchange()
    except gevent.Timeout as exc:
        if exc is not timer:
            raise  # someone else's deadline (an enclosing one): not ours to silence
        return CallOutcome(TIMED_OUT, detail=f"no complete answer within {deadline:g} s")
    except TimeoutError as exc:  # socket.timeout: a socket's own timeout, behind the deadline
        return CallOutcome(TIMED_OUT, detail=_describe(exc))
    except (
        http.client.HTTPException,  # geventhttpclient's parse errors, a head past its cap, a closed connection
        OSError,  # reset, refused, TLS refused (ssl.SSLError), a name not resolved, an address denied
        UnicodeError,  # a body its own charset cannot decode even with replacement (UTF-16, no BOM)
        zlib.error,  # a body that is not the gzip or deflate its Content-Encoding says
    ) as exc:
        return CallOutcome(TRANSPORT_ERROR, detail=_describe(exc))
    finally:
        timer.close()


def _exchange(guard: AddressGuard, request: BuiltRequest, authorization: str, deadline: float,
              cap: int) -> CallOutcome:
    response = client_for(guard).open(request, authorization)
    try:
        chunks = decoded_chunks(raw_chunks(response.read), _header(response, "Content-Encoding"))
        return judge(response.status_code, _header(response, "Content-Type"), chunks, cap)
    finally:
        # Back to the pool only when read to its end; cut off at the cap, unread (a 3xx or error
        # body) or broken mid-way, the socket is closed here and never reused.
        response.release()


def _header(response: Any, name: str) -> str | None:
    value = response.get(name)
    return ", ".join(value) if isinstance(value, list) else value  # a repeated header comes as a list


def judge(status: int, content_type: str | None, chunks: Iterable[bytes], cap: int) -> CallOutcome:
    """The outcome of an answer with `status` whose decoded body arrives as `chunks`: success with its text, or the
    failure kind for a non-2xx status (by whether it had a body) or a body past `cap` characters."""
    if not 200 <= status < 300:
        # Only emptiness matters, and the body is never forwarded: one chunk at most decides.
        kind = REFUSED if has_body(chunks) else RETURNED_NOTHING
        return CallOutcome(kind, http_code=status)
    text = read_text(chunks, charset_of(content_type), cap)
    if text is None:
        return CallOutcome(RESPONSE_TOO_BIG, http_code=status, detail=f"more than {cap} characters")
    return CallOutcome(None, http_code=status, output=text, size_chars=len(text))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_DETAIL_CHARS]
