"""The one serve loop: bind first, say where, serve, stop cleanly on SIGTERM or SIGINT.

`toolgate serve`, `toolgate demo`, `toolgate mock-backend` and `toolgate model-server` (and the mock's
standalone `python -m mock_backend`) all serve through it. It imports only gevent and the standard library,
so `mock_backend` uses it and still imports nothing of `service` (docs/decisions.md, "One serve loop").

The printed line is a protocol: whoever starts a server with `--port 0` reads the bound URL from the first
line of its stdout, "<name> listening on http://HOST:PORT …", printed only once the socket is bound.
Nothing here patches gevent: the process entry point does that on its first line.
"""
from __future__ import annotations

import contextlib
import gc
import signal
import socket
import sys
import time
from collections.abc import Iterable

import gevent
import gevent.socket
from gevent.event import Event
from gevent.pool import Pool
from gevent.pywsgi import WSGIHandler, WSGIServer
from gevent.timeout import Timeout

from serving.arrival import REFUSALS, Arrival, BodyStalled, BoundedInput, HeadTimedOut, close_lingering, refuse

#: Connections the kernel queues before they are accepted. A burst of a few hundred new connections overflows
#: gevent's default and drops SYNs (each costs its client a 1 s retry); the kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 2048
#: Seconds requests in flight get to finish once a stop is asked for when the caller names no grace: the mock backend
#: and the model server, whose requests take milliseconds and whose tests stop them often. Not the service's grace
#: (service.limits.STOP_GRACE_SECONDS, 30 s), which `toolgate serve` and `demo` pass: a service's steps wait on tools.
DEFAULT_GRACE_SECONDS = 1.0
#: Exit status of a server that could not start (the address is taken, its settings are wrong).
EXIT_CANNOT_START = 2

__all__ = ["DEFAULT_GRACE_SECONDS", "EXIT_CANNOT_START", "LISTEN_BACKLOG", "SATURATED_ENVIRON", "Arrival",
           "BodyStalled", "NoDelayHandler", "Server", "listen", "make_server", "serve", "settle_heap", "settle_process",
           "spawn_untracked", "url_of"]


class NoDelayHandler(WSGIHandler):
    """gevent's handler with TCP_NODELAY (without it each kept-alive request waits ~44 ms: STYLE, gevent), and with
    the deadlines of its server's `Arrival`: a head that does not arrive in time is answered 408 and its connection
    closed, a kept-alive connection idle too long is closed, a body that stalls fails its read (`BoundedInput`).

    While it waits for a request (idle, or its head still arriving) it is on its `Server`'s `waiting` list, so a
    stopping server closes it at once, and a server at its connection cap can close the longest waiting.
    """

    _head_timer: Timeout | None = None
    _requests = 0
    #: Its connection is gone: closed by its server to make room (`Server.handle`), or broken under a read. Whatever
    #: the read then makes of it is no one's error, and there is no one to answer.
    gone = False

    def __init__(self, sock, address, server, rfile=None):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # not a TCP socket (a unix socket, say)
            pass
        super().__init__(sock, address, server, rfile)

    def handle_one_request(self):
        try:
            return super().handle_one_request()
        except HeadTimedOut:
            return "408", self.server.refusals["request-timeout"]
        finally:
            self._stop_head_timer()

    def handle(self):
        # gevent's loop, but for its close: gevent reads 16 KiB of what the client still sends, then closes, and a
        # close with bytes unread resets the connection, which can cost the client the answer it was just sent
        try:
            while self.socket is not None:
                self.time_start = time.time()
                self.time_finish = 0
                result = self.handle_one_request()
                if result is None:
                    break
                if result is True:
                    continue
                self.status, answer = result  # refused before any app: 400, 408, 414
                if not self.gone:
                    with contextlib.suppress(OSError):  # the client may be gone: nothing to tell it then
                        self.socket.sendall(answer)
                    self.time_finish = time.time()
                    self.log_request()
                break
        finally:
            self.server.at_work(self)
            if self.socket is not None:
                close_lingering(self.socket, self.rfile)
            for name in ("socket", "rfile", "wsgi_input"):  # as gevent does: nothing of the connection kept
                self.__dict__.pop(name, None)

    def read_requestline(self):
        server = self.server
        if server.closed:  # stopping: no further request on this connection
            return ""
        server.waiting_for_request(self)
        if self._requests:  # kept alive: the head's deadline starts with its first byte
            with Timeout(server.arrival.idle_seconds, False):
                if not self.rfile.peek(1):
                    return ""  # the client closed
                self._head_timer = Timeout.start_new(server.arrival.head_seconds, HeadTimedOut)
            if self._head_timer is None:
                return ""  # idle past its time: closed
        else:  # a new connection: its deadline started when it was accepted
            self._head_timer = Timeout.start_new(server.arrival.head_seconds, HeadTimedOut)
        self._requests += 1
        return super().read_requestline()

    def read_request(self, raw_requestline):
        try:
            return super().read_request(raw_requestline)
        finally:
            self._stop_head_timer()
            self.server.at_work(self)

    def _handle_client_error(self, ex):
        if isinstance(ex, OSError):  # the connection broke under the head's read (gevent would print a traceback)
            self.gone = True
            return "400", b""
        return super()._handle_client_error(ex)

    def log_error(self, msg, *args):
        if not self.gone:
            super().log_error(msg, *args)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.close()
            self._head_timer = None

    def start_response(self, status, headers, exc_info=None):
        if self.close_connection and not any(name.lower() == "connection" for name, _ in headers):
            headers = [*headers, ("Connection", "close")]  # gevent says so only to HTTP/1.0 clients
        return super().start_response(status, headers, exc_info)

    def get_environ(self):
        environ = super().get_environ()
        # gevent made its Input; the same with a stall deadline and a bounded discard
        body = self.wsgi_input
        self.wsgi_input = environ["wsgi.input"] = BoundedInput(
            body.rfile, body.content_length, body.socket, body.chunked_input, handler=self,
            stall_seconds=self.server.arrival.body_stall_seconds)
        return environ


class Server(WSGIServer):
    """A WSGIServer whose stop lets requests in flight finish and closes waiting connections at once, which holds
    its clients to its `arrival` deadlines and caps its connections (see `Arrival`)."""

    handler_class = NoDelayHandler

    def __init__(self, listener, application, log=None, *, arrival: Arrival | None = None,
                 refusals: dict[str, bytes] | None = None, **kwargs):
        # A pool so that stop() can wait for the handlers; gevent's default spawn keeps no track. The cap is ours
        # (`handle`): a full pool stops accepting and leaves new connections in the kernel's backlog, so the pool has
        # room for twice the cap, the rest being connections refused at once (gunicorn's own pool is replaced).
        # No access log unless asked for ("default" is stderr): the service logs each request itself.
        kwargs.pop("spawn", None)
        arrival = arrival or Arrival()
        super().__init__(listener, application, spawn=Pool(2 * arrival.max_connections), log=log, **kwargs)
        self.arrival = arrival
        self.refusals = {**REFUSALS, **(refusals or {})}
        self.connections = 0
        self.shed = 0
        #: Connections waiting for a request, longest waiting first (a dict keeps the order they came in).
        self.waiting: dict[WSGIHandler, None] = {}
        self.environ[SATURATED_ENVIRON] = self.saturated

    def waiting_for_request(self, handler: WSGIHandler) -> None:
        self.waiting.pop(handler, None)
        self.waiting[handler] = None

    def at_work(self, handler: WSGIHandler) -> None:
        self.waiting.pop(handler, None)

    def saturated(self) -> bool:
        """At the connection cap with no connection waiting that a new one could take the place of."""
        return self.connections >= self.arrival.max_connections and not self.waiting

    def handle(self, sock, address):
        if self.connections >= self.arrival.max_connections and not self._close_longest_waiting():
            self.shed += 1
            refuse(sock, self.refusals["busy"])
            return
        self.connections += 1
        try:
            super().handle(sock, address)
        finally:
            self.connections -= 1

    def _close_longest_waiting(self) -> bool:
        while self.waiting:
            handler = next(iter(self.waiting))
            self.at_work(handler)
            if _shut(handler):
                return True
        return False

    def close(self) -> None:
        super().close()
        for handler in list(self.waiting):
            _shut(handler)


#: Where a serving app finds its server's `saturated()`, to say so in its readiness.
SATURATED_ENVIRON = "serving.saturated"


def _shut(handler: WSGIHandler) -> bool:
    """Wake a handler's read with end-of-file, so it returns and closes its connection; False if it is gone."""
    handler.gone = True
    try:
        handler.socket.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):  # already gone
        return False
    return True


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


def serve(server: Server, *, ready: str, notes: Iterable[str] = (), grace: float = DEFAULT_GRACE_SECONDS) -> int:
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
