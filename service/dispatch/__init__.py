"""Dispatch: from a tool definition and the model's arguments to a guarded HTTP call and its outcome.

No Flask and no database: the caller resolves the definition and the session, calls in here, and
records the outcomes it gets back.
"""
from service.dispatch.build import (
    BuiltRequest,
    CompiledTool,
    DefinitionError,
    InvalidArguments,
    build_request,
    compile_definition,
)
from service.dispatch.call import call_tool, worded
from service.dispatch.failures import (
    DECLINED,
    FAILURE_KINDS,
    INVALID_ARGUMENTS,
    REFUSED,
    RESPONSE_TOO_BIG,
    RETURNED_NOTHING,
    SHAPE_FAILED,
    TIMED_OUT,
    TRANSPORT_ERROR,
    UNKNOWN_TOOL,
    failure_object,
)
from service.dispatch.guard import AddressGuard, parse_allowed_networks
from service.dispatch.shaping import ShapeFailed, compile_shape, shape
from service.dispatch.step import run_step
from service.dispatch.transport import CallOutcome, send

__all__ = [
    "AddressGuard",
    "BuiltRequest",
    "CallOutcome",
    "CompiledTool",
    "DefinitionError",
    "FAILURE_KINDS",
    "DECLINED",
    "INVALID_ARGUMENTS",
    "InvalidArguments",
    "REFUSED",
    "RESPONSE_TOO_BIG",
    "RETURNED_NOTHING",
    "SHAPE_FAILED",
    "ShapeFailed",
    "TIMED_OUT",
    "TRANSPORT_ERROR",
    "UNKNOWN_TOOL",
    "build_request",
    "call_tool",
    "compile_definition",
    "compile_shape",
    "failure_object",
    "parse_allowed_networks",
    "run_step",
    "send",
    "shape",
    "worded",
]
