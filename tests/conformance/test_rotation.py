"""The rotation case's calls with the next key: when they come, on an injected clock, so no test waits them out.

What the case proves against real backends (an honest one takes the key, one that cached the set for good does
not, and why) is in test_endpoint_suite.py; this is only the schedule.
"""
from __future__ import annotations

import itertools

import pytest

from conformance.endpoint.rotation import _calls_with, retry_pauses
from conformance.endpoint.target import Answer
from conformance.limits import ROTATION_RETRY_FIRST_SECONDS, ROTATION_RETRY_SECONDS
from conformance.tokens import SigningKey

#: How long each fake call takes on the fake clock, unless a test says otherwise.
CALL_SECONDS = 0.01


class _Endpoint:
    """A target on a fake clock: it refuses the next key until `takes_at`, and notes when each call came."""

    def __init__(self, rotation_wait: float, takes_at: float = float("inf"), call_seconds: float = CALL_SECONDS) -> None:
        self.rotation_wait, self.takes_at, self.call_seconds = rotation_wait, takes_at, call_seconds
        self.now = 0.0
        self.called_at: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds

    def claims(self) -> dict:
        return {"sub": "conformance-user"}

    def send(self, token: str) -> Answer:
        self.called_at.append(self.now)
        self.now += self.call_seconds
        return Answer(200 if self.called_at[-1] >= self.takes_at else 401, "", self.call_seconds)


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate()


def _calls(endpoint: _Endpoint, key: SigningKey) -> tuple[Answer, int, float]:
    return _calls_with(endpoint, key, clock=endpoint.clock, sleep=endpoint.sleep)  # type: ignore[arg-type]


def test_the_pauses_start_short_and_double_up_to_the_longest():
    pauses = list(itertools.islice(retry_pauses(), 12))
    assert pauses[0] == ROTATION_RETRY_FIRST_SECONDS
    assert all(after == min(2 * before, ROTATION_RETRY_SECONDS) for before, after in zip(pauses, pauses[1:]))
    assert pauses[-1] == ROTATION_RETRY_SECONDS


def test_an_endpoint_that_refetches_soon_is_seen_taking_the_key_soon_after(key):
    # A cooldown of a tenth of a second, as the kit's own tests give their backends.
    endpoint = _Endpoint(rotation_wait=35, takes_at=0.1)
    answer, calls, seconds = _calls(endpoint, key)
    assert answer.accepted
    assert calls == len(endpoint.called_at) == 3
    assert endpoint.called_at[-1] < 0.1 + 2 * ROTATION_RETRY_FIRST_SECONDS + 3 * CALL_SECONDS


def test_an_endpoint_that_never_takes_the_key_is_called_until_the_end_of_the_wait_and_no_longer(key):
    endpoint = _Endpoint(rotation_wait=35)
    answer, calls, seconds = _calls(endpoint, key)
    gaps = [after - before for before, after in zip(endpoint.called_at, endpoint.called_at[1:])]

    assert (answer.status, calls) == (401, len(endpoint.called_at))
    assert endpoint.called_at[-1] == pytest.approx(35)  # the endpoint gets the whole wait
    assert seconds == pytest.approx(35 + CALL_SECONDS)
    assert min(gaps[:-1]) >= ROTATION_RETRY_FIRST_SECONDS  # never a flood
    assert max(gaps) == pytest.approx(ROTATION_RETRY_SECONDS + CALL_SECONDS)  # and a call a second at worst
    assert calls <= 35 / ROTATION_RETRY_SECONDS + 8


def test_a_call_that_outlasts_the_wait_is_followed_by_one_after_it(key):
    # On a slow machine: an endpoint whose cooldown ran out during the wait still gets a call after it.
    endpoint = _Endpoint(rotation_wait=0.5, takes_at=0.1, call_seconds=0.6)
    answer, calls, seconds = _calls(endpoint, key)
    assert answer.accepted
    assert endpoint.called_at == [0, 0.6]


def test_a_wait_of_zero_makes_one_call(key):
    endpoint = _Endpoint(rotation_wait=0)
    assert _calls(endpoint, key)[1] == 1
