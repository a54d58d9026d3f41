"""Every route takes at most TOOLGATE_MAX_REQUEST_BYTES and refuses more with 413, without reading it."""
import socket

import pytest
import requests

from tests.support.live import live_service

BOUND = 4_096

pytestmark = pytest.mark.service(max_request_bytes=BOUND)


def test_a_body_past_the_bound_is_413_in_the_one_shape(service):
    too_big = service.api("POST", "/v1/tools", data=b"x" * (BOUND + 1), headers={"Content-Type": "application/json"})
    assert too_big.status_code == 413
    assert too_big.json() == {"code": "request-too-large", "message": f"The request body is larger than {BOUND} "
                              "bytes, the most this service takes.", "errors": [
        {"field": "", "rule": "request-too-large",
         "message": f"The request body is larger than {BOUND} bytes, the most this service takes."}]}
    assert service.api("GET", "/v1/tools").status_code == 200  # nothing else changed


def test_a_chunked_body_with_no_length_is_cut_off_at_the_bound(service):
    def chunks():
        for _ in range(64):
            yield b"x" * 1024

    response = service.api("POST", "/v1/tools", data=chunks(), headers={"Content-Type": "application/json"})
    assert (response.status_code, response.json()["code"]) == (413, "request-too-large")


def test_a_huge_declared_body_is_refused_before_it_is_sent(service):
    """The answer comes from the declared length alone: the client never sends a byte of its 200 MB."""
    host, port = service.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(f"POST /v1/tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {service.admin_key}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {200 * 1024 * 1024}\r\n\r\n".encode())
        head = sock.recv(65_536).decode("latin-1")
    assert head.startswith("HTTP/1.1 413")


def test_the_dashboard_and_mcp_answer_past_the_bound_in_their_own_shapes(service):
    page = requests.post(service.url + "/signin", data={"api_key": "x" * (BOUND + 1)}, timeout=10)
    assert page.status_code == 413 and "text/html" in page.headers["Content-Type"]
    mcp = requests.post(service.url + "/mcp", data=b"x" * (BOUND + 1), timeout=10, headers={
        "Authorization": f"Bearer {service.agent_key}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    assert mcp.status_code == 413 and mcp.json()["error"]["code"] == -32600


def test_json_nested_past_what_a_parser_holds_is_a_clear_400(tmp_path):
    deep = b"[" * 50_000 + b"]" * 50_000  # 100 kB, within the default bound
    with live_service(tmp_path) as running:
        response = running.api("POST", "/v1/tools", data=deep, headers={"Content-Type": "application/json"})
        assert (response.status_code, response.json()["code"]) == (400, "malformed-body")
        assert running.api("GET", "/v1/tools").status_code == 200
