"""Counting what PostgreSQL is asked: a TCP proxy on 127.0.0.1 that reads the frontend protocol as it passes.

Every statement a client sends, BEGIN and COMMIT included, is one Query message ('Q', the simple protocol psycopg2
uses) or one Parse ('P', the extended one); each is a round trip. The proxy counts them by their first words, so a
benchmark (or a test) states how many statements a step costs from what reached the server, not from an estimate.

    with StatementCounter(("127.0.0.1", 5432)) as counter:
        url = counter.url("postgresql://postgres@127.0.0.1:5432/test")   # point the platform here
        ...; before = counter.total(); ...; counter.total() - before
"""
from __future__ import annotations

import collections
import socket
import struct
import threading
from urllib.parse import urlsplit, urlunsplit

_SSL_REQUEST = 80877103
_GSS_REQUEST = 80877104
CHUNK_BYTES = 65_536


class StatementCounter:
    """A proxy to `target` counting the Query and Parse messages clients send through it."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.statements: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._closed = False

    def __enter__(self) -> "StatementCounter":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_exc) -> None:
        self._closed = True
        self._listener.close()
        for sock in list(self._open):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def url(self, database_url: str) -> str:
        """`database_url` pointed at this proxy, without TLS (so the protocol can be read as it passes)."""
        parts = urlsplit(database_url)
        user = f"{parts.username}{':' + parts.password if parts.password else ''}@" if parts.username else ""
        query = "&".join(filter(None, [parts.query, "sslmode=disable"]))
        return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{self.port}", query=query))

    def total(self) -> int:
        with self._lock:
            return sum(self.statements.values())

    def snapshot(self) -> collections.Counter[str]:
        with self._lock:
            return collections.Counter(self.statements)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._open += [client, upstream]
            threading.Thread(target=self._frontend, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(CHUNK_BYTES):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _frontend(self, client: socket.socket, upstream: socket.socket) -> None:
        """Forward what the client sends, counting its messages: startup packets first (no type byte), then typed."""
        buffer, started = b"", False
        try:
            while data := client.recv(CHUNK_BYTES):
                upstream.sendall(data)
                buffer += data
                while True:
                    if not started:
                        if len(buffer) < 8:
                            break
                        length, code = struct.unpack("!ii", buffer[:8])
                        if len(buffer) < length:
                            break
                        buffer = buffer[length:]
                        started = code not in (_SSL_REQUEST, _GSS_REQUEST)  # those precede the real startup
                        continue
                    if len(buffer) < 5:
                        break
                    kind, length = buffer[:1], struct.unpack("!i", buffer[1:5])[0]
                    if len(buffer) < 1 + length:
                        break
                    body, buffer = buffer[5:1 + length], buffer[1 + length:]
                    if kind == b"Q":
                        self._count(body)
                    elif kind == b"P":
                        self._count(body.split(b"\0", 1)[1] if b"\0" in body else body)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _count(self, sql: bytes) -> None:
        words = sql.rstrip(b"\0").decode("utf-8", "replace").split()
        label = " ".join(words[:3]) if words[:1] and words[0].upper() in ("INSERT", "DELETE") else " ".join(words[:1])
        with self._lock:
            self.statements[label.upper() if label else "(empty)"] += 1
