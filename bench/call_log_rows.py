"""Call records in bulk, for the benchmarks that measure the call log at a million records and more.

`write_call_records(database_url, organization_id, count, ...)` writes `count` records in the database itself (a
recursive CTE on SQLite, `generate_series` on PostgreSQL), a million in seconds rather than the minutes that rows sent
from Python take. The records are spread evenly over `days` days ending at `end`, so on PostgreSQL they fall into the
day partitions of the call log (each made first, as the service would have made it ahead), as served records do.

What they hold, so a benchmark can ask for something it knows is there: the tool `tool_<i mod tools>`, the subject
`user_<i mod subjects>`, the conversation `c<i div 20>`, the turn `t<i div 4>`; one record in a thousand `timed-out`,
one in a hundred `refused`, the rest succeeded.

    python -m bench.call_log_rows sqlite:///calls.db 1 1000000     # organization 1 must exist
"""
from __future__ import annotations

import sys
import time

from peewee import PostgresqlDatabase

from service.database import make_database
from service.limits import SECONDS_PER_DAY
from service.migrations import call_partitions

#: The columns written, in order; each has an SQL expression of the row number `i` below.
_COLUMNS = {
    "organization_id": "{org}",
    "conversation_id": "'c' || CAST(i / 20 AS TEXT)",
    "turn": "'t' || CAST(i / 4 AS TEXT)",
    "tool": "'tool_' || CAST(i % {tools} AS TEXT)",
    "tool_version": "1",
    "subject": "'user_' || CAST(i % {subjects} AS TEXT)",
    "anonymous": "{false}",
    "kind": "CASE WHEN i % 1000 = 7 THEN 'timed-out' WHEN i % 100 = 3 THEN 'refused' ELSE NULL END",
    "http_code": "CASE WHEN i % 1000 = 7 THEN NULL WHEN i % 100 = 3 THEN 500 ELSE 200 END",
    "latency_ms": "12.5",
    "size_chars": "42",
    "jti": "'j' || CAST(i AS TEXT)",
    "approval": "NULL",
    "session_start": "{false}",
    "created_at": "{start} + i * {step}",
}

_SQLITE = """
WITH RECURSIVE n(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM n WHERE i < {last})
INSERT INTO call_record ({columns}) SELECT {values} FROM n"""

_POSTGRES = "INSERT INTO call_record ({columns}) SELECT {values} FROM generate_series({first}, {last}) AS n(i)"

#: Records per statement: each its own transaction, so a write of ten million never holds one transaction for long.
CHUNK = 200_000


def write_call_records(database_url: str, organization_id: int, count: int, *, days: float = 30.0,
                       end: float | None = None, tools: int = 100, subjects: int = 10_000) -> None:
    """Write `count` call records of the organization, evenly spread over the `days` days up to `end` (now by
    default), oldest first (so ids and times rise together, as the service writes them)."""
    end = time.time() if end is None else end
    start = end - days * SECONDS_PER_DAY
    step = days * SECONDS_PER_DAY / max(count, 1)
    database = make_database(database_url, pooled=False)
    postgres = isinstance(database, PostgresqlDatabase)
    values = ", ".join(_COLUMNS.values()).format(
        org=int(organization_id), tools=int(tools), subjects=int(subjects), false="FALSE" if postgres else "0",
        start=repr(float(start)), step=repr(float(step)))
    template = _POSTGRES if postgres else _SQLITE
    if postgres:  # psycopg2 reads a lone % as a parameter's place
        values = values.replace("%", "%%")
    with database.connection_context():
        if call_partitions.partitioned(database):  # each day's partition, as the service would have made it ahead
            for day in range(call_partitions.day_of(start), call_partitions.day_of(end) + 1):
                call_partitions.create_day(database, day)
        if not postgres:
            database.execute_sql("PRAGMA synchronous = OFF")
        for first in range(0, count, CHUNK):
            last = min(first + CHUNK, count) - 1
            with database.atomic():
                database.execute_sql(template.format(columns=", ".join(_COLUMNS), values=values, first=first,
                                                     last=last))
        if postgres:  # as autovacuum would soon; a served SQLite file is never analysed, so neither is this one
            database.execute_sql("ANALYZE call_record")


if __name__ == "__main__":
    write_call_records(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
