"""Serving the mock under gevent: socket faults on request, the raw request target kept.

The serve loop itself (bind first, print the bound URL, TCP_NODELAY on accepted sockets, the listen
backlog, a clean stop on SIGTERM) is the top-level `serving` package, shared with the service; the
mock imports nothing of `service`. What is the mock's own is its handler.
"""
from __future__ import annotations

from commandline import CannotRun
from mock_backend.faults import SocketFault, break_connection
from serving import NoDelayHandler, Server, listen, serve


class MockHandler(NoDelayHandler):
    """The serve loop's handler, plus the two things the mock needs from the connection itself."""

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


class MockServer(Server):
    """The serve loop's server with the fault-aware handler."""

    handler_class = MockHandler


def make_server(app, host: str = "127.0.0.1", port: int = 8090, log="default") -> MockServer:
    """A server for `app`, already bound (OSError if it cannot be) but not yet serving.

    Port 0 picks a free one: read it from `server_port`. `log` is pywsgi's access log:
    "default" writes to stderr, None writes nothing.
    """
    return MockServer(listen(host, port), app, log=log)


def serve_app(app, host: str, port: int, *, name: str, ready: str, log=None, notes=()) -> None:
    """Serve `app` until stopped, through the one serve loop: bound first, then `ready` (with {url}) printed.

    CannotRun (exit 2) naming the server when the address cannot be bound."""
    try:
        server = make_server(app, host, port, log=log)
    except OSError as error:
        raise CannotRun(f"{name}: cannot listen on {host}:{port}: {error}") from None
    serve(server, ready=ready, notes=notes)
