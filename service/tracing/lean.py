"""The service's spans: OpenTelemetry spans made by a tracer of our own over the SDK's provider.

Why not the SDK's `Tracer`: its span costs about 260k instructions to make and end (bench/JOURNAL.md, "Cutting what
a traced step costs"): four locks a span (gevent's, in Python, once monkey-patched), `BoundedAttributes` checking each
value as it is set, the provider's self-metrics. A step makes two, and tracing every step was to cost at most 15%
more than not tracing. The span here is plain: its attributes a dict, set only by the greenlet that made it.

What stays the SDK's, read from OpenTelemetry's variables as the SDK reads them: the sampler
(`OTEL_TRACES_SAMPLER`), the id generator, the resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), the span
limits (`OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`, `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`, `OTEL_SPAN_EVENT_COUNT_LIMIT`, ...), the
batching variables (`OTEL_BSP_*`, service.tracing.batches) and the OTLP exporter. A span here is an SDK `ReadableSpan`
too, so the SDK's exporter and its encoder take it as they take their own.
"""
from __future__ import annotations

import logging
from time import time_ns
from typing import Any, Mapping, Sequence

from opentelemetry import context as context_api
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, DEFAULT_ON
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

log = logging.getLogger(__name__)

#: The flags a span's context carries, by (sampled, trace id random), as the SDK sets them.
_FLAGS = {(sampled, random): TraceFlags((TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
                                        | (TraceFlags.RANDOM_TRACE_ID if random else 0))
          for sampled in (False, True) for random in (False, True)}
_FLAGS_HEX = {flags: f"{flags:02x}" for flags in range(256)}
_UNSET = Status(StatusCode.UNSET)
_SCALARS = (str, bool, int, float, bytes)


_SPAN_KEY: str | None
try:  # the key OpenTelemetry keeps the current span under, in a context (set_span_in_context's)
    from opentelemetry.trace.propagation import _SPAN_KEY
except ImportError:  # pragma: no cover  (an API that moved it: its own function, at twice the cost)
    _SPAN_KEY = None


def current_span(context: context_api.Context | None = None) -> trace_api.Span:
    """The span current in `context` (the current context when None; INVALID_SPAN when none): `get_current_span`, read
    in one lookup rather than through its four calls. Every log line asks, and a step's spans half a dozen times."""
    if _SPAN_KEY is None:  # pragma: no cover
        return trace_api.get_current_span(context)
    span = (context_api.get_current() if context is None else context).get(_SPAN_KEY)
    return span if span is not None else trace_api.INVALID_SPAN  # type: ignore[return-value]  # only spans set there


def _valid(value: Any) -> bool:
    """An attribute value OpenTelemetry takes: a scalar, or a sequence of scalars of one type."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, Sequence):
        return len({type(item) for item in value if item is not None}) <= 1 and all(
            item is None or isinstance(item, _SCALARS) for item in value)
    return False


def _cut(value: Any, length: int | None) -> Any:
    if length is None:
        return value
    if isinstance(value, str):
        return value[:length]
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        return tuple(item[:length] if isinstance(item, str) else item for item in value)
    return value


class Tracer:
    """Makes this process's spans: the SDK provider's sampler, ids, resource and span limits; the processor its
    spans end into (service.tracing.batches)."""

    #: OpenTelemetry's API, for service.tracing.spans: read off the tracer, where an import statement in each of its
    #: functions would cost as much as some of them do.
    trace = trace_api
    context = context_api
    current_span = staticmethod(current_span)

    def __init__(self, provider: TracerProvider, processor: SpanProcessor, scope_name: str) -> None:
        self.sampler = provider.sampler
        self.id_generator = provider.id_generator
        self.random_ids = self.id_generator.is_trace_id_random()
        self.resource = provider.resource
        self.scope = InstrumentationScope(scope_name)
        self.processor = processor
        limits = SpanLimits()
        self.max_attributes = limits.max_span_attributes
        self.max_length = limits.max_span_attribute_length
        self.max_events = limits.max_events
        self.max_event_attributes = limits.max_event_attributes

    def start_span(self, name: str, context: context_api.Context | None = None, kind: SpanKind = SpanKind.INTERNAL,
                   attributes: Mapping[str, Any] | None = None) -> trace_api.Span:
        """A span of `name`, a child of the span current in `context` (the current context when None), started now;
        a non-recording span carrying the ids on when the sampler drops it."""
        parent: SpanContext | None = current_span(context).get_span_context()
        if parent is None or not parent.is_valid:
            parent = None
            trace_id = self.id_generator.generate_trace_id()
            random = self.random_ids
        else:
            trace_id = parent.trace_id
            random = parent.trace_flags.random_trace_id
        trace_state: TraceState | None
        if self.sampler is ALWAYS_ON or self.sampler is DEFAULT_ON:
            # The SDK's default (parentbased_always_on) and always_on, decided as they decide, without their calls
            # (a third of a span's making): sampled unless a parent was not; the parent's trace state kept.
            sampled = self.sampler is ALWAYS_ON or parent is None or parent.trace_flags.sampled
            recording, trace_state = sampled, parent.trace_state if parent is not None else None
            kept = attributes if sampled else None
        else:
            result = self.sampler.should_sample(context, trace_id, name, kind, attributes, ())
            sampled, recording = result.decision.is_sampled(), result.decision.is_recording()
            trace_state, kept = result.trace_state, result.attributes
        span_context = SpanContext(trace_id, self.id_generator.generate_span_id(), is_remote=False,
                                   trace_flags=_FLAGS[sampled, random], trace_state=trace_state)
        if not recording:
            return trace_api.NonRecordingSpan(span_context)
        span = Span(self, name, span_context, parent, kind)
        if kept:  # the sampler's: those given, and any it adds (the SDK's span takes these alone)
            span.set_attributes(kept)
        return span


class Span(trace_api.Span, ReadableSpan):
    """A recording span: an OpenTelemetry `Span` while open, an SDK `ReadableSpan` for the processor once ended.
    Only the greenlet that made it changes it (a step's call gets a span of its own), so it takes no lock."""

    _context: SpanContext  # never None here
    _events: "list[Event] | tuple[()]"

    def __init__(self, tracer: Tracer, name: str, context: SpanContext, parent: SpanContext | None,
                 kind: SpanKind) -> None:
        # ReadableSpan's fields, by the names its properties and the SDK's encoder read; its __init__ is skipped.
        self._tracer = tracer
        self._name, self._context, self._parent, self._kind = name, context, parent, kind
        self._attributes: dict[str, Any] = {}
        self._events = ()  # a list once it has an event: most spans have none
        self._links: tuple = ()
        self._status = _UNSET
        self._resource = tracer.resource
        self._instrumentation_scope = tracer.scope
        self._instrumentation_info = None
        self._dropped_attributes = self._dropped_events = 0
        self._end_time: int | None = None
        self._hex: tuple[str, str] | None = None
        self._outgoing: dict[str, str] | None = None
        self._start_time = time_ns()

    @property
    def outgoing(self) -> dict[str, str]:
        """The W3C Trace Context headers of this span (`traceparent`, and `tracestate` if any), for requests sent
        inside it; written once (a caller copies them, never changes them)."""
        headers = self._outgoing
        if headers is None:
            trace_id, span_id = self.hex_ids
            headers = {"traceparent": f"00-{trace_id}-{span_id}-{_FLAGS_HEX[self._context.trace_flags]}"}
            if self._context.trace_state:
                headers["tracestate"] = self._context.trace_state.to_header()
            self._outgoing = headers
        return headers

    @property
    def hex_ids(self) -> tuple[str, str]:
        """(trace id, span id) in hex, written once: every log line inside the span carries them."""
        ids = self._hex
        if ids is None:
            ids = self._hex = (format(self._context.trace_id, "032x"), format(self._context.span_id, "016x"))
        return ids

    # ReadableSpan's counts read the SDK's bounded containers; these are plain.
    @property
    def dropped_attributes(self) -> int:
        return self._dropped_attributes

    @property
    def dropped_events(self) -> int:
        return self._dropped_events

    @property
    def dropped_links(self) -> int:
        return 0

    @property
    def kind(self) -> SpanKind:
        return self._kind

    def get_span_context(self) -> SpanContext:
        return self._context

    def is_recording(self) -> bool:
        return self._end_time is None

    def set_attribute(self, key: str, value: Any) -> None:
        if self._end_time is not None:
            return
        attributes = self._attributes
        tracer = self._tracer
        if (type(value) is str or type(value) is int) and tracer.max_length is None and type(key) is str and key and (
                key in attributes or len(attributes) < tracer.max_attributes):  # type: ignore[operator]
            attributes[key] = value  # the common case, decided without a call
            return
        if not isinstance(key, str) or not key or not _valid(value):
            log.warning("invalid span attribute %r dropped", key)
            return
        if key not in attributes and len(attributes) >= self._tracer.max_attributes:  # type: ignore[operator]
            self._dropped_attributes += 1
            return
        attributes[key] = _cut(value if not isinstance(value, list) else tuple(value), self._tracer.max_length)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if self._end_time is not None:
            return
        mine, limit, length = self._attributes, self._tracer.max_attributes, self._tracer.max_length
        for key, value in attributes.items():
            if length is None and (type(value) is str or type(value) is int) and type(key) is str and key and (
                    key in mine or len(mine) < limit):  # type: ignore[operator]
                mine[key] = value  # the common case, decided without a call
            else:
                self.set_attribute(key, value)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None,
                  timestamp: int | None = None) -> None:
        if self._end_time is not None:
            return
        if len(self._events) >= self._tracer.max_events:  # type: ignore[operator]
            self._dropped_events += 1
            return
        kept = {key: _cut(value, self._tracer.max_length) for key, value in (attributes or {}).items()
                if isinstance(key, str) and key and _valid(value)}
        kept = dict(list(kept.items())[:self._tracer.max_event_attributes])
        self._events = [*self._events, Event(name, kept, timestamp if timestamp is not None else time_ns())]

    def add_link(self, context: SpanContext, attributes: Mapping[str, Any] | None = None) -> None:
        log.warning("span links are not made here; dropped")

    def update_name(self, name: str) -> None:
        if self._end_time is None:
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._end_time is not None or self._status.status_code is StatusCode.OK:
            return  # OK is final, as the SDK has it
        self._status = status if isinstance(status, Status) else Status(status, description)

    def record_exception(self, exception: BaseException, attributes: Mapping[str, Any] | None = None,
                         timestamp: int | None = None, escaped: bool = False) -> None:
        # An exception's message may hold anything (module docstring of spans.py): only its type is recorded.
        self.add_event("exception", {"exception.type": type(exception).__qualname__}, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._end_time is not None:
            return
        self._end_time = end_time if end_time is not None else time_ns()
        self._tracer.processor.on_end(self)
