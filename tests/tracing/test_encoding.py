"""The service's own spans and OTLP encoding (service.tracing.lean, service.tracing.encoding) against the SDK's: the
bytes it exports are the message the SDK's encoder makes of the same spans, its default sampling decides as the SDK's
sampler decides, its span limits are the SDK's variables, and a span's `traceparent` is the W3C propagator's."""
from __future__ import annotations

import pytest
from opentelemetry import context, trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, DEFAULT_ON, ParentBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, StatusCode, TraceFlags, TraceState
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from service import tracing
from service.tracing.encoding import encode_request
from service.tracing.lean import Tracer

CALLER = SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7, is_remote=True,
                     trace_flags=TraceFlags(TraceFlags.SAMPLED), trace_state=TraceState([("vendor", "v1")]))


class Kept:
    """A span processor that keeps what ends."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


def lean(provider: TracerProvider | None = None) -> tuple[Tracer, Kept]:
    kept = Kept()
    return Tracer(provider or TracerProvider(resource=Resource({"service.name": "toolgate-test"})), kept,
                  "toolgate"), kept


def in_context(span_context: SpanContext) -> context.Context:
    return trace.set_span_in_context(NonRecordingSpan(span_context))


def test_a_batch_is_the_message_the_sdks_encoder_makes_of_it():
    tracer, kept = lean()
    server = tracer.start_span("POST /v1/steps", context=in_context(CALLER), kind=SpanKind.SERVER,
                               attributes={"http.request.method": "POST"})
    server.set_attribute("http.response.status_code", 200)
    call = tracer.start_span("execute_tool fast", context=trace.set_span_in_context(server), attributes={
        "gen_ai.operation.name": "execute_tool", "toolgate.session_start": True, "ratio": 0.25, "negative": -7,
        "names": ["a", "b"], "big": 2**62, "blob": b"\x00\x01", "long": "x" * 300})
    call.set_status(StatusCode.ERROR, "timeout")
    call.add_event("approval held", {"toolgate.approval.id": "apr_1", "n": 3})
    call.end()
    server.end()
    root = tracer.start_span("invoke_agent toolgate")  # no parent: a root of its own trace
    root.end()
    # An SDK span of another resource and scope in the same batch: grouped apart, as the SDK's encoder groups it.
    other = TracerProvider(resource=Resource({"service.name": "other"})).get_tracer("elsewhere", "1.2")
    with other.start_as_current_span("sdk span", attributes={"k": "v"}) as sdk_span:
        pass
    batch = [*kept.spans, sdk_span]
    ours = ExportTraceServiceRequest.FromString(encode_request(batch, {}))
    assert ours == encode_spans(batch)
    assert len(ours.resource_spans) == 2 and len(ours.resource_spans[0].scope_spans[0].spans) == 3
    again = ExportTraceServiceRequest.FromString(encode_request(batch, {}))  # written from its cache the second time
    assert again == ours


@pytest.mark.parametrize("parent", [
    None,
    SpanContext(1, 2, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED | TraceFlags.RANDOM_TRACE_ID)),
    SpanContext(1, 2, is_remote=False, trace_flags=TraceFlags(TraceFlags.DEFAULT)),
    CALLER,
    SpanContext(1, 2, is_remote=True, trace_flags=TraceFlags(TraceFlags.DEFAULT), trace_state=TraceState([("a", "b")])),
], ids=["root", "local sampled", "local unsampled", "remote sampled", "remote unsampled"])
@pytest.mark.parametrize("sampler", [DEFAULT_ON, ALWAYS_ON], ids=["parentbased_always_on", "always_on"])
def test_the_default_samplers_decide_as_the_sdks_do(sampler, parent):
    # The fast path is taken for the SDK's own sampler objects; a copy of one goes through its should_sample.
    fast, _ = lean(TracerProvider(sampler=sampler))
    slow, _ = lean(TracerProvider(sampler=ParentBased(ALWAYS_ON) if sampler is DEFAULT_ON else type(sampler)(
        sampler._decision)))
    where = in_context(parent) if parent is not None else None
    made = [t.start_span("x", context=where, attributes={"k": "v"}) for t in (fast, slow)]
    decided = [(s.is_recording(), s.get_span_context().trace_flags, s.get_span_context().trace_state,
                dict(getattr(s, "attributes", {}) or {})) for s in made]
    assert decided[0] == decided[1]
    if parent is not None:
        assert made[0].get_span_context().trace_id == parent.trace_id


def test_span_limits_are_the_sdks_variables(monkeypatch):
    monkeypatch.setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "2")
    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4")
    tracer, kept = lean()
    span = tracer.start_span("x", attributes={"a": "abcdefgh", "b": 1})
    span.set_attribute("c", "dropped")
    span.set_attribute("a", ("long one", "ok"))
    span.set_attribute("b", {"not": "a value"})  # not an attribute value: dropped, the old one kept
    span.end()
    span.set_attribute("b", 2)  # ended: nothing changes
    [ended] = kept.spans
    assert dict(ended.attributes) == {"a": ("long", "ok"), "b": 1}
    assert ended.dropped_attributes == 1
    assert ExportTraceServiceRequest.FromString(encode_request([ended], {})) == encode_spans([ended])


def test_a_spans_headers_are_the_w3c_propagators(monkeypatch):
    tracer, _ = lean()
    monkeypatch.setattr(tracing.state, "tracer", tracer)  # tracing on in this process, its spans kept here
    span = tracer.start_span("x", context=in_context(CALLER))
    token = context.attach(trace.set_span_in_context(span))
    try:
        expected: dict[str, str] = {}
        TraceContextTextMapPropagator().inject(expected)
        assert tracing.outgoing_headers() == expected
        assert tracing.outgoing_headers() == expected  # the second time from the span's own copy
        assert expected["tracestate"] == "vendor=v1"
        assert tracing.current_ids() == (format(CALLER.trace_id, "032x"),
                                         format(span.get_span_context().span_id, "016x"))
    finally:
        context.detach(token)
        span.end()
    assert tracing.outgoing_headers() == {} and tracing.current_ids() is None  # no span current
