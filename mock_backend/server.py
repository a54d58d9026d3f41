"""Serving the mock under gevent: Nagle off, socket faults on request, the raw request target kept.

gevent's `WSGIServer` leaves Nagle's algorithm on, so every request after the first on a kept-alive
connection waits for the peer's delayed ACK (about 44 ms). `MockServer` sets `TCP_NODELAY` on each
accepted socket, as gunicorn does.
"""
from __future__ import annotations

import socket
import sys

import gevent.socket
from gevent.pywsgi import WSGIHandler, WSGIServer

from mock_backend.faults import SocketFault, break_connection

#: Pending connections the kernel queues for us (it caps this at net.core.somaxconn).
LISTEN_BACKLOG = 2048


class MockHandler(WSGIHandler):
    """pywsgi's handler, plus the two things the mock needs from the connection itself."""

    _fault: str | None = None

    def get_environ(self):
        environ = super().get_environ()
        # The request target exactly as sent, percent-escapes intact (PATH_INFO is decoded), so
        # the echo route can show precisely how the platform encoded a path value.
        environ["RAW_URI"] = self.path
        return environ

    def run_application(self):
        try:
            super().run_application()
        except SocketFault as fault:
            # Act once pywsgi has finished with the request (it still drains the request body).
            self._fault = fault.kind
            self.close_connection = True

    def handle_one_response(self):
        self._fault = None
        super().handle_one_response()
        if self._fault is not None:
            # The socket only really closes once the file reading from it is closed too.
            self.rfile.close()
            break_connection(self.socket, self._fault)


class MockServer(WSGIServer):
    """A WSGIServer with `TCP_NODELAY` on accepted sockets and the fault-aware handler."""

    handler_class = MockHandler

    def handle(self, sock, address):  # pylint:disable=method-hidden
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().handle(sock, address)


def make_server(app, host: str = "127.0.0.1", port: int = 8090, log="default") -> MockServer:
    """A server for `app`, already bound (OSError if it cannot be) but not yet serving.

    Port 0 picks a free one: read it from `server_port`. `log` is pywsgi's access log:
    "default" writes to stderr, None writes nothing.
    """
    # Bound here rather than in start(), so a taken port fails cleanly, socket closed. The deep
    # backlog lets a parallel step of hundreds of calls connect at once rather than retry SYNs.
    listener = gevent.socket.create_server((host, port), backlog=LISTEN_BACKLOG)
    return MockServer(listener, app, log=log)


def serve(app, host: str, port: int, *, name: str, ready: str, log=None, notes: tuple[str, ...] = ()) -> int:
    """Serve `app` until interrupted: 0 on a clean stop, 2 when the address cannot be bound.

    `ready` (with `{url}` filled in) is printed once listening, so whoever started the process may read
    it as "ready" and learn the port when it asked for port 0; `notes` go to stderr first.
    """
    try:
        server = make_server(app, host, port, log=log)
    except OSError as error:
        print(f"{name}: cannot listen on {host}:{port}: {error}", file=sys.stderr)
        return 2
    server.start()
    for note in notes:
        print(f"{name}: {note}", file=sys.stderr)
    print(ready.replace("{url}", f"http://{host}:{server.server_port}"), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop(timeout=1)
    return 0
