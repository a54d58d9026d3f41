"""The work gate: at most a few requests of one process do their CPU work at once; the rest queue, briefly.

Under gevent every greenlet ready to run waits its turn in one run queue. A burst of a thousand steps makes a thousand
greenlets ready, each with a millisecond or two of work (verify the token, read the turn, build and sign the calls;
later, record them and answer), and a liveness probe arriving then waits behind all of them: bench/load.py measured
/healthz at 300 ms p99 with 1,000 steps arriving at once. A request holds a place at the gate while it works and
gives it back while it waits on the network (`database.released`), so only the holders and the newly arrived are
ever ready at once. A request that cannot get a place within the gate's wait is refused 503 `busy` with Retry-After:
the process is past its capacity.

A request that finds a place free still yields once before its work. Its greenlet was woken by its socket, and the
event loop runs every greenlet woken by a socket in one pass, however long that takes: with SQLite, whose statements
never yield, a burst's arrivals did all their work in such a pass, and /healthz waited up to a second behind them.
After the yield the work runs from gevent's callback queue, which gevent leaves to poll the sockets again once its
switch interval (5 ms) has passed (it looks every fifty callbacks), so a probe is answered between slices of the burst
instead of after all of it (tests/load/test_work_gate.py shows the order). With nothing else ready to run there is no
one to yield to, and the yield is skipped (`scheduling.yield_to_ready`): an idle worker's step would otherwise pay a
pass through the loop for nothing, three times.

Each app has its gate (`create_app` builds it from the settings); a request enters its app's, and `leave` and
`stepped_out` act on whichever the request holds a place at, so code below the HTTP layer needs no app. Outside a
request (the CLI, a test calling the domain directly) nothing is held and they do nothing.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

from gevent.local import local
from gevent.lock import BoundedSemaphore

from service.errors import busy
from service.limits import BUSY_RETRY_AFTER_SECONDS
from service.scheduling import yield_to_ready


class WorkGate:
    """`size` places; a request waits up to `wait_seconds` for one."""

    def __init__(self, size: int, wait_seconds: float) -> None:
        if size < 1:
            raise ValueError("the work gate needs at least one place")
        self.size = size
        self.wait_seconds = wait_seconds
        self._places = BoundedSemaphore(size)
        #: When the last free place was taken, none given back since (None: a place is free, or was given back).
        self._full_since: float | None = None

    def take(self) -> bool:
        """A place, waiting up to the gate's wait; False if none came free in time."""
        if not self._places.acquire(timeout=self.wait_seconds):
            return False
        self._taken()
        return True

    def take_eventually(self) -> None:
        """A place, however long it takes: for a request coming back from the network with work under way."""
        self._places.acquire()
        self._taken()

    def _taken(self) -> None:
        if self._places.counter == 0 and self._full_since is None:
            self._full_since = time.monotonic()

    def give_back(self) -> None:
        self._full_since = None
        self._places.release()

    def saturated(self, grace_seconds: float) -> bool:
        """Whether every place has been taken for longer than `grace_seconds` with none given back: the process
        cannot admit work, and readiness says so. A busy gate whose places turn over is not saturated."""
        since = self._full_since
        return since is not None and time.monotonic() - since > grace_seconds

    @property
    def free(self) -> int:
        """Places not held right now."""
        return self._places.counter


#: The gate the current greenlet (one request) holds a place at, if any.
_held = local()


def enter(gate: WorkGate) -> None:
    """Take this request's place at `gate` (once), or refuse it 503 `busy` if none comes free within the wait."""
    if getattr(_held, "gate", None) is not None:
        return
    if not gate.take():
        raise busy(BUSY_RETRY_AFTER_SECONDS)
    _held.gate = gate
    yield_to_ready()  # the work goes on from the callback queue, not the socket pass (see the module's docstring)


def held() -> WorkGate | None:
    """The gate this request holds a place at, if any."""
    return getattr(_held, "gate", None)


def leave() -> None:
    """Give this request's place back, if it holds one (the end of a request)."""
    gate = getattr(_held, "gate", None)
    if gate is not None:
        _held.gate = None
        gate.give_back()


@contextmanager
def stepped_out() -> Iterator[None]:
    """Hold no place while waiting on the network; take one again afterwards, however long that takes, since the
    calls already made must still be recorded and answered."""
    gate = getattr(_held, "gate", None)
    if gate is None:
        yield
        return
    leave()
    try:
        yield
    finally:
        gate.take_eventually()
        _held.gate = gate
