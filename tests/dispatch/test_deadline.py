"""The ten-second deadline, end to end. The slow cases share one parallel step so this costs ~10 s, not 35."""
import time

import gevent
import gevent.socket

from service.dispatch import BuiltRequest, run_step, send
from service.limits import CALL_DEADLINE_SECONDS, DNS_BUDGET_SECONDS


def test_slow_dripping_and_unanswered_calls_meet_the_deadline_together(endpoint, loopback_guard, monkeypatch):
    real_getaddrinfo = gevent.socket.getaddrinfo

    def name_server_that_never_answers_for_one_host(host, *args, **kwargs):
        if host == "silent.test":
            gevent.sleep(3600)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(gevent.socket, "getaddrinfo", name_server_that_never_answers_for_one_host)

    def call(url):
        return lambda: send(BuiltRequest("GET", url), guard=loopback_guard, authorization="t")

    started = time.monotonic()
    nine, eleven, drip, silent = run_step([
        call(endpoint.url(f"/sleep/{CALL_DEADLINE_SECONDS - 1}")),
        call(endpoint.url(f"/sleep/{CALL_DEADLINE_SECONDS + 1}")),
        call(endpoint.url("/drip")),
        call("http://silent.test/"),
    ])
    elapsed = time.monotonic() - started

    assert (nine.kind, nine.output) == (None, "slept")
    assert (eleven.kind, eleven.http_code) == ("timed-out", None)
    assert (drip.kind, drip.http_code) == ("timed-out", None)  # headers at once, then a byte a second
    # Resolution has its own budget inside the deadline: an unanswered lookup is a transport error.
    assert silent.kind == "transport-error" and "NameResolutionError" in silent.detail
    assert silent.latency_ms < CALL_DEADLINE_SECONDS * 1000 and DNS_BUDGET_SECONDS < CALL_DEADLINE_SECONDS
    assert elapsed < CALL_DEADLINE_SECONDS + 2  # all four at once, each bounded by the one deadline
