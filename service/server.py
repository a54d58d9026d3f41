"""Serving an app under gevent, with Nagle's algorithm off on every accepted socket."""
from __future__ import annotations

import resource
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


#: Threads gevent may use for blocking name lookups. Its default of 10 lets ten lookups that never answer
#: stall every other call's resolution; each lookup already has its own budget inside the call deadline.
RESOLVER_THREADS = 128


def tune_hub() -> None:
    """Size this process for thousands of waiting steps: gevent's thread pool (used for DNS) for a whole step of
    lookups at once, and open files for a socket per waiting request and one per call."""
    import gevent

    pool = gevent.get_hub().threadpool
    if pool.maxsize < RESOLVER_THREADS:
        pool.maxsize = RESOLVER_THREADS
    raise_open_files()


#: Open files the process asks for: every waiting step holds its client's socket and its calls' sockets. The soft
#: limit is often 1,024, which a few hundred waiting steps exhaust; the hard limit, set by the operator, still bounds.
OPEN_FILES = 65_536


def raise_open_files(want: int = OPEN_FILES) -> None:
    """Raise this process's soft RLIMIT_NOFILE towards `want`, within the hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


#: Connections the kernel queues before they are accepted. A burst of a few hundred new connections overflows
#: gevent's default and drops SYNs (each costs its client a 1 s retry); the kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 2048


def make_server(app, host: str, port: int) -> WSGIServer:
    """A gevent WSGI server for `app` (port 0 picks a free one: read `server.server_port`)."""
    return WSGIServer((host, port), app, handler_class=NoDelayHandler, log=None, backlog=LISTEN_BACKLOG)


def serve_app(app, host: str, port: int) -> None:
    make_server(app, host, port).serve_forever()
