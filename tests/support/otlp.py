"""An OTLP/HTTP trace receiver on 127.0.0.1, as a tracing backend runs one, decoding with OpenTelemetry's own protobuf
messages; and the service's tracing turned on towards it for one test."""

import contextlib
import gzip
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import gevent
from gevent.pywsgi import WSGIServer
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from service import tracing
from tests.support.constants import LOOPBACK

#: OpenTelemetry's span kinds and status codes as the protobuf numbers them.
KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
ERROR_STATUS = 2


@dataclass
class ReceivedSpan:
    """One exported span, in plain values: ids in hex, attributes and events' attributes as dicts."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    error: bool
    resource: dict[str, Any] = field(default_factory=dict)
    start_ns: int = 0
    end_ns: int = 0

    def texts(self) -> list[str]:
        """Every name and value this span carries, as text: what a privacy check scans."""
        found = [self.name, *map(str, self.attributes.values()), *map(str, self.attributes)]
        for name, attributes in self.events:
            found += [name, *map(str, attributes.values()), *map(str, attributes)]
        return found


def _value(any_value) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind is not None else None


def _attributes(pairs) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


class Receiver:
    """The receiver's spans so far, in arrival order; `requests` counts the export requests it answered."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self.content_types: set[str] = set()

    def __call__(self, environ, start_response):
        body = environ["wsgi.input"].read()
        if environ.get("HTTP_CONTENT_ENCODING") == "gzip":
            body = gzip.decompress(body)
        self.content_types.add(environ.get("CONTENT_TYPE", ""))
        if environ.get("PATH_INFO") != "/v1/traces":
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        for resource_spans in message.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(ReceivedSpan(
                        span.name, KINDS.get(span.kind, "unspecified"), span.trace_id.hex(), span.span_id.hex(),
                        span.parent_span_id.hex(), _attributes(span.attributes),
                        [(e.name, _attributes(e.attributes)) for e in span.events],
                        span.status.code == ERROR_STATUS, resource, span.start_time_unix_nano,
                        span.end_time_unix_nano))
        self.requests += 1
        answer = ExportTraceServiceResponse().SerializeToString()
        start_response("200 OK", [("Content-Type", "application/x-protobuf"), ("Content-Length", str(len(answer)))])
        return [answer]

    def named(self, prefix: str) -> list[ReceivedSpan]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def one(self, name: str) -> ReceivedSpan:
        [span] = [s for s in self.spans if s.name == name]
        return span

    def by_id(self, span_id: str) -> ReceivedSpan:
        [span] = [s for s in self.spans if s.span_id == span_id]
        return span


@contextlib.contextmanager
def otlp_receiver() -> Iterator[tuple[str, Receiver]]:
    """A receiver on a free loopback port: (its base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it; the receiver)."""
    receiver = Receiver()
    server = WSGIServer((LOOPBACK, 0), receiver, log=None, error_log=None)
    server.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_port}", receiver
    finally:
        server.stop(timeout=1)


@contextlib.contextmanager
def tracing_to(endpoint: str, **variables: str) -> Iterator[None]:
    """This process's tracing on, exporting to `endpoint` (and any other OTEL_ variables given), for the block; off
    again after it, whatever it was before. `tracing.flush()` makes what ended so far arrive, without a wait."""
    wanted = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, **variables}
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    tracing.stop()
    try:
        assert tracing.configure()
        yield
    finally:
        tracing.stop()
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def flushed(receiver: Receiver) -> Receiver:
    """`receiver` once every span this process ended so far has reached it."""
    assert tracing.flush()
    gevent.idle()
    return receiver
