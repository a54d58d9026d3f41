"""What both broken doubles share: reading a WSGI request, forwarding it, serving on loopback.

The doubles serve with the mock backend's own server, which keeps the raw request target (so a
path reaches the real target exactly as it was encoded) and can break a connection on purpose
(so a reset the real mock does passes through as a reset).
"""
from __future__ import annotations

import http.cookiejar
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Callable, Iterable

import requests

from mock_backend.server import make_server

#: Headers that describe one connection, not the message, and so are never passed along.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-authorization", "proxy-authenticate", "host", "content-length"})

#: The longest the doubles wait on what they front (a step can wait out a call's whole deadline).
UPSTREAM_TIMEOUT_SECONDS = 60


@dataclass
class Incoming:
    """One request as a double received it; faults may change any part before it is forwarded."""

    method: str
    target: str  # the raw path and query, as sent
    headers: dict[str, str]
    body: bytes

    @classmethod
    def from_environ(cls, environ: dict[str, Any]) -> Incoming:
        headers = {key[5:].replace("_", "-").title(): value for key, value in environ.items()
                   if key.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        target = environ.get("RAW_URI") or environ.get("PATH_INFO", "")
        return cls(environ["REQUEST_METHOD"], target, headers, body)

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass
class Outgoing:
    """A response a double sends back: status, headers and a body (bytes, or chunks as they come)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""

    @classmethod
    def of_json(cls, status: int, value: Any) -> Outgoing:
        return cls(status, {"Content-Type": "application/json"}, json.dumps(value).encode())

    def json(self) -> Any:
        try:
            return json.loads(self.body) if isinstance(self.body, bytes) and self.body else None
        except ValueError:
            return None

    def with_json(self, value: Any) -> Outgoing:
        """The same status and headers around another JSON body."""
        return Outgoing(self.status, {**self.headers, "Content-Type": "application/json"},
                        json.dumps(value).encode())


def passable(headers: dict[str, str]) -> dict[str, str]:
    """The headers worth passing along (no hop-by-hop ones, no length: it is recomputed)."""
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}


class _NoRedirects(requests.Session):
    def get_redirect_target(self, resp: requests.Response) -> None:
        # Even with allow_redirects=False, requests reads a 3xx body whole to offer the redirect as
        # `next`; no target, no read, so the body is relayed as it comes.
        return None


#: How many connections to one upstream the doubles keep open for reuse: more than a run ever has in flight.
KEPT_CONNECTIONS = 256

#: The doubles' one session, so the connections to what they front are kept and reused: a new session (and a
#: new connection) per request cost each kit run an eighth of the test process's time and a tenth of the
#: platform's. It keeps no cookies: a double relays requests, it does not browse, and a cookie it sent on
#: would look like the platform forwarding one.
_SESSION = _NoRedirects()
_SESSION.trust_env = False
_SESSION.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
_SESSION.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=KEPT_CONNECTIONS))


def send(upstream: str, incoming: Incoming, *, stream: bool = False) -> requests.Response:
    """Forward `incoming` to `upstream` (a base URL) unchanged, redirects untouched."""
    return _SESSION.request(incoming.method, upstream + incoming.target, data=incoming.body or None,
                            headers=passable(incoming.headers), allow_redirects=False, stream=stream,
                            timeout=UPSTREAM_TIMEOUT_SECONDS)


def received(response: requests.Response) -> Outgoing:
    """A whole upstream response as an Outgoing."""
    return Outgoing(response.status_code, passable(dict(response.headers)), response.content)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def wsgi(handle: Callable[[Incoming], Outgoing]) -> Callable:
    """A WSGI app answering each request with `handle`'s Outgoing."""

    def app(environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        outgoing = handle(Incoming.from_environ(environ))
        headers = dict(outgoing.headers)
        if isinstance(outgoing.body, bytes):
            headers["Content-Length"] = str(len(outgoing.body))
        start_response(f"{outgoing.status} {_phrase(outgoing.status)}", list(headers.items()))
        return [outgoing.body] if isinstance(outgoing.body, bytes) else outgoing.body

    return app


def quiet_server(app: Callable, host: str, port: int):
    """The mock's server for a double (serve it with tests.support.loopback.serving), logging nothing."""
    server = make_server(app, host, port, log=None)
    server.error_log = None  # a call the platform abandoned is the double's business, not the test's
    return server
