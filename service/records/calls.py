"""The call log: every call (session-start ones included) as the organization may review it, and its retention.

A record holds what happened, never what was said: no body, no token (the assertion's `jti` identifies it). The
log is written by `service.conversations.runs`, once per step; this module reads it, observes each step for the
metrics and the logs, and purges records past their retention in short batches, so it is safe while serving.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Iterator, Mapping

from peewee import ModelSelect, PostgresqlDatabase

from service.database import db, write_transaction
from service.dispatch.failures import FAILURE_KINDS, RESPONSE_TOO_BIG
from service.limits import CALL_COUNT_BOUND, MAX_PAGE, SECONDS_PER_DAY
from service.migrations import call_partitions, call_rollups
from service.models import CallRecord, Organization
from service.records import logs, metrics

#: How a call log entry shows a response past the cap: its size was never counted.
OVER_THE_CAP = "over the cap"
#: The kind filter for calls that succeeded.
OK = metrics.OK
KINDS = (OK, *FAILURE_KINDS)

#: Records deleted per transaction by `purge`: small enough that a serving instance's writes wait only briefly.
PURGE_BATCH = 500
#: The longest rest between two of the purge's batches on SQLite (each rests as long as it held the write lock).
PURGE_REST_MOST_SECONDS = 0.25
#: `in_index_order`'s settings, for its transaction only.
_IN_INDEX_ORDER_SQL = "SELECT set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true)"


@dataclass(frozen=True)
class CallQuery:
    """What to look for in the call log; every field is optional and they combine with AND."""

    conversation: str | None = None
    turn: str | None = None
    tool: str | None = None
    subject: str | None = None
    kind: str | None = None  # a failure kind, or "ok"
    since: float | None = None  # Unix seconds, inclusive
    until: float | None = None  # Unix seconds, exclusive
    before_id: int | None = None  # paging: records older than this one
    limit: int = 100


def calls_select(organization: Organization, query: CallQuery) -> "ModelSelect[CallRecord]":
    """The statement `find_calls` runs: one range scan, newest first, of the index of the filter it names.

    The log's order is (created_at, id), newest first; every index of the log is led by the organization and ends in
    it, so whichever the database picks (each filter has its own, `m0007`) is read backwards with no sort, and a
    page stops after `limit` matches. `before_id` is the id of the last record of the page before (`next`): the
    page starts below that record's place. On PostgreSQL the bounds on `created_at` also leave out whole day
    partitions."""
    organization_id = organization.id
    select = CallRecord.select().where(CallRecord.organization == organization_id)
    # The narrowest filter set leads (a turn's records, a conversation's, a subject's, a tool's, a kind's); the others
    # are written so that no index serves them (`|| ''`), so each engine walks the leading filter's index whatever
    # its statistics say, and SQLite, which has none, never walks a broad filter's index (a tool's) past the few
    # records of a narrow one (a conversation's).
    equal = [(column, value) for column, value in ((CallRecord.turn, query.turn),
                                                   (CallRecord.conversation_id, query.conversation),
                                                   (CallRecord.subject, query.subject),
                                                   (CallRecord.tool, query.tool),
                                                   (CallRecord.kind, query.kind)) if value is not None]
    for rank, (column, value) in enumerate(equal):
        target = column if rank == 0 else column.concat("")
        if column is CallRecord.kind and value == OK:
            select = select.where(target.is_null())
        else:
            select = select.where(target == value)
    if query.since is not None:
        select = select.where(CallRecord.created_at >= query.since)
    select = _older(select, organization_id, query)
    limit = max(1, min(query.limit, MAX_PAGE))
    return select.order_by(CallRecord.created_at.desc(), CallRecord.id.desc()).limit(limit)


def _older(select: "ModelSelect[CallRecord]", organization_id: int, query: CallQuery) -> "ModelSelect[CallRecord]":
    """The upper bound: `until`, and the page's start, after the record `before_id` in the log's order (older than
    it, or as old with a lower id). One bound on `created_at`, the tighter: SQLite, which has no statistics, takes
    two for a narrower range than an equal filter and would walk the time index instead."""
    at = None
    if query.before_id is not None:
        found = page_start_select(query.before_id).first()
        if found is not None and found[1] == organization_id:
            at = found[0]
        else:  # not a record of the organization (any more): what the id alone says
            select = select.where(CallRecord.id < query.before_id)
    if at is None or (query.until is not None and query.until <= at):
        return select if query.until is None else select.where(CallRecord.created_at < query.until)
    # `created_at <= at` is where the page starts in the index (and lets PostgreSQL skip later days' partitions);
    # the records as old as `at` with a higher id, at most a handful, are passed over on the way.
    return select.where(CallRecord.created_at <= at, (CallRecord.created_at < at) | (CallRecord.id < query.before_id))


def page_start_select(before_id: int) -> "ModelSelect[Any]":
    """The record a page starts below, as (created_at, organization_id), found by its primary key alone.

    The organization is checked by the caller: asked for both, PostgreSQL walked each day partition's
    (organization_id, created_at, id) index whole for the id whenever its statistics said the partition was small,
    as a log written faster than they are gathered makes them (678 ms at 10M records, against 0.3 ms probing each
    partition's key)."""
    return CallRecord.select(CallRecord.created_at, CallRecord.organization).where(
        CallRecord.id == before_id).tuples()


def find_calls(organization: Organization, query: CallQuery) -> list[CallRecord]:
    """The organization's call records matching `query`, newest first."""
    with in_index_order():
        return list(calls_select(organization, query))


def count_calls(organization: Organization, query: CallQuery, bound: int = CALL_COUNT_BOUND) -> int:
    """How many of the organization's calls match `query`'s filters (its page ignored), counted up to `bound + 1`:
    more than `bound` means at least that many. The same range scan as a page, stopped past the bound."""
    select = calls_select(organization, replace(query, before_id=None)).select(CallRecord.id).limit(bound + 1)
    with in_index_order():
        return select.count()


@contextlib.contextmanager
def in_index_order() -> Iterator[None]:
    """Around a read of the call log: on PostgreSQL, a transaction in which the planner walks the indexes in order.

    Seeing a narrow filter, or a partition made ahead and still empty, PostgreSQL's planner would rather scan a
    partition or sort the few records it expects than walk each partition's index in the log's order; its guess is
    off by the size of a day whenever a partition's statistics lag behind it. Here sorts and whole-table scans are
    priced out (not forbidden), so the plan is the one the indexes were made for, as on SQLite."""
    database = db.obj
    if not isinstance(database, PostgresqlDatabase):
        yield
        return
    with database.atomic():
        database.execute_sql(_IN_INDEX_ORDER_SQL)
        yield


def call_view(row: CallRecord) -> dict[str, Any]:
    """One call as the API and the dashboard show it."""
    if row.kind == RESPONSE_TOO_BIG:
        size: int | str | None = OVER_THE_CAP
    else:
        size = row.size_chars
    return {
        "id": row.id, "at": row.created_at, "conversation": row.conversation_id, "turn": row.turn,
        "tool": row.tool, "version": row.tool_version, "session_start": row.session_start,
        "subject": row.subject, "anonymous": row.anonymous,
        "kind": row.kind or OK, "status": row.http_code, "latency_ms": row.latency_ms, "size": size, "jti": row.jti,
        "approval": row.approval, "raw_size": row.raw_bytes,
    }


def observe(organization: Organization, rows: Iterable[Mapping[str, Any]], *, session_start: bool) -> None:
    """Once a step's records are written, or refused: count its calls in the metrics and log one line per call."""
    rows = list(rows)
    metrics.observe_step(organization.slug, rows, session_start=session_start)
    logs.log_calls(organization.slug, rows)


def purge(retention_days: float, *, now: float | None = None, batch: int = PURGE_BATCH) -> int:
    """Remove every call record older than `retention_days`; returns how many went. Their rollups go after them,
    a bucket a transaction, once their whole hour or day is past the cutoff (`call_rollups.purge_oldest`).

    On PostgreSQL the day partitions wholly past the cutoff are dropped whole, each in a transaction of its own
    that waits at most a second for its lock; what remains past it (the day the cutoff falls in, and any record in
    the default partition) is deleted in batches, as on SQLite. Each batch is its own short transaction, so a
    serving instance's own writes interleave with the purge instead of waiting for all of it.
    """
    cutoff = (time.time() if now is None else now) - retention_days * SECONDS_PER_DAY
    total = 0
    if call_partitions.partitioned(db.obj):
        total += call_partitions.drop_days_before(db.obj, cutoff)[1]
    one_writer = not call_partitions.is_postgres(db.obj)
    while True:
        started = time.perf_counter()
        with write_transaction():
            # In time order, the order of `call_record_created`: a batch is read off the index, never sorted.
            ids = [row.id for row in CallRecord.select(CallRecord.id).where(CallRecord.created_at < cutoff)
                   .order_by(CallRecord.created_at).limit(batch)]
            if ids:
                # The time bound again, so PostgreSQL looks for the ids only in the partitions past the cutoff.
                total += CallRecord.delete().where(CallRecord.created_at < cutoff, CallRecord.id.in_(ids)).execute()
        if len(ids) < batch:
            _purge_rollups(cutoff, one_writer)
            return total
        _rest_after(started, one_writer)


def _rest_after(started: float, one_writer: bool) -> None:
    """Between batches, let other work in. SQLite has one writer at a time, and a serving process waiting for it
    sleeps ever longer between tries (up to 100 ms): taking the lock straight back starved its writes (a step's p99
    near a second while a million records went). So the purge rests as long as its batch held the lock."""
    time.sleep(min(time.perf_counter() - started, PURGE_REST_MOST_SECONDS) if one_writer else 0)


def _purge_rollups(cutoff: float, one_writer: bool) -> None:
    """The rollups past `cutoff`, a bucket a transaction, resting between them on SQLite as `purge` does."""
    while True:
        started = time.perf_counter()
        with write_transaction():
            removed = call_rollups.purge_oldest(db.obj, cutoff)
        if removed is None:
            return
        _rest_after(started, one_writer)
