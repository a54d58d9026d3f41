"""The call log: every call (session-start ones included) as the organization may review it, and its retention.

A record holds what happened, never what was said: no body, no token (the assertion's `jti` identifies it). The
log is written by `service.conversations.runs`, once per step; this module reads it, observes each step for the
metrics and the logs, and purges records past their retention in short batches, so it is safe while serving.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from service.database import write_transaction
from service.dispatch.failures import FAILURE_KINDS, RESPONSE_TOO_BIG
from service.limits import MAX_PAGE, SECONDS_PER_DAY
from service.models import CallRecord, Organization
from service.records import logs, metrics

#: How a call log entry shows a response past the cap: its size was never counted.
OVER_THE_CAP = "over the cap"
#: The kind filter for calls that succeeded.
OK = metrics.OK
KINDS = (OK, *FAILURE_KINDS)

#: Records deleted per transaction by `purge`: small enough that a serving instance's writes wait only briefly.
PURGE_BATCH = 500


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


def find_calls(organization: Organization, query: CallQuery) -> list[CallRecord]:
    """The organization's call records matching `query`, newest first."""
    select = CallRecord.select().where(CallRecord.organization == organization)
    for value, column in ((query.conversation, CallRecord.conversation_id), (query.turn, CallRecord.turn),
                          (query.tool, CallRecord.tool), (query.subject, CallRecord.subject)):
        if value is not None:
            select = select.where(column == value)
    if query.kind == OK:
        select = select.where(CallRecord.kind.is_null())
    elif query.kind is not None:
        select = select.where(CallRecord.kind == query.kind)
    if query.since is not None:
        select = select.where(CallRecord.created_at >= query.since)
    if query.until is not None:
        select = select.where(CallRecord.created_at < query.until)
    if query.before_id is not None:
        select = select.where(CallRecord.id < query.before_id)
    limit = max(1, min(query.limit, MAX_PAGE))
    return list(select.order_by(CallRecord.id.desc()).limit(limit))


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
    """Delete every call record older than `retention_days`; returns how many went.

    Each batch is its own short transaction, so a serving instance's own writes interleave with the purge
    instead of waiting for all of it.
    """
    cutoff = (time.time() if now is None else now) - retention_days * SECONDS_PER_DAY
    total = 0
    while True:
        with write_transaction():
            ids = [row.id for row in CallRecord.select(CallRecord.id).where(CallRecord.created_at < cutoff)
                   .order_by(CallRecord.id).limit(batch)]
            if ids:
                total += CallRecord.delete().where(CallRecord.id.in_(ids)).execute()
        if len(ids) < batch:
            return total
        time.sleep(0)  # between batches, let other work in (under gevent this yields to other greenlets)
