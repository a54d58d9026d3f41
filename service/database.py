"""The one database handle, initialised from a URL: SQLite by default, PostgreSQL for several instances.

Models bind to `db`, a proxy; `open_database(url)` picks the engine. Connections are opened per request by the
app (see `service.__init__`) and per command by the CLI.
"""
from __future__ import annotations

from urllib.parse import urlparse

from peewee import DatabaseProxy, PostgresqlDatabase, SqliteDatabase
from playhouse.pool import PooledPostgresqlDatabase, PooledSqliteDatabase

db = DatabaseProxy()

#: Grows each time `db` is bound to a database, so caches of immutable rows can key on it (row ids
#: repeat across databases, e.g. one per test).
_generation = 0

SQLITE_PRAGMAS = {
    "journal_mode": "wal",  # readers never block the writer
    "foreign_keys": 1,
    "busy_timeout": 10_000,  # ms; concurrent writers wait instead of failing at once
    "synchronous": "normal",
}


def make_database(url: str, *, pooled: bool = True) -> SqliteDatabase | PostgresqlDatabase:
    """A peewee database for `sqlite:///path` or `postgresql://user@host:port/name[?options=…]`."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = parsed.path[1:] if parsed.path.startswith("/") else parsed.path
        if pooled and path and path != ":memory:":
            # Pooled: closing a SQLite connection checkpoints the WAL (~4 ms a request, measured by bench/);
            # a pooled one is handed back open instead.
            return PooledSqliteDatabase(path, pragmas=SQLITE_PRAGMAS, check_same_thread=False,
                                        max_connections=32, stale_timeout=300)
        return SqliteDatabase(path or ":memory:", pragmas=SQLITE_PRAGMAS, check_same_thread=False)
    if parsed.scheme in ("postgres", "postgresql"):
        options = dict(
            user=parsed.username,
            password=parsed.password,
            host=parsed.hostname,
            port=parsed.port or 5432,
        )
        if parsed.query:
            # e.g. `options=-csearch_path%3Dtest_123` to keep each test run in its own schema.
            from urllib.parse import parse_qsl

            options.update(dict(parse_qsl(parsed.query)))
        name = parsed.path.lstrip("/")
        if pooled:
            return PooledPostgresqlDatabase(name, max_connections=32, stale_timeout=300, **options)
        return PostgresqlDatabase(name, **options)
    raise ValueError(f"Unsupported database URL {url!r}: use sqlite:///path or postgresql://host/name")


def open_database(url: str) -> SqliteDatabase | PostgresqlDatabase:
    """Bind the models' handle to the database at `url` and return it."""
    global _generation
    database = make_database(url)
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
