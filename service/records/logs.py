"""Structured logs: one JSON object per line, each carrying the request id of the request that caused it.

Every request is logged once when answered (`service.request`) and every call once when its step is recorded
(`service.call`), with its turn id. A log line never holds a body or a token: the fields are chosen here, from the
call log's own columns, and the request line has the path without its query string.
"""
from __future__ import annotations

import contextvars
import json
import logging
import secrets
import sys
import time
from typing import Any, Iterable, Mapping

import orjson
from gevent import monkey

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

    def _timestamp(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if self._second[0] != second:
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        return f"{self._second[1]}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self._timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        current = request_id.get()
        if current is not None:
            entry["request_id"] = current
        entry.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
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

    def createLock(self) -> None:  # noqa: N802 (logging's name)
        # The thread's own reentrant lock, not gevent's (written for waiting greenlets, ~1 µs a line more): a line is
        # written to stderr without yielding, so no greenlet ever waits on it, and it still orders threads' lines.
        self.lock = monkey.get_original("_thread", "RLock")()

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr


def configure_logging(level: int = logging.INFO) -> None:
    """JSON lines on stderr for the service's loggers; idempotent, so building several apps adds one handler.

    Records skip what no line here shows, as the logging HOWTO's "Optimization" section describes: the caller's
    file and line (a walk up the stack for every record) and the process and task names. The switches are
    process-wide, so the thread and process ids stay: another library's format may print them with `%d`, as
    gunicorn's does with the process id, which cannot format the None a switched-off field holds.
    """
    logging._srcfile = None  # type: ignore[attr-defined]  # the HOWTO's documented switch
    logging.logMultiprocessing = False
    logging.logAsyncioTasks = False  # type: ignore[attr-defined]
    logger = logging.getLogger(ROOT_LOGGER)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(level)


def log_request(fields: Mapping[str, Any]) -> None:
    _request_log.info("request", extra={"fields": dict(fields)})


def log_calls(org: str, rows: Iterable[Mapping[str, Any]]) -> None:
    """One line per call of a step, from its call log row."""
    for row in rows:
        # Chosen one by one: what happened, never what was said (the row has no body or token to leak anyway).
        _call_log.info("call", extra={"fields": {
            "org": org, "conversation": row["conversation_id"], "turn": row["turn"], "tool": row["tool"],
            "version": row["tool_version"], "session_start": row["session_start"], "kind": row["kind"] or OK,
            "status": row["http_code"], "latency_ms": row["latency_ms"], "size_chars": row["size_chars"],
            "jti": row["jti"], "approval": row["approval"]}})
