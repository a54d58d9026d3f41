"""The connection pools: a fair wait for a free connection, and dead connections replaced without a round trip.

peewee's pools wake one waiter per returned connection, but a request arriving meanwhile may take that connection
first; the woken waiter then sleeps again until its next one-second poll. Under a burst most of the wait goes to
those polls and requests time out while connections sit free (bench/load.py on PostgreSQL: 500 of 1,000 steps
refused). Here a returned connection is handed to the longest waiter, and a newcomer queues behind the waiters.
"""
from __future__ import annotations

import heapq
import logging
import time
from collections import deque

import gevent.event
from gevent import monkey
from peewee import InterfaceError, OperationalError, __exception_wrapper__
from playhouse.pool import (
    MaxConnectionsExceeded,
    PoolConnection,
    PooledDatabase,
    PooledPostgresqlDatabase,
    PooledSqliteDatabase,
)

log = logging.getLogger(__name__)

#: Seconds an idle pooled connection is kept before it is closed and a fresh one opened.
STALE_SECONDS = 300

# The unpatched select: asking whether an idle socket is readable must not yield to the hub.
_select = monkey.get_original("select", "select")


class Checkouts:
    """At most `size` connections checked out at once; waiters served first come, first served."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._waiters: deque[gevent.event.Event] = deque()

    def take(self, wait_seconds: float) -> None:
        """Take a checkout, waiting up to `wait_seconds` behind earlier waiters, or MaxConnectionsExceeded."""
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return
        turn = gevent.event.Event()
        self._waiters.append(turn)
        try:
            if turn.wait(wait_seconds) or turn.is_set():  # handed over, possibly just as the wait ran out
                return
        except BaseException:  # interrupted while waiting (killed, an outer timeout): leak no checkout
            if turn.is_set():
                self.give_back()
            else:
                self._waiters.remove(turn)
            raise
        self._waiters.remove(turn)
        raise MaxConnectionsExceeded(f"no database connection came free within {wait_seconds:g} s")

    def give_back(self) -> None:
        """Return a checkout: straight to the longest waiter, if any."""
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self.free += 1


class _Pool:
    """What both pools share: the fair checkout, and a dead connection replaced once on a read or BEGIN.

    Only reads and BEGIN are run again: a write outside a transaction may have reached the server before the
    connection broke, so it fails (503) rather than risk being done twice. Inside a transaction nothing is run
    again here; the transaction as a whole may be (`database.retry_transient`).
    """

    def __init__(self, database, *, max_connections: int, wait_seconds: float, **kwargs) -> None:
        self._checkouts = Checkouts(max_connections)
        self._wait_seconds = wait_seconds
        # peewee's own limit stays as a backstop; the checkouts keep below it, so it never waits itself.
        super().__init__(database, max_connections=max_connections, stale_timeout=STALE_SECONDS, **kwargs)

    def connect(self, reuse_if_open: bool = False) -> bool:
        if not self.is_closed():
            return super().connect(reuse_if_open)  # peewee's answer: reuse, or "already opened"
        self._checkouts.take(self._wait_seconds)
        try:
            # peewee's connect holds the database-wide lock while it opens a connection, and its pool its own lock
            # too: one slow PostgreSQL connect (a backend forked, authenticated) then stalls every checkout and
            # check-in of the process. The connection state is this greenlet's own and the checkouts bound how
            # many are out, so only the pool's bookkeeping is locked here, never the opening.
            self._state.reset()
            with __exception_wrapper__:
                self._state.set_connection(self._connect())
                if self.server_version is None:
                    self._set_server_version(self._state.conn)
                self._initialize_connection(self._state.conn)
            return True
        except BaseException:
            self._checkouts.give_back()
            raise

    def _connect(self):
        with self._pool_lock:
            while self._connections:
                timestamp, _, conn = heapq.heappop(self._connections)
                if self._is_closed(conn) or self._is_stale(timestamp):
                    self._close_raw(conn)  # a dead one too: the server's goodbye may have left its socket open
                    continue
                self._in_use[self.conn_key(conn)] = PoolConnection(timestamp, conn, time.time())
                return conn
        conn = super(PooledDatabase, self)._connect()  # the engine's own connect, outside every lock
        with self._pool_lock:
            self._in_use[self.conn_key(conn)] = PoolConnection(time.time(), conn, time.time())
        return conn

    def close(self) -> bool:
        held = not self.is_closed()
        try:
            return super().close()
        finally:
            if held and self.is_closed():
                self._checkouts.give_back()

    def execute_sql(self, sql, params=None):
        if self.in_transaction() or sql.lstrip()[:6].upper() != "SELECT":
            return super().execute_sql(sql, params)
        return self._once_more_if_lost(lambda: super(_Pool, self).execute_sql(sql, params))

    def begin(self, *args, **kwargs):
        return self._once_more_if_lost(lambda: super(_Pool, self).begin(*args, **kwargs))

    def _once_more_if_lost(self, run):
        try:
            return run()
        except (OperationalError, InterfaceError):
            if not self._lost():
                raise
            log.info("a pooled database connection was found dead; replacing it")
            self.manual_close()
            return run()

    def _lost(self) -> bool:
        conn = None if self.is_closed() else self._state.conn
        return conn is not None and bool(getattr(conn, "closed", 0))


class PooledPostgres(_Pool, PooledPostgresqlDatabase):
    """PostgreSQL's pool, told a dead idle connection without a round trip.

    peewee's own check sends `SELECT 1` on every checkout. An idle connection has nothing to say, so one the
    server has terminated or closed shows as readable: one non-blocking select instead of a round trip.
    """

    def _is_closed(self, conn) -> bool:
        if conn.closed or self._adapter.txn_status(conn) != self._adapter.txn_idle:
            return True
        try:
            return bool(_select([conn.fileno()], [], [], 0.0)[0])
        except (OSError, ValueError):
            return True


class PooledSqlite(_Pool, PooledSqliteDatabase):
    """SQLite's pool (a file has no connection to lose, but its checkouts wait as fairly)."""
