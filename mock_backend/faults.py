"""Socket-level faults, under the names integrators know from WireMock and mountebank.

A WSGI application cannot break a connection: it only returns status, headers and body. So a
fault route returns a body iterator that raises `SocketFault` where the fault should happen
(before any byte for `empty-response` and `random-then-close`; after the headers and part of the
body for `reset`). The mock's own server handler (mock_backend.server) catches it and does the
damage on the raw socket. Under any other WSGI server the exception surfaces as an ordinary
server error on that one connection; other requests are unaffected either way.
"""
from __future__ import annotations

import os
import socket
import struct

#: The faults by name: what the client sees.
FAULTS = (
    "empty-response",     # the connection closes without a single byte
    "random-then-close",  # bytes that are not HTTP, then the connection closes
    "reset",              # "connection reset by peer" (a TCP RST) in the middle of the body
)

#: How much garbage `random-then-close` sends.
GARBAGE_BYTES = 512


class SocketFault(Exception):
    """Raised from a response body to make the server break the connection as `kind` says."""

    def __init__(self, kind: str) -> None:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}")
        super().__init__(kind)
        self.kind = kind


def break_connection(sock: socket.socket, kind: str) -> None:
    """Do the fault `kind` to a connected socket. The caller must then drop the connection."""
    if kind == "random-then-close":
        # Begin with a byte no HTTP status line can start with, so no client mistakes it for one.
        sock.sendall(b"\x00" + os.urandom(GARBAGE_BYTES - 1))
    elif kind == "reset":
        # SO_LINGER on with a zero timeout: close() sends RST instead of FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
