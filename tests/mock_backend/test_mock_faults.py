"""Socket-level faults, seen the way a client sees them: on a raw socket and through requests.

Also: the mock's server sets TCP_NODELAY, and a fault breaks only its own connection.
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
import requests

from mock_backend import server as mock_server
from mock_backend.faults import GARBAGE_BYTES, SocketFault


def raw_exchange(live: str, path: str, headers: dict[str, str]) -> tuple[bytes, BaseException | None]:
    """Send one GET on a fresh connection; return every byte received and how the stream ended."""
    address = urlsplit(live)
    request = f"GET {path} HTTP/1.1\r\nHost: {address.netloc}\r\n"
    request += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    received = b""
    with socket.create_connection((address.hostname, address.port), timeout=5) as sock:
        sock.sendall(request.encode())
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError as error:
            return received, error
    return received, None


def test_empty_response_closes_without_a_byte(harness, live):
    received, error = raw_exchange(live, "/tools/t/fault/empty-response", harness.bearer("t"))
    assert (received, error) == (b"", None)


def test_random_then_close_sends_garbage_not_http(harness, live):
    received, error = raw_exchange(live, "/tools/t/fault/random-then-close", harness.bearer("t"))
    assert error is None
    assert len(received) == GARBAGE_BYTES and not received.startswith(b"HTTP/")


def test_reset_comes_after_headers_and_part_of_the_body(harness, live):
    received, error = raw_exchange(live, "/tools/t/fault/reset", harness.bearer("t"))
    assert isinstance(error, ConnectionResetError)
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"Content-Length: 4096" in head
    assert body.startswith(b'{"data": "xxx') and len(body) < 4096


@pytest.mark.parametrize("fault,error,message", [
    ("empty-response", requests.exceptions.ConnectionError, "without response"),
    ("random-then-close", requests.exceptions.ConnectionError, "BadStatusLine"),
    ("reset", requests.exceptions.ChunkedEncodingError, "reset by peer"),
])
def test_requests_sees_each_fault_as_a_transport_error(http, harness, live, fault, error, message):
    with pytest.raises(error, match=message):
        http.get(f"{live}/tools/t/fault/{fault}", headers=harness.bearer("t"))


def test_a_fault_breaks_only_its_own_connection(http, harness, live):
    # A kept-alive connection opened before the fault still works after it.
    assert http.get(f"{live}/_health").status_code == 200
    with requests.Session() as other:
        other.trust_env = False
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            other.get(f"{live}/tools/t/fault/reset", headers=harness.bearer("t"))
    assert http.get(f"{live}/_health").status_code == 200
    assert http.get(f"{live}/tools/t/status/418", headers=harness.bearer("t")).status_code == 418


def test_faults_are_recorded_without_a_status(http, harness, live):
    for fault in ("empty-response", "reset"):
        with pytest.raises(requests.exceptions.RequestException):
            http.get(f"{live}/tools/t/fault/{fault}", headers=harness.bearer("t"))
    calls = http.get(f"{live}/_calls").json()["calls"]
    assert [(call["fault"], call["status"]) for call in calls] == [("empty-response", None), ("reset", None)]
    assert all(call["ended"] >= call["started"] for call in calls)


def test_an_unknown_fault_is_not_found(http, harness, live):
    response = http.get(f"{live}/tools/t/fault/meltdown", headers=harness.bearer("t"))
    assert response.status_code == 404 and "reset" in response.json()["error"]


def test_a_fault_needs_a_valid_assertion(http, harness, live):
    response = http.get(f"{live}/tools/t/fault/reset")
    assert (response.status_code, response.json()["reason"]) == (401, "missing-token")


def test_unknown_fault_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        SocketFault("meltdown")


def test_accepted_sockets_have_nagle_off(harness, serve, http, monkeypatch):
    seen = []

    class Probe(mock_server.MockHandler):
        def handle(self):
            seen.append(self.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            super().handle()

    monkeypatch.setattr(mock_server.MockServer, "handler_class", Probe)
    live = serve(harness.app())
    assert http.get(f"{live}/_health").status_code == 200
    assert seen and all(seen)
