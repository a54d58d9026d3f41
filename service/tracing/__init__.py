"""Traces: OpenTelemetry spans of each request, turn, model call and tool call, off unless an exporter is configured.

`setup` decides from OpenTelemetry's own variables whether this process traces; `spans` makes the spans, each a no-op
while it does not. No Flask and no database: the edges and the use cases call in here, as dispatch does for the
`traceparent` of a call it sends.
"""
from service.tracing.setup import configure, exporter_wanted, flush, state, stop
from service.tracing.spans import (
    annotate,
    answered,
    current_ids,
    event,
    failed,
    outgoing_headers,
    span,
    tool_call,
    traced_events,
    traced_wsgi,
)

__all__ = ["annotate", "answered", "configure", "current_ids", "event", "exporter_wanted", "failed", "flush",
           "outgoing_headers", "span", "state", "stop", "tool_call", "traced_events", "traced_wsgi"]
