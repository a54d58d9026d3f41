"""A batch of spans as an OTLP `ExportTraceServiceRequest`, written straight in protobuf's wire format, and the SDK's
OTLP/HTTP exporter sending it.

Why: the SDK's encoder (opentelemetry-exporter-otlp-proto-common) builds a protobuf message object for every span,
attribute and value and then serializes them, about 200k instructions a span, as much again as making the span
(bench/JOURNAL.md). Written here as bytes, a span costs a fraction of that, and the resource and the instrumentation
scope, the same for every span of the process, are written once. The bytes are the same message the SDK's encoder
makes (tests/tracing/test_encoding.py compares the two, field by field); everything past them (endpoint, headers,
compression, timeout, retries, the size limit) is the SDK's exporter's, configured by OpenTelemetry's variables.
"""
from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode

log = logging.getLogger(__name__)

_KINDS = {SpanKind.INTERNAL: b"\x30\x01", SpanKind.SERVER: b"\x30\x02", SpanKind.CLIENT: b"\x30\x03",
          SpanKind.PRODUCER: b"\x30\x04", SpanKind.CONSUMER: b"\x30\x05"}
#: Span.flags (field 16, fixed32): the parent's is_remote is known; and, with the second, the parent was remote.
_FLAGS_LOCAL = b"\x85\x01" + struct.pack("<I", 0x100)
_FLAGS_REMOTE = b"\x85\x01" + struct.pack("<I", 0x300)
_STATUS_UNSET = b"\x7a\x00"  # Span.status (15) present and empty, as the SDK's encoder always writes one
_pack_fixed64 = struct.Struct("<Q").pack
_pack_double = struct.Struct("<d").pack


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field: `tag` is (number << 3 | 2), one byte for every field number written here."""
    size = len(payload)
    return (bytes((tag, size)) if size < 0x80 else bytes((tag,)) + _varint(size)) + payload


def _text(tag: int, value: str) -> bytes:
    return _field(tag, value.encode("utf-8"))


def _any_value(value: Any) -> bytes:
    """An AnyValue: string 1, bool 2, int 3, double 4, array 5, kvlist 6, bytes 7; None is the empty one."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _text(0x0A, value)
    if isinstance(value, int):
        return b"\x18" + _varint(value & 0xFFFFFFFFFFFFFFFF)  # int64: a negative as its 64-bit two's complement
    if isinstance(value, float):
        return b"\x21" + _pack_double(value)
    if isinstance(value, bytes):
        return _field(0x3A, value)
    if isinstance(value, Sequence):
        return _field(0x2A, b"".join(_field(0x0A, _any_value(item)) for item in value))
    if isinstance(value, Mapping):
        return _field(0x32, _attributes(value, 0x0A))
    raise TypeError(f"invalid attribute value of type {type(value).__name__}")


#: Attributes already written, by (field, key, value's type, value): most repeat from span to span (a route, a tool's
#: name, a status, an address). Emptied when full, so ids that never repeat cannot grow it.
_written: dict[tuple[int, str, type, Any], bytes] = {}
_WRITTEN_MAX = 4096


def _attributes(attributes: Mapping[str, Any] | None, tag: int) -> bytes:
    """Each attribute as a KeyValue (key 1, value 2) in field `tag`; a value that cannot be written is left out, as
    the SDK's encoder leaves it."""
    if not attributes:
        return b""
    out = []
    for key, value in attributes.items():
        try:
            known = (tag, key, type(value), value)
            written = _written.get(known)
        except TypeError:  # a list: not a key
            known, written = None, None
        if written is None:
            try:
                written = _field(tag, _text(0x0A, key) + _field(0x12, _any_value(value)))
            except TypeError as exc:
                log.error("span attribute %s not exported: %s", key, exc)
                continue
            if known is not None:
                if len(_written) >= _WRITTEN_MAX:
                    _written.clear()
                _written[known] = written
        out.append(written)
    return b"".join(out)


def _status(status: Any) -> bytes:
    if status.status_code is StatusCode.UNSET and not status.description:
        return _STATUS_UNSET
    code = status.status_code.value
    return _field(0x7A, (_text(0x12, status.description) if status.description else b"")
                  + (b"\x18" + _varint(code) if code else b""))


def _events(events: Sequence[Any]) -> bytes:
    out = []
    for event in events:
        body = (b"\x09" + _pack_fixed64(event.timestamp) + _text(0x12, event.name)
                + _attributes(event.attributes, 0x1A)
                + (b"\x20" + _varint(event.dropped_attributes) if event.dropped_attributes else b""))
        out.append(_field(0x5A, body))
    return b"".join(out)


def _name(name: str) -> bytes:
    written = _names.get(name)
    if written is None:
        if len(_names) >= _WRITTEN_MAX:
            _names.clear()
        written = _names[name] = _text(0x2A, name)
    return written


_names: dict[str, bytes] = {}


def encode_span(span: ReadableSpan) -> bytes:
    """One Span message (opentelemetry/proto/trace/v1/trace.proto), without its tag and length.

    Read from ReadableSpan's own fields rather than its properties, which copy the attributes and events to hand
    them out: the encoder's largest cost after the bytes themselves."""
    context: Any = span._context
    parent = span._parent
    state = context.trace_state
    out = b"\x0a\x10" + context.trace_id.to_bytes(16, "big") + b"\x12\x08" + context.span_id.to_bytes(8, "big")
    if state:
        out += _text(0x1A, ",".join(f"{key}={value}" for key, value in state.items()))
    if parent is not None:
        out += b"\x22\x08" + parent.span_id.to_bytes(8, "big")
    out += (_name(span._name) + _KINDS[span._kind] + b"\x39" + _pack_fixed64(span._start_time or 0)
            + b"\x41" + _pack_fixed64(span._end_time or 0) + _attributes(span._attributes, 0x4A))
    dropped = span.dropped_attributes
    if dropped:
        out += b"\x50" + _varint(dropped)
    if span._events:
        out += _events(span._events)
        if span.dropped_events:
            out += b"\x60" + _varint(span.dropped_events)
    return out + _status(span._status) + (_FLAGS_REMOTE if parent is not None and parent.is_remote else _FLAGS_LOCAL)


class _Group:
    """What every span of one resource and scope shares, written once: the ResourceSpans' resource and schema URL
    (`resource`), the ScopeSpans' scope (`scope`) and schema URL (`scope_tail`)."""

    def __init__(self, span: ReadableSpan) -> None:
        resource, scope = self._of = span._resource, span._instrumentation_scope
        self.resource = _field(0x0A, _attributes(resource.attributes, 0x0A)) + (
            _text(0x1A, resource.schema_url) if resource.schema_url else b"")
        self.scope, self.scope_tail = b"\x0a\x00", b""  # no scope: an empty one, as the SDK's encoder writes
        if scope is not None:
            self.scope = _field(0x0A, _text(0x0A, scope.name) + (_text(0x12, scope.version) if scope.version else b"")
                                + _attributes(scope.attributes, 0x1A))
            self.scope_tail = _text(0x1A, scope.schema_url) if scope.schema_url else b""

    def of(self, span: ReadableSpan) -> bool:
        """Whether these are `span`'s resource and scope (kept by id, which a later object may take)."""
        return self._of[0] is span._resource and self._of[1] is span._instrumentation_scope


def encode_request(spans: Sequence[ReadableSpan], groups: dict[tuple[int, int], _Group]) -> bytes:
    """`spans` as one ExportTraceServiceRequest, grouped by resource, then by instrumentation scope, in the order
    first seen (as the SDK's encoder groups them). `groups` keeps each (resource, scope)'s written parts."""
    by_group: dict[tuple[int, int], list[Any]] = {}
    for span in spans:
        key = (id(span._resource), id(span._instrumentation_scope))
        encoded = by_group.get(key)
        if encoded is None:
            encoded = by_group[key] = [span]  # the first: the span the group's parts are written from
        encoded.append(_field(0x12, encode_span(span)))
    resources: dict[int, list[bytes]] = {}
    for key, (first, *encoded) in by_group.items():
        group = groups.get(key)
        if group is None or not group.of(first):  # an id another object had before: written again
            group = groups[key] = _Group(first)
        parts = resources.get(key[0])
        if parts is None:
            parts = resources[key[0]] = [group.resource]
        parts.append(_field(0x12, group.scope + b"".join(encoded) + group.scope_tail))
    return b"".join(_field(0x0A, b"".join(parts)) for parts in resources.values())


class Exporter(OTLPSpanExporter):
    """The SDK's OTLP/HTTP span exporter, writing each batch with `encode_request` rather than the SDK's encoder."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Resources and scopes are made once per process and kept, so their ids stay theirs while this lives.
        self._groups: dict[tuple[int, int], _Group] = {}

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        client = getattr(self, "_client", None)
        if self._shutdown or client is None:  # an SDK this was not written against: its own path
            return super().export(spans)
        try:
            data = encode_request(spans, self._groups)
        except Exception as exc:  # a batch that cannot be written is dropped, as the SDK drops it
            log.error("span batch not exported: %s", exc)
            return SpanExportResult.FAILURE
        limit = getattr(self, "_max_request_size", None)
        if limit is not None and len(data) > limit:
            log.warning("span batch dropped: %d bytes exceeds max_request_size %d", len(data), limit)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS if client.export(data).success else SpanExportResult.FAILURE
