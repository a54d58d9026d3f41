"""The connection pools: a fair wait for a free connection, dead connections replaced without a round trip, and a
deadline on every wait for the database.

peewee's pools wake one waiter per returned connection, but a request arriving meanwhile may take that connection
first; the woken waiter then sleeps again until its next one-second poll. Under a burst most of the wait goes to
those polls and requests time out while connections sit free (bench/load.py on PostgreSQL: 500 of 1,000 steps
refused). Here a returned connection is handed to the longest waiter, and a newcomer queues behind the waiters.

A database that stops answering (a frozen network, a host that hangs) refuses nothing and closes nothing: without a
deadline, every request then waits as long as the stall does, and a PostgreSQL connect waits for ever (libpq's
`connect_timeout` is not applied to the non-blocking connect that psycogreen drives). With `timeout_seconds`, a pool
holds every wait to it: for a free connection (the pool's own wait, capped at it), opening one, each statement, BEGIN,
COMMIT and ROLLBACK. A wait past it raises `DatabaseTimeout` (an OperationalError, so a 503), and its connection is
closed, never handed out again: what the server has read of it, or will still send, is unknown. The statement is not
sent again either: a stall is not a dead connection, and a second attempt would wait as long again. Once one wait has
timed out, every wait is refused at once until the database answers again (`Stall`).
"""
from __future__ import annotations

import heapq
import logging
import math
import time
from collections import deque
from typing import TYPE_CHECKING, Callable

import gevent
import gevent.event
from gevent import monkey
from peewee import InterfaceError, OperationalError, __exception_wrapper__  # type: ignore[attr-defined]  # not stubbed
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

#: Seconds between two questions the process asks a database known to be stalled (see `Stall`).
PROBE_INTERVAL_SECONDS = 0.5
#: SQLite virtual-machine steps between two looks at a statement's deadline (well under a millisecond of work).
SQLITE_PROGRESS_STEPS = 10_000

# The unpatched select: asking whether an idle socket is readable must not yield to the hub.
_select = monkey.get_original("select", "select")


class DatabaseTimeout(OperationalError):
    """The database did not answer within the pool's deadline: the request is refused (503), its connection closed."""


class Stall:
    """Whether the database has stopped answering: known once a wait reached its deadline with nothing heard, over at
    the next answer of any kind (a refusal too: it answered).

    Meanwhile every wait is refused at once, and the process asks the database itself, every PROBE_INTERVAL_SECONDS
    on a connection of its own, each time with the whole deadline (`ask`). Without that, each request arriving during
    a stall would wait out its own deadline holding a connection and a place at the work gate, and those queued behind
    it at the gate longer still (100 requests during a 6 s stall with a 1 s deadline: a median of 4 s, and 20 refused
    `busy` after 5 s). A question in flight hears the database the moment it answers again; one is always asked less
    than an interval ago, however the network delivers its first packets after a long outage.
    """

    def __init__(self, ask: Callable[[], None]) -> None:
        self.since: float | None = None
        self._ask = ask

    def check(self) -> None:
        """Before a wait: DatabaseTimeout at once while the database is known to be stalled."""
        if self.since is not None:
            raise DatabaseTimeout(f"the database has not answered for {time.monotonic() - self.since:.1f} s")

    def heard(self) -> None:
        """The database answered (a wait ended other than by its deadline)."""
        if self.since is not None:
            log.warning("the database answers again, after %.1f s", time.monotonic() - self.since)
            self.since = None

    def timed_out(self) -> None:
        """A wait reached its deadline with nothing heard."""
        if self.since is None:
            self.since = time.monotonic()
            log.warning("the database stopped answering: requests are refused until it answers again")
            gevent.spawn(self._watch)

    def _watch(self) -> None:
        while self.since is not None:
            gevent.spawn(self._ask_once)
            gevent.sleep(PROBE_INTERVAL_SECONDS)

    def _ask_once(self) -> None:
        try:
            self._ask()
        except DatabaseTimeout:
            return
        except Exception:  # a refusal, an error: the database (or its host) answered
            log.debug("the database answered the stall's question with an error", exc_info=True)
        self.heard()


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


if TYPE_CHECKING:
    # The engine pool this mixes into (playhouse ships no types, so its names are Any here): `_Pool`'s calls on
    # peewee's connection state and pool internals are then not errors of an unknown attribute on `object`.
    from playhouse.pool import PooledDatabase as _Engine
else:
    _Engine = object


class _Pool(_Engine):
    """What both pools share: the fair checkout, and a dead connection replaced once on a read or BEGIN.

    Only reads and BEGIN are run again: a write outside a transaction may have reached the server before the
    connection broke, so it fails (503) rather than risk being done twice. Inside a transaction nothing is run
    again here; the transaction as a whole may be (`database.retry_transient`).
    """

    def __init__(self, database, *, max_connections: int, wait_seconds: float, timeout_seconds: float | None = None,
                 **kwargs) -> None:
        self._checkouts = Checkouts(max_connections)
        self.timeout_seconds = timeout_seconds
        self._stall = Stall(self._ask)
        # Waiting for a free connection is a wait on the database too: never longer than the deadline.
        self._wait_seconds = wait_seconds if timeout_seconds is None else min(wait_seconds, timeout_seconds)
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
            conn = self._connect()  # outside peewee's wrapper, which would make a DatabaseTimeout a plain one
            with __exception_wrapper__:
                self._state.set_connection(conn)
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
        conn = self._within_deadline(self._open_new)  # the engine's own connect, outside every lock
        self._opened(conn)
        with self._pool_lock:
            self._in_use[self.conn_key(conn)] = PoolConnection(time.time(), conn, time.time())
        return conn

    def _open_new(self):
        with __exception_wrapper__:  # the driver's errors as peewee's, as peewee's own connect gives them
            return super(PooledDatabase, self)._connect()

    def close(self) -> bool:
        held = not self.is_closed()
        try:
            return super().close()
        finally:
            if held and self.is_closed():
                self._checkouts.give_back()

    def execute_sql(self, sql, params=None):
        def run():
            return self._within_deadline(lambda: super(_Pool, self).execute_sql(sql, params))

        if self.in_transaction() or sql.lstrip()[:6].upper() != "SELECT":
            return run()
        return self._once_more_if_lost(run)

    def begin(self, *args, **kwargs):
        return self._once_more_if_lost(lambda: self._within_deadline(lambda: super(_Pool, self).begin(*args, **kwargs)))

    def commit(self):
        return self._within_deadline(super().commit)

    def rollback(self):
        if self._lost():  # abandoned (or dropped) mid-transaction: the server rolls back what a lost connection began
            return None
        return self._within_deadline(super().rollback)

    def _within_deadline(self, run):
        """`run()`, or DatabaseTimeout once the database has kept it waiting `timeout_seconds`, or at
        once while it is known to have stopped answering and another wait is asking it (`Stall`)."""
        if self.timeout_seconds is None:
            return run()
        self._stall.check()
        deadline = gevent.Timeout(self.timeout_seconds)
        deadline.start()
        try:
            result = run()
        except gevent.Timeout as fired:
            if fired is not deadline:
                raise
            self._abandon()
            self._stall.timed_out()
            raise DatabaseTimeout(f"the database did not answer within {self.timeout_seconds:g} s") from None
        except Exception:
            self._stall.heard()  # an error the database sent, or a refusal: it answered
            raise
        finally:
            deadline.close()
        self._stall.heard()
        return result

    def _ask(self) -> None:
        """Open a connection of its own (outside the pool), ask `SELECT 1` and close it, all within the deadline:
        DatabaseTimeout if the database did not answer, its own error if it refused."""
        conn = None
        deadline = gevent.Timeout(self.timeout_seconds)
        deadline.start()
        try:
            conn = self._open_new()
            conn.cursor().execute("SELECT 1")
        except gevent.Timeout as fired:
            if fired is not deadline:
                raise
            raise DatabaseTimeout(f"the database did not answer within {self.timeout_seconds:g} s") from None
        finally:
            deadline.close()
            if conn is not None:
                conn.close()

    def _abandon(self) -> None:
        """Close this greenlet's connection where it stands; the pool then drops it at check-in (`_can_reuse`)."""
        if not self.is_closed():
            self._close_raw(self._state.conn)

    def _opened(self, conn) -> None:
        """A new connection was just opened (a hook for the engine's own set-up)."""

    def _once_more_if_lost(self, run):
        try:
            return run()
        except DatabaseTimeout:  # a stall, not a dead connection: a second attempt would wait as long again
            raise
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

    def _can_reuse(self, conn) -> bool:
        # Only an idle, open connection goes back. peewee would roll back one left mid-transaction, a round trip that
        # a stalled database would never answer; such a connection is closed instead.
        return not conn.closed and self._adapter.txn_status(conn) == self._adapter.txn_idle


class PooledSqlite(_Pool, PooledSqliteDatabase):
    """SQLite's pool (a file has no connection to lose, but its checkouts wait as fairly).

    SQLite answers in the calling thread and never yields, so a gevent timer cannot cut it short. Its two ways of
    not answering get the deadline otherwise: a writer holding the lock is waited for up to `busy_timeout` (set from
    the deadline by `service.database`), and a statement still running at its deadline is interrupted by a progress
    handler, which SQLite calls every SQLITE_PROGRESS_STEPS steps of its virtual machine.
    """

    #: When the statement running now must have finished (no other greenlet runs meanwhile: SQLite never yields).
    _statement_deadline = math.inf

    def _within_deadline(self, run):
        if self.timeout_seconds is None:
            return run()
        self._statement_deadline = time.monotonic() + self.timeout_seconds
        try:
            return run()
        except OperationalError as error:
            if time.monotonic() < self._statement_deadline:
                raise
            raise DatabaseTimeout(f"the database did not answer within {self.timeout_seconds:g} s ({error})") from None
        finally:
            self._statement_deadline = math.inf

    def _opened(self, conn) -> None:
        if self.timeout_seconds is not None:
            conn.set_progress_handler(self._past_deadline, SQLITE_PROGRESS_STEPS)

    def _past_deadline(self) -> bool:
        return time.monotonic() > self._statement_deadline

