"""Keeping the call log's day partitions made ahead (PostgreSQL): at each service process's start, then every hour.

Every process does it (gunicorn's workers, every machine): a partition is created once, under an advisory lock, and
the others find it made. A failure (the lock not had within a second, the database away) is logged and tried again
at the next upkeep, CALL_LOG_DAYS_AHEAD days before any record needs the partition; meanwhile records of a day with no
partition land in the default partition and move into the day's when it is made. SQLite has nothing to keep.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

import gevent
from peewee import DatabaseError

from service.limits import CALL_LOG_UPKEEP_SECONDS
from service.migrations import call_partitions

log = logging.getLogger(__name__)


def upkeep(database, now: float) -> list[str]:
    """Create the partitions missing from today to CALL_LOG_DAYS_AHEAD days ahead; their names (none on SQLite, or
    when the database refused: logged, for the next upkeep to try again)."""
    try:
        with database.connection_context():
            if not call_partitions.partitioned(database):
                return []
            made = call_partitions.ensure_ahead(database, now)
    except DatabaseError as error:
        log.warning("call log partitions not made ahead this time (tried again in an hour): %s", error)
        return []
    if made:
        log.info("call log partitions made ahead: %s", ", ".join(made))
    return made


def keep_partitions_ahead(database, *, clock: Callable[[], float] = time.time,
                          every: float = CALL_LOG_UPKEEP_SECONDS) -> gevent.Greenlet | None:
    """Run `upkeep` now, then every `every` seconds in a greenlet of its own (returned; None on SQLite)."""
    if not call_partitions.is_postgres(database):
        return None
    upkeep(database, clock())

    def again() -> None:
        while True:
            gevent.sleep(every)
            upkeep(database, clock())

    return gevent.spawn(again)
