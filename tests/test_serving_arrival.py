"""The serve loop holds its clients to deadlines and caps its connections (`serving.Arrival`), on real sockets.

Every deadline here is a fraction of a second, so each test takes about that long; BOUND is what "at once" may take.
"""
from __future__ import annotations

import contextlib
import json
import socket
import time

import gevent
import pytest
from gevent.event import Event

import serving
from tests.support.loopback import wait_for

BOUND = 5.0
QUICK = serving.Arrival(head_seconds=0.3, body_stall_seconds=0.3, idle_seconds=0.5, max_connections=3)


def app(environ, start_response):
    """Echoes its body's length; `/hold` waits until the test lets it go; `/refuse` answers without reading."""
    path = environ["PATH_INFO"]
    if path == "/hold":
        HELD.wait(BOUND)
    if path == "/read":
        try:
            body = environ["wsgi.input"].read()
        except serving.BodyStalled:
            start_response("408 Request Timeout", [("Content-Type", "text/plain")])
            return [b"stalled"]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(len(body)).encode()]
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


HELD = Event()


@contextlib.contextmanager
def server(arrival: serving.Arrival = QUICK):
    HELD.clear()
    running = serving.Server(serving.listen("127.0.0.1", 0), app, arrival=arrival)
    running.start()
    try:
        yield running
    finally:
        HELD.set()
        running.stop(timeout=1)


def connect(running) -> socket.socket:
    return socket.create_connection(("127.0.0.1", running.server_port), timeout=BOUND)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the socket's timeout is the bound)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_head_that_does_not_arrive_in_time_is_answered_408_and_closed():
    with server() as running, connect(running) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n")  # and never the blank line
        started = time.monotonic()
        answer = read_all(sock)
        assert time.monotonic() - started < BOUND
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and b"Connection: close" in head
    assert json.loads(body)["code"] == "request-timeout"


def test_a_head_sent_a_line_at_a_time_still_meets_one_deadline():
    with server() as running, connect(running) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        started = time.monotonic()
        with contextlib.suppress(OSError):
            for _ in range(20):  # a line every tenth of a second: each well inside the deadline, the whole not
                gevent.sleep(0.1)
                sock.sendall(b"X-Drip: 1\r\n")
        assert read_all(sock).startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < 1.5


def test_a_new_connection_that_sends_nothing_is_closed_at_the_head_deadline():
    with server() as running, connect(running) as sock:
        assert read_all(sock).startswith(b"HTTP/1.1 408")


def test_a_kept_alive_connection_idle_past_its_time_is_closed_and_one_within_it_is_served():
    with server() as running, connect(running) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        assert sock.recv(4096).endswith(b"ok")
        gevent.sleep(0.35)  # past the head deadline, within the idle one: the next head's deadline starts with it
        sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        assert sock.recv(4096).endswith(b"ok")
        started = time.monotonic()
        assert read_all(sock) == b""  # closed once idle for its time, without an answer
        assert 0.4 < time.monotonic() - started < BOUND


def test_a_body_that_stalls_fails_its_read_and_the_connection_is_closed():
    with server() as running, connect(running) as sock:
        sock.sendall(b"POST /read HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\nabcd")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408") and answer.endswith(b"stalled")


def test_a_slow_body_that_never_stalls_is_read_whole():
    with server() as running, connect(running) as sock:
        sock.sendall(b"POST /read HTTP/1.1\r\nHost: test\r\nContent-Length: 8\r\n\r\n")
        for _ in range(8):  # 0.8 s in all, far past the stall deadline, but never 0.3 s without a byte
            gevent.sleep(0.1)
            sock.sendall(b"x")
        assert sock.recv(4096).endswith(b"\r\n\r\n8")


@pytest.mark.parametrize("declared", [4, 1_000_000])
def test_a_body_left_unread_closes_the_connection_instead_of_waiting_for_it(declared):
    with server() as running, connect(running) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n" % declared)
        started = time.monotonic()
        answer = read_all(sock)  # answered and closed at once, though not a byte of the body was sent
        assert time.monotonic() - started < QUICK.body_stall_seconds
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")


def test_past_the_cap_a_new_connection_takes_the_place_of_the_longest_waiting():
    with server() as running:
        waiting = [connect(running) for _ in range(QUICK.max_connections)]
        for sock in waiting:
            sock.sendall(b"GET / HTTP/1.1\r\n")  # heads still arriving
        gevent.sleep(0.05)
        with connect(running) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
            assert sock.recv(4096).endswith(b"ok")
        try:
            assert _closed(waiting[0])  # the longest waiting gave its place
            waiting[1].sendall(b"Host: test\r\n\r\n")  # the others keep theirs
            assert waiting[1].recv(4096).endswith(b"ok")
        finally:
            for sock in waiting:
                sock.close()


def _closed(sock: socket.socket) -> bool:
    try:
        return read_all(sock) == b""
    except ConnectionResetError:
        return True


def test_past_the_cap_with_every_connection_at_work_a_new_one_is_refused_503_at_once():
    with server() as running:
        held = [gevent.spawn(_request, running, "/hold") for _ in range(QUICK.max_connections)]
        gevent.sleep(0.1)
        assert running.saturated()
        with connect(running) as sock:
            started = time.monotonic()
            answer = read_all(sock)
            assert time.monotonic() - started < 1
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in head
        assert json.loads(body)["code"] == "busy"
        assert running.shed == 1
        HELD.set()
        assert [g.get(timeout=BOUND) for g in held] == [b"ok"] * QUICK.max_connections
        wait_for(lambda: not running.saturated())  # once their connections have closed


def _request(running, path: str) -> bytes:
    with connect(running) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".encode())
        return read_all(sock).rpartition(b"\r\n\r\n")[2]
