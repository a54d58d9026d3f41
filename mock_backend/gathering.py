"""Calls that answer only once enough of them are at the endpoint at the same time.

A check that calls ran in parallel used to time them: two one-second calls in under two seconds.
That costs a second per check and fails now and then on a loaded machine. A gathering proves the
overlap directly: each call of a group waits at the endpoint until `count` calls of the group are
there at once, then all answer `met: true`; a platform that sends them one after another leaves
each call alone until its wait runs out, and it answers `met: false`. A parallel platform costs
milliseconds, a sequential one the wait per call.

The mock serves under gevent (one thread, cooperative), so the bookkeeping needs no lock.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import gevent.event

#: A gathering may wait for at most this many calls.
MAX_GATHERING_SIZE = 100

#: At most this many groups are open at once; a call to one more is refused (503), so no caller can
#: make the mock keep an unbounded number of them.
MAX_OPEN_GROUPS = 1_000

#: A group's name is at most this long.
MAX_GROUP_CHARS = 100


class TooManyGroups(RuntimeError):
    """Every slot for an open group is taken."""


@dataclass
class _Group:
    met: gevent.event.Event = field(default_factory=gevent.event.Event)
    present: int = 0
    most: int = 0


@dataclass(frozen=True)
class Gathered:
    """What one call of a gathering saw: whether the group met, how many were there at most, how long it waited."""

    met: bool
    most_present: int
    waited_seconds: float


class Gatherings:
    """The open groups of one mock backend."""

    def __init__(self, max_open: int | None = None) -> None:
        self._open: dict[str, _Group] = {}
        self._max_open = MAX_OPEN_GROUPS if max_open is None else max_open

    def __contains__(self, group: str) -> bool:
        return group in self._open

    def join(self, group: str, count: int, wait_seconds: float) -> Gathered:
        """Wait until `count` calls of `group` are here at once, or `wait_seconds` pass.

        A group closes when its last call leaves, so the next calls under the same name gather anew.
        """
        gathering = self._open.get(group)
        if gathering is None:
            if len(self._open) >= self._max_open:
                raise TooManyGroups(f"too many gatherings are open (at most {self._max_open})")
            gathering = self._open[group] = _Group()
        gathering.present += 1
        gathering.most = max(gathering.most, gathering.present)
        if gathering.present >= count:
            gathering.met.set()
        started = time.monotonic()
        try:
            met = gathering.met.wait(wait_seconds)
        finally:
            gathering.present -= 1
            if gathering.present == 0:
                del self._open[group]
        return Gathered(bool(met), gathering.most, time.monotonic() - started)
