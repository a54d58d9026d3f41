"""A bare HTTP/1.1 endpoint for the benchmarks: no framework, no assertion check, keep-alive, Nagle off.

The mock backend verifies every assertion, which is right for tests and wrong for measuring the
platform: its own CPU per request would be counted against the platform. This endpoint parses just
enough HTTP to answer, so what is measured is the client's side. Routes (any method):

- `/fast`               200 with a 12-byte JSON body
- `/sleep/<seconds>`    sleeps (at most MAX_SLEEP_SECONDS), then answers like /fast
- `/bytes/<n>`          n bytes of "a" (at most MAX_BYTES), streamed from one preallocated block
- `/gzip-bomb`          a gzip body that decodes to GZIP_BOMB_DECODED_BYTES of "a"

Run it as `python -m bench.endpoint [--port 0]`: it prints `port N` once listening.
"""
from __future__ import annotations

from gevent import monkey

if __name__ == "__main__":
    monkey.patch_all()

import argparse
import socket
import sys
import zlib

import gevent
from gevent.server import StreamServer

MAX_SLEEP_SECONDS = 15.0
MAX_BYTES = 1 << 30
GZIP_BOMB_DECODED_BYTES = 1 << 30
BLOCK = b"a" * (1 << 20)
MAX_HEAD_BYTES = 65_536
LISTEN_BACKLOG = 4_096
FAST_BODY = b'{"ok": true}'

_bomb: bytes | None = None


def _head(status: str, length: int, extra: bytes = b"") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n".encode()
            + extra + b"\r\n")


FAST_RESPONSE = _head("200 OK", len(FAST_BODY)) + FAST_BODY
NOT_FOUND = _head("404 Not Found", 0)


def gzip_bomb() -> bytes:
    """A gzip member that inflates to GZIP_BOMB_DECODED_BYTES, built once (about 1 MB on the wire)."""
    global _bomb
    if _bomb is None:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        parts = [compressor.compress(BLOCK) for _ in range(GZIP_BOMB_DECODED_BYTES // len(BLOCK))]
        _bomb = b"".join(parts) + compressor.flush()
    return _bomb


def _respond(sock: socket.socket, target: bytes) -> None:
    path = target.split(b"?", 1)[0]
    if path == b"/fast":
        sock.sendall(FAST_RESPONSE)
    elif path.startswith(b"/sleep/"):
        gevent.sleep(min(float(path[7:]), MAX_SLEEP_SECONDS))
        sock.sendall(FAST_RESPONSE)
    elif path.startswith(b"/bytes/"):
        remaining = min(int(path[7:]), MAX_BYTES)
        sock.sendall(_head("200 OK", remaining).replace(b"application/json", b"text/plain"))
        while remaining:
            piece = BLOCK if remaining >= len(BLOCK) else BLOCK[:remaining]
            sock.sendall(piece)
            remaining -= len(piece)
    elif path == b"/gzip-bomb":
        body = gzip_bomb()
        sock.sendall(_head("200 OK", len(body), b"Content-Encoding: gzip\r\n") + body)
    else:
        sock.sendall(NOT_FOUND)


def handle(sock: socket.socket, _address) -> None:
    """Serve one connection: requests one after another until the client closes or breaks it."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = b""
    try:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = sock.recv(65_536)
                if not data or len(buffer) > MAX_HEAD_BYTES:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            target = lines[0].split(b" ")[1]
            length = 0
            for line in lines[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            while len(buffer) < length:
                data = sock.recv(65_536)
                if not data:
                    return
                buffer += data
            buffer = buffer[length:]
            try:
                _respond(sock, target)
            except ValueError:  # a number in the path that does not parse
                sock.sendall(NOT_FOUND)
    except OSError:  # the client went away mid-answer (a capped read closes early): nothing to do
        return
    finally:
        sock.close()


def make_server(host: str = "127.0.0.1", port: int = 0) -> StreamServer:
    """A bound, not yet serving endpoint (port 0 picks one: read `server.server_port`)."""
    listener = socket.create_server((host, port), backlog=LISTEN_BACKLOG)
    return StreamServer(listener, handle)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.endpoint", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--bomb", action="store_true", help="build the gzip bomb before listening")
    args = parser.parse_args(argv)
    if args.bomb:
        gzip_bomb()
    server = make_server(args.host, args.port)
    server.start()
    print(f"port {server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
