"""Serving an app under gevent, with Nagle's algorithm off on every accepted socket."""
from __future__ import annotations

import socket

from gevent.pywsgi import WSGIHandler, WSGIServer


class NoDelayHandler(WSGIHandler):
    """gevent's handler with TCP_NODELAY: without it each kept-alive request waits ~44 ms (STYLE, gevent)."""

    def __init__(self, sock, address, server, rfile=None):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # not a TCP socket (a unix socket, say)
            pass
        super().__init__(sock, address, server, rfile)


def make_server(app, host: str, port: int) -> WSGIServer:
    """A gevent WSGI server for `app` (port 0 picks a free one: read `server.server_port`)."""
    return WSGIServer((host, port), app, handler_class=NoDelayHandler, log=None)


def serve_app(app, host: str, port: int) -> None:
    make_server(app, host, port).serve_forever()
