"""Fixtures shared by the key tests; the fixed keys themselves live in vectors.py."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from service.keys import ALGORITHMS, SigningKey
from tests.keys.vectors import fixed_key

JWKS_PATH = "/.well-known/jwks.json"


@pytest.fixture(params=ALGORITHMS)
def any_fixed_key(request) -> SigningKey:
    """Each fixed key in turn."""
    return fixed_key(request.param)


class _JwksHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # http.server's naming
        self.server.hits.append(self.path)
        if self.path != JWKS_PATH:
            self.send_error(404)
            return
        body = json.dumps(self.server.document).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "max-age=300")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass


@pytest.fixture
def jwks_server():
    """A real HTTP server on 127.0.0.1 serving `server.document` at JWKS_PATH.

    `server.url` is the JWKS address and `server.hits` every path requested, so a test can
    prove a fetch happened, or that none did.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _JwksHandler)
    server.document = {"keys": []}
    server.hits = []
    server.base_url = f"http://127.0.0.1:{server.server_port}"
    server.url = server.base_url + JWKS_PATH
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
