"""The HTTP client on the call path: geventhttpclient's C parser and socket pools, behind the guards.

Measured side by side on the platform's own path (bench/call_overhead.py, bench/JOURNAL.md), a
`requests` Session costs about five times the CPU per call of geventhttpclient, and urllib3 alone
about two and a half times (both live on in bench/engines.py, as references). Only the parser and the
pool of sockets are taken from geventhttpclient; the request is written here, so nothing it does by
default reaches a tool call:

- each new connection resolves the host once (with its own DNS budget), checks every address with
  the AddressGuard and connects only to an allowed one, the same one it checked;
- no proxy and no .netrc are ever looked at, no cookie is stored, no redirect is followed, nothing
  is retried;
- TLS always verifies the certificate against the URL's host name, with no way to turn it off;
- the status line and headers are read within MAX_RESPONSE_HEAD_BYTES, under the call's deadline;
- a connection is returned to its pool only when its response was read to the end and nothing came
  after it; a head past the cap, a body cut off at the cap, left unread or broken mid-way, or bytes
  after a complete answer (a 204, a 304, the answer to HEAD) close its socket.
"""
from __future__ import annotations

import socket
import ssl
from collections import OrderedDict
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlsplit

import certifi
import gevent
import gevent.ssl
from gevent import monkey
from geventhttpclient.connectionpool import ConnectionPool
from geventhttpclient.response import (
    HTTPConnectionClosed,
    HTTPParseError,
    HTTPSocketPoolResponse,
    HTTPSocketResponse,
)

from service.definition import BODY_METHODS
from service.dispatch import connection
from service.dispatch.build import BuiltRequest
from service.dispatch.guard import AddressGuard
from service.dispatch.reading import CHUNK_BYTES
from service.limits import CALL_DEADLINE_SECONDS, MAX_CONNECTIONS_PER_HOST, MAX_RESPONSE_HEAD_BYTES

#: How many hosts keep a pool of open connections; further hosts evict the least recently used.
HOST_POOLS = 100

#: Sent on every call; the Authorization header is added per call. Only encodings decoded as the
#: body streams are offered, so a compressed body is always measured by what it expands to.
DEFAULT_HEADERS = {"User-Agent": "Toolgate", "Accept": "*/*", "Accept-Encoding": "gzip, deflate"}

#: What a request target may hold unencoded, as requests requotes it: build.py has already
#: percent-encoded every model value, so this only touches a definition's own literal text.
_TARGET_SAFE = "!#$%&'()*+,/:;=?@[]~"
_FIXED_HEADERS = "".join(f"{name}: {value}\r\n" for name, value in DEFAULT_HEADERS.items())
# The unpatched select: asking whether an idle socket is readable must not yield to the hub.
_select = monkey.get_original("select", "select")


class AddressDenied(ConnectionError):
    """Every address the host resolved to is one the guard refuses (a transport error)."""


class NameResolutionError(ConnectionError):
    """The host's name did not resolve, or not within its budget (a transport error)."""


class ResponseHeadTooLarge(HTTPParseError):
    """The status line and headers ran past MAX_RESPONSE_HEAD_BYTES (a transport error)."""


class _BytesAfterTheEnd(Exception):
    """Stops the parser at the first byte past a complete final answer."""


class GuardedResponse(HTTPSocketPoolResponse):
    """A response whose head is read within a cap, and whose socket is reused only if it is in step.

    geventhttpclient reads a head of any size: it joins each header's pieces by concatenation, which
    is quadratic (a 16 MiB header line took 9 s of CPU), and a peer that keeps the socket
    readable never makes recv wait, so the worker never yields and no deadline can fire. Its parser
    also reads bytes after a complete answer as a new answer that replaces it (a 204 followed by
    a smuggled 200 became that 200).
    """

    def _read_headers(self, pre_buffered: bytes = b"") -> None:
        del pre_buffered  # open() never reads ahead of the response
        sock = self._sock
        assert sock is not None
        room = MAX_RESPONSE_HEAD_BYTES
        try:
            while True:
                if room <= 0:
                    raise ResponseHeadTooLarge(f"status line and headers past {MAX_RESPONSE_HEAD_BYTES} bytes")
                # Never asks past the cap, so a head of exactly the cap passes and one byte more does not.
                data = sock.recv(min(self.block_size, room))
                if not data:
                    raise HTTPConnectionClosed("connection closed before the end of the headers")
                room -= len(data)
                self.feed(data)
                if self.headers_complete and self.get_code() >= 200:  # interim 1xx answers come first
                    return
                # recv returns at once while bytes keep arriving; yield so the deadline and other
                # greenlets run while a long head streams in.
                gevent.sleep(0)
        except BaseException:
            self.release()  # the head did not complete, so this closes the socket
            raise

    def feed(self, data: str | bytes) -> None:
        try:
            super().feed(data)
        except _BytesAfterTheEnd:
            # Whatever the endpoint meant by them, the connection is out of step: close it on release.
            self._trailing_data_dropped = True

    def _on_message_begin(self) -> None:
        if self.message_complete and self.get_code() >= 200:
            raise _BytesAfterTheEnd
        super()._on_message_begin()

    def _on_message_complete(self) -> None:
        # HTTPSocketResponse would hand the socket back to its pool from inside feed(), before the
        # bytes fed after the answer's end are seen; release() decides once they have been.
        super(HTTPSocketResponse, self)._on_message_complete()


def ca_bundle() -> str:
    """The CA bundle TLS verifies against: certifi's, the one requests would use.

    Read when a host's pool is made rather than at import, so a test can point it elsewhere.
    """
    return certifi.where()


@lru_cache(maxsize=4)
def _tls_context(cafile: str) -> gevent.ssl.SSLContext:
    # Built once per CA bundle: loading it costs milliseconds, and every pool can share it.
    context = gevent.ssl.create_default_context(cafile=cafile)
    context.check_hostname = True
    context.verify_mode = gevent.ssl.CERT_REQUIRED
    return context


class GuardedPool(ConnectionPool):
    """One host's kept-alive sockets, each connected only to an address the guard allows."""

    def __init__(self, guard: AddressGuard, scheme: str, host: str, port: int, size: int) -> None:
        super().__init__(host, port, host, port, size=size, connection_timeout=CALL_DEADLINE_SECONDS,
                         network_timeout=CALL_DEADLINE_SECONDS)
        self.guard = guard
        self.tls = _tls_context(ca_bundle()) if scheme == "https" else None

    def _resolve(self) -> list[tuple[Any, ...]]:
        # Resolved once per new connection; the addresses returned are the ones connected to.
        try:
            candidates = connection.resolve(self._connection_host, self._connection_port)
        except socket.gaierror as exc:
            raise NameResolutionError(f"Failed to resolve {self._connection_host!r} ({exc})") from exc
        allowed, denied = [], []
        for candidate in candidates:
            reason = self.guard.denial(candidate[4][0])
            if reason is None:
                allowed.append(candidate)
            else:
                denied.append(f"{candidate[4][0]} is {reason}")
        if not allowed:
            raise AddressDenied(f"{self._connection_host} may not be reached: {'; '.join(denied) or 'no address'}")
        return allowed

    def _connect_socket(self, sock: socket.socket, address: Any) -> socket.socket:
        sock.connect(address)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is None:
            return sock
        try:
            return self.tls.wrap_socket(sock, server_hostname=self._request_host)
        except ssl.SSLError as exc:
            # One name for every TLS failure (ssl raises subclasses such as SSLCertVerificationError),
            # so logs and details read the same whichever check refused the peer.
            raise ssl.SSLError(exc.errno, str(exc)) from exc

    def _is_socket_alive(self, sock: socket.socket | None) -> bool:
        # An idle kept-alive socket that is readable has been closed by the server (or sent junk).
        try:
            return sock is not None and sock.fileno() >= 0 and not _select([sock], [], [], 0.0)[0]
        except (OSError, ValueError):
            return False


#: URLs up to this long have their parse remembered (most calls repeat their tool's URL); with the cache's size, this
#: bounds its memory to about a megabyte.
_REMEMBERED_URL_CHARS = 512


def _request_line(method: str, url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, the request line with the Host and fixed headers) for a call."""
    if len(url) <= _REMEMBERED_URL_CHARS:
        return _remembered_request_line(method, url)
    return _parse_request_line(method, url)


def _parse_request_line(method: str, url: str) -> tuple[str, str, int, str]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host.isascii():
        host = host.encode("idna").decode("ascii")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = quote(parts.path or "/", safe=_TARGET_SAFE) + (
        "?" + quote(parts.query, safe=_TARGET_SAFE) if parts.query else "")
    host_header = parts.netloc if parts.netloc.isascii() else host + (f":{parts.port}" if parts.port else "")
    return parts.scheme, host, port, f"{method} {target} HTTP/1.1\r\nHost: {host_header}\r\n{_FIXED_HEADERS}"


_remembered_request_line = lru_cache(maxsize=1024)(_parse_request_line)


class GuardedClient:
    """Pools of connections per host (the least recently used evicted past HOST_POOLS), all guarded."""

    def __init__(self, guard: AddressGuard, pool_size: int = MAX_CONNECTIONS_PER_HOST) -> None:
        self.guard = guard
        self.pool_size = pool_size
        self._pools: OrderedDict[tuple[str, str, int], GuardedPool] = OrderedDict()

    def pool(self, scheme: str, host: str, port: int) -> GuardedPool:
        """The pool for one origin, made on first use."""
        key = (scheme, host, port)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = GuardedPool(self.guard, scheme, host, port, self.pool_size)
            if len(self._pools) > HOST_POOLS:
                self._pools.popitem(last=False)[1].close()
        else:
            self._pools.move_to_end(key)
        return pool

    def open(self, request: BuiltRequest, authorization: str | None) -> GuardedResponse:
        """Send `request` (with `authorization` as its Authorization header; None: no credential at all, as when
        the registry fetches a document) and return the response with its headers read and its body still unread.

        The caller must `release()` it: after a complete read the socket goes back to its pool,
        otherwise it is closed.
        """
        scheme, host, port, start = _request_line(request.method, request.url)
        head = start
        for name, value in request.headers.items():
            head += f"{name}: {value}\r\n"
        body = request.body or b""
        if body or request.method in BODY_METHODS:
            head += f"Content-Length: {len(body)}\r\n"
        if authorization is not None:
            if "\r" in authorization or "\n" in authorization:
                raise ValueError("an Authorization value cannot hold a line break")
            head += f"Authorization: {authorization}\r\n"
        payload = (head + "\r\n").encode("latin-1") + body

        pool = self.pool(scheme, host, port)
        sock = pool.get_socket()
        try:
            sock.sendall(payload)
        except BaseException:  # a deadline included: a socket whose request broke mid-way is never reused
            pool.release_socket(sock)
            raise
        # Reads the status line and headers; on any failure it closes the socket itself.
        return GuardedResponse(sock, pool, block_size=CHUNK_BYTES, method=request.method)

    def close(self) -> None:
        """Close every pool's idle sockets (sockets in use close when released)."""
        while self._pools:
            self._pools.popitem()[1].close()
