"""Loopback ports and servers, and waiting on what happens: everything here listens on 127.0.0.1 only."""

import contextlib
import socket
from typing import Callable, Iterator

import gevent
import gevent.event
from gevent.pywsgi import WSGIServer

from tests.support.constants import LOOPBACK


def free_port() -> int:
    """A loopback port free right now, bound then closed: nothing listens there until someone takes it."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(app: Callable, make: Callable | None = None) -> Iterator[str]:
    """Serve a WSGI app on a free loopback port (on `make(app, host, 0)`'s server if given); yield its base URL."""
    server = make(app, LOOPBACK, 0) if make else WSGIServer((LOOPBACK, 0), app, log=None, error_log=None)
    server.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        server.stop(timeout=1)


def exchange(port: int, raw: bytes) -> bytes:
    """Send `raw` bytes to a loopback port on a fresh connection and read until the server closes it or goes quiet."""
    with socket.create_connection((LOOPBACK, port), timeout=5) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        with contextlib.suppress(socket.timeout):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    return b"".join(chunks)


def wait_for(condition: Callable[[], object], seconds: float = 5.0) -> None:
    """Return as soon as `condition()` holds, checking every hundredth of a second; gevent.Timeout after `seconds`.
    For waiting on a thing that happens (a call has arrived), never on a guess of how long it takes."""
    with gevent.Timeout(seconds):
        while not condition():
            gevent.sleep(0.01)
