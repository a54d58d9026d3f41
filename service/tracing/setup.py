"""Whether this process traces, and the one tracer it traces with: OpenTelemetry's own variables decide, nothing else.

Tracing is on when an OTLP exporter is configured: `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only form) is set, or
`OTEL_TRACES_EXPORTER` names `otlp`; `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turns it off whatever
else is set. Everything past that choice is read by opentelemetry-sdk itself from the same variables: the endpoint,
headers, timeout and compression (the OTLP exporter), `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (the
resource), `OTEL_TRACES_SAMPLER` and its argument (the provider), `OTEL_BSP_*` (the batch processor).

Off, nothing of OpenTelemetry is even imported, and every place that traces tests `state.tracer is None` first: no
span is made and the hot path does one attribute read. On, spans leave in batches from a background greenlet.

A process traces with the provider it built itself: `configure` in a forked worker (each gunicorn worker builds its
app, and so calls this, after the fork) builds a fresh provider and exporter of its own.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from service.tracing.lean import Tracer

log = logging.getLogger(__name__)

#: The protocols the exporter speaks here. gRPC would bring grpcio (a 40 MB native package) for what HTTP does as well;
#: every OTLP backend and collector takes HTTP/protobuf, OTLP's recommended default.
HTTP_PROTOBUF = "http/protobuf"
INSTRUMENTATION_NAME = "toolgate"


@dataclass
class TracingState:
    """The process's tracer (None: tracing is off), the provider behind it, and the process that built them."""

    tracer: "Tracer | None" = None
    provider: "TracerProvider | None" = None
    pid: int = 0


state = TracingState()


def exporter_wanted(environ: Mapping[str, str]) -> bool:
    """Whether OpenTelemetry's variables in `environ` configure an OTLP trace exporter (module docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if name.strip()}
    if "none" in exporters:
        return False
    if exporters:
        if "otlp" not in exporters:
            log.warning("OTEL_TRACES_EXPORTER=%s: only otlp is offered; tracing stays off",
                        environ["OTEL_TRACES_EXPORTER"])
        return "otlp" in exporters
    return bool(environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def protocol(environ: Mapping[str, str]) -> str:
    """The OTLP protocol the variables ask for (http/protobuf when they name none)."""
    return (environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or HTTP_PROTOBUF).strip().lower()


def configure(environ: Mapping[str, str] | None = None) -> bool:
    """Turn tracing on or off for this process from OpenTelemetry's variables (`os.environ` by default); True when
    on. Idempotent within a process; a forked child that inherited a provider builds its own."""
    environ = os.environ if environ is None else environ
    if state.tracer is not None and state.pid == os.getpid():
        return True
    state.tracer, state.provider = None, None  # a parent's provider is not this process's to use
    if not exporter_wanted(environ):
        return False
    wanted = protocol(environ)
    if wanted != HTTP_PROTOBUF:
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only %s is offered; tracing stays off", wanted, HTTP_PROTOBUF)
        return False
    from service.tracing.lean import Tracer

    state.provider, processor = _provider()
    state.tracer = Tracer(state.provider, processor, INSTRUMENTATION_NAME)
    state.pid = os.getpid()
    return True


def _provider() -> "tuple[TracerProvider, Any]":
    """The SDK's provider (its sampler, ids and resource) and the processor spans end into, exporting in batches
    (service.tracing.batches) through the SDK's OTLP/HTTP exporter (service.tracing.encoding)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from service.tracing.batches import Batches
    from service.tracing.encoding import Exporter

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the provider, OTEL_TRACES_SAMPLER. A
    # service the variables leave unnamed is "toolgate" rather than the SDK's "unknown_service:python".
    # The process id tells a gunicorn worker's spans from another's.
    resource = Resource.create().merge(Resource({"process.pid": os.getpid()}))
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": INSTRUMENTATION_NAME}))
    provider = TracerProvider(resource=resource)
    processor = Batches(Exporter())
    provider.add_span_processor(processor)
    return provider, processor


def flush(timeout_millis: int = 10_000) -> bool:
    """Export every span ended so far, now (tests, and a process about to stop); True when all went out."""
    return state.provider.force_flush(timeout_millis) if state.provider is not None else True


def stop() -> None:
    """Export what is left and turn tracing off in this process."""
    provider: Any = state.provider
    state.tracer, state.provider = None, None
    if provider is not None:
        provider.shutdown()
