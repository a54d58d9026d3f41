"""An issuer the kit runs itself: a key set served at `{issuer}/.well-known/jwks.json`.

When the kit checks an endpoint it stands in for the platform, so it needs an issuer the
endpoint can be told to trust, serving its public keys the way the platform serves an
organization's (JSON, `Cache-Control: max-age=300`). A second one, with a key of its own, is the
untrusted issuer of the wrong-issuer forgery.

The server is the standard library's threading HTTP server on a thread: real threads in a plain
process, greenlets in a gevent-patched one, and correct either way.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformance.runner import CouldNotRun
from conformance.tokens import SigningKey

JWKS_PATH = "/.well-known/jwks.json"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], body: bytes) -> None:
        self.body = body
        self.fetches = 0
        super().__init__(address, _JwksHandler)


class _JwksHandler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        """The key set at the well-known path, 404 anywhere else."""
        if self.path.split("?", 1)[0] != JWKS_PATH:
            self.send_error(404)
            return
        self.server.fetches += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "max-age=300")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the kit's output is its report."""


class KitIssuer:
    """One issuer, its signing key and the HTTP server publishing that key; a context manager.

    `port=0` picks a free port. The issuer URL is `http://{host}:{port}`; the server listens on
    that same host, so the URL an endpoint is told to trust is the one that answers.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, key: SigningKey | None = None):
        self.key = key or SigningKey.generate()
        self.host = host
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def jwks(self) -> dict[str, Any]:
        """The key set document: this issuer's one public key."""
        return {"keys": [self.key.public_jwk()]}

    @property
    def url(self) -> str:
        """The issuer, `http://host:port`, as it goes in `iss` and in the endpoint's trust list."""
        if self._server is None:
            raise RuntimeError("the issuer is not serving yet")
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def fetches(self) -> int:
        """How many times the key set was fetched so far."""
        return self._server.fetches if self._server else 0

    def start(self) -> KitIssuer:
        """Listen and serve on a background thread; CouldNotRun if the port cannot be had."""
        try:
            self._server = _Server((self.host, self._requested_port), json.dumps(self.jwks()).encode())
        except OSError as exc:
            raise CouldNotRun(
                f"cannot serve the key set on {self.host}:{self._requested_port}: {exc}"
            ) from exc
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> KitIssuer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()
