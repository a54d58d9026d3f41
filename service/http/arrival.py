"""A request holds nothing of the process while it arrives: its body is read whole at its first use, with the
request's place at the work gate and its database connection given back meanwhile, under the server's stall deadline.

A request takes its place (service.gate) once its head is in, and decides who it is before it reads a byte of its
body (every edge authenticates first; the dashboard checks its session before the form). Were the body then read in
place, a client sending a declared 100 kB four bytes at a time held that place, and sixteen of them every place of
the worker: every other request waited out the gate and was refused 503 (issue 30). Here the first read of the body
steps out (as a request waiting on a tool call does), reads the whole body as it comes, and takes a place again
before the work goes on.

Whatever goes wrong on the way is answered in the one error shape, the same on every path, the step route's too: a
body that stalls past TOOLGATE_BODY_TIMEOUT_SECONDS is 408 `request-timeout`, one that breaks off before its declared
length 400 `body-incomplete`; the server closes such a connection (serving). A chunked body is read to one byte past
the bound at most, which each edge then refuses 413 in its own shape.
"""
from __future__ import annotations

import io
from typing import Any, Callable, Iterable, Iterator

from flask import Flask, current_app, request

from service import gate
from service.database import release
from service.errors import body_incomplete, request_timeout, request_too_large
from service.http.context import WORK_GATE_KEY, app_config
from service.limits import SATURATED_GRACE_SECONDS
from serving import SATURATED_ENVIRON, BodyStalled

#: A chunked body (no declared length) is read this much at a time, up to the bound.
_BODY_CHUNK_BYTES = 65_536


class ArrivingBody:
    """A request's body (`wsgi.input`), read whole at its first use (see the module's docstring)."""

    def __init__(self, stream: Any, length: int | None, bound: int) -> None:
        self._stream = stream
        self._length = length  # None: chunked
        self._bound = bound
        self._body: io.BytesIO | None = None

    def read(self, size: int | None = -1) -> bytes:
        return self._arrived().read(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> bytes:
        return self._arrived().readline(-1 if size is None else size)

    def readlines(self, hint: int = -1) -> list[bytes]:
        return self._arrived().readlines(hint)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._arrived())

    def _arrived(self) -> io.BytesIO:
        if self._body is None:
            held = gate.held()
            gate.leave()
            release()  # no-op inside a transaction, where no route reads a body
            self._body = io.BytesIO(self._read_whole())
            if held is not None:
                gate.enter(held)  # 503 `busy` if none comes free within the wait, as for a request arriving now
        return self._body

    def _read_whole(self) -> bytes:
        if self._length is not None and self._length > self._bound:
            raise request_too_large(self._bound)  # every route refuses such a body before reading it; never read it
        try:
            if self._length is not None:
                return self._stream.read(self._length)
            # One byte past the bound at most: each edge refuses a body past it in its own shape (MCP in JSON-RPC)
            chunks, size = [], 0
            while size <= self._bound and (chunk := self._stream.read(min(_BODY_CHUNK_BYTES, self._bound + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks)
        except BodyStalled:
            raise request_timeout() from None
        except (OSError, ValueError):  # it broke off before its length, or its chunks were framed wrongly
            raise body_incomplete() from None


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def install_arrival(app: Flask) -> None:
    """Give every request with a body an `ArrivingBody`, ahead of everything else of `app` (the step route too)."""
    # Flask's documented way to wrap its WSGI app; mypy sees the instance attribute as the method, `self` and all.
    app.wsgi_app = with_arrival(app.wsgi_app, app_config(app).max_request_bytes)  # type: ignore[method-assign, assignment]


def with_arrival(inner: WSGIApp, bound: int) -> WSGIApp:
    """`inner`, its requests' bodies read as `ArrivingBody`s of at most `bound` bytes."""

    def arriving(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        declared = environ.get("CONTENT_LENGTH", "")
        if "HTTP_TRANSFER_ENCODING" in environ:
            environ["wsgi.input"] = ArrivingBody(environ["wsgi.input"], None, bound)
        elif declared and declared != "0" and declared.isascii() and declared.isdigit():
            environ["wsgi.input"] = ArrivingBody(environ["wsgi.input"], int(declared), bound)
        return inner(environ, start_response)

    return arriving


def admitting() -> bool:
    """Whether this process can admit work now: its work gate not saturated past its grace, and its server (when it
    says) not at its connection cap with every connection at work. For readiness."""
    if current_app.extensions[WORK_GATE_KEY].saturated(SATURATED_GRACE_SECONDS):
        return False
    saturated = request.environ.get(SATURATED_ENVIRON)
    return not (saturated is not None and saturated())
