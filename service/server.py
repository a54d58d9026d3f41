"""The service's process under gevent: sized for thousands of waiting steps, served by the one serve loop with a
handler that reads a request head in one strict pass and writes each answer at once.

The loop itself (bind first, print the bound URL, TCP_NODELAY, the listen backlog, a clean stop on SIGTERM)
lives in the top-level `serving` package, which the mock backend shares without importing the service.
"""
from __future__ import annotations

import logging
import resource
import select
import socket
from typing import Iterator

from service.errors import busy, request_timeout
from service.limits import BUSY_RETRY_AFTER_SECONDS
from serving import Arrival, NoDelayHandler, Server, listen
from serving.arrival import refusal

#: The server's own lines, under the service's logger: one JSON line each (`service.records.logs` formats them).
_log = logging.getLogger("service.server")

#: The longest header line and the most header fields a request may carry (http.client's own bounds).
MAX_HEADER_LINE = 65_536
MAX_HEADER_FIELDS = 100
_END_OF_HEAD = (b"\r\n", b"\n")


class RequestHead:
    """A request's header fields, as gevent's handler reads them (the API of its `headers_factory`).

    gevent parses a head with the email package, ~90 µs a request (bench/profiles/): a fifth of a one-call step's
    own CPU at the time. This reads each line once. It is also stricter: a line without a colon, a folded line
    (obs-fold), whitespace before the colon or two different Content-Lengths make `status` say why, which gevent
    answers 400 (RFC 9112 §5.1, §5.2, §6.3) instead of guessing where a field ends.
    """

    __slots__ = ("fields", "status", "_first")

    def __init__(self, fields: list[tuple[str, str]], status: str = "") -> None:
        self.fields = fields
        self.status = status
        # gevent asks for a field by name about eight times a request: each a lookup here, not a scan of every field
        self._first: dict[str, str] = {}
        for key, value in fields:
            self._first.setdefault(key.lower(), value)

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first field called `name` (any case)."""
        return self._first.get(name.lower(), default)

    getheader = get

    def __delitem__(self, name: str) -> None:
        name = name.lower()
        self.fields = [(key, value) for key, value in self.fields if key.lower() != name]
        self._first.pop(name, None)

    @property
    def typeheader(self) -> str | None:
        return self.get("content-type")

    @property
    def headers(self) -> Iterator[str]:
        return (f"{key}: {value}\r\n" for key, value in self.fields)


def read_head(rfile) -> RequestHead:
    """Read header lines up to the blank line that ends them; a malformed head comes back with its `status` set."""
    fields: list[tuple[str, str]] = []
    while True:
        line = rfile.readline(MAX_HEADER_LINE + 1)
        if line in _END_OF_HEAD:
            break
        if not line.endswith(b"\n") and len(line) <= MAX_HEADER_LINE:  # the connection ended inside the head
            return RequestHead([], "Incomplete head")
        if len(line) > MAX_HEADER_LINE:
            return RequestHead([], "Line too long")
        if len(fields) >= MAX_HEADER_FIELDS:
            return RequestHead([], "Too many headers")
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon or not name or name[0] in " \t" or name[-1] in " \t":
            return RequestHead([], "Malformed header line")
        fields.append((name, value.strip(" \t\r\n")))
    head = RequestHead(fields)
    if len(fields) > len(head._first):  # a name given twice: two different lengths are refused
        lengths = {value for key, value in fields if key.lower() == "content-length"}
        if len(lengths) > 1:
            return RequestHead([], "Conflicting Content-Length")
    return head


#: Where a request's environ holds its client's socket, for `client_gone`.
CLIENT_SOCKET = "toolgate.client_socket"


def client_gone(environ: dict) -> bool:
    """Whether the client of this request has closed its connection (or it broke): the end of its stream is waiting
    to be read. Bytes waiting (a next request, pipelined) are not an end; a request served without a socket (a test
    client) never is. It does not wait: the socket is read only when it is readable now."""
    sock = environ.get(CLIENT_SOCKET)
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):  # reset, or already closed
        return True


class ServiceHandler(NoDelayHandler):
    """The serve loop's handler (TCP_NODELAY, idle connections closed at a stop), with the head read by
    `read_head`, the status line, headers and first body chunk sent in one write, and no access log line of its own
    (the service logs each request itself, with its request id)."""

    _head: bytes | None = None  # the response head, held until the body can go with it

    def MessageClass(self, rfile, *_args) -> RequestHead:  # gevent's name
        return read_head(rfile)

    def get_environ(self) -> dict:
        environ = super().get_environ()
        environ[CLIENT_SOCKET] = self.socket
        return environ

    def _headers(self) -> Iterator[tuple[str, str]]:
        # gevent's, over parsed fields instead of re-splitting text lines: a name with "_" is dropped, as there.
        for key, value in self.headers.fields:
            if "_" not in key:
                key = key.replace("-", "_").upper()
                if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                    yield "HTTP_" + key, value

    def _write_with_headers(self, data) -> None:
        # gevent writes the head, then the body: two sends, and on a kept-alive connection the client wakes for
        # each. The head is held here and goes out with the first chunk of the body (or alone, if there is none).
        self._head = b""
        try:
            super()._write_with_headers(data)
        finally:
            head, self._head = self._head, None
        if head:
            super()._sendall(head)

    def _sendall(self, data) -> None:
        if self._head is None:
            super()._sendall(data)
        elif not self._head:
            self._head = bytes(data)
        else:
            head, self._head = self._head, None
            super()._sendall(head + data)

    def log_request(self) -> None:
        pass

    def log_error(self, msg, *args) -> None:
        # gevent's line for a request it refused itself (a malformed head, a body cut short: a 400), as one WARNING
        # line of the JSON logs instead of text of its own on stderr; nothing for a connection that is gone.
        if self.gone:
            return
        try:
            text = msg % args if args else msg
        except (TypeError, ValueError):  # a % in what the client sent, as gevent guards it
            text = f"{msg!r} {args!r}"
        _log.warning("request refused by the server: %s", text, extra={"fields": {"client": str(self.client_address)}})


#: Threads gevent may use for blocking name lookups. Its default of 10 lets ten lookups that never answer
#: stall every other call's resolution; each lookup already has its own budget inside the call deadline.
RESOLVER_THREADS = 128


def tune_hub() -> None:
    """Size this process for thousands of waiting steps: gevent's thread pool (used for DNS) for a whole step of
    lookups at once, open files for a socket per waiting request and one per call, and the hub's reports of
    exceptions nothing handled as lines of the JSON logs."""
    import gevent

    hub = gevent.get_hub()
    if hub.threadpool.maxsize < RESOLVER_THREADS:
        hub.threadpool.maxsize = RESOLVER_THREADS
    hub.print_exception = _log_unhandled  # gevent's documented way: an attribute of the hub instance
    raise_open_files()


def _log_unhandled(context, t, v, tb) -> None:
    """The hub's report of an exception nothing handled (a greenlet's, a thread pool task's, a request's no app
    answered, which the server then answers 500): one ERROR line of the service's JSON logs with the traceback in
    its `exception` field, where gevent writes the traceback as lines of their own to stderr."""
    if isinstance(context, dict) and "PATH_INFO" in context:  # the server's: the request's environ
        where = f"{context.get('PATH_INFO')} [{context.get('REQUEST_METHOD')}]"
    else:
        where = repr(context)[:200]
    _log.error("Exception on %s", where, exc_info=(t, v, tb) if v is not None else None,
               extra={"fields": {"kind": getattr(t, "__name__", str(t))}})


#: Open files the process asks for: every waiting step holds its client's socket and its calls' sockets. The soft
#: limit is often 1,024, which a few hundred waiting steps exhaust; the hard limit, set by the operator, still bounds.
OPEN_FILES = 65_536


def raise_open_files(want: int = OPEN_FILES) -> None:
    """Raise this process's soft RLIMIT_NOFILE towards `want`, within the hard limit (children inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


#: Where `create_app` leaves the app's `Arrival` (its deadlines for clients, and its connection cap) for its server.
ARRIVAL_KEY = "toolgate_arrival"


#: The service's own words for what its server refuses itself: a head past its deadline, a connection past the cap.
REFUSALS = {refused.code: refusal(refused.status, refused.to_dict(), refused.retry_after)
            for refused in (request_timeout(), busy(BUSY_RETRY_AFTER_SECONDS))}


def service_server(listener, app, **kwargs) -> Server:
    """The service's server for `app` on a bound `listener`: the serve loop's, with the service's handler, refusals
    and the app's `Arrival`. Every way of serving (`toolgate serve`, its gunicorn workers, `toolgate demo`, the
    tests' live services) builds it here; `kwargs` are the serve loop's (gunicorn's environ, its log)."""
    arrival = getattr(app, "extensions", {}).get(ARRIVAL_KEY)  # a bare WSGI app (a test's) has the defaults
    return Server(listener, app, handler_class=ServiceHandler, arrival=arrival or Arrival(), refusals=REFUSALS,
                  **kwargs)


def make_server(app, host: str, port: int) -> Server:
    """A server for `app`, bound now but not yet serving (port 0 picks a free one: read `server.server_port`)."""
    return service_server(listen(host, port), app)
