"""Apps and databases: one app per set of settings, a migrated SQLite to copy, and PostgreSQL schemas of their own."""

import atexit
import contextlib
import secrets
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from flask import Flask

from service import create_app
from service.config import Config
from service.database import db, make_database, open_database
from service.migrations import check_current, migrate

#: Apps built so far, by every setting but the database; see `app_for`.
_apps: dict[str, Flask] = {}


def app_for(config: Config) -> Flask:
    """`create_app(config)`, built once per set of settings other than the database and given `config`'s database
    each time after, as create_app gives it: bound afresh (caches of rows key on the binding, so nothing of another
    test's database is seen) and refused if its schema is behind.

    Building an app takes a fifth of a second (its routes and OpenAPI document), and the tests want a few hundred;
    binding a database to one takes next to nothing."""
    key = repr(replace(config, database_url=""))
    app = _apps.get(key)
    if app is None:
        app = _apps[key] = create_app(config)
        return app
    previous = db.obj
    database = open_database(config.database_url, pool_size=config.database_pool_size,
                             pool_wait_seconds=config.database_pool_wait_seconds,
                             timeout_seconds=config.database_timeout_seconds)
    with database.connection_context():
        check_current(database)
    app.extensions["toolgate_config"] = config
    if previous is not None and previous is not database:
        with contextlib.suppress(Exception):  # the last test's database may be gone, or broken on purpose
            previous.close_all() if hasattr(previous, "close_all") else previous.close()
    return app


#: A migrated SQLite database this process copies for each test that wants one (a copy costs a tenth of a migration).
_sqlite_template: list[Path] = []


def migrated_sqlite(path: Path) -> str:
    """The URL of a fresh, migrated SQLite database at `path`: a copy of one migrated once per process."""
    if not _sqlite_template:
        folder = Path(tempfile.mkdtemp(prefix="toolgate-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        template = folder / "migrated.db"
        database = make_database(f"sqlite:///{template}", pooled=False)
        with database.connection_context():
            migrate(database)
        # The last connection closed: SQLite has checkpointed the write-ahead log into the file, which is now whole.
        _sqlite_template.append(template)
    shutil.copyfile(_sqlite_template[0], path)
    return f"sqlite:///{path}"


#: Migrated schemas a finished test gave back, emptied, by server URL: the next test takes one instead of migrating
#: a new one (a tenth of a second each, a third of the PostgreSQL runs' setup). Dropped at the end of the run.
_spare_schemas: dict[str, list[str]] = {}
#: What a freshly migrated schema is made of (columns, constraints, indexes, triggers, functions), as one digest:
#: a schema a test changed (a dropped trigger, a deleted migration record) differs, and is dropped, not reused.
_SCHEMA_DIGEST_SQL = """
SELECT md5(string_agg(part, '|' ORDER BY part)) FROM (
  SELECT concat_ws(':', 'relation', relname, relkind) FROM pg_class WHERE relnamespace = current_schema()::regnamespace
  UNION ALL SELECT concat_ws(':', 'column', c.relname, a.attname, a.atttypid, a.attnotnull)
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT concat_ws(':', 'trigger', t.tgname, c.relname, t.tgenabled)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
  UNION ALL SELECT concat_ws(':', 'function', proname, md5(prosrc))
    FROM pg_proc WHERE pronamespace = current_schema()::regnamespace
  UNION ALL SELECT concat_ws(':', 'migration', number, name) FROM schema_migration
) AS parts(part)"""
#: Emptying a reused schema: every row deleted with the triggers off (the audit trail refuses deletes; the foreign
#: keys' order does not matter then) and every sequence back at its start, faster than TRUNCATE's new files.
_EMPTY_SQL = """
SET LOCAL session_replication_role = replica;
{deletes}
SELECT setval(oid, 1, false) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S';"""
#: A fresh migration's digest and the script that empties such a schema, by server URL (the tables are the digest's).
_migrated: dict[str, tuple[str, str]] = {}


@contextlib.contextmanager
def fresh_postgres_schema(server_url: str, migrated: bool = True) -> Iterator[str]:
    """A schema of its own on the PostgreSQL server at `server_url` (migrated unless told not), with no rows; yields
    its URL. Its connections do not wait for the server to flush each commit to disk: a test's database need not
    outlive a crash, and waiting cost the PostgreSQL runs a tenth of their time. A migrated schema is emptied and
    kept for the next test if its schema is still current; any other is dropped."""
    admin = make_database(server_url, pooled=False)
    spare = _spare_schemas.setdefault(server_url, [])
    if migrated and spare:
        schema = spare.pop()
    else:
        schema = f"toolgate_test_{secrets.token_hex(6)}"
        with admin.connection_context():
            admin.execute_sql(f"CREATE SCHEMA {schema}")
        if migrated:
            database = make_database(_in_schema(server_url, schema), pooled=False)
            with database.connection_context():
                migrate(database)
                if server_url not in _migrated:
                    deletes = " ".join(f"DELETE FROM {t};" for t in database.get_tables() if t != "schema_migration")
                    _migrated[server_url] = (database.execute_sql(_SCHEMA_DIGEST_SQL).fetchone()[0],
                                             _EMPTY_SQL.format(deletes=deletes))
    try:
        yield _in_schema(server_url, schema)
    finally:
        if db.obj is not None and not db.obj.is_closed():
            if hasattr(db.obj, "close_all"):
                db.obj.close_all()
            else:
                db.obj.close()
        if not (migrated and _emptied(server_url, schema)):
            with admin.connection_context():
                admin.execute_sql(f"DROP SCHEMA {schema} CASCADE")
        else:
            spare.append(schema)


def _in_schema(server_url: str, schema: str) -> str:
    separator = "&" if "?" in server_url else "?"
    return f"{server_url}{separator}options={quote(f'-csearch_path={schema} -csynchronous_commit=off')}"


def _emptied(server_url: str, schema: str) -> bool:
    """Empty every table of a test's schema but the migrations' record, if the schema is still as migrated; whether
    it was (a test may have changed the schema, or left a lock that a second cannot wait out)."""
    from peewee import DatabaseError

    database = make_database(_in_schema(server_url, schema), pooled=False)
    try:
        with database.connection_context():
            digest, emptying = _migrated[server_url]
            if database.execute_sql(_SCHEMA_DIGEST_SQL).fetchone()[0] != digest:
                return False
            with database.atomic():
                database.execute_sql("SET LOCAL lock_timeout = '1s'")
                database.execute_sql(emptying)
        return True
    except DatabaseError:
        return False


#: The system catalogs a run's schemas fill and empty again (tables, columns, indexes, triggers, what depends on
#: what): a server with autovacuum off, as this machine's is, kept every dead row of every run, and three days of
#: runs made each test's DDL and planning twice as slow (pg_attribute at 39 MB for 4,000 live rows).
CATALOGS = ("pg_attribute", "pg_class", "pg_depend", "pg_type", "pg_index", "pg_constraint", "pg_trigger",
            "pg_attrdef", "pg_inherits", "pg_statistic", "pg_sequence", "pg_namespace", "pg_description")


def drop_spare_schemas() -> None:
    """Drop every schema kept for reuse (the end of a run), then vacuum the catalogs they filled."""
    for server_url, schemas in _spare_schemas.items():
        admin = make_database(server_url, pooled=False)
        with admin.connection_context():
            for schema in schemas:
                admin.execute_sql(f"DROP SCHEMA {schema} CASCADE")
        schemas.clear()
        _vacuum_catalogs(server_url)


def _vacuum_catalogs(server_url: str) -> None:
    """A plain VACUUM of CATALOGS (never blocking another run's work); a role that may not is left as it is."""
    import psycopg2

    with contextlib.suppress(psycopg2.Error):
        connection = psycopg2.connect(server_url)
        try:
            connection.autocommit = True  # VACUUM runs outside any transaction
            connection.cursor().execute("VACUUM " + ", ".join(f"pg_catalog.{name}" for name in CATALOGS))
        finally:
            connection.close()
