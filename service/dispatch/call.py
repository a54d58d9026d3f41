"""One whole tool call: build the request, sign it at the last moment, send it."""
from __future__ import annotations

import logging
from typing import Any, Callable

from service import tracing
from service.dispatch.build import BuiltRequest, CompiledTool, InvalidArguments, build_request
from service.dispatch.failures import INVALID_ARGUMENTS
from service.dispatch.guard import AddressGuard
from service.dispatch.transport import CallOutcome, send
from service.limits import CALL_DEADLINE_SECONDS, MAX_SHAPED_RESPONSE_BYTES, RESPONSE_CAP_CHARS

log = logging.getLogger(__name__)


def call_tool(
    tool: CompiledTool,
    arguments: Any,
    *,
    subject: str | None,
    guard: AddressGuard,
    sign: Callable[[], str],
    deadline: float = CALL_DEADLINE_SECONDS,
    cap: int = RESPONSE_CAP_CHARS,
    shaped_bytes: int = MAX_SHAPED_RESPONSE_BYTES,
) -> CallOutcome:
    """Call `tool` with the model's `arguments` for the session's `subject`.

    `sign` returns the call assertion (a JWT); it is called only once the arguments fit, right
    before sending, so the assertion's short lifetime starts as late as it can, even when the
    call waited for a free slot in its step. Arguments that do not fit give an invalid-arguments
    outcome and nothing is called. A tool that shapes what the model sees has its body shaped (up to
    `shaped_bytes` of it) and its outcome worded by its own definition (service.dispatch.shaping).
    """
    try:
        request = build_request(tool, arguments, subject)
    except InvalidArguments as exc:
        log.info("invalid arguments for %s: %s", tool.definition.name, exc)
        return worded(tool, CallOutcome(INVALID_ARGUMENTS, detail=str(exc)[:500], found=tuple(exc.found)))
    if tracing.state.tracer is not None:  # the endpoint's own tracing continues this call's span
        request = BuiltRequest(request.method, request.url, {**request.headers, **tracing.outgoing_headers()},
                               request.body)
    return send(request, guard=guard, authorization=f"Bearer {sign()}", deadline=deadline, cap=cap,
                shaping=tool.shaping, shaped_bytes=shaped_bytes)


def worded(tool: CompiledTool, outcome: CallOutcome) -> CallOutcome:
    """`outcome` with the tool's sentence for it as its message, for a failure decided before anything is sent
    (invalid arguments, a declined call); what the endpoint answered is worded as it is judged."""
    shaping = tool.shaping
    if shaping is None or outcome.kind is None or outcome.message is not None:
        return outcome
    message = shaping.message(outcome.kind, outcome.http_code)
    if message is None:
        return outcome
    return CallOutcome(outcome.kind, outcome.http_code, outcome.output, outcome.latency_ms, outcome.size_chars,
                       outcome.detail, outcome.found, outcome.raw_bytes, outcome.details, message)
