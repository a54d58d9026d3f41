"""The one serve loop: bind first, say where, serve, stop cleanly on SIGTERM or SIGINT.

`toolgate serve`, `toolgate demo`, `toolgate mock-backend` and `toolgate model-server` (and the mock's
standalone `python -m mock_backend`) all serve through it. It imports only gevent and the standard library,
so `mock_backend` uses it and still imports nothing of `service` (docs/decisions.md, "One serve loop").

The printed line is a protocol: whoever starts a server with `--port 0` reads the bound URL from the first
line of its stdout, "<name> listening on http://HOST:PORT …", printed only once the socket is bound.
Nothing here patches gevent: the process entry point does that on its first line.
"""
from __future__ import annotations

import gc
import signal
import socket
import sys
from collections.abc import Iterable

import gevent
import gevent.socket
from gevent.event import Event
from gevent.pool import Pool
from gevent.pywsgi import WSGIHandler, WSGIServer

#: Connections the kernel queues before they are accepted. A burst of a few hundred new connections overflows
#: gevent's default and drops SYNs (each costs its client a 1 s retry); the kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 2048
#: Seconds requests in flight get to finish once a stop is asked for, unless the caller says otherwise.
STOP_GRACE_SECONDS = 1.0
#: Exit status of a server that could not start (the address is taken, its settings are wrong).
EXIT_CANNOT_START = 2


class NoDelayHandler(WSGIHandler):
    """gevent's handler with TCP_NODELAY: without it each kept-alive request waits ~44 ms (STYLE, gevent).

    It also tells its `Server` when it is idle, waiting for a connection's next request, so a stopping server
    closes such connections at once instead of waiting out its grace for requests that may never come.
    """

    def __init__(self, sock, address, server, rfile=None):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # not a TCP socket (a unix socket, say)
            pass
        super().__init__(sock, address, server, rfile)

    def read_requestline(self):
        if self.server.closed:  # stopping: no further request on this connection
            return ""
        self.server.idle.add(self)
        try:
            return super().read_requestline()
        finally:
            self.server.idle.discard(self)


class Server(WSGIServer):
    """A WSGIServer whose stop lets requests in flight finish and closes idle kept-alive connections at once."""

    handler_class = NoDelayHandler

    def __init__(self, listener, application, log=None, **kwargs):
        # A pool (unbounded) so that stop() can wait for the handlers; gevent's default spawn keeps no track.
        # No access log unless asked for ("default" is stderr): the service logs each request itself.
        super().__init__(listener, application, spawn=Pool(), log=log, **kwargs)
        self.idle: set[WSGIHandler] = set()

    def close(self) -> None:
        super().close()
        for handler in list(self.idle):
            try:  # wakes the handler's read with end-of-file: it returns and closes the connection
                handler.socket.shutdown(socket.SHUT_RDWR)
            except (AttributeError, OSError):  # already gone
                pass


def listen(host: str, port: int) -> socket.socket:
    """A listening socket bound to `host:port` (port 0 picks a free one), or OSError saying why not."""
    return gevent.socket.create_server((host, port), backlog=LISTEN_BACKLOG)


def url_of(bound) -> str:
    """`http://host:port` of a bound socket or server, with the port actually bound (not the 0 asked for)."""
    host, port = (bound.socket if isinstance(bound, WSGIServer) else bound).getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app, host: str, port: int) -> Server:
    """A server for `app`, bound now (OSError if it cannot be) but not yet serving; no access log."""
    return Server(listen(host, port), app)


def settle_heap() -> None:
    """Take what start-up built out of the garbage collector's sight: a server's modules, app and routes live as long
    as its process, yet every full collection walked all of them again, and a full collection stops every request.

    Measured in a burst of 1,000 steps on one worker (bench/load.py, SQLite): full collections of 90-540 ms each,
    three in the burst's first seconds, before; with start-up frozen, those of the burst walk only what the burst
    made. Once per serving process, after its app is built (a frozen object that later becomes garbage in a cycle is
    never reclaimed, which is why tests, building many apps in one process, do not call it).
    """
    gc.collect()
    gc.freeze()


def spawn_untracked() -> None:
    """Spawn greenlets without recording who spawned them, from where (gevent's `track_greenlet_tree`, on by default).

    The record is a debugging aid nothing here reads (`spawning_greenlet`, `spawn_tree_locals`, `spawning_stack`), yet
    gevent builds it for every greenlet: a walk up ten frames of the spawner's stack, each asked for its line number.
    A step spawns one greenlet a call: with the record, 5% of the instructions a call in steps of 100 (911k against
    865k a call, bench/instructions.py). Once per serving process; tests keep the record, for their failures' sake.
    """
    gevent.config.track_greenlet_tree = False


def settle_process() -> None:
    """What a serving process does once its app is built, before it accepts: `settle_heap` and `spawn_untracked`."""
    settle_heap()
    spawn_untracked()


def serve(server: Server, *, ready: str, notes: Iterable[str] = (), grace: float = STOP_GRACE_SECONDS) -> int:
    """Serve a bound `server` until SIGTERM or SIGINT, then stop it cleanly; 0.

    `ready` is printed (with `{url}` the server's URL) once it accepts, and flushed: it is the line a parent
    reads. `notes` go to stderr first. On a stop signal the server stops accepting, closes its idle connections
    and gives requests in flight `grace` seconds to finish.
    """
    stopping = Event()
    watchers = [gevent.signal_handler(signum, stopping.set) for signum in (signal.SIGTERM, signal.SIGINT)]
    try:
        settle_process()
        server.start()
        for note in notes:
            print(note, file=sys.stderr, flush=True)
        print(ready.replace("{url}", url_of(server)), flush=True)
        stopping.wait()
    finally:
        for watcher in watchers:
            watcher.cancel()
        server.stop(timeout=grace)
    return 0
