"""The spans the service makes, in OpenTelemetry's HTTP and GenAI conventions, and the context they travel in.

Every function here does nothing (and imports nothing of OpenTelemetry) while tracing is off (`setup.state`). What a
span may hold is chosen here, field by field: names, ids, statuses, failure kinds and addresses, never a token, an
assertion, a key, an argument's value, a body or a message's text (the GenAI conventions' opt-in content attributes
are not offered). Callers pass only such values.

Context: OpenTelemetry keeps the current span in a context variable. A step's calls run in greenlets of their own, so
`tool_call` takes the step's context when the call is wrapped, in the step's greenlet, and enters it explicitly in the
call's. A turn is a generator that yields between its model calls and steps, so `traced_events` enters the turn's
span for each stretch of it and leaves it before each event is handed out.
"""
from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, TypeVar

from service.tracing.setup import state

if TYPE_CHECKING:
    from opentelemetry.trace import Span

T = TypeVar("T")
Attributes = Mapping[str, Any]

#: The W3C Trace Context headers, as a WSGI environ names them.
_ENVIRON_HEADERS = {"traceparent": "HTTP_TRACEPARENT", "tracestate": "HTTP_TRACESTATE"}


class _EnvironGetter:
    """OpenTelemetry's TextMapPropagator reads a carrier through a getter: here, a WSGI environ."""

    def get(self, carrier: Mapping[str, Any], key: str) -> list[str] | None:
        value = carrier.get(_ENVIRON_HEADERS.get(key, ""))
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Mapping[str, Any]) -> list[str]:
        return [key for key, name in _ENVIRON_HEADERS.items() if name in carrier]


_GETTER = _EnvironGetter()


@functools.lru_cache(maxsize=1)
def _propagator() -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator()


def traced_wsgi(inner: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """`inner` (a WSGI app) with a server span for each request, continuing the caller's `traceparent`/`tracestate`
    (the W3C propagator only: a span of ours never takes a vendor's header). The route names it once known
    (`answered`)."""

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        tracer = state.tracer
        if tracer is None:
            return inner(environ, start_response)
        context, trace = tracer.context, tracer.trace

        method = str(environ.get("REQUEST_METHOD", ""))[:16]
        # No caller's trace (most requests): a root span, without the propagator's work.
        caller = _propagator().extract(environ, getter=_GETTER) if "HTTP_TRACEPARENT" in environ else None
        span = tracer.start_span(method, context=caller,
                                 kind=trace.SpanKind.SERVER, attributes={"http.request.method": method})
        token = context.attach(trace.set_span_in_context(span))

        def started(status: str, headers: list, exc_info: Any = None) -> Any:
            code = int(status[:3]) if status[:3].isdigit() else 0
            span.set_attribute("http.response.status_code", code)
            if code >= 500:
                span.set_status(trace.StatusCode.ERROR)
                span.set_attribute("error.type", str(code))
            return start_response(status, headers, exc_info) if exc_info is not None else start_response(status,
                                                                                                         headers)

        try:
            body = inner(environ, started)
        except BaseException:
            span.end()
            raise
        finally:
            context.detach(token)
        if isinstance(body, list):  # answered whole: nothing more of it runs
            span.end()
            return body
        return _EndsSpan(body, span)  # streamed (a turn's events): the span lasts until the server closes it

    return serve


class _EndsSpan:
    """A streamed body that ends the request's span when the server closes it."""

    def __init__(self, body: Iterable[bytes], span: "Span") -> None:
        self.body, self.span = body, span

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def close(self) -> None:
        try:
            close = getattr(self.body, "close", None)
            if close is not None:
                close()
        finally:
            self.span.end()


def answered(method: str, route: str | None) -> None:
    """Name the current request's server span after the route it matched (`METHOD /v1/...`, as HTTP's conventions
    have it); an unmatched path stays unnamed and unrecorded, as in the log line (it could hold anything)."""
    tracer = state.tracer
    if tracer is None or route is None:
        return
    trace = tracer.trace
    span = tracer.current_span()
    if span.is_recording() and getattr(span, "kind", None) == trace.SpanKind.SERVER:
        span.update_name(f"{method} {route}")
        span.set_attribute("http.route", route)


def tool_call(thunk: Callable[[], T], name: str, call_id: str, conversation_id: str, address: str | None,
              session_start: bool) -> Callable[[], T]:
    """`thunk` (one call of a step; it returns an outcome with `kind` and `http_code`) run inside an `execute_tool
    {name}` span, a child of the span current now (the step's), wherever the thunk later runs. The outbound request
    carries this span's `traceparent` (`outgoing_headers`)."""
    tracer = state.tracer
    if tracer is None:
        return thunk
    context, trace = tracer.context, tracer.trace

    parent = context.get_current()  # the step's: taken here, in the step's greenlet, for the call's greenlet
    attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                  "gen_ai.tool.call.id": call_id, "gen_ai.conversation.id": conversation_id}
    if address is not None:
        attributes["server.address"] = address
    if session_start:
        attributes["toolgate.session_start"] = True

    def traced() -> T:
        # Made current by hand: the call (its log lines, its traceparent) runs inside it.
        span = tracer.start_span(f"execute_tool {name}", context=parent, attributes=attributes)
        token = context.attach(trace.set_span_in_context(span, parent))
        try:
            outcome = thunk()
            http_code = getattr(outcome, "http_code", None)
            if http_code is not None:
                span.set_attribute("http.response.status_code", http_code)
            kind = getattr(outcome, "kind", None)
            if kind is not None:
                _failed(span, kind)
            return outcome
        finally:
            context.detach(token)
            span.end()

    return traced


def _failed(span: "Span", kind: str) -> None:
    from opentelemetry.trace import StatusCode  # a failure: rarer than a span

    span.set_status(StatusCode.ERROR)
    span.set_attribute("error.type", kind)


def outgoing_headers() -> dict[str, str]:
    """The current span's `traceparent` (and `tracestate`, if any) for a request this process sends; {} when off."""
    tracer = state.tracer
    if tracer is None:
        return {}
    # W3C Trace Context's header, written as the propagator writes it, without its walk through the context.
    span = tracer.current_span()
    outgoing = getattr(span, "outgoing", None)  # a span of ours: written once (service.tracing.lean)
    if outgoing is not None:
        return dict(outgoing)
    span_context = span.get_span_context()
    if not span_context.is_valid:
        return {}
    trace_id, span_id = _hex_ids(span)
    headers = {"traceparent": f"00-{trace_id}-{span_id}-{span_context.trace_flags:02x}"}
    if span_context.trace_state:
        headers["tracestate"] = span_context.trace_state.to_header()
    return headers


@contextlib.contextmanager
def span(name: str, attributes: Attributes | None = None) -> Iterator["Span | None"]:
    """A span of `name`, a child of the current one and current inside the block; None while tracing is off. An
    exception ending the block marks it ERROR with the exception's type (never its message)."""
    tracer = state.tracer
    if tracer is None:
        yield None
        return
    context, trace = tracer.context, tracer.trace
    current = tracer.start_span(name, attributes=attributes)
    token = context.attach(trace.set_span_in_context(current))
    try:
        yield current
    except BaseException as exc:
        _failed(current, getattr(exc, "kind", None) or type(exc).__qualname__)
        raise
    finally:
        context.detach(token)
        current.end()


def failed(kind: str) -> None:
    """Mark the current span failed with `kind` (a failure kind or a stop reason)."""
    tracer = state.tracer
    if tracer is None:
        return
    _failed(tracer.current_span(), kind)


def annotate(attributes: Attributes) -> None:
    """Set `attributes` on the current span."""
    tracer = state.tracer
    if tracer is None:
        return
    tracer.current_span().set_attributes(dict(attributes))


def event(name: str, attributes: Attributes) -> None:
    """Add the event `name` with `attributes` to the current span (an approval held, an approval decided)."""
    tracer = state.tracer
    if tracer is None:
        return
    tracer.current_span().add_event(name, dict(attributes))


def traced_events(events: Iterator[T], name: str, attributes: Attributes) -> Iterator[T]:
    """`events` (a generator: a turn) inside one span of `name`, a child of the span current at its first event;
    the span is current while the generator runs between its events, and ends with it."""
    tracer = state.tracer
    if tracer is None:
        return events
    return _traced_events(tracer, events, name, attributes)


def _traced_events(tracer: Any, events: Iterator[T], name: str, attributes: Attributes) -> Iterator[T]:
    context, trace = tracer.context, tracer.trace
    current = tracer.start_span(name, attributes=attributes)
    inside = trace.set_span_in_context(current)
    try:
        while True:
            token = context.attach(inside)
            try:
                item = next(events)
            except StopIteration:
                return
            except BaseException as exc:
                _failed(current, getattr(exc, "code", None) or type(exc).__qualname__)
                raise
            finally:
                context.detach(token)
            yield item
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
        current.end()


def current_ids() -> tuple[str, str] | None:
    """(trace id, span id) of the current span, in hex as tracing backends show them; None when off or none."""
    tracer = state.tracer
    if tracer is None:
        return None
    span = tracer.current_span()
    ids = getattr(span, "hex_ids", None)  # a span of ours: written once (service.tracing.lean)
    if ids is not None:
        return ids
    return _hex_ids(span) if span.get_span_context().is_valid else None


def _hex_ids(span: "Span") -> tuple[str, str]:
    ids = getattr(span, "hex_ids", None)  # a span of ours writes them once (service.tracing.lean)
    if ids is not None:
        return ids
    span_context = span.get_span_context()
    return format(span_context.trace_id, "032x"), format(span_context.span_id, "016x")
