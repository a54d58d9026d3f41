"""The one serve loop (`serving`), in this process: bound before it says where, Nagle off, and a stop that lets
a request in flight finish while closing idle kept-alive connections at once. The loop as whole processes
(`toolgate serve`, `mock-backend`, `model-server`, `demo`) is tested in tests/test_cli.py."""
from __future__ import annotations

import gc
import socket

import gevent
import pytest
import requests
from gevent.event import Event

import serving

#: Upper bound on anything here that should happen at once; reaching it fails the test.
BOUND_SECONDS = 10


def test_port_zero_is_bound_before_the_url_is_known():
    listener = serving.listen("127.0.0.1", 0)
    try:
        port = listener.getsockname()[1]
        assert port != 0
        assert serving.url_of(listener) == f"http://127.0.0.1:{port}"
        with socket.create_connection(("127.0.0.1", port), timeout=BOUND_SECONDS):
            pass  # the kernel queues it: bound and listening before anyone serves
    finally:
        listener.close()


def test_an_ipv6_address_is_bracketed_in_the_url():
    try:
        listener = serving.listen("::1", 0)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        assert serving.url_of(listener) == f"http://[::1]:{listener.getsockname()[1]}"
    finally:
        listener.close()


def test_a_taken_port_is_an_oserror_at_bind_time():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            serving.make_server(lambda environ, start: [], "127.0.0.1", taken.getsockname()[1])


def test_accepted_sockets_have_nagle_off():
    seen = []

    class Probe(serving.NoDelayHandler):
        def handle(self):
            seen.append(self.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            super().handle()

    def app(environ, start_response):
        start_response("200 OK", [])
        return [b"ok"]

    server = serving.Server(serving.listen("127.0.0.1", 0), app, handler_class=Probe)
    server.start()
    try:
        assert requests.get(serving.url_of(server), timeout=BOUND_SECONDS).text == "ok"
    finally:
        server.stop(timeout=1)
    assert seen and all(seen)


def test_a_stop_finishes_the_request_in_flight_and_closes_idle_connections_at_once():
    release, entered = Event(), Event()

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/slow":
            entered.set()
            release.wait()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["PATH_INFO"].encode()]

    server = serving.make_server(app, "127.0.0.1", 0)
    url, port = serving.url_of(server), server.server_port
    server.start()
    idle = socket.create_connection(("127.0.0.1", port), timeout=BOUND_SECONDS)
    try:
        idle.sendall(b"GET /first HTTP/1.1\r\nHost: test\r\n\r\n")
        answer = b""
        while not answer.endswith(b"/first"):
            answer += idle.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200")  # and the connection is kept alive, idle
        in_flight = gevent.spawn(requests.get, f"{url}/slow", timeout=BOUND_SECONDS)
        assert entered.wait(BOUND_SECONDS)
        # A grace far longer than the bound: the idle connection must not be what the stop waits for.
        stopping = gevent.spawn(server.stop, timeout=60)
        assert idle.recv(1) == b""  # closed by the server at once (the socket's timeout is the bound)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=BOUND_SECONDS).close()
        assert not stopping.ready()  # still waiting for the request in flight
        release.set()
        assert in_flight.get(timeout=BOUND_SECONDS).text == "/slow"
        stopping.get(timeout=BOUND_SECONDS)
    finally:
        release.set()
        idle.close()
        server.stop(timeout=1)


def test_settling_the_heap_takes_what_start_up_built_out_of_every_later_collection():
    class Routes:  # a cycle made at start-up, as an app's routes and views are
        def __init__(self):
            self.me = self

    built = Routes()
    assert gc.is_tracked(built) and any(o is built for o in gc.get_objects())
    try:
        serving.settle_heap()
        assert gc.get_freeze_count() > 0
        assert not any(o is built for o in gc.get_objects())  # no generation holds it: a collection walks past
        later = Routes()
        assert any(o is later for o in gc.get_objects())  # what is made afterwards is collected as ever
    finally:
        gc.unfreeze()


def test_a_serving_process_spawns_greenlets_without_recording_their_spawner():
    tracked = gevent.spawn(lambda: None)
    assert tracked.spawning_stack is not None  # gevent's default, which tests keep
    try:
        serving.spawn_untracked()
        untracked = gevent.spawn(lambda: None)
        assert (untracked.spawning_stack, untracked.spawning_greenlet, untracked.spawn_tree_locals) == (None,) * 3
    finally:
        gevent.config.track_greenlet_tree = True
    gevent.joinall([tracked, untracked], timeout=BOUND_SECONDS, raise_error=True)


def test_serve_settles_its_process_before_it_accepts(monkeypatch):
    order = []
    monkeypatch.setattr(serving, "settle_process", lambda: order.append("settled"))
    server = serving.make_server(lambda environ, start_response: [], "127.0.0.1", 0)
    real_start = server.start
    monkeypatch.setattr(server, "start", lambda: (order.append("accepting"), real_start()))
    serving_loop = gevent.spawn(serving.serve, server, ready="up at {url}")
    try:
        with gevent.Timeout(BOUND_SECONDS):
            while len(order) < 2:
                gevent.sleep(0.01)
        assert order == ["settled", "accepting"]
    finally:
        serving_loop.kill()
        server.stop(timeout=1)


def test_the_loop_imports_only_gevent_and_the_standard_library():
    """The mock shares it without importing the service; so it may import none of ours, nor anything else."""
    import ast
    import sys
    from pathlib import Path

    for path in Path(serving.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for name in names:
                top = name.split(".")[0]
                assert top in ("gevent", "serving") or top in sys.stdlib_module_names, f"{path.name} imports {name}"
