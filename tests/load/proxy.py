"""A TCP proxy on 127.0.0.1 in front of PostgreSQL, so a test can take the database away as a network would.

`down()` stops listening (new connections are refused, as by a database that is not there) and cuts every open
connection; `up()` listens again on the same port; `cut()` only cuts the open ones, as a restart or a network
fault does mid-burst. `freeze()` stops forwarding bytes both ways while every socket stays open, as a network that
drops everything does (nothing is refused, nothing is closed, nothing answers); `thaw()` delivers what was held and
forwards again.
"""
from __future__ import annotations

import contextlib
import socket
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit, urlunsplit

import gevent
import gevent.event
from gevent.server import StreamServer

from tests.support.constants import POSTGRES_URL
from tests.support.databases import fresh_postgres_schema
from tests.support.live import LiveService, live_service

CHUNK_BYTES = 65_536


class TcpProxy:
    """Forwards every connection to `target`; each accepted pair of sockets is kept so it can be cut."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: StreamServer | None = None
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._flowing = gevent.event.Event()
        self._flowing.set()

    def up(self) -> None:
        """Listen (again, on the same port once it has one)."""
        self._server = StreamServer(("127.0.0.1", self.port), self._forward)
        self._server.init_socket()
        self._server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.start()
        self.port = self._server.server_port

    def down(self) -> None:
        """Refuse new connections and cut the open ones (a frozen proxy thaws first, so its goodbyes go out)."""
        self.thaw()
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

    def freeze(self) -> None:
        """Hold every byte, both ways, on every connection, open or still to come (a new one is accepted but hears
        nothing back)."""
        self._flowing.clear()

    def thaw(self) -> None:
        """Deliver what was held and forward again."""
        self._flowing.set()

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
        upstream.settimeout(None)  # the 5 s were for connecting: a quiet link is not a broken one
        pair = (client, upstream)
        self._pairs.add(pair)
        try:
            gevent.joinall([gevent.spawn(_pipe, client, upstream, self._flowing),
                            gevent.spawn(_pipe, upstream, client, self._flowing)])
        finally:
            self._pairs.discard(pair)
            for sock in pair:
                sock.close()


def _pipe(source: socket.socket, sink: socket.socket, flowing: gevent.event.Event) -> None:
    try:
        while chunk := source.recv(CHUNK_BYTES):
            flowing.wait()  # frozen: the chunk is held, not lost, as TCP keeps retransmitting it
            sink.sendall(chunk)
        flowing.wait()  # and so is a goodbye
    except OSError:
        pass
    finally:
        for sock in (source, sink):  # one side gone: end the other too, as a broken link does
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@contextlib.contextmanager
def proxied_service(tmp_path: Path, **settings) -> Iterator[tuple[LiveService, TcpProxy]]:
    """A live service (Config fields `settings`) on a fresh schema of the test PostgreSQL, reached through a TcpProxy
    the test controls; yields (service, proxy). The proxy is taken down (thawed first) whatever the test left."""
    target = urlsplit(POSTGRES_URL)
    proxy = TcpProxy((target.hostname, target.port or 5432))
    proxy.up()
    try:
        with fresh_postgres_schema(POSTGRES_URL) as url, live_service(tmp_path, proxy.url(url), **settings) as service:
            yield service, proxy
    finally:
        proxy.down()

