"""A deliberately misbehaving HTTP/1.1 endpoint on 127.0.0.1, for the transport tests.

Socket level rather than WSGI, so each fault is exactly what it says: a body cut off mid-way, a
reset, a drip, a gigabyte that is generated as it is sent and never held. It runs in this process
under gevent (the test process is monkey-patched), on an ephemeral port, and is stopped by its fixture.
Routes are chosen by the first path segment; the rest of the path holds the route's arguments.
`/together/<group>/<count>?wait=S` is the mock backend's gathering (mock_backend.gathering), so a check that calls
ran at once sees them meet instead of timing them.
"""
from __future__ import annotations

import json
import socket
import ssl
import struct
import zlib
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Callable, Iterable
from urllib.parse import parse_qs, unquote

import gevent
from gevent.server import StreamServer

from mock_backend.gathering import Gatherings

GIB = 1 << 30
_BLOCK = b"x" * 65_536


@dataclass
class Received:
    """One request as it arrived: the raw target, every header line, the body."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def header_names(self) -> set[str]:
        return {k.lower() for k, _ in self.headers}


def gzip_bytes(chunks: Iterable[bytes]) -> bytes:
    """Gzip the given chunks incrementally (so a bomb's plaintext is never held whole)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: the gzip container
    out = [compressor.compress(chunk) for chunk in chunks]
    out.append(compressor.flush())
    return b"".join(out)


def gzip_bomb(decoded_mib: int = 32) -> bytes:
    """A small gzip payload that decompresses to `decoded_mib` MiB of zeros (32: two thousand times the cap, and
    eight times the memory growth the tests allow, yet made in a fraction of the 128 MiB one's seconds)."""
    zeros = bytes(1 << 20)
    return gzip_bytes([zeros] * decoded_mib)


@dataclass
class Endpoint:
    """The server. `received` and `connections` let tests see what actually arrived."""

    ssl_context: ssl.SSLContext | None = None
    received: list[Received] = field(default_factory=list)
    connections: int = 0
    closed: int = 0  # connections this side has closed
    after_end_sent: int = 0  # times /after-end finished sending its extra bytes
    bomb: bytes = b""
    server_names: list[str | None] = field(default_factory=list)  # SNI, for TLS endpoints
    gatherings: Gatherings = field(default_factory=Gatherings)

    def __post_init__(self) -> None:
        if self.ssl_context is not None:
            self.ssl_context.sni_callback = lambda _sock, name, _context: self.server_names.append(name)
        self._server = StreamServer(("127.0.0.1", 0), self._serve)
        self._server.start()
        self.port = self._server.server_port

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def stop(self) -> None:
        self._server.stop(timeout=1)

    # -- connection handling ------------------------------------------------------------------

    def _serve(self, sock: socket.socket, _address: object) -> None:
        self.connections += 1
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is not None:
            try:
                sock = self.ssl_context.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                return  # the client refused our certificate: exactly what some tests want
        reader = sock.makefile("rb")
        try:
            while True:
                request = _read_request(reader)
                if request is None:
                    return
                self.received.append(request)
                if not self._route(sock, request):
                    return
        except OSError:
            return  # the client went away mid-response: expected whenever it stops reading
        finally:
            reader.close()
            sock.close()
            self.closed += 1

    def _route(self, sock: socket.socket, request: Received) -> bool:
        """Answer one request; False closes the connection afterwards."""
        name, *args = [unquote(p) for p in request.target.split("?")[0].split("/")[1:]]
        route = _ROUTES.get(name)
        if route is None:
            _respond(sock, 404, b"no such route")
            return True
        return route(self, sock, request, *args)


def _read_request(reader) -> Received | None:
    line = reader.readline(65_536)
    if not line:
        return None
    method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers = []
    while (line := reader.readline(65_536)) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    length = int(next((v for k, v in headers if k.lower() == "content-length"), "0"))
    return Received(method, target, headers, reader.read(length) if length else b"")


def _head(sock: socket.socket, status: int, headers: list[tuple[str, str]]) -> None:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"] + [f"{k}: {v}" for k, v in headers]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def _respond(sock: socket.socket, status: int, body: bytes = b"", headers: list[tuple[str, str]] = (),
             content_type: str = "text/plain; charset=utf-8") -> None:
    head = [("Content-Type", content_type), *headers]
    if status not in (204, 304):
        head.append(("Content-Length", str(len(body))))
    _head(sock, status, head)
    sock.sendall(body)


def _stream_forever(sock: socket.socket, status: int, headers: list[tuple[str, str]] = ()) -> bool:
    """Announce a gigabyte and keep sending it until the client hangs up (it never gets that far)."""
    _head(sock, status, [("Content-Type", "text/plain"), ("Content-Length", str(GIB)), *headers])
    for _ in range(GIB // len(_BLOCK)):
        sock.sendall(_BLOCK)
    return True


def _text(ep, sock, request, status, body=""):
    _respond(sock, int(status), body.encode("utf-8"))
    return True


def _empty(ep, sock, request, status):
    _respond(sock, int(status))
    return True


def _chars(ep, sock, request, count, char):
    _respond(sock, 200, (char * int(count)).encode("utf-8"))
    return True


def _chunked_chars(ep, sock, request, count, char):
    body = (char * int(count)).encode("utf-8")
    _head(sock, 200, [("Content-Type", "text/plain; charset=utf-8"), ("Transfer-Encoding", "chunked")])
    for start in range(0, len(body), 1000):
        piece = body[start:start + 1000]
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
    sock.sendall(b"0\r\n\r\n")
    return True


def _gzip_chars(ep, sock, request, count, char):
    body = gzip_bytes([(char * int(count)).encode("utf-8")])
    _respond(sock, 200, body, [("Content-Encoding", "gzip")])
    return True


def _charset(ep, sock, request, name, encode_as):
    """ "café" encoded as `encode_as`, labelled with whatever charset `name` says."""
    _respond(sock, 200, "café".encode(encode_as), content_type=f"text/plain; charset={name}")
    return True


def _huge(ep, sock, request, status="200"):
    return _stream_forever(sock, int(status))


def _bomb(ep, sock, request):
    _respond(sock, 200, ep.bomb, [("Content-Encoding", "gzip")])
    return True


def _drip(ep, sock, request, interval="1"):
    _head(sock, 200, [("Content-Type", "text/plain"), ("Content-Length", "100")])
    for _ in range(100):
        sock.sendall(b"x")
        gevent.sleep(float(interval))
    return True


def _sleep(ep, sock, request, seconds):
    gevent.sleep(float(seconds))
    _respond(sock, 200, b"slept")
    return True


def _together(ep, sock, request, group, count):
    """Answer once `count` calls of `group` are here at once (`met: true`), or alone after `wait` seconds."""
    wait = float(parse_qs(request.target.partition("?")[2]).get("wait", ["5"])[0])
    gathered = ep.gatherings.join(group, int(count), wait)
    body = {"met": gathered.met, "most_present": gathered.most_present}
    _respond(sock, 200, json.dumps(body).encode(), content_type="application/json")
    return True


def _redirect(ep, sock, request, kind):
    location = [("Location", "/text/200/followed")]
    if kind == "huge":
        return _stream_forever(sock, 302, location)
    _respond(sock, 302, b"moved to /text/200/followed" if kind == "body" else b"", location)
    return True


def _cut(ep, sock, request, how):
    """Promise 1000 bytes, send 100, then close: gently (FIN) or with a reset (SO_LINGER 0)."""
    _head(sock, 200, [("Content-Type", "text/plain"), ("Content-Length", "1000")])
    sock.sendall(b"x" * 100)
    if how == "reset":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return False


def _echo(ep, sock, request, *rest):
    seen = {"method": request.method, "target": request.target, "headers": request.headers,
            "body": request.body.decode("utf-8", "replace")}
    _respond(sock, 200, json.dumps(seen).encode(), content_type="application/json")
    return True


def _set_cookie(ep, sock, request):
    _respond(sock, 200, b"ok", [("Set-Cookie", "session=stolen; Path=/"), ("Set-Cookie", "id=1")])
    return True


def _head_bytes(ep, sock, request, size):
    """A head of exactly `size` bytes (status line to the blank line), sent in pieces, then "ok"."""
    start, end = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: ", b"\r\n\r\n"
    head = start + b"p" * (int(size) - len(start) - len(end)) + end
    for at in range(0, len(head), 1000):
        sock.sendall(head[at:at + 1000])
        gevent.sleep(0)  # so the head arrives over several reads
    sock.sendall(b"ok")
    return True


def _long_header(ep, sock, request, size):
    """One header line of `size` bytes, then a proper end; the client should hang up long before."""
    sock.sendall(b"HTTP/1.1 200 OK\r\nX-Long: ")
    for _ in range(int(size) // len(_BLOCK)):
        sock.sendall(_BLOCK)
    sock.sendall(b"\r\nContent-Length: 2\r\n\r\nok")
    return True


def _endless_headers(ep, sock, request):
    """8 KB header lines that never end, up to a gigabyte, until the client hangs up."""
    line = b"X-More: " + b"m" * 8_182 + b"\r\n"
    sock.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(GIB // len(line)):
        sock.sendall(line)
    return False


#: What /after-end sends after a complete answer: a whole second response, as a smuggler would.
SMUGGLED = b"HTTP/1.1 404 Not Found\r\nContent-Length: 6\r\n\r\npoison"


def _after_end(ep, sock, request, status, when):
    """A complete answer (bodiless for 204, 304 and HEAD), then SMUGGLED in the same write or a moment later."""
    bodiless = int(status) in (204, 304) or request.method == "HEAD"
    answer = f"HTTP/1.1 {status} {HTTPStatus(int(status)).phrase}\r\n".encode()
    answer += b"\r\n" if int(status) in (204, 304) else b"Content-Length: 2\r\n\r\n"
    answer += b"" if bodiless else b"ok"
    if when == "with-the-answer":
        sock.sendall(answer + SMUGGLED)
    else:
        sock.sendall(answer)
        gevent.sleep(0.05)
        sock.sendall(SMUGGLED)
    ep.after_end_sent += 1
    return True


def _interim(ep, sock, request):
    sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n")
    _respond(sock, 200, b"final")
    return True


def _drip_head(ep, sock, request):
    sock.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(100):
        sock.sendall(b"X-Slow: 1\r\n")
        gevent.sleep(0.1)
    return False


def _hang_up(ep, sock, request, when):
    """Answer with the connection kept alive, then close it: at once, or on the next request unanswered."""
    _respond(sock, 200, b"ok")
    if when == "next-request":
        sock.recv(65_536)  # the client sends it only after reading the answer, so nothing is buffered
    return False


_ROUTES: dict[str, Callable[..., bool]] = {
    "text": _text, "empty": _empty, "chars": _chars, "chunked-chars": _chunked_chars,
    "gzip-chars": _gzip_chars, "charset": _charset, "huge": _huge, "bomb": _bomb, "drip": _drip,
    "sleep": _sleep, "together": _together, "redirect": _redirect, "cut": _cut, "echo": _echo, "set-cookie": _set_cookie,
    "head-bytes": _head_bytes, "long-header": _long_header, "endless-headers": _endless_headers,
    "after-end": _after_end, "interim": _interim, "drip-head": _drip_head, "hang-up": _hang_up,
}
