"""The call deadline, on an injected one second: the real ten are waited on once, in
tests/conversations/test_failure_kinds.py. The slow cases share one parallel step, so this costs one deadline."""
import time

import gevent
import gevent.socket

from service.dispatch import BuiltRequest, connection, run_step, send

DEADLINE = 1.0
#: Resolution's own budget, given as the real one is: a part of the deadline.
DNS_BUDGET = DEADLINE / 2


def test_slow_dripping_and_unanswered_calls_meet_the_deadline_together(endpoint, loopback_guard, monkeypatch):
    real_getaddrinfo = gevent.socket.getaddrinfo

    def name_server_that_never_answers_for_one_host(host, *args, **kwargs):
        if host == "silent.test":
            gevent.sleep(3600)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(gevent.socket, "getaddrinfo", name_server_that_never_answers_for_one_host)
    monkeypatch.setattr(connection, "DNS_BUDGET_SECONDS", DNS_BUDGET)

    def call(url):
        return lambda: send(BuiltRequest("GET", url), guard=loopback_guard, authorization="t", deadline=DEADLINE)

    started = time.monotonic()
    in_time, late, drip, silent = run_step([
        call(endpoint.url(f"/sleep/{DEADLINE * 0.6}")),
        call(endpoint.url(f"/sleep/{DEADLINE * 1.5}")),
        call(endpoint.url(f"/drip/{DEADLINE / 5}")),  # each byte well inside the deadline, the body far past it
        call("http://silent.test/"),
    ])
    elapsed = time.monotonic() - started

    assert (in_time.kind, in_time.output) == (None, "slept")
    assert (late.kind, late.http_code) == ("timed-out", None)
    assert (drip.kind, drip.http_code) == ("timed-out", None)  # headers at once, then a byte at a time
    assert late.detail == drip.detail == f"no complete answer within {DEADLINE:g} s"
    # Resolution has its own budget inside the deadline: an unanswered lookup is a transport error.
    assert silent.kind == "transport-error" and "NameResolutionError" in silent.detail
    assert silent.latency_ms < DEADLINE * 1000
    assert elapsed < DEADLINE * 1.5  # all four at once, each bounded by the one deadline (the late one sleeps on)
