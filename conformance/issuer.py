"""An issuer the kit runs itself: a key set served at `{issuer}/.well-known/jwks.json`.

When the kit checks an endpoint it stands in for the platform, so it needs an issuer the
endpoint can be told to trust, serving its public keys the way the platform serves an
organization's (JSON, `Cache-Control: max-age=300`). A second one, with a key of its own, is the
untrusted issuer of the wrong-issuer forgery.

Both count what is fetched from them. The key set's fetches tell a failure report whether the
endpoint ever looked at this run's keys. Traps are one-off URLs (`trap("jku")`, `trap("x5u")`)
that a forged token points to: an endpoint that follows a token's `jku`, `x5u` or URL-shaped
`kid` fetches one, and `fetches_of(url)` shows it, whatever else runs at the same time. A trap
serves what a follower would want (the issuer's key set, or a certificate for its key), so
following it leads all the way to accepting the forgery.

An issuer can also be made to fail (`failing()`): while it does, its key set answers 503 and the
attempts are counted apart, so a case can see whether an endpoint keeps verifying with the keys it
has when the key server fails.

The server is the standard library's threading HTTP server on a thread: real threads in a plain
process, greenlets in a gevent-patched one, and correct either way.
"""
from __future__ import annotations

import collections
import contextlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

from conformance.runner import CouldNotRun
from conformance.tokens import SigningKey

JWKS_PATH = "/.well-known/jwks.json"
TRAP_PREFIX = "/trap/"
#: What a trap serves, by kind: the key set (a `jku`, a URL `kid`) or a certificate (`x5u`).
TRAP_KINDS = ("jku", "x5u", "kid")
#: How often the serving loop looks for a request to stop: `close` waits up to this long, once per
#: issuer, at the end of every run. Short, since a look costs next to nothing.
_STOP_POLL_SECONDS = 0.01


def _trap_path(path: str) -> str:
    """A trap's own path, without what its URL ends with (`.pem`, or the key set's path)."""
    for suffix in (".pem", JWKS_PATH):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], issuer: KitIssuer) -> None:
        self.issuer = issuer
        super().__init__(address, _JwksHandler)


class _JwksHandler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # the standard library's name
        """The key set at the well-known path, a trap's content at a trap, 404 anywhere else."""
        path = self.path.split("?", 1)[0]
        issuer = self.server.issuer
        if path == JWKS_PATH and issuer.record_failed_fetch():
            self.send_error(503, "the kit's issuer is failing on purpose")
        elif path == JWKS_PATH:
            self._send(issuer.record_fetch(), "application/json")
        elif path.startswith(TRAP_PREFIX) and issuer.sprung(path):
            kind = path[len(TRAP_PREFIX):].split("/", 1)[0]
            if kind == "x5u":
                self._send(issuer.key.certificate_pem(), "application/pem-certificate-chain")
            else:
                self._send(json.dumps(issuer.jwks()).encode(), "application/json")
        else:
            self.send_error(404)

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "max-age=300")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the kit's output is its report."""


class KitIssuer:
    """One issuer, its signing key and the HTTP server publishing that key; a context manager.

    `port=0` picks a free port. The issuer URL is `http://{host}:{port}`; the server listens on
    that same host, so the URL an endpoint is told to trust is the one that answers.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, key: SigningKey | None = None,
                 alg: str | None = None):
        """`key` (default: a new one of `alg`, default ES256) signs; `port=0` picks a free port."""
        self.key = key or SigningKey.generate(*([alg] if alg else []))
        self.host = host
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._published: list[SigningKey] = [self.key]
        self._fetched_at: list[float] = []
        self._failing = False
        self._failed_fetches = 0
        self._traps: collections.Counter[str] = collections.Counter()

    def jwks(self) -> dict[str, Any]:
        """The key set document: every published public key, the signing key first."""
        with self._lock:
            return {"keys": [key.public_jwk() for key in self._published]}

    def publish(self, key: SigningKey) -> None:
        """Publish another key beside the current ones, as a rotation does before the new key signs."""
        with self._lock:
            self._published.append(key)

    def record_fetch(self) -> bytes:
        """Count one fetch of the key set; the document to answer it with."""
        body = json.dumps(self.jwks()).encode()
        with self._lock:
            self._fetched_at.append(time.monotonic())
        return body

    def record_failed_fetch(self) -> bool:
        """While the issuer is failing, count one attempt to fetch the key set and answer True (it gets a 503)."""
        with self._lock:
            if self._failing:
                self._failed_fetches += 1
            return self._failing

    @property
    def failed_fetches(self) -> int:
        """How many times the key set was asked for while the issuer was failing."""
        with self._lock:
            return self._failed_fetches

    @contextlib.contextmanager
    def failing(self) -> Iterator[None]:
        """Answer 503 for the key set while inside, as a key server that is down does."""
        with self._lock:
            self._failing = True
        try:
            yield
        finally:
            with self._lock:
                self._failing = False

    def fetch_times(self) -> list[float]:
        """When the key set was fetched so far (`time.monotonic()`), oldest first."""
        with self._lock:
            return list(self._fetched_at)

    def trap(self, kind: str) -> str:
        """A fresh URL on this issuer that nothing should ever fetch; see `fetches_of`."""
        if kind not in TRAP_KINDS:
            raise ValueError(f"a trap is one of {TRAP_KINDS}")
        path = f"{TRAP_PREFIX}{kind}/{secrets.token_hex(8)}"
        with self._lock:
            self._traps[path] = 0
        return self.url + path + (".pem" if kind == "x5u" else JWKS_PATH)

    def sprung(self, path: str) -> bool:
        """Count a fetch of the trap at `path`; False when no such trap was set."""
        path = _trap_path(path)
        with self._lock:
            if path not in self._traps:
                return False
            self._traps[path] += 1
            return True

    def fetches_of(self, url: str) -> int:
        """How many times the trap at `url` was fetched."""
        path = _trap_path(url[len(self.url):])
        with self._lock:
            return self._traps.get(path, 0)

    @property
    def url(self) -> str:
        """The issuer, `http://host:port`, as it goes in `iss` and in the endpoint's trust list."""
        if self._server is None:
            raise RuntimeError("the issuer is not serving yet")
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def fetches(self) -> int:
        """How many times the key set was fetched so far."""
        return len(self.fetch_times())

    def start(self) -> KitIssuer:
        """Listen and serve on a background thread; CouldNotRun if the port cannot be had."""
        try:
            self._server = _Server((self.host, self._requested_port), self)
        except OSError as exc:
            raise CouldNotRun(
                f"cannot serve the key set on {self.host}:{self._requested_port}: {exc}"
            ) from exc
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": _STOP_POLL_SECONDS}, daemon=True
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
