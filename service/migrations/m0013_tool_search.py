"""A tools page's search (`q`) by index on PostgreSQL: trigram indexes on a tool's name and display name.

`q` matches anywhere in either, whatever the case (`ILIKE '%q%'`), which no B-tree serves: at 100k tools PostgreSQL
read every tool row of the organization for the ten that matched (139 ms a page). pg_trgm's GIN indexes answer
`ILIKE` with a bitmap of the few candidate rows; a short or common `q`, which matches many tools, is still read off
the name index to the page's LIMIT, as the planner prefers.

The indexes are written as each tool is (`fastupdate = off`): with GIN's default, new entries wait in a pending list
(up to 4 MB) that every search reads whole until a vacuum merges it; after 100k tools written in bulk that made the
search 10 times slower and the planner, pricing the list in, walked every tool instead (210 ms). A registration
pays for its name's and label's trigrams at once instead, which the registry's few writes afford.

pg_trgm ships with PostgreSQL (contrib) and is a trusted extension, so the database's owner may create it. Where it
is installed already its schema is used; where it cannot be created (a role without the right, a server without
contrib) the migration leaves the indexes out and says so on the log: the search then reads the organization's
tools as before, and `CREATE EXTENSION pg_trgm` followed by this migration's statements adds them later
(docs/operations.md). SQLite has no such index; there the search stays a walk of the name index (44.6 ms a page at
100k tools).
"""
import logging

from peewee import DatabaseError, PostgresqlDatabase

LOG = logging.getLogger(__name__)

EXTENSION = "pg_trgm"
INDEXES = (("tool_name_trigrams", "name"), ("tool_display_name_trigrams", "display_name"))

_SCHEMA_SQL = ("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
               "WHERE e.extname = %s")


def trigram_schema(db) -> str | None:
    """The schema pg_trgm is installed in, or None."""
    row = db.execute_sql(_SCHEMA_SQL, (EXTENSION,)).fetchone()
    return None if row is None else row[0]


def _installed(db) -> str | None:
    schema = trigram_schema(db)
    if schema is not None:
        return schema
    try:
        with db.atomic():  # a savepoint: a refusal leaves the migration's transaction usable
            db.execute_sql(f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
    except DatabaseError as error:
        LOG.warning("pg_trgm cannot be created (%s): a tools search reads the organization's tools without an "
                    "index; see docs/operations.md", str(error).strip().splitlines()[0])
        return None
    return trigram_schema(db)


def up(db):
    if not isinstance(db, PostgresqlDatabase):
        return
    schema = _installed(db)
    if schema is None:
        return
    for index, column in INDEXES:
        db.execute_sql(f'CREATE INDEX {index} ON tool USING gin ({column} "{schema}".gin_trgm_ops) '
                       "WITH (fastupdate = off)")


def down(db):
    if not isinstance(db, PostgresqlDatabase):
        return
    for index, _ in INDEXES:
        db.execute_sql(f"DROP INDEX IF EXISTS {index}")
