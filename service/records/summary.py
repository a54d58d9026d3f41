"""The calls summary (issue 36): calls over time by kind, and per tool its calls, kinds and p50/p95 latency.

Read from the rollups written with the call records (service.migrations.call_rollups), never from the log: grouped
reads of one index range of each rollup table, an organization's rows of one width over the window, whatever the
size of the log (at most tools × kinds × buckets rows of counts, tools × buckets histograms). The window is split
into at most about MAX_BUCKETS buckets of a width chosen from it (`bucket_width`): an hour up to MAX_BUCKETS hours,
else whole days (1, 2, 7, 14, 28, … days), read from the day rows. The window is widened to whole buckets (the
rollups know no finer time), and the tools' figures cover the same buckets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from service.database import db
from service.latency import percentile
from service.limits import DEFAULT_PAGE
from service.migrations.call_rollups import DAY, HISTOGRAM_COLUMNS, HOUR, LATENCY_TABLE, OK, TABLE
from service.models import Organization, Project

#: The most buckets a summary is split into (about: a window is widened to whole buckets, so one more at most).
MAX_BUCKETS = 100
#: Bucket widths past a day, in days: the smallest that keeps a window within MAX_BUCKETS is taken.
DAY_STEPS = (1, 2, 7, 14, 28, 56, 91, 182, 364)
#: The shortest window when `since` is not given.
DEFAULT_SPAN = DAY


@dataclass(frozen=True)
class SummaryQuery:
    """The window and the filters of a summary: `GET /v1/calls`' own `since`, `until` and `tool`, and a project."""

    since: float | None = None  # Unix seconds, inclusive; None: the first rolled-up call, or a day before `until`
    until: float | None = None  # Unix seconds, exclusive; None: now
    tool: str | None = None
    kind: str | None = None  # a failure kind, or "ok": narrows the counts; the latencies are of every kind
    project: int | None = None  # a project's id (the caller resolves the name)
    limit: int = DEFAULT_PAGE  # the most tools answered, most called first (`tools_total` says how many had calls)


def bucket_width(span: float) -> int:
    """The width, in seconds, of the buckets of a window `span` seconds long: at most MAX_BUCKETS of them."""
    if span <= MAX_BUCKETS * HOUR:
        return HOUR
    days = math.ceil(span / (MAX_BUCKETS * DAY))
    return DAY * next((step for step in DAY_STEPS if step >= days), days)


def project_id(organization: Organization, name: str) -> int | None:
    """The id of the organization's project `name`, or None."""
    return (Project.select(Project.id).where(Project.organization == organization.id, Project.name == name)
            .scalar())


def _first_rolled_up(organization: Organization) -> float | None:
    return db.obj.execute_sql(f"SELECT MIN(bucket_start) FROM {TABLE} WHERE organization_id = {db.obj.param} "
                              f"AND width = {db.obj.param}", (organization.id, HOUR)).fetchone()[0]


def window(organization: Organization, query: SummaryQuery, now: float) -> tuple[int, int, int]:
    """The summary's buckets: (start of the first, end of the last, width), whole buckets around the window."""
    until = now if query.until is None else query.until
    since = query.since
    if since is None:  # from the first call rolled up, and a day at least, so a young log is not one bar
        first = _first_rolled_up(organization)
        since = until - DEFAULT_SPAN if first is None else min(first, until - DEFAULT_SPAN)
    if since >= until:  # a `since` past now, with no `until`: its own hour
        until = since + HOUR
    width = bucket_width(until - since)
    start = int(since // width) * width
    return start, int(math.ceil(until / width)) * width, width


def summarize(organization: Organization, query: SummaryQuery, now: float, *, failing: int = 0) -> dict[str, Any]:
    """The summary `GET /v1/calls/summary` answers and the Calls screen charts (CONTRACT.md's shape, plus the
    window it covers: `since`, `until`, `bucket_seconds`). With `failing`, also the `failing` tools with the most
    failed calls among all the window's tools, not only the page (their calls and kinds: the charts' own list)."""
    start, end, width = window(organization, query, now)
    level = HOUR if width < DAY else DAY
    database, p = db.obj, db.obj.param
    where = f"organization_id = {p} AND width = {p} AND bucket_start >= {p} AND bucket_start < {p}"
    params: list[Any] = [organization.id, level, start, end]
    for column, value in (("tool", query.tool), ("project_id", query.project)):
        if value is not None:
            where += f" AND {column} = {p}"
            params.append(value)
    counted, counted_params = where, params
    if query.kind is not None:
        counted, counted_params = f"{where} AND kind = {p}", [*params, query.kind]
    slot = f"(bucket_start - {start}) / {width}"  # integers on both engines: integer division
    counts: list[dict[str, int]] = [{} for _ in range((end - start) // width)]
    for index, kind, calls in database.execute_sql(
            f"SELECT {slot}, kind, SUM(calls) FROM {TABLE} WHERE {counted} GROUP BY {slot}, kind", counted_params):
        counts[int(index)][kind] = int(calls)
    tools: dict[str, dict[str, Any]] = {}
    for tool, kind, calls in database.execute_sql(
            f"SELECT tool, kind, SUM(calls) FROM {TABLE} WHERE {counted} GROUP BY tool, kind", counted_params):
        entry = tools.setdefault(tool, {"tool": tool, "calls": 0, "kinds": {}, "histogram": None})
        entry["calls"] += int(calls)
        entry["kinds"][kind] = int(calls)
    # Like every list, the tools are a page: an organization calling a hundred thousand tools gets its most called,
    # and their histograms alone are summed.
    ranked = sorted(tools.values(), key=lambda t: (-t["calls"], t["tool"]))[:query.limit]
    if ranked:
        sums = ", ".join(f"SUM({c})" for c in HISTOGRAM_COLUMNS)
        named = ", ".join([p] * len(ranked))
        for tool, *histogram in database.execute_sql(
                f"SELECT tool, {sums} FROM {LATENCY_TABLE} WHERE {where} AND tool IN ({named}) GROUP BY tool",
                [*params, *(t["tool"] for t in ranked)]):
            tools[tool]["histogram"] = [int(n) for n in histogram]
    found: dict[str, Any] = {
        "since": start, "until": end, "bucket_seconds": width, "tools_total": len(tools),
        "buckets": [{"start": start + i * width, "counts": c} for i, c in enumerate(counts)],
        "tools": [{"tool": t["tool"], "calls": t["calls"], "kinds": t["kinds"],
                   "p50_ms": _percentile(t["histogram"], 50), "p95_ms": _percentile(t["histogram"], 95)}
                  for t in ranked],
    }
    if failing:
        most = sorted((t for t in tools.values() if failures(t)), key=lambda t: (-failures(t), t["tool"]))
        found["failing"] = [{"tool": t["tool"], "calls": t["calls"], "kinds": t["kinds"]} for t in most[:failing]]
    return found


def _percentile(histogram: list[int] | None, p: float) -> float | None:
    return None if histogram is None else percentile(histogram, p)


def failures(tool: dict[str, Any]) -> int:
    """How many of a summary tool's calls failed (every kind but "ok")."""
    return tool["calls"] - tool["kinds"].get(OK, 0)

