"""The call log's rollups: per organization, project, tool, hour or day and kind, the calls and their latencies.

`call_rollup` holds one row per (organization, width, bucket start, project, tool, kind), for two widths, an hour
and a day (UTC), with the count of calls and their latency histogram (`h0` … `h49`, service.latency's buckets). A
step's records and the rows they add to are written in one transaction (service.conversations.records), so the
rollups always agree with the log; `GET /v1/calls/summary` and the Calls screen's charts read them instead of
scanning the log. `project_id` is the conversation's project (0 for a record whose conversation is gone, written
before 0012); `kind` is the failure kind, or "ok".

Migrations sit below the records, so the DDL, the upsert and the backfill (migration 0012, and bench/ after writing
records in bulk) live here, where both reach them. The upsert is plain SQL both engines take
(`INSERT … ON CONFLICT … DO UPDATE`, PostgreSQL 9.5+, SQLite 3.24+), built once per row count like the records'
INSERT, since peewee builds SQL per row.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Any, Iterable, Mapping

from peewee import PostgresqlDatabase

from service.latency import BOUNDS, HISTOGRAM_BUCKETS, bucket_of

TABLE = "call_rollup"
HOUR = 3_600
DAY = 86_400
#: The widths a rollup row spans, finest first.
WIDTHS = (HOUR, DAY)
#: The kind a successful call is rolled up under (the call log's own filter word for it).
OK = "ok"
#: The project a call is rolled up under when its conversation is not known.
NO_PROJECT = 0
HISTOGRAM_COLUMNS = tuple(f"h{k}" for k in range(HISTOGRAM_BUCKETS))
KEY_COLUMNS = ("organization_id", "width", "bucket_start", "project_id", "tool", "kind")
COLUMNS = (*KEY_COLUMNS, "calls", *HISTOGRAM_COLUMNS)
#: Rollup rows per statement: 56 parameters a row stays under both engines' parameter limits.
ROLLUP_ROWS_PER_STATEMENT = 500
#: Records read per statement by `backfill`: a day of the log at a time, so PostgreSQL reads one partition each.
BACKFILL_SECONDS = DAY

_HISTOGRAM_DDL = ",\n".join(f"    {c} BIGINT NOT NULL DEFAULT 0" for c in HISTOGRAM_COLUMNS)
CREATE = (f"""CREATE TABLE {TABLE} (
    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    width INTEGER NOT NULL,
    bucket_start BIGINT NOT NULL,
    project_id INTEGER NOT NULL,
    tool VARCHAR(255) NOT NULL,
    kind VARCHAR(255) NOT NULL,
    calls BIGINT NOT NULL,
{_HISTOGRAM_DDL}
)""",
          # The upsert's key, and the summary's read: an organization's rows of one width over a range of time.
          f"CREATE UNIQUE INDEX call_rollup_key ON {TABLE} ({', '.join(KEY_COLUMNS)})",
          # The retention purge's read: rows past the cutoff, whatever the organization.
          f"CREATE INDEX call_rollup_width_start ON {TABLE} (width, bucket_start)")

Key = tuple[int, int, int, int, str, str]


def rollup_rows(records: Iterable[Mapping[str, Any]]) -> list[tuple]:
    """The rollup rows some call records add to, one per key, in key order (so two writers lock rows in one order on
    PostgreSQL and never deadlock). Each record carries `project` (its conversation's project id) beside its columns."""
    found: dict[Key, list[int]] = defaultdict(lambda: [0] * (1 + HISTOGRAM_BUCKETS))
    for record in records:
        organization = record["organization"]
        organization = organization if isinstance(organization, int) else organization.id
        at, bucket = record["created_at"], 1 + bucket_of(record["latency_ms"])
        for width in WIDTHS:
            row = found[(organization, width, int(at // width) * width, record.get("project") or NO_PROJECT,
                         record["tool"], record.get("kind") or OK)]
            row[0] += 1
            row[bucket] += 1
    return [(*key, *found[key]) for key in sorted(found)]


def upsert(database, rows: list[tuple]) -> None:
    """Add `rows` (from `rollup_rows`) to the rollups, inside the caller's transaction."""
    for start in range(0, len(rows), ROLLUP_ROWS_PER_STATEMENT):
        chunk = rows[start:start + ROLLUP_ROWS_PER_STATEMENT]
        database.execute_sql(upsert_sql(len(chunk), database.param), [v for row in chunk for v in row])


def _adding(columns: Iterable[str]) -> str:
    return ", ".join(f"{c} = {TABLE}.{c} + excluded.{c}" for c in columns)


_CONFLICT = f"ON CONFLICT ({', '.join(KEY_COLUMNS)}) DO UPDATE SET {_adding(('calls', *HISTOGRAM_COLUMNS))}"


@lru_cache(maxsize=64)
def upsert_sql(count: int, param: str) -> str:
    """The upsert of `count` rollup rows, `param` the engine's placeholder."""
    values = "(" + ", ".join([param] * len(COLUMNS)) + ")"
    return f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES " + ", ".join([values] * count) + " " + _CONFLICT


def _histogram_sums(latency: str) -> str:
    """SQL summing a histogram of the latencies in `latency`, bucket by bucket, with the same bounds as bucket_of."""
    parts = [f"SUM(CASE WHEN {latency} < {BOUNDS[0]!r} THEN 1 ELSE 0 END)"]
    parts += [f"SUM(CASE WHEN {latency} >= {low!r} AND {latency} < {high!r} THEN 1 ELSE 0 END)"
              for low, high in zip(BOUNDS, BOUNDS[1:])]
    parts.append(f"SUM(CASE WHEN {latency} >= {BOUNDS[-1]!r} THEN 1 ELSE 0 END)")
    return ", ".join(parts)


def _backfill_sql(database, width: int) -> str:
    param = database.param
    start = (f"CAST(FLOOR(c.created_at / {width}) AS BIGINT) * {width}" if isinstance(database, PostgresqlDatabase)
             else f"CAST(c.created_at / {width} AS INTEGER) * {width}")  # created_at is positive: CAST floors
    return f"""INSERT INTO {TABLE} ({', '.join(COLUMNS)})
SELECT organization_id, {width}, bucket_start, project_id, tool, kind, COUNT(*), {_histogram_sums('latency_ms')}
FROM (SELECT c.organization_id, {start} AS bucket_start, COALESCE(v.project_id, {NO_PROJECT}) AS project_id,
             c.tool, COALESCE(c.kind, '{OK}') AS kind, c.latency_ms
      FROM call_record c LEFT JOIN conversation v ON v.id = c.conversation_id
      WHERE c.created_at >= {param} AND c.created_at < {param} AND c.id > {param}) AS r
WHERE true
GROUP BY organization_id, bucket_start, project_id, tool, kind
{_CONFLICT}"""


def backfill(database, *, after_id: int = 0, seconds: float = BACKFILL_SECONDS) -> int:
    """Roll up the call records with an id past `after_id` (all of them by default), a day of the log per statement
    (each its own transaction unless the caller holds one: migration 0012 does); how many rollup rows it wrote."""
    low, high = database.execute_sql("SELECT MIN(created_at), MAX(created_at) FROM call_record WHERE id > "
                                     f"{database.param}", (after_id,)).fetchone()
    if low is None:
        return 0
    # Batches on whole days, so an hour's or a day's rows are written by one statement.
    at, total = float(int(low // DAY) * DAY), 0
    statements = {width: _backfill_sql(database, width) for width in WIDTHS}
    while at <= high:
        end = at + seconds
        with database.atomic():
            for width in WIDTHS:
                cursor = database.execute_sql(statements[width], (at, end, after_id))
            total += max(cursor.rowcount, 0)
        at = end
    return total


def purge_before(database, cutoff: float) -> int:
    """Remove the rollup rows that lie wholly before `cutoff` (a call record's retention): how many went. A row
    spanning the cutoff stays until its whole hour or day has passed, so the summary of the oldest hour or day kept
    may count a few calls the log no longer holds."""
    removed = 0
    for width in WIDTHS:
        removed += database.execute_sql(f"DELETE FROM {TABLE} WHERE width = {database.param} "
                                        f"AND bucket_start <= {database.param}", (width, cutoff - width)).rowcount
    return removed
