"""The call log at scale: indexes every read of it walks in order, and on PostgreSQL a table partitioned by day.

Every index is led by the organization and ends in (created_at, id), the log's order, so the newest page, each filter
and a page deep in the log are one range scan of an index read backwards, with no sort. On PostgreSQL the existing
log moves into `call_record` partitioned by day (`call_partitions`), ids kept, the id sequence kept; its primary key
becomes (id, created_at), as a partitioned table's must include its partition key. Every day that has records gets
its partition, and today and the days ahead too; nothing is refused (the default partition takes anything else).
"""
import time

from peewee import PostgresqlDatabase

from service.migrations import execute_script
from service.migrations.call_partitions import DEFAULT, TABLE, create_day, ensure_ahead, partitioned

#: The log's columns after 0005, in their order.
COLUMNS = ("id, organization_id, conversation_id, turn, tool, tool_version, subject, anonymous, kind, http_code, "
           "latency_ms, size_chars, jti, session_start, created_at, approval")

#: The indexes of the log before this migration (0002, 0003), as `down` makes them again.
OLD_INDEXES = """
CREATE INDEX call_record_organization_created ON call_record (organization_id, created_at);
CREATE INDEX call_record_conversation ON call_record (conversation_id);
CREATE INDEX call_record_organization_turn ON call_record (organization_id, turn);
CREATE INDEX call_record_organization_tool ON call_record (organization_id, tool, created_at);
CREATE INDEX call_record_organization_subject ON call_record (organization_id, subject, created_at);
CREATE INDEX call_record_created ON call_record (created_at)
"""
OLD_INDEX_NAMES = ("call_record_organization_created", "call_record_conversation", "call_record_organization_turn",
                   "call_record_organization_tool", "call_record_organization_subject", "call_record_created")

#: One index per filter of the call log, each in the log's order; `call_record_created` serves the purge.
INDEXES = """
CREATE INDEX call_record_by_time ON call_record (organization_id, created_at, id);
CREATE INDEX call_record_by_conversation ON call_record (organization_id, conversation_id, created_at, id);
CREATE INDEX call_record_by_turn ON call_record (organization_id, turn, created_at, id);
CREATE INDEX call_record_by_tool ON call_record (organization_id, tool, created_at, id);
CREATE INDEX call_record_by_subject ON call_record (organization_id, subject, created_at, id);
CREATE INDEX call_record_by_kind ON call_record (organization_id, kind, created_at, id);
CREATE INDEX call_record_created ON call_record (created_at)
"""
INDEX_NAMES = ("call_record_by_time", "call_record_by_conversation", "call_record_by_turn", "call_record_by_tool",
               "call_record_by_subject", "call_record_by_kind", "call_record_created")

#: The log's table on PostgreSQL, {key} its primary key and {partitioning} how it is partitioned, if it is.
_TABLE = f"""
CREATE TABLE {TABLE} (
    id BIGINT NOT NULL DEFAULT nextval('call_record_id_seq'),
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    conversation_id VARCHAR(64) NOT NULL, turn VARCHAR(64) NOT NULL,
    tool VARCHAR(64) NOT NULL, tool_version INTEGER, subject VARCHAR(256) NOT NULL, anonymous BOOLEAN NOT NULL,
    kind VARCHAR(32), http_code INTEGER, latency_ms DOUBLE PRECISION NOT NULL, size_chars INTEGER,
    jti VARCHAR(64), session_start BOOLEAN NOT NULL, created_at DOUBLE PRECISION NOT NULL, approval VARCHAR(64),
    PRIMARY KEY ({{key}})
){{partitioning}}"""
PARTITIONED_TABLE = _TABLE.format(key="id, created_at", partitioning=" PARTITION BY RANGE (created_at)")
PLAIN_TABLE = _TABLE.format(key="id", partitioning="")

#: The days the old log has records on, one index probe a day (a loose scan of `call_record_created`).
_DAYS_SQL = """
WITH RECURSIVE d(day) AS (
  SELECT floor(min(created_at) / 86400) FROM call_record_unpartitioned
  UNION ALL SELECT (SELECT floor(min(created_at) / 86400) FROM call_record_unpartitioned
                    WHERE created_at >= (d.day + 1) * 86400) FROM d WHERE d.day IS NOT NULL)
SELECT day FROM d WHERE day IS NOT NULL"""


def up(db):
    if not isinstance(db, PostgresqlDatabase):
        for name in OLD_INDEX_NAMES:
            db.execute_sql(f"DROP INDEX IF EXISTS {name}")
        execute_script(db, INDEXES)
        return
    db.execute_sql("ALTER SEQUENCE call_record_id_seq OWNED BY NONE")
    db.execute_sql(f"ALTER TABLE {TABLE} RENAME TO call_record_unpartitioned")
    db.execute_sql(PARTITIONED_TABLE)
    db.execute_sql(f"CREATE TABLE {DEFAULT} PARTITION OF {TABLE} DEFAULT")
    for (day,) in db.execute_sql(_DAYS_SQL).fetchall():
        create_day(db, int(day))
    ensure_ahead(db, time.time())
    db.execute_sql(f"INSERT INTO {TABLE} ({COLUMNS}) SELECT {COLUMNS} FROM call_record_unpartitioned")
    db.execute_sql("DROP TABLE call_record_unpartitioned")  # and its indexes, whose names the new ones reuse
    db.execute_sql(f"ALTER SEQUENCE call_record_id_seq OWNED BY {TABLE}.id")
    execute_script(db, INDEXES)


def down(db):
    if not partitioned(db):
        for name in INDEX_NAMES:
            db.execute_sql(f"DROP INDEX IF EXISTS {name}")
        execute_script(db, OLD_INDEXES)
        return
    db.execute_sql("ALTER SEQUENCE call_record_id_seq OWNED BY NONE")
    db.execute_sql(f"ALTER TABLE {TABLE} RENAME TO call_record_partitioned")
    db.execute_sql(PLAIN_TABLE)
    db.execute_sql(f"INSERT INTO {TABLE} ({COLUMNS}) SELECT {COLUMNS} FROM call_record_partitioned")
    db.execute_sql("DROP TABLE call_record_partitioned")  # with every partition and their indexes
    db.execute_sql(f"ALTER SEQUENCE call_record_id_seq OWNED BY {TABLE}.id")
    execute_script(db, OLD_INDEXES)
