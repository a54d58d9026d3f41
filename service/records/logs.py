"""Structured logs: one JSON object per line, each carrying the request id of the request that caused it.

Every request is logged once when answered (`service.request`) and every call once when its step is recorded, or
its records refused (`service.call`), with its turn id. A log line never holds a body or a token: the fields are
chosen here, from the call log's own columns, and the request line has the path without its query string.

Those two lines are written for every request and every call, and logging's way to a line (a record built from
scratch, the dispatch through the loggers, the handler, the formatter) cost ~76k instructions each: ~9% of a one-call
step's, and of a call's in a step of many (bench/instructions.py). So while the service's own handler is the only
place they can go, as `configure_logging` sets things up, they are written to it directly, the same JSON from the same
formatter, every line of a step in one write; any other configuration (another handler anywhere on their way, a
filter, a level) sends them through logging as before (`_sole_handler`). Measured: 1,687k → 1,633k instructions a
one-call step, 863k → 813k a call in steps of 100.
"""
from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sys
import time
from typing import Any, Iterable, Mapping, cast

import orjson
from gevent import monkey

from service import tracing
from service.records.metrics import OK

REQUEST_LOGGER = "service.request"
CALL_LOGGER = "service.call"
#: Every logger of the service hangs below this one, the dispatcher's included.
ROOT_LOGGER = "service"

#: The request being served by this greenlet (each request runs in its own).
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("toolgate_request_id", default=None)

MAX_REQUEST_ID_CHARS = 64
_REQUEST_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")

_call_log = logging.getLogger(CALL_LOGGER)
_request_log = logging.getLogger(REQUEST_LOGGER)


def accept_request_id(offered: str | None) -> str:
    """The caller's X-Request-Id when it is a short plain token; otherwise a new random one."""
    if offered and len(offered) <= MAX_REQUEST_ID_CHARS and set(offered) <= _REQUEST_ID_CHARS:
        return offered
    return secrets.token_hex(8)


class JsonFormatter(logging.Formatter):
    """A record as one JSON line: time, level, logger, message, the request id, and the record's `fields`."""

    _second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text: lines come many a second
    _last: tuple[float, str] = (-1.0, "")  # the last time formatted, and its text: a step's call lines share theirs

    def _timestamp(self, created: float) -> str:
        if self._last[0] == created:
            return self._last[1]
        second = int(created)
        if self._second[0] != second:
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        text = f"{self._second[1]}.{int((created - second) * 1000):03d}Z"  # milliseconds, as LogRecord.msecs has them
        self._last = (created, text)
        return text

    def format(self, record: logging.LogRecord) -> str:
        exception = self.formatException(record.exc_info) if record.exc_info else None
        return self.line(record.created, record.levelname, record.name, record.getMessage(),
                         getattr(record, "fields", None), exception)

    def line(self, created: float, level: str, logger: str, message: str, fields: Mapping[str, Any] | None,
             exception: str | None = None) -> str:
        """The JSON line of a record of `logger` at `level` (its name), made at `created` (Unix seconds)."""
        entry: dict[str, Any] = {"ts": self._timestamp(created), "level": level.lower(), "logger": logger,
                                 "message": message}
        current = request_id.get()
        if current is not None:
            entry["request_id"] = current
        if tracing.state.tracer is not None and (ids := tracing.current_ids()) is not None:
            entry["trace_id"], entry["span_id"] = ids
        entry.update(fields or {})
        if exception is not None:
            entry["exception"] = exception
        # orjson: an eighth of json.dumps's CPU here, where every request and every call writes a line (bench/). What it
        # cannot write (an integer past 64 bits, a key that is not a string) still leaves as a line, through json.
        try:
            return orjson.dumps(entry, default=str).decode("utf-8")
        except TypeError:
            return json.dumps(entry, default=str, ensure_ascii=False)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time, as logging's own last-resort handler does."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    def createLock(self) -> None:  # logging's name
        # The thread's own reentrant lock, not gevent's (written for waiting greenlets, ~1 µs a line more): a line is
        # written to stderr without yielding, so no greenlet ever waits on it, and it still orders threads' lines.
        self.lock = monkey.get_original("_thread", "RLock")()

    @property
    def stream(self):
        return sys.stderr


def configure_logging(level: int = logging.INFO) -> None:
    """JSON lines on stderr for the service's loggers; idempotent, so building several apps adds one handler.

    Records skip what no line here shows, as the logging HOWTO's "Optimization" section describes: the caller's
    file and line (a walk up the stack for every record) and the process and task names. The switches are
    process-wide, so the thread and process ids stay: another library's format may print them with `%d`, as
    gunicorn's does with the process id, which cannot format the None a switched-off field holds.
    """
    logging._srcfile = None  # the HOWTO's documented switch
    logging.logMultiprocessing = False
    logging.logAsyncioTasks = False  # type: ignore[attr-defined]
    logger = logging.getLogger(ROOT_LOGGER)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(level)


def _sole_handler(logger: logging.Logger) -> _StderrHandler | None:
    """The service's handler, if it is the only one `logger`'s INFO records reach and would write each of them as it
    is: nothing switched off or filtered on the way, and no other handler anywhere up the loggers they propagate to."""
    if logger.disabled or logger.filters or not logger.isEnabledFor(logging.INFO):
        return None
    sole = None
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            if (sole is not None or type(handler) is not _StderrHandler or handler.filters
                    or handler.level > logging.INFO or type(handler.formatter) is not JsonFormatter):
                return None
            sole = handler
        current = current.parent if current.propagate else None
    return sole


def _info_lines(logger: logging.Logger, message: str, field_sets: list[dict[str, Any]]) -> None:
    """One INFO line of `logger` for each of `field_sets`, written as logging would write them (see the module)."""
    if not field_sets:
        return
    handler = _sole_handler(logger)
    if handler is None:
        for fields in field_sets:
            logger.info(message, extra={"fields": fields})
        return
    formatter = cast(JsonFormatter, handler.formatter)  # _sole_handler checked it
    now = time.time()
    text = "".join(formatter.line(now, "INFO", logger.name, message, fields) + handler.terminator
                   for fields in field_sets)
    lock = handler.lock
    assert lock is not None  # made by Handler.__init__
    with lock:
        try:
            handler.stream.write(text)
            handler.flush()
        except RecursionError:  # as StreamHandler.emit: not an error of the stream's
            raise
        except Exception:  # the stream refused: reported as logging reports it, and serving goes on
            handler.handleError(logger.makeRecord(logger.name, logging.INFO, "(unknown file)", 0, message, (), None,
                                                  extra={"fields": field_sets[0]}))


#: The logger of failures no handler answered (a 500), as Flask names its own: the app's, `service`.
_failure_log = logging.getLogger(ROOT_LOGGER)


def log_failure(message: str, failure: BaseException | None = None, **fields: Any) -> None:
    """One ERROR line for a failure nothing answered (a 500): `message`, the request id, `fields`, and the traceback
    of `failure` (by default the exception being handled) inside the line's `exception` field, never as lines of
    its own on stderr. Flask's unhandled exceptions, the step route's and the server's own come here."""
    exc_info = (type(failure), failure, failure.__traceback__) if failure is not None else True
    _failure_log.error(message, exc_info=exc_info, extra={"fields": fields} if fields else None)


def log_request(fields: Mapping[str, Any]) -> None:
    _info_lines(_request_log, "request", [dict(fields)])


def log_calls(org: str, rows: Iterable[Mapping[str, Any]]) -> None:
    """One line per call of a step, from its call log row; a step's lines are written together."""
    # Chosen one by one: what happened, never what was said (the row has no body or token to leak anyway).
    _info_lines(_call_log, "call", [{
        "org": org, "conversation": row["conversation_id"], "turn": row["turn"], "tool": row["tool"],
        "version": row["tool_version"], "session_start": row["session_start"], "kind": row["kind"] or OK,
        "status": row["http_code"], "latency_ms": row["latency_ms"], "size_chars": row["size_chars"],
        "jti": row["jti"], "approval": row["approval"]} for row in rows])
