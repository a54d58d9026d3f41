"""Ended spans, handed to the exporter in batches from a background thread (a greenlet, once gevent has patched
threading): the SDK's batch processor's job, configured by the same variables (`OTEL_BSP_SCHEDULE_DELAY`,
`OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, read and checked by the SDK's own functions).

Why not the SDK's: its `on_end` costs about 7k instructions a span (its checks, a process id asked of the kernel, a
deque and an event) where this one appends to a list, about 1k: a traced one-call step's cost goal is 15%, and its
two spans' queueing was nearly 1% of an untraced step (bench/JOURNAL.md). A process that forks builds a new one
(service.tracing.setup), so nothing here needs to survive a fork.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

log = logging.getLogger(__name__)


class Batches(SpanProcessor):
    """Queues each sampled span that ends (up to the queue's size: past it a span is dropped, with a warning) and
    exports them in batches: full ones as they fill, one (part) batch when the schedule delay passes, everything on
    `force_flush` and on `shutdown`."""

    def __init__(self, exporter: SpanExporter) -> None:
        # The SDK's own readings of OTEL_BSP_*, with its defaults (5 s, 2048, 512) and its checks.
        self.size = BatchSpanProcessor._default_max_queue_size()
        self.delay = BatchSpanProcessor._default_schedule_delay_millis() / 1000
        self.batch = BatchSpanProcessor._default_max_export_batch_size()
        BatchSpanProcessor._validate_arguments(self.size, self.delay * 1000, self.batch)
        self.exporter = exporter
        self.spans: list[ReadableSpan] = []
        self.dropped = 0
        self.stopped = False
        self._wake = threading.Event()
        self._exporting = threading.Lock()  # one export at a time: the worker's or a flush's
        self._worker = threading.Thread(target=self._run, name="toolgate-span-batches", daemon=True)
        self._worker.start()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if not span._context.trace_flags & 1 or self.stopped:  # type: ignore[union-attr]  # sampled only
            return
        spans = self.spans
        if len(spans) >= self.size:
            self.dropped += 1
            return
        spans.append(span)
        if len(spans) >= self.batch:
            self._wake.set()

    def _run(self) -> None:
        while not self.stopped:
            self._wake.wait(self.delay)
            self._wake.clear()
            self._export(everything=False)

    def _export(self, everything: bool) -> bool:
        """Export a batch, then more while a full one is queued (the worker, as the SDK's does: spans that end during
        an export wait for a full batch or the timer, rather than leaving a few at a time, each export with its own
        request); or everything queued (a flush). True when every batch went out."""
        ok, first = True, True
        with self._exporting:
            if self.dropped:
                log.warning("span queue full (OTEL_BSP_MAX_QUEUE_SIZE=%d): %d spans dropped", self.size, self.dropped)
                self.dropped = 0
            while self.spans and (everything or first or len(self.spans) >= self.batch):
                first = False
                batch = self.spans[:self.batch]
                del self.spans[:len(batch)]  # spans ending meanwhile are appended after them: none is lost
                try:
                    ok = self.exporter.export(batch) is SpanExportResult.SUCCESS and ok
                except Exception:  # an exporter's failure must not stop the worker
                    log.exception("span batch not exported")
                    ok = False
        return ok

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._export(everything=True)

    def shutdown(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self._wake.set()
        self._worker.join(timeout=30)
        self._export(everything=True)
        self.exporter.shutdown()
