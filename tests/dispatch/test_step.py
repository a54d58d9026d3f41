"""A step runs its calls at once, keeps every outcome, and returns them in the calls' order."""
import logging
import time

import gevent
import pytest

from service.dispatch import BuiltRequest, CallOutcome, run_step, send


def test_two_one_second_calls_in_one_step_take_about_one_second(endpoint, loopback_guard):
    def call():
        return send(BuiltRequest("GET", endpoint.url("/sleep/1")), guard=loopback_guard, authorization="t")

    started = time.monotonic()
    outcomes = run_step([call, call])
    assert time.monotonic() - started < 1.8
    assert [o.output for o in outcomes] == ["slept", "slept"]


def test_outcomes_come_back_in_the_calls_order_not_the_finishing_order():
    def after(seconds, label):
        return lambda: gevent.sleep(seconds) or CallOutcome(None, 200, output=label)
    outcomes = run_step([after(0.06, "first"), after(0.0, "second"), after(0.03, "third")])
    assert [o.output for o in outcomes] == ["first", "second", "third"]


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


def test_a_wide_step_runs_at_once_and_keeps_every_connection_for_the_next(fresh_endpoint, fresh_guard):
    def call():
        return send(BuiltRequest("GET", fresh_endpoint.url("/sleep/0.5")), guard=fresh_guard, authorization="t")

    for _ in range(2):
        started = time.monotonic()
        outcomes = run_step([call] * 200)
        assert time.monotonic() - started < 1.5
        assert {o.output for o in outcomes} == {"slept"}
    # The pool is sized for the fan-out: the second step reused the first step's 200 connections.
    assert fresh_endpoint.connections == 200
