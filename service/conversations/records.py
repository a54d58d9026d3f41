"""Writing call records: the rows of steps that end together go in one INSERT (a group commit).

A step answers only once its records are committed, so an answered call is always recorded. Steps whose calls end
in the same turn of gevent's loop (a burst of slow tools answering, many clients at once) used to commit one by
one: on SQLite each commit writes every page it touched to the WAL, call_record's eight indexes included, in the
worker's own CPU (bench/load.py: a thousand answers arriving together). Here the first of them yields once, the
others add their rows to its batch, and one statement writes them all; each step then answers as before. A lone
step, with no other greenlet ready to run, writes at once (`scheduling.yield_to_ready`). A batch that fails fails every
step in it, as each would have failed alone.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import gevent
import gevent.event
from peewee import PostgresqlDatabase

from service.database import unavailable_error, write_transaction
from service.migrations import call_rollups
from service.models import CallRecord
from service.scheduling import yield_to_ready

Row = dict[str, Any]

#: A call record's columns, in the order of the INSERT.
CALL_RECORD_COLUMNS = ("organization", "conversation_id", "turn", "tool", "tool_version", "subject", "anonymous",
                       "kind", "http_code", "latency_ms", "size_chars", "raw_bytes", "jti", "approval", "session_start",
                       "created_at")
#: Rows per statement: 16 parameters a row keeps a statement under SQLite's and PostgreSQL's parameter limits.
ROWS_PER_STATEMENT = 1_000
#: The most parameters PostgreSQL's protocol takes in one statement.
POSTGRES_MOST_PARAMETERS = 65_535


def insert_call_records(rows: list[Row]) -> None:
    """Rows in multi-row INSERTs of at most ROWS_PER_STATEMENT (peewee's insert_many builds SQL per row, ~250 µs
    each: bench/), and what they add to the rollups (`call_rollups`' upsert), all or nothing: the summary never
    counts a call the log lost, nor misses one it holds. A row's `project` (its conversation's project id) is for
    the rollups only.

    On PostgreSQL a step's rows and their rollups are one statement (the records' INSERT in a WITH, which runs once
    whether read or not), so a step stays one round trip in autocommit; a batch too big for one statement's
    parameters, and SQLite (in process, where a statement is no round trip), take a transaction."""
    if not rows:
        return
    database = CallRecord._meta.database
    counts, latencies = call_rollups.rollup_rows(rows)
    params = [row.get(c) for row in rows for c in CALL_RECORD_COLUMNS]
    if (isinstance(getattr(database, "obj", database), PostgresqlDatabase) and len(rows) <= ROWS_PER_STATEMENT
            and len(params) + len(counts) * len(call_rollups.COLUMNS)
            + len(latencies) * len(call_rollups.LATENCY_COLUMNS) <= POSTGRES_MOST_PARAMETERS):
        database.execute_sql(_recorded_and_rolled_up_sql(len(rows), len(counts), len(latencies)),
                             params + [v for row in counts for v in row] + [v for row in latencies for v in row])
        return
    with write_transaction():
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            chunk = rows[start:start + ROWS_PER_STATEMENT]
            database.execute_sql(_call_records_sql(len(chunk), database.param),
                                 [row.get(c) for row in chunk for c in CALL_RECORD_COLUMNS])
        call_rollups.upsert(database, counts, latencies)


@lru_cache(maxsize=64)
def _recorded_and_rolled_up_sql(records: int, counts: int, latencies: int) -> str:
    return (f"WITH recorded AS ({_call_records_sql(records, '%s')}), "
            f"counted AS ({call_rollups.upsert_sql(counts, '%s')}) "
            + call_rollups.latency_upsert_sql(latencies, "%s"))


@lru_cache(maxsize=64)
def _call_records_sql(count: int, param: str) -> str:
    columns = ", ".join("organization_id" if c == "organization" else c for c in CALL_RECORD_COLUMNS)
    values = "(" + ", ".join([param] * len(CALL_RECORD_COLUMNS)) + ")"
    return f"INSERT INTO call_record ({columns}) VALUES " + ", ".join([values] * count)


class _Batch:
    __slots__ = ("rows", "written", "error")

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.written = gevent.event.Event()
        self.error: BaseException | None = None


class GroupWriter:
    """Writes rows with `insert`, the rows of greenlets that ask at the same moment together."""

    def __init__(self, insert: Callable[[list[Row]], None] = insert_call_records) -> None:
        self._insert = insert
        self._gathering: _Batch | None = None  # the batch still taking rows: its writer has not started writing

    def write(self, rows: list[Row]) -> None:
        """Return once `rows` are written (with whoever else's joined them); raise what the write raised."""
        batch = self._gathering
        if batch is not None:
            batch.rows += rows
            batch.written.wait()
            if batch.error is not None:
                raise batch.error
            return
        batch = self._gathering = _Batch()
        batch.rows += rows
        try:
            try:
                yield_to_ready()  # the greenlets ready now run, and those about to write add their rows here
            finally:
                self._gathering = None  # later rows start a batch of their own
            self._insert(batch.rows)
        except BaseException as exc:
            # This writer's own failure is raised to it; the others get it too, or, if it was killed, a 503.
            batch.error = exc if isinstance(exc, Exception) else unavailable_error()
            raise
        finally:
            batch.written.set()


_writer = GroupWriter()


def write_call_records(rows: list[Row]) -> None:
    """Write a step's call records, with those of any step ending at the same moment; return once committed."""
    _writer.write(rows)
