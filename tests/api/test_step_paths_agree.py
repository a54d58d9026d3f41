"""The step route answered ahead of Flask and Flask's own view of it give one answer to every request (issue 30).

A corpus of raw requests (framing, content types, bodies of every bad kind, every credential) goes on the wire to
two servers of one app: the app as it serves, whose plain steps the fast path answers, and the same app with that
path taken away, so Flask's view answers them all. Status, headers, body and the request's log line must match, ids
aside, and no request may be a 500.
"""
from __future__ import annotations

import itertools
import json
import re
import socket

import pytest

from service.api.conversations.step_route import FLASK_PATH_KEY
from service.http.arrival import with_arrival
from service.server import make_server
from tests.support.databases import app_for
from tests.support.definitions import tool
from tests.support.live import Conversation, publish_project
from tests.support.logs import captured_logs, log_lines
from tests.support.loopback import serving

pytestmark = pytest.mark.service(max_request_bytes=65_536)

VALID = b'{"calls": [{"id": "c1", "name": "look", "arguments": {}}]}'
BODIES = {
    "valid": VALID,
    "null": b"null",
    "array": b"[]",
    "empty-object": b"{}",
    "no-calls": b'{"calls": []}',
    "calls-null": b'{"calls": null}',
    "not-json": b"{calls:",
    "invalid-utf8": b'{"calls": [{"id": "\xff\xfe", "name": "look"}]}',
    "deep": b"[" * 20_000 + b"]" * 20_000,
    "bom": b"\xef\xbb\xbf" + VALID,
    "utf16": VALID.decode().encode("utf-16-le"),
    "trailing": VALID + b" x",
    "whitespace": b"   ",
    "empty": b"",
    "call-not-object": b'{"calls": [1]}',
    "id-not-string": b'{"calls": [{"id": 1, "name": "look"}]}',
    "unknown-tool": b'{"calls": [{"id": "c1", "name": "nope", "arguments": {}}]}',
    "bad-arguments": b'{"calls": [{"id": "c1", "name": "look", "arguments": {"extra": 1}}]}',
    "huge-number": b'{"calls": [{"id": "c1", "name": "look", "arguments": 1e400}]}',
    "over-bound": b'{"calls": "' + b"x" * 70_000 + b'"}',
}
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain", None]
CREDENTIALS = ["session", None, "Bearer", "Basic abc", "api-key", "Bearer not.a.token", "bearer session"]
FRAMINGS = ["exact", "short", "none", "zero", "twice", "conflicting", "chunked", "non-digit"]


def corpus() -> list[tuple[str, str | None, str | None, str]]:
    """(body, content type, credential, framing) for every request sent: each body under each type, each credential
    and each framing with a good body and a bad one."""
    cases = [(body, kind, "session", "exact") for body, kind in itertools.product(BODIES, CONTENT_TYPES)]
    cases += [(body, "application/json", credential, "exact") for body, credential in
              itertools.product(["valid", "not-json"], CREDENTIALS[1:])]
    cases += [(body, "application/json", "session", framing) for body, framing in
              itertools.product(["valid", "null", "deep"], FRAMINGS[1:])]
    return cases


def raw_request(path: str, token: str, api_key: str, body_name: str, content_type: str | None,
                credential: str | None, framing: str) -> bytes:
    body = BODIES[body_name]
    head = [f"POST {path} HTTP/1.1", "Host: test", "Connection: close"]
    if credential is not None:
        value = {"session": f"Bearer {token}", "api-key": f"Bearer {api_key}",
                 "bearer session": f"bearer {token}"}.get(credential, credential)
        head.append(f"Authorization: {value}")
    if content_type is not None:
        head.append(f"Content-Type: {content_type}")
    framed = {"exact": [f"Content-Length: {len(body)}"], "short": [f"Content-Length: {len(body) + 10}"],
              "none": [], "zero": ["Content-Length: 0"],
              "twice": [f"Content-Length: {len(body)}", f"Content-Length: {len(body)}"],
              "conflicting": [f"Content-Length: {len(body)}", f"Content-Length: {len(body) + 1}"],
              "chunked": ["Transfer-Encoding: chunked"], "non-digit": [f"Content-Length: +{len(body)}"]}[framing]
    head += framed
    payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if framing == "chunked" and body else (
        b"0\r\n\r\n" if framing == "chunked" else body)
    return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


def send(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65_536):
            data += chunk
    return data


#: Headers that differ between any two answers; Content-Length is checked against the body instead, since a call's
#: `latency_ms` (made equal below) may take more digits on one path than on the other.
IGNORED_HEADERS = {"date", "x-request-id", "content-length"}


def answer_of(data: bytes, ids: tuple[str, str]) -> tuple[int, dict[str, str], str]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    every = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    assert int(every.get("content-length", len(body))) == len(body)
    headers = {k: v for k, v in every.items() if k not in IGNORED_HEADERS}
    return int(lines[0].split()[1]), headers, _without_ids(body.decode("utf-8", "replace"), ids)


def _without_ids(text: str, ids: tuple[str, str]) -> str:
    for value, name in zip(ids, ("<conversation>", "<turn>")):
        text = text.replace(value, name)
    return re.sub(r'"latency_ms": ?\d+', '"latency_ms": 0', text)


def log_of(lines: list[dict], ids: tuple[str, str]) -> dict | None:
    """The request's log line, ids aside; None for a request the server refused before any app saw it."""
    # the mock backend asks the service for its keys meanwhile: that request logs a line of its own
    requests = [line for line in lines if line.get("logger") == "service.request" and "jwks" not in line["route"]]
    assert len(requests) <= 1, requests
    if not requests:
        return None
    line = {k: v for k, v in requests[0].items() if k not in ("ts", "request_id", "duration_ms")}
    return json.loads(_without_ids(json.dumps(line), ids))


def test_both_step_paths_give_every_request_the_same_answer(service, backend):
    publish_project(service, [tool("look", f"{backend}/chars/40")])  # the same answer every time
    token = service.session_token()
    conversation = Conversation(service, token)
    app = app_for(service.config)
    flask_path = with_arrival(app.extensions[FLASK_PATH_KEY], service.config.max_request_bytes)
    fast_port = int(service.url.rsplit(":", 1)[1])
    cases = corpus()
    assert len(cases) >= 100
    differences = []
    with serving(flask_path, make_server) as flask_url:
        flask_port = int(flask_url.rsplit(":", 1)[1])
        for case in cases:
            seen = []
            for port in (fast_port, flask_port):
                turn = conversation.turn()  # a turn of its own each, so every valid step is the turn's first
                ids = (conversation.id, turn)
                raw = raw_request(f"/v1/conversations/{conversation.id}/turns/{turn}/steps", token,
                                  service.admin_key, *case)
                with captured_logs() as logs:
                    data = send(port, raw)
                status, headers, body = answer_of(data, ids)
                seen.append((status, headers, body, log_of(log_lines(logs), ids)))
            fast, flask = seen
            assert fast[0] != 500 and flask[0] != 500, (case, fast, flask)
            if fast != flask:
                differences.append((case, fast, flask))
    assert not differences, "\n".join(f"{case}\n  fast:  {fast}\n  flask: {flask}" for case, fast, flask in differences)
