"""The call log's rollups: per organization, hour or day, project and tool, the calls by kind and their latencies.

Two tables, each with one row per key for two widths, an hour and a day (UTC):
- `call_rollup`: (organization, width, bucket start, project, tool, kind) → the count of calls (`calls`);
- `call_latency_rollup`: (organization, width, bucket start, project, tool) → the latency histogram of all those
  calls, whatever their kind (`h0` … `h49`, service.latency's buckets).
The histograms are kept apart from the kinds so that a summary sums one histogram a tool and bucket, however many
kinds its calls failed with, and the counts stay narrow rows. A step's records and the rows they add to are written
all or nothing (service.conversations.records), so the rollups always agree with the log; `GET /v1/calls/summary`
and the Calls screen's charts read them instead of scanning the log. `project_id` is the conversation's project (0
for a record whose conversation is gone); `kind` is the failure kind, or "ok".

Migrations sit below the records, so the DDL, the upserts and the backfill (migration 0012, and bench/ after writing
records in bulk) live here, where both reach them. The upserts are plain SQL both engines take
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
LATENCY_TABLE = "call_latency_rollup"
HOUR = 3_600
DAY = 86_400
#: The widths a rollup row spans, finest first.
WIDTHS = (HOUR, DAY)
#: The kind a successful call is rolled up under (the call log's own filter word for it).
OK = "ok"
#: The project a call is rolled up under when its conversation is not known.
NO_PROJECT = 0
HISTOGRAM_COLUMNS = tuple(f"h{k}" for k in range(HISTOGRAM_BUCKETS))
LATENCY_KEY_COLUMNS = ("organization_id", "width", "bucket_start", "project_id", "tool")
KEY_COLUMNS = (*LATENCY_KEY_COLUMNS, "kind")
COLUMNS = (*KEY_COLUMNS, "calls")
LATENCY_COLUMNS = (*LATENCY_KEY_COLUMNS, *HISTOGRAM_COLUMNS)
#: Rollup rows per statement: at most 55 parameters a row, within both engines' parameter limits.
ROLLUP_ROWS_PER_STATEMENT = 500
#: Records read per statement by `backfill`: a day of the log at a time, so PostgreSQL reads one partition each.
BACKFILL_SECONDS = DAY

_KEY_DDL = """    organization_id INTEGER NOT NULL REFERENCES organization (id) ON DELETE CASCADE,
    width INTEGER NOT NULL,
    bucket_start BIGINT NOT NULL,
    project_id INTEGER NOT NULL,
    tool VARCHAR(255) NOT NULL"""
# A bucket of an hour's or a day's calls of one tool counts fewer than 2^31: INTEGER keeps the wide rows half as wide.
_HISTOGRAM_DDL = ",\n".join(f"    {c} INTEGER NOT NULL DEFAULT 0" for c in HISTOGRAM_COLUMNS)
CREATE = (f"CREATE TABLE {TABLE} (\n{_KEY_DDL},\n    kind VARCHAR(255) NOT NULL,\n    calls BIGINT NOT NULL\n)",
          f"CREATE TABLE {LATENCY_TABLE} (\n{_KEY_DDL},\n{_HISTOGRAM_DDL}\n)",
          # The upserts' keys, and the summary's reads: an organization's rows of one width over a range of time.
          f"CREATE UNIQUE INDEX call_rollup_key ON {TABLE} ({', '.join(KEY_COLUMNS)})",
          f"CREATE UNIQUE INDEX call_latency_rollup_key ON {LATENCY_TABLE} ({', '.join(LATENCY_KEY_COLUMNS)})",
          # The retention purge's reads: rows past the cutoff, whatever the organization.
          f"CREATE INDEX call_rollup_width_start ON {TABLE} (width, bucket_start)",
          f"CREATE INDEX call_latency_rollup_width_start ON {LATENCY_TABLE} (width, bucket_start)")
DROP = (f"DROP TABLE {LATENCY_TABLE}", f"DROP TABLE {TABLE}")

Key = tuple[int, int, int, int, str]


def rollup_rows(records: Iterable[Mapping[str, Any]]) -> tuple[list[tuple], list[tuple]]:
    """The rows some call records add to: (counts, latencies), one per key, in key order (so two writers lock rows in
    one order on PostgreSQL and never deadlock). Each record carries `project` (its conversation's project id)."""
    counts: dict[tuple[int, int, int, int, str, str], int] = defaultdict(int)
    latencies: dict[Key, list[int]] = defaultdict(lambda: [0] * HISTOGRAM_BUCKETS)
    for record in records:
        organization = record["organization"]
        organization = organization if isinstance(organization, int) else organization.id
        at, bucket = record["created_at"], bucket_of(record["latency_ms"])
        for width in WIDTHS:
            key = (organization, width, int(at // width) * width, record.get("project") or NO_PROJECT, record["tool"])
            counts[(*key, record.get("kind") or OK)] += 1
            latencies[key][bucket] += 1
    return ([(*key, counts[key]) for key in sorted(counts)],
            [(*key, *latencies[key]) for key in sorted(latencies)])


def upsert(database, counts: list[tuple], latencies: list[tuple]) -> None:
    """Add the rows of `rollup_rows` to the rollups, inside the caller's transaction."""
    for rows, sql in ((counts, upsert_sql), (latencies, latency_upsert_sql)):
        for start in range(0, len(rows), ROLLUP_ROWS_PER_STATEMENT):
            chunk = rows[start:start + ROLLUP_ROWS_PER_STATEMENT]
            database.execute_sql(sql(len(chunk), database.param), [v for row in chunk for v in row])


def _conflict(table: str, key: Iterable[str], added: Iterable[str]) -> str:
    adding = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in added)
    return f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {adding}"


_CONFLICT = _conflict(TABLE, KEY_COLUMNS, ("calls",))
_LATENCY_CONFLICT = _conflict(LATENCY_TABLE, LATENCY_KEY_COLUMNS, HISTOGRAM_COLUMNS)


def _insert(table: str, columns: tuple[str, ...], count: int, param: str, conflict: str) -> str:
    values = "(" + ", ".join([param] * len(columns)) + ")"
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES " + ", ".join([values] * count) + " " + conflict


@lru_cache(maxsize=64)
def upsert_sql(count: int, param: str) -> str:
    """The upsert of `count` rows of counts, `param` the engine's placeholder."""
    return _insert(TABLE, COLUMNS, count, param, _CONFLICT)


@lru_cache(maxsize=64)
def latency_upsert_sql(count: int, param: str) -> str:
    """The upsert of `count` rows of latency histograms, `param` the engine's placeholder."""
    return _insert(LATENCY_TABLE, LATENCY_COLUMNS, count, param, _LATENCY_CONFLICT)


def _histogram_sums(latency: str) -> str:
    """SQL summing a histogram of the latencies in `latency`, bucket by bucket, with the same bounds as bucket_of."""
    parts = [f"SUM(CASE WHEN {latency} < {BOUNDS[0]!r} THEN 1 ELSE 0 END)"]
    parts += [f"SUM(CASE WHEN {latency} >= {low!r} AND {latency} < {high!r} THEN 1 ELSE 0 END)"
              for low, high in zip(BOUNDS, BOUNDS[1:])]
    parts.append(f"SUM(CASE WHEN {latency} >= {BOUNDS[-1]!r} THEN 1 ELSE 0 END)")
    return ", ".join(parts)


def _backfill_sql(database, width: int, latency: bool) -> str:
    param = database.param
    start = (f"CAST(FLOOR(c.created_at / {width}) AS BIGINT) * {width}" if isinstance(database, PostgresqlDatabase)
             else f"CAST(c.created_at / {width} AS INTEGER) * {width}")  # created_at is positive: CAST floors
    key = "organization_id, bucket_start, project_id, tool"
    table, columns, values, group, conflict = (
        (LATENCY_TABLE, LATENCY_COLUMNS, _histogram_sums("latency_ms"), key, _LATENCY_CONFLICT) if latency
        else (TABLE, COLUMNS, "kind, COUNT(*)", f"{key}, kind", _CONFLICT))
    return f"""INSERT INTO {table} ({', '.join(columns)})
SELECT organization_id, {width}, bucket_start, project_id, tool, {values}
FROM (SELECT c.organization_id, {start} AS bucket_start, COALESCE(v.project_id, {NO_PROJECT}) AS project_id,
             c.tool, COALESCE(c.kind, '{OK}') AS kind, c.latency_ms
      FROM call_record c LEFT JOIN conversation v ON v.id = c.conversation_id
      WHERE c.created_at >= {param} AND c.created_at < {param} AND c.id > {param}) AS r
WHERE true
GROUP BY {group}
{conflict}"""


def backfill(database, *, after_id: int = 0, seconds: float = BACKFILL_SECONDS) -> int:
    """Roll up the call records with an id past `after_id` (all of them by default), a day of the log per statement
    (each day its own transaction unless the caller holds one: migration 0012 does); how many days it read."""
    low, high = database.execute_sql("SELECT MIN(created_at), MAX(created_at) FROM call_record WHERE id > "
                                     f"{database.param}", (after_id,)).fetchone()
    if low is None:
        return 0
    # Batches on whole days, so an hour's or a day's rows are written by one statement.
    at, days = float(int(low // DAY) * DAY), 0
    statements = [_backfill_sql(database, width, latency) for width in WIDTHS for latency in (False, True)]
    while at <= high:
        with database.atomic():
            for statement in statements:
                database.execute_sql(statement, (at, at + seconds, after_id))
        at, days = at + seconds, days + 1
    if isinstance(database, PostgresqlDatabase):
        # Statistics now, not at autovacuum's next round: without them the planner guesses the summary's reads
        # (300 ms against 70 ms for a month's summary at a million records). SQLite keeps none on purpose: the call
        # log's reads rely on its planner having no statistics (service.records.calls).
        for table in (TABLE, LATENCY_TABLE):
            database.execute_sql(f"ANALYZE {table}")
    return days


def purge_oldest(database, cutoff: float) -> int | None:
    """Remove one bucket of rollup rows lying wholly before `cutoff` (a call record's retention), the oldest of one
    width of one table: a short transaction's worth (a few hundred rows); how many rows went, None when none is left.
    A bucket spanning the cutoff stays until its whole hour or day has passed, so the summary of the oldest hour or
    day kept may count a few calls the log no longer holds."""
    p = database.param
    for table in (TABLE, LATENCY_TABLE):
        for width in WIDTHS:
            start = database.execute_sql(f"SELECT MIN(bucket_start) FROM {table} WHERE width = {p} "
                                         f"AND bucket_start <= {p}", (width, cutoff - width)).fetchone()[0]
            if start is not None:
                return database.execute_sql(f"DELETE FROM {table} WHERE width = {p} AND bucket_start = {p}",
                                            (width, start)).rowcount
    return None
