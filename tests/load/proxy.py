"""A TCP proxy on 127.0.0.1 in front of PostgreSQL, so a test can take the database away as a network would.

`down()` stops listening (new connections are refused, as by a database that is not there) and cuts every open
connection; `up()` listens again on the same port; `cut()` only cuts the open ones, as a restart or a network
fault does mid-burst.
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

import gevent
from gevent.server import StreamServer

CHUNK_BYTES = 65_536


class TcpProxy:
    """Forwards every connection to `target`; each accepted pair of sockets is kept so it can be cut."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: StreamServer | None = None
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()

    def up(self) -> None:
        """Listen (again, on the same port once it has one)."""
        self._server = StreamServer(("127.0.0.1", self.port), self._forward)
        self._server.init_socket()
        self._server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.start()
        self.port = self._server.server_port

    def down(self) -> None:
        """Refuse new connections and cut the open ones."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self.cut()

    def cut(self) -> None:
        """Cut every open connection, in both directions, at once."""
        for pair in list(self._pairs):
            for sock in pair:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def url(self, database_url: str) -> str:
        """`database_url` pointed at this proxy instead of the database itself."""
        parts = urlsplit(database_url)
        netloc = f"{parts.username}@127.0.0.1:{self.port}" if parts.username else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def _forward(self, client: socket.socket, _address) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        pair = (client, upstream)
        self._pairs.add(pair)
        try:
            gevent.joinall([gevent.spawn(_pipe, client, upstream), gevent.spawn(_pipe, upstream, client)])
        finally:
            self._pairs.discard(pair)
            for sock in pair:
                sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(CHUNK_BYTES):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, sink):  # one side gone: end the other too, as a broken link does
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
