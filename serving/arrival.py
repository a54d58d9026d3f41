"""How long a client may take to send a request, and what the serve loop answers and does when it takes too long.

The serve loop (`serving`) holds every connection to an `Arrival`: a head deadline, an idle deadline between kept-
alive requests, a stall deadline on a body (`BoundedInput`), and a cap on connections. Past a deadline the server
answers itself from `REFUSALS` and closes, lingering (`close_lingering`) so the client can read the answer.
"""
from __future__ import annotations

import contextlib
import json
import socket
from dataclasses import dataclass
from http import HTTPStatus

from gevent.pywsgi import Input
from gevent.timeout import Timeout


@dataclass(frozen=True)
class Arrival:
    """How long a client may take to send a request, and how many connections one process serves at once.

    A request holds nothing of the app's while it arrives (its greenlet and socket only), but an attacker can open
    sockets cheaply: so each phase has a deadline, and past `max_connections` a new connection takes the place of
    the one that has waited longest for its request (idle, or its head still arriving), or is refused at once when
    every connection is at work. The service sets these from its settings; these defaults are the serve loop's own,
    for the mock backend and the model server.
    """

    #: Seconds from a request's first byte (a new connection's accept) to the end of its head.
    head_seconds: float = 10.0
    #: Seconds a request body may go without a byte arriving.
    body_stall_seconds: float = 10.0
    #: Seconds a kept-alive connection may wait for its next request.
    idle_seconds: float = 75.0
    max_connections: int = 4_096


#: Before closing a connection whose client may still be sending, what it sends is read and dropped for up to this
#: long (and this much): closed with bytes unread, the kernel resets the connection, and the client may lose the
#: answer it was sent (a 413, a 408) before reading it. A lingering close, as Apache and nginx make.
LINGER_SECONDS = 1.0
LINGER_BYTES = 1_048_576


class HeadTimedOut(BaseException):
    """A request head did not arrive within its deadline. A BaseException, like gevent's Timeout, so that gevent's
    `except Exception` around reading a request cannot take it for a malformed head."""


class BodyStalled(OSError):
    """A request body went longer than its stall deadline without a byte; the connection cannot be used again."""


def refusal(status: int, body: dict, retry_after: int | None = None) -> bytes:
    """A whole answer, head and JSON body, that a server writes itself before any app sees the request, and then
    closes the connection."""
    data = json.dumps(body).encode()
    retry = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{retry}Connection: close\r\n\r\n").encode() + data


#: The answers a server writes itself, before any app sees the request (a server's `refusals` may replace them).
REFUSALS = {
    "request-timeout": refusal(408, {"code": "request-timeout", "errors": [],
                                     "message": "The request did not arrive in time; the connection is closed."}),
    "busy": refusal(503, {"code": "busy", "message": "The service is busy; try again shortly.", "errors": []}, 1),
}


class BoundedInput(Input):
    """gevent's request body with a stall deadline on every read, and a discard that never waits on a client: once a
    read failed, or when any of it is left unread, the connection is closed instead of read through.

    A declared length is read as its bytes arrive, so the deadline is on a stall; a chunked body is read a chunk (or
    as much of it as asked for) at a time, so there it also asks for some pace within a chunk.
    """

    __slots__ = ("handler", "stall_seconds", "broken")

    def __init__(self, rfile, content_length, socket=None, chunked_input=False, *, handler, stall_seconds):
        super().__init__(rfile, content_length, socket, chunked_input)
        self.handler = handler
        self.stall_seconds = stall_seconds
        self.broken = False

    def _guarded(self, read, *args):
        try:
            with Timeout(self.stall_seconds, BodyStalled("the request body stalled")):
                return read(*args)
        except BaseException:
            self._break()
            raise

    def _break(self) -> None:
        # Where the body stopped is unknown, so no further request can be read here: the answer says it closes
        self.broken = True
        self.handler.close_connection = True

    def read(self, length=None):
        if self.chunked_input:
            return self._guarded(Input.read, self, length)
        # gevent's read waits for every byte asked for: the deadline would then be on whole chunks, not on a stall
        left = (self.content_length or 0) - self.position
        length = left if length is None or length < 0 or length > left else length
        if length:
            self._send_100_continue()
        parts = []
        while length:
            chunk = self._guarded(self.rfile.read1, length)
            if not chunk:
                self._break()
                raise OSError(f"unexpected end of file while reading request at position {self.position}")
            self.position += len(chunk)
            length -= len(chunk)
            parts.append(chunk)
        return b"".join(parts)

    def readline(self, size=None):
        return self._guarded(Input.readline, self, size)

    def _discard(self):
        # gevent reads an unread body through, to find the next request after it: waiting on the client, for as long
        # as it pleases to send what the app did not want (a body refused from its length, or a stranger's). The
        # connection is closed instead, lingering so the answer already sent is read (`close_lingering`).
        left = (self.content_length or 0) - self.position
        unfinished_chunks = self.chunked_input and self.chunk_length != 0
        if self.broken or unfinished_chunks or left > 0:
            self.handler.close_connection = True


def close_lingering(sock, rfile) -> None:
    """Close a connection whose client may still be sending: say no more will come, drop what it still sends for a
    bounded while (until it closes too, at most LINGER_SECONDS and LINGER_BYTES), then close. Apache's and nginx's
    lingering close: without it the kernel resets a connection closed with bytes unread, and the client may lose the
    answer it was sent (a 413, a 408) before reading it."""
    try:
        sock.shutdown(socket.SHUT_WR)
        dropped = 0
        with Timeout(LINGER_SECONDS, False):
            while dropped < LINGER_BYTES and (chunk := rfile.read1(65_536)):
                dropped += len(chunk)
    except (OSError, ValueError):  # already reset or closed
        pass
    finally:
        with contextlib.suppress(OSError):
            rfile.close()
        with contextlib.suppress(OSError):
            sock.close()


def refuse(sock, answer: bytes) -> None:
    """Write `answer` to a connection the server will not serve, and close it, without waiting on the client."""
    try:
        with Timeout(1, False):
            sock.sendall(answer)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        sock.close()
