"""Small real servers and suites for the kit's own tests. Everything listens on 127.0.0.1 only."""
from __future__ import annotations

import contextlib
import socket
from typing import Callable, Iterator

from gevent.pywsgi import WSGIServer

from conformance.case import Check, SpecRef, Suite, Verdict

SPEC = SpecRef("spec/how-tools-run.txt", "Every tool call is signed")


def free_port() -> int:
    """A port free right now on 127.0.0.1 (for a process that must be told its port up front)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(app: Callable) -> Iterator[str]:
    """Serve a WSGI app on an ephemeral 127.0.0.1 port; yield its base URL; always stop it."""
    server = WSGIServer(("127.0.0.1", 0), app, log=None, error_log=None)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.stop(timeout=1)


def sample_suite() -> Suite:
    """Three areas, one case of each outcome: pass, fail with two violations, raise."""
    suite = Suite("sample")

    @suite.case("alpha/passes", title="It passes", requirement="Always holds.", spec=SPEC)
    def passes(target: object) -> Verdict:
        return Verdict.passed()

    @suite.case("beta/fails-twice", title="It fails twice", requirement="Never holds.", spec=SPEC)
    def fails(target: object) -> Verdict:
        check = Check()
        check.equal("status", 200, 500)
        check.equal("body", "[]", "<html>")
        return check.verdict()

    @suite.case("gamma/raises", title="It raises", requirement="Cannot tell.", spec=SPEC)
    def raises(target: object) -> Verdict:
        raise KeyError("no such thing")

    return suite
