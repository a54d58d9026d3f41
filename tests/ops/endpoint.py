"""A tenant's endpoint on 127.0.0.1 whose every body carries a secret marker, for proving no body is ever kept.

Routes: `/ok` (200 with the marker), `/plain` (200, no marker), `/refused` (500 with a stack trace and the marker),
`/nothing` (404, empty), `/big` (200, one character past the cap, marker included), `/slow` (answers after the call
deadline). Every Authorization header received is kept, so a test can look for the assertions themselves.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import gevent
from gevent.pywsgi import WSGIServer

from service.limits import CALL_DEADLINE_SECONDS, RESPONSE_CAP_CHARS
from tests.support.loopback import free_port

MARKER = "SECRET-BODY-MARKER-7f3a9c"
OK_BODY = f'{{"orders": [], "note": "{MARKER}"}}'
PLAIN_BODY = '{"tier": "gold"}'
REFUSED_BODY = f"Traceback (most recent call last):\n  File internal.py\nKeyError: {MARKER}"
BIG_BODY = MARKER + "x" * (RESPONSE_CAP_CHARS + 1 - len(MARKER))


@dataclass
class Endpoint:
    url: str
    authorizations: list[str] = field(default_factory=list)


def _app(endpoint: Endpoint):
    def app(environ, start_response):
        endpoint.authorizations.append(environ.get("HTTP_AUTHORIZATION", ""))
        route = environ["PATH_INFO"].strip("/").split("/")[0]
        if route == "slow":
            gevent.sleep(CALL_DEADLINE_SECONDS + 2)
        status, body = {
            "ok": ("200 OK", OK_BODY), "plain": ("200 OK", PLAIN_BODY), "refused": ("500 Oops", REFUSED_BODY),
            "nothing": ("404 Not Found", ""), "big": ("200 OK", BIG_BODY), "slow": ("200 OK", OK_BODY),
        }.get(route, ("404 Not Found", ""))
        data = body.encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    return app


@contextlib.contextmanager
def endpoint():
    """The endpoint on a free loopback port; stopped (sleeping requests killed) on the way out."""
    server = WSGIServer(("127.0.0.1", 0), None, log=None)
    server.init_socket()
    running = Endpoint(url=f"http://127.0.0.1:{server.server_port}")
    server.application = _app(running)
    server.start()
    try:
        yield running
    finally:
        server.stop(timeout=1)


def closed_port_url() -> str:
    """A loopback URL nothing listens on: connecting is refused at once (a transport error)."""
    return f"http://127.0.0.1:{free_port()}/gone"
