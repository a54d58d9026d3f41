"""What the service writes to its output (issue 30, point 8): JSON lines only. No 4xx writes a traceback; a 5xx is
one ERROR line with its traceback inside the line's `exception` field, whichever layer it escaped from (Flask's view,
the step route ahead of Flask, gevent's server beneath both, a thread-pool task).

Measured before: every refused import (a 422) wrote gevent's multi-line traceback of the thread-pool task to
stderr, outside the JSON logs."""
from __future__ import annotations

import io
import json
import logging
import signal
import socket

import requests

from service.records import logs
from tests.support.loopback import exchange, serving
from tests.test_cli import _migrated_with_org, started, stopped_by

SWAGGER = "swagger: '2.0'\ninfo: {title: x, version: '1'}\npaths: {}\n"


def raw(url: str, request: bytes) -> bytes:
    return exchange(int(url.rsplit(":", 1)[1]), request)


def test_no_4xx_writes_a_traceback_and_every_line_of_the_output_is_json(tmp_path):
    database, admin_key = _migrated_with_org(tmp_path)
    with started("serve", "--port", "0", "--database", database) as (process, url):
        key = {"Authorization": f"Bearer {admin_key}"}
        statuses = [requests.post(f"{url}/v1/tools/import", headers=key, json={"document": text}, timeout=10).status_code
                    for text in ("not yaml: [", SWAGGER, "[1, 2]", "openapi: 3.0.0\npaths: 7\n")]
        statuses += [requests.get(f"{url}/v1/tools/nothing", headers=key, timeout=10).status_code,
                     requests.delete(f"{url}/v1/tools", headers=key, timeout=10).status_code,
                     requests.get(f"{url}/v1/tools", timeout=10).status_code,
                     requests.post(f"{url}/v1/tools", headers=key, data="{", timeout=10).status_code]
        head = f"POST /v1/tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin_key}\r\n"
        for request in (head + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na",  # cut short
                        head + "Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n",  # too large
                        "GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n"):  # gevent's own 400
            statuses.append(int(raw(url, request.encode()).split(b" ", 2)[1]))
        assert stopped_by(process, signal.SIGTERM) == 0
        output = process.stderr.read()
    assert all(400 <= status < 500 for status in statuses), statuses
    assert "Traceback" not in output, output
    lines = [json.loads(line) for line in output.splitlines()]  # every line is JSON (a non-JSON line fails here)
    assert not [line for line in lines if "exception" in line or line["level"] == "error"]
    assert sum(line.get("status", 0) == 422 for line in lines) == 4


def alone(monkeypatch) -> io.StringIO:
    """The service's log handler alone, as `toolgate serve` has it, writing to a buffer (pytest's own handlers on the
    root logger are left out, as a served process has none). Called in the test itself: pytest sets sys.stderr again
    between a fixture and its test."""
    logs.configure_logging()
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stderr", buffer)
    monkeypatch.setattr(logging.getLogger(logs.ROOT_LOGGER), "propagate", False)
    return buffer


def error_lines(buffer: io.StringIO) -> list[dict]:
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]  # JSON, each of them
    return [line for line in lines if line["level"] == "error"]


def test_an_exception_a_flask_view_lets_out_is_one_json_line_with_its_traceback(monkeypatch):
    """Whatever the app's import name (Flask's logger is named after it) and whatever handlers Flask would add."""
    from service.http.flask_app import ServiceFlask
    from service.server import make_server

    output = alone(monkeypatch)
    app = ServiceFlask("tests.some_app")

    @app.get("/boom")
    def boom():
        raise RuntimeError("a bug in a view")

    with serving(app, make_server) as url:
        assert requests.get(f"{url}/boom", timeout=10).status_code == 500
    [line] = error_lines(output)
    assert line["message"] == "Exception on /boom [GET]"
    assert line["exception"].startswith("Traceback") and "RuntimeError: a bug in a view" in line["exception"]


def test_an_exception_no_app_answers_is_one_json_line_with_its_traceback(monkeypatch):
    """Beneath Flask: gevent's server answers 500 and used to print the traceback through its hub."""
    from service.server import make_server, tune_hub

    def broken(environ, start_response):
        raise RuntimeError("a bug beneath the app")

    output = alone(monkeypatch)
    tune_hub()  # every way of serving the service does, in create_app
    with serving(broken, make_server) as url:
        assert requests.get(f"{url}/anything?x=1", timeout=10).status_code == 500
    [line] = error_lines(output)
    assert line["message"] == "Exception on /anything [GET]"
    assert "RuntimeError: a bug beneath the app" in line["exception"]


def test_a_request_the_server_refuses_itself_is_a_json_warning_line(monkeypatch):
    from service.server import make_server

    output = alone(monkeypatch)
    with serving(lambda environ, start_response: [], make_server) as url:
        with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")
            assert sock.recv(100).startswith(b"HTTP/1.1 400")
    lines = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [line["level"] for line in lines] == ["warning"] and "Malformed header line" in lines[0]["message"]
