# gevent must patch before anything imports socket, ssl or threading (STYLE: first line of each
# process entry point). pytest is the entry point of the test process, and this file is the
# first of ours it imports.
from gevent import monkey

monkey.patch_all()

from psycogreen.gevent import patch_psycopg  # noqa: E402

patch_psycopg()  # PostgreSQL waits cooperate with gevent, as in `service.entry`

import contextlib  # noqa: E402
import os  # noqa: E402
import secrets  # noqa: E402
from urllib.parse import quote  # noqa: E402

import pytest  # noqa: E402

POSTGRES_URL = os.environ.get("TOOLGATE_TEST_POSTGRES_URL", "")

ENGINES = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(
        not POSTGRES_URL, reason="TOOLGATE_TEST_POSTGRES_URL is not set")),
]


@pytest.fixture(params=ENGINES)
def database_url(request, tmp_path):
    """A fresh, migrated database on each engine: a SQLite file, or a PostgreSQL schema of its own."""
    from service.database import make_database
    from service.migrations import migrate

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'toolgate.db'}"
        database = make_database(url)
        with database.connection_context():
            migrate(database)
        yield url
        return
    with fresh_postgres_schema(POSTGRES_URL) as url:
        yield url


@contextlib.contextmanager
def fresh_postgres_schema(server_url: str):
    """A migrated schema of its own on the PostgreSQL server at `server_url`, dropped afterwards; yields its URL."""
    from service.database import db, make_database
    from service.migrations import migrate

    schema = f"toolgate_test_{secrets.token_hex(6)}"
    admin = make_database(server_url, pooled=False)
    with admin.connection_context():
        admin.execute_sql(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in server_url else "?"
    url = f"{server_url}{separator}options={quote(f'-csearch_path={schema}')}"
    database = make_database(url, pooled=False)
    with database.connection_context():
        migrate(database)
    try:
        yield url
    finally:
        if db.obj is not None and not db.obj.is_closed():
            if hasattr(db.obj, "close_all"):
                db.obj.close_all()
            else:
                db.obj.close()
        with admin.connection_context():
            admin.execute_sql(f"DROP SCHEMA {schema} CASCADE")
