"""The span batches (service.tracing.batches): the SDK's OTEL_BSP_* variables size them, a full batch leaves without
waiting for the timer, a full queue drops (and says so), and what is queued leaves on a flush and at shutdown."""
from __future__ import annotations

import logging
import time
from typing import Sequence

import gevent
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from service.tracing.batches import Batches
from service.tracing.lean import Tracer

WAIT_SECONDS = 5.0


class Received(SpanExporter):
    """An exporter that keeps each batch it is handed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.stopped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.batches.append([s.name for s in spans])
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.stopped = True


def batches(monkeypatch, queue: int, batch: int, delay_ms: int = 600_000) -> tuple[Batches, Received, Tracer]:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", str(queue))
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", str(batch))
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", str(delay_ms))
    received = Received()
    processor = Batches(received)
    return processor, received, Tracer(TracerProvider(resource=Resource({})), processor, "toolgate")


def test_a_full_queue_drops_and_a_flush_sends_the_rest_in_batches(monkeypatch, caplog):
    processor, received, tracer = batches(monkeypatch, queue=4, batch=3)
    try:
        for i in range(3):
            tracer.start_span(f"s{i}").end()
        gevent.idle()
        assert received.batches == [["s0", "s1", "s2"]]  # a full batch left without waiting for the timer
        for i in range(3, 8):  # no yield meanwhile: the worker has no turn
            tracer.start_span(f"s{i}").end()
        with caplog.at_level(logging.WARNING, logger="service.tracing.batches"):
            assert processor.force_flush()
        assert received.batches[1:] == [["s3", "s4", "s5"], ["s6"]]  # s7 found the queue (4) full
        assert "1 spans dropped" in caplog.text
    finally:
        processor.shutdown()


def test_spans_ending_during_an_export_wait_for_a_full_batch(monkeypatch):
    processor, received, tracer = batches(monkeypatch, queue=10, batch=2)
    exported = received.export

    def export(spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if len(received.batches) == 0:  # requests answered while the first export is on its way
            tracer.start_span("during").end()
        return exported(spans)

    monkeypatch.setattr(received, "export", export)
    try:
        tracer.start_span("a").end()
        tracer.start_span("b").end()
        gevent.idle()
        assert received.batches == [["a", "b"]]  # "during" is not sent alone, in a request of its own
        assert [s.name for s in processor.spans] == ["during"]
    finally:
        processor.shutdown()
    assert received.batches[-1] == ["during"]


def test_the_timer_sends_a_part_batch_and_shutdown_the_rest(monkeypatch):
    processor, received, tracer = batches(monkeypatch, queue=10, batch=10, delay_ms=10)
    tracer.start_span("timed").end()
    deadline = time.monotonic() + WAIT_SECONDS
    while not received.batches and time.monotonic() < deadline:
        gevent.sleep(0.01)
    assert received.batches == [["timed"]]
    processor.delay = 600  # the timer no longer sends: what follows leaves at shutdown
    gevent.sleep(0.05)
    tracer.start_span("last").end()
    processor.shutdown()
    assert received.batches[-1] == ["last"] and received.stopped
    tracer.start_span("after").end()  # stopped: nothing more is taken
    assert processor.spans == []


def test_an_unsampled_span_is_not_exported(monkeypatch):
    processor, received, _ = batches(monkeypatch, queue=10, batch=10)
    unsampled = Tracer(TracerProvider(sampler=ALWAYS_OFF, resource=Resource({})), processor, "toolgate")
    try:
        assert not unsampled.start_span("dropped").is_recording()
        assert processor.force_flush() and received.batches == []
    finally:
        processor.shutdown()
