"""One model step: all of its calls at once, each call's outcome kept, in the calls' order."""
from __future__ import annotations

import contextvars
import logging
import time
from typing import Callable

import gevent.pool

from service.dispatch.failures import TRANSPORT_ERROR
from service.dispatch.transport import CallOutcome
from service.limits import STEP_POOL_SIZE
from service.scheduling import yield_to_ready

log = logging.getLogger(__name__)


def run_step(thunks: list[Callable[[], CallOutcome]], pool_size: int = STEP_POOL_SIZE) -> list[CallOutcome]:
    """Run every thunk in a bounded pool of greenlets and return their outcomes in the same order.

    The step takes as long as its slowest call (calls beyond `pool_size` wait for a free slot).
    Nothing is raised across greenlets: a call that fails unexpectedly becomes that call's
    transport error, logged, and the others carry on. Each call runs in a copy of the caller's context,
    so what it logs carries the caller's request id (a spawned greenlet starts with an empty one).
    """
    if len(thunks) == 1:
        # Nothing to run beside it: the caller's greenlet runs it, without a pool, a spawn and a join (most steps).
        # It yields once first, as a spawned call's greenlet would: under a burst the rest of each arrival's work
        # then queues behind requests that came in meanwhile (/healthz's p99 under bench/load.py: ~430 → ~320 ms
        # on a busy machine), at the cost of one pass through gevent's loop when another greenlet is ready.
        yield_to_ready()
        return [_kept(thunks[0])]
    pool = gevent.pool.Pool(pool_size)
    greenlets = []
    try:
        # A context each: one context cannot be entered by two greenlets at once.
        greenlets = [pool.spawn(contextvars.copy_context().run, _kept, thunk) for thunk in thunks]
        pool.join()
    finally:
        pool.kill()  # only does anything if this step itself was interrupted
    # A greenlet killed by GreenletExit counts as successful, its value the exception: check the type.
    return [
        g.value if isinstance(g.value, CallOutcome) else CallOutcome(TRANSPORT_ERROR, detail="the call was interrupted")
        for g in greenlets
    ]


def _kept(thunk: Callable[[], CallOutcome]) -> CallOutcome:
    started = time.monotonic()
    try:
        return thunk()
    except Exception as exc:  # one call's bug must not take the step down with it
        log.exception("a tool call failed unexpectedly")
        return CallOutcome(
            TRANSPORT_ERROR,
            latency_ms=round((time.monotonic() - started) * 1000),
            detail=f"unexpected {type(exc).__name__}",
        )
