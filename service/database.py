"""The one database handle, initialised from a URL: SQLite by default, PostgreSQL for several instances.

Models bind to `db`, a proxy; `open_database(url)` picks the engine and its pool (`service.pool`). A request takes
a connection when it starts (`connect()`) and gives it back when it ends (`release()`), or earlier with `released()`
before it waits on the network (a tool call, a model): no connection is held across such a wait, so an instance's
capacity for waiting steps is not its pool size.

A database that stops answering holds nothing for long: given `timeout_seconds` (the service's
TOOLGATE_DATABASE_TIMEOUT_SECONDS), every wait on it has that deadline. On PostgreSQL the server's own timeouts (a
statement, a lock, a pause inside a transaction) fire first, at SERVER_TIMEOUT_SHARE of it, so a database that is slow
but alive answers with a clean error on a connection that stays usable; the pool's deadline on each wait of the
driver (`service.pool`) is for one that cannot answer at all (a frozen network). On SQLite, `busy_timeout` and a
progress handler carry it. The command line's maintenance work (migrations, purges) runs without it.

Every way the database can fail to serve (unreachable, connection lost, pool exhausted, no answer within the
deadline, a serialization failure or deadlock) is named once here, `UNAVAILABLE`, and answered by every surface
with `unavailable_error()`: 503 `database-unavailable` with Retry-After.
"""
from __future__ import annotations

import functools
import logging
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypedDict, TypeVar
from urllib.parse import parse_qsl, urlparse

from peewee import DatabaseProxy, InterfaceError, OperationalError, PostgresqlDatabase, SqliteDatabase
from playhouse.pool import MaxConnectionsExceeded

from service import gate
from service.errors import ServiceError, database_unavailable
from service.limits import DATABASE_POOL_SIZE, DATABASE_POOL_WAIT_SECONDS
from service.pool import PooledPostgres, PooledSqlite

log = logging.getLogger(__name__)

db = DatabaseProxy()

#: Seconds to reach PostgreSQL before the attempt fails (a 503), unless the URL says otherwise. libpq applies it to a
#: blocking connect only: under gevent (psycogreen) the connect is non-blocking, and the pool's deadline holds it.
CONNECT_TIMEOUT_SECONDS = 3
#: Seconds a client is told to wait after a 503 for the database.
RETRY_AFTER_SECONDS = 1
#: The part of the deadline PostgreSQL's own statement, lock and idle-in-transaction timeouts are given, so the
#: server's clean refusal comes before the client gives the connection up.
SERVER_TIMEOUT_SHARE = 0.8
#: PostgreSQL SQLSTATEs worth running a transaction again for: serialization_failure, deadlock_detected.
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})

#: Grows each time `db` is bound to a database, so caches of immutable rows can key on it (row ids
#: repeat across databases, e.g. one per test).
_generation = 0

SQLITE_PRAGMAS = {
    "journal_mode": "wal",  # readers never block the writer
    "foreign_keys": 1,
    "busy_timeout": 10_000,  # ms; concurrent writers wait instead of failing at once (the deadline, when given)
    "synchronous": "normal",
}


class _PoolArgs(TypedDict):
    """The keywords both pools take (`pool._Pool`), typed one by one."""

    max_connections: int
    wait_seconds: float
    timeout_seconds: float | None


def make_database(url: str, *, pooled: bool = True, pool_size: int = DATABASE_POOL_SIZE,
                  pool_wait_seconds: float = DATABASE_POOL_WAIT_SECONDS,
                  timeout_seconds: float | None = None) -> SqliteDatabase | PostgresqlDatabase:
    """A peewee database for `sqlite:///path` or `postgresql://user@host:port/name[?options=…]`.

    Pooled, at most `pool_size` connections are open at once, and a request waits up to `pool_wait_seconds`
    for one before `MaxConnectionsExceeded` (a 503). With `timeout_seconds` (pooled only: the service's database),
    no wait on the database lasts longer, that one included (a 503 too; see the module's docstring).
    """
    parsed = urlparse(url)
    if not pooled:
        timeout_seconds = None
    pool = _PoolArgs(max_connections=pool_size, wait_seconds=pool_wait_seconds, timeout_seconds=timeout_seconds)
    if parsed.scheme == "sqlite":
        path = parsed.path[1:] if parsed.path.startswith("/") else parsed.path
        if pooled and path and path != ":memory:":
            pragmas = SQLITE_PRAGMAS if timeout_seconds is None else {
                **SQLITE_PRAGMAS, "busy_timeout": _milliseconds(timeout_seconds)}
            # Pooled: closing a SQLite connection checkpoints the WAL (~4 ms a request, measured by bench/);
            # a pooled one is handed back open instead.
            return PooledSqlite(path, pragmas=pragmas, check_same_thread=False, **pool)
        return SqliteDatabase(path or ":memory:", pragmas=SQLITE_PRAGMAS, check_same_thread=False)
    if parsed.scheme in ("postgres", "postgresql"):
        options: dict[str, Any] = dict(  # the driver's connect keywords, passed through as given
            user=parsed.username,
            password=parsed.password,
            host=parsed.hostname,
            port=parsed.port or 5432,
        )
        # e.g. `options=-csearch_path%3Dtest_123` to keep each test run in its own schema.
        options.update(dict(parse_qsl(parsed.query)))
        if pooled and timeout_seconds is not None:
            options["options"] = _server_timeouts(timeout_seconds, options.get("options", ""))
        # A database host that drops packets must not hold a request for the kernel's minutes-long connect.
        options.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
        name = parsed.path.lstrip("/")
        if pooled:
            return PooledPostgres(name, **pool, **options)
        return PostgresqlDatabase(name, **options)
    raise ValueError(f"Unsupported database URL {url!r}: use sqlite:///path or postgresql://host/name")


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _server_timeouts(timeout_seconds: float, given: str) -> str:
    """PostgreSQL's startup `options` with its statement, lock and idle-in-transaction timeouts set from the
    deadline; the URL's own `options` come after, so an operator's explicit value wins."""
    ms = _milliseconds(timeout_seconds * SERVER_TIMEOUT_SHARE)
    ours = " ".join(f"-c {name}={ms}" for name in
                    ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"))
    return f"{ours} {given}".strip()


def open_database(url: str, *, pool_size: int = DATABASE_POOL_SIZE,
                  pool_wait_seconds: float = DATABASE_POOL_WAIT_SECONDS,
                  timeout_seconds: float | None = None) -> SqliteDatabase | PostgresqlDatabase:
    """Bind the models' handle to the database at `url` and return it."""
    global _generation
    database = make_database(url, pool_size=pool_size, pool_wait_seconds=pool_wait_seconds,
                             timeout_seconds=timeout_seconds)
    db.initialize(database)
    _generation += 1
    return database


def generation() -> int:
    """Which binding of `db` is current (see `_generation`)."""
    return _generation


def is_postgres() -> bool:
    return isinstance(db.obj, PostgresqlDatabase)


def write_transaction():
    """A transaction for read-then-write work.

    SQLite's default deferred transaction upgrades its lock at the first write, and two such upgrades deadlock at
    once ("database is locked") instead of waiting; IMMEDIATE takes the write lock up front so writers queue on
    busy_timeout. PostgreSQL needs nothing special: unique indexes decide races there.
    """
    if isinstance(db.obj, SqliteDatabase):
        return db.obj.atomic(lock_type="IMMEDIATE")
    return db.obj.atomic()


#: What the database raises when it cannot serve right now (so: 503 and try again), not for a bad request:
#: unreachable, connection lost or refused, the pool exhausted, no answer within the deadline (`DatabaseTimeout`, and
#: the server's own statement and lock timeouts), a serialization failure or deadlock, SQLite busy.
#: Integrity errors (a lost race: 409) and data errors (a bad value: 4xx) are not among them.
UNAVAILABLE = (OperationalError, InterfaceError, MaxConnectionsExceeded)


def unavailable_error() -> ServiceError:
    """The one refusal every surface gives for any of UNAVAILABLE: 503 `database-unavailable` with Retry-After."""
    return database_unavailable(RETRY_AFTER_SECONDS)


def transient(error: BaseException) -> bool:
    """Whether running the same transaction again may succeed: a serialization failure or a deadlock."""
    if not isinstance(error, OperationalError):
        return False
    cause = error.args[0] if error.args else None
    return getattr(cause, "pgcode", None) in TRANSIENT_SQLSTATES


F = TypeVar("F", bound=Callable)


def retry_transient(function: F) -> F:
    """Run a whole write (its reads and its transaction) once more when the database aborted it as a
    serialization failure or deadlock; a second abort propagates (503)."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except OperationalError as error:
            if not transient(error) or db.obj.in_transaction():
                raise
            log.info("%s was aborted by the database (%s); running it again", function.__name__, error)
            return function(*args, **kwargs)

    return run  # type: ignore[return-value]


@contextmanager
def released() -> Iterator[None]:
    """Give this request's connection back to the pool, and its place at the work gate to the next request, while it
    waits on the network (tool calls, a model).

    The next query takes a connection again. Refused inside a transaction: a network wait never holds one.
    """
    database = db.obj
    if database.in_transaction():
        raise RuntimeError("a network wait inside a database transaction")
    if not database.is_closed():
        database.close()
    with gate.stepped_out():
        yield


def connect() -> None:
    """Take this request's connection from the pool now (waiting up to the pool's wait), if it holds none."""
    db.obj.connect(reuse_if_open=True)


def release() -> None:
    """Hand this request's connection back, if it holds one (the end of a request)."""
    database = db.obj
    if database is not None and not database.is_closed() and not database.in_transaction():
        database.close()
