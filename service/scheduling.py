"""Cooperative scheduling under gevent: let the greenlets ready to run now go first, and only when there are any.

Three places yield for fairness (the work gate as a request enters, a step's lone call, a group of records about to be
written); none of them is about admission or storage, so the helper sits here, below all three, with gevent only.
"""
from __future__ import annotations

import gevent


def yield_to_ready() -> None:
    """Let every other greenlet ready to run now go first, if there is any: `gevent.sleep(0)`, less its pass through
    the loop (~11k instructions) when none is. Ready: woken in the loop's current pass (its pending watchers) or queued
    on its callback queue (spawned, or yielded); a socket that became readable since the loop last looked is seen at
    its next pass either way."""
    loop = gevent.get_hub().loop
    try:
        others = loop.pendingcnt or len(loop._callbacks)
    except AttributeError:  # a loop other than libev's, which tells neither: yield, as always
        others = True
    if others:
        gevent.sleep(0)
