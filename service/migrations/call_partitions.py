"""The call log's day partitions on PostgreSQL: their names, creating them ahead, and dropping old ones whole.

On PostgreSQL `call_record` is range-partitioned on `created_at` (Unix seconds, UTC days), one partition a day named
`call_record_dYYYYMMDD`, plus `call_record_default` for any record whose day has no partition yet, so no write is
ever refused for want of one. The service creates each day's partition days ahead (`ensure_ahead`, at start and every
hour); when a day's partition is created after records of that day have landed in the default partition, they move
into it in the same transaction. Retention drops a whole day's partition (`drop_days_before`) instead of deleting its
rows. SQLite has one plain table and none of this (`partitioned` is false).

Creating or dropping a partition takes a brief exclusive lock on `call_record`; each waits at most LOCK_WAIT_SECONDS
for it (so writes never queue long behind one), and the service's upkeep tries again an hour later, days ahead of
need. Migrations sit below the records, so the DDL lives here, where migration 0007 and the records both reach it.
"""
from __future__ import annotations

from datetime import datetime, timezone

from peewee import PostgresqlDatabase

from service.limits import CALL_LOG_DAYS_AHEAD, SECONDS_PER_DAY

TABLE = "call_record"
DEFAULT = "call_record_default"
PREFIX = "call_record_d"
#: pg_advisory_xact_lock's key for partition changes: two processes starting at once create each partition once.
ADVISORY_KEY = 0x7467_6361_6C6C  # "tgcall"
#: How long creating or dropping a partition waits for its lock on the table before giving up for now.
LOCK_WAIT_SECONDS = 1.0

_PARTITIONS_SQL = """
SELECT child.relname FROM pg_inherits
JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
JOIN pg_class child ON child.oid = pg_inherits.inhrelid
WHERE parent.relname = %s AND parent.relnamespace = current_schema()::regnamespace"""


def is_postgres(database) -> bool:
    """Whether the database is PostgreSQL, where the call log is partitioned once migrated past 0007."""
    return isinstance(database, PostgresqlDatabase)


def partitioned(database) -> bool:
    """Whether the call log is partitioned: PostgreSQL, migrated past 0007."""
    if not is_postgres(database):
        return False
    row = database.execute_sql("SELECT relkind FROM pg_class WHERE relname = %s "
                               "AND relnamespace = current_schema()::regnamespace", (TABLE,)).fetchone()
    return row is not None and row[0] == "p"


def day_of(at: float) -> int:
    """The UTC day (days since 1970-01-01) a time in Unix seconds falls on."""
    return int(at // SECONDS_PER_DAY)


def partition_name(day: int) -> str:
    """The partition holding the records of `day`."""
    return PREFIX + datetime.fromtimestamp(day * SECONDS_PER_DAY, timezone.utc).strftime("%Y%m%d")


def day_partitions(database) -> dict[int, str]:
    """The day partitions that exist, by day (the default partition is not one)."""
    found = {}
    for (name,) in database.execute_sql(_PARTITIONS_SQL, (TABLE,)).fetchall():
        if name.startswith(PREFIX) and name[len(PREFIX):].isdigit():
            moment = datetime.strptime(name[len(PREFIX):], "%Y%m%d").replace(tzinfo=timezone.utc)
            found[day_of(moment.timestamp())] = name
    return found


def _locked(database) -> None:
    """Inside a transaction: wait briefly for the table, and take the partition changes' own lock."""
    database.execute_sql(f"SET LOCAL lock_timeout = '{int(LOCK_WAIT_SECONDS * 1000)}ms'")
    database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_KEY,))


def create_day(database, day: int) -> bool:
    """Create the partition of `day` unless it exists, moving in any of its records from the default partition;
    whether it was created. One transaction."""
    name, low, high = partition_name(day), day * SECONDS_PER_DAY, (day + 1) * SECONDS_PER_DAY
    with database.atomic():
        _locked(database)
        if day in day_partitions(database):
            return False
        stray = database.execute_sql(f"SELECT 1 FROM {DEFAULT} WHERE created_at >= %s AND created_at < %s LIMIT 1",
                                     (low, high)).fetchone()
        if stray is None:
            database.execute_sql(f"CREATE TABLE {name} PARTITION OF {TABLE} FOR VALUES FROM ({low}) TO ({high})")
            return True
        # Records of the day written before its partition existed go with it, or the bound would be refused. The
        # default partition is held meanwhile, so no record of the day lands there between the move and the attach.
        database.execute_sql(f"LOCK TABLE {DEFAULT} IN ACCESS EXCLUSIVE MODE")
        database.execute_sql(f"CREATE TABLE {name} (LIKE {TABLE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
        database.execute_sql(f"WITH moved AS (DELETE FROM {DEFAULT} WHERE created_at >= %s AND created_at < %s "
                             f"RETURNING *) INSERT INTO {name} SELECT * FROM moved", (low, high))
        database.execute_sql(f"ALTER TABLE {TABLE} ATTACH PARTITION {name} FOR VALUES FROM ({low}) TO ({high})")
        return True


def ensure_ahead(database, now: float, days_ahead: int = CALL_LOG_DAYS_AHEAD) -> list[str]:
    """Create the partitions of today and the `days_ahead` days after it that are missing; their names."""
    existing = day_partitions(database)
    today = day_of(now)
    return [partition_name(day) for day in range(today, today + days_ahead + 1)
            if day not in existing and create_day(database, day)]


def drop_days_before(database, cutoff: float) -> tuple[int, int]:
    """Drop every day partition wholly older than `cutoff` (Unix seconds); how many partitions and records went.

    A partition's records are counted just before it goes (the command line reports them)."""
    partitions, records = 0, 0
    for day, name in sorted(day_partitions(database).items()):
        if (day + 1) * SECONDS_PER_DAY > cutoff:
            break
        count = database.execute_sql(f"SELECT count(*) FROM {name}").fetchone()[0]
        with database.atomic():
            _locked(database)
            database.execute_sql(f"DROP TABLE IF EXISTS {name}")
        partitions, records = partitions + 1, records + count
    return partitions, records
