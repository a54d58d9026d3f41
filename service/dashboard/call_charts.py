"""The Calls screen's charts (issue 36): calls over time stacked by kind, p50/p95 latency per tool, and the tools
failing most, for the screen's tool and time filters, drawn as SVG on the server (no script, no library).

The numbers are `records.summary.summarize`'s, the very answer of `GET /v1/calls/summary`, read from the rollups, so
the charts cost the same at a million calls as at ten. The rollups hold no conversation, turn or subject: with such a
filter set, the charts cover the tool, kind and time filters only, and say so. `call_charts()` is a template
global, so the screen includes its charts by one line (`call_charts.html`) and its view is left as it was.
"""
from __future__ import annotations

from typing import Any

from flask import request

from service.dashboard.call_filters import call_filters
from service.dashboard.web import blp, principal, when
from service.models import now
from service.records import summary
from service.records.calls import KINDS, OK

#: The time chart's drawing box (SVG user units); it scales to the width of the screen.
WIDTH, HEIGHT = 600, 160
#: Tools shown in each per-tool chart: the most called (latency), the most failing (failures).
TOOLS_SHOWN = 10
#: The filters the rollups cannot apply.
UNCHARTED = ("conversation", "turn", "subject")


def _time_chart(found: dict[str, Any]) -> dict[str, Any]:
    buckets = found["buckets"]
    totals = [sum(b["counts"].values()) for b in buckets]
    top = max(totals, default=0) or 1
    step = WIDTH / max(1, len(buckets))
    bars = []
    for i, bucket in enumerate(buckets):
        y = float(HEIGHT)
        for k in KINDS:
            count = bucket["counts"].get(k, 0)
            if not count:
                continue
            height = HEIGHT * count / top
            y -= height
            bars.append({"x": round(i * step + step * 0.1, 2), "y": round(y, 2), "width": round(step * 0.8, 2),
                         "height": round(height, 2), "kind": k,
                         "title": f"{when(bucket['start'])}: {count:,} {k}"})
    shown = [k for k in KINDS if any(b["counts"].get(k) for b in buckets)]
    rows = [{"start": when(b["start"]), "counts": [b["counts"].get(k, 0) for k in shown], "total": t}
            for b, t in zip(buckets, totals) if t]
    return {"bars": bars, "kinds": shown, "top": top, "total": sum(totals), "rows": rows,
            "first": when(found["since"]), "last": when(found["until"])}


def _ms(value: float) -> str:
    """A percentile as the charts word it: the histogram's first bucket is all that is known of a call under 1 ms."""
    return "under 1 ms" if value < 1 else f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def _latency_chart(tools: list[dict[str, Any]]) -> dict[str, Any]:
    shown = [t for t in tools if t["p95_ms"] is not None][:TOOLS_SHOWN]
    top = max((t["p95_ms"] for t in shown), default=0) or 1
    return {"tools": [{"tool": t["tool"], "calls": t["calls"], "p50": _ms(t["p50_ms"]), "p95": _ms(t["p95_ms"]),
                       "p50_width": round(100 * t["p50_ms"] / top, 2), "p95_width": round(100 * t["p95_ms"] / top, 2)}
                      for t in shown]}


def _failing_chart(failing: list[dict[str, Any]]) -> dict[str, Any]:
    top = max((summary.failures(t) for t in failing), default=0) or 1
    rows = []
    for t in failing:
        segments, x = [], 0.0
        for k in KINDS:
            count = t["kinds"].get(k, 0)
            if k == OK or not count:
                continue
            width = 100 * count / top
            segments.append({"kind": k, "x": round(x, 2), "width": round(width, 2), "count": count})
            x += width
        rows.append({"tool": t["tool"], "failures": summary.failures(t), "calls": t["calls"],
                     "share": round(100 * summary.failures(t) / t["calls"], 1), "segments": segments})
    return {"tools": rows}


@blp.app_template_global()
def call_charts() -> dict[str, Any] | None:
    """The charts of the Calls screen for its filters (request.args); None when the filters are refused."""
    filters = call_filters(request.args, 1)
    if filters.violations:
        return None
    query = filters.query
    found = summary.summarize(principal().organization, summary.SummaryQuery(
        since=query.since, until=query.until, tool=query.tool, kind=query.kind, limit=TOOLS_SHOWN), now(),
        failing=TOOLS_SHOWN)
    return {"time": _time_chart(found), "latency": _latency_chart(found["tools"]),
            "failing": _failing_chart(found["failing"]),
            "bucket_hours": found["bucket_seconds"] // 3600, "kind": query.kind,
            "uncharted": [name for name in UNCHARTED if filters.values.get(name)]}
