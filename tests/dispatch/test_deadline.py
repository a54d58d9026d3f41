"""The call deadline, on an injected one second: the real ten are waited on once, in
tests/conversations/test_failure_kinds.py. The slow cases share one parallel step, so this costs one deadline."""
import gevent
import gevent.socket

from service.dispatch import BuiltRequest, connection, run_step, send

DEADLINE = 1.0
#: Resolution's own budget, given as the real one is: a part of the deadline.
DNS_BUDGET = DEADLINE / 2
#: The late endpoint answers this long after the call: a call still waiting on it was not cut off at the deadline.
LATE_SECONDS = DEADLINE * 1.5
#: A call's clock may read a little under the deadline when the timer fires (the loop's time is cached).
TIMER_SLACK_MS = 100


def test_a_late_a_dripping_and_an_unresolved_call_are_each_held_to_the_deadline(endpoint, loopback_guard,
                                                                                monkeypatch):
    real_getaddrinfo = gevent.socket.getaddrinfo

    def name_server_that_never_answers_for_one_host(host, *args, **kwargs):
        if host == "silent.test":
            gevent.sleep(3600)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(gevent.socket, "getaddrinfo", name_server_that_never_answers_for_one_host)
    monkeypatch.setattr(connection, "DNS_BUDGET_SECONDS", DNS_BUDGET)

    def call(url):
        return lambda: send(BuiltRequest("GET", url), guard=loopback_guard, authorization="t", deadline=DEADLINE)

    in_time, late, drip, silent = run_step([
        call(endpoint.url(f"/sleep/{DEADLINE * 0.6}")),
        call(endpoint.url(f"/sleep/{LATE_SECONDS}")),
        call(endpoint.url(f"/drip/{DEADLINE / 5}")),  # each byte well inside the deadline, the body far past it
        call("http://silent.test/"),
    ])

    assert (in_time.kind, in_time.output) == (None, "slept")
    assert (late.kind, late.http_code) == ("timed-out", None)
    assert (drip.kind, drip.http_code) == ("timed-out", None)  # headers at once, then a byte at a time
    assert late.detail == drip.detail == f"no complete answer within {DEADLINE:g} s"
    # By each call's own clock: given up at the deadline, neither before it nor by waiting the endpoint out (the drip
    # would take twenty deadlines).
    for cut in (late, drip):
        assert DEADLINE * 1000 - TIMER_SLACK_MS <= cut.latency_ms < LATE_SECONDS * 1000
    # Resolution has its own budget inside the deadline: an unanswered lookup is a transport error.
    assert silent.kind == "transport-error" and "NameResolutionError" in silent.detail
    assert silent.latency_ms < DEADLINE * 1000
