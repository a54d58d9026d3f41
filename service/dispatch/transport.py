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
    SHAPE_FAILED,
    TIMED_OUT,
    TRANSPORT_ERROR,
    failure_object,
)
from service.dispatch.guard import AddressGuard
from service.dispatch.reading import charset_of, decoded_chunks, has_body, raw_chunks, read_bytes, read_text
from service.dispatch.shaping import ShapeFailed, Shaping, error_details, shape
from service.limits import CALL_DEADLINE_SECONDS, ERROR_DETAIL_CHARS, MAX_SHAPED_RESPONSE_BYTES, RESPONSE_CAP_CHARS


@dataclass(frozen=True)
class CallOutcome:
    """Everything the caller records about one call, and what the model is shown.

    `kind` is None on success, when `output` holds the body as text ("" for an empty 2xx) and
    `size_chars` its length. `http_code` is set whenever the endpoint answered with a status.
    `detail` says why a call failed, for logs only; it never holds the endpoint's body. `found` is, for
    invalid-arguments, each (argument, what is wrong with it): for the admin's playground, never the model.
    For a tool that shapes what the model sees (docs/shaping.md): `size_chars` is the shaped output's length and
    `raw_bytes` the body's own size; `details` the error fields the model may read and `message` the tool's sentence
    for this outcome, both part of the failure object.
    """

    kind: str | None
    http_code: int | None = None
    output: str | None = None
    latency_ms: int = 0
    size_chars: int | None = None
    detail: str | None = None
    found: tuple[tuple[str, str], ...] = ()
    raw_bytes: int | None = None
    details: dict[str, str | int | float] | None = None
    message: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.kind is None

    def to_result(self) -> dict[str, Any]:
        """The model's view: {"output": text} on success, {"error": the failure object} otherwise."""
        if self.kind is None:
            return {"output": self.output}
        failure = failure_object(self.kind, self.http_code)
        if self.details:
            failure["details"] = self.details
        if self.message is not None:
            failure["message"] = self.message
        return {"error": failure}


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
    shaping: Shaping | None = None,
    shaped_bytes: int = MAX_SHAPED_RESPONSE_BYTES,
) -> CallOutcome:
    """Call the endpoint once with `authorization` as the Authorization header, exactly as given.

    One deadline covers resolution, connecting, the headers and the whole body; a body past `cap`
    characters is cut off as response-too-big. With a tool's `shaping` the outcome is `judge_shaped`'s: a shaped
    body may be up to `shaped_bytes`.
    """
    started = time.monotonic()
    if shaping is None:
        outcome = within_deadline(lambda: _exchange(guard, request, authorization, deadline, cap), deadline)
    else:
        outcome = within_deadline(lambda: _exchange_shaped(guard, request, authorization, cap, shaping, shaped_bytes),
                                  deadline)
    # Built directly: dataclasses.replace costs twice as much, on every call.
    return CallOutcome(outcome.kind, outcome.http_code, outcome.output, round((time.monotonic() - started) * 1000),
                       outcome.size_chars, outcome.detail, (), outcome.raw_bytes, outcome.details, outcome.message)


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


def _exchange_shaped(guard: AddressGuard, request: BuiltRequest, authorization: str, cap: int, shaping: Shaping,
                     shaped_bytes: int) -> CallOutcome:
    """`_exchange` for a tool that shapes what the model sees (the reference engines of bench/engines.py stand in for
    `_exchange` alone: they measure the plain path)."""
    response = client_for(guard).open(request, authorization)
    try:
        chunks = decoded_chunks(raw_chunks(response.read), _header(response, "Content-Encoding"))
        return judge_shaped(response.status_code, _header(response, "Content-Type"), chunks, cap, shaping, shaped_bytes)
    finally:
        response.release()  # as in _exchange: back to the pool only when read to its end


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


def judge_shaped(status: int, content_type: str | None, chunks: Iterable[bytes], cap: int, shaping: Shaping,
                 shaped_bytes: int) -> CallOutcome:
    """`judge` for a tool that shapes what the model sees: a 2xx body up to `shaped_bytes` shaped by its expression
    (whose result must fit `cap`), an error body's allowed fields as details, and the tool's sentence as message."""
    charset = charset_of(content_type)
    if not 200 <= status < 300:
        if not shaping.error_fields:
            kind = REFUSED if has_body(chunks) else RETURNED_NOTHING
            return CallOutcome(kind, http_code=status, message=shaping.message(kind, status))
        chunks = iter(chunks)
        first = next((c for c in chunks if c), b"")
        kind = REFUSED if first else RETURNED_NOTHING
        details = error_details(_chained(first, chunks), charset, shaping.error_fields) if first else None
        return CallOutcome(kind, http_code=status, details=details or None, message=shaping.message(kind, status))
    if shaping.expression is None:
        outcome = judge(status, content_type, chunks, cap)
    else:
        outcome = _shaped_body(status, charset, chunks, cap, shaping, shaped_bytes)
    if outcome.kind is not None:
        return CallOutcome(outcome.kind, status, detail=outcome.detail, raw_bytes=outcome.raw_bytes,
                           message=shaping.message(outcome.kind, status))
    if outcome.output == "" and shaping.empty_message is not None:
        message = shaping.message("empty", status) or ""
        return CallOutcome(None, status, output=message, size_chars=len(message), raw_bytes=outcome.raw_bytes)
    return outcome


def _shaped_body(status: int, charset: str, chunks: Iterable[bytes], cap: int, shaping: Shaping,
                 shaped_bytes: int) -> CallOutcome:
    body = read_bytes(chunks, shaped_bytes)
    if body is None:
        return CallOutcome(RESPONSE_TOO_BIG, http_code=status, detail=f"more than {shaped_bytes} bytes to shape")
    if not body:
        return CallOutcome(None, http_code=status, output="", size_chars=0, raw_bytes=0)
    assert shaping.expression is not None
    try:
        text = shape(shaping.expression, body if charset == "utf-8" else body.decode(charset, "replace"), cap)
    except ShapeFailed as exc:
        return CallOutcome(SHAPE_FAILED, http_code=status, detail=str(exc), raw_bytes=len(body))
    if text is None:
        return CallOutcome(RESPONSE_TOO_BIG, http_code=status, raw_bytes=len(body),
                           detail=f"the shaped result is more than {cap} characters")
    return CallOutcome(None, http_code=status, output=text, size_chars=len(text), raw_bytes=len(body))


def _chained(first: bytes, rest: Iterable[bytes]) -> Iterable[bytes]:
    yield first
    yield from rest


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_DETAIL_CHARS]
