"""A step runs its calls at once, keeps every outcome, and returns them in the calls' order.

"At once" is seen at the endpoint: its gathering route answers each call only once all of the group are there
together (`met: true`); calls sent one after another would each wait alone and answer `met: false`."""
import contextvars
import json
import logging

import gevent
import pytest

from service.dispatch import BuiltRequest, CallOutcome, run_step, send

#: A wide step: more calls than any connection pool default, each needing a connection of its own at once.
WIDE = 200
#: Only so a step that does not run its calls at once fails in seconds rather than waiting out every gathering.
HANG_GUARD_SECONDS = 30


def gathered(count: int) -> str:
    """The gathering route's answer to each call of a group of `count` that met."""
    return json.dumps({"met": True, "most_present": count})


def test_both_calls_of_a_step_are_at_the_endpoint_at_once(endpoint, loopback_guard):
    def call():
        return send(BuiltRequest("GET", endpoint.url("/together/step-of-two/2")), guard=loopback_guard,
                    authorization="t")

    outcomes = run_step([call, call])
    assert [o.output for o in outcomes] == [gathered(2)] * 2


def test_outcomes_come_back_in_the_calls_order_not_the_finishing_order():
    def after(seconds, label):
        return lambda: gevent.sleep(seconds) or CallOutcome(None, 200, output=label)
    outcomes = run_step([after(0.06, "first"), after(0.0, "second"), after(0.03, "third")])
    assert [o.output for o in outcomes] == ["first", "second", "third"]


@pytest.mark.parametrize("width", [1, 3])
def test_each_call_runs_in_the_callers_context(width):
    request = contextvars.ContextVar("request", default=None)
    token = request.set("req-1")
    try:
        outcomes = run_step([lambda: gevent.sleep(0) or CallOutcome(None, 200, output=request.get())] * width)
    finally:
        request.reset(token)
    assert [o.output for o in outcomes] == ["req-1"] * width


def test_an_unexpected_exception_is_that_calls_transport_error_and_the_others_carry_on(caplog):
    def broken():
        raise RuntimeError("a bug")
    with caplog.at_level(logging.ERROR, logger="service.dispatch.step"):
        outcomes = run_step([lambda: CallOutcome(None, 200, output="a"), broken, lambda: CallOutcome("refused", 404)])
    assert [(o.kind, o.output) for o in outcomes] == [(None, "a"), ("transport-error", None), ("refused", None)]
    assert outcomes[1].detail == "unexpected RuntimeError"
    assert "a tool call failed unexpectedly" in caplog.text


class Stray(BaseException):
    pass


@pytest.mark.parametrize("exit_with", [gevent.GreenletExit, Stray], ids=["GreenletExit", "BaseException"])
def test_a_call_killed_mid_way_is_a_transport_error(exit_with):
    def killed():
        raise exit_with()
    outcomes = run_step([killed, lambda: CallOutcome(None, 200, output="ok")])
    assert [(o.kind, o.detail) for o in outcomes] == [("transport-error", "the call was interrupted"), (None, None)]


@pytest.mark.parametrize("pool_size", [1, 3])
def test_the_pool_bounds_how_many_calls_run_at_once(pool_size):
    running, most = 0, 0

    def call():
        nonlocal running, most
        running += 1
        most = max(most, running)
        gevent.sleep(0.01)
        running -= 1
        return CallOutcome(None, 200, output="")
    assert len(run_step([call] * 7, pool_size=pool_size)) == 7
    assert most == pool_size


def test_an_empty_step_is_empty():
    assert run_step([]) == []


def test_every_call_of_a_wide_step_is_at_the_endpoint_at_once_and_its_connections_serve_the_next(
        fresh_endpoint, fresh_guard):
    def call():
        return send(BuiltRequest("GET", fresh_endpoint.url(f"/together/wide/{WIDE}")), guard=fresh_guard,
                    authorization="t")

    for _ in range(2):
        with gevent.Timeout(HANG_GUARD_SECONDS):
            outcomes = run_step([call] * WIDE)
        assert {o.output for o in outcomes} == {gathered(WIDE)}
    # All at once, each step needed a connection per call: the second step reused the first step's, opened none.
    assert fresh_endpoint.connections == WIDE
